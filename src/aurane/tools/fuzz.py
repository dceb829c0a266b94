"""Random ``.aur`` programs over the whole operation catalog, for differential testing.

``generate(seed)`` writes one program: a model with a random input shape and dtype whose
forward mixes chain steps, graph statements, several-output ``split``/``chunk``, learned
``parameter`` tensors, suffixes (activations, ``.residual``), layer names, parameterised
blocks and ``repeat``. Operations and their arguments are drawn from the catalog's typed
parameter specs (``aurane.ops.CATALOG``): every ``Param`` kind has a generic drawer, a few
argument names have shape-aware drawers (``dim`` from the input's rank, ``groups`` from
the channel counts, ``reshape`` sizes from the element count), and each spec's ``samples``
seed the draw, so an operation added to the catalog is generated without touching this file.

Each drawn call is filtered with the catalog's own shape rule: most programs are meant to be
accepted; with probability ``bad`` one call that the rule refuses is kept as the program's
*culprit* (the program ends there), so rejections are exercised too. The generator's
prediction is only a hint: ``aurane.tools.differential`` compiles every program and compares
the compiler's verdict with what torch does.

Run a campaign with ``python -m aurane.tools.fuzz --programs 20000 --seed 1``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from aurane import ops
from aurane.ops.spec import REQUIRED, ArgKind, InferContext, OpSpec, Param, TensorType
from aurane.records import field, record

INT64_MAX = 2**63 - 1
SIZES = (1, 2, 3, 4, 5, 6, 8)
WIDTHS = (1, 2, 3, 4, 6, 8, 12, 16)
FLOAT_DTYPES = ("float32", "float32", "float32", "float64")
# sizes past what torch can index (int64): each must be rejected with a located error
HUGE = (2**31, 2**32, 2**62, 2**63, 2**64, 4294967296)
# operations written only in graph form (several inputs, no input, or joined tensors)
GRAPH_ONLY = frozenset({"add", "concat", "parameter", "matmul", "scaled_dot_product_attention"})
SIZE_NAMES = frozenset({"channels", "features", "width", "hidden"})


@record(frozen=True)
class Value:
    """A named per-sample tensor of the forward being generated."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@record
class Step:
    """One generated call: where it is, what it does, and the shape rule's verdict."""

    op: str
    args: dict[str, Any]
    inputs: tuple[tuple[int, ...], ...]
    dtype: str
    line: int = 0  # 1-based line in the program text, filled in when the text is assembled
    valid: bool = True
    error: str | None = None  # the shape rule's code and message when not valid
    model: str = ""


@record
class Program:
    seed: int
    text: str
    steps: list[Step]
    culprit: Step | None = None  # the call the generator expects to be rejected
    edge: str | None = None  # an edge case (huge sizes) the program exercises
    models: list[str] = field(default_factory=list)

    @property
    def expect_valid(self) -> bool:
        return self.culprit is None and self.edge is None

    @property
    def ops(self) -> set[str]:
        return {s.op for s in self.steps}

    def step_at(self, line: int) -> Step | None:
        return next((s for s in self.steps if s.line == line), None)


# -- rendering ------------------------------------------------------------------------------


