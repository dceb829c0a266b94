"""Issue 24's constructs (configurable blocks), registered in ``CONSTRUCTS``.

(The loops are ``aurane.tools.fuzz.loops``'s.)

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
* ``block parameter``: a block taking a block as a parameter (``block = Unit0``) called
  with its default and with another block.

Each construct also counts its finer features in ``Draw.stats`` (``if/elif/else``,
``templated name``, ``quoted name``, ``operation none``, ``make_divisible``, ...), so the
campaign's "accepted programs with" line reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aurane import ops
from aurane.ir.layers import TENSOR_LAYERS
from aurane.ops.spec import OpSpec
from aurane.tools.fuzz.blocks import Block, Param, Params
from aurane.tools.fuzz.body import Body, add_step
from aurane.tools.fuzz.constructs import Draw, Outcome, construct
from aurane.tools.fuzz.draw import draw_args, infer
from aurane.tools.fuzz.loops import fresh_name, global_constant, note
from aurane.tools.fuzz.steps import FLOAT_DTYPES, Step, Value, Written, call_text

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
        note(draw, "x.shape")
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


class ShapeWriter:
    """A block's writer that also writes integer arguments equal to one of the block's
    input sizes as ``x.shape[k]`` (``x.shape[k] * 2``), while ``x`` is not yet rebound."""

    def __init__(self, params: Params, body: Body, x: Value) -> None:
        self.params, self.body, self.x = params, body, x
        self.wrote: set[str] = set()
        self.used = False

    def write(self, spec: OpSpec, args: dict[str, Any]) -> dict[str, Any]:
        out = self.params.write(spec, args)
        rng = self.body.rng
        rebound = any(t.strip().startswith(("x ->", "x =")) for t, _ in self.body.lines)
        self.wrote = set()
        for key, value in args.items():
            if rebound or out[key] is not value or isinstance(value, bool):
                continue
            if not isinstance(value, int) or rng.random() < 0.5:
                continue
            for axis, size in enumerate(self.x.shape, start=1):
                if size == value:
                    out[key] = Written(value, f"x.shape[{axis}]")
                elif size * 2 == value:
                    out[key] = Written(value, f"x.shape[{axis - self.x.rank - 1}] * 2")
                else:
                    continue
                self.wrote.add(key)
                break
        return out

    def written(self, value: Any, free: bool = False) -> Any:
        return self.params.written(value, free)


def _branch(draw: Draw, name: str, x: Value, params: Params) -> Body | None:
    inner = Body(draw.rng, draw.body.param_dtype, [Value("x", x.shape, x.dtype)], model=name,
                 writer=params, depth=draw.body.depth + 1)  # fmt: skip
    writer = ShapeWriter(params, inner, x)
    inner.writer = writer
    inner.current = inner.pool[0]
    for _ in range(draw.rng.randint(1, 2)):
        op = draw.favoured_op()
        if op in ("parameter", "embedding"):
            continue
        if op in WEIGHTED and draw.rng.random() < 0.3:
            _init_step(inner, draw, op)
            continue
        writer.wrote = set()
        if add_step(inner, op, allow_bad=False) and writer.wrote and inner.steps:
            step = inner.steps[-1]  # x.shape is no block parameter
            step.written = tuple(k for k in step.written if k not in writer.wrote)
            writer.used = True
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
    name = fresh_name(draw, "Sel")
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
    if any(isinstance(b.writer, ShapeWriter) and b.writer.used for b in branches):
        features.append("x.shape in a block")
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
    note(draw, *features)
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
    name = global_constant(draw, "act", given)
    form = _apply_act(body, name, rng)
    note(draw, form, *(["operation none"] if given == "none" else []))
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
            table = global_constant(self.draw, "tbl", f"[({v + 1}, {v}), ({v}, 2)]")
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


@construct("constant functions", 0.08)
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
        added = add_step(body, draw.favoured_op(), allow_bad=False)
    finally:
        body.writer = None
    if not added:
        return Outcome.SKIPPED
    if body.steps:
        body.steps[-1].written = ()  # not block parameters
    note(draw, *sorted(writer.used))
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
        name = fresh_name(draw, "Rep")
        params = Params(rng)
        inner = Body(rng, draw.body.param_dtype, [Value("x", x.shape, x.dtype)], model=name,
                     writer=params, depth=draw.body.depth + 1)  # fmt: skip
        inner.current = inner.pool[0]
        for _ in range(rng.randint(1, 2)):
            op = draw.favoured_op()
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
    name = fresh_name(draw, "Var")
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
    note(draw, *features)
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
    elif any(step.op in TENSOR_LAYERS for step in block.steps):
        # spliced, a parameter or buffer would be a numbered child of the container: S045 (torch's
        # containers hold modules only), a rejection with no call of its own to map to
        return Outcome.SKIPPED
    else:
        star = rng.random() < 0.5
        text, feature = f"*{call} as {p}{'.*' if star else ''}", "splice"
    body.emit(f"{x.name} -> {text}", None)
    body.bind(Value(x.name, x.shape, x.dtype))
    note(draw, feature)
    return Outcome.ADDED


# the bodies a unit block of ``block parameter`` draws from: each maps the last axis to ``w``
UNIT_BODIES = ("x -> dense(w).relu", "x -> dense(w) -> dense(w).tanh", "x -> dense(w, bias=false)")


@construct("block parameter", 0.04)
def block_parameter(draw: Draw) -> Outcome:
    """A block taking a block (``model Pick0(w, block = Unit0)``, ``x -> block(w)``) called
    with its default and again with another block of the same parameters, its inner calls
    named (``as b1``) or not."""
    body, rng = draw.body, draw.rng
    x = body.current
    assert x is not None
    if x.dtype not in FLOAT_DTYPES or not x.shape:
        return Outcome.SKIPPED
    units: list[str] = []
    for text in rng.sample(UNIT_BODIES, 2):
        unit = fresh_name(draw, "Unit")
        lines: list[tuple[str, Step | None]] = [(f"model {unit}(w):", None)]
        lines.append(("    def forward(x):", None))
        draw.blocks.append(Block(unit, [*lines, (f"        return {text}", None)], []))
        units.append(unit)
    name = fresh_name(draw, "Pick")
    named = rng.random() < 0.5
    calls = [f"block(w){f' as b{k}' if named else ''}" for k in (1, 2)][: rng.randint(1, 2)]
    lines = [
        (f"model {name}(w, block = {units[0]}):", None),
        ("    def forward(x):", None),
        (f"        return x -> {' -> '.join(calls)}", None),
    ]
    draw.blocks.append(Block(name, lines, []))
    body.blocks += [*units, name]
    for given in ("", f", {units[1]}"):
        current = body.current
        assert current is not None
        w = rng.randint(2, 8)
        out = Value(current.name, (*current.shape[:-1], w), current.dtype)
        chained, assigned = f"{name}({w}{given})", f"{name}({current.name}, {w}{given})"
        body.define(current, rng.random() < 0.5, chained, assigned, None, out)
    note(draw, "block parameter", *(["named block calls"] if named else []))
    return Outcome.ADDED
