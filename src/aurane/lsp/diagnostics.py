"""Diagnostics as LSP publishes them: ranges in UTF-16, the help text, related labels."""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types as lsp

from aurane.diagnostics import Diagnostic
from aurane.lsp.document import Document
from aurane.lsp.positions import LineIndex
from aurane.source import Span

SOURCE = "aurane"


_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}


def to_lsp_diagnostic(d: Diagnostic, lines: LineIndex, uri: str) -> lsp.Diagnostic:
    span = d.span or Span(1, 1, 1, 1)
    message = d.message if d.hint is None else f"{d.message}\nhelp: {d.hint}"
    related = [
        lsp.DiagnosticRelatedInformation(lsp.Location(uri, lines.range(lab.span)), lab.message)
        for lab in d.labels
    ]
    return lsp.Diagnostic(
        range=lines.range(span),
        message=message,
        severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error),
        code=d.code,
        source=SOURCE,
        related_information=related or None,
        data={"hint": d.hint, "stage": d.stage},
    )


def diagnostics(doc: Document, extra: Iterable[Diagnostic] = ()) -> list[lsp.Diagnostic]:
    found = list(doc.front.diagnostics) if doc.front is not None else []
    return front_diagnostics(found, doc.lines, doc.uri, extra)


def front_diagnostics(
    found: Iterable[Diagnostic], lines: LineIndex, uri: str, extra: Iterable[Diagnostic] = ()
) -> list[lsp.Diagnostic]:
    return [to_lsp_diagnostic(d, lines, uri) for d in [*found, *extra]]
