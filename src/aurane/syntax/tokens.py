"""The tokenizer: source text to logical lines of tokens, plus comments and lexical diagnostics.

Strings close on their own physical line, so each physical line is scanned on its own
(`_scan_line`); a second pass (`_join_lines`) glues physical lines into logical lines while a
bracket is open or when a line starts with ``->``. Indentation is measured per logical line;
the parser builds blocks from it. Nothing here raises on any input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from aurane import codes
from aurane.diagnostics import Diagnostic
from aurane.source import Span, split_lines
from aurane.syntax.ast import Comment

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_IDENTIFIER = 256


class Kind(Enum):
    NAME = "name"
    NUMBER = "number"
    STRING = "string"
    OP = "op"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    text: str  # as written (for strings: including the quotes)
    value: str | int | float | None  # decoded string or number; None for names and operators
    span: Span

    def is_op(self, text: str) -> bool:
        return self.kind is Kind.OP and self.text == text


@dataclass(slots=True)
class LogicalLine:
    """One statement's tokens, possibly over several physical lines."""

    indent: int
    tokens: list[Token]
    lexical_error: bool = False  # the tokenizer already reported this line: parse quietly
    tab_indent: bool = False

    @property
    def span(self) -> Span:
        return self.tokens[0].span.merge(self.tokens[-1].span)

    @property
    def end(self) -> Span:
        """The point just after the last token, where an 'expected ...' at end of line points."""
        last = self.tokens[-1].span
        return Span(last.end_line, last.end_column, last.end_line, last.end_column + 1)


