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

A quarter of the forwards more (``generator.NEW_FAMILIES``, past the half that draws the
pieces above, so those seeds' programs stay what they were) end with a family whose first
piece is one of the forms added later (``NEW_PIECES``), a second one, if any, from all:

* ``block parameter``: ``model Fam(w, n, block = Unit0)``, ``for i in range(n): x ->
  block(w) as b{i + 1}``, the calls giving ``Unit0`` and ``Unit1``;
* ``block rows``: ``for c, b in rows: x = b(x, c)`` with ``[(8, Unit0), (6, Unit1)]``;
* ``module items``: ``for c, a in rows: x -> dense(c) -> a`` with ``[(8, relu), (6,
  layer_norm)]`` (``identity`` too);
* ``untaken``: a body no call runs, a loop whose count is 0 at every call, a flag every
  call gives alike beside an ``else``, a list every call gives empty;
* ``running count``: an unnamed module after an ``if`` whose branches make different
  numbers of its operation;
* ``if in a loop``: on a flag the calls give differently, or on the loop's target.

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
from aurane.tools.fuzz.loops import fresh_name, global_constant, note
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
    # told the other pieces' lines once the body is drawn, before any call draws values
    settle: Callable[[list[str]], None] | None = None
    fields: list[str] = field(default_factory=list)  # the block's constants, before forward
    returned: str = ""  # the tensor the block returns where not ``x`` (the piece goes last)
    apart: bool = False  # its output has another rank: each call takes the family's input


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


def _acting_unit(draw: Draw, axis: Axis) -> tuple[str, Block]:
    """A new inner block ``Unit(w, act = relu)`` of one layer and its activation, its name
    and place taken now (the family's name is drawn after it)."""
    unit = fresh_name(draw, "Unit")
    made = Block(unit, [], [])
    draw.blocks.append(made)
    made.lines = [
        (f"model {unit}(w, act = relu):", None),
        ("    def forward(x):", None),
        (f"        return x -> {axis.layer('w')}{draw.rng.choice((' -> act', '.act'))}", None),
    ]
    return unit, made


def _inner(draw: Draw, axis: Axis, j: int) -> Piece:
    rng = draw.rng
    unit, made = _acting_unit(draw, axis)
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


# -- this stop's forms: blocks as values, module items, bodies no call runs, branch counts --


def _alternating(rng: random.Random, values: list[Any]) -> Callable[[], Any]:
    """A draw giving the values in turn (shuffled once): the calls give each of them."""
    order = rng.sample(values, len(values))
    turn = [0]

    def draw() -> Any:
        turn[0] += 1
        return order[(turn[0] - 1) % len(order)]

    return draw


def _units(draw: Draw, axis: Axis) -> tuple[list[Block], dict[str, int]]:
    """Two blocks ``UnitN(w)`` of one signature, given as values; each one's output width
    is a multiple of ``w`` (the map's value), which the rolled class reads from the
    module built (``layer.out_channels``)."""
    bodies = [
        (f"x -> {axis.layer('w')}.relu", 1),
        (f"x -> {axis.layer('w')} -> {axis.norm()}", 1),
        (f"x -> {axis.layer('2 * w')}.gelu -> {axis.layer('w')}", 1),
        (f"x -> {axis.layer('w')}.relu -> {axis.layer('2 * w')}", 2),
    ]
    made: list[Block] = []
    scales: dict[str, int] = {}
    for text, scale in [bodies[0], draw.rng.choice(bodies[1:])]:
        unit = fresh_name(draw, "Unit")
        lines = [(f"model {unit}(w):", None), ("    def forward(x):", None)]
        made.append(Block(unit, [*lines, (f"        return {text}", None)], []))
        draw.blocks.append(made[-1])
        scales[unit] = scale
    return made, scales


def _block_parameter(draw: Draw, axis: Axis, j: int) -> Piece:
    """``model Fam(w, n, block = Unit0)``, ``for i in range(n): x -> block(w) as b{i + 1}``,
    the calls giving ``Unit0`` and ``Unit1``."""
    rng = draw.rng
    units, scales = _units(draw, axis)
    w, n, block = f"w{j}", f"n{j}", f"block{j}"
    params = [
        Param(w, lambda: rng.choice(WIDTHS)),
        Param(n, lambda: rng.randint(1, 3)),
        Param(block, _alternating(rng, [Op(u.name) for u in units]), Op(units[0].name)),
    ]
    name = rng.choice(("", f" as b{j}_{{i + 1}}"))
    lines = [f"for i in range({n}):", f"    x -> {block}({w}){name}"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, scales[env[block].name] * env[w]) if env[n] else shape

    return Piece(lines, params, out, "family block parameter", units)


def _block_rows(draw: Draw, axis: Axis, j: int) -> Piece:
    """Rows holding blocks: ``for c, b in rows: x = b(x, c)`` with ``[(8, Unit0), (6,
    Unit1)]``."""
    rng = draw.rng
    units, scales = _units(draw, axis)
    cfg = f"rows{j}"
    call = rng.choice(("x = b(x, c)", "x -> b(c)"))

    def rows() -> list[tuple[int, Op]]:
        return [(rng.choice(WIDTHS), Op(rng.choice(units).name)) for _ in range(rng.randint(1, 3))]

    def out(env: Env, shape: Shape) -> Shape:
        width, unit = env[cfg][-1]
        return axis.widened(shape, scales[unit.name] * width)

    lines = [f"for c, b in {cfg}:", f"    {call}"]
    return Piece(lines, [Param(cfg, rows)], out, "family block rows", units)


def _module_items(draw: Draw, axis: Axis, j: int) -> Piece:
    """Operation items that build a module beside functions: ``for c, a in rows: x ->
    dense(c) -> a`` with ``[(8, relu), (6, layer_norm)]`` (``layer_norm`` on the last axis
    only, in float32: on channels it normalises another axis than the width, and in
    another dtype its class takes ``dtype=``, located fallbacks)."""
    rng = draw.rng
    cfg = f"rows{j}"
    norm = not axis.channel and draw.body.param_dtype == "float32"
    modules = ["layer_norm", "identity"] if norm else ["identity"]

    def rows() -> list[tuple[int, Op]]:
        made = [
            (rng.choice(WIDTHS), Op(rng.choice(ACTS if rng.random() < 0.6 else modules)))
            for _ in range(rng.randint(1, 3))
        ]
        if not any(op.name in modules for _, op in made):  # one module item at least
            k = rng.randrange(len(made))
            made[k] = (made[k][0], Op(rng.choice(modules)))
        return made

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[cfg][-1][0])

    def settle(other_lines: list[str]) -> None:
        # a module of the item's operation elsewhere in the block numbers on from the
        # items' (a located fallback): such an operation is no item here
        for op in [*modules]:
            if len(modules) > 1 and any(f"{op}(" in line for line in other_lines):
                modules.remove(op)

    lines = [f"for c, a in {cfg}:", f"    x -> {axis.layer('c')} -> a"]
    return Piece(lines, [Param(cfg, rows)], out, "family module items", settle=settle)


