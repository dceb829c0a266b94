"""Issue 24's constructs (configurable blocks), registered in ``CONSTRUCTS``.

* ``for range``: ``for i in range(n):`` over a body of generated calls that keeps the
  shapes of the names it rebinds, its layer names templated (``as layer3_{i + 1}``,
  ``as stack.*``);
* ``for config``: a config table driving a loop whose calls change the shape each
  iteration (``cfg0 = [(8, 3), (12, 1)]``, ``for a, b in cfg0``, ``cfg0[i][0]``,
  ``enumerate``, ``zip``, ``len``), named ``as f2_{i + 1}``, ``as feats2.*``, ``as
  blocks2.{i}`` or with a quoted part ``as trunk2."b{i}-0"``;
* ``growing loop``: DenseNet's ``h = op(x, g) as dl{i + 1}; x = concat(x, h, dim=...)``;
* ``if block``: a block whose body is chosen by ``if``/``elif``/``else`` on its parameters
  and the input's sizes (comparisons, ``in``, ``and``/``or``/``not``), with an
  operation-valued parameter (``act=relu``, ``none``) applied as a step, a graph call or a
  suffix, ``init`` rules and ``init=``; called again taking another branch when both keep
  the shape;
* ``operation value``: a global constant holding an operation or ``none`` applied in the
  model;
* ``constant functions``: arguments written with ``max``, ``min``, ``round``, ``ceil``,
  ``floor``, ``int``, ``abs``, ``make_divisible``, ``len``, table items, ``A if C else B``
  and the input's sizes ``x.shape[k]``;
* ``init``: a layer with ``init=`` (``normal(0.02)``, ``zeros``, ``xavier_uniform``, ...);
* ``variant``: ``model V0 = Blk(args)`` (with or without ``init`` rules) called as a block;
* ``repeat start``: ``repeat(B, n, start=1)``, a numbered container continued by a repeat
  or appended to with ``*``, and splicing ``-> *B() as P.*``.

Each construct also counts its finer features in ``Draw.stats`` (``if/elif/else``,
``templated name``, ``quoted name``, ``operation none``, ``make_divisible``, ...), so the
campaign's "accepted programs with" line reports them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from aurane import ops
from aurane.ops.modules import chainable
from aurane.ops.spec import OpSpec
from aurane.tools.fuzz.blocks import Block, Param, Params
from aurane.tools.fuzz.body import Body, add_step
from aurane.tools.fuzz.constructs import Draw, Outcome, construct
from aurane.tools.fuzz.draw import draw_args, draw_param, infer
from aurane.tools.fuzz.steps import FLOAT_DTYPES, GRAPH_ONLY, Step, Value, Written, call_text

ACTIVATIONS = ("relu", "gelu", "tanh", "sigmoid", "silu", "relu6", "elu", "selu", "mish",
               "hardswish", "softplus")  # fmt: skip
INITS = ('normal(0.02)', 'normal(0.02, mean=0.1)', 'trunc_normal(0.02)', 'uniform(-0.1, 0.1)',
         'zeros', 'ones', 'constant(0.5)', 'xavier_uniform', 'xavier_normal(gain=2.0)',
         'kaiming_normal(mode="fan_out", nonlinearity="relu")', 'kaiming_uniform(a=0.1)',
         'normal(0.02 / sqrt(2 * 3))')  # fmt: skip
# initialisers that need a weight of two axes or more (fan in and fan out)
FAN = ("xavier", "kaiming")
WEIGHTED = ("dense", "conv1d", "conv2d", "conv3d", "embedding", "conv_transpose1d",
            "conv_transpose2d", "layer_norm", "batchnorm", "group_norm")  # fmt: skip


def _note(draw: Draw, *features: str) -> None:
    for feature in features:
        draw.stats[feature] = draw.stats.get(feature, 0) + 1


def _fresh(draw: Draw, prefix: str) -> str:
    taken = {b.name for b in draw.blocks}
    n = 0
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def _global(draw: Draw, prefix: str, text: str) -> str:
    """A global constant ``NAME = text`` (a definition-less block holding one line)."""
    name = _fresh(draw, prefix)
    draw.blocks.append(Block(name, [(f"{name} = {text}", None)], []))
    return name


def _sub(body: Body, x: Value) -> Body:
    """A body continuing ``body`` (its names and counters) from ``x``."""
    inner = Body(body.rng, body.param_dtype, list(body.pool), model=body.model, depth=body.depth)
    inner.current, inner.counter = x, body.counter
    inner.layer_names, inner.containers = body.layer_names, body.containers
    return inner


def _merge(body: Body, inner: Body, lines: list[tuple[str, Step | None]]) -> None:
    body.lines += lines
    body.steps += inner.steps
    body.pool, body.current, body.counter = inner.pool, inner.current, inner.counter
    body.layer_names = inner.layer_names


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
    for _ in range(rng.randint(1, 3)):
        op = draw.op()
        if op in ("embedding", "parameter"):
            continue
        add_step(inner, op, allow_bad=False)
    if not inner.steps:
        return Outcome.SKIPPED
    for value in inner.pool:
        old = before.get(value.name)
        if (
            old is not None
            and value is not old
            and (old.shape, old.dtype) != (value.shape, value.dtype)
        ):
            return Outcome.SKIPPED  # the next iteration would see other shapes
    n = rng.randint(1, 3)
    start = rng.choice((0, 0, 1))
    var = "i"
    bound = _global(draw, "depth", str(n + start)) if rng.random() < 0.3 else str(n + start)
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
    _note(draw, *(["templated name"] if named else []))
    return Outcome.ADDED


def _loop_ops(draw: Draw, x: Value) -> list[str]:
    return [
        op
        for op in (draw.op() for _ in range(8))
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
        lists = [_global(draw, "col", "[" + ", ".join(str(r[j]) for r in rows) + "]")
                 for j in range(len(varied))]  # fmt: skip
        if len(varied) == 1:  # an index beside the column
            head, index = f"for i, a0 in zip(range(len({lists[0]})), {lists[0]}):", "i"
        else:
            head, index = f"for {', '.join(names)} in zip({', '.join(lists)}):", None
        exprs = names
        features.append("zip")
    else:
        cfg = _global(draw, "cfg", table)
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
    _note(draw, *features)
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
    g_text = _global(draw, "growth", str(growth)) if rng.random() < 0.4 else str(growth)
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
    _note(draw, "templated name")
    return Outcome.ADDED


# -- conditions -------------------------------------------------------------------------

Env = dict[str, Any]
Cond = tuple[str, Callable[[Env], bool]]


def _atoms(draw: Draw, params: Params, x: Value, env: Env) -> list[Cond]:
    """Conditions over new parameters (int, bool, str) and the input's sizes."""
    rng = draw.rng
    atoms: list[Cond] = []
    kind = rng.choice(("int", "int", "bool", "str"))
    name = f"q{len(params.params)}"
    if kind == "int":
        given: Any = rng.randint(0, 6)
        c = rng.randint(0, 6)
        a, b = rng.sample(range(7), 2)
        atoms += [
            (f"{name} > {c}", lambda e: e[name] > c),
            (f"{name} == {c}", lambda e: e[name] == c),
            (f"{name} != {c}", lambda e: e[name] != c),
            (f"{name} in ({a}, {b})", lambda e: e[name] in (a, b)),
            (f"{name} not in [{a}, {b}]", lambda e: e[name] not in (a, b)),
            (f"{name} % 2 == 0", lambda e: e[name] % 2 == 0),
            (f"2 * {name} + 1 <= {c}", lambda e: 2 * e[name] + 1 <= c),
        ]
        annotation = ": int"
    elif kind == "bool":
        given = rng.random() < 0.5
        atoms += [(name, lambda e: bool(e[name])), (f"not {name}", lambda e: not e[name])]
        annotation = ": bool"
    else:
        given = rng.choice(("a", "b", "c"))
        atoms += [
            (f'{name} == "b"', lambda e: e[name] == "b"),
            (f'{name} in ("a", "c")', lambda e: e[name] in ("a", "c")),
        ]
        annotation = ": str"
    params.params.append(Param(name, given, annotation if rng.random() < 0.5 else "",
                               rng.random() < 0.4, False))  # fmt: skip
    env[name] = given
    if x.rank and rng.random() < 0.4:
        axis = rng.randint(1, x.rank)
        size = x.shape[axis - 1]
        t = rng.randint(1, 8)
        atoms.append((f"x.shape[{axis}] >= {t}", lambda e: size >= t))
        atoms.append((f"x.shape[-1] == {x.shape[-1]}", lambda e: True))
        _note(draw, "x.shape")
    return atoms


