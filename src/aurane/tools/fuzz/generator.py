"""Whole programs: the input, the forward, parameterised blocks and ``repeat``, the culprit
and the edge cases past int64 (``generate``)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import aurane.tools.fuzz.configurable  # noqa: F401  (issue 24's constructs register)
from aurane.tools.fuzz.body import Body, add_step
from aurane.tools.fuzz.constructs import Draw, Outcome, draw_construct
from aurane.tools.fuzz.families import draw_family, reshaped_lengths
from aurane.tools.fuzz.steps import (
    FLOAT_DTYPES,
    HUGE,
    INT64_MAX,
    SIZES,
    Program,
    Step,
    Value,
    literal,
)

# -- programs -------------------------------------------------------------------------------


def _input(rng: random.Random) -> Value:
    roll = rng.random()
    if roll < 0.12:  # token ids
        return Value("x", (rng.randint(2, 6),), "int64" if roll < 0.09 else "int32")
    rank = rng.choice((1, 2, 2, 3, 3, 3, 4))
    shape = tuple(rng.choice(SIZES) if i else rng.choice((1, 2, 3, 4, 6, 8)) for i in range(rank))
    return Value("x", shape, rng.choice(FLOAT_DTYPES))


def _header(name: str, x: Value) -> list[str]:
    shape = literal(tuple(x.shape))
    return [f"model {name}:", f"    input_shape = {shape}", f"    input_dtype = {x.dtype}",
            "    def forward(x):"]  # fmt: skip


# how often a program's model takes two inputs and returns two outputs (issue 23)
SEVERAL = 0.15
# how often a forward ends with a block family: one block called at several arguments and
# input sizes (issue 24 item 3's campaigns; ``families.py``)
FAMILIES = 0.5
# past it, a family opening with one of this stop's parts (``families.NEW_PIECES``: blocks
# as values, module items, bodies no call runs, branch counts): a share of its own, so the
# programs of the seeds below ``FAMILIES`` stay what they were
NEW_FAMILIES = 0.25
# past that, a family opening with one of round 1's forms (``families.ROUND_PIECES``:
# tables a parameter indexes, norm axes and buffer inits parameters give, loops in an
# if's branch, a returned tensor a loop binds, an inner block called once in a loop)
ROUND_FAMILIES = 0.2
# past that (the rest, which ended with no family), round 2's forms (``families.
# _round2_pieces``: an if on the loop's count, kernel rows changing the spatial sizes,
# networks with an unread buffer, a side branch returned, two loops): the seeds below
# it draw the programs they drew before
ROUND2_FAMILIES = 0.05
# round 3's forms (``families.ROUND3_PIECES``: an operation default applied with
# arguments, a default holding operations, a zip item forward does not read, templated
# names, glu/pad/pixel_shuffle before a norm): the shares above fill every roll, so a
# generator of its own (``round3-{seed}``) appends a second family to this share of the
# programs, after all the rest; the others stay what they were, text for text
ROUND3_FAMILIES = 0.2


def _round3_family(seed: int, draw: Draw, body: Body, focus: Sequence[str], bad: float) -> None:
    """A family of round 3's forms appended to ``ROUND3_FAMILIES`` of the programs, drawn
    by a generator of its own after everything else (the rest of the text unchanged)."""
    round3 = random.Random(f"round3-{seed}")
    if round3.random() >= ROUND3_FAMILIES or draw.culprit is not None or body.current is None:
        return
    if any(text.strip().startswith("return") for text, _ in body.lines):
        return
    ended = Draw(round3, body, draw.blocks, tuple(focus), bad, stats=draw.stats)
    # one in six: a caller whose calls get inputs of different lengths (not a family of
    # pieces: its calls each take the input through their own reshape)
    reshaped = round3.random() < 1 / 6
    try:
        drawn = reshaped_lengths(ended) if reshaped else draw_family(ended, round3=True)
        added = drawn is Outcome.ADDED
    except Exception:  # a shape rule that crashes: the compiler run will report it
        added = False
    draw.stats["round 3 family"] = draw.stats.get("round 3 family", 0) + added


def _second_input(rng: random.Random, x: Value, param_dtype: str) -> Value:
    """``y``: x's shape and dtype half the time (so joins pick it as a partner), else a
    shape of its own in the parameter dtype."""
    if x.dtype in FLOAT_DTYPES and rng.random() < 0.5:
        return Value("y", x.shape, x.dtype)
    rank = rng.choice((1, 2, 3))
    shape = tuple(rng.choice(SIZES) if i else rng.choice((1, 2, 3, 4, 6, 8)) for i in range(rank))
    return Value("y", shape, param_dtype)


def _several_header(rng: random.Random, x: Value, y: Value) -> list[str]:
    default = rng.choice(("", "", "=ones", "=zeros", "=0.5"))
    return [
        "model Net:",
        f"    input_shape = {{x: {literal(tuple(x.shape))}, y: {literal(tuple(y.shape))}}}",
        f"    input_dtype = {{x: {x.dtype}, y: {y.dtype}}}",
        f"    def forward(x, y{default}):",
    ]


PAIR = ["model Pair:", "    def forward(a, b):", "        c = dense(b, {k})", "        return a, c"]


def generate(
    seed: int, *, bad: float = 0.15, edge: float = 0.03, focus: Sequence[str] = ()
) -> Program:
    """One random program. ``focus`` ops are drawn half of the time (coverage)."""
    rng = random.Random(seed)
    # two inputs and two outputs: decided by a generator of its own, so that the programs
    # of one input stay what they were for each seed
    extra = random.Random(f"several-{seed}")
    several = extra.random() < SEVERAL
    x = _input(rng)
    param_dtype = x.dtype if x.dtype in FLOAT_DTYPES else "float32"
    y = _second_input(extra, x, param_dtype) if several else None
    body = Body(rng, param_dtype, [x] if y is None else [x, y], model="Net")
    body.current = x
    draw = Draw(rng, body, [], tuple(focus), bad)
    edge_case: str | None = None
    if x.dtype in ("int64", "int32"):
        add_step(body, "embedding", allow_bad=False)
    for _ in range(rng.randint(1, 7)):
        chosen = draw_construct(rng)
        try:
            outcome = chosen.make(draw)
        except Exception:  # a shape rule that crashes: the compiler run will report it
            break
        draw.stats[chosen.name] = draw.stats.get(chosen.name, 0) + (outcome is Outcome.ADDED)
        if outcome is Outcome.CULPRIT:
            break
    # decided and drawn by a generator of its own, after the others: the rest of each
    # seed's program stays what it was before families were generated
    family = random.Random(f"family-{seed}")
    roll = family.random()
    if (
        roll < FAMILIES + NEW_FAMILIES + ROUND_FAMILIES + ROUND2_FAMILIES
        and draw.culprit is None
        and body.current is not None
        and not any(text.strip().startswith("return") for text, _ in body.lines)
    ):
        ended = Draw(family, body, draw.blocks, tuple(focus), bad, stats=draw.stats)
        try:
            round2 = roll >= FAMILIES + NEW_FAMILIES + ROUND_FAMILIES
            round_forms = roll >= FAMILIES + NEW_FAMILIES and not round2
            new = FAMILIES <= roll < FAMILIES + NEW_FAMILIES
            added = draw_family(ended, new, round_forms, round2) is Outcome.ADDED
        except Exception:  # a shape rule that crashes: the compiler run will report it
            added = False
        draw.stats["block family"] = draw.stats.get("block family", 0) + added
    if y is None:  # a second input's names come after: they would be renumbered
        _round3_family(seed, draw, body, focus, bad)
    culprit = draw.culprit
    if not body.steps and culprit is None and not body.blocks:
        body.emit("x -> identity()", Step("identity", {}, (x.shape,), x.dtype, model="Net"))
        body.current = Value("x", x.shape, x.dtype)
    returned = any(text.strip().startswith("return") for text, _ in body.lines)
    pair: list[str] = []
    if y is not None and culprit is None and not returned and body.current is not None:
        pair = _two_outputs(extra, body, y, draw.stats)
    elif (
        culprit is None
        and body.current is not None
        and body.current.name != x.name
        and not returned
    ):
        body.emit(f"return {body.current.name}", None)
    header = _header("Net", x) if y is None else _several_header(extra, x, y)
    if rng.random() < edge and y is None:
        edge_case, header, body = _edge(rng, header, body)
    lines: list[tuple[str, Step | None]] = [(line, None) for line in pair]
    if pair:
        lines.append(("", None))
    if edge_case is None:
        for made in draw.blocks:
            lines += made.lines + [("", None)]
    lines += [(h, None) for h in header] + body.lines
    steps_all = [s for made in draw.blocks for s in made.steps] if edge_case is None else []
    steps_all += body.steps
    for number, (_text, step) in enumerate(lines, start=1):
        if step is not None:
            step.line = number
    text = "\n".join(t for t, _ in lines) + "\n"
    return Program(seed, text, steps_all, culprit, edge_case, ["Net"], dict(draw.stats))


def _two_outputs(rng: random.Random, body: Body, y: Value, stats: dict[str, int]) -> list[str]:
    """End the forward with two outputs: the running value and ``dense(y, k)``, computed
    in the body or by a block with two inputs and two outputs (``a, c = Pair(h, y)``);
    returns the block's definition (empty when the body computes it)."""
    current = body.current
    assert current is not None
    k = rng.randint(1, 5)
    stats["several inputs"] = stats.get("several inputs", 0) + 1
    if rng.random() < 0.5:
        out = body.fresh()
        body.emit(f"{out} = dense(y, {k})", None)
        body.emit(f"return {current.name}, {out}", None)
        return []
    first, second = body.fresh(), body.fresh()
    body.emit(f"{first}, {second} = Pair({current.name}, y)", None)
    body.emit(f"return {first}, {second}", None)
    stats["several outputs block"] = stats.get("several outputs block", 0) + 1
    return [line.format(k=k) for line in PAIR]


