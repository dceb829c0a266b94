"""The constructs a generated forward is made of, one entry each in ``CONSTRUCTS``.

``generate`` draws the constructs of a body by weight until the program has its steps;
each construct adds to the body what it makes (a call of an operation, a block with its
definition, ...) and says how that went. A new construct is one function registered with
``@construct(name, weight)``: several-input models, buffers, masks, compile-time loops and
branches and templated names (issues 23 and 24) plug in here without touching the
generator's loop.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from enum import Enum

from aurane import ops
from aurane.ops.spec import ArgKind, TensorArg
from aurane.records import field, record
from aurane.tools.fuzz.blocks import Block, make_block
from aurane.tools.fuzz.body import OPS, Body, adapt, add_step
from aurane.tools.fuzz.steps import Step, Value

# operations with integer arguments (and weights): the catalog is large, so loops, blocks
# and constant functions draw from these often enough for their forms to appear
FAVOURED = ("dense", "dense", "conv1d", "conv2d", "maxpool", "avgpool", "flatten")


class Outcome(Enum):
    ADDED = "added"  # something was added to the body
    SKIPPED = "skipped"  # nothing fitted here (nothing was added)
    CULPRIT = "culprit"  # a call the catalog refuses was added: the program ends with it


@record
class Draw:
    """What a construct works on: the body, the program's blocks, the knobs."""

    rng: random.Random
    body: Body
    blocks: list[Block]
    focus: tuple[str, ...] = ()
    bad: float = 0.15  # chance that a call the catalog refuses is kept
    culprit: Step | None = None
    stats: dict[str, int] = field(default_factory=dict)

    def op(self) -> str:
        if self.focus and self.rng.random() < 0.5:
            return self.rng.choice(self.focus)
        return self.rng.choice(OPS)

    def favoured_op(self) -> str:
        return self.rng.choice(FAVOURED) if self.rng.random() < 0.4 else self.op()


@record(frozen=True)
class Construct:
    name: str
    weight: float
    make: Callable[[Draw], Outcome]


CONSTRUCTS: list[Construct] = []


def construct(
    name: str, weight: float
) -> Callable[[Callable[[Draw], Outcome]], Callable[[Draw], Outcome]]:
    """Register ``make`` as the construct ``name``, drawn with ``weight``."""

    def register(make: Callable[[Draw], Outcome]) -> Callable[[Draw], Outcome]:
        CONSTRUCTS.append(Construct(name, weight, make))
        return make

    return register


def draw_construct(rng: random.Random) -> Construct:
    return rng.choices(CONSTRUCTS, weights=[c.weight for c in CONSTRUCTS])[0]


@construct("operation", 0.76)
def operation(draw: Draw) -> Outcome:
    """A call of a catalog operation (chain or graph form, pieces, suffixes, layer names),
    or the inputs of one of its samples made from the current value."""
    body = draw.body
    op = draw.op()
    if op == "embedding" and (body.current is None or body.current.dtype not in ("int64", "int32")):
        op = "flatten"
    if add_step(body, op, draw.rng.random() < draw.bad):
        last = body.steps[-1] if body.steps else None
        if last is not None and not last.valid:
            draw.culprit = last
            return Outcome.CULPRIT
        return Outcome.ADDED
    spec = ops.CATALOG[op]
    takes_tensor = any(p.kind is ArgKind.TENSOR and p.required for p in spec.params)
    if (takes_tensor or draw.rng.random() < 0.7) and adapt(body, spec):
        return Outcome.ADDED
    return Outcome.SKIPPED


@construct("block", 0.18)
def block(draw: Draw) -> Outcome:
    """A parameterised block (or a plain one) applied to the current value: parameters in
    every argument position, nested blocks, repeat, names (``aurane.tools.fuzz.blocks``)."""
    made = make_block(draw.rng, draw.body, draw.focus, draw.blocks)
    return Outcome.ADDED if made else Outcome.SKIPPED


@construct("named chain", 0.06)
def named_chain(draw: Draw) -> Outcome:
    """``h = (x -> conv2d(8, kernel=3) -> batchnorm().relu) as seq1``: one nn.Sequential
    whose layers are the chain's steps (suffix activations become modules)."""
    body = draw.body
    x = body.current
    assert x is not None
    pool = list(body.pool)  # the chain's steps rebind nothing: h = (x -> ...) as seq
    body.chained = []
    try:
        for _ in range(draw.rng.randint(2, 3)):
            add_step(body, draw.op(), allow_bad=False)
        made = body.chained
    finally:
        body.chained = None
    out = body.current
    body.pool, body.current = pool, x
    if not made:
        return Outcome.SKIPPED
    body.layer_names += 1
    target = body.fresh()
    steps = " -> ".join(text for text, _ in made)
    body.emit(f"{target} = ({x.name} -> {steps}) as seq{body.layer_names}", made[0][1])
    for _, step in made[1:]:
        step.model = body.model
        body.steps.append(step)
    assert out is not None
    body.bind(Value(target, out.shape, out.dtype))
    return Outcome.ADDED


@construct("attention mask", 0.05)
def attention_mask(draw: Draw) -> Outcome:
    """A bool mask computed from the current ``(S, F)`` value reaching attention as a tensor
    keyword: ``pad = lt(select(x, dim=2, index=0), 0.0)`` then ``multihead_attention(x,
    heads=h, dim=F, key_padding_mask=pad)``, or a ``(1, 1, S)`` ``attn_mask=`` of
    ``scaled_dot_product_attention`` on one head (``unsqueeze(x, 1)``)."""
    body, rng = draw.body, draw.rng
    x = body.current
    if x is None or x.rank != 2 or x.dtype != body.param_dtype or x.shape[1] > 64:
        return Outcome.SKIPPED
    length, width = x.shape
    pad = body.fresh()
    body.emit(f"{pad} = lt(select({x.name}, dim=2, index=0), {rng.choice((-1.0, 0.0))})", None)
    body.pool.append(Value(pad, (length,), "bool"))
    out = body.fresh()
    if rng.random() < 0.5:
        heads = rng.choice([d for d in range(1, width + 1) if width % d == 0])
        args = {"heads": heads, "dim": width, "key_padding_mask": TensorArg(1)}
        step = Step("multihead_attention", args, (x.shape, (length,)), x.dtype)
        call = f"multihead_attention({x.name}, heads={heads}, dim={width}, key_padding_mask={pad})"
        body.emit(f"{out} = {call}", step)
        body.bind(Value(out, x.shape, x.dtype))
        return Outcome.ADDED
    keep, q = body.fresh(), body.fresh()
    body.emit(f"{keep} = unsqueeze(unsqueeze(logical_not({pad}), 1), 1)", None)
    body.emit(f"{q} = unsqueeze({x.name}, 1)", None)
    args = {"attn_mask": TensorArg(3)}
    step = Step(
        "scaled_dot_product_attention",
        args,
        ((1, length, width),) * 3 + ((1, 1, length),),
        x.dtype,
    )
    body.emit(f"{out} = scaled_dot_product_attention({q}, {q}, {q}, attn_mask={keep})", step)
    flat = body.fresh()
    body.emit(f"{flat} = reshape({out}, {length}, {width})", None)
    body.bind(Value(flat, x.shape, x.dtype))
    return Outcome.ADDED
