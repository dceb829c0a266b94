"""One forward body being generated: a call of an operation added to it (``add_step``:
chain or graph form, several-output pieces, suffixes, layer names, or a refused call as the
program's culprit) or the inputs of one of an operation's samples made for it (``adapt``)."""

from __future__ import annotations

import math
import random
from typing import Any, Protocol

from aurane import ops
from aurane.ops.modules import chainable
from aurane.ops.spec import ArgKind, OpSpec, tensor_positions
from aurane.records import field, record
from aurane.tools.fuzz.draw import draw_args, infer
from aurane.tools.fuzz.steps import (
    FLOAT_DTYPES,
    GRAPH_ONLY,
    Named,
    Step,
    Value,
    call_text,
    has_written,
)


class Writer(Protocol):
    """How a body writes the arguments of its calls: a parameterised block writes some of
    them as expressions of its parameters (``aurane.tools.fuzz.blocks``)."""

    def write(self, spec: OpSpec, args: dict[str, Any]) -> dict[str, Any]: ...

    def written(self, value: Any, free: bool = False) -> Any: ...


# -- the forward body -----------------------------------------------------------------------


@record
class Body:
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
    writer: Writer | None = None  # a parameterised block's: arguments as expressions
    depth: int = 0  # blocks nested around this body
    blocks: list[Any] = field(default_factory=list)  # definitions made while generating it
    containers: int = 0  # numbered children named so far (``as stack.0``, ``as stack.1``)
    # steps of a named chain being made: chain form only, no names, no `.residual`
    chained: list[tuple[str, Step]] | None = None

    def write(self, spec: OpSpec, args: dict[str, Any], step: Step) -> dict[str, Any]:
        """``args`` as this body writes them (the values stay in ``step``, which records
        the arguments written as expressions)."""
        if self.writer is None:
            return args
        written = self.writer.write(spec, args)
        step.written = tuple(k for k, v in written.items() if has_written(v))
        return written

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
        if self.chained is not None and step is not None:
            self.chained.append((chained, step))
        else:
            self.emit(f"{x.name} -> {chained}" if chain else f"{name} = {assigned}", step)
        self.bind(Value(name, out.shape, out.dtype))

    def bind(self, value: Value) -> None:
        # a chain rebinds its name: the old value is no longer reachable by it
        self.pool = [v for v in self.pool if v.name != value.name]
        self.pool.append(value)
        self.current = value


OPS: tuple[str, ...] = tuple(sorted(n for n in ops.CATALOG if n != "repeat"))


def _candidates(body: Body, spec: OpSpec) -> list[Value]:
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
    body: Body, spec: OpSpec, tries: int
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


def _suffix(body: Body, out: Value, x: Value | None) -> tuple[str, Value]:
    rng = body.rng
    text = ""
    if out.dtype in FLOAT_DTYPES and rng.random() < 0.2:
        text += rng.choice((".relu", ".gelu", ".tanh", ".leaky_relu(0.2)", ".silu", ".sigmoid"))
    if x is not None and x.shape == out.shape and x.dtype == out.dtype and rng.random() < 0.25:
        text += ".residual"
    return text, out


def _layer_name(body: Body, spec: OpSpec) -> str:
    """A name for a layer (``as layer3``), in a dict (``as layers.l2``) or numbered
    container (``as stack.0``, then ``as stack.1``...: an nn.Sequential)."""
    if "parametric" not in spec.kinds or body.rng.random() > 0.3:
        return ""
    body.layer_names += 1
    roll = body.rng.random()
    if roll < 0.3:
        return f" as layers.l{body.layer_names}"
    if roll < 0.55 and spec.name not in ("parameter", "positional_encoding"):  # not modules
        body.containers += 1
        return f" as stack.{body.containers - 1}"
    return f" as layer{body.layer_names}"


