"""Expression parsing over one logical line: values, calls, suffixes, arithmetic and chains.

The nesting limit is enforced twice, both before any recursion can grow: open brackets,
unary operators and ``**`` exponents count as they are entered (the recursion guard), and the
height of every built node is recorded so that long flat operator chains such as
``1 + 1 + ... + 1`` cannot build a tree deeper than later passes can walk.

Speed: the cursor reads ``_toks``, the line's tokens plus an end sentinel whose text matches
no operator, so the hot paths test ``toks[pos].text`` without bounds checks; plain names,
numbers and calls skip the general unary/power/primary descent. Error paths are unchanged.
"""

from __future__ import annotations

from typing import NoReturn

from aurane import codes
from aurane.diagnostics import Diagnostic
from aurane.records import replace
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.layer_names import LayerNames
from aurane.syntax.tokens import MAX_DEPTH, Amount, Kind, LogicalLine, Token

_BINARY = {"+": 0, "-": 0, "*": 1, "/": 1, "//": 1, "%": 1}
_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
# what may follow an arithmetic expression inside a larger (conditional) one
_TEST_WORDS = _COMPARISONS | {"in", "not", "and", "or", "if"}
_TRUE = frozenset({"true", "True"})
_FALSE = frozenset({"false", "False"})
_NONE = frozenset({"None", "none", "null"})
_LITERAL_WORDS = _TRUE | _FALSE | _NONE
_CLOSER_NAMES = {")": "')'", "]": "']'", "}": "'}'"}
_MAX_HEIGHT = MAX_DEPTH + 1
_NAME, _NUMBER, _STRING = Kind.NAME, Kind.NUMBER, Kind.STRING
END = Token(Kind.OP, "", None, 0, 0, 0)  # the sentinel after a line's last token


new_span = Span
_NAME_NODE, _NUMBER_NODE, _BINOP = ast.Name, ast.Number, ast.BinOp
_CALL, _SUFFIX, _KEYWORD = ast.Call, ast.Suffix, ast.Keyword
_CHAIN = ast.Chain


class ParseAbort(Exception):
    """Abandons the current logical line after its first error (the parser resynchronises)."""


