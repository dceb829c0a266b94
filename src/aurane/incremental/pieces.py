"""Cutting a document into top-level pieces, and what decides where a block ends.

A piece starts at a column-0 line that begins with a letter (a statement); comments and
blank lines stay with the piece above. A block is one piece, or several when the tokenizer
joins their lines (a top-level line with a bracket still open, ``open_at_end``).
"""

from __future__ import annotations

import itertools
import re

from aurane.syntax.tokens import Kind, tokenize

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_STARTS_BLOCK = re.compile(r"[A-Za-z_]")
_BLOCK_START = re.compile(r"^[A-Za-z_]", re.MULTILINE)
_CODE_LINE = re.compile(r"^[ \t\f]*[^ \t\f\r\n#]", re.MULTILINE)

# The words that end a logical line left open by a bracket when they begin a column-0 line
# (the tokenizer's joiner; a test keeps the two sets equal): such a line always starts a
# new top-level item, so a block never needs to continue past it.
ENDS_OPEN_LINE = frozenset(
    {"model", "dataset", "experiment", "train", "train_gan", "use", "def", "return"}
)
# A line's first word decides whether it ends an open line: these many characters show it
# (the longest word and the character after it).
WORD_WINDOW = max(len(word) for word in ENDS_OPEN_LINE) + 1
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def split_lines_keep(text: str) -> list[str]:
    """Physical lines with their endings (\\n, \\r\\n, \\r: the tokenizer's line breaks)."""
    return _LINE.findall(text)


def split_blocks(text: str) -> list[tuple[int, str]]:
    """``(first line, text)`` of each top-level block; the texts concatenate to ``text``."""
    if "\r" in text:
        return _split_blocks_slow(text)
    starts = [m.start() for m in _BLOCK_START.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    blocks: list[tuple[int, str]] = []
    line = 1
    for index, begin in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        blocks.append((line, text[begin:end]))
        line += text.count("\n", begin, end)
    return blocks


def _split_blocks_slow(text: str) -> list[tuple[int, str]]:
    lines = split_lines_keep(text)
    blocks: list[tuple[int, str]] = []
    start = 0
    for number, line in enumerate(lines):
        if number and _STARTS_BLOCK.match(line) is not None:
            blocks.append((start + 1, "".join(lines[start:number])))
            start = number
    if lines or not blocks:
        blocks.append((start + 1, "".join(lines[start:])))
    return blocks


def indented_start(text: str) -> bool:
    """Whether the first line with code is indented (the parser then nests differently)."""
    match = _CODE_LINE.search(text.lstrip("\ufeff"))
    return match is not None and match.group(0)[0] in " \t\f"


def first_word(text: str) -> str:
    match = re.match(r"[^\W\d]\w*", text)  # the tokenizer's name pattern
    return match.group(0) if match else ""


def open_at_end(text: str) -> bool:
    """Whether ``text``'s last logical line is a top-level one with a bracket still open.

    The tokenizer then joins the next column-0 line to it (unless that line begins with one
    of ``ENDS_OPEN_LINE``), so the block continues into the next one. The bracket stack is
    the joiner's: a closer pops back to its opener, a stray closer changes nothing.
    """
    lines = tokenize(text).lines
    if not lines or lines[-1].indent != 0:
        return False  # a deeper line ends where a column-0 line begins
    stack: list[str] = []
    open_count = dict.fromkeys(_OPENERS, 0)  # counts keep stray closers O(1)
    for token in lines[-1].tokens:
        if token.kind is not Kind.OP:
            continue
        if token.text in _OPENERS:
            stack.append(token.text)
            open_count[token.text] += 1
        elif token.text in _CLOSERS and open_count[_CLOSERS[token.text]]:
            while True:
                popped = stack.pop()
                open_count[popped] -= 1
                if popped == _CLOSERS[token.text]:
                    break
    return bool(stack)


class Pieces:
    """``split_blocks`` from ``offset`` (a piece's start, on line ``line``), found lazily:
    an edit needs the pieces up to where the old blocks resume, not all of them."""

    def __init__(self, text: str, offset: int, line: int) -> None:
        self.text = text
        self.starts = [offset]  # the pieces' starts found so far; complete: then len(text)
        self.lines = [line]
        self.complete = bool(text) and offset >= len(text)
        self._found = _BLOCK_START.finditer(text, offset + 1)
        if "\r" in text:  # the line breaks \r and \r\n: split it all, the careful way
            pieces = split_blocks(text)
            self.lines = [first for first, _ in pieces]
            self.starts = list(itertools.accumulate((len(b) for _, b in pieces), initial=0))
            self.complete = True

    def _more(self) -> bool:
        if self.complete:
            return False
        match = next(self._found, None)
        end = len(self.text) if match is None else match.start()
        self.lines.append(self.lines[-1] + self.text.count("\n", self.starts[-1], end))
        self.starts.append(end)
        self.complete = match is None
        return True

    def has(self, k: int) -> bool:
        """Whether piece ``k`` exists (finding the pieces up to its end)."""
        while len(self.starts) <= k + 1 and self._more():
            pass
        return k + 1 < len(self.starts)

    def start(self, k: int) -> int:
        return self.starts[k]

    def line(self, k: int) -> int:
        return self.lines[k]

    def body(self, first: int, stop: int) -> str:
        """The text of pieces ``first`` up to, not including, ``stop`` (all found)."""
        return self.text[self.starts[first] : self.starts[stop]]

    def ends_open_line(self, k: int) -> bool:
        begin = self.starts[k]
        return first_word(self.text[begin : begin + WORD_WINDOW]) in ENDS_OPEN_LINE


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (compared in chunks, then narrowed)."""
    limit = min(len(a), len(b))
    step = 4096
    at = 0
    while at < limit and a[at : at + step] == b[at : at + step]:
        at += step
    if at >= limit:
        return limit
    low, high = at, min(at + step, limit)
    while low < high:  # a[:low] == b[:low]; a[:high + 1] != b[:high + 1]
        middle = (low + high + 1) // 2
        if a[at:middle] == b[at:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix, at most ``limit``."""
    size = 0
    step = 4096
    while size < limit:
        take = min(step, limit - size)
        if a[len(a) - size - take : len(a) - size] != b[len(b) - size - take : len(b) - size]:
            low, high = size, size + take - 1
            while low < high:
                middle = (low + high + 1) // 2
                if a[len(a) - middle : len(a) - size] == b[len(b) - middle : len(b) - size]:
                    low = middle
                else:
                    high = middle - 1
            return low
        size += take
    return limit
