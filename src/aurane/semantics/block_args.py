"""Parameterised blocks: declared parameters and the arguments of each call.

``model BasicBlock(width, stride: int = 1):`` declares parameters; a call
``BasicBlock(128, stride=2)`` binds them. Binding checks unknown, missing, repeated and
mistyped arguments at their spans; the bound values become constants of the block's body
(numbers as symbolic numbers, so the generated class can say ``4 * width``).
"""

from __future__ import annotations

import keyword
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.symbolic import plain, symbol
from aurane.semantics.values import NotLiteral, literal_value, show, type_name
from aurane.source import Span
from aurane.syntax import ast

# names a constructor parameter of a generated class must not take
_TEMPLATE = frozenset({"self", "super", "nn", "torch", "F", "math", "os", "sys", "aurane"})
_BUILTIN_TYPES = frozenset({"int", "float", "bool", "str", "tuple", "list", "dict", "range"})


def check_block_params(
    model: ast.Model, model_names: set[str], diagnostics: list[Diagnostic]
) -> None:
    """Each parameter name must be usable as a Python constructor argument, and the block
    takes its input shape from each call (an `input_shape` of its own would lower it with
    its parameters unbound)."""
    for item in model.fields:
        if item.name == "input_shape":
            diagnostics.append(
                diag(
                    "S040",
                    f"model '{model.name}' has parameters, so it is a block: its input shape "
                    "comes from each call",
                    item.name_span,
                    hint="remove input_shape, or the parameters to make a standalone model",
                )
            )
    for param in model.params:
        name = param.name
        problem = None
        if not (name.isascii() and name.isidentifier()):
            problem = "is not an ASCII identifier"
        elif keyword.iskeyword(name) or keyword.issoftkeyword(name) or name.startswith("_"):
            problem = "is a Python keyword or private name"
        elif name in _TEMPLATE or name in _BUILTIN_TYPES:
            problem = "is a name the generated code uses"
        elif name in model_names:
            problem = "is the name of a model"
        if problem is not None:
            diagnostics.append(
                diag(
                    "S040",
                    f"parameter '{name}' of model '{model.name}' {problem}",
                    param.name_span,
                    hint="rename the parameter",
                )
            )


def _accepts(kind: str | None, value: Any) -> bool:
    match kind:
        case "int":
            return isinstance(value, int) and not isinstance(value, bool)
        case "float":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "bool":
            return isinstance(value, bool)
        case "str":
            return isinstance(value, str)
    return True


def _kind_of(param: ast.ModelParam, default: Any) -> str | None:
    if param.annotation is not None:
        return param.annotation
    if param.default is None or default is None:
        return None
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "str"
    return None


def bind_block_call(
    model: ast.Model,
    args: tuple[ast.Expr, ...],
    keywords: tuple[ast.Keyword, ...],
    call_span: Span,
    defaults: dict[str, Any],
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Bind a call's (resolved) arguments to ``model``'s parameters.

    ``defaults`` holds each defaulted parameter's evaluated default. Returns the values in
    declaration order (None when an error was reported) and the diagnostics.
    """
    out: list[Diagnostic] = []
    params = model.params
    header = Label(model.name_span, f"model '{model.name}' declared here")
    given: dict[str, tuple[Any, Span]] = {}
    for index, arg in enumerate(args):
        if index >= len(params):
            out.append(
                diag(
                    "S043",
                    f"'{model.name}' takes {len(params)} argument"
                    f"{'s' if len(params) != 1 else ''}, got {len(args)}",
                    arg.span,
                    hint="parameters: " + ", ".join(p.name for p in params),
                    labels=(header,),
                )
            )
            break
        given[params[index].name] = (arg, arg.span)
    names = {p.name: p for p in params}
    for kw in keywords:
        if kw.name not in names:
            hint = did_you_mean(kw.name, names) or (
                "parameters: " + ", ".join(names) if names else None
            )
            out.append(
                diag(
                    "S041",
                    f"'{model.name}' has no parameter '{kw.name}'",
                    kw.name_span,
                    hint=hint,
                    labels=(header,),
                )
            )
        elif kw.name in given:
            out.append(
                diag(
                    "S043",
                    f"argument '{kw.name}' of '{model.name}' is given twice",
                    kw.name_span,
                    labels=(Label(given[kw.name][1], "first given here"),),
                )
            )
        else:
            given[kw.name] = (kw.value, kw.span)
    values: dict[str, Any] = {}
    for param in params:
        default = defaults.get(param.name)
        kind = _kind_of(param, default)
        if param.name not in given:
            if param.default is None:
                out.append(
                    diag(
                        "S042",
                        f"'{model.name}' needs argument '{param.name}'",
                        call_span,
                        hint=f"pass it: {model.name}(..., {param.name}=...)",
                        labels=(Label(param.name_span, "declared here"),),
                    )
                )
                continue
            value = default
        else:
            expr, _ = given[param.name]
            try:
                value = literal_value(expr)
            except NotLiteral:
                out.append(
                    diag(
                        "T040",
                        f"argument '{param.name}' of '{model.name}' must be a constant value",
                        expr.span,
                    )
                )
                continue
            if not _accepts(kind, value):
                out.append(
                    diag(
                        "T040",
                        f"argument '{param.name}' of '{model.name}' must be {_article(kind)}, "
                        f"got {type_name(value)} {show(plain(value))}",
                        expr.span,
                        labels=(Label(param.span, f"'{param.name}' declared here"),),
                    )
                )
                continue
        values[param.name] = value
    if any(d.is_error for d in out):
        return None, out
    return values, out


def inner_values(values: dict[str, Any]) -> dict[str, Any]:
    """The constants of the block's body: each number remembers its parameter's name."""
    return {
        name: value
        if isinstance(value, bool) or not isinstance(value, int | float)
        else symbol(plain(value), name)
        for name, value in values.items()
    }


def _article(kind: str | None) -> str:
    words = {"int": "an integer", "float": "a number", "bool": "a boolean", "str": "a string"}
    return words.get(kind or "", "a constant")