def literal(value: Any) -> str:
    """``.aur`` source for a Python value (bools true/false, None none, tuples)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, tuple | list):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def call_text(spec: OpSpec, inputs: Sequence[str], args: dict[str, Any], named: bool) -> str:
    """``op(inputs..., positional..., keyword=...)``; optional arguments as keywords."""
    parts = list(inputs)
    keyword = False
    for param in spec.params:
        if param.name not in args:
            keyword = True  # later positional parameters must be named
            continue
        value = args[param.name]
        if param.variadic and isinstance(value, tuple) and not keyword and not named:
            parts += [literal(v) for v in value]
            continue
        if param.required and not param.keyword_only and not keyword and not named:
            parts.append(literal(value))
        else:
            keyword = True
            parts.append(f"{param.name}={literal(value)}")
    return f"{spec.name}({', '.join(parts)})"


# -- drawing arguments ----------------------------------------------------------------------


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _spatial(inputs: Sequence[Value]) -> int:
    return max(1, inputs[0].rank - 1) if inputs else 1


def _int_or_tuple(rng: random.Random, low: int, high: int, n: int) -> int | tuple[int, ...]:
    if rng.random() < 0.6:
        return rng.randint(low, high)
    length = n if rng.random() < 0.9 else rng.choice((1, n + 1))
    return tuple(rng.randint(low, high) for _ in range(max(1, length)))


def _axis(rng: random.Random, rank: int) -> int:
    """An axis counting the batch axis (rank + 1 axes); the batch axis itself rarely."""
    full = rank + 1
    if rng.random() < 0.04 or rank == 0:
        return 0
    axis = rng.randint(1, full - 1)
    return axis - full if rng.random() < 0.4 else axis


def _factor(rng: random.Random, numel: int) -> tuple[int, ...]:
    """A random shape of ``numel`` elements (rank 1 to 3), sometimes with one -1."""
    dims: list[int] = []
    rest = numel
    for _ in range(rng.randint(0, 2)):
        d = rng.choice(_divisors(rest))
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    if rng.random() < 0.3:
        dims[rng.randrange(len(dims))] = -1
    return tuple(dims)


def draw_param(
    rng: random.Random, spec: OpSpec, param: Param, inputs: Sequence[Value], args: dict[str, Any]
) -> Any:
    """A value for ``param``: shape-aware for known names, generic by kind otherwise."""
    name, kind = param.name, param.kind
    x = inputs[0] if inputs else None
    rank = x.rank if x is not None else 0
    n = _spatial(inputs)
    if param.choices is not None:
        return rng.choice(param.choices)
    if name in SIZE_NAMES:
        return rng.choice(WIDTHS)
    if name == "groups" and x is not None and kind is ArgKind.INT:
        out = args.get("channels", x.shape[0] if rank else 1)
        common = [d for d in _divisors(max(1, x.shape[0] if rank else 1)) if out % d == 0]
        return rng.choice(common) if common and rng.random() < 0.9 else rng.randint(1, 4)
    if name == "heads":
        width = args.get("dim", x.shape[-1] if x is not None and rank else 4)
        return rng.choice(_divisors(width)) if width > 0 else 1
    if name == "dim" and spec.name == "multihead_attention":
        return x.shape[-1] if x is not None and rank and rng.random() < 0.9 else rng.choice(WIDTHS)
    if name in ("kdim", "vdim"):
        return inputs[1].shape[-1] if len(inputs) > 1 and inputs[1].rank else None
    if name == "vocabulary":
        return rng.randint(2, 20)
    if name == "padding_idx":
        return None if rng.random() < 0.6 else rng.randint(-2, args.get("vocabulary", 4) - 1)
    if name == "max_len":
        seq = x.shape[0] if x is not None and rank else 4
        return max(1, seq + rng.randint(-1, 3))
    if name in ("dim", "dim0", "dim1") and kind is ArgKind.INT:
        return _axis(rng, rank)
    if name == "dim":  # reductions: None, one axis or several
        roll = rng.random()
        if roll < 0.3 or rank == 0:
            return None
        if roll < 0.7:
            return _axis(rng, rank)
        axes = rng.sample(range(1, rank + 1), rng.randint(1, rank))
        return tuple(sorted(axes))
    if name == "index" and spec.name == "select" and x is not None:
        axis = args.get("dim", 1)
        size = (
            x.shape[axis - 1] if 0 < axis <= rank else (x.shape[axis] if -rank <= axis < 0 else 1)
        )
        return rng.randint(-size, size - 1) if rng.random() < 0.9 else size
    if name in ("start", "end") and x is not None:
        return None if rng.random() < 0.4 else rng.randint(-3, 6)
    if name == "step":
        return rng.choice((1, 1, 2, 3))
    if name == "shape" and spec.name == "reshape" and x is not None:
        return _factor(rng, x.numel) if rng.random() < 0.95 else (x.numel + 1,)
    if name == "shape" and spec.name == "parameter":
        return tuple(rng.choice(SIZES) for _ in range(rng.randint(1, 3)))
    if name == "dims" and x is not None:
        axes = list(range(1, rank + 1))
        rng.shuffle(axes)
        return tuple(a - rank - 1 if rng.random() < 0.2 else a for a in axes)
    if name == "sizes" and x is not None:
        return tuple(rng.choice((2, 3)) if d == 1 and rng.random() < 0.7 else -1 for d in x.shape)
    if name == "size" and spec.name == "split" and x is not None:
        axis = args.get("dim", -1)
        if rank == 0:
            return 1
        length = x.shape[axis] if -rank <= axis < 0 else x.shape[max(1, min(axis, rank)) - 1]
        if rng.random() < 0.6:
            return rng.randint(1, max(1, length))
        cut = rng.randint(0, length)
        return (cut, length - cut) if cut and cut != length else (length,)
    if name == "size" and spec.name == "upsample":
        return None
    if name == "scale_factor":
        return None
    if name == "chunks":
        return rng.randint(1, 4)
    if name == "padding" and spec.name == "pad" and x is not None:
        pairs = rng.randint(1, max(1, min(3, rank)))
        return tuple(rng.choice((0, 1, 1, 2, -1)) for _ in range(2 * pairs))
    if name == "output_size":
        if rng.random() < 0.5:
            return rng.randint(1, 4)
        return tuple(rng.choice((1, 2, 3, None)) for _ in range(n))
    if name == "p":
        return rng.choice((0.0, 0.1, 0.5, 0.5, 0.9)) if rng.random() < 0.97 else 1.0
    if name == "upscale_factor":
        return rng.choice((1, 2, 2, 3))
    if name == "num_layers":
        return rng.randint(1, 3)
    if name == "dropout":
        return rng.choice((0.0, 0.0, 0.1))
    if name == "times":
        return rng.randint(1, 3)
    if name == "axes":
        return rng.randint(1, max(1, rank))
    if name == "constant":
        return None if len(inputs) > 1 else rng.choice((0.5, 2.0, -1.0, 3))
    if name in ("kernel", "stride", "dilation", "output_padding", "padding"):
        low = 0 if name in ("padding", "output_padding") else 1
        high = {"kernel": 4, "stride": 3, "dilation": 2}.get(name, 2)
        if kind is ArgKind.INT:
            return rng.randint(low, high)
        if kind is ArgKind.INT_OR_STR and rng.random() < 0.15:
            return rng.choice(("same", "valid"))
        return _int_or_tuple(rng, low, high, n)
    return _generic(rng, param)


def _generic(rng: random.Random, param: Param) -> Any:
    """A value of ``param``'s kind near its default (new catalog entries land here)."""
    kind, default = param.kind, param.default
    if kind is ArgKind.BOOL:
        return rng.random() < 0.5
    if kind is ArgKind.INT:
        return rng.randint(1, 4) if default is REQUIRED else rng.choice((default, default + 1))
    if kind in (ArgKind.FLOAT, ArgKind.OPTIONAL_FLOAT):
        if default is None or default is REQUIRED:
            return rng.choice((None, 0.5, 1.0)) if kind is ArgKind.OPTIONAL_FLOAT else 0.5
        return rng.choice((float(default), float(default) * 2, 0.5))
    if kind is ArgKind.OPTIONAL_INT:
        return rng.choice((None, 1, 2))
    if kind in (ArgKind.INT_OR_PAIR, ArgKind.INT_OR_TUPLE, ArgKind.INT_OR_STR):
        return rng.randint(1, 3)
    if kind is ArgKind.FLOAT_OR_TUPLE:
        return rng.choice((2.0, 0.5, 1.5))
    return default if default is not REQUIRED else 1


