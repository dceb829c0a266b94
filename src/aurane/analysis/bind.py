"""Symbolic sizes bound to numbers: the graphs of ``profile --at seq=128``.

The program is lowered again with the sizes given (``lower_program(..., sizes=...)``), so
every figure is computed by the ordinary rules on concrete shapes, and a size outside what
the model accepts (a kernel larger than the input) is the ordinary located error.
"""

from __future__ import annotations

from collections.abc import Mapping

from aurane.diagnostics import Diagnostic, has_errors
from aurane.ir.graph import Graph
from aurane.ir.lower import lower_program
from aurane.semantics.check import analyze
from aurane.semantics.sizes import free_symbols
from aurane.syntax import ast

__all__ = ["bind_sizes", "symbols_of"]


def symbols_of(graphs: list[Graph]) -> dict[str, tuple[int, int | None]]:
    """Every symbolic size of the graphs' inputs: name -> (min, max)."""
    found: dict[str, tuple[int, int | None]] = {}
    for graph in graphs:
        for sym in free_symbols(tuple(v.shape or () for v in graph.inputs)):  # every input
            found[sym.name] = (sym.low, sym.high)
    return found


def bind_sizes(
    program: ast.AuraneProgram, graphs: list[Graph], sizes: Mapping[str, int]
) -> tuple[list[Graph], list[Diagnostic]]:
    """``graphs`` lowered again with ``sizes`` bound; raises ValueError for an unknown name
    or a size outside its declared range."""
    declared = symbols_of(graphs)
    for name, value in sizes.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ValueError(f"no symbolic size '{name}' (the models' symbolic sizes: {known})")
        low, high = declared[name]
        if value < low or (high is not None and value > high):
            upper = high if high is not None else "unbounded"
            raise ValueError(f"{name}={value} is outside its declared range {low}..{upper}")
    bound, diagnostics = lower_program(program, analyze(program), sizes=sizes)
    if has_errors(diagnostics):
        return [], diagnostics
    return [bound[g.name] for g in graphs if g.name in bound], diagnostics
