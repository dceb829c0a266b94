"""Expression parsing over one logical line: values, calls, suffixes, arithmetic and chains.

The nesting limit is enforced twice, both before any recursion can grow: open brackets,
unary operators and ``**`` exponents count as they are entered (the recursion guard), and the
height of every built node is recorded so that long flat operator chains such as
``1 + 1 + ... + 1`` cannot build a tree deeper than later passes can walk.
"""

from __future__ import annotations

from typing import NoReturn

from aurane import codes
from aurane.diagnostics import Diagnostic
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.tokens import MAX_DEPTH, Kind, LogicalLine, Token

_BINARY = {"+": 0, "-": 0, "*": 1, "/": 1, "//": 1, "%": 1}
_TRUE = frozenset({"true", "True"})
_FALSE = frozenset({"false", "False"})
_NONE = frozenset({"None", "none", "null"})
_CLOSER_NAMES = {")": "')'", "]": "']'"}


class ParseAbort(Exception):
    """Abandons the current logical line after its first error (the parser resynchronises)."""


class ExprParser:
    """A cursor over one logical line's tokens with the expression grammar."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.tokens: list[Token] = []
        self.pos = 0
        self.quiet = False
        self.line: LogicalLine | None = None
        self._depth = 0
        self._heights: dict[int, int] = {}

    # ------------------------------------------------------------ cursor

    def start(self, line: LogicalLine) -> None:
        self.line, self.tokens, self.pos = line, line.tokens, 0
        self.quiet = line.lexical_error
        self._depth = 0
        self._heights.clear()

    def peek(self, offset: int = 0) -> Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def at_op(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token.is_op(text)

    def at_name(self, text: str | None = None) -> bool:
        token = self.peek()
        return token is not None and token.kind is Kind.NAME and text in (None, token.text)

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    @property
    def previous(self) -> Token:
        return self.tokens[self.pos - 1]

    def span_from(self, start: Span) -> Span:
        end = self.previous.span
        return Span(start.line, start.column, end.end_line, end.end_column)

    def here(self) -> Span:
        token = self.peek()
        if token is not None:
            return token.span
        assert self.line is not None
        return self.line.end

    @staticmethod
    def describe(token: Token | None) -> str:
        if token is None:
            return "the end of the line"
        if token.kind is Kind.STRING:
            return "a string"
        return f"'{token.text}'"

    def report(self, diag: Diagnostic) -> None:
        if not self.quiet:
            self.diagnostics.append(diag)

    def fail(self, code: str, message: str, span: Span, hint: str | None = None) -> NoReturn:
        self.report(codes.diag(code, message, span, hint=hint))
        raise ParseAbort

    def expect_name(self, what: str) -> Token:
        token = self.peek()
        if token is None or token.kind is not Kind.NAME:
            self.fail("P006", f"expected {what}, found {self.describe(token)}", self.here())
        return self.advance()

    def expect_op(self, text: str, context: str) -> Token:
        if not self.at_op(text):
            token = self.peek()
            self.fail(
                "P006", f"expected '{text}' {context}, found {self.describe(token)}", self.here()
            )
        return self.advance()

    # ------------------------------------------------------------ limits

    def _enter(self, token: Token) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._too_deep(token.span)

    def _too_deep(self, span: Span) -> NoReturn:
        self.fail(
            "P011",
            f"expression nested more than {MAX_DEPTH} levels deep",
            span,
            hint="simplify the expression or split it into named constants",
        )

    def _height(self, expr: ast.Expr) -> int:
        return self._heights.get(id(expr), 1)

    def _built(self, node: ast.Expr, children: list[ast.Expr], at: Span) -> ast.Expr:
        height = 1 + max((self._height(child) for child in children), default=0)
        if height > MAX_DEPTH + 1:
            self._too_deep(at)
        self._heights[id(node)] = height
        return node

    # ------------------------------------------------------------ expressions

    def value(self) -> ast.Expr:
        """An expression, optionally continued as a chain ``source -> step -> step``."""
        start = self.here()
        source = self.expr()
        if not self.at_op("->"):
            return source
        steps: list[ast.Call] = []
        while self.at_op("->"):
            self.advance()
            steps.append(self.step())
        chain = ast.Chain(source, tuple(steps), self.span_from(start))
        return self._built(chain, [source, *steps], start)

    def step(self) -> ast.Call:
        token = self.peek()
        if token is None or token.kind is not Kind.NAME:
            self.fail(
                "P006",
                f"expected an operation after '->', found {self.describe(token)}",
                self.here(),
                hint="write an operation such as dense(8) after '->'",
            )
        func, func_span = self.dotted()
        if self.at_op("("):
            return self.call(func, func_span)
        suffixes = self.suffixes()
        call = ast.Call(func, func_span, (), (), suffixes, self.span_from(func_span))
        self._built(call, [e for s in suffixes for e in _suffix_values(s)], func_span)
        return call

    def expr(self, min_prec: int = 0) -> ast.Expr:
        start = self.here()
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token.kind is not Kind.OP:
                return left
            prec = _BINARY.get(token.text)
            if prec is None or prec < min_prec:
                return left
            self.advance()
            right = self.expr(prec + 1)
            node = ast.BinOp(token.text, left, right, self.span_from(start))
            left = self._built(node, [left, right], token.span)

    def unary(self) -> ast.Expr:
        operators: list[Token] = []
        while self.at_op("-") or self.at_op("+"):
            operators.append(self.advance())
            self._enter(operators[-1])
        operand = self.power()
        for token in reversed(operators):
            node = ast.UnaryOp(token.text, operand, self.span_from(token.span))
            operand = self._built(node, [operand], token.span)
        self._depth -= len(operators)
        return operand

    def power(self) -> ast.Expr:
        start = self.here()
        base = self.primary()
        if not self.at_op("**"):
            return base
        operator = self.advance()
        self._enter(operator)
        exponent = self.unary()
        self._depth -= 1
        node = ast.BinOp("**", base, exponent, self.span_from(start))
        return self._built(node, [base, exponent], operator.span)

    def primary(self) -> ast.Expr:
        token = self.peek()
        if token is None:
            self.fail("P006", "expected a value, found the end of the line", self.here())
        match token.kind:
            case Kind.NUMBER:
                self.advance()
                assert isinstance(token.value, (int, float))
                return ast.Number(token.value, token.text, token.span)
            case Kind.STRING:
                self.advance()
                return ast.String(str(token.value), token.span)
            case Kind.NAME:
                return self.name_or_call()
        match token.text:
            case "(":
                return self.parenthesized()
            case "[":
                items, _ = self.sequence("]", "list")
                node = ast.ListExpr(tuple(items), self.span_from(token.span))
                return self._built(node, items, token.span)
            case "{":
                self.fail(
                    "P006",
                    "'{' is not supported: Aurane has no dict literals",
                    token.span,
                    hint="use a call with keyword arguments, e.g. f(a=1)",
                )
        self.fail("P006", f"expected a value, found {self.describe(token)}", token.span)

    def name_or_call(self) -> ast.Expr:
        token = self.peek()
        assert token is not None
        if token.text in _TRUE or token.text in _FALSE:
            self.advance()
            return ast.Bool(token.text in _TRUE, token.span)
        if token.text in _NONE:
            self.advance()
            return ast.NoneLit(token.span)
        name, span = self.dotted()
        if self.at_op("("):
            return self.call(name, span)
        return ast.Name(name, span)

    def dotted(self) -> tuple[str, Span]:
        first = self.advance()
        parts = [first.text]
        while self.at_op(".") and (after := self.peek(1)) is not None and after.kind is Kind.NAME:
            self.advance()
            parts.append(self.advance().text)
        return ".".join(parts), self.span_from(first.span)

    def call(self, func: str, func_span: Span) -> ast.Call:
        args, keywords = self.arguments(f"'{func}'")
        suffixes = self.suffixes()
        node = ast.Call(func, func_span, args, keywords, suffixes, self.span_from(func_span))
        children = [*args, *(k.value for k in keywords)]
        children += [e for s in suffixes for e in _suffix_values(s)]
        self._built(node, children, func_span)
        return node

    def suffixes(self) -> tuple[ast.Suffix, ...]:
        found: list[ast.Suffix] = []
        while self.at_op("."):
            dot = self.advance()
            name = self.expect_name("a suffix name after '.' (such as .relu)")
            args: tuple[ast.Expr, ...] = ()
            keywords: tuple[ast.Keyword, ...] = ()
            has_parens = self.at_op("(")
            if has_parens:
                args, keywords = self.arguments(f"'.{name.text}'")
            span = self.span_from(dot.span)
            found.append(ast.Suffix(name.text, name.span, args, keywords, has_parens, span))
        return tuple(found)

    def arguments(self, what: str) -> tuple[tuple[ast.Expr, ...], tuple[ast.Keyword, ...]]:
        opener = self.advance()
        self._enter(opener)
        args: list[ast.Expr] = []
        keywords: list[ast.Keyword] = []
        while not self._close(opener, ")", f"the arguments of {what}"):
            after = self.peek(1)
            if self.at_name() and after is not None and after.is_op("="):
                keywords.append(self.keyword())
            else:
                if keywords:
                    self.fail(
                        "P006",
                        "positional argument follows keyword argument",
                        self.here(),
                        hint="move positional arguments before keywords",
                    )
                args.append(self.expr())
            if not self.at_op(")"):
                self._comma(opener, ")", f"the arguments of {what}")
        self._depth -= 1
        return tuple(args), tuple(keywords)

    def keyword(self) -> ast.Keyword:
        name = self.advance()
        self.advance()  # '='
        value = self.expr()
        return ast.Keyword(name.text, name.span, value, self.span_from(name.span))

    def parenthesized(self) -> ast.Expr:
        opener = self.peek()
        assert opener is not None
        items, saw_comma = self.sequence(")", "tuple")
        if len(items) == 1 and not saw_comma:
            return items[0]  # grouping only
        node = ast.TupleExpr(tuple(items), self.span_from(opener.span))
        return self._built(node, items, opener.span)

    def sequence(self, closer: str, what: str) -> tuple[list[ast.Expr], bool]:
        """Items up to ``closer``; returns them and whether a comma was written."""
        opener = self.advance()
        self._enter(opener)
        items: list[ast.Expr] = []
        saw_comma = False
        while not self._close(opener, closer, f"the {what}"):
            items.append(self.expr())
            if not self.at_op(closer):
                self._comma(opener, closer, f"the {what}")
                saw_comma = True
        self._depth -= 1
        return items, saw_comma

    def _close(self, opener: Token, closer: str, what: str) -> bool:
        """Consume ``closer`` if it is next; report an unclosed bracket at the end of the line."""
        token = self.peek()
        if token is None:
            self.fail(
                "P005",
                f"expected {_CLOSER_NAMES[closer]} to close '{opener.text}' "
                f"opened at {opener.span}",
                opener.span,
                hint=f"add {_CLOSER_NAMES[closer]} to close {what}",
            )
        if token.is_op(closer):
            self.advance()
            return True
        return False

    def _comma(self, opener: Token, closer: str, what: str) -> None:
        token = self.peek()
        if token is None:
            self._close(opener, closer, what)
        elif not token.is_op(","):
            self.fail(
                "P006",
                f"expected ',' or {_CLOSER_NAMES[closer]} in {what} opened at "
                f"{opener.span}, found {self.describe(token)}",
                token.span,
            )
        else:
            self.advance()


def _suffix_values(suffix: ast.Suffix) -> list[ast.Expr]:
    return [*suffix.args, *(k.value for k in suffix.keywords)]
