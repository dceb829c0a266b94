"""Whole programs: the input, the forward, parameterised blocks and ``repeat``, the culprit
and the edge cases past int64 (``generate``)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from aurane import ops
from aurane.tools.fuzz.body import OPS, _Body, adapt, add_step
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
    if roll < 0.12:
        return Value("x", (rng.randint(2, 6),), "int64")
    rank = rng.choice((1, 2, 2, 3, 3, 3, 4))
    shape = tuple(rng.choice(SIZES) if i else rng.choice((1, 2, 3, 4, 6, 8)) for i in range(rank))
    return Value("x", shape, rng.choice(FLOAT_DTYPES))


def _header(name: str, x: Value) -> list[str]:
    shape = literal(tuple(x.shape))
    return [f"model {name}:", f"    input_shape = {shape}", f"    input_dtype = {x.dtype}",
            "    def forward(x):"]  # fmt: skip


def _block(
    rng: random.Random, body: _Body, index: int, focus: Sequence[str]
) -> tuple[list[tuple[str, Step | None]], list[Step]] | None:
    """A parameterised block applied to the current value: its definition lines and steps,
    and the call appended to ``body``."""
    x = body.current
    assert x is not None
    if x.dtype not in FLOAT_DTYPES:
        return None
    name = f"Blk{index}"
    inner = _Body(rng, body.param_dtype, [Value("x", x.shape, x.dtype)], model=name)
    inner.current = inner.pool[0]
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(focus) if focus and rng.random() < 0.5 else rng.choice(OPS)
        if op in ("parameter", "embedding"):
            continue
        add_step(inner, op, allow_bad=False)
    if not inner.steps:
        return None
    out = inner.current
    assert out is not None
    # parameterise the first size argument the body wrote literally
    params: list[str] = []
    call_args: list[str] = []
    lines: list[tuple[str, Step | None]] = []
    done = False
    for text, step in inner.lines:
        if not done and step is not None:
            for key in ("features", "channels", "hidden", "width"):
                value = step.args.get(key)
                if not isinstance(value, int) or isinstance(value, bool):
                    continue
                if value % 2 == 0 and rng.random() < 0.5:
                    changed = _replace_size(text, value, "2 * width")
                    given = value // 2
                else:
                    changed = _replace_size(text, value, "width")
                    given = value
                if changed != text:
                    params.append("width" if rng.random() < 0.5 else "width: int")
                    call_args.append(str(given))
                    text = changed
                    done = True
                break
        lines.append((text, step))
    if rng.random() < 0.3:
        params.append("unused=1.0")
    header = (
        f"model {name}({', '.join(params)}):" if params or rng.random() < 0.5 else f"model {name}:"
    )
    definition: list[tuple[str, Step | None]] = [(header, None), ("    def forward(x):", None)]
    definition += lines
    definition.append((f"        return {out.name}", None))
    call = f"{name}({', '.join(call_args)})" if params or "(" in header else name
    preserving = out.shape == x.shape and out.dtype == x.dtype
    if preserving and rng.random() < 0.5:
        times = rng.randint(1, 3)
        step = Step("repeat", {"block": name, "times": times}, (x.shape,), x.dtype)
        chain = rng.random() < 0.5
        body.define(
            x, chain, f"repeat({call}, {times})", f"repeat({x.name}, {call}, {times})", step, x
        )
    else:
        chain = rng.random() < 0.5
        body.define(x, chain, call, f"{name}({', '.join([x.name, *call_args])})", None, out)
    return definition, inner.steps


def _replace_size(text: str, value: int, expr: str) -> str:
    for before in ("(", ", "):
        for after in (",", ")"):
            needle = f"{before}{value}{after}"
            if needle in text:
                return text.replace(needle, f"{before}{expr}{after}", 1)
    return text


def generate(
    seed: int, *, bad: float = 0.15, edge: float = 0.03, focus: Sequence[str] = ()
) -> Program:
    """One random program. ``focus`` ops are drawn half of the time (coverage)."""
    rng = random.Random(seed)
    x = _input(rng)
    param_dtype = x.dtype if x.dtype in FLOAT_DTYPES else "float32"
    body = _Body(rng, param_dtype, [x], model="Net")
    body.current = x
    blocks: list[tuple[list[tuple[str, Step | None]], list[Step]]] = []
    culprit: Step | None = None
    edge_case: str | None = None
    if x.dtype == "int64":
        add_step(body, "embedding", allow_bad=False)
    steps = rng.randint(1, 7)
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.12:
            try:
                made = _block(rng, body, len(blocks), focus)
            except Exception:
                made = None
            if made is not None:
                blocks.append(made)
            continue
        op = rng.choice(focus) if focus and rng.random() < 0.5 else rng.choice(OPS)
        if op == "embedding" and (body.current is None or body.current.dtype != "int64"):
            op = "flatten"
        allow_bad = rng.random() < bad
        try:
            if add_step(body, op, allow_bad):
                last = body.steps[-1] if body.steps else None
                if last is not None and not last.valid:
                    culprit = last
                    break
            elif rng.random() < 0.7:
                adapt(body, ops.CATALOG[op])
        except Exception:  # a shape rule that crashes: the compiler run will report it
            break
    if not body.steps and culprit is None:
        body.emit("x -> identity()", Step("identity", {}, (x.shape,), x.dtype, model="Net"))
        body.current = Value("x", x.shape, x.dtype)
    returned = any(text.strip().startswith("return") for text, _ in body.lines)
    if (
        culprit is None
        and body.current is not None
        and body.current.name != x.name
        and not returned
    ):
        body.emit(f"return {body.current.name}", None)
    header = _header("Net", x)
    if rng.random() < edge:
        edge_case, header, body = _edge(rng, header, body)
    lines: list[tuple[str, Step | None]] = []
    for definition, _steps in blocks:
        lines += definition + [("", None)]
    lines += [(h, None) for h in header] + body.lines
    steps_all = [s for _d, block_steps in blocks for s in block_steps] + body.steps
    for number, (_text, step) in enumerate(lines, start=1):
        if step is not None:
            step.line = number
    text = "\n".join(t for t, _ in lines) + "\n"
    return Program(seed, text, steps_all, culprit, edge_case, ["Net"])


def _edge(rng: random.Random, header: list[str], body: _Body) -> tuple[str, list[str], _Body]:
    """Sizes past int64 in the input shape or in one size argument."""
    huge = rng.choice(HUGE)
    if rng.random() < 0.5:
        dims = rng.randint(1, 3)
        header = [*header]
        header[1] = f"    input_shape = {literal(tuple([huge] * dims))}"
        return _bound(f"input_shape of {huge}^{dims}", huge**dims), header, body
    fresh = _Body(rng, body.param_dtype, body.pool[:1], model="Net")
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