def _untaken(draw: Draw, axis: Axis, j: int) -> Piece:
    """A body no call runs: a loop whose count is 0 at every call, a flag every call gives
    alike beside an ``else``, or a list every call gives empty; a layer of ``w`` before
    or after it, so the calls differ."""
    rng = draw.rng
    w = f"w{j}"
    params = [Param(w, lambda: rng.choice(WIDTHS))]
    form = rng.choice(("count", "flag", "list"))
    if form == "count":
        n = f"n{j}"
        params.append(Param(n, lambda: 0))
        name = rng.choice(("", f" as d{j}_{{i + 1}}"))
        body = [f"for i in range({n}):", f"    x -> {_applied(rng, axis.layer(w), name, None)}"]
    elif form == "flag":
        flag = f"flag{j}"
        alike = rng.random() < 0.5
        params.append(Param(flag, lambda: alike))
        other = rng.choice((f"x -> {axis.norm()}", f"x -> {axis.layer(w)} -> {axis.norm()}"))
        body = [f"if {flag}:", f"    x -> {axis.layer(w)}.relu", "else:", f"    {other}"]
    else:
        cfg = f"rows{j}"
        params.append(Param(cfg, lambda: []))
        if axis.channel and rng.random() < 0.5:
            body = [f"for c, k in {cfg}:", f"    x -> {axis.layer('c', 'k')}"]
        else:
            body = [f"for c in {cfg}:", f"    x -> {axis.layer('c')}.relu"]
    before = rng.random() < 0.6
    lines = [f"x -> {axis.layer(w)}", *body] if before else [*body, f"x -> {axis.layer(w)}"]

    def out(env: Env, shape: Shape) -> Shape:
        # every body either keeps the width or, taken, ends at ``w``, as the layer does
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, f"family untaken {form}")


def _branch_count(draw: Draw, axis: Axis, j: int) -> Piece:
    """An unnamed module after an ``if`` whose branches make different numbers of its
    operation (a running count: ``dense{n + 1}``), alone or in a loop after it."""
    rng = draw.rng
    flag, w, v = f"flag{j}", f"w{j}", f"v{j}"
    params = [
        Param(flag, _alternating(rng, [True, False])),
        Param(w, lambda: rng.choice(WIDTHS)),
        Param(v, lambda: rng.choice(WIDTHS)),
    ]
    two = rng.random() < 0.5  # the if makes two, the else one; else one and none
    taken = f"x -> {axis.layer(w)}.relu" + (f" -> {axis.layer(w)}" if two else "")
    other = f"x -> {axis.layer(w)}" if two else rng.choice(("x -> tanh()", f"x -> {axis.norm()}"))
    lines = [f"if {flag}:", f"    {taken}", "else:", f"    {other}"]
    n = f"n{j}"
    if rng.random() < 0.5:
        lines.append(f"x -> {axis.layer(v)}{rng.choice(('', '.relu'))}")
    else:
        params.append(Param(n, lambda: rng.randint(0, 3)))
        lines += [f"for i in range({n}):", f"    x -> {axis.layer(v)}.relu"]

    def out(env: Env, shape: Shape) -> Shape:
        if env.get(n, 1) == 0:
            return shape if not (two or env[flag]) else axis.widened(shape, env[w])
        return axis.widened(shape, env[v])

    return Piece(lines, params, out, "family running count")


