"""Layer names after ``as``: dotted parts, numbers, template holes, quoted parts and ``*``.

``as conv1``, ``as layer1.0.conv1``; ``as denselayer{i + 1}`` and ``as layer{i + 1}.{j}``
(holes: constant expressions, filled when loops are unrolled); ``as block1."block1-0"``
(a quoted part: any name of letters, digits, ``_`` and ``-`` that PyTorch's ``add_module``
takes, holes allowed inside: ``"block{i}-{j}"``); ``as features.*`` (the next index of a
numbered container, decided when the model is lowered).

The parsed name is kept as text with each hole shown as ``{}`` and quoted parts quoted
(``layer{}."block{}-0".*``), plus the hole expressions in order. Pieces of one part must
touch (``denselayer{i}``, not ``denselayer {i}``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NoReturn

from aurane.diagnostics import Diagnostic
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.tokens import Kind, LogicalLine, Token, tokenize

if TYPE_CHECKING:
    from collections.abc import Callable

# characters of a quoted part outside its holes: what a state-dict key segment needs, and
# nothing a generated Python string literal would have to escape
QUOTED_PART = re.compile(r"[A-Za-z0-9_\-]+\Z")
STAR = "*"


def _touching(before: Token, after: Token) -> bool:
    return before.line == after.line and before.end_column == after.column


class LayerNames:
    """The ``as NAME`` grammar; mixed into the expression parser (``exprs.ExprParser``)."""

    # provided by the expression parser
    _toks: list[Token]
    pos: int
    diagnostics: list[Diagnostic]
    quiet: bool
    expr: Callable[[], ast.Expr]
    expect_op: Callable[[str, str], Token]
    here: Callable[[], Span]
    describe: Callable[[Token | None], str]
    start: Callable[[LogicalLine], None]

    def fail(self, code: str, message: str, span: Span, hint: str | None = None) -> NoReturn:
        raise NotImplementedError

    def sub_parser(self) -> LayerNames:
        """A fresh expression parser (for the holes inside a quoted part)."""
        raise NotImplementedError

    def layer_name(self) -> tuple[str, tuple[ast.Expr, ...], Span]:
        """The name after 'as' (the cursor is on its first token): text, holes, span."""
        toks = self._toks
        first = toks[self.pos]
        holes: list[ast.Expr] = []
        parts = [self._layer_part(holes, first_part=True)]
        while True:
            token = toks[self.pos]
            following = toks[self.pos + 1] if self.pos + 1 < len(toks) else token
            if token.text == "." and token.kind is Kind.OP and following is not token:
                if following.text in ("{", STAR) or following.kind in (Kind.NAME, Kind.STRING):
                    self.pos += 1
                    parts.append(self._layer_part(holes, first_part=False))
                    continue
                break
            if token.kind is Kind.NUMBER and token.text[:1] == "." and token.text[1:].isdigit():
                parts.append(token.text[1:])  # ``layer2.0`` lexes as layer2, .0
                self.pos += 1
                continue
            break
        last = toks[self.pos - 1]
        span = Span(first.line, first.column, last.line, last.end_column)
        for part in parts[:-1]:
            if part == STAR:
                self.fail(
                    "P006",
                    "'*' (the next index of a numbered container) must be the last part",
                    span,
                    hint="write 'as features.*', then name deeper layers inside a block",
                )
        return ".".join(parts), tuple(holes), span

    def _layer_part(self, holes: list[ast.Expr], *, first_part: bool) -> str:
        toks = self._toks
        token = toks[self.pos]
        if token.kind is Kind.OP and token.text == STAR:
            if first_part:
                self.fail(
                    "P006",
                    "'*' appends to a container: write 'as NAME.*'",
                    token.span,
                    hint="e.g. x -> conv2d(64, kernel=3) as features.*",
                )
            self.pos += 1
            return STAR
        if token.kind is Kind.STRING:
            self.pos += 1
            return self._quoted(token, holes)
        if not (token.kind is Kind.NAME or token.text == "{"):
            what = "a layer name after 'as'" if first_part else "a layer name part after '.'"
            self.fail("P006", f"expected {what}, found {self.describe(token)}", self.here())
        text = ""
        previous: Token | None = None
        while True:
            token = toks[self.pos]
            if previous is not None and not _touching(previous, token):
                break
            if token.kind is Kind.NAME or (
                previous is not None and token.kind is Kind.NUMBER and token.text[:1].isdigit()
            ):
                text += token.text
                self.pos += 1
            elif token.kind is Kind.OP and token.text == "{":
                holes.append(self._hole(token))
                text += "{}"
            elif not first_part and self._hyphenated(token):
                # a container key such as torchvision RegNet's ``block1-0``, unquoted
                text += "-" + toks[self.pos + 1].text
                self.pos += 2
            else:
                break
            previous = toks[self.pos - 1]
        return text

    def _hyphenated(self, token: Token) -> bool:
        """``-`` joining two pieces of a part with no space on either side, a word or digits
        after it (``block1-0``); ``a - 0`` and ``a -> b`` are not names. Digits followed by
        a dot (``block1-0.proj``) lex as one malformed number, so an unquoted hyphenated
        part ends the name unless a word follows the hyphen (quote it: ``"block1-0".proj``)."""
        toks = self._toks
        if token.kind is not Kind.OP or token.text != "-" or self.pos + 1 >= len(toks):
            return False
        after = toks[self.pos + 1]
        return (
            (after.kind is Kind.NAME or (after.kind is Kind.NUMBER and after.text.isdigit()))
            and _touching(token, after)
            and after.text[:1].isalnum()
        )

    def _hole(self, opener: Token) -> ast.Expr:
        """``{expr}`` in a name, at its '{'."""
        self.pos += 1
        if self._toks[self.pos].text == "}":
            self.fail("P006", "empty '{}' in a layer name", opener.span, hint="write {i + 1}")
        value = self.expr()
        self.expect_op("}", "to close the '{' of the layer name")
        return value

    def _quoted(self, token: Token, holes: list[ast.Expr]) -> str:
        """A quoted part, its holes parsed from the string's text."""
        body = token.text[1:-1]
        quote = token.text[0]
        if token.text[-1:] != quote or len(token.text) < 2 or "\\" in body:
            self.fail("P006", "a quoted layer name part cannot hold escapes", token.span)
        pieces = re.split(r"(\{[^{}]*\})", body)
        shown: list[str] = []
        offset = token.column + 1  # the column of the body's first character
        for piece in pieces:
            if piece.startswith("{") and piece.endswith("}"):
                holes.append(self._string_hole(piece[1:-1], token.line, offset + 1, token))
                shown.append("{}")
            elif piece:
                if not QUOTED_PART.match(piece):
                    span = Span(token.line, offset, token.line, offset + len(piece))
                    self.fail(
                        "S045",
                        f"invalid layer name part {token.text}: a quoted part holds letters, "
                        "digits, '_' and '-' (and {holes})",
                        span,
                        hint='torchvision\'s names look like "block1-0"',
                    )
                shown.append(piece)
            offset += len(piece)
        if not shown:
            self.fail("S045", "a quoted layer name part cannot be empty", token.span)
        return quote + "".join(shown) + quote

    def _string_hole(self, text: str, line: int, column: int, token: Token) -> ast.Expr:
        """The expression of a hole inside a quoted part; its tokens keep their columns."""
        if not text.strip():
            self.fail("P006", "empty '{}' in a layer name", token.span, hint="write {i + 1}")
        found = tokenize(text)
        shifted = [
            t._replace(
                line=line, column=t.column + column - 1, end_column=t.end_column + column - 1
            )
            for logical in found.lines
            for t in logical.tokens
        ]
        if found.diagnostics or len(found.lines) != 1:
            self.fail("P006", f"invalid expression in the layer name {token.text}", token.span)
        inner = self.sub_parser()
        inner.start(LogicalLine(0, shifted))
        try:
            value = inner.expr()
            if inner.pos != len(shifted):
                inner.fail(
                    "P006",
                    f"unexpected {inner.describe(shifted[inner.pos])} in a layer name hole",
                    shifted[inner.pos].span,
                )
        finally:
            if not self.quiet:
                self.diagnostics.extend(inner.diagnostics)
        return value


def layer_parts(text: str) -> list[str]:
    """The parts of a layer path as written (quotes kept), split at the dots between them."""
    parts: list[str] = []
    current = ""
    quote = ""
    for char in text:
        if quote:
            current += char
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
            current += char
        elif char == ".":
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts
