"""Block families (issue 24 item 3): one block called two or three times with different
arguments and at different input sizes, so the rollers' "one class per block definition"
is exercised by the campaigns (``bench/one_class_per_block.py``,
``python -m aurane.tools.roll_check``), where most generated blocks are called once.

A family's body is one or two *pieces*, each drawn from the forms the rollers write
(docs/codegen.md, "Loops in blocks"):

* ``count``: ``for i in range(n): x -> dense(w) as d{i + 1} -> act`` (unnamed modules or
  templated names; the operation-valued parameter applied as a step, a suffix, or not);
* ``rows``: ``for c, a in rows: x -> dense(c) -> a`` (operation items), ``for c, k in rows:
  x -> conv1d(c, k, padding=k // 2)``, ``for c in rows: x -> dense(c).relu``;
* ``flag``: ``if flag: ... else: ...`` whose branches end at the same or another width;
* ``residual``: a projection to ``w`` then ``h = x -> dense(2 * w).gelu -> dense(w)``,
  ``x = add(x, h)`` in a ``range(n)`` loop, or a ``.residual`` suffix;
* ``grow``: DenseNet's ``h = dense(x, g)``, ``x = concat(x, h, dim=-1)``;
* ``inner``: an inner block ``Unit0(w, act = relu)`` called from the loop (``for c, a in
  rows: x -> Unit0(c, a)`` or ``for i in range(n): x -> Unit0(w) as u{i + 1}``).

The layers work on the last axis (``dense``, ``layer_norm``) or on the channel axis of a
``(C, L)`` or ``(C, H, W)`` sample (``conv1d``/``conv2d`` keeping the spatial sizes,
``batchnorm``). Each call draws its own values, different from the calls before it, and
the family's calls are chained, so the later calls see the widths the earlier ones made.
Each piece computes its output shape from a call's values (``Piece.out``), so every
program is valid.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from aurane.records import field, record
from aurane.tools.fuzz.blocks import Block
from aurane.tools.fuzz.constructs import Draw, Outcome, construct
from aurane.tools.fuzz.loops import fresh_name, note
from aurane.tools.fuzz.steps import FLOAT_DTYPES, Value, literal

WIDTHS = (2, 3, 4, 6, 8)
ACTS = ("relu", "gelu", "tanh", "sigmoid", "silu")
Shape = tuple[int, ...]
Env = dict[str, Any]


@record(frozen=True)
class Op:
    """An operation given as a value (``act=gelu``): written bare."""

    name: str


def _text(value: Any) -> str:
    if isinstance(value, Op):
        return value.name
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return literal(value)


@record
class Axis:
    """The axis a family's layers work on: the last (``dense``) or the channel axis."""

    channel: bool
    rank: int

    @property
    def index(self) -> int:
        return 0 if self.channel else -1

    @property
    def dim(self) -> int:  # the axis counting the batch, for concat
        return 1 if self.channel else -1

    def layer(self, width: str, kernel: str = "3") -> str:
        if not self.channel:
            return f"dense({width})"
        conv = "conv1d" if self.rank == 2 else "conv2d"
        padding = "1" if kernel == "3" else f"{kernel} // 2"
        return f"{conv}({width}, {kernel}, padding={padding})"

    def graph_layer(self, x: str, width: str) -> str:
        if not self.channel:
            return f"dense({x}, {width})"
        conv = "conv1d" if self.rank == 2 else "conv2d"
        return f"{conv}({x}, {width}, 3, padding=1)"

    def norm(self) -> str:
        return "batchnorm()" if self.channel else "layer_norm()"

    def widened(self, shape: Shape, width: int) -> Shape:
        out = list(shape)
        out[self.index] = width
        return tuple(out)


@record
class Param:
    name: str
    draw: Callable[[], Any]  # a value for one call
    default: Any = None  # written ``name = default`` in the header where not None


@record
class Piece:
    """Part of a family's body: its lines (inside ``forward``), its parameters, and the
    shape it makes from a call's values and its input shape."""

    lines: list[str]
    params: list[Param]
    out: Callable[[Env, Shape], Shape]
    feature: str
    blocks: list[Block] = field(default_factory=list)  # inner blocks it calls


