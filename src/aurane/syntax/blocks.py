"""Block structure and block statements: experiment, dataset, model (with forward), train.

Blocks come from indentation: a header line ending in ':' owns the following lines that are
indented deeper (``_items`` groups them). A header whose own line fails to parse drops its
block silently, so one broken header gives one diagnostic.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from aurane import codes
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.exprs import END, ExprParser, ParseAbort, token_span
from aurane.syntax.tokens import MAX_DEPTH, Kind, LogicalLine, Token

T = TypeVar("T")
_Bound = TypeVar("_Bound", ast.Assign, ast.Field, ast.Constant)  # ``name = value`` nodes
_GIVE_UP_AFTER = 400  # diagnostics; far past the reporting cap the rest is not worth parsing
_ASSIGN, _CHAIN_STMT, _FIELD = ast.Assign, ast.ChainStmt, ast.Field


class Item(NamedTuple):
    """A logical line and the deeper lines that belong to it (its block, if it is a header)."""

    line: LogicalLine
    children: list[LogicalLine]

    @property
    def span(self) -> Span:
        last = self.children[-1] if self.children else self.line
        return self.line.tokens[0].span.merge(last.tokens[-1].span)


def group_items(lines: list[LogicalLine]) -> list[Item]:
    """Group a block's lines: each line at the block's level owns the deeper lines after it."""
    if not lines:
        return []
    level = lines[0].indent
    items: list[Item] = []
    append, new, count = items.append, tuple.__new__, len(lines)
    index = 0
    while index < count:
        head = lines[index]
        own = max(head.indent, level)  # a line dedented inside the block still sits at its level
        end = index + 1
        while end < count and lines[end].indent > own:
            end += 1
        append(new(Item, (head, lines[index + 1 : end] if end > index + 1 else [])))
        index = end
    return items


BUDGET_METRICS = ("params", "macs", "flops", "activations")


def _is_budget(line: LogicalLine) -> bool:
    """``budget params <= ...``: not ``budget = 3`` (a model constant named budget)."""
    tokens = line.tokens
    return tokens[0].text == "budget" and len(tokens) > 1 and tokens[1].kind is Kind.NAME


class BlockParser(ExprParser):
    def __init__(self) -> None:
        super().__init__()
        self._nesting = 0  # if/for blocks entered

    # ------------------------------------------------------------ structure

    def level_items(self, lines: list[LogicalLine], level: int) -> list[Item]:
        """Items of one block, reporting lines that are not at the block's indentation."""
        items = group_items(lines)
        for item in items:
            if item.line.indent != level:
                self.bad_indent(item.line, level)
        return items

    def bad_indent(self, line: LogicalLine, level: int) -> None:
        message = (
            "unexpected indentation: this line is indented deeper than its block"
            if line.indent > level
            else "unindent does not match any outer indentation level"
        )
        hint = f"align the line with the other lines of its block (column {level + 1})"
        self.diagnostics.append(codes.diag("P002", message, line.tokens[0].span, hint=hint))

    def body(self, item: Item, what: str, header: Span) -> list[Item]:
        """The items of a header's block; reports an empty block."""
        if not item.children:
            self.diagnostics.append(
                codes.diag(
                    "P013",
                    f"{what} has no body: nothing is indented under its header",
                    header,
                    hint="add the block's lines below the header, indented",
                )
            )
            return []
        return self.level_items(item.children, item.children[0].indent)

    def flatten(self, item: Item) -> list[Item]:
        """Deeper lines under a line that is no header: report once, parse them as siblings."""
        if not item.children:
            return []
        self.bad_indent(item.children[0], item.line.indent)
        return group_items(item.children)

    def guarded(self, item: Item, parse: Callable[[Item], T]) -> T | None:
        if len(self.diagnostics) > _GIVE_UP_AFTER:
            return None
        try:
            return parse(item)
        except ParseAbort:
            return None

    def each(self, items: list[Item], parse: Callable[[Item], T | None]) -> list[T]:
        """Parse items (and lines wrongly indented under them) with ``parse``, dropping failures.

        A work list instead of recursion: a staircase of ever deeper lines stays flat.
        """
        out: list[T] = []
        pending = list(reversed(items))
        while pending and len(self.diagnostics) <= _GIVE_UP_AFTER:
            item = pending.pop()
            result = self.guarded(item, parse)
            if result is not None:
                out.append(result)
            if item.children and not self._is_header(item):
                pending.extend(reversed(self.flatten(item)))
        return out

    @staticmethod
    def _is_header(item: Item) -> bool:
        return item.line.tokens[-1].is_op(":") or item.line.tokens[0].text in _HEADER_WORDS

    def end_of_statement(self, what: str) -> None:
        token = self.peek()
        if token is None:
            return
        if token.is_op(":"):
            self.fail(
                "P006",
                f"unexpected ':' after the {what}; only block headers end in ':'",
                token.span,
            )
        self.fail(
            "P006",
            f"unexpected {self.describe(token)} after the {what}; expected the end of the line",
            token.span,
        )

    def header_end(self, what: str) -> None:
        """Accept the ':' ending a header; a missing one is reported but the block still parses."""
        token = self.peek()
        if token is None:
            self.report(
                codes.diag(
                    "P010",
                    f"expected ':' at the end of the {what} header",
                    self.here(),
                    hint="add ':' at the end of the header",
                )
            )
            return
        extra = self.peek(1)
        if token.is_op(":") and extra is None:
            self.advance()
            return
        if token.is_op(":") and extra is not None:
            self.fail(
                "P006",
                f"unexpected {self.describe(extra)} after ':'; the block's lines "
                "go below the header, indented",
                extra.span,
            )
        self.fail(
            "P006",
            f"expected ':' at the end of the {what} header, found {self.describe(token)}",
            token.span,
        )

    # ------------------------------------------------------------ block statements

    def block_statement(self, item: Item, keyword: str) -> ast.Statement:
        match keyword:
            case "experiment":
                return self._experiment(item)
            case "dataset":
                return self._dataset(item)
            case "model":
                return self._model(item)
            case "train":
                return self._train(item)
        return self._train_gan(item)

    def _header_name(self, keyword: str) -> tuple[str, Span, Span]:
        start = self.advance().span
        name = self.expect_name(f"a {keyword} name after '{keyword}'")
        self.header_end(f"{keyword} '{name.text}'")
        return name.text, name.span, self.span_from(start)

    def _experiment(self, item: Item) -> ast.Experiment:
        name, name_span, header = self._header_name("experiment")
        fields = self._fields(self.body(item, f"experiment '{name}'", header), "experiment")
        return ast.Experiment(name, name_span, tuple(fields), item.span)

    def _dataset(self, item: Item) -> ast.Dataset:
        name, name_span, header = self._header_name("dataset")
        items = self.body(item, f"dataset '{name}'", header)
        source: ast.Name | None = None
        if items and self._is_from(items[0].line):
            source = self.guarded(items[0], self._from_line)
            items = items[1:]
        fields = self._fields(items, "dataset")
        return ast.Dataset(name, name_span, source, tuple(fields), item.span)

    @staticmethod
    def _is_from(line: LogicalLine) -> bool:
        second = line.tokens[1] if len(line.tokens) > 1 else None
        return line.tokens[0].text == "from" and not (second is not None and second.is_op("="))

    def _from_line(self, item: Item) -> ast.Name:
        self.start(item.line)
        self.advance()
        self.expect_name("a dotted constructor name after 'from'")
        self.pos -= 1
        dotted, span = self.dotted()
        self.end_of_statement("'from' name")
        return ast.Name(dotted, span)

    def _train(self, item: Item) -> ast.Train:
        self.advance()
        model = self._ref("a model name after 'train'")
        self._word("on", "after the model name in 'train Model on dataset:'")
        dataset = self._ref("a dataset name after 'on'")
        self.header_end(f"train '{model.id}'")
        header = self.span_from(item.line.tokens[0].span)
        fields = self._fields(self.body(item, f"train '{model.id}'", header), "train")
        return ast.Train(model, dataset, tuple(fields), item.span)

    def _train_gan(self, item: Item) -> ast.TrainGan:
        self.advance()
        generator = self._ref("a generator model name after 'train_gan'")
        self._word("and", "between the generator and discriminator names")
        discriminator = self._ref("a discriminator model name after 'and'")
        self._word("on", "after the discriminator name")
        dataset = self._ref("a dataset name after 'on'")
        self.header_end("train_gan")
        header = self.span_from(item.line.tokens[0].span)
        fields = self._fields(self.body(item, "train_gan", header), "train_gan")
        return ast.TrainGan(generator, discriminator, dataset, tuple(fields), item.span)

    def _ref(self, what: str) -> ast.Name:
        token = self.expect_name(what)
        return ast.Name(token.text, token.span)

    def _word(self, word: str, where: str) -> None:
        if not self.at_name(word):
            self.fail(
                "P006",
                f"expected '{word}' {where}, found {self.describe(self.peek())}",
                self.here(),
            )
        self.advance()

    # ------------------------------------------------------------ fields

    def _fields(self, items: list[Item], block: str) -> list[ast.Field]:
        return self.each(items, lambda item: self._field(item, block))

    def _field(self, item: Item, block: str) -> ast.Field:
        self.start(item.line)
        name = self.peek()
        after = self.peek(1)
        if name is None or name.kind is not Kind.NAME or after is None or not after.is_op("="):
            found = self.describe(name)
            if name is not None and name.text == "from" and block == "dataset":
                self.fail(
                    "P006",
                    "'from' must be the first line of the dataset block",
                    name.span,
                    hint="move the 'from' line directly under the header",
                )
            self.fail(
                "P006",
                f"expected a field 'name = value' in the {block} block, found {found}",
                self.here(),
            )
        return self.assignment(name, _FIELD)

    def assignment(self, name: Token, node: type[_Bound]) -> _Bound:
        """``node`` of the line ``NAME = value``: its first two tokens, then the value."""
        self.pos = 2
        if self._toks[2] is END:
            self.assigned_value(f"'{name.text} ='")  # reports the missing value
        value = self.value()
        if self.pos < len(self.tokens):
            self.end_of_statement(f"value of '{name.text}'")
        span = token_span(name)
        return node(name.text, span, value, self.span_from(span))

    def assigned_value(self, after: str) -> ast.Expr:
        if self.peek() is None:
            self.fail(
                "P006", f"expected a value after {after}, found the end of the line", self.here()
            )
        return self.value()

    # ------------------------------------------------------------ model and forward

    def _model(self, item: Item) -> ast.Model:
        start = self.advance().span
        name_token = self.expect_name("a model name after 'model'")
        name, name_span = name_token.text, name_token.span
        params = self._model_params(name) if self.at_op("(") else ()
        base = self._variant_base(name) if self.at_op("=") and not params else None
        if base is not None and self.peek() is None and not item.children:
            # ``model resnet18 = ResNet(BasicBlock, [2, 2, 2, 2])``: a pure alias
            return ast.Model(name, name_span, (), None, item.span, base=base)
        self.header_end(f"model '{name}'")
        header = self.span_from(start)
        fields: list[ast.Field] = []
        forwards: list[ast.Forward] = []
        budgets: list[ast.Budget] = []
        inits: list[ast.InitRule] = []
        for child in self.body(item, f"model '{name}'", header):
            if _is_init(child.line):
                rule = self.guarded(child, self._init_rule)
                if rule is not None:
                    inits.append(rule)
            elif _is_budget(child.line):
                budget = self.guarded(child, self._budget)
                if budget is not None:
                    budgets.append(budget)
            elif child.line.tokens[0].text == "def":
                forward = self.guarded(child, self._forward)
                if forward is not None and forwards:
                    self._second_forward(name, forwards[0], forward)
                elif forward is not None:
                    forwards.append(forward)
            else:
                fields.extend(self._fields([child], "model"))
        forward_or_none = forwards[0] if forwards else None
        if base is not None and forward_or_none is not None:
            self.diagnostics.append(
                codes.diag(
                    "S128",
                    f"model '{name}' is a variant of '{base.func}': its layers and forward are "
                    "the block's, so it cannot have a forward of its own",
                    forward_or_none.span,
                    hint=f"remove 'def forward', or write 'model {name}:' with a forward",
                )
            )
            forward_or_none = None
        return ast.Model(
            name,
            name_span,
            tuple(fields),
            forward_or_none,
            item.span,
            params,
            tuple(budgets),
            base,
            tuple(inits),
        )

    def _variant_base(self, name: str) -> ast.Call:
        """``= ResNet(Bottleneck, [3, 4, 6, 3])`` after a model's name."""
        self.advance()
        token = self.expect_name(f"a block call after 'model {name} ='")
        if not self.at_op("("):
            span = token_span(token)
            return ast.Call(token.text, span, (), (), (), span)
        self.pos -= 1
        value = self.expr()
        if not isinstance(value, ast.Call) or value.suffixes:
            self.fail(
                "P006",
                f"expected a block call after 'model {name} =', such as ResNet(Bottleneck, [3, 4])",
                value.span,
            )
        return value

    def _init_rule(self, item: Item) -> ast.InitRule:
        """``init dense: normal(0.02)`` / ``init *.c_proj.weight: normal(0.02)``."""
        self.start(item.line)
        keyword = self.advance()
        parts: list[str] = []
        first = self.peek()
        while (token := self.peek()) is not None and not token.is_op(":"):
            if token.kind is Kind.STRING:
                parts.append(str(token.value))
            elif token.kind in (Kind.NAME, Kind.NUMBER) or token.text in (".", "*"):
                parts.append(token.text)
            else:
                self.fail(
                    "P006",
                    f"unexpected {self.describe(token)} in the target of 'init'",
                    token.span,
                    hint="init dense: normal(0.02), or init *.c_proj.weight: normal(0.02)",
                )
            self.advance()
        if first is None or not parts:
            self.fail(
                "P006",
                "expected an operation or a parameter name pattern after 'init'",
                self.here(),
                hint="init dense: normal(0.02)",
            )
        target_span = self.span_from(first.span)
        self.expect_op(":", "after the target of 'init'")
        if self.peek() is None:
            self.fail(
                "P006", "expected an initialiser after ':', such as normal(0.02)", self.here()
            )
        spec = self.expr()
        self.end_of_statement("initialiser")
        return ast.InitRule("".join(parts), target_span, spec, self.span_from(keyword.span))

    def _budget(self, item: Item) -> ast.Budget:
        """``budget params <= 25M, macs <= 4.1G, activations <= 2GiB at batch 32``."""
        self.start(item.line)
        keyword = self.advance()
        limits: list[ast.BudgetLimit] = []
        while True:
            metric = self.expect_name("a budget metric (params, macs, flops or activations)")
            if metric.text not in BUDGET_METRICS:
                self.fail(
                    "S112",
                    f"unknown budget metric '{metric.text}'",
                    metric.span,
                    hint="budget params, macs, flops or activations",
                )
            self.expect_op("<=", f"after '{metric.text}' in a budget line")
            amount = self._whole_number(f"an amount after '{metric.text} <='")
            span = self.span_from(metric.span)
            count = int(amount.value or 0)
            limits.append(ast.BudgetLimit(metric.text, metric.span, count, amount.text, span))
            if not self.at_op(","):
                break
            self.advance()
        at: list[tuple[str, int]] = []
        if self.at_name("at"):
            self.advance()
            while True:
                name = self.expect_name("a size name after 'at' (batch 32, seq 512)")
                if self.at_op("="):
                    self.advance()
                value = self._whole_number(f"a number for '{name.text}'")
                if int(value.value or 0) < 1:
                    # a profile at batch 0 divides by it; no size is 0 (dim() starts at 1)
                    self.fail(
                        "S112",
                        f"budget 'at {name.text} {value.text}': a batch or size is at least 1",
                        value.span,
                        hint=f"write 'at {name.text} 1' or larger",
                    )
                at.append((name.text, int(value.value or 0)))
                if not self.at_op(","):
                    break
                self.advance()
        self.end_of_statement("budget line")
        return ast.Budget(tuple(limits), tuple(at), self.span_from(keyword.span))

    def _whole_number(self, what: str) -> Token:
        token = self.peek()
        if token is None or token.kind is not Kind.NUMBER or isinstance(token.value, float):
            found = self.describe(token)
            self.fail(
                "S112",
                f"expected {what}, found {found}",
                self.here(),
                hint="write a whole number, optionally with a unit: 25M, 4.1G, 2GiB",
            )
        self.pos += 1
        return token

    def _model_params(self, model: str) -> tuple[ast.ModelParam, ...]:
        """``(width, stride: int = 1)`` after a model name: the block's parameters."""
        opener = self.advance()
        params: list[ast.ModelParam] = []
        while not self._close(opener, ")", f"the parameters of model '{model}'"):
            name = self.expect_name(f"a parameter name in model '{model}'")
            if any(p.name == name.text for p in params):
                self.fail(
                    "S040",
                    f"parameter '{name.text}' of model '{model}' is declared twice",
                    name.span,
                    hint="give each parameter its own name",
                )
            annotation: str | None = None
            if self.at_op(":"):
                self.advance()
                kind = self.expect_name("a type after ':' (int, float, bool or str)")
                if kind.text not in _PARAM_TYPES:
                    self.fail(
                        "S040",
                        f"unknown parameter type '{kind.text}'; use int, float, bool or str",
                        kind.span,
                    )
                annotation = kind.text
            default: ast.Expr | None = None
            if self.at_op("="):
                self.advance()
                default = self.expr()
            elif params and params[-1].default is not None:
                self.fail(
                    "S040",
                    f"parameter '{name.text}' without a default follows one with a default",
                    name.span,
                    hint="put parameters with defaults last",
                )
            span = self.span_from(token_span(name))
            params.append(ast.ModelParam(name.text, token_span(name), annotation, default, span))
            if not self.at_op(")"):
                self._comma(opener, ")", f"the parameters of model '{model}'")
        return tuple(params)

    def _second_forward(self, model: str, first: ast.Forward, second: ast.Forward) -> None:
        self.diagnostics.append(
            codes.diag(
                "P006",
                f"model '{model}' already has a forward body (at {first.span})",
                second.span,
                hint="merge the two bodies into one 'def forward(x):'",
            )
        )

    def _forward(self, item: Item) -> ast.Forward:
        self.start(item.line)
        start = self.advance().span
        name = self.expect_name("'forward' after 'def'")
        if name.text != "forward":
            self.fail(
                "P006",
                f"expected 'forward' after 'def', found '{name.text}'",
                name.span,
                hint="a model has exactly one 'def forward(x):'",
            )
        self.expect_op("(", "after 'def forward'")
        params = [self._forward_param()]
        while self.at_op(","):
            self.advance()
            if self.at_op(")"):
                break
            param = self._forward_param()
            if any(p.name == param.name for p in params):
                self.fail(
                    "P042",
                    f"'{param.name}' is a forward parameter twice",
                    param.name_span,
                    hint="give each input its own name",
                )
            if params[-1].default is not None and param.default is None:
                self.fail(
                    "P043",
                    f"the required input '{param.name}' follows an input with a default",
                    param.name_span,
                    hint="put the inputs with defaults last",
                )
            params.append(param)
        self.expect_op(")", "after the forward parameters")
        if params[0].default is not None:
            self.fail(
                "P043",
                f"the first input '{params[0].name}' cannot have a default: the defaults "
                "are built at its batch size",
                params[0].default.span,
                hint=f"make '{params[0].name}' required",
            )
        self.header_end("forward")
        header = self.span_from(start)
        body = self._forward_body(self.body(item, "forward", header))
        first = params[0]
        several = tuple(params) if len(params) > 1 or first.default is not None else ()
        return ast.Forward(first.name, first.name_span, tuple(body), item.span, several)

    def _forward_param(self) -> ast.ForwardParam:
        """``ids`` or ``mask=ones``: one input of the forward, with its default."""
        name = self.expect_name("an input name in 'def forward(x):'")
        span = token_span(name)
        default: ast.Expr | None = None
        if self.at_op("="):
            self.advance()
            if self.peek() is None or self.at_op(",") or self.at_op(")"):
                self.fail(
                    "P044",
                    f"expected a default after '{name.text}='",
                    self.here(),
                    hint="a default is ones, zeros or a number",
                )
            default = self.expr()
            if isinstance(default, ast.NoneLit):
                self.fail(
                    "P044",
                    f"an absent input ('{name.text}=none') is not supported yet",
                    default.span,
                    hint=f"give it a tensor default: {name.text}=ones, {name.text}=zeros or "
                    f"{name.text}=0",
                )
            if not _is_input_default(default):
                self.fail(
                    "P044",
                    f"the default of the input '{name.text}' must be ones, zeros or a number",
                    default.span,
                    hint=f"write {name.text}=ones, {name.text}=zeros or {name.text}=0",
                )
        return ast.ForwardParam(name.text, span, default, self.span_from(span))

    def _forward_body(self, items: list[Item]) -> list[ast.ForwardStmt]:
        body: list[ast.ForwardStmt] = []
        parse = self._forward_statement
        index = 0
        while index < len(items):
            item = items[index]
            if body and isinstance(body[-1], ast.Return):
                self._after_return(body[-1], item)
                break
            word = _control_word(item.line)
            if word == "if":
                found, index = self._if(items, index)
                if found is not None:
                    body.append(found)
                continue
            index += 1
            if word in ("elif", "else"):
                self.diagnostics.append(
                    codes.diag(
                        "P006",
                        f"'{word}' without an 'if' before it",
                        item.line.tokens[0].span,
                        hint=f"put '{word}' right after the 'if' block it continues",
                    )
                )
            elif word == "for":
                if (loop := self.guarded(item, self._for)) is not None:
                    body.append(loop)
            elif item.children:
                body.extend(self.each([item], parse))
            elif (statement := self.guarded(item, parse)) is not None:  # ``each``, one line
                body.append(statement)
        return body

    # ------------------------------------------------------------ compile-time control

    def _nested_body(self, item: Item, what: str, header: Span) -> tuple[ast.ForwardStmt, ...]:
        """The statements of an ``if``/``for`` block, one nesting level deeper."""
        self._nesting += 1
        try:
            if self._nesting > MAX_DEPTH:
                self.fail(
                    "P011",
                    f"'if' and 'for' blocks nested more than {MAX_DEPTH} levels deep",
                    header,
                    hint="flatten the nesting, or move the inner part into a block",
                )
            return tuple(self._forward_body(self.body(item, what, header)))
        finally:
            self._nesting -= 1

    def _branch(self, item: Item, *, keyword: str) -> ast.Branch:
        self.start(item.line)
        first = self.advance()
        test = None
        if keyword != "else":
            if self.at_op(":") or self.peek() is None:
                self.fail("P006", f"expected a condition after '{keyword}'", self.here())
            test = self.expr()
        self.header_end(keyword)
        header = self.span_from(first.span)
        body = self._nested_body(item, f"'{keyword}'", header)
        return ast.Branch(keyword, test, body, header, item.span)

    def _if(self, items: list[Item], index: int) -> tuple[ast.If | None, int]:
        """``if`` and the ``elif``/``else`` blocks after it; returns the index after them."""
        branches: list[ast.Branch] = []
        broken = False
        keyword = "if"
        while True:
            branch = self.guarded(items[index], functools.partial(self._branch, keyword=keyword))
            broken |= branch is None
            if branch is not None:
                branches.append(branch)
            index += 1
            if keyword == "else" or index >= len(items):
                break
            keyword = _control_word(items[index].line) or ""
            if keyword not in ("elif", "else"):
                break
        if broken or not branches:
            return None, index
        span = branches[0].span.merge(branches[-1].span)
        return ast.If(tuple(branches), span), index

    def _for(self, item: Item) -> ast.For:
        self.start(item.line)
        first = self.advance()
        target = self._loop_target(top=True)
        names: dict[str, Span] = {}
        for name, span in target.names():
            if name in names:
                self.fail(
                    "P040",
                    f"'{name}' is bound twice in one loop target",
                    span,
                    hint="give each loop variable its own name",
                )
            names[name] = span
        if not self.at_name("in"):
            found = self.describe(self.peek())
            self.fail(
                "P006",
                f"expected 'in' after the loop variables, found {found}",
                self.here(),
                hint="for i in range(4):",
            )
        self.advance()
        if self.at_op(":") or self.peek() is None:
            self.fail("P006", "expected what to loop over after 'in'", self.here())
        iterable = self.expr()
        self.header_end("for")
        header = self.span_from(first.span)
        body = self._nested_body(item, "'for'", header)
        return ast.For(target, iterable, body, header, item.span)

    def _loop_target(self, *, top: bool) -> ast.LoopTarget:
        start = self.here()
        items = [self._target_item()]
        trailing = False  # `for a, in pairs`: a one-name tuple target, as Python reads it
        while self.at_op(","):
            self.advance()
            if self.at_name("in") or self.at_op(")"):
                trailing = True
                break
            items.append(self._target_item())
        if len(items) == 1 and top and not trailing:
            return items[0]
        return ast.LoopTarget(None, tuple(items), self.span_from(start))

    def _target_item(self) -> ast.LoopTarget:
        if self.at_op("("):
            opener = self.advance()
            self._enter(opener)
            inner = self._loop_target(top=False)
            self.expect_op(")", f"to close the '(' at {opener.span} in the loop variables")
            self._depth -= 1
            return ast.LoopTarget(None, inner.items, self.span_from(opener.span))
        name = self.expect_name("a loop variable name")
        if name.text in _CONTROL_WORDS or name.text in ("in", "not", "and", "or"):
            self.fail("P006", f"'{name.text}' cannot be a loop variable", name.span)
        return ast.LoopTarget(name.text, (), token_span(name))

    def _after_return(self, ret: ast.Return, item: Item) -> None:
        self.diagnostics.append(
            codes.diag(
                "P012",
                f"statement after 'return' (at {ret.span}); nothing may follow "
                "return in a forward body",
                item.line.span,
                hint="move the statement before 'return' or delete it",
            )
        )

    def _multi_assignment(self, first: Token) -> ast.Assign:
        """``a, b = chunk(x, 2, dim=-1)``: one name per piece of a split."""
        names = [first]
        self.pos = 1
        while self.at_op(","):
            self.advance()
            name = self.expect_name("a name after ',' on the left of '='")
            if any(n.text == name.text for n in names):
                self.fail(
                    "P040",
                    f"'{name.text}' is bound twice in one statement",
                    name.span,
                    hint="give each piece its own name",
                )
            names.append(name)
        self.expect_op("=", "after the names being bound")
        value = self.assigned_value("'='")
        if self.pos < len(self.tokens):
            self.end_of_statement(f"value of '{', '.join(n.text for n in names)}'")
        targets = tuple((n.text, token_span(n)) for n in names)
        span = token_span(first)
        return ast.Assign(first.text, span, value, self.span_from(span), targets)

    def _forward_statement(self, item: Item) -> ast.ForwardStmt:
        self.start(item.line)
        toks = self._toks
        first = toks[0]
        if first.kind is Kind.NAME and first.text == "return":
            self.advance()
            value = self.assigned_value("'return'")
            if self.at_op(","):  # return a, b: several outputs
                items = [value]
                while self.at_op(","):
                    self.advance()
                    items.append(self.assigned_value("',' in 'return'"))
                value = ast.TupleExpr(tuple(items), items[0].span.merge(items[-1].span))
            self.end_of_statement("return value")
            return ast.Return(value, self.span_from(first.span))
        if first.kind is Kind.NAME and toks[1].text == "=":
            return self.assignment(first, _ASSIGN)
        if first.kind is Kind.NAME and toks[1].text == ",":
            return self._multi_assignment(first)
        value = self.value()
        if not isinstance(value, ast.Chain):
            self.fail(
                "P006",
                "expected a chain 'x -> op(...)', an assignment 'name = ...' or "
                f"'return', found {self.describe(first)}",
                first.span,
            )
        self.end_of_statement("chain")
        return _CHAIN_STMT(value, value.span)


