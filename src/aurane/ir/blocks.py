"""Lowering calls of parameterised blocks: bind the arguments, resolve, check, lower.

Each distinct (arguments, input type) of a block lowers once. Inside the instance every
number given as an argument, and the block input's channel/feature axes, are symbolic
numbers (``aurane.semantics.symbolic``), so the torch backend can write the one class of
the block in terms of its constructor parameters.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aurane.diagnostics import Diagnostic, Label
from aurane.ir.builder import model_info
from aurane.ir.graph import Graph
from aurane.ops.rules import fmt_shape as shape_text
from aurane.ops.spec import TensorType
from aurane.semantics.block_args import bind_block_call, inner_values
from aurane.semantics.constants import evaluate_constant, resolve_block
from aurane.semantics.forward import ForwardChecker
from aurane.semantics.symbolic import is_symbolic, plain, symbol
from aurane.semantics.values import show
from aurane.source import Span
from aurane.syntax import ast

if TYPE_CHECKING:
    from aurane.ir.lower import _Lowerer

# placeholders for the block input's sizes; the backend names them (in_channels, ...)
INPUT_DIMS = ("\u27e8in0\u27e9", "\u27e8in1\u27e9")


def call_text(name: str, values: dict[str, Any], defaults: dict[str, Any]) -> str:
    """``BasicBlock(128, stride=2)``: required values positionally, changed defaults by name."""
    parts = []
    for key, value in values.items():
        if key not in defaults:
            parts.append(show(plain(value)))
        elif plain(value) != plain(defaults[key]) or type(plain(value)) is not type(
            plain(defaults[key])
        ):
            parts.append(f"{key}={show(plain(value))}")
    return f"{name}({', '.join(parts)})"


def defaults_of(lowerer: _Lowerer, model: ast.Model) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param in model.params:
        if param.default is not None:
            value, problems = evaluate_constant(lowerer.program, param.default)
            lowerer.diagnostics.extend(problems)
            out[param.name] = value
    return out


def bind(
    lowerer: _Lowerer,
    model: ast.Model,
    args: tuple[ast.Expr, ...],
    call: ast.Call | None,
    call_span: Span,
) -> dict[str, Any] | None:
    keywords = call.keywords if call is not None else ()
    values, problems = bind_block_call(
        model, args, keywords, call_span, defaults_of(lowerer, model)
    )
    lowerer.diagnostics.extend(problems)
    return values


def values_key(values: dict[str, Any] | None) -> tuple[Any, ...]:
    if values is None:
        return ()
    return tuple(
        (name, repr(plain(v)), type(plain(v)).__name__, getattr(v, "expr", None))
        for name, v in values.items()
    )


def repeated_call(call: ast.Call, rest: tuple[ast.Expr, ...]) -> ast.Call | None:
    """The ``Block(64)`` of ``repeat(Block(64), 2)``."""
    if rest and isinstance(rest[0], ast.Call):
        return rest[0]
    for keyword in call.keywords:
        if keyword.name == "block" and isinstance(keyword.value, ast.Call):
            return keyword.value
    return None


def symbolic_input(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The block input's channels (axis 0) and, for (length, features), features as symbols."""
    dims = list(plain(shape))
    if dims:
        dims[0] = symbol(dims[0], INPUT_DIMS[0])
    if len(dims) == 2:
        dims[1] = symbol(dims[1], INPUT_DIMS[1])
    return tuple(dims)


def lower_instance(
    lowerer: _Lowerer,
    model: ast.Model,
    values: dict[str, Any],
    input_type: TensorType,
    call_span: Span,
) -> Graph | None:
    defaults = defaults_of(lowerer, model)
    shown_call = f"in the call {call_text(model.name, values, defaults)}"
    instance, problems = resolve_block(lowerer.program, model, inner_values(values))
    checker = ForwardChecker(set(lowerer.models), problems, lowerer.bound)
    checker.parameterised = frozenset(n for n, m in lowerer.models.items() if m.params)
    if instance.forward is not None:
        checker.run(instance.forward)
    lowerer.instances.append(instance)
    before = len(lowerer.diagnostics)
    lowerer.diagnostics.extend(problems)
    graph = None
    if not any(d.is_error for d in problems) and instance.forward is not None:
        info = model_info(instance)
        if info.input_shape is not None and tuple(info.input_shape) != plain(input_type.shape):
            lowerer.diagnostics.append(
                _shape_refused(model, info.input_shape, input_type, call_span)
            )
        else:
            graph = lowerer.lower_model(
                instance,
                info,
                TensorType(symbolic_input(input_type.shape), input_type.dtype),
                instance.forward.param_span,
                model.name,
                input_origin=f"the call at {call_span}",
            )
    for index in range(before, len(lowerer.diagnostics)):
        found = lowerer.diagnostics[index]
        if found.is_error or found.code.startswith("S"):
            label = Label(call_span, f"{shown_call}, input {shape_text(input_type.shape)}")
            lowerer.diagnostics[index] = replace(found, labels=(*found.labels, label))
    if graph is None:
        return None
    return replace(
        graph,
        block_params=tuple(p.name for p in model.params),
        block_args=dict(values),
        block_defaults=defaults,
    )


def _shape_refused(
    model: ast.Model, declared: tuple[int, ...], input_type: TensorType, call_span: Span
) -> Diagnostic:
    from aurane.codes import diag

    return diag(
        "T010",
        f"block '{model.name}' expects input shape {shape_text(declared)}, "
        f"called with {shape_text(input_type.shape)}",
        call_span,
    )


__all__ = ["INPUT_DIMS", "bind", "call_text", "is_symbolic", "lower_instance", "values_key"]