def _condition(rng: Any, atoms: list[Cond], want: bool, env: Env) -> Cond:
    a = rng.choice(atoms)
    b = rng.choice(atoms)
    roll = rng.random()
    if roll < 0.35:
        text, fn = a
    elif roll < 0.7:
        text, fn = f"{a[0]} and {b[0]}", (lambda e: a[1](e) and b[1](e))
    else:
        text, fn = f"{a[0]} or {b[0]}", (lambda e: a[1](e) or b[1](e))
    if fn(env) != want:
        inner = fn
        text, fn = f"not ({text})", (lambda e: not inner(e))
    return text, fn


# -- blocks with branches ---------------------------------------------------------------


def _apply_act(body: Body, act: str, rng: Any) -> str:
    """Apply the operation-valued parameter ``act`` to the current value: a step, a graph
    call or a suffix on a new call. Returns the form used."""
    cur = body.current
    assert cur is not None
    roll = rng.random()
    if roll < 0.4:
        body.emit(f"{cur.name} -> {act}()", None)
        return "operation as step"
    if roll < 0.7:
        name = body.fresh()
        body.emit(f"{name} = {act}({cur.name})", None)
        body.bind(Value(name, cur.shape, cur.dtype))
        return "operation as call"
    name = body.fresh()
    body.emit(f"{name} = identity({cur.name}).{act}", None)
    body.bind(Value(name, cur.shape, cur.dtype))
    return "operation as suffix"


