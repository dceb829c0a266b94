"""The learned ``parameter`` tensor.

``parameter(shape)`` is a learned tensor with no tensor input. Its value is the same for
every sample: in the IR it is an ordinary batched value of per-sample shape ``shape``
(the generated forward expands the stored tensor over the batch, a view without a copy),
so it joins any operation: ``concat(cls, x, dim=1)``, ``multiply(gamma, x)``.
It is stored as ``nn.Parameter`` of shape ``(1, *shape)`` (torchvision's class token and
position table), or exactly ``shape`` with ``batch_axis=false`` (ConvNeXt's layer scale
``(C, 1, 1)``), so a reference state dict loads.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.rules import PARAMETRIC, is_int, is_number, make_spec, numel
from aurane.ops.shape import NO_INPUT, int_items
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType


def _shape_check(value: Any) -> str | None:
    items = int_items(value)
    if value == () or items == ():  # a 0-d tensor (CLIP's logit scale), batch_axis=false
        return None
    if not items or not all(map(is_int, items)):
        return "must be one or more ints"
    if any(i < 1 for i in items):
        return "must have positive sizes"
    return None


def _parameter_infer(ctx: InferContext) -> TensorType:
    if ctx.inputs:
        raise OpError(
            NO_INPUT,
            "parameter takes no input tensor: it is a learned tensor of its own",
            hint="write it as a graph statement: cls = parameter((1, 768))",
        )
    a = ctx.args
    if a["init"] == "full" and a["value"] is None:
        raise OpError(
            "S005",
            'parameter init="full" needs a value',
            blame="init",
            hint='e.g. parameter((768, 1, 1), init="full", value=1e-6)',
        )
    if a["init"] != "full" and a["value"] is not None:
        raise OpError(
            "S004",
            f'parameter value applies to init="full" only, not init="{a["init"]}"',
            blame="value",
            hint='drop value or use init="full"',
        )
    shape = tuple(int_items(a["shape"]))
    if not shape and a["batch_axis"]:
        raise OpError(
            "S004",
            "a 0-d parameter (shape ()) is stored without a batch axis",
            blame="shape",
            hint="write parameter((), batch_axis=false), as CLIP's logit_scale",
        )
    return TensorType(shape, ctx.param_dtype)


def stored_shape(args: Any) -> tuple[int, ...]:
    """The shape of the ``nn.Parameter`` a parameter node stores."""
    shape = tuple(int_items(args["shape"]))
    return (1, *shape) if args["batch_axis"] else shape


PARAMETER = make_spec(
    name="parameter",
    params=(
        Param(
            "shape",
            ArgKind.INT_OR_TUPLE,
            check=_shape_check,
            variadic=True,
            doc="per-sample shape of the learned tensor",
        ),
        Param(
            "init",
            ArgKind.STR,
            "zeros",
            choices=("zeros", "ones", "normal", "full"),
            keyword_only=True,
            doc="initial values",
        ),
        Param(
            "std",
            ArgKind.FLOAT,
            0.02,
            lambda v: None if is_number(v) and v > 0 else "must be positive",
            keyword_only=True,
            doc='standard deviation of init="normal"',
        ),
        Param(
            "value",
            ArgKind.OPTIONAL_FLOAT,
            None,
            keyword_only=True,
            doc='fill value of init="full" (layer scale: 1e-6)',
        ),
        Param(
            "batch_axis",
            ArgKind.BOOL,
            True,
            keyword_only=True,
            doc="store (1, *shape); false stores exactly shape",
        ),
    ),
    infer=_parameter_infer,
    doc="a learned tensor of the given per-sample shape, the same for every sample",
    samples=(
        ({"shape": (1, 8)}, ()),
        ({"shape": (5, 8), "init": "normal"}, ()),
        ({"shape": (4, 1, 1), "init": "full", "value": 1e-6, "batch_axis": False}, ()),
        ({"shape": (), "init": "full", "value": 2.5, "batch_axis": False}, ()),
    ),
    input_dtypes="any",
    kinds={PARAMETRIC},
    min_inputs=0,
    max_inputs=0,
    parameters=lambda ctx, out: numel(out.shape),
)


SPECS: tuple[OpSpec, ...] = (PARAMETER,)