@dataclass(frozen=True, slots=True)
class Tokenized:
    lines: tuple[LogicalLine, ...]
    comments: tuple[Comment, ...]
    diagnostics: tuple[Diagnostic, ...]
    line_count: int


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
# Leading blanks are part of each match: one regex call per token, not two.
_TOKEN = re.compile(
    r"[ \t]*(?:"
    r"(?P<name>[^\W\d]\w*)"
    r"|(?P<number>(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?[\d_]*)?\w*)"
    r"|(?P<op>->|//|\*\*|[-+*/%()\[\]{},:=.])"
    r"|(?P<string>['\"])"
    r"|(?P<comment>\#)"
    r"|(?P<end>\Z))"
)
_VALID_NUMBER = re.compile(
    r"(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?\Z"
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_INVALID_TEXT = re.compile("[\x00\ud800-\udfff]")
# Keywords that start a statement: a line beginning with one at or left of the statement's
# indentation ends an unclosed bracket early, so one missing ')' does not swallow the file.
_STATEMENT_WORDS = frozenset(
    {"model", "dataset", "experiment", "train", "train_gan", "use", "def", "return"}
)


def tokenize(text: str) -> Tokenized:
    """Split ``text`` into logical lines of tokens. A leading BOM is ignored."""
    if text.startswith("\ufeff"):
        text = text[1:]
    physical = split_lines(text)
    scanner = _LineScanner()
    scanned = [scanner.scan(number, line) for number, line in enumerate(physical, start=1)]
    joiner = _Joiner()
    for row in scanned:
        joiner.add(row)
    lines = joiner.finish()
    diagnostics = scanner.diagnostics + joiner.diagnostics
    return Tokenized(tuple(lines), tuple(scanner.comments), tuple(diagnostics), len(physical))


@dataclass(slots=True)
class _Physical:
    number: int
    indent: int
    tab: bool
    tokens: list[Token]
    error: bool


@dataclass
class _LineScanner:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)

    def scan(self, number: int, text: str) -> _Physical:
        self._line, self._text, self._error = number, text, False
        indent, tab = self._indentation()
        tokens: list[Token] = []
        pos = indent
        while pos < len(text):
            pos = self._next(pos, tokens)
        return _Physical(number, indent, tab, tokens, self._error)

    def _report(self, diag: Diagnostic) -> None:
        self._error = True
        self.diagnostics.append(diag)

    def _span(self, start: int, end: int) -> Span:
        return Span(self._line, start + 1, self._line, end + 1)

    def _indentation(self) -> tuple[int, bool]:
        text = self._text
        width = len(text) - len(text.lstrip(" \t"))
        tab = text.find("\t", 0, width)
        if tab >= 0:
            self._report(
                codes.diag(
                    "P001",
                    "tab used for indentation; indentation must be spaces",
                    self._span(tab, tab + 1),
                    hint="replace the tab with spaces (four per level)",
                )
            )
        return width, tab >= 0

    def _next(self, pos: int, tokens: list[Token]) -> int:
        match = _TOKEN.match(self._text, pos)
        if match is None:
            return self._bad_characters(pos)
        kind = match.lastgroup or "end"
        start, end = match.start(kind), match.end()
        if kind == "name":
            tokens.append(self._name(start, end))
        elif kind == "number":
            tokens.append(self._number(start, end))
        elif kind == "op":
            tokens.append(Token(Kind.OP, match.group(kind), None, self._span(start, end)))
        elif kind == "string":
            token, end = self._string(start)
            tokens.append(token)
        elif kind == "comment":
            self._comment(start, own_line=not tokens)
            end = len(self._text)
        return end

    def _name(self, start: int, end: int) -> Token:
        text = self._text[start:end]
        if len(text) > MAX_IDENTIFIER:
            self._report(
                codes.diag(
                    "P011",
                    f"identifier is {len(text)} characters long; the limit is {MAX_IDENTIFIER}",
                    self._span(start, end),
                    hint="use a shorter name",
                )
            )
        return Token(Kind.NAME, text, None, self._span(start, end))

    def _number(self, start: int, end: int) -> Token:
        text = self._text[start:end]
        span = self._span(start, end)
        value = _number_value(text)
        if isinstance(value, str):
            self._report(
                codes.diag(
                    "P008",
                    f"invalid number literal '{text}': {value}",
                    span,
                    hint="write a decimal number such as 42, 0.5, 1e-4 or 1_000",
                )
            )
            value = 0
        return Token(Kind.NUMBER, text, value, span)

    def _string(self, start: int) -> tuple[Token, int]:
        text, quote = self._text, self._text[start]
        pos = start + 1
        while pos < len(text) and text[pos] != quote:
            pos += 2 if text[pos] == "\\" else 1
        if pos >= len(text):
            body, end = text[start + 1 :], len(text)
            self._report(
                codes.diag(
                    "P004",
                    f"unterminated string literal: the {quote} opened here is not closed "
                    "before the end of the line",
                    self._span(start, end),
                    hint=f"add the closing {quote} on the same line",
                )
            )
        else:
            body, end = text[start + 1 : pos], pos + 1
        self._check_valid_text(body, start + 1)
        value = self._decode(body, start + 1)
        return Token(Kind.STRING, text[start:end], value, self._span(start, end)), end

    def _decode(self, body: str, offset: int) -> str:
        def replace(match: re.Match[str]) -> str:
            escape = match.group(1)
            if escape in _SIMPLE_ESCAPES:
                return _SIMPLE_ESCAPES[escape]
            if len(escape) > 1 and int(escape[1:], 16) <= 0x10FFFF:
                return chr(int(escape[1:], 16))
            where = self._span(offset + match.start(), offset + match.end())
            self._report(
                codes.diag(
                    "P014",
                    f"invalid escape sequence '{match.group()}' in string",
                    where,
                    hint="escape the backslash as \\\\ or use one of "
                    "\\\\ \\' \\\" \\n \\t \\r \\0 \\xHH \\uHHHH \\UHHHHHHHH",
                )
            )
            return match.group()

        return _ESCAPE.sub(replace, body) if "\\" in body else body

    def _comment(self, start: int, *, own_line: bool) -> None:
        body = self._text[start:]
        self._check_valid_text(body, start)
        span = self._span(start, len(self._text))
        self.comments.append(Comment(body, span, own_line))

    def _check_valid_text(self, body: str, offset: int) -> None:
        """NUL and lone surrogates are refused even inside strings and comments."""
        bad = _INVALID_TEXT.search(body)
        if bad is not None:
            at = offset + bad.start()
            self._report(_encoding_diag(self._text[at], self._span(at, at + 1)))

    def _bad_characters(self, pos: int) -> int:
        """Report a run of characters outside the language as one diagnostic and skip it."""
        while self._text[pos] in " \t":
            pos += 1
        end = pos + 1
        while end < len(self._text) and _TOKEN.match(self._text, end) is None:
            end += 1
        char = self._text[pos]
        span = self._span(pos, end)
        if _INVALID_TEXT.match(char):
            self._report(_encoding_diag(char, span))
        else:
            self._report(_bad_char_diag(char, span))
        return end


