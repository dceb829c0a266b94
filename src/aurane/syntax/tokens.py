"""The tokenizer: source text to logical lines of tokens, plus comments and lexical diagnostics.

Strings close on their own physical line, so each physical line is scanned on its own; the
joiner (`_Joiner`) glues physical lines into logical lines while a bracket is open or when a
line starts with ``->``. Indentation is measured per logical line; the parser builds blocks
from it. Nothing here raises on any input.

Speed: an ordinary line (space indentation, no backslash, NUL or surrogate, valid names and
numbers, closed strings) is cut by one ``findall`` (`_FastScanner`); any other line goes to
the careful scanner (`_LineScanner`), which makes the same tokens and all lexical diagnostics.
"""

from __future__ import annotations

import math
import re
from enum import Enum
from typing import NamedTuple

from aurane import codes
from aurane.diagnostics import Diagnostic
from aurane.records import field, record
from aurane.source import Span, split_lines
from aurane.syntax.ast import Comment
from aurane.syntax.gc_pause import paused_gc

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_IDENTIFIER = 256
# Every number is a finite float64 or an integer no larger (docs/limits.md): ``inf`` is no
# Python literal (generated code would read it as a name), and an integer past this is
# infinite wherever torch takes it as a float (``lr``, ``eps``, ``gamma``).
MAX_NUMBER = 1.7976931348623157e308


class Kind(Enum):
    NAME = "name"
    NUMBER = "number"
    STRING = "string"
    OP = "op"


class Token(NamedTuple):
    """One token; it never spans lines, so a line and two columns (1-based) locate it."""

    kind: Kind
    text: str  # as written (for strings: including the quotes)
    value: str | int | float | None  # decoded string or number; None for names and operators
    line: int
    column: int
    end_column: int  # exclusive

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.line, self.end_column)

    def is_op(self, text: str) -> bool:
        return self.kind is Kind.OP and self.text == text


@record(slots=True)
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
        last = self.tokens[-1]
        return Span(last.line, last.end_column, last.line, last.end_column + 1)


@record(frozen=True, slots=True)
class Tokenized:
    lines: tuple[LogicalLine, ...]
    comments: tuple[Comment, ...]
    diagnostics: tuple[Diagnostic, ...]
    line_count: int


_NEW = tuple.__new__
_OP, _NAME, _NUMBER, _STRING = Kind.OP, Kind.NAME, Kind.NUMBER, Kind.STRING
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_BRACKETS = frozenset("()[]{}")
_NAME_PATTERN = r"[^\W\d]\w*"
_NUMBER_PATTERN = r"(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?[\d_]*)?\w*"
_OP_PATTERN = r"->|//|\*\*|<=|>=|==|!=|[-+*/%()\[\]{},:=.<>]"
# Leading blanks are part of each match: one regex call per token, not two.
_TOKEN = re.compile(
    r"[ \t]*(?:"
    rf"(?P<name>{_NAME_PATTERN})"
    rf"|(?P<number>{_NUMBER_PATTERN})"
    rf"|(?P<op>{_OP_PATTERN})"
    r"|(?P<string>['\"])"
    r"|(?P<comment>\#)"
    r"|(?P<end>\Z))"
)
# The fast path: the same alternatives in the same order, each with its leading blanks (and
# trailing blanks alone), strings only when closed (backslashes never reach it). A gap
# between pieces sends the line to the careful scanner.
_PIECES = re.compile(
    rf"[ \t]*(?:{_NAME_PATTERN}|{_NUMBER_PATTERN}|{_OP_PATTERN}|'[^']*'|\"[^\"]*\"|\#.*)|[ \t]+"
)
_VALID_NUMBER = re.compile(
    r"(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?\Z"
)
# Patterns of rare paths stay strings: re compiles (and caches) them on first use, not at
# every start (issue 14).
_ESCAPE = r"(?s)\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)"
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
# Keywords that start a statement: a line beginning with one at or left of the statement's
# indentation ends an unclosed bracket early, so one missing ')' does not swallow the file.
_STATEMENT_WORDS = frozenset(
    {"model", "dataset", "experiment", "train", "train_gan", "use", "def", "return"}
)


def tokenize(text: str) -> Tokenized:
    """Split ``text`` into logical lines of tokens. A leading BOM is ignored."""
    with paused_gc():  # tokens are many small acyclic objects
        return _tokenize(text)


def _tokenize(text: str) -> Tokenized:
    if text.startswith("\ufeff"):
        text = text[1:]
    physical = split_lines(text)
    scanner = _LineScanner()
    joiner = _Joiner()
    fast, add = _FastScanner(scanner.comments), joiner.add
    for number, line in enumerate(physical, start=1):
        careful = "\\" in line or _first_invalid(line) is not None  # escapes, invalid text
        row = None if careful else fast.scan(number, line)
        add(scanner.scan(number, line) if row is None else row)
    diagnostics = (*scanner.diagnostics, *joiner.diagnostics)
    return Tokenized(tuple(joiner.lines), tuple(scanner.comments), diagnostics, len(physical))


