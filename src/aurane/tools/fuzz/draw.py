"""Drawing one call's arguments from the catalog's typed parameter specs (``draw_args``),
and the catalog's verdict on the call (``infer``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from aurane import ops
from aurane.ops.spec import (
    REQUIRED,
    ArgKind,
    InferContext,
    OpSpec,
    Param,
    TensorArg,
    TensorType,
    split_inputs,
)
from aurane.tools.fuzz.steps import FLOAT_DTYPES, SIZE_NAMES, SIZES, WIDTHS, Value

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
        # a sample's tensor keywords (attn_mask=input3) name its own inputs: not these
        sample = rng.choice(spec.samples)[0]
        args = {k: v for k, v in sample.items() if not isinstance(v, TensorArg)}
    for param in spec.params:
        if param.name in args or (param.name == "index" and spec.name in ("split", "chunk")):
            continue
        if param.kind is ArgKind.TENSOR:  # a tensor of the body: ``adapt`` makes one
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
    positional = split_inputs(args, inputs)[0]
    if spec.input_dtypes == "float" and any(v.dtype not in FLOAT_DTYPES for v in positional):
        raise ValueError("needs a floating input")
    if spec.input_dtypes == "int" and any(v.dtype not in ("int32", "int64") for v in positional):
        raise ValueError("needs an integer input")
    out = spec.infer(InferContext.of_node(ops.bind_defaults(spec, args), types, param_dtype))
    if any(not isinstance(d, int) or d <= 0 for d in out.shape):
        raise ValueError(f"empty or unknown output shape {out.shape}")
    return Value("", tuple(out.shape), out.dtype or inputs[0].dtype)