_PARAM_TYPES = frozenset({"int", "float", "bool", "str"})
_CONTROL_WORDS = frozenset({"if", "elif", "else", "for"})


def _is_input_default(expr: ast.Expr) -> bool:
    """``ones``, ``zeros``, ``none`` or a (signed) number: what an input's default may be."""
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
        return isinstance(expr, ast.Number)
    if isinstance(expr, ast.Name):
        return expr.id in ("ones", "zeros")
    return isinstance(expr, ast.Number | ast.Bool)


def _control_word(line: LogicalLine) -> str | None:
    """``if``/``elif``/``else``/``for`` starting a line (not ``if = 3``, a field)."""
    tokens = line.tokens
    first = tokens[0]
    if first.kind is not Kind.NAME or first.text not in _CONTROL_WORDS:
        return None
    if len(tokens) > 1 and tokens[1].kind is Kind.OP and tokens[1].text in ("=", ","):
        return None
    return first.text


def _is_init(line: LogicalLine) -> bool:
    """``init dense: ...``: not ``init = 3`` (a model constant named init)."""
    tokens = line.tokens
    return tokens[0].text == "init" and len(tokens) > 1 and not tokens[1].is_op("=")


_HEADER_WORDS = frozenset({"model", "dataset", "experiment", "train", "train_gan", "def"})
