"""Edits: formatting and code actions (did-you-mean fixes, lint fixes, fix all)."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from aurane.diagnostics import Diagnostic
from aurane.lsp.diagnostics import to_lsp_diagnostic
from aurane.lsp.document import Document
from aurane.lsp.text import IDENT, span_text
from aurane.source import Span

_HINT_NAME = re.compile(r"did you mean '([^']+)'")


def _whole(doc: Document) -> lsp.Range:
    last = len(doc.lines.lines)
    return lsp.Range(lsp.Position(0, 0), doc.lines.position(last, len(doc.lines.line(last)) + 1))


def formatting(doc: Document) -> list[lsp.TextEdit]:
    from aurane.tools.format import format_source

    result = format_source(doc.text, doc.uri)
    if result.output is None or result.output == doc.text:
        return []
    return [lsp.TextEdit(_whole(doc), result.output)]


def _overlaps(span: Span | None, start: int, end: int) -> bool:
    return span is not None and span.line <= end and span.end_line >= start


def code_actions(doc: Document, start: int, end: int) -> list[lsp.CodeAction]:
    from aurane.tools.lint import FIXABLE, fix_source, lint_source

    actions: list[lsp.CodeAction] = []
    front = list(doc.front.diagnostics) if doc.front is not None else []
    linted = lint_source(doc.text, doc.uri)
    for d in [*front, *linted]:
        if not _overlaps(d.span, start, end) or d.span is None:
            continue
        diagnostic = to_lsp_diagnostic(d, doc.lines, doc.uri)
        match = _HINT_NAME.search(d.hint or "")
        if match is not None:
            edit = _rename_in_span(doc, d.span, match.group(1))
            if edit is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Replace with '{match.group(1)}'",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        is_preferred=True,
                        edit=lsp.WorkspaceEdit(changes={doc.uri: [edit]}),
                    )
                )
        if d.code in FIXABLE:
            fix = _lint_fix(doc, d)
            if fix is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Fix {d.code}: {d.message}",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=lsp.WorkspaceEdit(changes={doc.uri: [fix]}),
                    )
                )
    if any(d.code in FIXABLE for d in linted):
        fixed = fix_source(doc.text, doc.uri, linted)
        if fixed.output is not None and fixed.output != doc.text:
            actions.append(
                lsp.CodeAction(
                    title="Fix all auto-fixable lint problems",
                    kind=lsp.CodeActionKind.SourceFixAll,
                    edit=lsp.WorkspaceEdit(
                        changes={doc.uri: [lsp.TextEdit(_whole(doc), fixed.output)]}
                    ),
                )
            )
    return actions


def _rename_in_span(doc: Document, span: Span, name: str) -> lsp.TextEdit | None:
    """Replace the identifier in ``span`` closest to ``name`` (the misspelt one)."""
    import difflib

    text = span_text(doc.lines, span)
    if span.line != span.end_line:
        text = text.split("\n", 1)[0]
    best: tuple[float, re.Match[str]] | None = None
    for match in IDENT.finditer(text):
        score = difflib.SequenceMatcher(None, match.group(0), name).ratio()
        if match.group(0) != name and (best is None or score > best[0]):
            best = (score, match)
    if best is None:
        return None
    column = span.column + best[1].start()
    target = Span(span.line, column, span.line, column + len(best[1].group(0)))
    return lsp.TextEdit(doc.lines.range(target), name)


def _lint_fix(doc: Document, d: Diagnostic) -> lsp.TextEdit | None:
    if d.span is None:
        return None
    if d.code == "W001":  # trailing whitespace
        return lsp.TextEdit(doc.lines.range(d.span), "")
    if d.code == "W002":  # missing colon
        point = doc.lines.position(d.span.line, d.span.column)
        return lsp.TextEdit(lsp.Range(point, point), ":")
    return None