class ExprParser(LayerNames):
    """A cursor over one logical line's tokens with the expression grammar."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.tokens: list[Token] = []
        self._toks: list[Token] = [END]
        self.pos = 0
        self.quiet = False
        self.line: LogicalLine | None = None
        self._depth = 0
        self._heights: dict[int, int] = {}

    def sub_parser(self) -> ExprParser:
        return ExprParser()

    # ------------------------------------------------------------ cursor

    def start(self, line: LogicalLine) -> None:
        self.line, self.tokens, self.pos = line, line.tokens, 0
        self._toks = [*line.tokens, END]
        self.quiet = line.lexical_error
        self._depth = 0
        self._heights.clear()

    def peek(self, offset: int = 0) -> Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def at_op(self, text: str) -> bool:
        return self._toks[self.pos].text == text  # an operator's text is never another kind's

    def at_name(self, text: str | None = None) -> bool:
        token = self._toks[self.pos]
        return token.kind is _NAME and text in (None, token.text)

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    @property
    def previous(self) -> Token:
        return self.tokens[self.pos - 1]

    def span_from(self, start: Span) -> Span:
        end = self.tokens[self.pos - 1]
        return new_span(start.line, start.column, end.line, end.end_column)

    def _span_at(self, index: int) -> Span:
        """From the token at ``index`` to the previous token."""
        toks = self._toks
        first, end = toks[index], toks[self.pos - 1]
        return new_span(first.line, first.column, end.line, end.end_column)

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

    def _amount_here(self, token: Token) -> NoReturn:
        self.fail(
            "P008",
            f"invalid number literal '{token.text}': unit suffixes belong in budget lines only",
            token.span,
            hint="write a decimal number such as 42, 0.5, 1e-4 or 1_000",
        )

    def fail(self, code: str, message: str, span: Span, hint: str | None = None) -> NoReturn:
        self.report(codes.diag(code, message, span, hint=hint))
        raise ParseAbort

    def expect_name(self, what: str) -> Token:
        token = self._toks[self.pos]
        if token.kind is not _NAME:
            self.fail("P006", f"expected {what}, found {self.describe(self.peek())}", self.here())
        self.pos += 1
        return token

    def expect_op(self, text: str, context: str) -> Token:
        token = self._toks[self.pos]
        if token.text != text:
            found = self.describe(self.peek())
            self.fail("P006", f"expected '{text}' {context}, found {found}", self.here())
        self.pos += 1
        return token

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

    def _built(self, node: ast.Expr, children: list[ast.Expr], at: Token | Span) -> ast.Expr:
        """Record ``node``'s height (leaves, never recorded, count 1); refuse one too tall."""
        heights = self._heights
        height = 1
        for child in children:
            child_height = heights.get(id(child), 1)
            if child_height >= height:
                height = child_height + 1
        if height > _MAX_HEIGHT:
            self._too_deep(at if isinstance(at, Span) else at.span)
        heights[id(node)] = height
        return node

    # ------------------------------------------------------------ expressions

    def value(self) -> ast.Expr:
        """An expression, optionally continued as a chain ``source -> step -> step``."""
        start = self.pos
        source = self.expr()
        toks = self._toks
        if toks[self.pos].text == "as" and toks[self.pos].kind is _NAME:
            source = self.named(source)
        if toks[self.pos].text != "->":
            return source
        steps: list[ast.Call] = []
        while toks[self.pos].text == "->":
            self.pos += 1
            step = self.step()
            if toks[self.pos].text == "as" and toks[self.pos].kind is _NAME:
                named = self.named(step)
                assert isinstance(named, ast.Call)
                step = named
            steps.append(step)
        chain = _CHAIN(source, tuple(steps), self._span_at(start))
        return self._built(chain, [source, *steps], toks[start])

    def named(self, node: ast.Expr) -> ast.Expr:
        """``node as conv1`` / ``as layer1.0.conv1``: the layer's attribute path, at 'as'."""
        word = self.advance()
        if not isinstance(node, ast.Call | ast.Chain):
            self.fail(
                "P006",
                "only an operation, a block call or a parenthesised chain can be named with 'as'",
                word.span,
                hint="write 'as NAME' after a call, e.g. conv2d(64) as conv1",
            )
        text, holes, span = self.layer_name()
        named = replace(node, layer=text, layer_span=span, layer_holes=holes)
        self._heights[id(named)] = self._heights.get(id(node), 1)
        return named

    def step(self) -> ast.Call:
        toks = self._toks
        token = toks[self.pos]
        if token.text == "*" and token.kind is Kind.OP and toks[self.pos + 1].kind is _NAME:
            self.pos += 1  # ``-> *Block(64) as features``: splice the block's layers
            return replace(self._step(), splice=True)
        return self._step()

    def _step(self) -> ast.Call:
        toks = self._toks
        pos = self.pos
        token = toks[pos]
        if token.kind is not _NAME:
            self.fail(
                "P006",
                f"expected an operation after '->', found {self.describe(self.peek())}",
                self.here(),
                hint="write an operation such as dense(8) after '->'",
            )
        following = toks[pos + 1].text
        if following == "(":
            self.pos = pos + 1
            return self.call(token.text, token_span(token))
        if following != ".":  # a bare operation: ``-> relu``
            self.pos = pos + 1
            span = token_span(token)
            return _CALL(token.text, span, (), (), (), span)
        func, func_span = self.dotted()
        if toks[self.pos].text == "(":
            return self.call(func, func_span)
        suffixes = self.suffixes()
        call = _CALL(func, func_span, (), (), suffixes, self.span_from(func_span))
        if suffixes:
            self._built(call, [e for s in suffixes for e in _suffix_values(s)], func_span)
        return call

    def expr(self) -> ast.Expr:
        """A full expression: arithmetic, then comparisons, ``not``/``and``/``or`` and
        ``a if test else b`` (Python's precedence). Plain arithmetic takes the fast path."""
        toks = self._toks
        start = self.pos
        token = toks[start]
        if token.text == "not" and token.kind is _NAME:
            return self._conditional(start, None)
        left = self.arith()
        if toks[self.pos].text not in _TEST_WORDS:
            return left
        return self._conditional(start, left)

    def arith(self, min_prec: int = 0) -> ast.Expr:
        toks = self._toks
        start = self.pos
        token = toks[start]
        kind = token.kind
        left: ast.Expr
        if kind is _NAME and token.text not in _LITERAL_WORDS:
            following = toks[start + 1].text
            if following == "(":  # a call, as ``primary`` would parse it
                self.pos = start + 1
                left = self.call(token.text, token_span(token))
                if toks[self.pos].text == "[":
                    left = self._subscripts(left, start)
                if toks[self.pos].text == "**":
                    left = self._exponent(left, start)
            elif following == "." or following == "**" or following == "[":
                left = self.unary()
            else:
                self.pos = start + 1
                left = _NAME_NODE(token.text, token_span(token))
        elif kind is _NUMBER and toks[start + 1].text != "**":
            self.pos = start + 1
            value = token.value
            if isinstance(value, Amount):
                self._amount_here(token)
            assert isinstance(value, (int, float))
            left = _NUMBER_NODE(value, token.text, token_span(token))
        else:
            left = self.unary()
        while True:
            token = toks[self.pos]
            prec = _BINARY.get(token.text)  # the end sentinel and non-operators give None
            if prec is None or prec < min_prec:
                return left
            self.pos += 1
            right = self.arith(prec + 1)
            node = _BINOP(token.text, left, right, self._span_at(start))
            left = self._built(node, [left, right], token)

    # ------------------------------------------------------------ conditions

    def _conditional(self, start: int, left: ast.Expr | None) -> ast.Expr:
        """``body if test else orelse`` (``left``: the arithmetic already parsed at ``start``)."""
        body = self._disjunction(start, left)
        toks = self._toks
        token = toks[self.pos]
        if token.text != "if" or token.kind is not _NAME:
            return body
        self.pos += 1
        self._enter(token)
        test = self._disjunction(self.pos, None)
        if not self.at_name("else"):
            found = self.describe(self.peek())
            self.fail(
                "P006",
                f"expected 'else' in the conditional expression, found {found}",
                self.here(),
                hint="write VALUE if CONDITION else OTHER",
            )
        self.pos += 1
        orelse = self.expr()
        self._depth -= 1
        node = ast.IfExp(body, test, orelse, self._span_at(start))
        return self._built(node, [body, test, orelse], token)

    def _disjunction(self, start: int, left: ast.Expr | None) -> ast.Expr:
        node = self._conjunction(start, left)
        toks = self._toks
        while toks[self.pos].text == "or" and toks[self.pos].kind is _NAME:
            token = self.advance()
            right = self._conjunction(self.pos, None)
            node = self._built(
                ast.BoolOp("or", node, right, self._span_at(start)), [node, right], token
            )
        return node

    def _conjunction(self, start: int, left: ast.Expr | None) -> ast.Expr:
        node = self._inversion(start, left)
        toks = self._toks
        while toks[self.pos].text == "and" and toks[self.pos].kind is _NAME:
            token = self.advance()
            right = self._inversion(self.pos, None)
            node = self._built(
                ast.BoolOp("and", node, right, self._span_at(start)), [node, right], token
            )
        return node

    def _inversion(self, start: int, left: ast.Expr | None) -> ast.Expr:
        token = self._toks[self.pos]
        if left is None and token.text == "not" and token.kind is _NAME:
            self.pos += 1
            self._enter(token)
            operand = self._inversion(self.pos, None)
            self._depth -= 1
            return self._built(ast.Not(operand, self._span_at(start)), [operand], token)
        return self._comparison(start, left)

    def _compare_op(self) -> str | None:
        """The comparison operator at the cursor (consumed), or None."""
        toks = self._toks
        token = toks[self.pos]
        if token.kind is Kind.OP and token.text in _COMPARISONS:
            self.pos += 1
            return token.text
        if token.kind is _NAME and token.text == "in":
            self.pos += 1
            return "in"
        if token.kind is _NAME and token.text == "not" and toks[self.pos + 1].text == "in":
            self.pos += 2
            return "not in"
        return None

    def _comparison(self, start: int, left: ast.Expr | None) -> ast.Expr:
        if left is None:
            left = self.arith()
        at = self._toks[self.pos]
        op = self._compare_op()
        if op is None:
            return left
        right = self.arith()
        node = self._built(ast.Compare(op, left, right, self._span_at(start)), [left, right], at)
        chained = self._toks[self.pos]
        if self._compare_op() is not None:
            self.fail(
                "P006",
                "comparisons cannot be chained",
                chained.span,
                hint="join them with 'and': a < b and b < c",
            )
        return node

    def _subscripts(self, value: ast.Expr, start: int) -> ast.Expr:
        """``value[index]...`` at a '[' right after a value."""
        toks = self._toks
        while toks[self.pos].text == "[":
            opener = self.advance()
            self._enter(opener)
            if toks[self.pos].text == "]":
                self.fail("P006", "expected an index inside '[]'", self.here())
            index = self.expr()
            if not self._close(opener, "]", "the index"):
                found = self.describe(self.peek())
                self.fail(
                    "P006",
                    f"expected ']' to close the index opened at {opener.span}, found {found}",
                    self.here(),
                    hint="an index is one value: cfg[i], cfg[i][0], x.shape[1]",
                )
            self._depth -= 1
            node = ast.Subscript(value, index, self._span_at(start))
            value = self._built(node, [value, index], opener)
        return value

    def unary(self) -> ast.Expr:
        toks = self._toks
        text = toks[self.pos].text
        if text != "-" and text != "+":
            return self.power()
        operators: list[Token] = []
        while text == "-" or text == "+":
            operators.append(self.advance())
            self._enter(operators[-1])
            text = toks[self.pos].text
        operand = self.power()
        for token in reversed(operators):
            node = ast.UnaryOp(token.text, operand, self.span_from(token.span))
            operand = self._built(node, [operand], token)
        self._depth -= len(operators)
        return operand

    def power(self) -> ast.Expr:
        start = self.pos
        base = self.primary()
        if self._toks[self.pos].text == "[":
            base = self._subscripts(base, start)
        if self._toks[self.pos].text != "**":
            return base
        return self._exponent(base, start)

    def _exponent(self, base: ast.Expr, start: int) -> ast.Expr:
        """``base ** exponent``, at the '**'; ``base`` began at token ``start``."""
        operator = self.advance()
        self._enter(operator)
        exponent = self.unary()
        self._depth -= 1
        node = _BINOP("**", base, exponent, self._span_at(start))
        return self._built(node, [base, exponent], operator)

    def primary(self) -> ast.Expr:
        token = self._toks[self.pos]
        kind = token.kind
        if kind is _NAME:
            return self.name_or_call()
        if kind is _NUMBER:
            self.pos += 1
            if isinstance(token.value, Amount):
                self._amount_here(token)
            assert isinstance(token.value, (int, float))
            return _NUMBER_NODE(token.value, token.text, token.span)
        if kind is _STRING:
            self.pos += 1
            return ast.String(str(token.value), token.span)
        if token is END:
            self.fail("P006", "expected a value, found the end of the line", self.here())
        match token.text:
            case "(":
                return self.parenthesized()
            case "[":
                items, _ = self.sequence("]", "list")
                node = ast.ListExpr(tuple(items), self.span_from(token.span))
                return self._built(node, items, token)
            case "{":
                return self.dictionary()
        self.fail("P006", f"expected a value, found {self.describe(token)}", token.span)

    def name_or_call(self) -> ast.Expr:
        toks = self._toks
        pos = self.pos
        token = toks[pos]
        text = token.text
        if text in _LITERAL_WORDS:
            self.pos = pos + 1
            if text in _NONE:
                return ast.NoneLit(token.span)
            return ast.Bool(text in _TRUE, token.span)
        following = toks[pos + 1].text
        if following == "(":
            self.pos = pos + 1
            return self.call(text, token.span)
        if following != ".":
            self.pos = pos + 1
            return _NAME_NODE(text, token.span)
        name, span = self.dotted()
        if toks[self.pos].text == "(":
            return self.call(name, span)
        return _NAME_NODE(name, span)

    def dotted(self) -> tuple[str, Span]:
        toks = self._toks
        pos = self.pos
        first = toks[pos]
        parts = [first.text]
        pos += 1
        while toks[pos].text == "." and toks[pos + 1].kind is _NAME:
            parts.append(toks[pos + 1].text)
            pos += 2
        self.pos = pos
        return ".".join(parts), self._span_at(pos - 2 * len(parts) + 1)

    def call(self, func: str, func_span: Span) -> ast.Call:
        args, keywords = self.arguments(func)
        toks = self._toks
        suffixes = self.suffixes() if toks[self.pos].text == "." else ()
        end = toks[self.pos - 1]
        span = new_span(func_span.line, func_span.column, end.line, end.end_column)
        node = _CALL(func, func_span, args, keywords, suffixes, span)
        if keywords or suffixes:
            children = [*args, *(k.value for k in keywords)]
            children += [e for s in suffixes for e in _suffix_values(s)]
            self._built(node, children, func_span)
        elif args:  # ``_built`` inlined for the common call
            heights = self._heights
            height = 1
            for arg in args:
                arg_height = heights.get(id(arg), 1)
                if arg_height >= height:
                    height = arg_height + 1
            if height > _MAX_HEIGHT:
                self._too_deep(func_span)
            heights[id(node)] = height
        return node  # without children: height 1, like a leaf

    def suffixes(self) -> tuple[ast.Suffix, ...]:
        found: list[ast.Suffix] = []
        toks = self._toks
        while toks[self.pos].text == ".":
            dot = toks[self.pos]
            self.pos += 1
            name = self.expect_name("a suffix name after '.' (such as .relu)")
            args: tuple[ast.Expr, ...] = ()
            keywords: tuple[ast.Keyword, ...] = ()
            has_parens = toks[self.pos].text == "("
            if has_parens:
                args, keywords = self.arguments("." + name.text)
            end = toks[self.pos - 1]
            span = new_span(dot.line, dot.column, end.line, end.end_column)
            suffix = _SUFFIX(name.text, token_span(name), args, keywords, has_parens, span)
            found.append(suffix)
        return tuple(found)

    def arguments(self, func: str) -> tuple[tuple[ast.Expr, ...], tuple[ast.Keyword, ...]]:
        """The arguments of ``func`` (a name, or ``.name`` for a suffix) from its '('."""
        toks = self._toks
        opener = toks[self.pos]
        self.pos += 1
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._too_deep(opener.span)
        args: list[ast.Expr] = []
        keywords: list[ast.Keyword] = []
        while True:
            token = toks[self.pos]
            if token.text == ")":
                self.pos += 1
                break
            if token is END:
                self._close(opener, ")", f"the arguments of '{func}'")
            if token.kind is _NAME and toks[self.pos + 1].text == "=":
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
            text = toks[self.pos].text
            if text == ",":
                self.pos += 1
            elif text != ")":
                self._comma(opener, ")", f"the arguments of '{func}'")
        self._depth -= 1
        return tuple(args), tuple(keywords)

    def keyword(self) -> ast.Keyword:
        name = self._toks[self.pos]
        self.pos += 2  # the name and '='
        value: ast.Expr
        token = self._toks[self.pos]
        if name.text == "tie" and token.kind is _NAME:  # tie=layers.0.wte, a layer path
            text, holes, span = self.layer_name()
            if holes or text.endswith("*"):
                self.fail("P006", "tie= takes a layer path without '{}' or '*'", span)
            value = _NAME_NODE(text, span)
        else:
            value = self.expr()
        span = token_span(name)
        return _KEYWORD(name.text, span, value, self.span_from(span))

    def parenthesized(self) -> ast.Expr:
        opener = self._toks[self.pos]
        if self._holds_chain():  # ``(x -> conv2d(8) -> batchnorm()) as downsample``
            self.advance()
            self._enter(opener)
            chain = self.value()
            if not self._close(opener, ")", "the chain"):
                self.fail(
                    "P006",
                    f"expected ')' to close the chain opened at {opener.span}, "
                    f"found {self.describe(self.peek())}",
                    self.here(),
                )
            self._depth -= 1
            return chain
        items, saw_comma = self.sequence(")", "tuple")
        if len(items) == 1 and not saw_comma:
            return items[0]  # grouping only
        node = ast.TupleExpr(tuple(items), self.span_from(opener.span))
        return self._built(node, items, opener)

    def _holds_chain(self) -> bool:
        """Whether the '(' at the cursor encloses a chain: a '->' at its own level."""
        toks = self._toks
        depth = 0
        for index in range(self.pos, len(toks)):
            text = toks[index].text
            if text in ("(", "["):
                depth += 1
            elif text in (")", "]"):
                depth -= 1
                if depth == 0:
                    return False
            elif text == "->" and depth == 1:
                return True
        return False

    def dictionary(self) -> ast.Expr:
        """``{name: value, ...}``: keys are names (a model's inputs in input_shape/input_dtype)."""
        opener = self.advance()
        self._enter(opener)
        keys: list[ast.Name] = []
        values: list[ast.Expr] = []
        while not self._close(opener, "}", "the dict"):
            key = self._toks[self.pos]
            if key.kind is not _NAME:
                self.fail(
                    "P041",
                    f"a dict key must be a name, found {self.describe(key)}",
                    key.span,
                    hint="key it by the forward's parameter: {ids: (seq,)}",
                )
            self.pos += 1
            if any(k.id == key.text for k in keys):
                self.fail(
                    "P041",
                    f"'{key.text}' is a key twice in one dict",
                    key.span,
                    hint="give each input one entry",
                )
            keys.append(_NAME_NODE(key.text, key.span))
            if self._toks[self.pos].text != ":":
                self.fail(
                    "P041",
                    f"expected ':' after the key '{key.text}', found {self.describe(self.peek())}",
                    self.here(),  # the line's end when the key is its last word
                    hint=f"write {key.text}: value",
                )
            self.pos += 1
            values.append(self.expr())
            if not self.at_op("}"):
                self._comma(opener, "}", "the dict")
        self._depth -= 1
        node = ast.DictExpr(tuple(keys), tuple(values), self.span_from(opener.span))
        return self._built(node, values, opener)

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
        token = self._toks[self.pos]
        if token is END:
            self.fail(
                "P005",
                f"expected {_CLOSER_NAMES[closer]} to close '{opener.text}' "
                f"opened at {opener.span}",
                opener.span,
                hint=f"add {_CLOSER_NAMES[closer]} to close {what}",
            )
        if token.text == closer:
            self.pos += 1
            return True
        return False

    def _comma(self, opener: Token, closer: str, what: str) -> None:
        token = self._toks[self.pos]
        if token is END:
            self._close(opener, closer, what)
        elif token.text != ",":
            self.fail(
                "P006",
                f"expected ',' or {_CLOSER_NAMES[closer]} in {what} opened at "
                f"{opener.span}, found {self.describe(token)}",
                token.span,
            )
        else:
            self.pos += 1


def token_span(token: Token) -> Span:
    """``token.span`` without the property call (hot paths only)."""
    return new_span(token.line, token.column, token.line, token.end_column)


def _suffix_values(suffix: ast.Suffix) -> list[ast.Expr]:
    return [*suffix.args, *(k.value for k in suffix.keywords)]