def _edge(rng: random.Random, header: list[str], body: Body) -> tuple[str, list[str], Body]:
    """Sizes past int64 in the input shape or in one size argument."""
    huge = rng.choice(HUGE)
    if rng.random() < 0.5:
        dims = rng.randint(1, 3)
        header = [*header]
        header[1] = f"    input_shape = {literal(tuple([huge] * dims))}"
        return _bound(f"input_shape of {huge}^{dims}", huge**dims), header, body
    fresh = Body(rng, body.param_dtype, body.pool[:1], model="Net")
    fresh.current = body.pool[0]
    x = body.pool[0]
    if x.dtype in FLOAT_DTYPES:
        step = Step("dense", {"features": huge}, (x.shape,), x.dtype)
        fresh.emit(f"x -> flatten() -> dense({huge})", step)
        largest = max(huge * (x.numel + 1), huge * x.numel * 2)  # parameters, activations
    else:
        step = Step("embedding", {"vocabulary": huge, "width": 4}, (x.shape,), x.dtype)
        fresh.emit(f"x -> embedding({huge}, 4)", step)
        largest = huge * 4
    return _bound(f"size argument {huge}", largest), header, fresh


def _bound(what: str, largest: int) -> str:
    """An edge case's description; 'past int64' when a count must be refused."""
    return f"{what} ({'past int64' if largest > INT64_MAX else 'within int64'})"
