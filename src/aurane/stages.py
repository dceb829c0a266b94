"""Stage-by-stage Python API (SPEC §9): each stage usable on its own."""

from __future__ import annotations

from aurane.diagnostics import Diagnostic, has_errors, sorted_unique
from aurane.ir.graph import Graph
from aurane.ir.lower import lower_program
from aurane.semantics.check import analyze
from aurane.semantics.constants import resolve_program
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.parser import parse_program


class CompilationError(Exception):
    """Readable text plus the failing ``stage``, the first error's ``span`` and every diagnostic."""

    def __init__(self, diagnostics: list[Diagnostic], filename: str | None = None) -> None:
        self.diagnostics = sorted_unique(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error] or self.diagnostics
        first = errors[0] if errors else None
        self.stage: str | None = first.stage if first else None
        self.span: Span | None = first.span if first else None
        self.filename = filename
        super().__init__(self._text())

    def _text(self) -> str:
        name = self.filename or "<input>"
        lines = []
        for d in self.diagnostics:
            where = f"{name}:{d.span.line}:{d.span.column}" if d.span else name
            lines.append(f"{where}: {d.severity}[{d.code}]: {d.message}")
        return "\n".join(lines) or "compilation failed"


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
