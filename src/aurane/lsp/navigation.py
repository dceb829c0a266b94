"""Go to definition, find references and rename, over the document's symbol index."""

from __future__ import annotations

from lsprotocol import types as lsp

from aurane.lsp.document import LOCAL, Document, Occurrence
from aurane.lsp.text import IDENT


def _occurrence(doc: Document, line: int, column: int) -> Occurrence | None:
    return doc.index.at(line, column)


def definition(doc: Document, line: int, column: int) -> list[lsp.Location]:
    occurrence = _occurrence(doc, line, column)
    if occurrence is None:
        return []
    defs = doc.index.definitions(occurrence.key)
    if occurrence.key[0] == LOCAL and not occurrence.definition:
        # the latest binding on an earlier line (``h = f(h)`` reads the previous ``h``)
        before = [d for d in defs if d.span.line < occurrence.span.line]
        defs = before[-1:] or defs[:1]
    return [lsp.Location(doc.uri, doc.lines.range(d.span)) for d in defs]


def references(doc: Document, line: int, column: int, declaration: bool) -> list[lsp.Location]:
    occurrence = _occurrence(doc, line, column)
    if occurrence is None:
        return []
    return [
        lsp.Location(doc.uri, doc.lines.range(o.span))
        for o in doc.index.all(occurrence.key)
        if declaration or not o.definition
    ]


def prepare_rename(doc: Document, line: int, column: int) -> lsp.Range | None:
    occurrence = _occurrence(doc, line, column)
    return doc.lines.range(occurrence.span) if occurrence is not None else None


def rename(doc: Document, line: int, column: int, new_name: str) -> lsp.WorkspaceEdit | None:
    occurrence = _occurrence(doc, line, column)
    if occurrence is None or not IDENT.fullmatch(new_name):
        return None
    edits = [lsp.TextEdit(doc.lines.range(o.span), new_name) for o in doc.index.all(occurrence.key)]
    return lsp.WorkspaceEdit(changes={doc.uri: edits})
