"""The front-end pipeline, one line per stage: parse, resolve, check, lower."""

from __future__ import annotations

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, has_errors, sorted_unique
from aurane.ir.expansion import limit_expansion
from aurane.ir.graph import Graph
from aurane.ir.lower import lower_program
from aurane.records import field, record
from aurane.semantics.check import SemanticResult, analyze
from aurane.semantics.constants import resolve_with_failures
from aurane.source import Source, Span
from aurane.syntax import ast
from aurane.syntax.gc_pause import paused_gc
from aurane.syntax.parser import parse_program


@record
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
    return analyze_program(result, program, types)


def analyze_program(result: FrontEnd, program: ast.AuraneProgram, types: bool = True) -> FrontEnd:
    """The passes after parsing, on a parsed program (the incremental front end reuses them)."""
    resolved, found, unresolved = resolve_with_failures(program)
    result.resolved = resolved
    # Resolve errors do not hide independent semantic and shape errors: the later passes
    # run, skipping what stayed unresolved (reported once, by the resolver).
    _stop(result, found, "resolve", keep_going=True)
    semantic = analyze(resolved)
    if unresolved:
        semantic.diagnostics[:] = [
            d for d in semantic.diagnostics if not _inside_any(d.span, unresolved)
        ]
        for model in resolved.models:
            if any(_inside(span, model.span) for span in unresolved):
                semantic.broken_models.add(model.name)
        semantic.broken_models.update(_models_calling(semantic, semantic.broken_models))
    if _stop(result, semantic.diagnostics, "semantic", keep_going=True) or not types:
        return result
    result.graphs, found = lower_program(resolved, semantic)
    result.graphs, too_large = limit_expansion(result.graphs)  # before anything expands
    found += too_large  # T116, T117
    if any(model.budgets for model in resolved.models):
        # the profiler is imported only for programs with budget lines (check's start-up)
        from aurane.analysis.budgets import check_budgets

        found += check_budgets(resolved, result.graphs)  # T115, S112
    _stop(result, found, "type")
    return result


def _inside(span: Span | None, outer: Span) -> bool:
    if span is None:
        return False
    start = (span.line, span.column) >= (outer.line, outer.column)
    return start and (span.end_line, span.end_column) <= (outer.end_line, outer.end_column)


def _inside_any(span: Span | None, outers: frozenset[Span]) -> bool:
    return any(_inside(span, outer) for outer in outers)


def _models_calling(semantic: SemanticResult, broken: set[str]) -> set[str]:
    """Models that use a broken one, directly or not: they cannot be type checked either."""
    found = set(broken)
    changed = True
    while changed:
        changed = False
        for name, calls in semantic.calls.items():
            if name not in found and any(c in found for c, _ in calls):
                found.add(name)
                changed = True
    return found


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


def oversized_source(size: int, exact: bool = True) -> Diagnostic:
    """P011 at the start of a source over ``MAX_FILE_BYTES``, worded as the parser words it
    (``exact``: ``size`` is the file's size; else reading stopped after ``size`` bytes)."""
    from aurane.syntax.tokens import MAX_FILE_BYTES

    shown = f"{size} bytes" if exact else f"more than {MAX_FILE_BYTES} bytes"
    return diag(
        "P011",
        f"file is {shown}; the limit is {MAX_FILE_BYTES} bytes (1 MiB)",
        Span(1, 1, 1, 2),
        hint="split the program into smaller files",
    )


def read_source_text(
    path: str, filename: str | None = None
) -> tuple[str | None, Diagnostic | None]:
    """A source file's text, or its located P011 (past the size limit: checked before
    reading, at most the limit and one byte are read) or P015 (bad UTF-8).

    Raises ``OSError`` as ``open`` does, and ``aurane.fs.NotAFile`` for a FIFO, device,
    socket or directory (refused at once, never waited on).
    """
    from aurane.fs import TooLarge, read_limited
    from aurane.syntax.tokens import MAX_FILE_BYTES

    try:
        data = read_limited(path, MAX_FILE_BYTES)
    except TooLarge as error:
        return None, oversized_source(error.size, error.exact)
    return decode_source(data, filename or path)
