"""Parameterised blocks: a block's body is generated like a model's, and as each call is
written some of its arguments become expressions of the block's parameters, in every
argument position (sizes, axes, indices, counts, bounds, constants, kernels, pads,
probabilities, the arguments of the blocks it calls): ``p``, ``p // 2``, ``2 * p``,
``(p + 1) // 2``, ``p - 1``, ``-p``, ``max(1, p // 2)``, ``min(p, 8)``, ``p / 2``, model
constants computed from them (``c0 = p + 1``), booleans and strings by name. Each call
passes the values that make every expression equal the argument the body was generated
with, so the program means what the generator checked.

A block calls further blocks (nested up to ``MAX_DEPTH``), is named (``as enc1``), applied
in chain or graph form, called again with its float parameters changed (one class must
serve both calls), or repeated (``repeat(Blk(4), 2)``) when it keeps its input's shape and
dtype.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from aurane.ops.spec import ArgKind, OpSpec
from aurane.records import field, record
from aurane.tools.fuzz.body import OPS, Body, add_step
from aurane.tools.fuzz.steps import Step, Value, Written, literal

MAX_DEPTH = 2  # blocks inside blocks inside the model
WRITE_CHANCE = 0.45  # of each numeric argument of a block's call

# float arguments a second call may scale: they decide no shape, and no rule ties them to
# another argument (hardtanh's min_val < max_val does)
_SHAPE_FREE = frozenset({ArgKind.FLOAT, ArgKind.OPTIONAL_FLOAT})
# (arange's start, end and step are floats that decide its length)
_TIED = frozenset({"scale_factor", "min_val", "max_val", "start", "end", "step", "min", "max"})


@record
class Param:
    name: str
    given: Any  # what the first call passes
    annotation: str = ""  # ": int", ": float", ": bool", ": str" or nothing
    default: bool = False  # declared with the given value as its default
    free: bool = True  # every use is a value that decides no shape


@record
class Params:
    """The parameters of one block being generated, and how its arguments are written."""

    rng: random.Random
    params: list[Param] = field(default_factory=list)
    constants: list[tuple[str, str]] = field(default_factory=list)  # model-level c = expr

    def write(self, spec: OpSpec, args: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in args.items():
            param = spec.param(name)
            free = param is not None and param.kind in _SHAPE_FREE and name not in _TIED
            out[name] = self.written(value, free)
        return out

    def written(self, value: Any, free: bool = False) -> Any:
        """``value``, or sometimes an expression of a (new or earlier) parameter equal to it."""
        if isinstance(value, tuple):
            return tuple(self.written(v, free) for v in value)
        if self.rng.random() > WRITE_CHANCE or value is None or isinstance(value, Written):
            return value
        if isinstance(value, bool):
            return Written(value, self._param(value, ": bool", free))
        if isinstance(value, str):
            return Written(value, self._param(value, ": str", free)) if value else value
        if isinstance(value, int):
            return Written(value, self._int(value))
        if isinstance(value, float):
            return Written(value, self._float(value, free))
        return value

    def _param(self, given: Any, annotation: str, free: bool = False) -> str:
        rng = self.rng
        for param in self.params:  # a parameter used in two places
            if param.given == given and type(param.given) is type(given) and rng.random() < 0.3:
                param.free = param.free and free
                return param.name
        name = f"p{len(self.params)}"
        shown = annotation if rng.random() < 0.5 else ""
        self.params.append(Param(name, given, shown, rng.random() < 0.25, free))
        return name

    def _int(self, value: int) -> str:
        rng = self.rng
        forms: list[tuple[str, Callable[[], int]]] = [("{p}", lambda: value)]
        if value >= 0:
            forms.append(("{p} // 2", lambda: 2 * value + rng.randint(0, 1)))
            forms.append(("({p} + 1) // 2", lambda: 2 * value - rng.randint(0, 1)))
        if value and value % 2 == 0:
            forms.append(("2 * {p}", lambda: value // 2))
        if value:
            forms.append(("-{p}", lambda: -value))
        forms.append(("{p} + 1", lambda: value - 1))
        forms.append(("{p} - 1", lambda: value + 1))
        if value >= 1:
            forms.append(("max(1, {p} // 2)", lambda: 2 * value + (value > 1) * rng.randint(0, 1)))
        if value <= 8:
            forms.append(("min({p}, 8)", lambda: value + (value == 8) * rng.randint(0, 3)))
        text, given = rng.choice(forms)
        expression = text.format(p=self._param(given(), ": int"))
        if rng.random() < 0.15:  # a model constant computed from the parameter
            name = f"c{len(self.constants)}"
            self.constants.append((name, expression))
            return name
        if rng.random() < 0.15 and not expression.startswith("-"):
            return f"({expression})"  # parentheses the source wrote
        return expression

    def _float(self, value: float, free: bool) -> str:
        forms: list[tuple[str, float]] = [("{p}", value), ("{p} / 2", value * 2)]
        if value:
            forms += [("-{p}", -value), ("{p} * 2", value / 2)]
        text, given = self.rng.choice(forms)
        return text.format(p=self._param(given, ": float", free))

    def header(self, name: str) -> str:
        """``model Blk0(p0, p1: int, p2=3):``: parameters with defaults come last."""
        if not self.params:
            return f"model {name}:" if self.rng.random() < 0.5 else f"model {name}():"
        ordered = [p for p in self.params if not p.default] + [p for p in self.params if p.default]
        self.params[:] = ordered
        parts = [
            f"{p.name}{p.annotation} = {literal(p.given)}"
            if p.default
            else f"{p.name}{p.annotation}"
            for p in ordered
        ]
        return f"model {name}({', '.join(parts)}):"

    def call_args(self, values: dict[str, Any] | None = None) -> list[str]:
        """The arguments of a call (``values``: some parameters' values, else the given)."""
        out, keyword = [], False
        for param in self.params:
            value = (values or {}).get(param.name, param.given)
            if param.default and value == param.given and self.rng.random() < 0.5:
                keyword = True  # left at its default
                continue
            if param.default or keyword or self.rng.random() < 0.2:
                keyword = True
                out.append(f"{param.name}={literal(value)}")
            else:
                out.append(literal(value))
        return out

    def changed_values(self) -> dict[str, Any]:
        """Other values for the free float parameters (one factor: orders and signs stay)."""
        factor = self.rng.choice((0.5, 0.75))
        return {
            p.name: p.given * factor
            for p in self.params
            if p.free and isinstance(p.given, float) and not isinstance(p.given, bool)
        }


@record
class Block:
    """A block definition: its lines and steps (line numbers filled in by the program)."""

    name: str
    lines: list[tuple[str, Step | None]]
    steps: list[Step]


def make_block(
    rng: random.Random, body: Body, focus: tuple[str, ...], program: list[Block]
) -> bool:
    """A block applied to ``body``'s current value: defined (appended to ``program``) and
    called. False when no body could be generated for that input (nothing is emitted)."""
    x = body.current
    assert x is not None
    name = f"Blk{len(program)}"
    made = Block(name, [], [])
    program.append(made)  # its place (and name) taken before the blocks it calls
    params = Params(rng)
    inner = Body(
        rng,
        body.param_dtype,
        [Value("x", x.shape, x.dtype)],
        model=name,
        writer=params if rng.random() < 0.85 else None,
        depth=body.depth + 1,
    )
    inner.current = inner.pool[0]
    for _ in range(rng.randint(1, 3)):
        if inner.depth < MAX_DEPTH and rng.random() < 0.15:
            make_block(rng, inner, focus, program)
            continue
        op = rng.choice(focus) if focus and rng.random() < 0.5 else rng.choice(OPS)
        if op in ("parameter", "embedding") and rng.random() < 0.7:
            continue
        add_step(inner, op, allow_bad=False)
    if not inner.steps and not inner.blocks:
        program.remove(made)
        return False
    out = inner.current
    assert out is not None
    lines: list[tuple[str, Step | None]] = [(params.header(name), None)]
    lines += [(f"    {constant} = {expression}", None) for constant, expression in params.constants]
    lines.append(("    def forward(x):", None))
    lines += inner.lines
    lines.append((f"        return {out.name}", None))
    made.lines, made.steps = lines, inner.steps
    body.blocks.append(name)
    _call(rng, body, name, params, x, out)
    return True


def _call(rng: random.Random, body: Body, name: str, params: Params, x: Value, out: Value) -> None:
    """The block's call in ``body``: its arguments written by ``body`` (an enclosing
    block's parameters), chain or graph form, named or not, repeated, or called twice."""
    written = [body.writer.written(a) if body.writer else a for a in _values(params)]
    args = params.call_args(dict(zip([p.name for p in params.params], written, strict=True)))
    call = f"{name}({', '.join(args)})" if args or rng.random() < 0.5 else name
    label = f" as enc{len(body.blocks)}" if rng.random() < 0.2 else ""
    keeps = out.shape == x.shape and out.dtype == x.dtype
    chain = rng.random() < 0.5
    if keeps and rng.random() < 0.4:
        times = rng.randint(1, 3)
        step = Step("repeat", {"block": name, "times": times}, (x.shape,), x.dtype)
        graph = f"repeat({x.name}, {call}, {times}){label}"
        body.define(x, chain, f"repeat({call}, {times}){label}", graph, step, x)
        return
    graph_args = ", ".join([x.name, *args])
    body.define(x, chain, f"{call}{label}", f"{name}({graph_args}){label}", None, out)
    changed = params.changed_values()
    if keeps and changed and rng.random() < 0.8:  # one class serves both calls
        again = f"{name}({', '.join(params.call_args(changed))})"
        current = body.current
        assert current is not None
        body.define(current, True, again, again, None, out)


def _values(params: Params) -> list[Any]:
    return [p.given for p in params.params]
