"""Text for LSP answers: shapes, signatures, source snippets, the word and statement at a point."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from aurane.ir.graph import BATCH
from aurane.lsp.document import Document
from aurane.lsp.positions import LineIndex
from aurane.ops.spec import REQUIRED, Param
from aurane.semantics import config
from aurane.source import Span
from aurane.syntax import ast

IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def shape_text(shape: tuple[Any, ...] | None) -> str:
    if shape is None:
        return "?"
    dims = ["B" if dim == BATCH else str(dim) for dim in shape]
    return "(" + ", ".join(dims) + ")"


def param_text(param: Param) -> str:
    if param.default is REQUIRED:
        return param.name
    return f"{param.name}={literal(param.default)}"


def literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def op_signature(name: str, params: Iterable[Param]) -> str:
    return f"{name}({', '.join(param_text(p) for p in params)})"


def model_signature(model: ast.Model, lines: LineIndex) -> str:
    if not model.params:
        return f"model {model.name}"
    parts = []
    for param in model.params:
        text = param.name + (f": {param.annotation}" if param.annotation else "")
        if param.default is not None:
            text += " = " + span_text(lines, param.default.span)
        parts.append(text)
    return f"model {model.name}({', '.join(parts)})"


def span_text(lines: LineIndex, span: Span) -> str:
    if span.line == span.end_line:
        return lines.line(span.line)[span.column - 1 : span.end_column - 1]
    out = [lines.line(span.line)[span.column - 1 :]]
    out += [lines.line(n) for n in range(span.line + 1, span.end_line)]
    out.append(lines.line(span.end_line)[: span.end_column - 1])
    return "\n".join(out)


def word_at(lines: LineIndex, line: int, column: int) -> tuple[str, Span] | None:
    text = lines.line(line)
    for match in IDENT.finditer(text):
        if match.start() + 1 <= column <= match.end() + 1:
            return match.group(0), Span(line, match.start() + 1, line, match.end() + 1)
    return None


def option_spec(name: str) -> config.OptionSpec | None:
    for table in (
        config.LOSS_TABLE,
        config.OPTIMIZER_TABLE,
        config.SCHEDULER_TABLE,
        config.CALLBACK_TABLE,
    ):
        if name in table:
            return table[name]
    return None


def enclosing(doc: Document, line: int) -> ast.Statement | None:
    program = doc.front.program if doc.front is not None else None
    if program is None:
        return None
    for stmt in program.statements:
        if stmt.span.line <= line <= stmt.span.end_line:
            return stmt
    # a line being typed below a block's last line still belongs to it when indented
    before = [s for s in program.statements if s.span.line <= line]
    text = doc.lines.line(line)
    if before and text[:1] in (" ", "\t"):
        return before[-1]
    return None