def _branch(draw: Draw, name: str, x: Value, params: Params) -> Body | None:
    inner = Body(draw.rng, draw.body.param_dtype, [Value("x", x.shape, x.dtype)], model=name,
                 writer=params, depth=draw.body.depth + 1)  # fmt: skip
    inner.current = inner.pool[0]
    for _ in range(draw.rng.randint(1, 2)):
        op = draw.op()
        if op in ("parameter", "embedding"):
            continue
        if op in WEIGHTED and draw.rng.random() < 0.3:
            _init_step(inner, draw, op)
            continue
        add_step(inner, op, allow_bad=False)
    return inner if inner.steps else None


def _init_step(body: Body, draw: Draw, op: str) -> bool:
    """``x -> dense(8, init=normal(0.02))``: a weighted layer with an initialiser."""
    rng = draw.rng
    x = body.current
    assert x is not None
    spec = ops.CATALOG[op]
    for _ in range(4):
        args = draw_args(rng, spec, [x])
        if args.get("affine") is False or args.get("elementwise_affine") is False:
            continue
        try:
            out = infer(spec, args, [x], body.param_dtype)
        except Exception:
            continue
        init = rng.choice(INITS)
        if op in ("layer_norm", "batchnorm", "group_norm") and init.startswith(FAN):
            init = "ones"
        step = Step(op, args, (x.shape,), x.dtype)
        text = call_text(spec, [], body.write(spec, args, step), False)
        text = text[:-1] + (", " if text[-2] != "(" else "") + f"init={init})"
        body.emit(f"{x.name} -> {text}", step)
        body.bind(Value(x.name, out.shape, out.dtype))
        draw.stats["init="] = draw.stats.get("init=", 0) + 1
        return True
    return False


