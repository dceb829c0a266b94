"""Compile-time control in forward bodies: ``if``/``elif``/``else`` chosen, ``for`` unrolled.

Constant resolution (``constants.py``) flattens a forward body into the assignments, chains
and returns the model really has: an ``if`` keeps the statements of the branch whose
condition holds, a ``for`` repeats its body once per item with the loop variables bound as
constants. Every statement that comes from a loop or a branch records where
(``ast.Origin``: ``in iteration i = 2 of the loop at 12:9``), so each later diagnostic can
say which iteration or branch produced it (``origin_labels``). Nothing of the control
exists after this: lowering, code generation and the tools see ordinary statements.

Errors are located at the condition, the iterable or the loop variables: a condition or a
loop that reads a tensor (S120, S121), an item that does not unpack (S122), too many
iterations (S123). Limits: ``MAX_ITERATIONS`` per loop, ``MAX_UNROLLED`` statements per
body (docs/limits.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.records import field, fields, is_record, record, replace
from aurane.semantics.symbolic import plain
from aurane.semantics.values import OpValue, show, type_name
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.printer import expr_text

MAX_ITERATIONS = 10_000  # as repeat's count (T116)
MAX_UNROLLED = 20_000  # statements one forward body unrolls into (as T117's operations)


class Failed(Exception):
    """Evaluation failed; the diagnostic (if any) was already recorded."""


@record
class Unrolling:
    """One forward body being unrolled."""

    param: str  # the forward's input name
    input_shape: tuple[Any, ...] | None  # its per-sample shape, when known (x.shape[k])
    tensors: frozenset[str]  # names bound to tensors anywhere in the body
    count: int = 0  # statements produced
    returned: bool = False
    origin: tuple[ast.Origin, ...] = ()  # of the statement being resolved
    # template name span -> name it gave -> the iteration that gave it
    names: dict[Span, dict[str, str]] = field(default_factory=dict)
    context: str | None = None  # "if" or "for" while evaluating a condition or iterable
    rebound: Span | None = None  # where a statement first rebound the input's name


def tensor_names(forward: ast.Forward) -> frozenset[str]:
    """The forward input and every name a statement of the body binds to a tensor."""
    names = set(forward.input_names)
    for stmt in ast.simple_statements(forward.body):
        match stmt:
            case ast.Assign(target=target, targets=targets):
                names.add(target)
                names.update(name for name, _ in targets)
            case ast.ChainStmt(chain=ast.Chain(source=ast.Name(id=source))):
                names.add(source)
    return frozenset(names)


def has_control(forward: ast.Forward | None) -> bool:
    return forward is not None and any(isinstance(s, ast.If | ast.For) for s in forward.body)


def reads_input_shape(model: ast.Model) -> bool:
    """Whether the forward reads its input's sizes (``x.shape[k]``)."""
    if model.forward is None:
        return False
    wanted = model.forward.param + ".shape"
    pending: list[object] = [model.forward.body]
    while pending:
        item = pending.pop()
        if isinstance(item, ast.Name):
            if item.id == wanted:
                return True
        elif isinstance(item, tuple):
            pending.extend(item)
        elif is_record(item) and not isinstance(item, Span | type):
            pending.extend(getattr(item, member.name) for member in fields(item))
    return False


def origin_labels(origin: tuple[ast.Origin, ...]) -> tuple[Label, ...]:
    """One label per loop iteration or branch a statement came from, innermost last."""
    return tuple(Label(frame.span, frame.text) for frame in origin)


def label_new(diagnostics: list[Diagnostic], before: int, origin: tuple[ast.Origin, ...]) -> None:
    """Add ``origin``'s labels to the diagnostics found since index ``before``."""
    if not origin:
        return
    labels = origin_labels(origin)
    for index in range(before, len(diagnostics)):
        found = diagnostics[index]
        missing = tuple(label for label in labels if label not in found.labels)
        if missing:
            diagnostics[index] = replace(found, labels=(*found.labels, *missing))


def origin_text(origin: tuple[ast.Origin, ...]) -> str:
    return ", ".join(frame.text for frame in origin)


