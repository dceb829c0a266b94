"""Human-readable formulas for ``aurane profile --explain``.

The counts themselves always come from the catalog rules (``OpSpec.macs`` and friends);
this module only writes down, with the layer's numbers substituted, the formula those rules
implement. Each expression is plain Python arithmetic so the tests can evaluate it and
check that the explanation agrees with the catalog on every catalog sample.
"""

from __future__ import annotations

from collections.abc import Callable

from aurane.ops.rules import numel, spatial
from aurane.ops.spec import InferContext, TensorType

# (what the formula means, arithmetic with the layer's numbers) or None: no MACs
Formula = tuple[str, str]
FormulaRule = Callable[[InferContext, TensorType], Formula]


def _dense(ctx: InferContext, out: TensorType) -> Formula:
    return (
        "output elements x input features",
        f"{out.numel} * {ctx.input.shape[-1]}",
    )


def _conv(dims: int) -> FormulaRule:
    op = f"conv{dims}d"

    def rule(ctx: InferContext, out: TensorType) -> Formula:
        channels = ctx.input.shape[0]
        groups: int = ctx.args["groups"]
        kernel = numel(spatial(op, "kernel", ctx.args["kernel"], dims))
        return (
            "output elements x (input channels / groups) x kernel elements",
            f"{out.numel} * ({channels} // {groups}) * {kernel}",
        )

    return rule


def _conv_transpose(dims: int) -> FormulaRule:
    op = f"conv_transpose{dims}d"

    def rule(ctx: InferContext, out: TensorType) -> Formula:
        channels: int = ctx.args["channels"]
        groups: int = ctx.args["groups"]
        kernel = numel(spatial(op, "kernel", ctx.args["kernel"], dims))
        return (
            "input elements x (output channels / groups) x kernel elements",
            f"{ctx.input.numel} * ({channels} // {groups}) * {kernel}",
        )

    return rule


def _attention(ctx: InferContext, out: TensorType) -> Formula:
    length, dim = ctx.input.shape
    if len(ctx.inputs) == 2:  # cross-attention: keys and values from the memory
        kv_length, width = ctx.inputs[1].shape
        return (
            "2 S D^2 (q and output projections) + 2 S_kv M D (k and v projections from the "
            "memory) + 2 S S_kv D (scores and weighted values)",
            f"2 * {length} * {dim}**2 + 2 * {kv_length} * {width} * {dim}"
            f" + 2 * {length} * {kv_length} * {dim}",
        )
    return (
        "4 S D^2 (q, k, v and output projections) + 2 S^2 D (scores and weighted values)",
        f"4 * {length} * {dim}**2 + 2 * {length}**2 * {dim}",
    )


def _sdpa(ctx: InferContext, out: TensorType) -> Formula:
    q, k, v = ctx.inputs
    heads, length, head_dim = q.shape
    return (
        "heads x S x S_kv x (Dh for q k^T + Dv for the weighted values)",
        f"{heads} * {length} * {k.shape[1]} * ({head_dim} + {v.shape[2]})",
    )


def _matmul(ctx: InferContext, out: TensorType) -> Formula:
    return ("output elements x shared axis k", f"{out.numel} * {ctx.inputs[0].shape[-1]}")


def _recurrent(gates: int) -> FormulaRule:
    def rule(ctx: InferContext, out: TensorType) -> Formula:
        a = ctx.args
        hidden: int = a["hidden"]
        directions = 2 if a["bidirectional"] else 1
        widths = [ctx.input.shape[1]] + [hidden * directions] * (a["num_layers"] - 1)
        per_step = " + ".join(f"{gates} * {hidden} * ({n} + {hidden})" for n in widths)
        return (
            f"directions x steps x sum over layers of gates({gates}) x hidden x "
            "(layer input + hidden)",
            f"{directions} * {ctx.input.shape[0]} * ({per_step})",
        )

    return rule


FORMULAS: dict[str, FormulaRule] = {
    "dense": _dense,
    "conv1d": _conv(1),
    "conv2d": _conv(2),
    "conv3d": _conv(3),
    "conv_transpose1d": _conv_transpose(1),
    "conv_transpose2d": _conv_transpose(2),
    "conv_transpose3d": _conv_transpose(3),
    "multihead_attention": _attention,
    "scaled_dot_product_attention": _sdpa,
    "matmul": _matmul,
    "cross_batch_matmul": _matmul,  # (batch,) output elements x features
    "lstm": _recurrent(4),
    "gru": _recurrent(3),
}


def macs_formula(op: str, ctx: InferContext, out: TensorType) -> Formula | None:
    """The MAC formula of ``op`` on this layer, or None when the op has no MACs."""
    rule = FORMULAS.get(op)
    return rule(ctx, out) if rule is not None else None


def pretty(expression: str) -> str:
    """An arithmetic expression as printed: ``*`` becomes a middle dot."""
    return expression.replace(" * ", " \u00b7 ").replace("//", "/")