@construct("if block", 0.06)
def if_block(draw: Draw) -> Outcome:
    """A block whose body is chosen by ``if``/``elif``/``else`` on its parameters."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    name = _fresh(draw, "Sel")
    made = Block(name, [], [])
    draw.blocks.append(made)
    params = Params(rng)
    branches = [b for b in (_branch(draw, name, x, params) for _ in range(rng.randint(2, 3))) if b]
    if len(branches) < 2:
        draw.blocks.remove(made)
        return Outcome.SKIPPED
    env: Env = {}
    atoms: list[Cond] = []
    for _ in range(rng.randint(1, 2)):
        atoms += _atoms(draw, params, x, env)
    act = None
    features = ["if/elif/else"]
    if x.dtype in FLOAT_DTYPES and rng.random() < 0.6:
        given = rng.choice((*ACTIVATIONS, "none"))
        act = Param("act", Written(given, given), "", rng.random() < 0.5, False)
        params.params.append(act)
        features.append("operation none" if given == "none" else "operation parameter")
    taken = rng.randrange(len(branches))
    has_else = rng.random() < 0.6
    conds: list[Cond] = []
    for i in range(len(branches) - (1 if has_else or taken == len(branches) - 1 else 0)):
        conds.append(_condition(rng, atoms, i == taken, env))
    lines: list[tuple[str, Step | None]] = []
    for i, branch in enumerate(branches):
        current = branch.current
        if (
            act is not None
            and current is not None
            and current.dtype in FLOAT_DTYPES
            and rng.random() < 0.6
        ):
            features.append(_apply_act(branch, "act", rng))
        out = branch.current
        assert out is not None
        if i < len(conds):
            keyword = "if" if i == 0 else "elif"
            lines.append((f"        {keyword} {conds[i][0]}:", None))
            indent = "    "
        elif i == len(conds) and has_else and i > 0:
            lines.append(("        else:", None))
            indent = "    "
        else:  # after the if: the fall-through body
            indent = ""
        lines += [(indent + t, s) for t, s in branch.lines]
        lines.append((f"        {indent}return {out.name}", None))
    if len(conds) == len(branches):  # every branch has a condition: a fall-through return
        lines.append(("        return x", None))
    header = [(params.header(name), None)]
    header += [(f"    {c} = {e}", None) for c, e in params.constants]
    rules = _rules(draw, branches[taken].steps)
    header += [(f"    init {r}", None) for r in rules]
    if rules:
        features.append("init rule")
    made.lines = header + [("    def forward(x):", None)] + lines
    made.steps = [s for b in branches for s in b.steps]
    body.blocks.append(name)
    out = branches[taken].current
    assert out is not None
    args = params.call_args()
    call = f"{name}({', '.join(args)})"
    label = f" as sel{len(body.blocks)}" if rng.random() < 0.3 else ""
    chain = rng.random() < 0.5
    body.define(
        x, chain, f"{call}{label}", f"{name}({', '.join([x.name, *args])}){label}", None, out
    )
    # a second call taking another branch that keeps the shape (one class, two branches)
    if not rules and out.shape == x.shape and out.dtype == x.dtype:
        keep = [i for i, b in enumerate(branches) if i != taken and b.current is not None
                and (b.current.shape, b.current.dtype) == (x.shape, x.dtype)]  # fmt: skip
        for _ in range(20 if keep else 0):
            trial = dict(env)
            for p in params.params:
                if p.name in env:
                    trial[p.name] = (rng.randint(0, 6) if isinstance(p.given, int) and not isinstance(p.given, bool)
                                     else rng.random() < 0.5 if isinstance(p.given, bool)
                                     else rng.choice(("a", "b", "c")))  # fmt: skip
            chosen = next((i for i, c in enumerate(conds) if c[1](trial)), len(conds))
            if chosen in keep:
                again = f"{name}({', '.join(params.call_args(trial))})"
                current = body.current
                assert current is not None
                body.define(current, True, again, again, None, out)
                features.append("two branches of one block")
                break
    _note(draw, *features)
    return Outcome.ADDED


def _rules(draw: Draw, steps: list[Step]) -> list[str]:
    """``init OP: SPEC`` rules for operations the taken branch has."""
    rng = draw.rng
    present = [s for s in steps if s.op in ("dense", "conv1d", "conv2d", "conv3d", "embedding")]
    if not present or rng.random() < 0.5:
        return []
    step = rng.choice(present)
    init = rng.choice(INITS)
    out = [f"{step.op}: {init}"]
    if step.op != "embedding" and step.args.get("bias", True) and rng.random() < 0.5:
        out.append(f"{step.op}.bias: zeros")
    return out


# -- values, functions, initialisers ----------------------------------------------------


@construct("operation value", 0.03)
def operation_value(draw: Draw) -> Outcome:
    """``act0 = gelu`` (or ``none``) applied in the model as a step, a call or a suffix."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    if x.dtype not in FLOAT_DTYPES:
        return Outcome.SKIPPED
    given = rng.choice((*ACTIVATIONS, "none"))
    name = _global(draw, "act", given)
    form = _apply_act(body, name, rng)
    _note(draw, form, *(["operation none"] if given == "none" else []))
    return Outcome.ADDED