def _applied(rng: random.Random, layer: str, name: str, act: str | None) -> str:
    """``layer`` named ``name`` and followed by an activation: the parameter as a step or
    a suffix (a suffix goes before the name), or a fixed one."""
    if act is not None:
        suffix, step = rng.choice(((f".{act}", ""), ("", f" -> {act}")))
    else:
        suffix, step = rng.choice((("", ""), (".relu", ""), ("", " -> tanh()")))
    return f"{layer}{suffix}{name}{step}"


def _count(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    w, n = f"w{j}", f"n{j}"
    act = f"op{j}" if rng.random() < 0.6 else None
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, lambda: rng.randint(0, 3))]
    if act is not None:
        params.append(Param(act, lambda: Op(rng.choice(ACTS)), Op("relu")))
    name = rng.choice(("", f" as d{j}_{{i + 1}}", f" as layers{j}.{{i}}"))
    lines = [
        f"for i in range({n}):",
        f"    x -> {_applied(rng, axis.layer(w), name, act)}",
    ]
    if rng.random() < 0.3:  # an unnamed layer beside it in the loop
        lines.append(f"    x -> {axis.norm()}")

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w]) if env[n] else shape

    return Piece(lines, params, out, "family count loop")


def _rows(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    cfg = f"rows{j}"
    form = (
        rng.choice(("ops", "kernels", "widths")) if axis.channel else rng.choice(("ops", "widths"))
    )
    if form == "kernels" and axis.channel:
        head = f"for c, k in {cfg}:"
        body = f"    x -> {axis.layer('c', 'k')}{rng.choice(('', '.relu'))}"

        def row() -> Any:
            return (rng.choice(WIDTHS), rng.choice((1, 3)))
    elif form == "ops":
        head = f"for c, a in {cfg}:"
        body = f"    x -> {axis.layer('c')}{rng.choice((' -> a', '.a'))}"

        def row() -> Any:
            return (rng.choice(WIDTHS), Op(rng.choice(ACTS)))
    else:
        head = f"for c in {cfg}:"
        body = f"    x -> {axis.layer('c')}.relu"

        def row() -> Any:
            return rng.choice(WIDTHS)

    params = [Param(cfg, lambda: [row() for _ in range(rng.randint(1, 3))])]

    def out(env: Env, shape: Shape) -> Shape:
        last = env[cfg][-1]
        return axis.widened(shape, last[0] if isinstance(last, tuple) else last)

    return Piece([head, body], params, out, f"family rows ({form})")


def _flag(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    flag, w = f"flag{j}", f"w{j}"
    params = [Param(flag, lambda: rng.random() < 0.5), Param(w, lambda: rng.choice(WIDTHS))]
    keeps = rng.random() < 0.5  # the else branch keeps the input's width
    other = f"x -> {axis.norm()}" if keeps else f"x -> {axis.layer(w)} -> {axis.norm()}"
    lines = [f"if {flag}:", f"    x -> {axis.layer(w)}.relu", "else:", f"    {other}"]

    def out(env: Env, shape: Shape) -> Shape:
        return shape if keeps and not env[flag] else axis.widened(shape, env[w])

    return Piece(lines, params, out, "family flag")


def _residual(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    w, n = f"w{j}", f"n{j}"
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, lambda: rng.randint(0, 3))]
    lines = [f"x -> {axis.layer(w)}", f"for i in range({n}):"]
    if rng.random() < 0.5:
        lines += [
            f"    h = x -> {axis.layer(f'2 * {w}')}.gelu -> {axis.layer(w)}",
            "    x = add(x, h)",
        ]
    else:
        lines.append(f"    x -> {axis.layer(w)}.residual{rng.choice(('', f' as r{j}_{{i + 1}}'))}")

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, "family residual")


def _grow(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    g, n = f"g{j}", f"n{j}"
    params = [Param(g, lambda: rng.randint(1, 4)), Param(n, lambda: rng.randint(0, 3))]
    lines = [
        f"for i in range({n}):",
        f"    h = {axis.graph_layer('x', g)}",
        f"    x = concat(x, h, dim={axis.dim})",
    ]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, shape[axis.index] + env[g] * env[n])

    return Piece(lines, params, out, "family growing width")