def _branch_in_loop(draw: Draw, axis: Axis, j: int) -> Piece:
    """An ``if`` inside a loop: on a flag the calls give differently, its branches making
    as many modules or not, or on the loop's target with named modules."""
    rng = draw.rng
    flag, w, n = f"flag{j}", f"w{j}", f"n{j}"
    # counts in turn: calls agreeing on the count of a loop whose if reads its target
    # leave a class written out for that count (a located refusal), not a rolled one
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, _alternating(rng, [1, 2, 3]))]
    if rng.random() < 0.75:
        params.append(Param(flag, _alternating(rng, [True, False])))
        test = flag
        names = ("", "", "")
    else:  # the iteration decides: every module named, as an unnamed one there follows
        # no progression of the count (a located fallback)
        test = "i == 0"
        names = (f" as a{j}_{{i + 1}}", f" as b{j}_{{i + 1}}", f" as c{j}_{{i + 1}}")
    taken = f"x -> {axis.layer(w)}.relu{names[0]}"
    if test == flag and rng.random() < 0.4:
        taken += f" -> {axis.layer(w)}"
    other = rng.choice((f"x -> {axis.layer(w)}.tanh{names[1]}",
                        f"x -> {axis.layer(w)}{names[1]} -> {axis.norm()}{names[-1]}"))  # fmt: skip
    lines = [f"for i in range({n}):", f"    if {test}:", f"        {taken}", "    else:",
             f"        {other}"]  # fmt: skip

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, "family if in a loop")


# this stop's parts, drawn by the families past ``generator.FAMILIES`` (a share of their
# own, so every other seed's family stays what it was); blocks as values need a channel
# axis or a sample of one axis (a block given as a value on the last axis of a larger
# sample is a located fallback: its class stores a channels' ``out_channels``)
NEW_PIECES = (
    _block_parameter,
    _block_rows,
    _module_items,
    _untaken,
    _untaken,
    _branch_count,
    _branch_in_loop,
)
BLOCK_VALUES = (_block_parameter, _block_rows)


# -- round 1's forms (axes88-idx92): tables a parameter indexes, norm axes, buffer inits,
# loops in an if's branch, a tensor the loop binds last returned, an inner block once --

TABLE = (4, 8, 16, 32)


def _table_index(draw: Draw, axis: Axis, j: int) -> Piece:
    """An item of a constant table a parameter indexes: ``dense(sizes[k])``, ``sizes[k -
    1]``, ``sizes[min(k, 3)]``, ``cfg[k][1]`` of a table of rows; the table a block's
    constant or a global one; the layer alone, under ``if`` or in a loop; the calls give
    ``k`` in turn, so they disagree on it."""
    rng = draw.rng
    k, n = f"k{j}", f"n{j}"
    rows = rng.random() < 0.3
    table: list[Any] = (
        [(rng.choice(WIDTHS), t) for t in rng.sample(TABLE, 3)] if rows else rng.sample(TABLE, 4)
    )
    size = len(table)
    if rng.random() < 0.5:  # the block's constant
        name = f"cfg{j}" if rows else f"sizes{j}"
        fields = [f"{name} = {_text(table)}"]
    else:
        name = global_constant(draw, "TABLE", _text(table))
        fields = []
    form = rng.choice(("k", "k - 1", "min", "-k") if not rows else ("k", "k - 1"))
    index: Callable[[int], int]  # the item's index at a value of ``k``
    if form == "k":
        item, index, ks = f"{name}[{k}]", (lambda v: v), list(range(size))
    elif form == "k - 1":
        item, index, ks = f"{name}[{k} - 1]", (lambda v: v - 1), list(range(1, size + 1))
    elif form == "min":
        item, index = f"{name}[min({k}, {size - 1})]", (lambda v: min(v, size - 1))
        ks = list(range(size + 2))
    else:  # a negative index counts from the end
        item, index, ks = f"{name}[-{k}]", (lambda v: -v), list(range(1, size + 1))
    if rows:
        item += "[1]"

    def width(env: Env) -> int:
        picked = table[index(env[k])]
        return int(picked[1] if rows else picked)

    params = [Param(k, _alternating(rng, ks))]
    layer = f"x -> {axis.layer(item)}{rng.choice(('', '.relu'))}"
    where = rng.choice(("alone", "if", "loop"))
    if where == "alone":
        lines = [layer]

        def out(env: Env, shape: Shape) -> Shape:
            return axis.widened(shape, width(env))
    elif where == "if":  # on the index itself or on a flag of its own
        flag = f"flag{j}"
        test = rng.choice((f"{k} > 1", flag))
        if test == flag:
            params.append(Param(flag, lambda: rng.random() < 0.5))
        lines = [f"if {test}:", f"    {layer}"]

        def out(env: Env, shape: Shape) -> Shape:
            taken = env[flag] if test == flag else env[k] > 1
            return axis.widened(shape, width(env)) if taken else shape
    else:
        params.append(Param(n, lambda: rng.randint(0, 2)))
        lines = [f"for i in range({n}):", f"    {layer}"]

        def out(env: Env, shape: Shape) -> Shape:
            return axis.widened(shape, width(env)) if env[n] else shape

    note(draw, f"table index {form}" + (" of rows" if rows else ""))
    return Piece(lines, params, out, f"family table index ({where})", fields=fields)