def make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """torchvision's ``_make_divisible`` (the language's meaning)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConstWriter:
    """Writes integer arguments of the model's calls with constant functions."""

    def __init__(self, draw: Draw, input_free: bool) -> None:
        self.draw = draw
        self.input_free = input_free  # x not rebound yet: x.shape[k] is the input's
        self.used: set[str] = set()

    def write(self, spec: OpSpec, args: dict[str, Any]) -> dict[str, Any]:
        return {k: self.written(v) for k, v in args.items()}

    def written(self, value: Any, free: bool = False) -> Any:
        rng = self.draw.rng
        if isinstance(value, tuple):
            return tuple(self.written(v) for v in value)
        if not isinstance(value, int) or isinstance(value, bool) or rng.random() < 0.4:
            return value
        v = value
        forms: list[tuple[str, str]] = [
            ("max", f"max({v}, {v - rng.randint(0, 3)})"),
            ("min", f"min({v + rng.randint(0, 3)}, {v})"),
            ("round", f"round({v} + 0.3)"),
            ("ceil", f"ceil({v} - 0.5)"),
            ("floor", f"floor({v} + 0.5)"),
            ("int", f"int({v} * 1.0)"),
            ("A if C else B", f"{v} if {v} > {v - 1} else {v + 1}"),
        ]
        if v >= 0:
            forms.append(("abs", f"abs({-v})"))
        if v > 0:
            d = rng.choice([d for d in (1, 2, 4, 8) if v % d == 0])
            forms.append(("make_divisible", f"make_divisible({v}, {d})"))
            raw = v * 0.75
            if make_divisible(raw, d) == v:
                forms.append(("make_divisible", f"make_divisible({v} * 0.75, {d})"))
        if 0 < v <= 8:
            items = ", ".join(str(j) for j in range(v))
            forms.append(("len", f"len([{items}])"))
        if v >= 0 and rng.random() < 0.3:
            table = _global(self.draw, "tbl", f"[({v + 1}, {v}), ({v}, 2)]")
            forms.append(("cfg[i][j]", f"{table}[0][1]"))
        if self.input_free:
            x = self.draw.body.pool[0]
            for axis, size in enumerate(x.shape, start=1):
                if size == v:
                    forms.append(
                        (
                            "x.shape",
                            rng.choice((f"x.shape[{axis}]", f"x.shape[{axis - x.rank - 1}]")),
                        )
                    )
        feature, text = rng.choice(forms)
        self.used.add(feature)
        return Written(v, text)


@construct("constant functions", 0.05)
def constant_functions(draw: Draw) -> Outcome:
    """A call whose integer arguments are written with the language's pure functions."""
    body = draw.body
    x = body.current
    assert x is not None
    if body.writer is not None:
        return Outcome.SKIPPED
    rebound = any(t.strip().startswith(("x ->", "x =")) for t, _ in body.lines)
    writer = ConstWriter(draw, body.pool[0].name == "x" and not rebound)
    body.writer = writer
    try:
        added = add_step(body, draw.op(), allow_bad=False)
    finally:
        body.writer = None
    if not added:
        return Outcome.SKIPPED
    if body.steps:
        body.steps[-1].written = ()  # not block parameters
    _note(draw, *sorted(writer.used))
    return Outcome.ADDED


@construct("init", 0.03)
def init(draw: Draw) -> Outcome:
    """A weighted layer with ``init=``."""
    x = draw.body.current
    assert x is not None
    op = draw.rng.choice(("dense", "dense", "conv1d", "conv2d", "layer_norm", "batchnorm"))
    if x.dtype not in FLOAT_DTYPES:
        return Outcome.SKIPPED
    return Outcome.ADDED if _init_step(draw.body, draw, op) else Outcome.SKIPPED


# -- variants, repeats that start or continue, splicing ----------------------------------