def _inner(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    unit = fresh_name(draw, "Unit")
    # its place taken now: the family's name is drawn after it
    made = Block(unit, [], [])
    draw.blocks.append(made)
    made.lines = [
        (f"model {unit}(w, act = relu):", None),
        ("    def forward(x):", None),
        (f"        return x -> {axis.layer('w')}{rng.choice((' -> act', '.act'))}", None),
    ]
    if rng.random() < 0.5:
        cfg = f"rows{j}"
        params = [
            Param(
                cfg,
                lambda: [
                    (rng.choice(WIDTHS), Op(rng.choice(ACTS))) for _ in range(rng.randint(1, 3))
                ],
            )
        ]
        lines = [f"for c, a in {cfg}:", f"    x -> {unit}(c, a)"]

        def out(env: Env, shape: Shape) -> Shape:
            return axis.widened(shape, env[cfg][-1][0])
    else:
        w, n = f"w{j}", f"n{j}"
        params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, lambda: rng.randint(0, 3))]
        lines = [f"for i in range({n}):", f"    x -> {unit}({w}){rng.choice(('', ' as u{i + 1}'))}"]

        def out(env: Env, shape: Shape) -> Shape:
            return axis.widened(shape, env[w]) if env[n] else shape

    return Piece(lines, params, out, "family inner block", [made])


PIECES = (_count, _count, _rows, _rows, _flag, _residual, _grow, _inner)


def _call_args(rng: random.Random, params: list[Param], env: Env) -> list[str]:
    """A call's arguments: positional in order, a default left out or given by keyword."""
    out: list[str] = []
    keyword = False
    for param in params:
        value = env[param.name]
        if param.default is not None and value == param.default and rng.random() < 0.6:
            keyword = True
            continue
        if keyword or param.default is not None or rng.random() < 0.15:
            keyword = True
            out.append(f"{param.name}={_text(value)}")
        else:
            out.append(_text(value))
    return out


# drawn by ``generate`` at the end of a forward with a generator of its own (``FAMILIES``),
# not by weight among the others: a weight would change the draws of every seed's program,
# and the seeds that tests and notes name (the rollers' regressions) would no longer
# stand for the programs that found them
@construct("block family", 0.0)
def block_family(draw: Draw) -> Outcome:
    """One block defined with parameters and called 2 or 3 times in a row with different
    arguments (and so at different input widths)."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    if x.dtype not in FLOAT_DTYPES or x.dtype != body.param_dtype or not x.rank:
        return Outcome.SKIPPED
    if x.numel > 4096 or max(x.shape) > 64:
        return Outcome.SKIPPED
    axis = Axis(x.rank in (2, 3) and rng.random() < 0.5, x.rank)
    pieces = [rng.choice(PIECES)(draw, axis, j) for j in range(rng.choice((1, 1, 2)))]
    name = fresh_name(draw, "Fam")
    params = [p for piece in pieces for p in piece.params]
    # parameters with defaults come last
    params = [p for p in params if p.default is None] + [p for p in params if p.default is not None]
    header = ", ".join(
        f"{p.name} = {_text(p.default)}" if p.default is not None else p.name for p in params
    )
    lines = [f"model {name}({header}):", "    def forward(x):"]
    for piece in pieces:
        lines += ["        " + line for line in piece.lines]
    lines.append("        return x")
    # after its inner blocks, which took their places as their pieces were drawn
    draw.blocks.append(Block(name, [(t, None) for t in lines], []))
    body.blocks += [b.name for piece in pieces for b in piece.blocks] + [name]
    seen: list[Env] = []
    shapes: set[Shape] = set()
    for _ in range(rng.randint(2, 3)):
        env: Env = {}
        for _try in range(10):
            env = {p.name: p.draw() for p in params}
            if env not in seen:
                break
        seen.append(env)
        current = body.current
        assert current is not None
        shapes.add(current.shape)
        shape = current.shape
        for piece in pieces:
            shape = piece.out(env, shape)
        args = _call_args(rng, params, env)
        label = ""
        if rng.random() < 0.3:
            body.layer_names += 1
            label = f" as fam{body.layer_names}"
        chained = f"{name}({', '.join(args)}){label}"
        assigned = f"{name}({', '.join([current.name, *args])}){label}"
        body.define(current, rng.random() < 0.6, chained, assigned, None,
                    Value("", shape, current.dtype))  # fmt: skip
    features = [p.feature for p in pieces]
    if len(shapes) > 1:
        features.append("family input sizes differ")
    if axis.channel:
        features.append("family channel axis")
    note(draw, *features)
    return Outcome.ADDED