def _norm_axes(draw: Draw, axis: Axis, j: int) -> Piece:
    """A norm whose ``axes`` a parameter gives (``rms_norm(x, axes=p0)``, ``layer_norm(axes=p0
    + 1)``), the calls giving different valid values in turn, after a layer of ``w``."""
    rng = draw.rng
    w, p = f"w{j}", f"p{j}"
    op = rng.choice(("rms_norm", "layer_norm"))
    plus = rng.random() < 0.4 and axis.rank > 1
    given = f"{p} + 1" if plus else p
    values = list(range(1, axis.rank + 1 - plus))
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(p, _alternating(rng, values))]
    norm = rng.choice((f"x -> {op}(axes={given})", f"x = {op}(x, axes={given})"))
    lines = [f"x -> {axis.layer(w)}", norm]
    if rng.random() < 0.3:  # in a loop, the axes read there too
        n = f"n{j}"
        params.append(Param(n, lambda: rng.randint(0, 2)))
        lines = [lines[0], f"for i in range({n}):", f"    {norm}"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, f"family norm axes ({op})")


def _buffer_init(draw: Draw, axis: Axis, j: int) -> Piece:
    """A buffer whose ``init`` a parameter gives (``buffer(w, init=p1)``), the calls giving
    ``"zeros"`` and ``"ones"`` in turn (and sometimes ``"arange"``, of another dtype: a
    located fallback), added to the value on the last axis in float32 or made alone,
    before a loop or in it."""
    rng = draw.rng
    w, init = f"w{j}", f"init{j}"
    inits = ["zeros", "ones"] + (["arange"] if rng.random() < 0.15 else [])
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(init, _alternating(rng, inits))]
    # ``add`` takes equal shapes: the buffer joins a sample of one axis only
    added = axis.rank == 1 and draw.body.param_dtype == "float32" and "arange" not in inits
    persistent = rng.choice(("", ", persistent=true", ", persistent=false"))
    made = [f"h{j} = buffer({w}, init={init}{persistent})"]
    if added:
        made.append(f"x = add(x, h{j})")
    lines = [f"x -> {axis.layer(w)}"]
    if rng.random() < 0.4:
        n = f"n{j}"
        params.append(Param(n, lambda: rng.randint(0, 2)))
        lines += [f"for i in range({n}):", *("    " + line for line in made)]
    else:
        lines += made

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, "family buffer init")


def _loop_in_if(draw: Draw, axis: Axis, j: int) -> Piece:
    """A loop in an ``if``'s branch, then an unnamed module of its operation after the
    ``if`` (numbered on from the branches taken: ``dense{n + 1}`` or ``dense2``)."""
    rng = draw.rng
    deep, w, n, v = f"deep{j}", f"w{j}", f"n{j}", f"v{j}"
    params = [
        Param(deep, _alternating(rng, [True, False])),
        Param(w, lambda: rng.choice(WIDTHS)),
        Param(n, lambda: rng.randint(0, 3)),
        Param(v, lambda: rng.choice(WIDTHS)),
    ]
    other = rng.choice(("", f"x -> {axis.layer(w)}", f"x -> {axis.norm()}"))
    act = rng.choice(("", ".relu"))
    lines = [f"if {deep}:", f"    for i in range({n}):", f"        x -> {axis.layer(w)}{act}"]
    if rng.random() < 0.3:  # another module of it later in the branch
        lines.append(f"    x -> {axis.layer(w)}")
    if other:
        lines += ["else:", f"    {other}"]
    lines.append(f"x -> {axis.layer(v)}{rng.choice(('', '.relu'))}")

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[v])

    return Piece(lines, params, out, "family loop in an if")


def _returned_in_loop(draw: Draw, axis: Axis, j: int) -> Piece:
    """A tensor the loop binds last returned by the block (``for i in range(n): h1 =
    global_avg_pool(x)``, ``h1 -> glu()``, then ``return h1``); every call's count at
    least 1, so it is bound."""
    rng = draw.rng
    w, n, h = f"w{j}", f"n{j}", f"h{j}"
    even = [c for c in WIDTHS if c % 2 == 0]
    params = [Param(w, lambda: rng.choice(even)), Param(n, _alternating(rng, [1, 2, 3]))]
    pooled = axis.channel and axis.rank == 3
    # glu halves the last axis: the channels only once pooled
    halves = rng.random() < 0.5 and (pooled or not axis.channel)
    made = "glu" if halves else "sigmoid"

    def width(c: int) -> int:
        return c // 2 if halves else c

    source = "global_avg_pool(x)" if pooled else rng.choice(("x", "tanh(x)"))
    first = f"{h} = {source}" if source != "x" else f"{h} = x -> {made}()"
    body = [first] if source == "x" else [first, f"{h} -> {made}()"]
    lines = [f"for i in range({n}):", f"    x -> {axis.layer(w)}.relu"]
    lines += ["    " + text for text in body]

    def out(env: Env, shape: Shape) -> Shape:
        c = env[w]
        if pooled:
            return (width(c),)
        wide = axis.widened(shape, c)
        return wide[:-1] + (width(wide[-1]),)

    return Piece(lines, params, out, "family returned loop tensor", returned=h, apart=pooled)


def _inner_once(draw: Draw, axis: Axis, j: int) -> Piece:
    """An inner block called from one place in a loop, its count 1 at one call and 0 at
    the others: the inner class sees one input width and is built at the running one."""
    rng = draw.rng
    unit, made = _acting_unit(draw, axis)
    w, n, v = f"w{j}", f"n{j}", f"v{j}"
    params = [
        Param(w, lambda: rng.choice(WIDTHS)),
        Param(n, _alternating(rng, [1, 0])),
        Param(v, lambda: rng.choice(WIDTHS)),
    ]
    name = rng.choice(("", " as u{i + 1}"))
    lines = [f"x -> {axis.layer(w)}", f"for i in range({n}):", f"    x -> {unit}({v}){name}"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[v] if env[n] else env[w])

    return Piece(lines, params, out, "family inner block once", [made])