def _number_value(text: str) -> int | float | str:
    """The value of a number literal, or a string saying why it is invalid."""
    if not _VALID_NUMBER.match(text):
        return "not a decimal number"
    plain = text.replace("_", "")
    if "." in plain or "e" in plain or "E" in plain:
        return float(plain)
    if len(plain) > 1 and plain[0] == "0" and plain.strip("0"):
        return "leading zeros are not allowed"
    try:
        return int(plain)
    except ValueError:  # more digits than Python converts
        return "too many digits"


def _char_name(char: str) -> str:
    if char.isprintable() and not char.isspace():
        return f"'{char}'"
    return f"U+{ord(char):04X}"


def _encoding_diag(char: str, span: Span) -> Diagnostic:
    what = "NUL character" if char == "\0" else f"lone surrogate {_char_name(char)}"
    return codes.diag(
        "P015",
        f"{what} in source; sources must be valid UTF-8 text",
        span,
        hint="remove the character or re-save the file as UTF-8",
    )


def _bad_char_diag(char: str, span: Span) -> Diagnostic:
    hints = {
        "\\": "Aurane has no backslash continuation; leave a bracket open to continue a line",
        ";": "put each statement on its own line",
        "\u2028": "a line separator is allowed only inside strings and comments",
    }
    hint = hints.get(char, "remove the character or move it into a string or comment")
    return codes.diag("P009", f"character {_char_name(char)} is not allowed here", span, hint=hint)


@dataclass
class _Joiner:
    """Glues physical lines into logical lines: open brackets and leading '->' continue."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines: list[LogicalLine] = field(default_factory=list)
    _current: LogicalLine | None = None
    _stack: list[Token] = field(default_factory=list)
    _open_count: dict[str, int] = field(default_factory=dict)

    def add(self, row: _Physical) -> None:
        if not row.tokens:
            # Blank and comment-only lines never open, close or continue anything, but a
            # lexical error there (a NUL in a comment) is still reported.
            return
        current = self._current
        if current is not None and self._continues(current, row):
            current.tokens.extend(row.tokens)
            current.lexical_error |= row.error
        else:
            self._start(row)
        self._track(row.tokens)

    def _continues(self, current: LogicalLine, row: _Physical) -> bool:
        first = row.tokens[0]
        if self._stack:
            return not (
                row.indent < current.indent
                or (row.indent == current.indent and first.text in _STATEMENT_WORDS)
            )
        if not first.is_op("->"):
            return False
        if row.indent <= current.indent and not row.tab and not row.error:
            self._bad_continuation(current, first)
            current.lexical_error = True
        return True

    def _bad_continuation(self, current: LogicalLine, arrow: Token) -> None:
        start = current.tokens[0].span
        self.diagnostics.append(
            codes.diag(
                "P003",
                f"continuation line is not indented inside its statement: '->' at column "
                f"{arrow.span.column} must be indented deeper than the statement that starts "
                f"at {start}",
                arrow.span,
                hint=f"indent the '->' line to column {start.column + 2} or more",
            )
        )

    def _start(self, row: _Physical) -> None:
        self._stack.clear()
        self._open_count.clear()
        indent = row.indent
        if row.tab:
            indent = self._guess_indent()
        self._current = LogicalLine(indent, list(row.tokens), row.error, row.tab)
        self.lines.append(self._current)

    def _guess_indent(self) -> int:
        """A tab-indented line sits where the previous line implies, so it causes one error."""
        if not self.lines:
            return 0
        previous = self.lines[-1]
        return previous.indent + 4 if previous.tokens[-1].is_op(":") else previous.indent

    def _track(self, tokens: list[Token]) -> None:
        stack, open_count = self._stack, self._open_count
        for token in tokens:
            if token.kind is not Kind.OP:
                continue
            if token.text in _OPENERS:
                stack.append(token)
                open_count[token.text] = open_count.get(token.text, 0) + 1
            elif open_count.get(_CLOSERS.get(token.text, ""), 0):
                # A closer pops back to its opener; a stray closer changes nothing. Counting
                # openers keeps this linear even for deep stacks and many stray closers.
                opener = _CLOSERS[token.text]
                while True:
                    popped = stack.pop()
                    open_count[popped.text] -= 1
                    if popped.text == opener:
                        break

    def finish(self) -> list[LogicalLine]:
        return self.lines