def draw_args(
    rng: random.Random, spec: OpSpec, inputs: Sequence[Value], sample_bias: float = 0.25
) -> dict[str, Any]:
    """Arguments for ``spec``: a catalog sample's (sometimes), then required and random
    optional parameters drawn by ``draw_param``."""
    args: dict[str, Any] = {}
    if spec.samples and rng.random() < sample_bias:
        args = dict(rng.choice(spec.samples)[0])
    for param in spec.params:
        if param.name in args or (param.name == "index" and spec.name in ("split", "chunk")):
            continue
        if param.required or rng.random() < 0.35:
            value = draw_param(rng, spec, param, inputs, args)
            if value is not None or not param.required:
                args[param.name] = value
    if spec.name == "upsample":
        args.pop("size", None), args.pop("scale_factor", None)
        n = _spatial(inputs)
        if rng.random() < 0.5:
            args["size"] = _int_or_tuple(rng, 1, 9, n)
        else:
            args["scale_factor"] = rng.choice((2, 2.0, 0.5, 1.5, tuple([2.0] * n)))
        if args.get("align_corners") is not None and rng.random() < 0.7:
            del args["align_corners"]
    return {k: v for k, v in args.items() if not (v is None and spec.param(k) is None)}


def infer(spec: OpSpec, args: dict[str, Any], inputs: Sequence[Value], param_dtype: str) -> Value:
    """The catalog's verdict on one call (raises OpError or ValueError when it refuses)."""
    bad = ops.argument_errors(spec, args)
    if bad:
        raise ValueError(f"{bad[0][0]}: {bad[0][1]}")
    types = tuple(TensorType(v.shape, v.dtype) for v in inputs)
    if spec.input_dtypes == "float" and any(v.dtype not in FLOAT_DTYPES for v in inputs):
        raise ValueError("needs a floating input")
    if spec.input_dtypes == "int" and any(v.dtype not in ("int32", "int64") for v in inputs):
        raise ValueError("needs an integer input")
    out = spec.infer(InferContext(ops.bind_defaults(spec, args), types, param_dtype))
    if any(not isinstance(d, int) or d <= 0 for d in out.shape):
        raise ValueError(f"empty or unknown output shape {out.shape}")
    return Value("", tuple(out.shape), out.dtype or inputs[0].dtype)


