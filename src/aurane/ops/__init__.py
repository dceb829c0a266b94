"""The operation catalog: one explicit table of ``OpSpec`` entries read by every stage.

``CATALOG`` maps canonical names to specs, ``ALIASES`` maps alternative spellings to
canonical names, ``lookup`` accepts either. ``bind_defaults``, ``argument_errors`` and
``context`` build an ``InferContext`` from plain values (tests, tools, the playground); the
semantic pass has its own located binder with the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aurane.ops import activations as act
from aurane.ops import (
    arith,
    attention,
    buffer,
    conv,
    crossbatch,
    index,
    layers,
    norm,
    pad,
    parameter,
    pool,
    reduce,
    sequence,
    shape,
    tensor,
)
from aurane.ops.rules import COMPOSITION, POSITIVE, ints_at_least
from aurane.ops.spec import (
    REQUIRED,
    ArgKind,
    ArgValue,
    BoundArgs,
    InferContext,
    OpError,
    OpSpec,
    Param,
    TensorType,
)


def _repeat_infer(ctx: InferContext) -> TensorType:
    raise RuntimeError("repeat is lowered by composing its block; its infer is never called")


REPEAT = OpSpec(
    name="repeat",
    params=(
        Param(
            "block",
            ArgKind.MODEL,
            doc="model applied repeatedly; must map its input shape to itself",
        ),
        Param(
            "times", ArgKind.INT, check=POSITIVE, doc="number of fresh copies applied in sequence"
        ),
        Param(
            "start",
            ArgKind.INT,
            default=0,
            check=ints_at_least(0),
            keyword_only=True,
            doc="index of the first copy in the named container (numbers continue from it)",
        ),
    ),
    infer=_repeat_infer,
    doc="apply n fresh copies of a block in sequence (nn.Sequential of n instances)",
    samples=(({"block": "Block", "times": 2}, ((8,),)),),
    kinds=frozenset({COMPOSITION}),
    input_dtypes="any",
)

CATALOG: dict[str, OpSpec] = {
    # layers
    "dense": layers.DENSE,
    "conv1d": layers.CONV1D,
    "conv2d": layers.CONV2D,
    **{spec.name: spec for spec in conv.SPECS},
    "batchnorm": layers.BATCHNORM,
    "layer_norm": layers.LAYER_NORM,
    **{spec.name: spec for spec in norm.SPECS},
    "embedding": layers.EMBEDDING,
    "positional_encoding": layers.POSITIONAL_ENCODING,
    "dropout": layers.DROPOUT,
    "drop_path": layers.DROP_PATH,
    # tensor
    "flatten": tensor.FLATTEN,
    "reshape": tensor.RESHAPE,
    **{spec.name: spec for spec in pool.SPECS},
    "upsample": tensor.UPSAMPLE,
    "add": tensor.ADD,
    "concat": tensor.CONCAT,
    **{
        spec.name: spec
        for spec in (
            *arith.SPECS,
            *crossbatch.SPECS,
            *shape.SPECS,
            *pad.SPECS,
            *parameter.SPECS,
            *reduce.SPECS,
        )
    },
    # index arithmetic, masks, constructors and non-trainable state
    **{spec.name: spec for spec in (*index.SPECS, *buffer.SPECS)},
    # sequence
    "multihead_attention": attention.MULTIHEAD_ATTENTION,
    "scaled_dot_product_attention": attention.SCALED_DOT_PRODUCT_ATTENTION,
    "rotary_embedding": attention.ROTARY_EMBEDDING,
    "lstm": sequence.LSTM,
    "gru": sequence.GRU,
    # activations
    "relu": act.RELU,
    "gelu": act.GELU,
    "sigmoid": act.SIGMOID,
    "tanh": act.TANH,
    "softmax": act.SOFTMAX,
    "log_softmax": act.LOG_SOFTMAX,
    "leaky_relu": act.LEAKY_RELU,
    "silu": act.SILU,
    "mish": act.MISH,
    "elu": act.ELU,
    "selu": act.SELU,
    "hardswish": act.HARDSWISH,
    **{s.name: s for s in (act.SOFTPLUS, act.RELU6, act.HARDTANH, act.HARDSIGMOID, act.GLU)},
    # composition
    "repeat": REPEAT,
}

ALIASES: dict[str, str] = {
    "linear": "dense",
    "batch_norm": "batchnorm",
    "layernorm": "layer_norm",
    "swish": "silu",
    "cast": "to",
}

ACTIVATIONS: frozenset[str] = frozenset(
    name for name, spec in CATALOG.items() if spec.is_activation
) | frozenset(alias for alias, name in ALIASES.items() if CATALOG[name].is_activation)


def family(name: str) -> tuple[str, ...]:
    """The operations of one family (``OpSpec.family``, e.g. ``rules.CONVOLUTION``), in
    catalog order: read from the entries, so a new member joins by naming its family."""
    return tuple(op for op, spec in CATALOG.items() if spec.family == name)


def canonical(name: str) -> str | None:
    """The canonical catalog name for ``name`` (itself or an alias), or None."""
    if name in CATALOG:
        return name
    return ALIASES.get(name)


def lookup(name: str) -> OpSpec | None:
    """The spec of an operation by canonical name or alias."""
    key = canonical(name)
    return CATALOG[key] if key is not None else None


def bind_defaults(spec: OpSpec, args: Mapping[str, Any]) -> BoundArgs:
    """Plain keyword values with defaults filled in (no spans). Raises ValueError when an
    argument is unknown or a required one is missing."""
    unknown = set(args) - {p.name for p in spec.params}
    if unknown:
        raise ValueError(f"{spec.name} has no argument {', '.join(sorted(unknown))}")
    values: dict[str, ArgValue] = {}
    for param in spec.params:
        if param.name in args:
            values[param.name] = ArgValue(args[param.name], None)
        elif param.default is REQUIRED:
            raise ValueError(f"{spec.name} needs argument {param.name}")
        else:
            values[param.name] = ArgValue(param.default, None)
    return BoundArgs(values)


def argument_errors(spec: OpSpec, args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(argument, message) for every given value that fails its check or choices."""
    errors: list[tuple[str, str]] = []
    for param in spec.params:
        if param.name not in args:
            continue
        value = args[param.name]
        if param.choices is not None and value not in param.choices:
            errors.append((param.name, f"must be one of {', '.join(param.choices)}"))
        elif param.check is not None and (message := param.check(value)) is not None:
            errors.append((param.name, message))
    return errors


def context(
    spec: OpSpec,
    args: Mapping[str, Any],
    shapes: Sequence[tuple[int, ...]],
    dtype: str | None = None,
    param_dtype: str = "float32",
    dtypes: Sequence[str | None] | None = None,
    batch: Any = None,
) -> InferContext:
    """An InferContext for ``spec`` on inputs of the given per-sample shapes and one dtype
    (or one per input with ``dtypes``) at a ``batch`` size; ``args`` may place tensor keywords (``TensorArg``)
    among the inputs."""
    kinds = tuple(dtypes) if dtypes is not None else (dtype,) * len(shapes)
    inputs = tuple(TensorType(tuple(s), d) for s, d in zip(shapes, kinds, strict=True))
    return InferContext.of_node(bind_defaults(spec, args), inputs, param_dtype, batch)


__all__ = [
    "ACTIVATIONS",
    "ALIASES",
    "CATALOG",
    "REPEAT",
    "REQUIRED",
    "ArgKind",
    "BoundArgs",
    "InferContext",
    "OpError",
    "OpSpec",
    "Param",
    "TensorType",
    "argument_errors",
    "bind_defaults",
    "canonical",
    "context",
    "family",
    "lookup",
]
