"""Several model inputs and outputs: input_shape/input_dtype keyed by the forward's inputs.

A model whose forward takes several inputs (``def forward(ids, mask=ones):``) writes
``input_shape = {ids: (seq,), mask: (seq,)}`` and may write ``input_dtype = {ids: int64}``
(a missing key is float32). This module checks those declarations against the forward
(S150) and says which jobs do not take several inputs yet (S153: GAN training).
"""

from __future__ import annotations

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.source import Span
from aurane.syntax import ast

KEYED_FIELDS = ("input_shape", "input_dtype")


def several_inputs(model: ast.Model) -> bool:
    """Whether the model's forward takes more than one input."""
    return model.forward is not None and len(model.forward.inputs) > 1


def several_outputs(model: ast.Model) -> bool:
    """Whether the model's forward returns several values (``return a, b``)."""
    if model.forward is None:
        return False
    return any(
        isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.TupleExpr)
        for stmt in ast.simple_statements(model.forward.body)
    )


def check_input_fields(model: ast.Model) -> list[Diagnostic]:
    """S150: every dict key names an input; input_shape gives each input a shape; a
    one-input model writes a tuple; a model with several inputs a dict."""
    forward = model.forward
    if forward is None:
        return []
    names = forward.input_names
    out: list[Diagnostic] = []
    for item in model.fields:
        if item.name not in KEYED_FIELDS:
            continue
        value = item.value
        if not isinstance(value, ast.DictExpr):
            if len(names) > 1 and item.name == "input_shape":
                keys = ", ".join(f"{name}: (...)" for name in names)
                out.append(
                    diag(
                        "S150",
                        f"model '{model.name}' takes {len(names)} inputs ({', '.join(names)}): "
                        "input_shape gives each its own shape",
                        value.span,
                        hint=f"write input_shape = {{{keys}}}",
                    )
                )
            elif len(names) > 1 and item.name == "input_dtype":
                keys = ", ".join(f"{name}: ..." for name in names)
                out.append(
                    diag(
                        "S150",
                        f"model '{model.name}' takes {len(names)} inputs: input_dtype gives "
                        "each its own dtype",
                        value.span,
                        hint=f"write input_dtype = {{{keys}}} (a missing key is float32)",
                    )
                )
            continue
        for key in value.keys:
            if key.id not in names:
                out.append(
                    diag(
                        "S150",
                        f"'{key.id}' in {item.name} is not an input of the forward "
                        f"({', '.join(names)})",
                        key.span,
                        hint="key each entry by a parameter of 'def forward'",
                        labels=(Label(forward.param_span, "the forward's inputs"),),
                    )
                )
        keyed = {key.id for key in value.keys}
        if item.name == "input_shape":
            for param in forward.inputs:
                if param.name not in keyed:
                    out.append(
                        diag(
                            "S150",
                            f"input_shape has no shape for the input '{param.name}'",
                            value.span,
                            hint=f"add {param.name}: (...) to input_shape",
                            labels=(Label(param.name_span, "input declared here"),),
                        )
                    )
    return out


def not_yet(what: str, model: str, span: Span) -> Diagnostic:
    """S153: ``what`` (a training job, export) does not take a model with several inputs
    or outputs yet."""
    return diag(
        "S153",
        f"{what} of model '{model}', which takes or returns several tensors, is not supported yet",
        span,
        hint="compile the model and call it from Python with its inputs (issue 23)",
    )