def _first_invalid(text: str) -> int | None:
    """Where ``text`` has a NUL or a lone surrogate (text the language refuses), or None."""
    if "\x00" not in text:
        if text.isascii():
            return None
        try:
            text.encode("utf-8")  # strict UTF-8 refuses exactly the surrogates
            return None
        except UnicodeEncodeError:
            pass
    return next(
        at for at, char in enumerate(text) if char == "\x00" or "\ud800" <= char <= "\udfff"
    )


class _Physical(NamedTuple):
    number: int
    indent: int
    tab: bool
    tokens: list[Token]
    error: bool
    brackets: list[str]  # the bracket tokens' texts, in order


_Piece = tuple[Kind | None, str, str | int | float | None, int, bool]


class _FastScanner:
    """Ordinary lines, cut by one ``findall``; each distinct piece is classified once."""

    def __init__(self, comments: list[Comment]) -> None:
        self.comments = comments
        # piece (a token with its leading blanks) -> kind (None: blanks only), text, value,
        # number of leading blanks, is a bracket; for this source only
        self.pieces: dict[str, _Piece] = {}

    def scan(self, number: int, text: str) -> _Physical | None:
        """The tokens of an ordinary line, or None when the careful scanner must look at it."""
        stripped = text.lstrip(" ")
        indent = len(text) - len(stripped)
        if stripped[:1] == "\t":
            return None  # tab indentation is an error
        tokens: list[Token] = []
        brackets: list[str] = []
        append, new, known = tokens.append, _NEW, self.pieces.get
        column = indent + 1
        for piece in _PIECES.findall(text, indent):
            entry = known(piece)
            if entry is None:
                body = piece.lstrip(" \t")
                if body[:1] == "#":
                    end = column + len(piece)
                    span = Span(number, end - len(body), number, end)
                    self.comments.append(Comment(body, span, not tokens))
                    column = end
                    continue
                entry = self._learn(piece, body)
                if entry is None:
                    return None
            kind, token_text, value, lead, bracket = entry
            end = column + len(piece)
            if kind is not None:
                append(new(Token, (kind, token_text, value, number, column + lead, end)))
                if bracket:
                    brackets.append(token_text)
            column = end
        if column != len(text) + 1:  # a gap: characters no token matches
            if self.comments and self.comments[-1].span.line == number:
                self.comments.pop()  # the careful scanner records it again
            return None
        return _NEW(_Physical, (number, indent, False, tokens, False, brackets))

    def _learn(self, piece: str, body: str) -> _Piece | None:
        """Classify a piece not seen before (as ``_TOKEN`` does); None: the careful scanner."""
        group = match.lastgroup if (match := _TOKEN.match(body)) else None
        value: str | int | float | None = None
        kind: Kind | None = None  # "end": trailing blanks
        if group == "name":
            if len(body) > MAX_IDENTIFIER:
                return None
            kind = _NAME
        elif group == "op":
            kind = _OP
        elif group == "string":
            kind, value = _STRING, body[1:-1]
        elif group == "number":
            number = _number_value(body)
            if isinstance(number, str):
                return None  # invalid: the careful scanner reports it
            kind, value = _NUMBER, number
        elif group != "end":
            return None
        entry = (kind, body, value, len(piece) - len(body), body in _BRACKETS)
        self.pieces[piece] = entry
        return entry


