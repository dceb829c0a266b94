"""Stage-by-stage Python API (SPEC §9): each stage usable on its own."""

from __future__ import annotations

# CompilationError lives with the diagnostics it carries, so the backends can raise it too
from aurane.diagnostics import CompilationError as CompilationError
from aurane.diagnostics import Diagnostic, has_errors, sorted_unique
from aurane.ir.graph import Graph
from aurane.ir.lower import lower_program
from aurane.semantics.check import analyze
from aurane.semantics.constants import resolve_program
from aurane.syntax import ast
from aurane.syntax.parser import parse_program


def _raise_on_errors(diagnostics: list[Diagnostic], filename: str | None = None) -> None:
    if has_errors(diagnostics):
        raise CompilationError(diagnostics, filename)


def parse(source: str, filename: str | None = None) -> ast.AuraneProgram:
    program, diagnostics = parse_program(source, filename)
    _raise_on_errors(diagnostics, filename)
    assert program is not None
    return program


def resolve_constants(program: ast.AuraneProgram) -> ast.AuraneProgram:
    resolved, diagnostics = resolve_program(program)
    _raise_on_errors(diagnostics, program.filename)
    return resolved


def analyze_semantics(program: ast.AuraneProgram) -> list[Diagnostic]:
    """Semantic diagnostics of a resolved program."""
    return sorted_unique(analyze(program).diagnostics)


class TypeChecker:
    """Shape and dtype checking of a resolved program (lowering, keeping only diagnostics)."""

    def __init__(self, program: ast.AuraneProgram) -> None:
        self.program = program

    def check(self) -> list[Diagnostic]:
        semantic = analyze(self.program)
        _, diagnostics = lower_program(self.program, semantic)
        return sorted_unique(diagnostics)


def lower(program: ast.AuraneProgram) -> dict[str, Graph]:
    """Lower a resolved program; raises CompilationError on semantic or type errors."""
    semantic = analyze(program)
    _raise_on_errors(semantic.diagnostics, program.filename)
    graphs, diagnostics = lower_program(program, semantic)
    _raise_on_errors(diagnostics, program.filename)
    return graphs