def _keeping_block(draw: Draw, x: Value) -> tuple[Block, Params] | None:
    """A parameterised block that maps ``x``'s shape and dtype to themselves."""
    rng = draw.rng
    for _ in range(3):
        name = _fresh(draw, "Rep")
        params = Params(rng)
        inner = Body(rng, draw.body.param_dtype, [Value("x", x.shape, x.dtype)], model=name,
                     writer=params, depth=draw.body.depth + 1)  # fmt: skip
        inner.current = inner.pool[0]
        for _ in range(rng.randint(1, 2)):
            op = draw.op()
            if op not in ("parameter", "embedding"):
                add_step(inner, op, allow_bad=False)
        out = inner.current
        assert out is not None
        if not inner.steps or (out.shape, out.dtype) != (x.shape, x.dtype):
            continue
        lines: list[tuple[str, Step | None]] = [(params.header(name), None)]
        lines += [(f"    {c} = {e}", None) for c, e in params.constants]
        lines += [("    def forward(x):", None), *inner.lines, (f"        return {out.name}", None)]
        made = Block(name, lines, inner.steps)
        draw.blocks.append(made)
        return made, params
    return None


@construct("variant", 0.03)
def variant(draw: Draw) -> Outcome:
    """``model V0 = Blk(args)``, maybe with ``init`` rules, called as a block."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    made = _keeping_block(draw, x)
    if made is None:
        return Outcome.SKIPPED
    block, params = made
    name = _fresh(draw, "Var")
    lines: list[tuple[str, Step | None]] = [
        (f"model {name} = {block.name}({', '.join(params.call_args())})", None)
    ]
    rules = _rules(draw, block.steps)
    features = ["variant"]
    if rules:
        lines[0] = (f"{lines[0][0]}:", None)
        lines += [(f"    init {r}", None) for r in rules]
        features.append("init rule")
    draw.blocks.append(Block(name, lines, []))
    body.blocks.append(name)
    label = f" as var{len(body.blocks)}" if rng.random() < 0.5 else ""
    body.define(x, rng.random() < 0.5, f"{name}(){label}", f"{name}({x.name}){label}", None, x)
    _note(draw, *features)
    return Outcome.ADDED


@construct("repeat start", 0.04)
def repeat_start(draw: Draw) -> Outcome:
    """``repeat(B, n, start=1) as P``, ``B as P.0 -> repeat(B, n) as P``, ``-> B as P.*``
    after a repeat, or ``-> *B() as P.*`` (the block's layers spliced into ``P``)."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    made = _keeping_block(draw, x)
    if made is None:
        return Outcome.SKIPPED
    block, params = made
    body.blocks.append(block.name)
    body.layer_names += 1
    p = f"rs{body.layer_names}"
    call = f"{block.name}({', '.join(params.call_args())})"
    n = rng.randint(1, 3)
    roll = rng.random()
    if roll < 0.3:
        text, feature = f"repeat({call}, {n}, start={rng.randint(0, 2)}) as {p}", "repeat start="
    elif roll < 0.55:
        text, feature = f"{call} as {p}.0 -> repeat({call}, {n}) as {p}", "repeat continues"
    elif roll < 0.8:
        text, feature = f"repeat({call}, {n}) as {p} -> {call} as {p}.*", "repeat then P.*"
    else:
        star = rng.random() < 0.5
        text, feature = f"*{call} as {p}{'.*' if star else ''}", "splice"
    body.emit(f"{x.name} -> {text}", None)
    body.bind(Value(x.name, x.shape, x.dtype))
    _note(draw, feature)
    return Outcome.ADDED


@construct("loop block", 0.05)
def loop_block(draw: Draw) -> Outcome:
    """A block whose loop is driven by its parameters: ``for i in range(n)`` over calls
    that keep the shape, or ``for a0, a1 in cfg`` over a list argument (``Stage(x, [(8, 3),
    (12, 1)])``) whose calls change it; called again with another count."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    name = _fresh(draw, "Loop")
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
        loop = [("        for i in range(n):", None)]
        for text, step in inner.lines:
            loop.append(("    " + _templated(text, "i", 1)[0], step))
        if n == 0 or out.name != "x" and n:
            out = xin if n == 0 else out
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
            head = f"for {', '.join(names)}, in cfg:" if len(names) == 1 else f"for {', '.join(names)} in cfg:"
            exprs = names
        else:
            head = "for i in range(len(cfg)):"
            exprs = [f"cfg[i][{j}]" for j in range(len(varied))]
        for key, expr in zip(varied, exprs, strict=True):
            written[key] = Written(args[0][key], expr)
        step = Step(spec.name, args[0], (xin.shape,), xin.dtype, model=name)
        loop = [(f"        {head}", None), (f"            x -> {call_text(spec, [], written, False)}", step)]
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
    _note(draw, *features)
    return Outcome.ADDED
