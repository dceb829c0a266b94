"""Checking a parameterised block that no model calls.

A parameterised block's body is checked per call, with the call's values (lowering binds
them). A block nothing calls would otherwise get only the name checks of its deferred pass,
so it is checked here once with stand-in values:

- every parameter has a default: the body is checked with the defaults, exactly as a call
  ``Block()`` would be (arity, keywords, unknown operations, argument kinds and ranges,
  the arguments of the blocks it calls);
- otherwise each parameter without a default takes a placeholder (``1`` for ``int`` and
  unannotated parameters, ``1.0``, ``false``, ``""`` by annotation): the same checks run,
  but a range or choice error (S004) on an argument computed from a placeholder is not
  reported, nor a kind error (S003) from an unannotated one, since the real value is
  unknown.

Shapes are not checked: they need a call's input.
"""

from __future__ import annotations

from typing import Any

from aurane.diagnostics import Diagnostic
from aurane.records import fields, is_record
from aurane.semantics.block_args import bind_block_call, inner_values
from aurane.semantics.constants import evaluate_constant, resolve_block
from aurane.semantics.forward import ForwardChecker
from aurane.semantics.symbolic import symbol
from aurane.source import Span
from aurane.syntax import ast

_PLACEHOLDERS: dict[str | None, Any] = {
    None: 1,
    "int": 1,
    "float": 1.0,
    "bool": False,
    "str": "",
}


class _InstanceChecker(ForwardChecker):
    """The forward checks, plus binding the arguments of the parameterised blocks it calls."""

    models: dict[str, ast.Model]
    program: ast.AuraneProgram

    def block_call(self, call: ast.Call, graph: bool) -> None:
        model = self.models.get(call.func)
        if model is None or not model.params:
            super().block_call(call, graph)
            return
        params = self.block_inputs.get(call.func, ())
        if len(params) > 1:  # Res(x, temb, 64): one tensor per input of its forward
            taken = self.block_tensors(call, params, graph)
        else:
            taken = self.inputs(call, 1, 1, graph)
        self.calls.append((call.func, call.func_span))
        defaults = _defaults(self.program, model)
        if defaults is None:
            return
        _, problems = bind_block_call(model, call.args[taken:], call.keywords, call.span, defaults)
        self.out.extend(problems)


def _defaults(program: ast.AuraneProgram, model: ast.Model) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for param in model.params:
        if param.default is not None:
            value, problems = evaluate_constant(program, param.default)
            if any(d.is_error for d in problems):
                return None  # reported where the block is checked
            out[param.name] = value
    return out


def name_references(node: object, names: frozenset[str]) -> dict[Span, str]:
    """The span of every ``ast.Name`` in the syntax tree ``node`` that reads one of
    ``names``, with the name read."""
    out: dict[Span, str] = {}

    def visit(item: object) -> None:
        if isinstance(item, ast.Name):
            if item.id in names:
                out[item.span] = item.id
        elif isinstance(item, tuple):
            for child in item:
                visit(child)
        elif is_record(item) and not isinstance(item, Span | type):
            for member in fields(item):
                visit(getattr(item, member.name))

    visit(node)
    return out


def _overlaps(a: Span, b: Span) -> bool:
    return (a.line, a.column) < (b.end_line, b.end_column) and (b.line, b.column) < (
        a.end_line,
        a.end_column,
    )


def _any_overlap(span: Span, spans: list[Span]) -> bool:
    return any(_overlaps(span, s) for s in spans)


def check_uncalled(
    program: ast.AuraneProgram,
    models: dict[str, ast.Model],
    called: set[str],
    model_names: set[str],
    known: list[Diagnostic],
) -> dict[str, list[Diagnostic]]:
    """New diagnostics of the parameterised blocks outside ``called``, by block (none
    repeats ``known``)."""
    out: dict[str, list[Diagnostic]] = {}
    seen = {(d.code, d.span, d.message) for d in known}
    parameterised = frozenset(n for n, m in models.items() if m.params)
    for name, model in models.items():
        if not model.params or name in called or model.forward is None:
            continue
        defaults = _defaults(program, model)
        if defaults is None:
            continue
        values: dict[str, Any] = {}
        placeholders: dict[str, bool] = {}  # parameter -> annotated
        for param in model.params:
            if param.name in defaults:
                values[param.name] = defaults[param.name]
            else:
                values[param.name] = _PLACEHOLDERS.get(param.annotation, 1)
                placeholders[param.name] = param.annotation is not None
        inner = inner_values(values)
        for param_name in placeholders:  # placeholders remember that they are one
            inner[param_name] = symbol(inner[param_name], param_name)
        instance, problems = resolve_block(program, model, inner)
        if any(d.is_error for d in problems) or instance.forward is None:
            continue  # a name error: the deferred pass has reported it
        found: list[Diagnostic] = []
        checker = _InstanceChecker(set(model_names), found, {})
        checker.parameterised = parameterised
        checker.models, checker.program = models, program
        checker.block_inputs = {
            name: m.forward.inputs for name, m in models.items() if m.forward and m.forward.params
        }
        checker.run(instance.forward)
        unknown = _placeholder_spans(model, placeholders, annotated=False)
        ranged = _placeholder_spans(model, placeholders, annotated=True) + unknown
        for d in found:
            if d.span is not None and d.code == "S004" and _any_overlap(d.span, ranged):
                continue
            if d.span is not None and d.code in ("S003", "T040") and _any_overlap(d.span, unknown):
                continue
            if (d.code, d.span, d.message) not in seen:
                seen.add((d.code, d.span, d.message))
                out.setdefault(name, []).append(d)
    return out


def _placeholder_spans(
    model: ast.Model, placeholders: dict[str, bool], annotated: bool
) -> list[Span]:
    names = frozenset(n for n, a in placeholders.items() if a == annotated)
    if not names or model.forward is None:
        return []
    return list(name_references(model.forward, names))
