"""Shared machinery for AST rewrites: walk forward bodies, edit chain steps safely.

Rewrites only ever touch chain steps (``x -> a -> b``) and call suffixes. A chain
step's input is exactly the previous step's output, so removing an identity step
never changes which value any later name or ``.residual`` refers to. Graph-form
statements (``h = dropout(x, 0)``) are left alone: removing them would rebind a
name, and the proof obligation is not worth the risk.
"""

from __future__ import annotations

from collections.abc import Callable

from aurane import ops, records
from aurane.ops.rules import ACTIVATION
from aurane.source import Span
from aurane.syntax import ast

StepsRewrite = Callable[[tuple[ast.Call, ...]], tuple[ast.Call, ...]]
CallRewrite = Callable[[ast.Call], ast.Call]


def map_program(
    program: ast.AuraneProgram,
    *,
    steps: StepsRewrite | None = None,
    call: CallRewrite | None = None,
) -> ast.AuraneProgram:
    """A new program with every forward body's chains and calls rewritten."""
    walker = _Walker(steps, call)
    statements = tuple(
        walker.model(stmt) if isinstance(stmt, ast.Model) else stmt for stmt in program.statements
    )
    if statements == program.statements:
        return program
    return records.replace(program, statements=statements)


class _Walker:
    def __init__(self, steps: StepsRewrite | None, call: CallRewrite | None) -> None:
        self.steps = steps
        self.call_rewrite = call

    def model(self, model: ast.Model) -> ast.Model:
        if model.forward is None:
            return model
        body = tuple(self.statement(stmt) for stmt in model.forward.body)
        if body == model.forward.body:
            return model
        return records.replace(model, forward=records.replace(model.forward, body=body))

    def statement(self, stmt: ast.ForwardStmt) -> ast.ForwardStmt:
        match stmt:
            case ast.Assign(value=value) | ast.Return(value=value):
                return records.replace(stmt, value=self.expr(value))
            case ast.ChainStmt(chain=chain):
                new = self.expr(chain)
                assert isinstance(new, ast.Chain)
                return records.replace(stmt, chain=new)
        return stmt

    def expr(self, expr: ast.Expr) -> ast.Expr:
        match expr:
            case ast.Chain(source=source, steps=steps):
                new_steps = tuple(self.call(step) for step in steps)
                if self.steps is not None:
                    new_steps = self.steps(new_steps)
                return records.replace(expr, source=self.expr(source), steps=new_steps)
            case ast.Call():
                return self.call(expr)
            case ast.TupleExpr(items=items) | ast.ListExpr(items=items):
                return records.replace(expr, items=tuple(self.expr(i) for i in items))
        return expr

    def call(self, call: ast.Call) -> ast.Call:
        args = tuple(self.expr(arg) for arg in call.args)
        keywords = tuple(records.replace(k, value=self.expr(k.value)) for k in call.keywords)
        new = records.replace(call, args=args, keywords=keywords)
        return self.call_rewrite(new) if self.call_rewrite is not None else new


def canonical_op(name: str) -> str | None:
    return ops.canonical(name)


def is_activation(name: str) -> bool:
    spec = ops.lookup(name)
    return spec is not None and ACTIVATION in spec.kinds


def without_step(step: ast.Call) -> ast.Call | None:
    """What replaces an identity step: nothing, or its suffixes as a step of their own.

    ``dropout(0).relu`` becomes ``relu()``: the activation then reads the step's
    input, which equals the dropped step's output. A leading ``.residual`` would add
    the identity step's input to itself, so such a step is kept (returns ``step``).
    """
    if not step.suffixes:
        return None
    first, rest = step.suffixes[0], step.suffixes[1:]
    if not is_activation(first.name):
        return step
    end = step.span
    span = Span(first.name_span.line, first.name_span.column, end.end_line, end.end_column)
    return ast.Call(first.name, first.name_span, first.args, first.keywords, rest, span)


def drop_steps(
    steps: tuple[ast.Call, ...], is_identity: Callable[[ast.Call | None, ast.Call], bool]
) -> tuple[ast.Call, ...]:
    """Remove steps that ``is_identity(previous_kept_step, step)`` proves to be identities.

    A chain always keeps at least one step: an empty chain would make a bare chain
    statement a no-op whose value the lowering treats differently (it is not the
    forward's last assigned value any more), so in that case nothing is removed.
    """
    kept: list[ast.Call] = []
    for step in steps:
        previous = kept[-1] if kept else None
        replacement = without_step(step) if is_identity(previous, step) else step
        if replacement is not None:
            kept.append(replacement)
    if not kept:
        return steps
    return tuple(kept)


def plain_call(call: ast.Call, op: str) -> bool:
    """``call`` names the catalog op ``op`` (aliases included)."""
    return canonical_op(call.func) == op
