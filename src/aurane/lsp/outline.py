"""The outline (document symbols) and folding ranges."""

from __future__ import annotations

from lsprotocol import types as lsp

from aurane.lsp.document import Document
from aurane.syntax import ast


def document_symbols(doc: Document) -> list[lsp.DocumentSymbol]:
    program = doc.front.program if doc.front is not None else None
    if program is None:
        return []
    out: list[lsp.DocumentSymbol] = []
    r = doc.lines.range
    for stmt in program.statements:
        match stmt:
            case ast.Model():
                children = [
                    lsp.DocumentSymbol(f.name, lsp.SymbolKind.Field, r(f.span), r(f.name_span))
                    for f in stmt.fields
                ]
                if stmt.forward is not None:
                    for body in ast.simple_statements(stmt.forward.body):
                        if isinstance(body, ast.Assign):
                            children.append(
                                lsp.DocumentSymbol(
                                    body.target,
                                    lsp.SymbolKind.Variable,
                                    r(body.span),
                                    r(body.target_span),
                                )
                            )
                kind = doc.index.kinds.get(stmt.name, "model")
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name,
                        lsp.SymbolKind.Class,
                        r(stmt.span),
                        r(stmt.name_span),
                        detail=kind,
                        children=children,
                    )
                )
            case ast.Constant():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name, lsp.SymbolKind.Constant, r(stmt.span), r(stmt.name_span)
                    )
                )
            case ast.Dataset():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name,
                        lsp.SymbolKind.Struct,
                        r(stmt.span),
                        r(stmt.name_span),
                        detail="dataset",
                    )
                )
            case ast.Experiment():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name,
                        lsp.SymbolKind.Namespace,
                        r(stmt.span),
                        r(stmt.name_span),
                        detail="experiment",
                    )
                )
            case ast.Train():
                name = f"train {stmt.model.id} on {stmt.dataset.id}"
                out.append(
                    lsp.DocumentSymbol(name, lsp.SymbolKind.Event, r(stmt.span), r(stmt.model.span))
                )
            case ast.TrainGan():
                name = f"train_gan {stmt.generator.id}, {stmt.discriminator.id}"
                out.append(
                    lsp.DocumentSymbol(
                        name, lsp.SymbolKind.Event, r(stmt.span), r(stmt.generator.span)
                    )
                )
            case ast.Use():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.module, lsp.SymbolKind.Module, r(stmt.span), r(stmt.module_span)
                    )
                )
    return out


def folding_ranges(doc: Document) -> list[lsp.FoldingRange]:
    program = doc.front.program if doc.front is not None else None
    if program is None:
        return []
    out: list[lsp.FoldingRange] = []
    for stmt in program.statements:
        spans = [stmt.span]
        if isinstance(stmt, ast.Model) and stmt.forward is not None:
            spans.append(stmt.forward.span)
        for span in spans:
            if span.end_line > span.line:
                out.append(
                    lsp.FoldingRange(
                        start_line=span.line - 1,
                        end_line=span.end_line - 1,
                        kind=lsp.FoldingRangeKind.Region,
                    )
                )
    return out
