"""Semantic checks of one forward body: tensor names, operations, arguments and suffixes."""

from __future__ import annotations

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ops.spec import BoundArgs, TensorName
from aurane.semantics.binding import bind_arguments
from aurane.semantics.constants import value_call
from aurane.semantics.inits import check_layer_init, split_init
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.tying import check_tie, split_tie
from aurane.semantics.unroll import label_new
from aurane.source import Span
from aurane.syntax import ast

SUFFIX_NAMES = ("residual",)


class ForwardChecker:
    """Checks one forward body: tensor names defined before use, operations, arguments."""

    def __init__(
        self, model_names: set[str], out: list[Diagnostic], bound: dict[int, BoundArgs]
    ) -> None:
        self.bound = bound
        self.model_names = model_names
        self.out = out
        self.calls: list[tuple[str, Span]] = []
        self.defined: dict[str, Span] = {}
        self.parameterised: frozenset[str] = frozenset()  # models that take arguments
        self.deferred = False  # a parameterised body: arguments are checked per call
        # deferred: names that may hold an operation or model (act(), block(64), .act)
        self.constant_names: frozenset[str] = frozenset()
        # constants a deferred body reads by name (its parameters, the model's and the
        # program's constants): values, not tensors (resolved per call)
        self.constants: frozenset[str] = frozenset()
        # a block with several inputs: its forward's parameters, each with its default
        self.block_inputs: dict[str, tuple[ast.ForwardParam, ...]] = {}

    def run(self, forward: ast.Forward) -> None:
        self.defined.update((p.name, p.name_span) for p in forward.inputs)
        self.body(forward.body)

    def body(self, statements: tuple[ast.ForwardStmt, ...]) -> None:
        for stmt in statements:
            before = len(self.out)
            match stmt:
                case ast.If(branches=branches):  # a deferred body: every branch
                    for branch in branches:
                        self.body(branch.body)
                case ast.For(body=body):
                    self.body(body)
                case ast.Assign(target=target, target_span=span, value=value):
                    self.tensor(value, target if not stmt.targets else None)
                    self.defined[target] = span
                    if stmt.targets:
                        self.pieces(stmt)
                case ast.ChainStmt(chain=chain):
                    self.tensor(chain)
                    if isinstance(chain.source, ast.Name):
                        self.defined[chain.source.id] = chain.source.span
                case ast.Return(value=ast.TupleExpr(items=items)):  # return a, b
                    for item in items:
                        self.tensor(item)
                case ast.Return(value=value):
                    self.tensor(value)
            label_new(self.out, before, getattr(stmt, "origin", ()))

    def pieces(self, stmt: ast.Assign) -> None:
        """``a, b = chunk(...)``: several names need an operation with several outputs."""
        self.defined.update(stmt.targets)
        value = stmt.value
        splits = isinstance(value, ast.Call) and not value.suffixes and ops.canonical(value.func)
        # a model, or a name that may hold one (`down(x, temb, 64)`: a block-valued parameter)
        block = (
            isinstance(value, ast.Call)
            and not value.suffixes
            and (value.func in self.model_names or ops.lookup(value.func) is None)
        )
        if splits not in ("split", "chunk") and not block:
            names = ", ".join(name for name, _ in stmt.targets)
            self.out.append(
                diag(
                    "S065",
                    f"{len(stmt.targets)} names ({names}) need an operation with several "
                    "outputs; only split, chunk and blocks that return several have them",
                    value.span,
                    hint="write a, b = chunk(x, 2, dim=-1) or bind one name",
                )
            )

    def tensor(self, expr: ast.Expr, target: str | None = None) -> None:
        """Check a tensor expression; ``target``: the name an assignment binds it to."""
        match expr:
            case ast.Name(id=name, span=span) if name in self.constants:
                if name not in self.defined:
                    self.out.append(
                        diag(
                            "S017",
                            f"expected a tensor, but '{name}' is a constant",
                            span,
                            hint="a tensor comes from the forward parameter or an assignment; "
                            "a constant is an argument: multiply(x, " + name + ")",
                        )
                    )
            case ast.Name(id=name, span=span):
                if name not in self.defined:
                    hint = (
                        self.suffix_on_name_hint(name)
                        or did_you_mean(name, self.defined)
                        or "tensors come from the forward parameter or earlier assignments"
                    )
                    self.out.append(diag("S007", f"undefined tensor '{name}'", span, hint=hint))
            case ast.Call():
                self.call(expr, graph=True)
            case ast.Chain(source=source, steps=steps):
                self.tensor(source)
                for step in steps:
                    self.call(step, graph=False)
            case ast.BinOp() | ast.UnaryOp() | ast.Number() if target is not None:
                self.out.append(
                    diag(
                        "S017",
                        f"'{target}' is computed from constants: forward binds tensors",
                        expr.span,
                        hint="define the constant before 'def forward', in the model or "
                        f"globally ({target} = ...), and use it as an argument",
                    )
                )
            case _:
                self.out.append(
                    diag(
                        "S017",
                        "expected a tensor: a name or an operation",
                        expr.span,
                        hint="graph calls take their input tensor first, e.g. dense(x, 4)",
                    )
                )

    def suffix_on_name_hint(self, dotted: str) -> str | None:
        """`y.relu`: suffixes follow operations, not tensor names; suggest the call form."""
        head, _, tail = dotted.partition(".")
        if head not in self.defined or "." in tail:
            return None
        spec = ops.lookup(tail)
        if tail == "residual":
            return f"suffixes follow an operation, not a tensor name; write add({head}, ...)"
        if spec is not None and spec.is_activation:
            return (
                f"suffixes follow an operation, not a tensor name; write {tail}({head}) "
                "or put the suffix on the operation that produced it"
            )
        return None

    def call(self, call: ast.Call, *, graph: bool) -> None:
        name = call.func
        if self.deferred and name in self.constant_names and name not in self.model_names:
            return  # act(), block(64): an operation-valued parameter, checked per call
        if call.splice:
            self.splice(call)
        if name in self.model_names:
            self.block_call(call, graph)
        elif (spec := ops.lookup(name)) is not None:
            self.op_call(call, spec, graph)
        else:
            candidates = [*ops.CATALOG, *ops.ALIASES, *self.model_names]
            hint = (
                self.suffix_on_name_hint(name)
                or did_you_mean(name, candidates)
                or "see docs/catalog.md for the operations"
            )
            self.out.append(diag("S001", f"unknown operation '{name}'", call.func_span, hint=hint))
        for suffix in call.suffixes:
            self.suffix(suffix)

    def is_tensor(self, expr: ast.Expr) -> bool:
        """A tensor expression, not a value (constants are literals by now, except the
        names a deferred body reads)."""
        if isinstance(expr, ast.Name):
            return expr.id not in self.constants or expr.id in self.defined
        constant = self.constants.__contains__
        return isinstance(expr, ast.Call | ast.Chain) and not value_call(expr, constant)

    def inputs(self, call: ast.Call, count: int | None, minimum: int, graph: bool) -> int:
        """Check the tensor inputs of a call; return how many leading positionals they take."""
        if not graph:
            if count is None:
                self.out.append(
                    diag(
                        "S017",
                        f"'{call.func}' joins named tensors and cannot be a chain step",
                        call.func_span,
                        hint=f"write it in graph form: y = {call.func}(a, b)",
                    )
                )
                return len(call.args)
            if minimum > 1:  # a chain step has one input: the running value
                names = ", ".join("abcdefgh"[:minimum])
                self.out.append(
                    diag(
                        "S017",
                        f"'{call.func}' takes {minimum} input tensors and cannot be a chain step",
                        call.func_span,
                        hint=f"write it in graph form: y = {call.func}({names})",
                    )
                )
            return 0
        taken = len(call.args) if count is None else min(count, len(call.args))
        if taken < minimum:
            need = (
                "at least two input tensors"
                if count is None
                else "its input tensor first"
                if minimum == 1
                else f"its {minimum} input tensors first"
            )
            self.out.append(
                diag(
                    "S017" if count is not None else "S005",
                    f"'{call.func}' needs {need}",
                    call.span,
                    hint=f"e.g. {call.func}(x, ...)" if count else None,
                )
            )
        for arg in call.args[:taken]:
            self.tensor(arg)
        return taken

    def op_call(self, call: ast.Call, spec: ops.OpSpec, graph: bool) -> None:
        count = spec.max_inputs
        if graph and count is not None and count > spec.min_inputs:  # multihead_attention
            count = spec.graph_inputs(call.args, self.is_tensor)
        taken = self.inputs(call, count, spec.min_inputs, graph)
        if self.deferred:  # values depend on the block's parameters: checked per call
            self._deferred_repeat(call, spec, taken)
            return
        keywords, _ = split_tie(call.keywords)  # tie= is no argument of the operation
        self.out.extend(check_tie(spec.name, call.keywords))
        keywords, init = split_init(keywords, spec.name)  # nor is init=normal(0.02)
        if init is not None:
            self.out.extend(check_layer_init(spec.name, init)[1])
        bound, problems = bind_arguments(
            spec.params, call.args[taken:], keywords, owner=spec.name, owner_span=call.span
        )
        self.out.extend(problems)
        self.bound[id(call)] = bound
        for entry in bound.values.values():
            if isinstance(entry.value, TensorName) and entry.span is not None:
                self.tensor(ast.Name(entry.value.name, entry.span))  # attn_mask=pad: defined?
        if spec.name == "repeat" and bound.given("block"):
            block = bound["block"]
            span = bound.span("block") or call.span
            if block not in self.model_names:
                self.out.append(
                    diag(
                        "S012",
                        f"'{block}' is not a model of this program",
                        span,
                        hint=did_you_mean(block, self.model_names),
                    )
                )
            else:
                self.calls.append((block, span))
                self._block_arguments(call.args[0] if call.args else None, block)

    def _deferred_repeat(self, call: ast.Call, spec: ops.OpSpec, taken: int) -> None:
        """The block a deferred ``repeat`` calls: after its tensor input in the graph form
        (``repeat(x, Inner(8), 2)``), first in a chain (``-> repeat(Inner(8), 2)``)."""
        if spec.name != "repeat" or len(call.args) <= taken:
            return
        first = call.args[taken]
        name = first.func if isinstance(first, ast.Call) else getattr(first, "id", None)
        if name in self.model_names:
            self.calls.append((name, first.span))

    def _block_arguments(self, expr: ast.Expr | None, block: str) -> None:
        """``repeat(Block(64), 2)``: arguments only for a block that declares parameters."""
        if not isinstance(expr, ast.Call) or block in self.parameterised:
            return
        extra = expr.args or expr.keywords
        if extra:
            self.out.append(
                diag(
                    "S006",
                    f"model '{block}' declares no parameters and takes no arguments",
                    extra[0].span,
                    hint=f"declare them in its header: model {block}(width):",
                )
            )

    def block_call(self, call: ast.Call, graph: bool) -> None:
        params = self.block_inputs.get(call.func, ())
        if len(params) > 1:
            taken = self.block_tensors(call, params, graph)
        else:
            taken = self.inputs(call, 1, 1, graph)
        extra = call.args[taken:] or call.keywords
        if call.func in self.parameterised:  # bound and checked per call by lowering
            self.calls.append((call.func, call.func_span))
            # ResNet(Bottleneck, [3, 4]): a model given as an argument is called too
            for value in (*call.args[taken:], *(k.value for k in call.keywords)):
                name = value.id if isinstance(value, ast.Name) else getattr(value, "name", None)
                if name in self.model_names:
                    self.calls.append((name, value.span))
            return
        if extra:
            self.out.append(
                diag(
                    "S006",
                    f"model '{call.func}' used as an operation takes no arguments",
                    extra[0].span,
                )
            )
        self.calls.append((call.func, call.func_span))

    def block_tensors(
        self, call: ast.Call, params: tuple[ast.ForwardParam, ...], graph: bool
    ) -> int:
        """``Encoder(x, mask)``: one tensor per input, in order; S151 for a missing required
        one. In a chain the running value is the first input."""
        given = [] if not graph else list(call.args[: len(params)])
        taken = 0
        while taken < len(given) and (taken == 0 or self.is_tensor(given[taken])):
            taken += 1
        have = taken if graph else 1
        missing = [p for p in params[have:] if p.default is None]
        if missing:
            names = ", ".join(f"'{p.name}'" for p in missing)
            self.out.append(
                diag(
                    "S151",
                    f"block '{call.func}' needs its input{'s' * (len(missing) > 1)} {names}: "
                    f"it takes {', '.join(p.name for p in params)}",
                    call.span,
                    hint=f"pass one tensor per input: {call.func}("
                    + ", ".join(p.name for p in params if p.default is None)
                    + ")"
                    + ("" if graph else " in graph form, not as a chain step"),
                    labels=(Label(missing[0].name_span, "input declared here"),),
                )
            )
        for arg in call.args[:taken]:
            self.tensor(arg)
        return taken

    def splice(self, call: ast.Call) -> None:
        """``-> *Block(64) as features``: a block's layers, into a named container."""
        if call.func not in self.model_names:
            self.out.append(
                diag(
                    "S129",
                    f"only a block call can be spliced; '{call.func}' is no model of this program",
                    call.func_span,
                    hint=f"drop the '*': -> {call.func}(...)",
                )
            )
        elif call.layer is None:
            self.out.append(
                diag(
                    "S129",
                    f"splicing '{call.func}' puts its layers into a container: name it",
                    call.span,
                    hint=f"-> *{call.func}(...) as features",
                )
            )

    def suffix(self, suffix: ast.Suffix) -> None:
        if self.deferred and suffix.name in self.constant_names:
            return  # .act with act a parameter: checked per call
        if suffix.name == "residual":
            if suffix.args or suffix.keywords:
                self.out.append(diag("S006", "'.residual' takes no arguments", suffix.span))
            return
        spec = ops.lookup(suffix.name)
        if spec is not None and spec.is_activation and self.deferred:
            return
        if spec is None or not spec.is_activation:
            names = [n for n, s in ops.CATALOG.items() if s.is_activation] + list(SUFFIX_NAMES)
            hint = did_you_mean(suffix.name, names) or "suffixes are activations or .residual"
            self.out.append(
                diag("S016", f"unknown suffix '.{suffix.name}'", suffix.name_span, hint=hint)
            )
            return
        bound, problems = bind_arguments(
            spec.params, suffix.args, suffix.keywords, owner=spec.name, owner_span=suffix.span
        )
        self.out.extend(problems)
        self.bound[id(suffix)] = bound
