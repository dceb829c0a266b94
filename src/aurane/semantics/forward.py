"""Semantic checks of one forward body: tensor names, operations, arguments and suffixes."""

from __future__ import annotations

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.ops.spec import BoundArgs
from aurane.semantics.binding import bind_arguments
from aurane.semantics.suggest import did_you_mean
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

    def run(self, forward: ast.Forward) -> None:
        self.defined[forward.param] = forward.param_span
        for stmt in forward.body:
            match stmt:
                case ast.Assign(target=target, target_span=span, value=value):
                    self.tensor(value)
                    self.defined[target] = span
                case ast.ChainStmt(chain=chain):
                    self.tensor(chain)
                    if isinstance(chain.source, ast.Name):
                        self.defined[chain.source.id] = chain.source.span
                case ast.Return(value=value):
                    self.tensor(value)

    def tensor(self, expr: ast.Expr) -> None:
        match expr:
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
        if name in self.model_names:
            self.block_call(call, graph)
        elif (spec := ops.lookup(name)) is not None:
            self.op_call(call, spec, graph)
        else:
            candidates = [*ops.CATALOG, *ops.ALIASES, *self.model_names]
            hint = (
                self.suffix_on_name_hint(name)
                or did_you_mean(name, candidates)
                or "see docs/language.md for the catalog"
            )
            self.out.append(diag("S001", f"unknown operation '{name}'", call.func_span, hint=hint))
        for suffix in call.suffixes:
            self.suffix(suffix)

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
            return 0
        taken = len(call.args) if count is None else min(count, len(call.args))
        if taken < minimum:
            need = "at least two input tensors" if count is None else "its input tensor first"
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
        taken = self.inputs(call, spec.max_inputs, spec.min_inputs, graph)
        bound, problems = bind_arguments(
            spec.params, call.args[taken:], call.keywords, owner=spec.name, owner_span=call.span
        )
        self.out.extend(problems)
        self.bound[id(call)] = bound
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

    def block_call(self, call: ast.Call, graph: bool) -> None:
        taken = self.inputs(call, 1, 1, graph)
        extra = call.args[taken:] or call.keywords
        if extra:
            self.out.append(
                diag(
                    "S006",
                    f"model '{call.func}' used as an operation takes no arguments",
                    extra[0].span,
                )
            )
        self.calls.append((call.func, call.func_span))

    def suffix(self, suffix: ast.Suffix) -> None:
        if suffix.name == "residual":
            if suffix.args or suffix.keywords:
                self.out.append(diag("S006", "'.residual' takes no arguments", suffix.span))
            return
        spec = ops.lookup(suffix.name)
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
