"""Issue 24's compile-time loops in generated programs (registered in ``CONSTRUCTS``).

* ``for range``: ``for i in range(n):`` over a body of generated calls that keeps the
  shapes of the names it rebinds, its layer names templated (``as layer3_{i + 1}``,
  ``as stack.*``);
* ``for config``: a config table driving a loop whose calls change the shape each
  iteration (``cfg0 = [(8, 3), (12, 1)]``, ``for a0, a1 in cfg0``, ``cfg0[i][0]``,
  ``enumerate``, ``zip``, ``len``), named ``as f2_{i + 1}``, ``as feats2.*``, ``as
  blocks2.{i}`` or with a quoted part ``as trunk2."b{i}-0"``;
* ``growing loop``: DenseNet's ``h = op(x, g) as dl{i + 1}; x = concat(x, h, dim=...)``,
  in the model or as a block over its growth and count (``Grow0(g, n)``, called again on
  its output with another count);
* ``loop block``: a block whose loop runs over a count parameter (``for i in range(n)``,
  called again with another count; sometimes an inline residual ``x = add(x, h)``) or a
  list argument (``Loop0(x, [(8, 3), (12, 1)])``).

Each construct counts its finer features in ``Draw.stats`` (``templated name``, ``quoted
name``, ``zip``, ...), which the campaign's "accepted programs with" line reports.
"""

from __future__ import annotations

import re
from typing import Any

from aurane import ops
from aurane.ops.modules import chainable
from aurane.ops.spec import OpSpec
from aurane.tools.fuzz.blocks import Block, Param, Params, make_block
from aurane.tools.fuzz.body import Body, add_step
from aurane.tools.fuzz.constructs import Draw, Outcome, construct
from aurane.tools.fuzz.draw import draw_args, draw_param, infer
from aurane.tools.fuzz.steps import FLOAT_DTYPES, GRAPH_ONLY, Step, Value, Written, call_text


def note(draw: Draw, *features: str) -> None:
    for feature in features:
        draw.stats[feature] = draw.stats.get(feature, 0) + 1


def fresh_name(draw: Draw, prefix: str) -> str:
    taken = {b.name for b in draw.blocks}
    n = 0
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def global_constant(draw: Draw, prefix: str, text: str) -> str:
    """A global constant ``NAME = text`` (a definition-less block holding one line)."""
    name = fresh_name(draw, prefix)
    draw.blocks.append(Block(name, [(f"{name} = {text}", None)], []))
    return name


def _sub(body: Body, x: Value) -> Body:
    """A body continuing ``body`` (its names and counters) from ``x``."""
    inner = Body(body.rng, body.param_dtype, list(body.pool), model=body.model, depth=body.depth)
    inner.current, inner.counter = x, body.counter
    inner.layer_names, inner.containers = body.layer_names, body.containers
    inner.blocks = list(body.blocks)
    return inner


def _merge(body: Body, inner: Body, lines: list[tuple[str, Step | None]]) -> None:
    body.lines += lines
    body.steps += inner.steps
    body.pool, body.current, body.counter = inner.pool, inner.current, inner.counter
    body.layer_names, body.blocks = inner.layer_names, inner.blocks


_NAMES = (
    (r" as (layer|seq|enc)(\d+)", r" as \1\2_{TPL}"),
    (r" as layers\.l(\d+)", r" as layers.l\1_{TPL}"),
)


def _templated(text: str, var: str, offset: int) -> tuple[str, bool]:
    """Layer names of a loop body made distinct per iteration; ``stack.N`` becomes ``*``."""
    tpl = var if offset == 0 else f"{var} + {offset}"
    out = text
    for pattern, repl in _NAMES:
        out = re.sub(pattern, repl.replace("TPL", tpl), out)
    out = re.sub(r" as stack\.\d+", " as stack.*", out)
    return out, out != text


# -- loops ------------------------------------------------------------------------------


