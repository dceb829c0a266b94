"""Sequence layers on (sequence, features) inputs: LSTM and GRU (attention: ops/attention.py).

Parameter counts are those of ``nn.LSTM`` / ``nn.GRU(batch_first=True)``. MACs count per
recurrent layer, direction and step the gate products ``gates*hidden*(input+hidden)``.
``torch.utils.flop_counter`` does not see fused LSTM/GRU kernels.
"""

from __future__ import annotations

from aurane.ops.attention import MULTIHEAD_ATTENTION
from aurane.ops.rules import (
    PARAMETRIC,
    POSITIVE,
    RECURRENT,
    make_spec,
    probability,
    require_rank,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

__all__ = ["GRU", "LSTM", "MULTIHEAD_ATTENTION", "SPECS"]

_SEQUENCE = "(sequence, features)"

# -- recurrent layers -------------------------------------------------------------------------


def _layer_inputs(ctx: InferContext) -> list[int]:
    """Input width of each stacked layer."""
    a = ctx.args
    width = a["hidden"] * (2 if a["bidirectional"] else 1)
    return [ctx.input.shape[1]] + [width] * (a["num_layers"] - 1)


def _recurrent_spec(name: str, gates: int, module: str, step_cost: int) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        t, a = ctx.input, ctx.args
        require_rank(name, t, (2,), _SEQUENCE)
        if a["dropout"] > 0 and a["num_layers"] == 1:
            raise OpError(
                "S004",
                f"{name} dropout={a['dropout']} applies between stacked layers and needs num_layers > 1",
                blame="dropout",
                hint="drop the dropout argument or stack layers with num_layers=2",
            )
        directions = 2 if a["bidirectional"] else 1
        return TensorType((t.shape[0], a["hidden"] * directions), t.dtype)

    def directions(ctx: InferContext) -> int:
        return 2 if ctx.args["bidirectional"] else 1

    def parameters(ctx: InferContext, out: TensorType) -> int:
        hidden: int = ctx.args["hidden"]
        bias = 2 * gates * hidden if ctx.args["bias"] else 0
        per_direction = sum(gates * hidden * (n + hidden) + bias for n in _layer_inputs(ctx))
        return directions(ctx) * per_direction

    def macs(ctx: InferContext, out: TensorType) -> int:
        hidden: int = ctx.args["hidden"]
        per_step = sum(gates * hidden * (n + hidden) for n in _layer_inputs(ctx))
        return directions(ctx) * ctx.input.shape[0] * per_step

    def other_flops(ctx: InferContext, out: TensorType) -> int:
        hidden: int = ctx.args["hidden"]
        layers: int = ctx.args["num_layers"]
        steps = directions(ctx) * layers * ctx.input.shape[0]
        return steps * hidden * step_cost

    return make_spec(
        name=name,
        params=(
            Param("hidden", ArgKind.INT, check=POSITIVE, doc="hidden size per direction"),
            Param("num_layers", ArgKind.INT, 1, POSITIVE, doc="stacked layers"),
            Param("bidirectional", ArgKind.BOOL, False, doc="run both directions and concatenate"),
            Param("dropout", ArgKind.FLOAT, 0.0, probability, doc="dropout between stacked layers"),
            Param("bias", ArgKind.BOOL, True, doc="gate biases"),
        ),
        infer=infer,
        doc=f"{module} over a (sequence, features) input, zero initial state, full output",
        samples=(
            ({"hidden": 6}, ((5, 4),)),
            ({"hidden": 5, "bidirectional": True, "bias": False}, ((4, 3),)),
            ({"hidden": 4, "num_layers": 2, "dropout": 0.2}, ((3, 6),)),
            ({"hidden": 3, "num_layers": 3, "bidirectional": True}, ((4, 2),)),
        ),
        kinds={PARAMETRIC, RECURRENT},
        parameters=parameters,
        macs=macs,
        other_flops=other_flops,
    )


# gate elementwise work per hidden unit and step (estimates): bias adds, activations, products
LSTM = _recurrent_spec("lstm", 4, "batch-first LSTM (nn.LSTM)", 16)
GRU = _recurrent_spec("gru", 3, "batch-first GRU (nn.GRU)", 14)

SPECS: tuple[OpSpec, ...] = (MULTIHEAD_ATTENTION, LSTM, GRU)
