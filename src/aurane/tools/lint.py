"""``aurane lint``: text rules (W001-W003, E001) here, program rules in ``lint_rules``.

``fix_source`` applies the fixable rules (W001 trailing whitespace, W002 missing block colon)
and returns the result only when it parses without errors and keeps the program: the same AST
(spans aside) and, where the original lowered, the same IR. Fixes are idempotent: a fixed text
has nothing left to fix.
"""

from __future__ import annotations

from collections.abc import Iterable

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, has_errors, sorted_unique
from aurane.records import field, record
from aurane.source import Span, split_lines
from aurane.syntax import ast
from aurane.syntax.parser import parse_program

MAX_LINE = 100
FIXABLE = frozenset({"W001", "W002"})
_MISSING_COLON = "P010"


@record
class FixResult:
    source: str
    output: str | None = None  # the fixed text, when it is safe to publish
    fixed: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # why a fix was not published

    @property
    def changed(self) -> bool:
        return self.output is not None and self.output != self.source


def lint_source(
    text: str,
    filename: str = "<input>",
    *,
    select: Iterable[str] | None = None,
    ignore: frozenset[str] = frozenset(),
) -> list[Diagnostic]:
    """Every lint diagnostic of ``text``, sorted; ``select`` keeps only those codes, and
    ``ignore`` (``aurane.toml``) and ``# aurane: ignore[...]`` comments silence some."""
    from aurane.tools.lint_config import drop_silenced
    from aurane.tools.lint_rules import program_rules

    program, parsed = parse_program(text, filename)
    found = text_rules(text)
    found += [_colon_warning(d) for d in parsed if d.code == _MISSING_COLON]
    errors = [d for d in parsed if d.is_error and d.code != _MISSING_COLON]
    found += [_parse_error(d) for d in errors]
    if program is not None and not has_errors(parsed):
        found += program_rules(program, text, filename)
    chosen = set(select) if select is not None else None
    kept = drop_silenced(found, text, ignore)
    return sorted_unique(d for d in kept if chosen is None or d.code in chosen)


def text_rules(text: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    body = text[1:] if text.startswith("\ufeff") else text
    for number, line in enumerate(split_lines(body), start=1):
        kept = line.rstrip(" \t")
        if len(kept) != len(line):
            span = Span(number, len(kept) + 1, number, len(line) + 1)
            found.append(
                diag("W001", "trailing whitespace", span, hint="delete it (fixable: --auto-fix)")
            )
        if len(line) > MAX_LINE:
            span = Span(number, MAX_LINE + 1, number, len(line) + 1)
            found.append(
                diag(
                    "W003",
                    f"line is {len(line)} characters long; the limit is {MAX_LINE}",
                    span,
                    hint="run 'aurane format', or split the chain over '->' lines",
                )
            )
    return found


def _colon_warning(parsed: Diagnostic) -> Diagnostic:
    return diag("W002", parsed.message, parsed.span, hint="add ':' (fixable: --auto-fix)")


def _parse_error(parsed: Diagnostic) -> Diagnostic:
    hint = parsed.hint or f"see 'aurane explain {parsed.code}'"
    return diag(
        "E001",
        f"does not parse: {parsed.message} [{parsed.code}]",
        parsed.span,
        hint=hint,
        labels=parsed.labels,
    )


def apply_fixes(
    text: str, filename: str = "<input>", *, colon_spans: Iterable[Span] | None = None
) -> str:
    """``text`` with trailing whitespace removed and missing block colons added.

    ``colon_spans`` are where colons are missing (the spans of the text's W002 diagnostics);
    when not given, the text is parsed to find them.
    """
    if colon_spans is None:
        _, parsed = parse_program(text, filename)
        colon_spans = [d.span for d in parsed if d.code == _MISSING_COLON and d.span]
    colons = {(span.line, span.column) for span in colon_spans}
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    pieces = _split_keeping_ends(body)
    out = []
    for number, (line, ending) in enumerate(pieces, start=1):
        for line_no, column in sorted(colons, reverse=True):
            if line_no == number:
                line = line[: column - 1] + ":" + line[column - 1 :]
        out.append(line.rstrip(" \t") + ending)
    return bom + "".join(out)


def _split_keeping_ends(text: str) -> list[tuple[str, str]]:
    """Physical lines with their own line endings (\\n, \\r\\n or \\r), as the tokenizer sees."""
    pieces: list[tuple[str, str]] = []
    start = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in "\r\n":
            ending = "\r\n" if text.startswith("\r\n", index) else char
            pieces.append((text[start:index], ending))
            index += len(ending)
            start = index
        else:
            index += 1
    pieces.append((text[start:], ""))
    return pieces


def fix_source(
    text: str, filename: str = "<input>", found: Iterable[Diagnostic] | None = None
) -> FixResult:
    """Fix ``text``; ``found`` is its ``lint_source`` result (unselected), linted when not given."""
    if found is None:
        found = lint_source(text, filename)
    fixable = [d for d in found if d.code in FIXABLE]
    if not fixable:
        return FixResult(text, text)
    colons = [d.span for d in fixable if d.code == "W002" and d.span is not None]
    fixed = apply_fixes(text, filename, colon_spans=colons)
    problem = _fix_problem(text, fixed, filename)
    if problem is not None:
        return FixResult(text, None, fixable, f"{filename}: not fixed: {problem}")
    return FixResult(text, fixed, fixable)


def _fix_problem(before: str, after: str, filename: str) -> str | None:
    from aurane.tools.format import program_structure

    old, _ = parse_program(before, filename)
    new, found = parse_program(after, filename)
    if new is None or has_errors(found):
        return "the fixed text still does not parse; fix the errors first"
    if old is None or program_structure(old) != program_structure(new):
        return "the fix would change the program (this is a bug)"
    if program_ir(old) != program_ir(new):
        return "the fix would change the IR (this is a bug)"
    return None


def program_ir(program: ast.AuraneProgram) -> object:
    """The span-free IR of a parsed program (its stages run directly: the original text of a
    program with a missing colon does not parse cleanly, but its AST is complete)."""
    from aurane.ir.lower import lower_program
    from aurane.semantics.check import analyze
    from aurane.semantics.constants import resolve_program
    from aurane.tools.format import graphs_structure

    resolved, found = resolve_program(program)
    if has_errors(found):
        return ("resolve", [d.code for d in found])
    semantic = analyze(resolved)
    if has_errors(semantic.diagnostics):
        return ("semantic", [d.code for d in semantic.diagnostics])
    graphs, found = lower_program(resolved, semantic)
    return (graphs_structure(graphs), [d.code for d in found])