# drawn by the families past ``generator.NEW_FAMILIES`` (a share of their own)
ROUND_PIECES = (
    _table_index,
    _table_index,
    _norm_axes,
    _buffer_init,
    _loop_in_if,
    _returned_in_loop,
    _inner_once,
)


# -- round 2's forms: an if on the loop's count, sizes on another axis, network variants --


# the tests an ``if`` in a ``range(n)`` loop makes of its target, each with the iterations
# it takes (``k`` a parameter of its own, read by ``i < k`` only)
COUNT_TESTS: dict[str, Callable[[int, int, int], bool]] = {
    "i > 0": lambda i, n, k: i > 0,
    "i % 2 == 0": lambda i, n, k: i % 2 == 0,
    "i == n - 1": lambda i, n, k: i == n - 1,
    "i < k": lambda i, n, k: i < k,
}


def _if_on_count(draw: Draw, axis: Axis, j: int) -> Piece:
    """An unnamed module under an ``if`` whose test reads the loop's target (``for i in
    range(n): if i > 0: x -> dense(w)``, also ``i % 2 == 0``, ``i == n - 1``, ``i < k``),
    sometimes a step after the ``if`` in the loop: the module's count is the iterations
    the test takes, which the rolled class has to count as the source does."""
    rng = draw.rng
    w, n, k = f"w{j}", f"n{j}", f"k{j}"
    test = rng.choice(list(COUNT_TESTS))
    taken = COUNT_TESTS[test]
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, lambda: rng.randint(0, 3))]
    written = test.replace("n - 1", f"{n} - 1").replace("< k", f"< {k}")
    if test == "i < k":
        params.append(Param(k, lambda: rng.randint(0, 3)))
    lines = [
        f"for i in range({n}):",
        f"    if {written}:",
        f"        x -> {axis.layer(w)}{rng.choice(('', '.relu'))}",
    ]
    after = rng.choice(("", "x -> relu()", f"x -> {axis.norm()}"))
    if after:
        lines.append(f"    {after}")

    def out(env: Env, shape: Shape) -> Shape:
        count = env[n]
        runs = any(taken(i, count, env.get(k, 0)) for i in range(count))
        return axis.widened(shape, env[w]) if runs else shape

    note(draw, f"if on the count ({test})")
    return Piece(lines, params, out, "family if on the loop count")


# what follows kernel rows that change the spatial sizes (``_kernel_sizes``)
SIZE_TAILS = ("flatten", "norm", "norm axes", "inner")


def _kernel_sizes(draw: Draw, axis: Axis, j: int) -> Piece:
    """Rows of kernels with ``padding=k // 2`` (even kernels too, each one position longer
    on every spatial axis), so a parameter changes a size on an axis other than the
    channels the rollers track; then a step reading those sizes: ``flatten() ->
    dense(v)``, a norm over several axes (``layer_norm(axes=2)``), ``layer_norm(axes=p)``
    a parameter gives, or an inner block whose norm reads all its input's sizes (its
    calls at inputs of different lengths). On a channel axis only (``draw_family``)."""
    rng = draw.rng
    assert axis.channel
    cfg, v, p = f"rows{j}", f"v{j}", f"p{j}"
    tail = rng.choice(SIZE_TAILS)

    def row() -> tuple[int, int]:
        return (rng.choice(WIDTHS), rng.choice((1, 2, 3, 4)))

    def rows() -> list[tuple[int, int]]:
        made = [row() for _ in range(rng.randint(1, 3))]
        if not any(k % 2 == 0 for _, k in made) and rng.random() < 0.7:  # a length changes
            made[rng.randrange(len(made))] = (made[0][0], rng.choice((2, 4)))
        return made

    params = [Param(cfg, rows)]
    lines = [f"for c, k in {cfg}:", f"    x -> {axis.layer('c', 'k')}{rng.choice(('', '.relu'))}"]
    blocks: list[Block] = []
    apart = False
    if tail == "flatten":
        params.append(Param(v, lambda: rng.choice(WIDTHS)))
        lines.append(f"x -> flatten() -> dense({v})")
        apart = True
    elif tail == "norm":
        lines.append(f"x -> layer_norm(axes={rng.randint(2, axis.rank)})")
    elif tail == "norm axes":
        params.append(Param(p, _alternating(rng, list(range(1, axis.rank + 1)))))
        lines.append(rng.choice((f"x -> layer_norm(axes={p})", f"x = layer_norm(x, axes={p})")))
    else:
        unit = fresh_name(draw, "Unit")
        made = Block(unit, [], [])
        draw.blocks.append(made)
        made.lines = [
            (f"model {unit}(w):", None),
            ("    def forward(x):", None),
            (f"        return x -> layer_norm(axes={axis.rank}) -> {axis.layer('w')}", None),
        ]
        blocks.append(made)
        params.append(Param(v, lambda: rng.choice(WIDTHS)))
        lines.append(f"x -> {unit}({v})")

    def out(env: Env, shape: Shape) -> Shape:
        longer = sum(k % 2 == 0 for _, k in env[cfg])
        made = (env[cfg][-1][0], *(size + longer for size in shape[1:]))
        if tail == "flatten":
            return (env[v],)
        return axis.widened(made, env[v]) if tail == "inner" else made

    note(draw, f"kernel sizes then {tail}")
    return Piece(lines, params, out, "family kernel sizes", blocks, apart=apart)