# -- the forward body -----------------------------------------------------------------------


@record
class _Body:
    """Lines of one forward being generated, and the values it has defined."""

    rng: random.Random
    param_dtype: str
    pool: list[Value]
    lines: list[tuple[str, Step | None]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    counter: int = 0
    layer_names: int = 0
    current: Value | None = None
    model: str = ""

    def fresh(self) -> str:
        self.counter += 1
        return f"h{self.counter}"

    def emit(self, text: str, step: Step | None) -> None:
        self.lines.append((" " * 8 + text, step))
        if step is not None:
            step.model = self.model
            self.steps.append(step)

    def define(
        self, x: Value, chain: bool, chained: str, assigned: str, step: Step | None, out: Any
    ) -> None:
        """``x -> chained`` (``x`` rebound) or ``hN = assigned`` (a fresh name), bound to a
        value of ``out``'s shape and dtype."""
        name = x.name if chain else self.fresh()
        self.emit(f"{x.name} -> {chained}" if chain else f"{name} = {assigned}", step)
        self.bind(Value(name, out.shape, out.dtype))

    def bind(self, value: Value) -> None:
        # a chain rebinds its name: the old value is no longer reachable by it
        self.pool = [v for v in self.pool if v.name != value.name]
        self.pool.append(value)
        self.current = value


OPS: tuple[str, ...] = tuple(sorted(n for n in ops.CATALOG if n != "repeat"))


def _candidates(body: _Body, spec: OpSpec) -> list[Value]:
    """Inputs for one call of ``spec``: the current value first, then pool partners."""
    rng = body.rng
    x = body.current
    assert x is not None
    if spec.min_inputs == 0:
        return []
    inputs = [x]
    want = spec.min_inputs
    if spec.max_inputs is None or (spec.max_inputs > want and rng.random() < 0.5):
        want = max(want, rng.choice((2, 2, 3)) if spec.max_inputs is None else spec.max_inputs)
    while len(inputs) < want:
        same = [v for v in body.pool if v.shape == x.shape and v.dtype == x.dtype]
        ranked = [v for v in body.pool if v.rank == x.rank and v.dtype == x.dtype]
        pick = same if same and rng.random() < 0.6 else ranked or [x]
        inputs.append(rng.choice(pick))
    return inputs


def _try_op(
    body: _Body, spec: OpSpec, tries: int
) -> tuple[list[Value], dict[str, Any], Value | str]:
    """Draw up to ``tries`` argument sets; the first the rule accepts, else the last refusal."""
    rng = body.rng
    last: tuple[list[Value], dict[str, Any], Value | str] = ([], {}, "no attempt")
    for _ in range(tries):
        inputs = _candidates(body, spec)
        args = draw_args(rng, spec, inputs)
        if any(p.variadic and p.required and args.get(p.name) == () for p in spec.params):
            continue  # a required size list of a scalar: nothing to write
        try:
            out = infer(spec, args, inputs, body.param_dtype)
        except Exception as error:  # a refusal (or a rule that crashes: the compiler will say)
            code = getattr(error, "code", "arg")
            last = (inputs, args, f"{code}: {error}")
            continue
        return inputs, args, out
    return last


def _pieces(spec: OpSpec, args: dict[str, Any], x: Value, param_dtype: str) -> list[Value]:
    """The pieces of a split/chunk call, by trying each index until the rule refuses."""
    out = []
    for index in range(8):
        try:
            out.append(infer(spec, {**args, "index": index}, [x], param_dtype))
        except Exception:
            break
    return out


def _suffix(body: _Body, out: Value, x: Value | None) -> tuple[str, Value]:
    rng = body.rng
    text = ""
    if out.dtype in FLOAT_DTYPES and rng.random() < 0.2:
        text += rng.choice((".relu", ".gelu", ".tanh", ".leaky_relu(0.2)", ".silu", ".sigmoid"))
    if x is not None and x.shape == out.shape and x.dtype == out.dtype and rng.random() < 0.25:
        text += ".residual"
    return text, out


def _layer_name(body: _Body, spec: OpSpec) -> str:
    if "parametric" not in spec.kinds or body.rng.random() > 0.25:
        return ""
    body.layer_names += 1
    return (
        f" as layers.l{body.layer_names}"
        if body.rng.random() < 0.3
        else f" as layer{body.layer_names}"
    )


def add_step(body: _Body, op: str, allow_bad: bool) -> bool:
    """Append one call of ``op``; False when no valid call was found (nothing emitted), True
    otherwise. With ``allow_bad`` a refused call is emitted as the culprit."""
    spec = ops.CATALOG[op]
    rng = body.rng
    current = body.current
    if "recurrent" in spec.kinds and current is not None and current.rank and current.shape[0] > 64:
        return False  # a recurrent layer steps through the sequence: keep runs short
    inputs, args, result = _try_op(body, spec, tries=6)
    x = body.current
    assert x is not None
    step = Step(op, args, tuple(v.shape for v in inputs), x.dtype)
    if isinstance(result, str):
        if not allow_bad or not inputs and spec.min_inputs:
            return False
        step.valid, step.error = False, result
        name = body.fresh()
        body.emit(f"{name} = {call_text(spec, [v.name for v in inputs], args, False)}", step)
        body.emit(f"return {name}", None)
        return True
    names = [v.name for v in inputs]
    args.pop("index", None)
    if op in ("split", "chunk") and rng.random() < 0.7:
        pieces = _pieces(spec, args, x, body.param_dtype)
        if 1 < len(pieces) <= 4:
            targets = [body.fresh() for _ in pieces]
            body.emit(f"{', '.join(targets)} = {call_text(spec, names, args, False)}", step)
            for target, piece in zip(targets, pieces, strict=True):
                body.pool.append(Value(target, piece.shape, piece.dtype))
            body.current = body.pool[-rng.randint(1, len(pieces))]
            return True
        args["index"] = 0
        result = infer(spec, args, inputs, body.param_dtype)
    elif op in ("split", "chunk"):
        pieces = _pieces(spec, args, x, body.param_dtype)
        args["index"] = rng.randrange(len(pieces)) if pieces else 0
        result = infer(spec, args, inputs, body.param_dtype)
    suffix, out = _suffix(body, result, x if len(inputs) == 1 else None)
    name = _layer_name(body, spec)
    chain = (
        op not in GRAPH_ONLY
        and len(inputs) == 1
        and not (spec.max_inputs and spec.max_inputs > 1 and len(inputs) > 1)
        and x.name in [v.name for v in inputs]
        and rng.random() < 0.5
    )
    chained = f"{call_text(spec, [], args, False)}{suffix}{name}"
    body.define(
        x, chain, chained, f"{call_text(spec, names, args, False)}{suffix}{name}", step, out
    )
    return True


def adapt(body: _Body, spec: OpSpec) -> bool:
    """Make the inputs of one of ``spec``'s samples from the current value
    (``reshape(dense(flatten(x), n), *shape)``), so any operation can be reached."""
    rng = body.rng
    x = body.current
    assert x is not None
    samples = [s for s in spec.samples if all(shape for shape in s[1])]
    if not samples or x.dtype not in FLOAT_DTYPES:
        return False
    sample_args, shapes = rng.choice(samples)
    args = dict(sample_args)
    made: list[Value] = []
    for shape in shapes:
        numel = math.prod(shape)
        name = body.fresh()
        flat = {0: f"unsqueeze({x.name}, 1)", 1: x.name}.get(x.rank, f"flatten({x.name})")
        dims = ", ".join(str(d) for d in shape)
        dense = f"dense({flat}, {numel})"
        body.emit(
            f"{name} = reshape({dense}, {dims})" if len(shape) > 1 else f"{name} = {dense}", None
        )
        made.append(Value(name, tuple(shape), x.dtype))
    body.pool += made
    try:
        out = infer(spec, dict(args), made, body.param_dtype)
    except Exception:
        return False
    step = Step(spec.name, dict(args), tuple(v.shape for v in made), x.dtype)
    target = body.fresh()
    if spec.name in ("split", "chunk") and "index" not in args:
        args = {**args, "index": 0}
        out = infer(spec, args, made, body.param_dtype)
        step.args = dict(args)
    body.emit(f"{target} = {call_text(spec, [v.name for v in made], args, False)}", step)
    body.bind(Value(target, out.shape, out.dtype))
    return True


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


def main(argv: Sequence[str] | None = None) -> int:
    from aurane.tools.differential import main as run_main

    return run_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
