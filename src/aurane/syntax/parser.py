"""Recursive-descent parser: source text to an ``AuraneProgram`` plus parse diagnostics.

Each logical line is parsed on its own; its first error abandons that line (``ParseAbort``)
and parsing resumes at the next line or block, so independent mistakes are all reported while
one mistake gives one diagnostic. Block structure lives in ``blocks``, expressions in ``exprs``.
"""

from __future__ import annotations

from typing import NoReturn

from aurane import codes
from aurane.diagnostics import Diagnostic, sorted_unique
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.blocks import BlockParser, Item
from aurane.syntax.gc_pause import paused_gc
from aurane.syntax.tokens import MAX_FILE_BYTES, Kind, LogicalLine, Token, tokenize

__all__ = ["MAX_DIAGNOSTICS", "parse_program"]

MAX_DIAGNOSTICS = 100
TOP_LEVEL_WORDS = ("use", "experiment", "dataset", "model", "train", "train_gan")
_TOP_LEVEL_HINT = (
    "top-level statements are use, name = value, experiment, dataset, model, train and train_gan"
)


def parse_program(
    text: str, filename: str | None = None
) -> tuple[ast.AuraneProgram | None, list[Diagnostic]]:
    """Parse ``text``; never raises. Returns the (possibly partial) program and diagnostics.

    When the diagnostics hold errors the program is a best effort; callers stop there.
    """
    too_big = _size_error(text)
    if too_big is not None:
        return None, [too_big]
    with paused_gc():  # parsing allocates many small acyclic objects
        return _parse(text, filename)


def _parse(text: str, filename: str | None) -> tuple[ast.AuraneProgram, list[Diagnostic]]:
    tokenized = tokenize(text)
    parser = _Parser(list(tokenized.lines))
    statements = parser.program()
    diagnostics = sorted_unique([*tokenized.diagnostics, *parser.diagnostics])
    span = _program_span(text, tokenized.line_count)
    program = ast.AuraneProgram(tuple(statements), tokenized.comments, filename, span)
    return program, _capped(diagnostics)


def _size_error(text: str) -> Diagnostic | None:
    if len(text) * 4 <= MAX_FILE_BYTES:  # cheap bound: a character is at most four bytes
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_FILE_BYTES:
        return None
    return codes.diag(
        "P011",
        f"file is {size} bytes; the limit is {MAX_FILE_BYTES} bytes (1 MiB)",
        Span(1, 1, 1, 2),
        hint="split the program into smaller files",
    )


def _program_span(text: str, line_count: int) -> Span:
    """From the start to the end of the last line (``split_lines``'s last one, BOM dropped)."""
    last_start = max(text.rfind("\n"), text.rfind("\r")) + 1
    if last_start == 0 and text.startswith("\ufeff"):
        last_start = 1
    return Span(1, 1, line_count, len(text) - last_start + 1)


def _capped(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Keep the first errors; a flood of them helps no one and costs time downstream."""
    if len(diagnostics) <= MAX_DIAGNOSTICS:
        return diagnostics
    note = codes.diag(
        "P011",
        f"too many syntax errors; stopped after {MAX_DIAGNOSTICS} of {len(diagnostics)}",
        diagnostics[MAX_DIAGNOSTICS - 1].span,
        hint="fix the first errors and parse again",
    )
    return [*diagnostics[:MAX_DIAGNOSTICS], note]


class _Parser(BlockParser):
    def __init__(self, lines: list[LogicalLine]) -> None:
        super().__init__()
        self.lines = lines

    def program(self) -> list[ast.Statement]:
        return self.each(self.level_items(self.lines, 0), self._top_level)

    def _top_level(self, item: Item) -> ast.Statement:
        self.start(item.line)
        first = self.tokens[0]
        second = self.peek(1)
        if first.kind is Kind.NAME and second is not None and second.is_op("="):
            return self.assignment(first, ast.Constant)
        match first.text if first.kind is Kind.NAME else None:
            case "use":
                return self._use()
            case "experiment" | "dataset" | "model" | "train" | "train_gan":
                return self.block_statement(item, first.text)
        self._unknown_statement(first)

    def _unknown_statement(self, first: Token) -> NoReturn:
        if first.kind is not Kind.NAME:
            self.fail(
                "P006",
                f"expected a statement, found {self.describe(first)}",
                first.span,
                hint=_TOP_LEVEL_HINT,
            )
        if first.text == "def":
            self.fail(
                "P007",
                "'def' is only allowed inside a model block",
                first.span,
                hint="put 'def forward(x):' inside a 'model Name:' block",
            )
        if self.at_name() and (after := self.peek(1)) is not None and after.is_op("->"):
            self.fail(
                "P007",
                f"unknown statement '{first.text} ->': chains belong in a model's forward body",
                first.span,
                hint="put the chain inside 'def forward(x):' of a model",
            )
        import difflib  # an error path: kept off the start-up of `aurane check`

        close = difflib.get_close_matches(first.text, TOP_LEVEL_WORDS, n=1)
        hint = f"did you mean '{close[0]}'?" if close else _TOP_LEVEL_HINT
        self.fail("P007", f"unknown statement '{first.text}'", first.span, hint=hint)

    def _use(self) -> ast.Use:
        keyword = self.advance()
        self.expect_name("a module name after 'use'")
        self.pos -= 1
        module, module_span = self.dotted()
        alias: str | None = None
        alias_span: Span | None = None
        if self.at_name("as"):
            self.advance()
            alias_token = self.expect_name("an alias name after 'as'")
            alias, alias_span = alias_token.text, alias_token.span
        self.end_of_statement("use statement")
        return ast.Use(module, module_span, alias, alias_span, self.span_from(keyword.span))
