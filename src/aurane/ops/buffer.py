"""Non-trainable state: ``buffer(shape, init=...)``.

A buffer is a tensor the module keeps but does not train, registered with
``register_buffer`` exactly as PyTorch models do: persistent buffers are in
``state_dict()`` under their attribute name (``as relative_position_index`` names it),
``persistent=false`` ones are not. Like ``parameter`` its value is the same for every
sample: the IR value has the per-sample shape ``shape`` and the generated forward expands
the stored tensor (exactly ``shape``, no batch axis) over the batch. It holds no
parameters, so profile counts none.

Contents are computed at construction:

- ``zeros``, ``ones``, ``full`` (with ``value``): a constant fill;
- ``arange``: ``0 .. n-1`` for a shape ``(n,)``;
- ``causal_mask``: ``(S, S)`` bool, true on and below the diagonal (the positions a query
  may attend to, as ``scaled_dot_product_attention``'s boolean ``attn_mask`` reads it);
- ``sinusoid``: the ``(positions, width)`` table of "Attention is all you need"
  (``sin`` on even, ``cos`` on odd features, base 10000);
- ``relative_position_index``: Swin's / MaxViT's ``(h*w, h*w)`` index of the relative
  position of two tokens of an ``h x w`` window (``window=(h, w)``), into a table of
  ``(2h - 1) * (2w - 1)`` rows.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.index import CONSTRUCTOR, DTYPES, _fill_value, _sizes
from aurane.ops.rules import FLOAT_DTYPES, PARAMETER_FREE, fmt_shape, make_spec
from aurane.ops.shape import int_items
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

BAD_BUFFER = "S132"
INITS = ("zeros", "ones", "full", "arange", "causal_mask", "sinusoid", "relative_position_index")
_DEFAULT_DTYPE = {
    "arange": "int64",
    "causal_mask": "bool",
    "relative_position_index": "int64",
}


def _window(value: Any) -> str | None:
    items = int_items(value)
    if len(items) != 2 or not all(isinstance(i, int) and i >= 1 for i in items):
        return "must be a pair of positive ints (height, width)"
    return None


def _bad(message: str, blame: str, hint: str) -> OpError:
    return OpError(BAD_BUFFER, message, blame=blame, hint=hint)


def _check_contents(a: Any, shape: tuple[int, ...], dtype: str) -> None:
    init = a["init"]
    if (init == "full") != (a["value"] is not None):
        raise _bad(
            'buffer value= goes with init="full" (and it needs one)',
            "value" if a["value"] is not None else "init",
            'e.g. buffer((4, 4), init="full", value=0.5)',
        )
    if (init == "relative_position_index") != (a["window"] is not None):
        raise _bad(
            'buffer window= goes with init="relative_position_index" (and it needs one)',
            "window" if a["window"] is not None else "init",
            'e.g. buffer((49, 49), init="relative_position_index", window=(7, 7))',
        )
    if init == "arange" and len(shape) != 1:
        raise _bad(
            f'buffer init="arange" fills one axis, got shape {fmt_shape(shape)}',
            "shape",
            'e.g. buffer((16,), init="arange")',
        )
    if init == "causal_mask" and (len(shape) != 2 or shape[0] != shape[1]):
        raise _bad(
            f'buffer init="causal_mask" is a square (positions, positions) mask, got shape '
            f"{fmt_shape(shape)}",
            "shape",
            'e.g. buffer((128, 128), init="causal_mask")',
        )
    if init == "sinusoid" and (len(shape) != 2 or shape[1] % 2):
        raise _bad(
            f'buffer init="sinusoid" is a (positions, width) table with an even width, got '
            f"shape {fmt_shape(shape)}",
            "shape",
            'e.g. buffer((512, 64), init="sinusoid")',
        )
    if init == "sinusoid" and dtype not in FLOAT_DTYPES:
        raise _bad(f'buffer init="sinusoid" holds floats, not {dtype}', "dtype", "drop dtype=")
    if init == "relative_position_index":
        height, width = int_items(a["window"])
        tokens = height * width
        if shape != (tokens, tokens):
            raise _bad(
                f"buffer relative_position_index of a {height}x{width} window has shape "
                f"({tokens}, {tokens}) (tokens x tokens), got {fmt_shape(shape)}",
                "shape",
                f"use shape ({tokens}, {tokens})",
            )


def buffer_dtype(a: Any, param_dtype: str = "float32") -> str:
    """The dtype of a buffer's contents: dtype= or its init's."""
    given = a["dtype"]
    return str(given) if given is not None else _DEFAULT_DTYPE.get(a["init"], param_dtype)


def _buffer_infer(ctx: InferContext) -> TensorType:
    if ctx.inputs:
        raise OpError(
            "T065",
            "buffer takes no input tensor: it is state of its own",
            hint='write it as a graph statement: idx = buffer((16,), init="arange")',
        )
    shape = tuple(int_items(ctx.args["shape"]))
    dtype = buffer_dtype(ctx.args, ctx.param_dtype)
    _check_contents(ctx.args, shape, dtype)
    return TensorType(shape, dtype)


BUFFER = make_spec(
    name="buffer",
    params=(
        Param(
            "shape",
            ArgKind.INT_OR_TUPLE,
            check=_sizes,
            variadic=True,
            doc="per-sample shape of the stored tensor",
        ),
        Param(
            "init",
            ArgKind.STR,
            "zeros",
            choices=INITS,
            keyword_only=True,
            doc="contents computed at construction",
        ),
        Param(
            "value",
            ArgKind.ANY,
            None,
            lambda v: None if v is None else _fill_value(v),
            keyword_only=True,
            doc='fill value of init="full"',
        ),
        Param(
            "window",
            ArgKind.INT_OR_TUPLE,
            None,
            lambda v: None if v is None else _window(v),
            keyword_only=True,
            doc='(height, width) of init="relative_position_index"',
        ),
        Param(
            "dtype",
            ArgKind.STR,
            None,
            choices=DTYPES,
            keyword_only=True,
            doc="element dtype (default: the init's; floats for fills)",
        ),
        Param(
            "persistent",
            ArgKind.BOOL,
            True,
            keyword_only=True,
            doc="in state_dict() (register_buffer's persistent)",
        ),
    ),
    infer=_buffer_infer,
    doc="non-trainable state (register_buffer) computed at construction: a fill, arange, "
    "a causal mask, a sinusoid table or a relative-position index; no parameters",
    samples=(
        ({"shape": (6,), "init": "arange"}, ()),
        ({"shape": (4, 4), "init": "causal_mask", "persistent": False}, ()),
        ({"shape": (5, 8), "init": "sinusoid"}, ()),
        ({"shape": (4, 4), "init": "relative_position_index", "window": (2, 2)}, ()),
        ({"shape": (2, 3), "init": "full", "value": 0.5}, ()),
    ),
    input_dtypes="any",
    kinds={PARAMETER_FREE, CONSTRUCTOR},
    min_inputs=0,
    max_inputs=0,
)

SPECS: tuple[OpSpec, ...] = (BUFFER,)