@construct("for range", 0.05)
def for_range(draw: Draw) -> Outcome:
    """``for i in range(n):`` over generated calls that keep the shapes they rebind."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    before = {v.name: v for v in body.pool}
    inner = _sub(body, x)
    called, defined = False, len(draw.blocks)
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.15:  # a block (maybe repeated) called in every iteration
            called = make_block(rng, inner, draw.focus, draw.blocks) or called
            continue
        op = draw.op()
        if op in ("embedding", "parameter"):
            continue
        add_step(inner, op, allow_bad=False)
    if not inner.steps and not called:
        del draw.blocks[defined:]
        return Outcome.SKIPPED
    for value in inner.pool:
        old = before.get(value.name)
        if (
            old is not None
            and value is not old
            and (old.shape, old.dtype) != (value.shape, value.dtype)
        ):
            del draw.blocks[defined:]  # the next iteration would see other shapes
            return Outcome.SKIPPED
    n = rng.randint(1, 3)
    start = rng.choice((0, 0, 1))
    var = "i"
    bound = global_constant(draw, "depth", str(n + start)) if rng.random() < 0.3 else str(n + start)
    head = f"range({bound})" if start == 0 else f"range({start}, {bound})"
    lines: list[tuple[str, Step | None]] = [(f"        for {var} in {head}:", None)]
    named = False
    stacked = 0
    for text, step in inner.lines:
        stacked += text.count(" as stack.")
        new, changed = _templated(text, var, rng.choice((0, 1)) if start == 0 else 0)
        named = named or changed
        lines.append(("    " + new, step))
    _merge(body, inner, lines)
    body.containers = inner.containers + stacked * (n - 1)
    note(draw, *(["templated name"] if named else []), *(["block in a loop"] if called else []))
    return Outcome.ADDED


def _loop_ops(draw: Draw, x: Value) -> list[str]:
    return [
        op
        for op in (draw.favoured_op() for _ in range(8))
        if chainable(op) and op not in GRAPH_ONLY and ops.CATALOG[op].min_inputs == 1
        and op not in ("embedding", "parameter", "repeat")
        and not (x.dtype not in FLOAT_DTYPES and ops.CATALOG[op].input_dtypes == "float")
    ]  # fmt: skip


def _iterations(
    draw: Draw, spec: OpSpec, x: Value
) -> tuple[list[dict[str, Any]], list[str], list[Value]] | None:
    """Arguments of 2 to 4 iterations of ``spec`` from ``x``: the same but for 1 to 3
    integer arguments redrawn at each iteration's input."""
    rng = draw.rng
    param_dtype = draw.body.param_dtype
    try:
        first = draw_args(rng, spec, [x])
        out = infer(spec, first, [x], param_dtype)
    except Exception:
        return None
    varied = [k for k, v in first.items() if isinstance(v, int) and not isinstance(v, bool)]
    if not varied or spec.name in ("split", "chunk"):
        return None
    rng.shuffle(varied)
    varied = sorted(varied[: rng.randint(1, 3)], key=list(first).index)
    args, outs, cur = [first], [out], out
    for _ in range(rng.randint(1, 3)):
        for _try in range(6):
            again = dict(first)
            for key in varied:
                param = spec.param(key)
                assert param is not None
                value = draw_param(rng, spec, param, [cur], again)
                if not isinstance(value, int) or isinstance(value, bool):
                    break
                again[key] = value
            else:
                try:
                    nxt = infer(spec, again, [cur], param_dtype)
                except Exception:
                    continue
                args.append(again)
                outs.append(nxt)
                cur = nxt
                break
        else:
            break
    if len(args) < 2:
        return None
    return args, varied, outs


