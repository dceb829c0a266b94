"""Expression layout for ``aurane format``: flat printing and comment-aware line breaking.

Everything is printed from the AST. The source text is consulted only for what the AST keeps
by reference: string literals (printed exactly as written) and the positions of comments and of
chain steps (spans), which decide where a statement must break.

Rules: an expression is printed on one line when it fits in ``WIDTH`` columns and holds no
comment; otherwise its outermost brackets are exploded black-style (one item per line, indented
four more, trailing comma, closer on its own line). Chains keep the breaks the author chose
before a ``->`` and align continuation arrows under the first; a chain that still does not fit
breaks before every arrow. A comment that cannot be kept in its place raises ``Unplaceable``
and the caller prints that statement verbatim (re-indented), so no comment is ever lost.
"""

from __future__ import annotations

from aurane.records import record
from aurane.source import Span
from aurane.syntax import ast

WIDTH = 100
INDENT = 4
_ADDITIVE = {"+": 0, "-": 0}
_PRECEDENCE = {**_ADDITIVE, "*": 1, "/": 1, "//": 1, "%": 1, "**": 3}
_BRACKETED = (ast.Call, ast.TupleExpr, ast.ListExpr, ast.DictExpr)
_ATOMS = (
    ast.Number,
    ast.String,
    ast.Bool,
    ast.NoneLit,
    ast.Name,
    ast.TupleExpr,
    ast.ListExpr,
    ast.DictExpr,
    ast.Subscript,
)
# levels of the conditional grammar (Python's): a child below its place's level is wrapped
_ARITH_LEVEL = 6
_COMPARE_LEVEL = 5


def level(expr: ast.Expr) -> int:
    match expr:
        case ast.IfExp():
            return 1
        case ast.BoolOp(op="or"):
            return 2
        case ast.BoolOp():
            return 3
        case ast.Not():
            return 4
        case ast.Compare():
            return _COMPARE_LEVEL
    return _ARITH_LEVEL


Pos = tuple[int, int]


class Unplaceable(Exception):
    """A comment sits where the structured layout has no place for it."""


@record(slots=True)
class Line:
    """One output line: ``indent`` spaces, ``text``, then an optional trailing comment."""

    indent: int
    text: str
    comment: str | None = None
    own_comment: bool = False  # the line is a comment on its own

    @property
    def width(self) -> int:
        extra = len(self.comment) + 2 if self.comment is not None else 0
        return self.indent + len(self.text) + extra

    def render(self) -> str:
        if not self.text and self.comment is None:
            return ""
        tail = f"  {self.comment}" if self.comment is not None else ""
        return " " * self.indent + self.text + tail


def start(span: Span) -> Pos:
    return (span.line, span.column)


def end(span: Span) -> Pos:
    return (span.end_line, span.end_column)


def normalize_number(text: str) -> str:
    """Lower-case exponent, no '+' in it, and a digit on both sides of the point."""
    mantissa, exponent = text, ""
    for marker in ("e", "E"):
        if marker in text:
            mantissa, rest = text.split(marker, 1)
            exponent = "e" + rest.removeprefix("+")
    if mantissa.startswith("."):
        mantissa = "0" + mantissa
    if mantissa.endswith("."):
        mantissa += "0"
    return mantissa + exponent