@record
class _LineScanner:
    """The careful scanner: every line the fast path declines, with all lexical diagnostics."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)

    def scan(self, number: int, text: str) -> _Physical:
        self._line, self._text, self._error = number, text, False
        indent, tab = self._indentation()
        tokens: list[Token] = []
        pos = indent
        while pos < len(text):
            pos = self._next(pos, tokens)
        brackets = [t.text for t in tokens if t.kind is _OP and t.text in _BRACKETS]
        return _Physical(number, indent, tab, tokens, self._error, brackets)

    def _report(self, diag: Diagnostic) -> None:
        self._error = True
        self.diagnostics.append(diag)

    def _span(self, start: int, end: int) -> Span:
        return Span(self._line, start + 1, self._line, end + 1)

    def _token(self, kind: Kind, text: str, value: str | int | float | None, start: int) -> Token:
        return Token(kind, text, value, self._line, start + 1, start + len(text) + 1)

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
            tokens.append(self._token(_OP, match.group(kind), None, start))
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
        return self._token(_NAME, text, None, start)

    def _number(self, start: int, end: int) -> Token:
        text = self._text[start:end]
        value = _number_value(text)
        if isinstance(value, str):
            self._report(
                codes.diag(
                    "P008",
                    f"invalid number literal '{text}': {value}",
                    self._span(start, end),
                    hint="write a decimal number such as 42, 0.5, 1e-4 or 1_000",
                )
            )
            value = 0
        return self._token(_NUMBER, text, value, start)

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
        return self._token(_STRING, text[start:end], value, start), end

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

        return re.sub(_ESCAPE, replace, body) if "\\" in body else body

    def _comment(self, start: int, *, own_line: bool) -> None:
        body = self._text[start:]
        self._check_valid_text(body, start)
        span = self._span(start, len(self._text))
        self.comments.append(Comment(body, span, own_line))

    def _check_valid_text(self, body: str, offset: int) -> None:
        """NUL and lone surrogates are refused even inside strings and comments."""
        bad = _first_invalid(body)
        if bad is not None:
            at = offset + bad
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
        if _first_invalid(char) is not None:
            self._report(_encoding_diag(char, span))
        else:
            self._report(_bad_char_diag(char, span))
        return end


class Amount(int):
    """A number with a unit suffix (``25M``, ``4.1G``, ``2GiB``), valid only in a budget line.

    ``text`` is the spelling; the value is the whole count (``25M`` is 25_000_000, ``2GiB``
    is 2 * 2**30). The expression parser refuses it anywhere else (P008).
    """

    text: str

    def __new__(cls, value: int, text: str) -> Amount:
        obj = super().__new__(cls, value)
        obj.text = text
        return obj


_AMOUNT = r"(\d(?:_?\d)*(?:\.\d(?:_?\d)*)?)(K|M|G|T|Ki|Mi|Gi|Ti)?(B?)\Z"
_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_UNITS.update({"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40})


def amount_value(text: str) -> Amount | None:
    """``25M`` -> 25_000_000, ``2GiB`` -> 2 * 2**30, ``512B``; None when not an amount."""
    found = _amount(text)
    return found if isinstance(found, Amount) else None


# The resolver holds computed values to the same range (semantics/constants.py).
_TOO_LARGE = "too large: numbers must be finite, at most about 1.8e308"


def _amount(text: str) -> Amount | str | None:
    """An amount, a string saying why it is invalid, or None when ``text`` is no amount."""
    match = re.match(_AMOUNT, text)
    if match is None or not (match.group(2) or match.group(3)):
        return None
    number = float(match.group(1).replace("_", "")) * _UNITS[match.group(2) or ""]
    if not math.isfinite(number) or number > MAX_NUMBER:
        return _TOO_LARGE
    return Amount(round(number), text)


def _number_value(text: str) -> int | float | str:
    """The value of a number literal, or a string saying why it is invalid."""
    if not _VALID_NUMBER.match(text):
        return _amount(text) or "not a decimal number"
    plain = text.replace("_", "")
    if "." in plain or "e" in plain or "E" in plain:
        value = float(plain)
        return value if math.isfinite(value) else _TOO_LARGE
    if len(plain) > 1 and plain[0] == "0" and plain.strip("0"):
        return "leading zeros are not allowed"
    try:
        value = int(plain)
    except ValueError:  # more digits than Python converts
        return "too many digits"
    return value if value <= MAX_NUMBER else _TOO_LARGE


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


@record
class _Joiner:
    """Glues physical lines into logical lines: open brackets and leading '->' continue."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines: list[LogicalLine] = field(default_factory=list)
    _current: LogicalLine | None = None
    _stack: list[str] = field(default_factory=list)  # the open brackets' texts
    _open_count: dict[str, int] = field(default_factory=dict)

    def add(self, row: _Physical) -> None:
        if not row.tokens:
            # Blank and comment-only lines never open, close or continue anything, but a
            # lexical error there (a NUL in a comment) is still reported.
            return
        current = self._current
        continues = self._stack or row.tokens[0].text == "->"  # cheap test first
        if current is not None and continues and self._continues(current, row):
            current.tokens.extend(row.tokens)
            current.lexical_error |= row.error
        else:
            self._start(row)
        if row.brackets:
            self._track(row.brackets)

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
                f"{arrow.column} must be indented deeper than the statement that starts "
                f"at {start}",
                arrow.span,
                hint=f"indent the '->' line to column {start.column + 2} or more",
            )
        )

    def _start(self, row: _Physical) -> None:
        if self._stack:
            self._stack.clear()
            self._open_count.clear()
        indent = row.indent
        if row.tab:
            indent = self._guess_indent()
        self._current = LogicalLine(indent, row.tokens, row.error, row.tab)
        self.lines.append(self._current)

    def _guess_indent(self) -> int:
        """A tab-indented line sits where the previous line implies, so it causes one error."""
        if not self.lines:
            return 0
        previous = self.lines[-1]
        return previous.indent + 4 if previous.tokens[-1].is_op(":") else previous.indent

    def _track(self, brackets: list[str]) -> None:
        stack, open_count = self._stack, self._open_count
        for text in brackets:
            if text in _OPENERS:
                stack.append(text)
                open_count[text] = open_count.get(text, 0) + 1
            elif open_count.get(_CLOSERS[text], 0):
                # A closer pops back to its opener; a stray closer changes nothing. Counting
                # openers keeps this linear even for deep stacks and many stray closers.
                opener = _CLOSERS[text]
                while True:
                    popped = stack.pop()
                    open_count[popped] -= 1
                    if popped == opener:
                        break