@construct("for config", 0.07)
def for_config(draw: Draw) -> Outcome:
    """A config table driving a loop whose calls may change the shape each iteration."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    made = None
    for op in _loop_ops(draw, x):
        made = _iterations(draw, ops.CATALOG[op], x)
        if made is not None:
            break
    if made is None:
        return Outcome.SKIPPED
    spec = ops.CATALOG[op]
    args, varied, outs = made
    rows = [tuple(a[k] for k in varied) for a in args]
    table = "[" + ", ".join(
        (str(r[0]) if len(varied) == 1 else "(" + ", ".join(map(str, r)) + ")") for r in rows
    ) + "]"  # fmt: skip
    names = [f"a{j}" for j in range(len(varied))]
    features = []
    form = rng.choice(("unpack", "index", "enumerate", "zip", "inline"))
    if form == "inline":
        head, exprs, index = f"for {', '.join(names)} in {table}:", names, None
        features.append("for a, b in LIST")
    elif form == "zip":
        lists = [global_constant(draw, "col", "[" + ", ".join(str(r[j]) for r in rows) + "]")
                 for j in range(len(varied))]  # fmt: skip
        if len(varied) == 1:  # an index beside the column
            head, index = f"for i, a0 in zip(range(len({lists[0]})), {lists[0]}):", "i"
        else:
            head, index = f"for {', '.join(names)} in zip({', '.join(lists)}):", None
        exprs = names
        features.append("zip")
    else:
        cfg = global_constant(draw, "cfg", table)
        features.append("config table")
        if form == "unpack":
            head, exprs, index = f"for {', '.join(names)} in {cfg}:", names, None
            features.append("for a, b in LIST")
        elif form == "index":
            head = f"for i in range(len({cfg})):"
            index = "i"
            exprs = [
                f"{cfg}[i]" if len(varied) == 1 else f"{cfg}[i][{j}]" for j in range(len(varied))
            ]
            features += ["len", "cfg[i][j]"]
        else:
            target = names[0] if len(varied) == 1 else f"({', '.join(names)})"
            head, exprs, index = f"for i, {target} in enumerate({cfg}):", names, "i"
            features.append("enumerate")
    written = dict(args[0])
    for key, expr in zip(varied, exprs, strict=True):
        written[key] = Written(args[0][key], expr)
    name = ""
    if "parametric" in spec.kinds and spec.name != "positional_encoding":
        body.layer_names += 1
        k = body.layer_names
        roll = rng.random()
        if roll < 0.25:
            name = f" as feats{k}.*"
            features.append("as P.*")
        elif index is not None and roll < 0.45:
            name = f" as f{k}_{{{index} + 1}}"
            features.append("templated name")
        elif index is not None and roll < 0.65:
            name = f" as blocks{k}.{{{index}}}"
            features.append("templated name")
        elif index is not None:
            name = f' as trunk{k}."b{{{index}}}-0"'
            features += ["templated name", "quoted name"]
    step = Step(spec.name, args[0], (x.shape,), x.dtype)
    call = call_text(spec, [], written, False)
    lines: list[tuple[str, Step | None]] = [
        ("        " + head, None),
        (f"            {x.name} -> {call}{name}", step),
    ]
    body.lines += lines
    step.model = body.model
    body.steps.append(step)
    for more, prev in zip(args[1:], outs, strict=False):
        extra = Step(spec.name, more, (prev.shape,), x.dtype, model=body.model)
        body.steps.append(extra)
    body.bind(Value(x.name, outs[-1].shape, outs[-1].dtype))
    note(draw, *features)
    return Outcome.ADDED


@construct("growing loop", 0.03)
def growing_loop(draw: Draw) -> Outcome:
    """DenseNet's growing width: each iteration concatenates a new layer's output."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    if x.dtype not in FLOAT_DTYPES or not x.rank or x.numel > 4096:
        return Outcome.SKIPPED
    growth = rng.choice((1, 2, 3, 4))
    n = rng.randint(2, 4)
    kernel = rng.choice((1, 3))
    if x.rank in (2, 3) and rng.random() < 0.6:
        op = "conv1d" if x.rank == 2 else "conv2d"
        call, axis = f"{op}({x.name}, {{g}}, kernel={kernel}, padding={kernel // 2})", 1
        args: dict[str, Any] = {"channels": growth, "kernel": kernel, "padding": kernel // 2}
    else:
        op, call, axis = "dense", f"dense({x.name}, {{g}})", -1
        args = {"features": growth}
    if rng.random() < 0.5:
        return _growing_block(draw, x, op, call, axis, args, growth)
    g_text = global_constant(draw, "growth", str(growth)) if rng.random() < 0.4 else str(growth)
    body.layer_names += 1
    k_name = body.layer_names
    h = body.fresh()
    shape = x.shape
    steps = []
    for _ in range(n):
        steps.append(Step(op, dict(args), (shape,), x.dtype, model=body.model))
        grown = list(shape)
        grown[axis if axis < 0 else 0] += growth
        shape = tuple(grown)
    body.lines += [
        (f"        for i in range({n}):", None),
        (f"            {h} = {call.format(g=g_text)} as denselayer{k_name}_{{i + 1}}", steps[0]),
        (f"            {x.name} = concat({x.name}, {h}, dim={axis})", None),
    ]
    body.steps += steps
    body.bind(Value(x.name, shape, x.dtype))
    note(draw, "templated name")
    return Outcome.ADDED


def _grown(shape: tuple[int, ...], axis: int, by: int) -> tuple[int, ...]:
    grown = list(shape)
    grown[axis if axis < 0 else 0] += by
    return tuple(grown)


def _growing_block(
    draw: Draw, x: Value, op: str, call: str, axis: int, args: dict[str, Any], growth: int
) -> Outcome:
    """The growing loop as DenseNet writes it, a block over its growth and count
    (``Grow0(g, n)``), called again on its output with another count: one class must serve
    calls whose input widths and loop counts differ."""
    body, rng = draw.body, draw.rng
    name = fresh_name(draw, "Grow")
    params = Params(rng)
    n = rng.randint(0, 3)
    params.params += [
        Param("g", growth, ": int" if rng.random() < 0.5 else "", False, False),
        Param("n", n, ": int" if rng.random() < 0.5 else "", False, False),
    ]
    step = Step(op, dict(args), (x.shape,), x.dtype, model=name)
    lines: list[tuple[str, Step | None]] = [
        (params.header(name), None),
        ("    def forward(x):", None),
        ("        for i in range(n):", None),
        (
            f"            h = {call.replace(x.name + ',', 'x,', 1).format(g='g')} as dl{{i + 1}}",
            step,
        ),
        (f"            x = concat(x, h, dim={axis})", None),
        ("        return x", None),
    ]
    draw.blocks.append(Block(name, lines, [step]))
    body.blocks.append(name)
    out = Value(x.name, _grown(x.shape, axis, growth * n), x.dtype)
    args_text = params.call_args()
    body.define(x, rng.random() < 0.5, f"{name}({', '.join(args_text)})",
                f"{name}({', '.join([x.name, *args_text])})", None, out)  # fmt: skip
    features = ["growing loop block", "templated name"]
    current = body.current
    assert current is not None
    if current.numel <= 4096 and rng.random() < 0.6:
        again = rng.randint(1, 3)
        text = f"{name}({', '.join(params.call_args({'n': again}))})"
        body.define(current, True, text, text, None,
                    Value(current.name, _grown(current.shape, axis, growth * again), x.dtype))  # fmt: skip
        features.append("two counts of one block")
    note(draw, *features)
    return Outcome.ADDED


@construct("loop block", 0.05)
def loop_block(draw: Draw) -> Outcome:
    """A block whose loop is driven by its parameters: ``for i in range(n)`` over calls
    that keep the shape, or ``for a0, a1 in cfg`` over a list argument (``Stage(x, [(8, 3),
    (12, 1)])``) whose calls change it; called again with another count."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    name = fresh_name(draw, "Loop")
    params = Params(rng)
    xin = Value("x", x.shape, x.dtype)
    inner = Body(rng, body.param_dtype, [xin], model=name, writer=params, depth=body.depth + 1)
    inner.current = xin
    features = ["loop in a block"]
    if rng.random() < 0.5:  # a count parameter over a body that keeps the shape
        for _ in range(rng.randint(1, 2)):
            op = draw.op()
            if op not in ("parameter", "embedding"):
                add_step(inner, op, allow_bad=False)
        out = inner.current
        assert out is not None
        if not inner.steps or any(
            (v.shape, v.dtype) != (xin.shape, xin.dtype) for v in inner.pool if v.name == "x"
        ):
            return Outcome.SKIPPED
        n = rng.randint(0, 3)
        params.params.append(Param("n", n, ": int" if rng.random() < 0.5 else "", False, False))
        loop: list[tuple[str, Step | None]] = [("        for i in range(n):", None)]
        # an inline residual: ``x = add(x, h)`` of the body's last value, or of ``r = x``
        # kept from before a body that rebinds ``x`` (the loop threads a second tensor)
        kept = (out.shape, out.dtype) == (xin.shape, xin.dtype)
        residual = kept and xin.dtype in FLOAT_DTYPES and rng.random() < 0.5
        if residual and out.name == "x":
            loop.append(("            r = x", None))
        for text, step in inner.lines:
            loop.append(("    " + _templated(text, "i", 1)[0], step))
        if residual:
            add = Step("add", {}, (xin.shape, xin.shape), xin.dtype, model=name)
            loop.append((f"            x = add(x, {'r' if out.name == 'x' else out.name})", add))
            inner.steps.append(add)
            out = xin
            features.append("residual loop")
        if n == 0:  # the loop adds nothing: the block returns its input
            out = xin
        features.append("range(parameter)")
        again: dict[str, Any] | None = {"n": rng.randint(1, 3)} if out.name == "x" else None
    else:
        spec_made = None
        for op in _loop_ops(draw, x):
            spec_made = _iterations(draw, ops.CATALOG[op], xin)
            if spec_made is not None:
                break
        if spec_made is None:
            return Outcome.SKIPPED
        spec = ops.CATALOG[op]
        args, varied, outs = spec_made
        rows = [tuple(a[k] for k in varied) for a in args]
        table = "[" + ", ".join("(" + ", ".join(map(str, r)) + ",)" for r in rows) + "]"
        params.params.append(Param("cfg", Written(rows, table), "", False, False))
        names = [f"a{j}" for j in range(len(varied))]
        written = dict(args[0])
        if rng.random() < 0.5:
            head = (
                f"for {', '.join(names)}, in cfg:"
                if len(names) == 1
                else f"for {', '.join(names)} in cfg:"
            )
            exprs = names
        else:
            head = "for i in range(len(cfg)):"
            exprs = [f"cfg[i][{j}]" for j in range(len(varied))]
        for key, expr in zip(varied, exprs, strict=True):
            written[key] = Written(args[0][key], expr)
        step = Step(spec.name, args[0], (xin.shape,), xin.dtype, model=name)
        loop = [
            (f"        {head}", None),
            (f"            x -> {call_text(spec, [], written, False)}", step),
        ]
        inner.steps = [step]
        out = Value("x", outs[-1].shape, outs[-1].dtype)
        features.append("list argument")
        again = None
    lines: list[tuple[str, Step | None]] = [(params.header(name), None)]
    lines += [(f"    {c} = {e}", None) for c, e in params.constants]
    lines += [("    def forward(x):", None), *loop, (f"        return {out.name}", None)]
    draw.blocks.append(Block(name, lines, inner.steps))
    body.blocks.append(name)
    args_text = params.call_args()
    label = f" as loop{len(body.blocks)}" if rng.random() < 0.3 else ""
    body.define(x, rng.random() < 0.5, f"{name}({', '.join(args_text)}){label}",
                f"{name}({', '.join([x.name, *args_text])}){label}", None, out)  # fmt: skip
    if again is not None and (out.shape, out.dtype) == (x.shape, x.dtype) and rng.random() < 0.5:
        current = body.current
        assert current is not None
        text = f"{name}({', '.join(params.call_args(again))})"
        body.define(current, True, text, text, None, out)
        features.append("two counts of one block")
    note(draw, *features)
    return Outcome.ADDED