class ControlFlow(ABC):
    """The unrolling half of the constant resolver (mixed into ``constants._Resolver``)."""

    diagnostics: list[Diagnostic]
    failed_spans: set[Span]
    unrolling: Unrolling | None

    @abstractmethod
    def evaluate(self, expr: ast.Expr, scope: Any) -> Any:
        """The constant value of ``expr`` in ``scope``; raises ``Failed`` once reported."""

    @abstractmethod
    def child_scope(self, scope: Any, values: dict[str, tuple[Any, Span]]) -> Any:
        """A scope inside ``scope`` binding each name to a value (declared at a span)."""

    @abstractmethod
    def simple_statement(self, stmt: ast.SimpleStmt, scope: Any) -> ast.SimpleStmt | None:
        """``stmt`` resolved (None: it applies nothing, e.g. ``x -> act()`` with none)."""

    # -------------------------------------------------------------- bodies

    def unroll(
        self, body: tuple[ast.ForwardStmt, ...], scope: Any, origin: tuple[ast.Origin, ...]
    ) -> list[ast.SimpleStmt]:
        state = self.unrolling
        assert state is not None
        out: list[ast.SimpleStmt] = []
        for stmt in body:
            if state.returned:
                break
            match stmt:
                case ast.If():
                    out += self._if(stmt, scope, origin)
                case ast.For():
                    out += self._for(stmt, scope, origin)
                case _:
                    state.count += 1
                    if state.count > MAX_UNROLLED:
                        self._too_many(stmt.span, origin)
                    state.origin = origin
                    resolved = self.simple_statement(stmt, scope)
                    if resolved is None:
                        continue
                    if origin:
                        resolved = replace(resolved, origin=origin)
                    if state.rebound is None and _binds(resolved, state.param):
                        state.rebound = resolved.span
                    out.append(resolved)
                    state.returned = isinstance(resolved, ast.Return)
        return out

    def _too_many(self, span: Span, origin: tuple[ast.Origin, ...]) -> None:
        where = origin[-1].span if origin else span
        self.diagnostics.append(
            diag(
                "S123",
                f"this forward body unrolls into more than {MAX_UNROLLED:,} statements",
                where,
                hint="use smaller loop bounds, or repeat(Block, n) for many copies of a block",
            )
        )
        raise Failed

    def _decide(self, expr: ast.Expr, scope: Any, context: str) -> Any:
        state = self.unrolling
        assert state is not None
        state.context = context
        try:
            return self.evaluate(expr, scope)
        finally:
            state.context = None

    def _if(self, stmt: ast.If, scope: Any, origin: tuple[ast.Origin, ...]) -> list[ast.SimpleStmt]:
        for branch in stmt.branches:
            if branch.test is None:
                chosen = True
                text = f"in the 'else' branch at {branch.header_span}"
            else:
                value = self._decide(branch.test, scope, "if")
                if not _is_condition(value):
                    self.diagnostics.append(
                        diag(
                            "S120",
                            f"an 'if' needs a true/false constant, got {type_name(value)} "
                            f"{show(plain(value))}",
                            branch.test.span,
                            hint="compare it: if n > 1, if act != none",
                        )
                    )
                    raise Failed
                chosen = bool(value)
                text = f"in the branch '{branch.keyword} {expr_text(branch.test)}' at "
                text += str(branch.header_span)
            if chosen:
                frame = ast.Origin("branch", text, branch.header_span)
                return self.unroll(branch.body, scope, (*origin, frame))
        return []

    def _for(
        self, stmt: ast.For, scope: Any, origin: tuple[ast.Origin, ...]
    ) -> list[ast.SimpleStmt]:
        state = self.unrolling
        assert state is not None
        for name, span in stmt.target.names():
            if name in state.tensors:
                self.diagnostics.append(
                    diag(
                        "S121",
                        f"loop variable '{name}' is also a tensor of this forward body",
                        span,
                        hint="give the loop variable another name",
                    )
                )
                raise Failed
        value = self._decide(stmt.iterable, scope, "for")
        items = _items(value)
        if items is None:
            self.diagnostics.append(
                diag(
                    "S121",
                    f"a 'for' loop runs over a list, tuple or range, got {type_name(value)} "
                    f"{show(plain(value))}",
                    stmt.iterable.span,
                    hint="loop over range(n), a list constant, enumerate(...) or zip(...)",
                )
            )
            raise Failed
        if len(items) > MAX_ITERATIONS:
            self.diagnostics.append(
                diag(
                    "S123",
                    f"this loop would run {len(items):,} times; the limit is {MAX_ITERATIONS:,}",
                    stmt.iterable.span,
                    hint="use a smaller bound, or repeat(Block, n) for many copies of a block",
                )
            )
            raise Failed
        out: list[ast.SimpleStmt] = []
        names = ", ".join(name for name, _ in stmt.target.names())
        header = f"for {names} in {expr_text(stmt.iterable)}"
        for index, item in enumerate(items):
            bound: dict[str, tuple[Any, Span]] = {}
            self._bind(stmt.target, item, bound, stmt, index)
            shown = ", ".join(f"{name} = {show(plain(v))}" for name, (v, _) in bound.items())
            text = f"in iteration {shown} of the loop at {stmt.header_span}"
            frame = ast.Origin("loop", text, stmt.header_span, index, header, len(items))
            out += self.unroll(stmt.body, self.child_scope(scope, bound), (*origin, frame))
            if state.returned:
                break
        return out

    def _bind(
        self,
        target: ast.LoopTarget,
        item: Any,
        bound: dict[str, tuple[Any, Span]],
        stmt: ast.For,
        index: int,
    ) -> None:
        if target.name is not None:
            bound[target.name] = (item, target.span)
            return
        if not isinstance(item, tuple | list) or len(item) != len(target.items):
            count = len(target.items)
            self.diagnostics.append(
                diag(
                    "S122",
                    f"iteration {index} of the loop gives {type_name(item)} "
                    f"{show(plain(item))}, which does not unpack into {count} names",
                    target.span,
                    labels=(Label(stmt.iterable.span, "the items come from here"),),
                    hint=f"give every item {count} values, or change the loop variables",
                )
            )
            raise Failed
        for sub, value in zip(target.items, item, strict=True):
            self._bind(sub, value, bound, stmt, index)


def _binds(stmt: ast.SimpleStmt, name: str) -> bool:
    """Whether ``stmt`` gives ``name`` a new value."""
    match stmt:
        case ast.Assign(target=target, targets=targets):
            return target == name or any(n == name for n, _ in targets)
        case ast.ChainStmt(chain=ast.Chain(source=ast.Name(id=source))):
            return source == name
    return False


def _is_condition(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str | OpValue)


def _items(value: Any) -> list[Any] | range | None:
    if isinstance(value, range):
        return value
    if isinstance(value, list | tuple):
        return list(value)
    return None
