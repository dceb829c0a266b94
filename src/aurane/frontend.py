"""The front-end pipeline, one line per stage: parse, resolve, check, lower."""

from __future__ import annotations

from dataclasses import dataclass, field

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, has_errors, sorted_unique
from aurane.ir.graph import Graph
from aurane.ir.lower import lower_program
from aurane.semantics.check import analyze
from aurane.semantics.constants import resolve_program
from aurane.source import Source, Span
from aurane.syntax import ast
from aurane.syntax.gc_pause import paused_gc
from aurane.syntax.parser import parse_program


@dataclass
class FrontEnd:
    """Everything the front end learned about one source."""

    source: Source
    program: ast.AuraneProgram | None = None
    resolved: ast.AuraneProgram | None = None
    graphs: dict[str, Graph] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    failed_stage: str | None = None

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def run_front_end(text: str, filename: str = "<input>", *, types: bool = True) -> FrontEnd:
    with paused_gc():  # the passes build many small acyclic objects
        return _run(text, filename, types)


def _run(text: str, filename: str, types: bool) -> FrontEnd:
    result = FrontEnd(Source(text, filename))
    program, found = parse_program(text, filename)
    result.program = program
    if _stop(result, found, "parse") or program is None:
        return result
    resolved, found = resolve_program(program)
    result.resolved = resolved
    if _stop(result, found, "resolve"):
        return result
    semantic = analyze(resolved)
    if _stop(result, semantic.diagnostics, "semantic", keep_going=True) or not types:
        return result
    result.graphs, found = lower_program(resolved, semantic)
    _stop(result, found, "type")
    return result


def _stop(result: FrontEnd, found: list[Diagnostic], stage: str, keep_going: bool = False) -> bool:
    result.diagnostics = sorted_unique([*result.diagnostics, *found])
    if has_errors(found):
        result.failed_stage = result.failed_stage or stage
        return not keep_going
    return False


def decode_source(data: bytes, filename: str) -> tuple[str | None, Diagnostic | None]:
    """Strict UTF-8 decoding; a bad byte becomes a located P015 diagnostic."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as error:
        prefix = data[: error.start].decode("utf-8", errors="replace")
        line = prefix.count("\n") + 1
        column = len(prefix) - (prefix.rfind("\n") + 1) + 1
        return None, diag(
            "P015",
            f"invalid UTF-8 byte 0x{data[error.start]:02x} in {filename}",
            Span(line, column, line, column + 1),
            hint="re-save the file as UTF-8",
        )