class SourceText:
    """The source lines (BOM removed) for slicing string literals by span."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def slice(self, span: Span) -> str:
        return self.lines[span.line - 1][span.column - 1 : span.end_column - 1]


class Printer:
    def __init__(self, source: SourceText, width: int = WIDTH) -> None:
        self.source = source
        self.width = width

    # ------------------------------------------------------------ flat printing

    def flat(self, expr: ast.Expr) -> str:
        match expr:
            case ast.Number():
                return normalize_number(expr.text)
            case ast.String():
                return self.source.slice(expr.span)  # strings are never touched
            case ast.Bool():
                return "true" if expr.value else "false"
            case ast.NoneLit():
                return "None"
            case ast.Name():
                return expr.id
            case ast.TupleExpr():
                inner = ", ".join(self.flat(item) for item in expr.items)
                return f"({inner},)" if len(expr.items) == 1 else f"({inner})"
            case ast.ListExpr():
                return "[" + ", ".join(self.flat(item) for item in expr.items) + "]"
            case ast.DictExpr():
                pairs = zip(expr.keys, expr.values, strict=True)
                return "{" + ", ".join(f"{k.id}: {self.flat(v)}" for k, v in pairs) + "}"
            case ast.Call():
                return (
                    ("*" if expr.splice else "")
                    + f"{expr.func}({self._arguments(expr.args, expr.keywords)})"
                    + "".join(self._suffix(s) for s in expr.suffixes)
                    + self.named(expr)
                )
            case ast.BinOp():
                return self._binop(expr)
            case ast.UnaryOp():
                operand = self.flat(expr.operand)
                if (isinstance(expr.operand, ast.BinOp) and expr.operand.op != "**") or level(
                    expr.operand
                ) < _ARITH_LEVEL:
                    operand = f"({operand})"
                gap = " " if operand.startswith(("-", "+")) else ""  # '- -3', not '--3'
                return expr.op + gap + operand
            case ast.Chain():  # nested: always in parentheses (a statement's chain is laid out)
                inner = " -> ".join([self.flat(expr.source), *(self.flat(s) for s in expr.steps)])
                return f"({inner}){self.named(expr)}"
            case ast.Compare():
                left = self._at(expr.left, _ARITH_LEVEL)
                return f"{left} {expr.op} {self._at(expr.right, _ARITH_LEVEL)}"
            case ast.BoolOp():
                own = level(expr)
                return f"{self._at(expr.left, own)} {expr.op} {self._at(expr.right, own + 1)}"
            case ast.Not():
                return f"not {self._at(expr.operand, 4)}"
            case ast.IfExp():
                body, test = self._at(expr.body, 2), self._at(expr.test, 2)
                return f"{body} if {test} else {self._at(expr.orelse, 1)}"
            case ast.Subscript():
                value = self.flat(expr.value)
                if not isinstance(expr.value, (*_ATOMS, ast.Call)):
                    value = f"({value})"
                return f"{value}[{self.flat(expr.index)}]"
            case ast.OpRef():
                return expr.name
        raise TypeError(f"not an expression: {type(expr).__name__}")

    def _at(self, expr: ast.Expr, needed: int) -> str:
        """``expr`` where the grammar needs at least ``needed`` (parenthesised below it)."""
        text = self.flat(expr)
        return f"({text})" if level(expr) < needed else text

    def named(self, expr: ast.Call | ast.Chain) -> str:
        """`` as NAME`` for a layer the author named (template holes printed), else nothing."""
        if expr.layer is None:
            return ""
        pieces = expr.layer.split("{}")
        text = pieces[0]
        for hole, piece in zip(expr.layer_holes, pieces[1:], strict=False):
            text += "{" + self.flat(hole) + "}" + piece
        return f" as {text}"

    def _arguments(self, args: tuple[ast.Expr, ...], keywords: tuple[ast.Keyword, ...]) -> str:
        parts = [self.flat(a) for a in args] + [f"{k.name}={self.flat(k.value)}" for k in keywords]
        return ", ".join(parts)

    def _suffix(self, suffix: ast.Suffix) -> str:
        if not suffix.has_parens:
            return f".{suffix.name}"
        return f".{suffix.name}({self._arguments(suffix.args, suffix.keywords)})"

    def _binop(self, expr: ast.BinOp) -> str:
        left, right = self.flat(expr.left), self.flat(expr.right)
        left_wrap, right_wrap = self._wraps(expr)
        left = f"({left})" if left_wrap else left
        right = f"({right})" if right_wrap else right
        return f"{left} {expr.op} {right}"

    # ------------------------------------------------------------ broken layout

    def lay(
        self,
        expr: ast.Expr,
        indent: int,
        head: str,
        tail: str,
        comments: list[ast.Comment],
        extra: int = 0,
        *,
        top: bool = False,
    ) -> list[Line]:
        """Lines for ``head + expr + tail`` starting at ``indent``; ``comments`` lie inside
        ``expr``; ``extra`` columns are reserved on the last line (its trailing comment).
        ``top``: ``expr`` is a statement's whole value (a chain there needs no parentheses)."""
        if isinstance(expr, ast.Chain):  # chains keep the author's breaks even when short
            if top and expr.layer is None:
                return self._chain(expr, indent, head, tail, comments, extra)
            return self._parenthesised_chain(expr, indent, head, tail, comments, extra)
        if not comments:
            line = Line(indent, head + self.flat(expr) + tail)
            if line.width + extra <= self.width or not _explodable(expr):
                return [line]
            exploded = self._explode(expr, indent, head, tail, comments)
            # Exploding must help: a deep staircase of brackets only gets wider.
            if max(ln.width for ln in exploded) < line.width + extra:
                return exploded
            return [line]
        if _explodable(expr) or (isinstance(expr, _BRACKETED) and comments):
            return self._explode(expr, indent, head, tail, comments)
        if isinstance(expr, ast.BinOp):
            return self._binop_lines(expr, indent, head, tail, comments, extra)
        if isinstance(expr, ast.UnaryOp):
            wrap = isinstance(expr.operand, ast.BinOp) and expr.operand.op != "**"
            inner = _between(comments, start(expr.operand.span), end(expr.operand.span))
            if len(inner) != len(comments):
                raise Unplaceable
            opened, closed = ("(", ")") if wrap else ("", "")
            return self.lay(
                expr.operand, indent, head + expr.op + opened, closed + tail, inner, extra
            )
        raise Unplaceable

    def _binop_lines(
        self,
        expr: ast.BinOp,
        indent: int,
        head: str,
        tail: str,
        comments: list[ast.Comment],
        extra: int,
    ) -> list[Line]:
        """Comments inside an operand: the operands are laid out in turn, the operator hugging
        the end of the left one. A comment between the operands has no place."""
        left_wrap, right_wrap = self._wraps(expr)
        left = _between(comments, start(expr.left.span), end(expr.left.span))
        right = _between(comments, start(expr.right.span), end(expr.right.span))
        if len(left) + len(right) != len(comments):
            raise Unplaceable
        opened, closed = ("(", ")") if left_wrap else ("", "")
        lines = self.lay(expr.left, indent, head + opened, closed, left, 0)
        last = lines.pop()
        if last.comment is not None or last.own_comment:
            raise Unplaceable
        opened, closed = ("(", ")") if right_wrap else ("", "")
        joined = f"{last.text} {expr.op} {opened}"
        return lines + self.lay(expr.right, last.indent, joined, closed + tail, right, extra)

    def _wraps(self, expr: ast.BinOp) -> tuple[bool, bool]:
        """Whether the left and right operands need parentheses (the parser's precedence)."""
        if expr.op == "**":  # the base is a primary; the exponent a unary or another power
            left = not isinstance(expr.left, (*_ATOMS, ast.Call))
            right = isinstance(expr.right, ast.BinOp) and expr.right.op != "**"
            return left, right or level(expr.right) < _ARITH_LEVEL
        precedence = _PRECEDENCE[expr.op]
        left = isinstance(expr.left, ast.BinOp) and _PRECEDENCE[expr.left.op] < precedence
        right = isinstance(expr.right, ast.BinOp) and _PRECEDENCE[expr.right.op] <= precedence
        left = left or level(expr.left) < _ARITH_LEVEL
        right = right or level(expr.right) < _ARITH_LEVEL
        return left, right

    def _explode(
        self, expr: ast.Expr, indent: int, head: str, tail: str, comments: list[ast.Comment]
    ) -> list[Line]:
        opener, items, closer = self._parts(expr)
        if isinstance(expr, ast.Call) and expr.suffixes:
            suffix_start = start(expr.suffixes[0].span)
            if any(start(c.span) > suffix_start for c in comments):
                raise Unplaceable
        lines = [Line(indent, head + opener)]
        inner = indent + INDENT
        bounds = [start(item.span) for item in items] + [(1 << 30, 0)]
        previous = start(expr.span)
        for index, item in enumerate(items):
            span = item.span
            _place(_between(comments, previous, start(span)), lines, inner)
            after = _between(comments, end(span), bounds[index + 1])
            extra = next((len(c.text) + 2 for c in after if not c.own_line), 0)
            lines += self._item(item, inner, _between(comments, start(span), end(span)), extra)
            previous = end(span)
        _place(_between(comments, previous, (1 << 30, 0)), lines, inner)
        lines.append(Line(indent, closer + tail))
        return lines

    def _item(
        self,
        item: ast.Expr | ast.Keyword | _Entry,
        indent: int,
        comments: list[ast.Comment],
        extra: int,
    ) -> list[Line]:
        if isinstance(item, ast.Keyword | _Entry):
            if any(start(c.span) < start(item.value.span) for c in comments):
                raise Unplaceable
            head = f"{item.name}: " if isinstance(item, _Entry) else f"{item.name}="
            return self.lay(item.value, indent, head, ",", comments, extra)
        return self.lay(item, indent, "", ",", comments, extra)

    def _parts(self, expr: ast.Expr) -> tuple[str, list[ast.Expr | ast.Keyword | _Entry], str]:
        match expr:
            case ast.DictExpr():  # one input per line: {ids: (seq,), mask: (seq,)}
                pairs = zip(expr.keys, expr.values, strict=True)
                return "{", [_Entry(k.id, v, k.span.merge(v.span)) for k, v in pairs], "}"
            case ast.Call():
                suffixes = "".join(self._suffix(s) for s in expr.suffixes)
                closer = ")" + suffixes + self.named(expr)
                opener = ("*" if expr.splice else "") + f"{expr.func}("
                return opener, [*expr.args, *expr.keywords], closer
            case ast.TupleExpr():
                return "(", list(expr.items), ")"
            case ast.ListExpr():
                return "[", list(expr.items), "]"
        raise Unplaceable

    def _chain(
        self,
        chain: ast.Chain,
        indent: int,
        head: str,
        tail: str,
        comments: list[ast.Comment],
        extra: int,
    ) -> list[Line]:
        breaks = _source_breaks(chain)
        if not self._fits(chain, indent, head, tail, extra, breaks, comments):
            breaks = [False] + [True] * (len(breaks) - 1)  # too long as written: one step a line
        return self._chain_lines(chain, indent, head, tail, comments, extra, breaks)

    def _parenthesised_chain(
        self,
        chain: ast.Chain,
        indent: int,
        head: str,
        tail: str,
        comments: list[ast.Comment],
        extra: int,
    ) -> list[Line]:
        """``(x -> a -> b) as downsample`` on one line when it fits and the author wrote it on
        one; otherwise black-style: ``(`` ends the line, the chain follows four columns deeper
        (keeping the author's breaks), ``) as NAME`` closes at the statement's indent."""
        if not comments and not any(_source_breaks(chain)):
            line = Line(indent, head + self.flat(chain) + tail)
            if line.width + extra <= self.width:
                return [line]
        lines = [Line(indent, head + "(")]
        lines += self._chain(chain, indent + INDENT, "", "", comments, 0)
        return [*lines, Line(indent, ")" + self.named(chain) + tail)]

    def _fits(
        self,
        chain: ast.Chain,
        indent: int,
        head: str,
        tail: str,
        extra: int,
        breaks: list[bool],
        comments: list[ast.Comment],
    ) -> bool:
        """Whether every line of the chain, broken only where ``breaks`` says, fits flat
        (trailing comments between steps included)."""
        line = indent + len(head) + len(self.flat(chain.source))
        arrow = line + 1
        widths = []
        previous = end(chain.source.span)
        for index, step in enumerate(chain.steps):
            gap = _between(comments, previous, start(step.span))
            if breaks[index] or gap:
                note = next((len(c.text.rstrip(" \t")) + 2 for c in gap if not c.own_line), 0)
                widths.append(line + note)
                line = arrow + 3 + len(self.flat(step))
            else:
                line += 4 + len(self.flat(step))
            previous = end(step.span)
        widths.append(line + len(tail) + extra)
        return max(widths) <= self.width

    def _chain_lines(
        self,
        chain: ast.Chain,
        indent: int,
        head: str,
        tail: str,
        comments: list[ast.Comment],
        extra: int,
        breaks: list[bool],
    ) -> list[Line]:
        source = chain.source
        inside = _between(comments, start(source.span), end(source.span))
        lines = self.lay(source, indent, head, "", inside, 0)
        arrow = lines[-1].indent + len(lines[-1].text) + 1  # where the first '->' goes
        previous = end(source.span)
        for index, step in enumerate(chain.steps):
            last_step = index == len(chain.steps) - 1
            gap = _between(comments, previous, start(step.span))
            _place(gap, lines, arrow)
            inside = _between(comments, start(step.span), end(step.span))
            step_tail = tail if last_step else ""
            step_extra = extra if last_step else 0
            if breaks[index] or gap:  # a comment before a step puts it on its own line
                lines += self.lay(step, arrow, "-> ", step_tail, inside, step_extra)
            else:
                last = lines.pop()
                if last.comment is not None:
                    raise Unplaceable
                lines += self.lay(
                    step, last.indent, f"{last.text} -> ", step_tail, inside, step_extra
                )
            previous = end(step.span)
        return lines