def _side_branch_returned(draw: Draw, axis: Axis, j: int) -> Piece:
    """A tensor the loop binds after a side branch returned (``h0 = tanh(x)``, ``h0 ->
    sigmoid()``, ``return h0``), every call's count at least 1."""
    rng = draw.rng
    w, n, h = f"w{j}", f"n{j}", f"h{j}"
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, _alternating(rng, [1, 2, 3]))]
    side = rng.choice(("tanh", "sigmoid", "relu"))
    lines = [
        f"for i in range({n}):",
        f"    x -> {axis.layer(w)}.relu",
        f"    {h} = {side}(x)",
        f"    {h} -> {rng.choice(('sigmoid', 'tanh'))}()",
    ]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, "family side branch returned", returned=h)


# the pieces whose loop counts by ``i``: two of them make a network with two loops over it
LOOPED = (_count, _residual, _grow, _if_on_count)


def _round2_pieces(draw: Draw, axis: Axis) -> tuple[list[Piece], Axis, bool]:
    """Round 2's family: its pieces, its axis and whether it is a network used through
    variants. Forms: an if on the loop's count (``_if_on_count``); kernel rows changing
    the spatial sizes, then a step reading them (``_kernel_sizes``, on a channel axis:
    where the sample has no such axis, an if on the count); networks through variants
    with a buffer no step reads (in a loop or not), a loop tensor returned after a side
    branch, or two loops over ``i``."""
    rng = draw.rng
    form = rng.choice(ROUND2_FORMS)
    if form == "kernel sizes" and axis.rank in (2, 3):
        axis = Axis(True, axis.rank)
    elif form == "kernel sizes":
        form = "if on the count"
    network = form.startswith("network")
    if form == "if on the count":
        pieces = [_if_on_count(draw, axis, 0)]
        if rng.random() < 1 / 3:
            pieces.append(rng.choice(PIECES)(draw, axis, 1))
        network = rng.random() < 0.2
    elif form == "kernel sizes":
        pieces = [_kernel_sizes(draw, axis, 0)]
    elif form == "network buffer":
        before = [rng.choice(LOOPED)(draw, axis, 1)] if rng.random() < 0.5 else []
        pieces = [*before, _buffer_init(draw, axis, 0)]
    elif form == "network side branch":
        pieces = [_side_branch_returned(draw, axis, 0)]
    else:  # two loops over ``i``
        pieces = [rng.choice(LOOPED)(draw, axis, 0), rng.choice(LOOPED)(draw, axis, 1)]
    if network:
        note(draw, f"family network ({form.removeprefix('network ')})")
    return pieces, axis, network


ROUND2_FORMS = (
    "if on the count",
    "if on the count",
    "kernel sizes",
    "kernel sizes",
    "network buffer",
    "network side branch",
    "network two loops",
)


# -- round 3's forms (``generator.ROUND3_FAMILIES``): the forms the first round of this
# session fixed, so the campaigns guard them --


def _operation_default(draw: Draw, axis: Axis, j: int) -> Piece:
    """An operation parameter with a default, applied with arguments (``act =
    leaky_relu``, ``act(0.2)``): a call leaving it out runs the default so applied."""
    rng = draw.rng
    w, n, act = f"w{j}", f"n{j}", f"op{j}"
    params = [
        Param(w, lambda: rng.choice(WIDTHS)),
        Param(n, lambda: rng.randint(1, 3)),
        Param(act, lambda: Op(rng.choice(("leaky_relu", "leaky_relu", "elu"))), Op("leaky_relu")),
    ]
    lines = [f"for i in range({n}):", f"    x -> {axis.layer(w)} -> {act}(0.2)"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w])

    return Piece(lines, params, out, "family operation default applied")


def _operation_rows_default(draw: Draw, axis: Axis, j: int) -> Piece:
    """A parameter whose default holds operations (``cfg = ((4, relu), (6, tanh))``),
    the calls leaving it out or giving other rows."""
    rng = draw.rng
    cfg = f"rows{j}"

    def rows() -> tuple[tuple[int, Op], ...]:
        count = rng.randint(1, 3)
        return tuple((rng.choice(WIDTHS), Op(rng.choice(ACTS))) for _ in range(count))

    default = rows()
    params = [Param(cfg, lambda: default if rng.random() < 0.5 else rows(), default)]
    lines = [f"for c, a in {cfg}:", f"    x -> {axis.layer('c')} -> a"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[cfg][-1][0])

    return Piece(lines, params, out, "family default holding operations")


def _zip_unread(draw: Draw, axis: Axis, j: int) -> Piece:
    """``for c, k in zip(ws, ks): x -> dense(c)``: an item forward does not read."""
    rng = draw.rng
    ws, ks = f"ws{j}", f"ks{j}"
    length: list[int] = [1]

    def widths() -> list[int]:
        length[0] = rng.randint(1, 3)
        return [rng.choice(WIDTHS) for _ in range(length[0])]

    # the parameters are drawn in order: the items of ``ks`` as many as ``ws``'s
    params = [
        Param(ws, widths),
        Param(ks, lambda: [rng.randint(1, 3) for _ in range(length[0])]),
    ]
    lines = [f"for c, k in zip({ws}, {ks}):", f"    x -> {axis.layer('c')}"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[ws][-1])

    return Piece(lines, params, out, "family zip item unread")


