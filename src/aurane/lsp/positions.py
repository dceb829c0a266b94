"""Spans (1-based, code points) to LSP positions (0-based, UTF-16 code units) and back."""

from __future__ import annotations

from lsprotocol import types as lsp

from aurane.source import Span


def utf16_column(line: str, column: int) -> int:
    """The UTF-16 offset of 1-based code-point ``column`` in ``line``."""
    prefix = line[: max(column - 1, 0)]
    if prefix.isascii():
        return len(prefix) + max(column - 1 - len(line), 0)
    return sum(2 if ord(c) > 0xFFFF else 1 for c in prefix)


def code_point_column(line: str, character: int) -> int:
    """The 1-based code-point column of UTF-16 offset ``character`` in ``line``."""
    if line.isascii():
        return character + 1
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line) + 1


class LineIndex:
    """Converts between spans and LSP ranges for one text."""

    def __init__(self, lines: tuple[str, ...] | list[str]) -> None:
        self.lines = lines

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    def position(self, line: int, column: int) -> lsp.Position:
        return lsp.Position(max(line - 1, 0), utf16_column(self.line(line), column))

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(
            self.position(span.line, span.column), self.position(span.end_line, span.end_column)
        )

    def point(self, position: lsp.Position) -> tuple[int, int]:
        """``(line, column)``, both 1-based."""
        number = position.line + 1
        return number, code_point_column(self.line(number), position.character)


def contains(span: Span, line: int, column: int) -> bool:
    """Whether ``(line, column)`` lies in ``span`` (its end included: the cursor after a word)."""
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)


def size(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_column - span.column)