@record(frozen=True, slots=True)
class _Entry:
    """``key: value`` of a dict, laid out like a keyword argument."""

    name: str
    value: ast.Expr
    span: Span


def _explodable(expr: ast.Expr) -> bool:
    match expr:
        case ast.DictExpr():
            return bool(expr.values)
        case ast.Call():
            return bool(expr.args or expr.keywords)
        case ast.TupleExpr() | ast.ListExpr():
            return bool(expr.items)
        case ast.Chain():
            return True
    return False


def _between(comments: list[ast.Comment], low: Pos, high: Pos) -> list[ast.Comment]:
    return [c for c in comments if low <= start(c.span) < high]


def _place(comments: list[ast.Comment], lines: list[Line], indent: int) -> None:
    """Own-line comments get a line; a trailing one goes after the last code line, which must
    be the last line so far (else the comment order would change) and have no comment yet."""
    for comment in comments:
        text = comment.text.rstrip(" \t")
        if comment.own_line:
            lines.append(Line(indent, text, own_comment=True))
            continue
        last = lines[-1]
        if last.own_comment or last.comment is not None:
            raise Unplaceable
        last.comment = text


def _source_breaks(chain: ast.Chain) -> list[bool]:
    """Whether each step starts a new line in the source; the first stays on the head line."""
    breaks = [False]
    previous = chain.steps[0].span if chain.steps else chain.source.span
    for step in chain.steps[1:]:
        breaks.append(step.span.line > previous.end_line)
        previous = step.span
    return breaks
