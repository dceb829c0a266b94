"""``cross_batch_matmul``: every sample of one tensor against every sample of another.

Every other operation works per sample. CLIP's logits are the exception: each text of the
batch is scored against each image of the batch, ``text @ image.T``, a ``(batch, batch)``
matrix. ``cross_batch_matmul(a, b)`` takes two ``(features,)`` tensors of the same batch and
gives ``out[i, j] = a[i] . b[j]``: per sample a ``(batch,)`` row whose size is the batch
itself. That size is ``InferContext.batch``: the symbolic size ``batch`` when lowering and
profiling (``aurane ir`` prints ``(batch, batch)``, ``aurane profile`` the MACs per sample
as ``batch * features``), the number the catalog samples run with.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.rules import MERGE, PARAMETER_FREE, fmt_shape, make_spec, same_dtype
from aurane.ops.spec import InferContext, OpError, OpSpec, TensorType


def _batch(ctx: InferContext) -> Any:
    if ctx.batch is None:
        raise OpError("T002", "cross_batch_matmul needs the batch size, which is not known here")
    return ctx.batch


def _infer(ctx: InferContext) -> TensorType:
    a, b = ctx.inputs
    if a.rank != 1 or b.rank != 1 or a.shape != b.shape:
        raise OpError(
            "T002",
            f"cross_batch_matmul needs two (features,) inputs of one size, got "
            f"{fmt_shape(a.shape)} and {fmt_shape(b.shape)}",
            hint="pool and project each tower to (features,) first, e.g. select the class "
            "token and apply the projection dense",
            input_notes=((0, fmt_shape(a.shape)), (1, fmt_shape(b.shape))),
        )
    return TensorType((_batch(ctx),), same_dtype("cross_batch_matmul", ctx.inputs))


CROSS_BATCH_MATMUL = make_spec(
    name="cross_batch_matmul",
    params=(),
    infer=_infer,
    doc="every sample against every sample, a @ b.T over the batch: (features,) and "
    "(features,) give (batch,) (CLIP's logits)",
    samples=(({}, ((4,), (4,))), ({}, ((7,), (7,)))),
    kinds={PARAMETER_FREE, MERGE},
    min_inputs=2,
    max_inputs=2,
    macs=lambda ctx, out: _batch(ctx) * ctx.inputs[0].shape[0],
)

SPECS: tuple[OpSpec, ...] = (CROSS_BATCH_MATMUL,)