def _templated(draw: Draw, axis: Axis, j: int) -> Piece:
    """Layers named by a template (``as d{i + 1}``, ``as d{2 * i + 1}``)."""
    rng = draw.rng
    w, n = f"w{j}", f"n{j}"
    params = [Param(w, lambda: rng.choice(WIDTHS)), Param(n, lambda: rng.randint(0, 3))]
    prefix = "d" if j == 0 else f"t{j}_"
    name = rng.choice((f"{prefix}{{i + 1}}", f"{prefix}{{2 * i + 1}}"))
    lines = [f"for i in range({n}):", f"    x -> {axis.layer(w)} as {name}"]

    def out(env: Env, shape: Shape) -> Shape:
        return axis.widened(shape, env[w]) if env[n] else shape

    return Piece(lines, params, out, "family templated names")


def _before_norm(draw: Draw, axis: Axis, j: int) -> Piece:
    """``glu``, ``pad`` or ``pixel_shuffle`` before a norm, which normalises the size they
    make from a parameter (``dense(2 * w) -> glu() -> layer_norm()``)."""
    rng = draw.rng
    w, p = f"w{j}", f"p{j}"
    forms = ["pad"] if axis.channel else ["glu", "pad"]
    if axis.channel and axis.rank == 3:
        forms.append("pixel_shuffle")
    form = rng.choice(forms)
    if form == "glu":
        params = [Param(w, lambda: rng.choice(WIDTHS))]
        lines = [f"x -> dense(2 * {w}) -> glu() -> layer_norm()"]

        def out(env: Env, shape: Shape) -> Shape:
            return axis.widened(shape, env[w])
    elif form == "pad":
        params = [Param(p, lambda: rng.randint(1, 3))]
        lines = [f"x -> pad((0, {p})) -> {axis.norm()}"]

        def out(env: Env, shape: Shape) -> Shape:
            return (*shape[:-1], shape[-1] + env[p])
    else:
        params = [Param(w, lambda: rng.choice((1, 2, 3)))]
        lines = [f"x -> {axis.layer(f'4 * {w}')} -> pixel_shuffle(2) -> batchnorm()"]

        def out(env: Env, shape: Shape) -> Shape:
            return (env[w], 2 * shape[1], 2 * shape[2])

    return Piece(lines, params, out, f"family {form} before a norm")


ROUND3_PIECES = (_operation_default, _operation_rows_default, _zip_unread, _templated, _before_norm)


def _round3_pieces(draw: Draw, axis: Axis) -> list[Piece]:
    """Round 3's family: one of ``ROUND3_PIECES``, an older piece before it a third of
    the time (running widths and counts of others meet it)."""
    rng = draw.rng
    chosen = rng.choice(ROUND3_PIECES)
    before = [rng.choice(PIECES)(draw, axis, 1)] if rng.random() < 1 / 3 else []
    return [*before, chosen(draw, axis, 0)]


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
    return draw_family(draw)