def add_step(body: Body, op: str, allow_bad: bool) -> bool:
    """Append one call of ``op``; False when no valid call was found (nothing emitted), True
    otherwise. With ``allow_bad`` a refused call is emitted as the culprit."""
    spec = ops.CATALOG[op]
    rng = body.rng
    current = body.current
    if any(p.kind is ArgKind.TENSOR and p.required for p in spec.params):
        return False  # index=, mask=: ``adapt`` makes the named tensors they take
    if body.chained is not None and (not chainable(op) or spec.min_inputs != 1 or allow_bad):
        return False
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
        written = body.write(spec, args, step)
        body.emit(f"{name} = {call_text(spec, [v.name for v in inputs], written, False)}", step)
        body.emit(f"return {name}", None)
        return True
    names = [v.name for v in inputs]
    # the piece a split or chunk call takes is drawn below; select's index is its own
    # argument, written (seed 131000080 wrote ``select(x, 1)``, which S005 refuses)
    if op in ("split", "chunk"):
        args.pop("index", None)
    if op in ("split", "chunk") and rng.random() < 0.7 and body.chained is None:
        pieces = _pieces(spec, args, x, body.param_dtype)
        if 1 < len(pieces) <= 4:
            targets = [body.fresh() for _ in pieces]
            text = call_text(spec, names, body.write(spec, args, step), False)
            body.emit(f"{', '.join(targets)} = {text}", step)
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
    named = body.chained is not None  # a step of a named chain: no name, no .residual
    suffix, out = _suffix(body, result, x if len(inputs) == 1 and not named else None)
    name = "" if named else _layer_name(body, spec)
    chain = (
        op not in GRAPH_ONLY
        and len(inputs) == 1
        and not (spec.max_inputs and spec.max_inputs > 1 and len(inputs) > 1)
        and x.name in [v.name for v in inputs]
        and (named or rng.random() < 0.5)
    )
    if named and not chain:
        return False
    written = body.write(spec, args, step)
    chained = f"{call_text(spec, [], written, False)}{suffix}{name}"
    body.define(
        x, chain, chained, f"{call_text(spec, names, written, False)}{suffix}{name}", step, out
    )
    return True


def adapt(body: Body, spec: OpSpec) -> bool:
    """Make the inputs of one of ``spec``'s samples from the current value
    (``reshape(dense(flatten(x), n), *shape)``), so any operation can be reached."""
    rng = body.rng
    x = body.current
    assert x is not None
    samples = [s for s in spec.samples if all(shape for shape in s[1])]
    if not samples or x.dtype != body.param_dtype:  # dense layers make the inputs
        return False
    sample_args, shapes = rng.choice(samples)
    args = dict(sample_args)
    kinds = (tuple(spec.extra.get("sample_dtypes", ())) + (x.dtype,) * len(shapes))[: len(shapes)]
    made: list[Value] = []
    for shape, kind in zip(shapes, kinds, strict=True):
        numel = math.prod(shape)
        name = body.fresh()
        flat = {0: f"unsqueeze({x.name}, 1)", 1: x.name}.get(x.rank, f"flatten({x.name})")
        dims = ", ".join(str(d) for d in shape)
        dense = f"dense({flat}, {numel})"
        made_from = f"reshape({dense}, {dims})" if len(shape) > 1 else dense
        body.emit(f"{name} = {_of_dtype(made_from, kind, spec, args, shapes)}", None)
        made.append(Value(name, tuple(shape), x.dtype if kind == "float32" else kind))
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
    keywords = tensor_positions(args)
    names = [v.name for i, v in enumerate(made) if i not in keywords.values()]
    named = {**args, **{k: Named(made[i].name) for k, i in keywords.items()}}
    written = call_text(spec, names, body.write(spec, named, step), False)
    body.emit(f"{target} = {written}", step)
    body.bind(Value(target, out.shape, out.dtype))
    return True


def _of_dtype(expr: str, kind: str, spec: OpSpec, args: dict[str, Any], shapes: Any) -> str:
    """A float expression made into a sample's input of dtype ``kind``: a bool mask
    (``gt(e, 0.0)``) or integer positions below the indexed axis's size."""
    if kind == "bool":
        return f"gt({expr}, 0.0)"
    if kind in ("int64", "int32"):
        dim = args.get("dim")
        first = shapes[0]
        high = first[dim - 1 if dim > 0 else dim] if isinstance(dim, int) else first[0]
        # clamped: sigmoid rounds to 1.0 for large inputs and a NaN casts to the int minimum
        return f'clamp(to(multiply(sigmoid({expr}), {high}), "{kind}"), min=0, max={high - 1})'
    return expr
