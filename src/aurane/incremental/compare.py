"""Comparing two front-end answers (the incremental one against a full analysis)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aurane.diagnostics import Diagnostic
from aurane.frontend import FrontEnd


def same_result(left: FrontEnd, right: FrontEnd) -> list[str]:
    """Differences between two front-end results (empty when they agree); for tests."""
    problems: list[str] = []

    def key(d: Diagnostic) -> tuple[Any, ...]:
        return (*d.sort_key(), d.message, d.hint, d.labels, d.stage)

    a, b = sorted(left.diagnostics, key=key), sorted(right.diagnostics, key=key)
    if a != b:
        problems.append(f"diagnostics differ:\n  {_show(a, b)}\n  {_show(b, a)}")
    if list(left.graphs) != list(right.graphs):
        problems.append(f"graph names differ: {list(left.graphs)} != {list(right.graphs)}")
    for name in left.graphs.keys() & right.graphs.keys():
        if left.graphs[name] != right.graphs[name]:
            problems.append(f"graph {name} differs")
    if left.failed_stage != right.failed_stage:
        problems.append(f"failed stage {left.failed_stage} != {right.failed_stage}")
    return problems


def _show(a: Iterable[Diagnostic], b: Iterable[Diagnostic]) -> str:
    extra = [d for d in a if d not in set(b)]
    return "; ".join(f"{d.code} {d.span} {d.message} [{d.hint}]" for d in extra[:5])