def draw_family(
    draw: Draw,
    new: bool = False,
    round_forms: bool = False,
    round2: bool = False,
    round3: bool = False,
) -> Outcome:
    """``block_family``; ``new``: its first piece one of this stop's (``NEW_PIECES``), a
    second one, if any, drawn from all; ``round_forms``: one of round 1's
    (``ROUND_PIECES``), with a piece drawn from all before it a third of the time;
    ``round2``: one of round 2's forms (``_round2_pieces``); ``round3``: one of round 3's
    (``_round3_pieces``)."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    if x.dtype not in FLOAT_DTYPES or x.dtype != body.param_dtype or not x.rank:
        return Outcome.SKIPPED
    if x.numel > 4096 or max(x.shape) > 64:
        return Outcome.SKIPPED
    axis = Axis(x.rank in (2, 3) and rng.random() < 0.5, x.rank)
    network = False
    if round3:
        pieces = _round3_pieces(draw, axis)
    elif round2:
        pieces, axis, network = _round2_pieces(draw, axis)
    elif round_forms:
        # an older piece before it or after it (none after a returned tensor), so the
        # form meets running widths and counts of others
        chosen = rng.choice(ROUND_PIECES)
        before = [rng.choice(PIECES)(draw, axis, 1)] if rng.random() < 1 / 3 else []
        pieces = [*before, chosen(draw, axis, 0)]
        if chosen is not _returned_in_loop and rng.random() < 1 / 4:
            pieces.append(rng.choice(PIECES)(draw, axis, 2))
    elif not new:
        pieces = [rng.choice(PIECES)(draw, axis, j) for j in range(rng.choice((1, 1, 2)))]
    else:
        first = rng.choice(NEW_PIECES)
        if first in BLOCK_VALUES and x.rank > 1:
            axis = Axis(True, x.rank) if x.rank in (2, 3) else axis
        fits = [p for p in NEW_PIECES if axis.channel or x.rank == 1 or p not in BLOCK_VALUES]
        first = first if first in fits else rng.choice(fits)
        pieces = [first(draw, axis, 0)]
        if rng.random() < 1 / 3:
            pieces.append(rng.choice([*PIECES, *fits])(draw, axis, 1))
    for piece in pieces:
        if piece.settle is not None:
            piece.settle([line for other in pieces if other is not piece for line in other.lines])
    name = fresh_name(draw, "Fam")
    params = [p for piece in pieces for p in piece.params]
    # parameters with defaults come last
    params = [p for p in params if p.default is None] + [p for p in params if p.default is not None]
    header = ", ".join(
        f"{p.name} = {_text(p.default)}" if p.default is not None else p.name for p in params
    )
    lines = [f"model {name}({header}):"]
    lines += ["    " + line for piece in pieces for line in piece.fields]
    lines.append("    def forward(x):")
    # round 1's forms in a network used through variants too (``model Fam0V0 = Fam0(8,
    # 2):`` with an ``input_shape``), the forward not calling it: the network roller's.
    # A stem threads a tensor before any if, and the variants' loops run (a forward
    # opening with an if, a loop no variant runs: located fallbacks of networks)
    network = network or round_forms and rng.random() < 0.3
    stem = rng.choice(WIDTHS) if network else 0
    if network:
        lines.append(f"        x -> {axis.layer(str(stem))} as stem")
    for piece in pieces:
        lines += ["        " + line for line in piece.lines]
    lines.append(f"        return {pieces[-1].returned or 'x'}")
    # after its inner blocks, which took their places as their pieces were drawn
    draw.blocks.append(Block(name, [(t, None) for t in lines], []))
    inner = [b.name for piece in pieces for b in piece.blocks]
    body.blocks += [*inner, name]
    seen: list[Env] = []
    shapes: set[Shape] = set()
    apart = any(piece.apart for piece in pieces)
    given = body.current
    if network:  # the forward calls no block of it: an empty one still makes a step
        body.blocks = [b for b in body.blocks if b != name and b not in inner]
    original = body.current
    for turn in range(rng.randint(2, 3)):
        if apart or network:  # a pooled output is no input of the next call
            body.current = given
        env: Env = {}
        for _try in range(10):
            env = {p.name: p.draw() for p in params}
            idle = network and any(p.name[0] == "n" and env[p.name] == 0 for p in params)
            if env not in seen and not idle:
                break
        seen.append(env)
        current = body.current
        assert current is not None
        shapes.add(current.shape)
        shape = axis.widened(current.shape, stem) if network else current.shape
        for piece in pieces:
            shape = piece.out(env, shape)
        args = _call_args(rng, params, env)
        if network:
            variant = f"{name}V{turn}"
            lines = [f"model {variant} = {name}({', '.join(args)}):",
                     f"    input_shape = {_text(tuple(current.shape))}"]  # fmt: skip
            if current.dtype != "float32":
                lines.append(f"    input_dtype = {current.dtype}")
            draw.blocks.append(Block(variant, [(t, None) for t in lines], []))
            continue  # each variant at the family's input: a network takes no input width
        label = ""
        if rng.random() < 0.3:
            body.layer_names += 1
            label = f" as fam{body.layer_names}"
        chained = f"{name}({', '.join(args)}){label}"
        assigned = f"{name}({', '.join([current.name, *args])}){label}"
        body.define(current, not apart and rng.random() < 0.6, chained, assigned, None,
                    Value("", shape, current.dtype))  # fmt: skip
    features = [p.feature for p in pieces]
    if network:
        body.current = original
        features.append("family network variants")
    if len(shapes) > 1:
        features.append("family input sizes differ")
    if axis.channel:
        features.append("family channel axis")
    note(draw, *features)
    return Outcome.ADDED


def reshaped_lengths(draw: Draw) -> Outcome:
    """Round 3's caller whose calls get inputs of different lengths (``reshape`` in
    ``Net`` splits the same tensor as ``(4, 6)`` and ``(3, 8)``), calling an inner block
    that reads its length (``layer_norm`` after a ``conv1d``): the inner class takes the
    length its caller's input gives it."""
    body, rng = draw.body, draw.rng
    given = body.current
    assert given is not None
    numel = 1
    for size in given.shape:
        numel *= size
    if given.dtype not in FLOAT_DTYPES or given.dtype != body.param_dtype or numel > 4096:
        return Outcome.SKIPPED
    splits = [(c, numel // c) for c in range(1, 17) if numel % c == 0 and numel // c >= 2]
    if len(splits) < 2:
        return Outcome.SKIPPED
    unit = fresh_name(draw, "Unit")
    draw.blocks.append(Block(unit, [], []))  # its place taken before the caller's name
    name = fresh_name(draw, "Fam")
    inner = rng.choice(("layer_norm()", "rms_norm()", "dense(w)"))
    draw.blocks[-1].lines = [
        (f"model {unit}(w):", None),
        ("    def forward(x):", None),
        (f"        return x -> conv1d(w, 3, padding=1) -> {inner}", None),
    ]
    lines = [
        f"model {name}(w):",
        "    def forward(x):",
        f"        x -> conv1d(w, 3, padding=1).relu -> {unit}(w)",
        "        return x",
    ]
    draw.blocks.append(Block(name, [(t, None) for t in lines], []))
    body.blocks += [unit, name]
    chosen = rng.sample(splits, min(len(splits), rng.randint(2, 3)))
    for channels, length in chosen:
        w = rng.choice(WIDTHS)
        body.define(given, False, "", f"reshape({given.name}, {channels}, {length})", None,
                    Value("", (channels, length), given.dtype))  # fmt: skip
        current = body.current
        assert current is not None
        out = length if inner != "dense(w)" else w
        body.define(current, False, "", f"{name}({current.name}, {w})", None,
                    Value("", (w, out), given.dtype))  # fmt: skip
    note(draw, "family lengths through a reshape")
    return Outcome.ADDED
