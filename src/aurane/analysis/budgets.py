"""Budgets: ``budget params <= 25M, macs <= 4.1G, activations <= 2GiB at batch 32``.

Each limit of a model's budget lines is compared with the profile of its IR graph
(``aurane.analysis.profile``: the figures ``aurane profile`` prints). A limit exceeded is a
located ``T115`` at the limit's span with the actual figure and the layers that contribute
most. With symbolic sizes (``seq = dim(1, 2048)``) the figures are formulas; a budget
evaluates them at ``at seq 512`` when given, else at each symbol's declared maximum (a
symbol without one needs ``at``: ``S112``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aurane.analysis.profile import LayerProfile, ModelProfile, profile
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.graph import Graph
from aurane.records import record
from aurane.semantics.sizes import evaluate, free_symbols
from aurane.syntax import ast

__all__ = ["BudgetCheck", "budget_json", "budget_lines", "check_budgets", "evaluate_budgets"]

_NOUNS = {"params": "parameters", "macs": "MACs", "flops": "FLOPs", "activations": ""}


@record(frozen=True)
class BudgetCheck:
    """One limit against the actual figure (at ``batch`` and the bound sizes ``at``)."""

    model: str
    limit: ast.BudgetLimit
    actual: int
    batch: int
    at: Mapping[str, int]
    contributors: tuple[tuple[str, int], ...]  # (node id, figure), largest first
    symbolic: bool = False  # the figure was a formula, evaluated at ``at``

    @property
    def ok(self) -> bool:
        return self.actual <= self.limit.amount


_FIGURES = {"params": "parameters", "macs": "macs", "flops": "flops"}


def _figure(metric: str, p: ModelProfile | LayerProfile, batch: int = 1) -> Any:
    """The metric's figure of a model (activations already at its batch) or of one layer
    (activations per sample, times ``batch``)."""
    if metric in _FIGURES:
        return getattr(p, _FIGURES[metric])
    return batch * p.activation_bytes


def evaluate_budgets(model: ast.Model, graph: Graph) -> tuple[list[BudgetCheck], list[Diagnostic]]:
    """Every limit of ``model``'s budget lines, checked or not yet checkable."""
    checks: list[BudgetCheck] = []
    problems: list[Diagnostic] = []
    symbols = free_symbols(tuple(v.shape or () for v in graph.inputs))  # every input
    for budget in model.budgets:
        given = dict(budget.at)
        batch = given.pop("batch", 1)
        unknown = [name for name in given if name not in {s.name for s in symbols}]
        if unknown:
            problems.append(
                diag(
                    "S112",
                    f"budget 'at {unknown[0]}': model '{model.name}' has no symbolic size "
                    f"'{unknown[0]}'",
                    budget.span,
                    hint="'at' takes batch N and the model's dim(...) sizes",
                )
            )
            continue
        outside = [
            (sym, given[sym.name])
            for sym in symbols
            if sym.name in given
            and not (sym.low <= given[sym.name] <= (sym.high or given[sym.name]))
        ]
        if outside:
            sym, value = outside[0]
            declared = f"dim({sym.low}, {sym.high})" if sym.high else f"dim({sym.low})"
            problems.append(
                diag(
                    "S112",
                    f"budget 'at {sym.name} {value}': {sym.name} is declared {declared}, so "
                    "the model never sees that size",
                    budget.span,
                    hint=f"choose a size {sym.name} can take",
                )
            )
            continue
        env = dict(given)
        missing = []
        for sym in symbols:
            if sym.name not in env:
                if sym.high is None:
                    missing.append(sym.name)
                else:
                    env[sym.name] = sym.high
        if missing:
            problems.append(
                diag(
                    "S112",
                    f"budget of model '{model.name}' depends on the symbolic size "
                    f"'{missing[0]}', which has no maximum",
                    budget.span,
                    hint=f"add 'at {missing[0]} N' to the budget line, or declare "
                    f"{missing[0]} = dim(1, N)",
                )
            )
            continue
        prof = profile(graph, batch)
        for limit in budget.limits:
            formula = _figure(limit.metric, prof)
            actual = evaluate(formula, env)
            figures = [
                (layer.node, evaluate(_figure(limit.metric, layer, batch), env))
                for layer in prof.layers
            ]
            figures = [f for f in figures if isinstance(f[1], int) and f[1] > 0]
            figures.sort(key=lambda item: -item[1])
            checks.append(
                BudgetCheck(
                    model.name,
                    limit,
                    int(actual),
                    batch,
                    env,
                    tuple(figures[:3]),
                    bool(free_symbols(formula)),
                )
            )
    return checks, problems


def _amount(check: BudgetCheck, value: int) -> str:
    if check.limit.metric == "activations":
        return _bytes(value)
    return f"{value:,}"


def _bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{count:,} B" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{count:,} B"  # pragma: no cover


def _where(check: BudgetCheck) -> str:
    parts = [f"batch {check.batch}"] if check.limit.metric == "activations" else []
    if check.symbolic:
        parts += [f"{name} = {value}" for name, value in check.at.items()]
    return f" at {', '.join(parts)}" if parts else ""


def check_budgets(program: ast.AuraneProgram, graphs: Mapping[str, Graph]) -> list[Diagnostic]:
    """Located diagnostics for every budget limit a model exceeds (and malformed budgets)."""
    found: list[Diagnostic] = []
    for model in program.models:
        graph = graphs.get(model.name)
        if not model.budgets or graph is None:
            continue
        spans = {node.id: node.span for node in graph.nodes}
        checks, problems = evaluate_budgets(model, graph)
        found += problems
        for check in checks:
            if check.ok:
                continue
            limit = check.limit
            top = ", ".join(f"{node} {_amount(check, value)}" for node, value in check.contributors)
            message = (
                f"model '{model.name}' exceeds its {limit.metric} budget{_where(check)}: "
                f"{_amount(check, check.actual)} {_NOUNS[limit.metric]}"
            ).rstrip() + f" > {limit.text}"
            if top:
                message += f" (largest: {top})"
            labels = tuple(
                Label(spans[node], f"{_amount(check, value)} {_NOUNS[limit.metric]}".rstrip())
                for node, value in check.contributors
                if node in spans
            )
            found.append(
                diag(
                    "T115",
                    message,
                    limit.span,
                    labels=labels,
                    hint="shrink the largest layers, or raise the budget if it was set too low",
                )
            )
    return found


def budget_lines(model: ast.Model, graph: Graph) -> list[str]:
    """``profile``'s budget section: each limit against the actual figure."""
    checks, _ = evaluate_budgets(model, graph)
    lines = []
    for check in checks:
        verdict = "ok" if check.ok else "EXCEEDED"
        lines.append(
            f"  budget {check.limit.metric}{_where(check)}: {_amount(check, check.actual)} "
            f"of {check.limit.text} ({100 * check.actual / max(check.limit.amount, 1):.0f}%) "
            f"{verdict}"
        )
    return lines


def budget_json(model: ast.Model, graph: Graph) -> list[dict[str, Any]]:
    checks, _ = evaluate_budgets(model, graph)
    return [
        {
            "metric": c.limit.metric,
            "limit": c.limit.amount,
            "limit_text": c.limit.text,
            "actual": c.actual,
            "batch_size": c.batch,
            "at": dict(c.at),
            "ok": c.ok,
            "largest": [{"node": node, "value": value} for node, value in c.contributors],
        }
        for c in checks
    ]
