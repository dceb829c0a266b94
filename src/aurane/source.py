"""Source text and spans: 1-based lines and columns, end column exclusive, code points."""

from __future__ import annotations

from aurane.records import field, record


@record(frozen=True, slots=True, order=True)
class Span:
    """A region of source text. Columns count code points; ``end_column`` is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def merge(self, other: Span) -> Span:
        start = min((self.line, self.column), (other.line, other.column))
        end = max((self.end_line, self.end_column), (other.end_line, other.end_column))
        return Span(start[0], start[1], end[0], end[1])

    def to_json(self) -> dict[str, int]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
        }

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


@record(frozen=True)
class Source:
    """The text of one input with a line index for rendering diagnostics."""

    text: str
    filename: str = "<input>"
    lines: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lines", tuple(split_lines(self.text)))

    def line_text(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""


def split_lines(text: str) -> list[str]:
    """Split on the line endings the tokenizer recognises (\\n, \\r\\n, \\r)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
