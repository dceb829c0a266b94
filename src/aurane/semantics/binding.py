"""Binding call arguments to catalog parameters and checking their kinds and ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ops.rules import is_int, is_number
from aurane.ops.spec import ArgKind, ArgValue, BoundArgs, Param, TensorName
from aurane.records import field, record
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.values import NotLiteral, literal_value, show, type_name
from aurane.source import Span
from aurane.syntax import ast


def _int_tuple(v: Any) -> bool:
    return isinstance(v, tuple) and len(v) >= 1 and all(is_int(x) for x in v)


_KIND_CHECKS: dict[ArgKind, Callable[[Any], bool]] = {
    ArgKind.INT: is_int,
    ArgKind.FLOAT: is_number,
    ArgKind.BOOL: lambda v: isinstance(v, bool),
    ArgKind.STR: lambda v: isinstance(v, str),
    ArgKind.INT_OR_PAIR: lambda v: is_int(v) or (_int_tuple(v) and len(v) <= 3),
    # () too: a 0-d parameter's shape (each operation's own check refuses it elsewhere)
    ArgKind.INT_OR_TUPLE: lambda v: is_int(v) or v == () or _int_tuple(v),
    ArgKind.FLOAT_OR_TUPLE: lambda v: (
        is_number(v) or (isinstance(v, tuple) and len(v) >= 1 and all(is_number(x) for x in v))
    ),
    ArgKind.INT_OR_STR: lambda v: is_int(v) or _int_tuple(v) or isinstance(v, str),
    ArgKind.OPTIONAL_INT: lambda v: v is None or is_int(v),
    ArgKind.OPTIONAL_FLOAT: lambda v: v is None or is_number(v),
    ArgKind.ANY: lambda v: True,
}


def check_value(param: Param, value: Any, span: Span, owner: str) -> Diagnostic | None:
    """Kind, choice and range check of one argument value."""
    where = f"argument '{param.name}' of {owner}"
    accepts = _KIND_CHECKS.get(param.kind)
    if value is None and param.default is None:  # its own default, written out
        accepts = None
    if accepts is not None and not accepts(value):
        if param.kind is ArgKind.BOOL:
            message = f"{where} must be a boolean (true or false), not {show(value)}"
        else:
            message = f"{where} must be {_article(param.kind.value)}, got {type_name(value)} {show(value)}"
        hint = None
        if param.kind in (ArgKind.INT, ArgKind.INT_OR_PAIR) and isinstance(value, float):
            hint = "'/' always gives a float; use '//' for integer division"
        return diag("S003", message, span, hint=hint)
    if param.choices is not None and value not in param.choices:
        options = ", ".join(repr(c) for c in param.choices)
        return diag("S004", f"{where} must be one of {options}, got {show(value)}", span)
    if param.check is not None and value is not None:
        problem = param.check(value)
        if problem:
            return diag("S004", f"{where} {problem}, got {show(value)}", span)
    return None


def _too_many_hint(owner: str, params: tuple[Param, ...]) -> str:
    keyword_only = [p.name for p in params if p.keyword_only]
    if keyword_only:
        return "pass the remaining arguments by keyword: " + ", ".join(keyword_only)
    if params:
        return f"{owner} accepts only " + ", ".join(p.name for p in params)
    return f"{owner} takes no arguments"


def _article(text: str) -> str:
    return ("an " if text[0] in "aeiou" else "a ") + text


@record
class _Binding:
    """Arguments bound so far, the problems found, and where each parameter was given."""

    owner: str
    values: dict[str, ArgValue] = field(default_factory=dict)
    given: dict[str, Span] = field(default_factory=dict)  # valid or not
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def bind(self, param: Param, expr: ast.Expr, span: Span | None = None) -> None:
        """Bind one argument; ``span`` (the whole ``name=value`` for keywords) locates errors."""
        span = span or expr.span
        self.given[param.name] = span
        if param.kind is ArgKind.MODEL:
            if isinstance(expr, ast.Name):
                self.values[param.name] = ArgValue(expr.id, span)
            elif isinstance(expr, ast.Call) and not expr.suffixes and expr.layer is None:
                self.values[param.name] = ArgValue(expr.func, span)  # repeat(Block(64), 2)
            else:
                self.diagnostics.append(
                    diag(
                        "S003",
                        f"argument '{param.name}' of {self.owner} must name a model",
                        expr.span,
                    )
                )
            return
        if param.kind is ArgKind.TENSOR:
            if isinstance(expr, ast.NoneLit) and param.default is None:
                self.values[param.name] = ArgValue(None, span)  # attn_mask=none: no mask
            elif isinstance(expr, ast.Name):
                self.values[param.name] = ArgValue(TensorName(expr.id), span)
            else:
                self.diagnostics.append(
                    diag(
                        "S003",
                        f"argument '{param.name}' of {self.owner} must name a tensor of the body",
                        expr.span,
                        hint=f"bind the tensor to a name first: m = ...; then {param.name}=m",
                    )
                )
            return
        try:
            value = literal_value(expr)
        except NotLiteral:
            self.diagnostics.append(
                diag(
                    "S003",
                    f"argument '{param.name}' of {self.owner} must be a literal value",
                    expr.span,
                )
            )
            return
        problem = check_value(param, value, expr.span, self.owner)
        if problem is not None:
            self.diagnostics.append(problem)
            return
        self.values[param.name] = ArgValue(value, span)


def bind_arguments(
    params: tuple[Param, ...],
    args: tuple[ast.Expr, ...],
    keywords: tuple[ast.Keyword, ...],
    *,
    owner: str,
    owner_span: Span,
) -> tuple[BoundArgs, list[Diagnostic]]:
    """Bind positional and keyword arguments (already resolved to literals) to ``params``."""
    binding = _Binding(owner)
    positional = [p for p in params if not p.keyword_only]
    if positional and positional[-1].variadic and len(args) >= len(positional):
        # the last positional parameter collects the rest: reshape(6, -1)
        head = len(positional) - 1
        for param, arg in zip(positional[:head], args[:head], strict=True):
            binding.bind(param, arg)
        rest = args[head:]
        packed: ast.Expr = rest[0]
        if len(rest) > 1 or not isinstance(rest[0], ast.TupleExpr):
            packed = ast.TupleExpr(rest, rest[0].span.merge(rest[-1].span))
        binding.bind(positional[-1], packed)
        args = ()
    for index, arg in enumerate(args):
        if index >= len(positional):
            binding.diagnostics.append(
                diag(
                    "S006",
                    f"{owner} takes {len(positional)} positional argument"
                    f"{'s' if len(positional) != 1 else ''}, got {len(args)}",
                    arg.span,
                    hint=_too_many_hint(owner, params),
                )
            )
            break
        binding.bind(positional[index], arg)
    by_name = {p.name: p for p in params}
    for keyword in keywords:
        named = by_name.get(keyword.name)
        if named is None:
            hint = did_you_mean(keyword.name, by_name) or (
                "accepted: " + ", ".join(by_name) if by_name else f"{owner} takes no arguments"
            )
            binding.diagnostics.append(
                diag(
                    "S002",
                    f"unknown argument '{keyword.name}' for {owner}",
                    keyword.name_span,
                    hint=hint,
                )
            )
        elif named.name in binding.given:
            binding.diagnostics.append(
                diag(
                    "S008",
                    f"argument '{keyword.name}' of {owner} is given twice",
                    keyword.name_span,
                    labels=(Label(binding.given[named.name], "first given here"),),
                )
            )
        else:
            binding.bind(named, keyword.value, keyword.span)
    for param in params:
        if param.name in binding.given:
            continue  # bound, or given but invalid (already reported)
        if param.required:
            binding.diagnostics.append(
                diag(
                    "S005",
                    f"{owner} needs argument '{param.name}'",
                    owner_span,
                    hint=f"pass {param.name}=...",
                )
            )
        else:
            binding.values[param.name] = ArgValue(param.default, None)
    return BoundArgs(binding.values), binding.diagnostics
