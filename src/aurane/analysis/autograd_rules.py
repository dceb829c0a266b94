"""What each operation's backward keeps, as the generated PyTorch code runs it: one rule
per catalog operation (``RULES``), read by the memory walk (``aurane.analysis.saved``).

A rule gets the walk, the IR node, its input views, the output shape and dtype, and
returns the output view (a new storage or a view of an input's), naming what autograd
saves (``Walk.save``) and any buffer the operation makes for backward (``Walk.extra``).
The sources are ``tools/autograd/derivatives.yaml`` and the kernels PyTorch picks; where
CUDA and the CPU differ (dropout's mask, SDPA's output layout, RMSNorm), ``Walk.device``
decides. docs/profile.md lists every rule; tests/plan/test_saved_rules.py checks them
against autograd.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from aurane import ops
from aurane.analysis.views import (
    PARAMETER,
    View,
    channels_last,
    contiguous_strides,
    is_contiguous,
    like,
    stride_order,
    strides_in_order,
)
from aurane.ir.graph import Node
from aurane.ops.layers import channel_first
from aurane.ops.rules import CONVOLUTION, numel
from aurane.ops.spec import split_inputs

_CONVOLUTIONS = frozenset(ops.family(CONVOLUTION))


class Walk(Protocol):
    """What a rule may ask of the memory walk."""

    device: str
    frozen: bool

    def new(
        self,
        shape: tuple[int, ...],
        dtype: str,
        strides: tuple[int, ...] | None = None,
        grad: bool = True,
    ) -> View: ...

    def extra(self, count: int, dtype: str = "float32") -> None: ...

    def save(self, *views: View) -> None: ...

    def reshaped(self, view: View, shape: tuple[int, ...]) -> View: ...

    def permuted(self, view: View, order: Sequence[int]) -> View: ...


Rule = Callable[[Walk, Node, list[View], tuple[int, ...], str], View]


# ---------------------------------------------------------------- parameter tensors


def parameter_tensors(node: Node, in_shape: tuple[int, ...] | None) -> tuple[int, ...]:
    """The element counts of the parameter tensors ``node`` creates (as torch.nn lays them
    out), summing to the node's parameter count; one tensor when the layout is unknown."""
    total = int(node.parameters)
    if total <= 0:
        return ()
    found = tuple(int(size) for size in _tensor_layout(node, in_shape))
    return found if found and sum(found) == total else (total,)


def _tensor_layout(node: Node, in_shape: tuple[int, ...] | None) -> tuple[int, ...]:
    a, op, total = node.args, node.op, node.parameters
    if op == "dense":
        bias = int(a["features"]) if a.get("bias") else 0
        return (total - bias, bias) if bias else (total,)
    if op in _CONVOLUTIONS:
        bias = int(a["channels"]) if a.get("bias") else 0
        return (total - bias, bias) if bias else (total,)
    if op in ("batchnorm", "instance_norm", "group_norm"):
        return (total // 2, total // 2)
    if op == "layer_norm":
        return (total // 2, total // 2) if a.get("bias", True) else (total,)
    if op == "multihead_attention":
        dim = int(a["dim"])
        bias = bool(a.get("bias", True))
        out = (dim * dim, dim) if bias else (dim * dim,)
        rest = total - sum(out)
        in_bias = 3 * dim if bias else 0
        return (rest - in_bias, in_bias, *out) if bias else (rest, *out)
    if op in ("lstm", "gru") and in_shape:
        gates = (4 if op == "lstm" else 3) * int(a["hidden"])
        hidden = int(a["hidden"])
        directions = 2 if a.get("bidirectional") else 1
        tensors: list[int] = []
        width = in_shape[-1]
        for _ in range(int(a.get("num_layers", 1))):
            for _ in range(directions):
                tensors += [gates * width, gates * hidden]
                if a.get("bias", True):
                    tensors += [gates, gates]
            width = hidden * directions
        return tuple(tensors)
    return (total,)


def bias_elements(node: Node) -> int:
    if node.op == "dense" and node.args.get("bias"):
        return int(node.args["features"])
    if node.op in _CONVOLUTIONS and node.args.get("bias"):
        return int(node.args["channels"])
    return 0


# ---------------------------------------------------------------- rules


def saves_inputs(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """The default for an operation without its own rule: saves its inputs."""
    w.save(*ins)
    return w.new(shape, dtype, like(ins[0] if ins else None, shape))


def _saves_nothing(
    w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    return w.new(shape, dtype, like(ins[0] if ins else None, shape))


def _saves_output(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    out = w.new(shape, dtype, like(ins[0], shape))
    w.save(out)
    return out


def _saves_input(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])
    return w.new(shape, dtype, like(ins[0], shape))


def _alias(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    return ins[0]


def _reshape(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    return w.reshaped(ins[0], shape)


def _transpose(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    rank = len(ins[0].shape)
    a, b = int(node.args["dim0"]) % rank, int(node.args["dim1"]) % rank
    order = list(range(rank))
    order[a], order[b] = order[b], order[a]
    return w.permuted(ins[0], order)


def _permute(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    from aurane.ops.shape import _permute_order

    ctx = ops.context(ops.CATALOG["permute"], node.args, [ins[0].shape[1:]])
    return w.permuted(ins[0], _permute_order(ctx))  # the batch axis included, first


def _same_strides(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """split, chunk, slice: a narrower view with the input's strides."""
    v = ins[0]
    return View(v.storage, shape, v.strides, v.dtype, v.grad, v.grad_id)


def _select(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    v = ins[0]
    axis = int(node.args["dim"]) % len(v.shape)
    strides = v.strides[:axis] + v.strides[axis + 1 :]
    return View(v.storage, shape, strides, v.dtype, v.grad, v.grad_id)


def _squeeze_like(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """squeeze, unsqueeze, expand: a view; size-1 axes take any stride, expanded ones 0."""
    v = ins[0]
    kept = [(s, st) for s, st in zip(v.shape, v.strides, strict=True) if s != 1]
    strides: list[int] = []
    for size in reversed(shape):
        if kept and kept[-1][0] == size:
            strides.append(kept.pop()[1])
        else:
            strides.append(0 if size != 1 else 1)
    return View(v.storage, shape, tuple(reversed(strides)), v.dtype, v.grad, v.grad_id)


def _dropout(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    p = float(node.args.get("p", 0.0))
    if p == 0.0:
        return ins[0]  # F.dropout(p=0) returns its input
    if node.op == "drop_path":  # x * noise of shape (batch, 1, ...): saves the noise
        w.extra(shape[0], dtype)
    elif w.device == "cuda":  # native_dropout: a bool mask
        w.extra(numel(shape), "bool")
    else:  # CPU: input * noise, the noise saved at full precision
        w.extra(numel(shape), dtype)
    return w.new(shape, dtype, like(ins[0], shape))


def _dense(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    x = ins[0]
    if len(x.shape) > 2:  # folded to (rows, features): a view or a copy, saved by mm
        x = w.reshaped(x, (numel(x.shape) // x.shape[-1], x.shape[-1]))
    w.save(x)
    return w.new(shape, dtype)


def _conv(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])
    if channels_last(ins[0]):
        return w.new(shape, dtype, strides_in_order(shape, (0, 2, 3, 1)))
    return w.new(shape, dtype)


def _batchnorm(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])
    channels = shape[1]
    w.extra(channels)  # save_mean
    w.extra(channels)  # save_invstd
    if channels_last(ins[0]):
        return w.new(shape, dtype, strides_in_order(shape, (0, 2, 3, 1)))
    return w.new(shape, dtype)


def _instance_norm(
    w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    x = ins[0]
    folded = w.reshaped(x, (1, x.shape[0] * x.shape[1], *x.shape[2:]))
    w.save(folded)
    rows = x.shape[0] * x.shape[1]
    w.extra(rows)  # save_mean
    w.extra(rows)  # save_invstd
    if node.parameters:  # the weight repeated over the batch, a new tensor batch_norm saves
        w.extra(rows, dtype)
    return w.new(shape, dtype)


def _layer_norm(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    x = ins[0]
    rank = len(x.shape) - 1
    if node.op == "layer_norm" and channel_first(int(node.args.get("dim", -1)), rank):
        order = (0, *range(2, rank + 1), 1)  # movedim(1, -1)
        moved = w.permuted(x, order)
        w.save(moved)
        w.extra(numel(moved.shape) // moved.shape[-1])  # mean
        w.extra(numel(moved.shape) // moved.shape[-1])  # rstd
        normed = w.new(moved.shape, dtype)
        back = [0] * (rank + 1)
        for position, axis in enumerate(order):
            back[axis] = position
        return w.permuted(normed, back)
    axes = int(node.args.get("axes", 1))
    rows = numel(x.shape) // numel(x.shape[len(x.shape) - axes :])
    w.save(x)
    if node.op == "rms_norm" and w.device == "cpu":
        # CPU: the composite x * rsqrt(mean(x^2) + eps) * weight, which keeps x * rsqrt
        w.extra(rows)
        if node.parameters:
            w.extra(numel(shape), dtype)
        return w.new(shape, dtype)
    if node.op == "layer_norm":
        w.extra(rows)  # mean
    w.extra(rows)  # rstd
    return w.new(shape, dtype)


def _group_norm(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])
    groups = shape[0] * int(node.args["groups"])
    w.extra(groups)
    w.extra(groups)
    return w.new(shape, dtype)


def _pool_with_indices(
    w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    w.save(ins[0])
    w.extra(numel(shape), "int64")
    return w.new(shape, dtype)


def _adaptive_avg(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if all(size == 1 for size in shape[2:]):
        return _saves_nothing(w, node, ins, shape, dtype)  # a mean over the spatial axes
    return _saves_input(w, node, ins, shape, dtype)


def _amax(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    out = w.new(shape, dtype)
    w.save(ins[0], out)
    return out


def _multiply(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if len(ins) == 2:
        a, b = ins
        if b.grad:
            w.save(a)
        if a.grad:
            w.save(b)
    return w.new(shape, dtype, like(ins[0], shape))


def _divide(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if len(ins) == 2:
        a, b = ins
        if a.grad or b.grad:
            w.save(b)
        if b.grad:
            w.save(a)
    return w.new(shape, dtype, like(ins[0], shape))


def _matmul(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(*ins)
    return w.new(shape, dtype)


def _pad(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if node.args.get("mode", "constant") in ("reflect", "replicate"):
        w.save(ins[0])
    return w.new(shape, dtype)


def _embedding(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])  # the indices
    return w.new(shape, dtype)


def _parameter(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    strides = tuple(
        0 if i == 0 and shape[0] != 1 else s for i, s in enumerate(contiguous_strides(shape))
    )
    return View(PARAMETER, shape, strides, dtype, not w.frozen)


def _buffer(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """A registered buffer expanded over the batch: a view of module state, no gradient."""
    strides = tuple(0 if i == 0 else s for i, s in enumerate(contiguous_strides(shape)))
    return View(PARAMETER, shape, strides, dtype, False)


def _sdpa_core(w: Walk, q: View, k: View, v: View, dropout: float, dtype: str) -> View:
    """Flash / memory-efficient attention: saves q, k, v, the output and a float32
    log-sum-exp per query (CUDA's efficient kernel pads it to multiples of 32)."""
    batch, heads, seq = q.shape[0], q.shape[1], q.shape[2]
    shape = (*q.shape[:-1], v.shape[-1])
    if dropout > 0 and w.device == "cpu":  # the math path: scores, weights and dropout kept
        scores = batch * heads * seq * k.shape[2]
        w.extra(numel(q.shape), dtype)
        w.extra(numel(k.shape), dtype)
        w.extra(scores, dtype)
        w.extra(scores, dtype)
        w.extra(scores, dtype)
        w.save(v)
        return w.new(shape, dtype)
    w.save(q, k, v)
    # CUDA's kernels write (batch, seq, heads, dim) and return it transposed; the CPU
    # kernel writes its output in the query's axis order
    order = (0, 2, 1, 3) if w.device == "cuda" else stride_order(q)
    out = w.new(shape, dtype, strides_in_order(shape, order))
    w.save(out)
    lse = seq if w.device == "cpu" or dtype != "float32" else -(-seq // 32) * 32
    w.extra(batch * heads * lse)
    return out


def _heads(view: View) -> View:
    """A 3-axis (batch, seq, dim) input as SDPA sees it: one head."""
    if len(view.shape) == 4:
        return view
    b, s, d = view.shape
    bs, ss, ds = view.strides
    return View(
        view.storage, (b, 1, s, d), (bs, s * ss, ss, ds), view.dtype, view.grad, view.grad_id
    )


def _sdpa(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    q, k, v = (_heads(x) for x in split_inputs(node.args, ins)[0])  # not attn_mask=
    if k.shape[1] != q.shape[1]:  # grouped-query: repeat_interleave copies keys and values
        k = w.new((k.shape[0], q.shape[1], *k.shape[2:]), k.dtype, grad=k.grad)
        v = w.new((v.shape[0], q.shape[1], *v.shape[2:]), v.dtype, grad=v.grad)
    out = _sdpa_core(w, q, k, v, float(node.args.get("dropout") or 0.0), dtype)
    if len(ins[0].shape) == 3:
        return View(
            out.storage,
            shape,
            (out.strides[0], out.strides[2], out.strides[3]),
            dtype,
            True,
            out.grad_id,
        )
    return out


def _attention(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """nn.MultiheadAttention (batch_first, need_weights=False) as F.multi_head_attention_forward
    runs it: packed in-projection of the (seq, batch, dim) transposed input, a contiguous
    copy split into q, k, v, SDPA, a contiguous copy for the output projection."""
    ins = list(split_inputs(node.args, ins)[0])  # the masks are no query or memory
    x = ins[0]
    batch, seq, dim = x.shape
    heads = int(node.args["heads"])
    head = dim // heads
    xt = w.permuted(x, (1, 0, 2))
    w.save(w.reshaped(xt, (seq * batch, dim)))
    if len(ins) == 2:
        memory = w.permuted(ins[1], (1, 0, 2))
        kv_len = memory.shape[0]
        folded = (kv_len * batch, memory.shape[2])
        qp = w.new((seq, batch, dim), dtype)
        q = _heads_view(qp, seq, batch, heads, head)
        if memory.shape[2] == dim:  # packed key/value projection, one contiguous copy
            w.save(w.reshaped(memory, folded))
            packed = w.new((2, kv_len, batch, dim), dtype)
            k = v = _heads_view(packed, kv_len, batch, heads, head)
        else:  # kdim/vdim: separate projections, each folding the memory itself
            w.save(w.reshaped(memory, folded), w.reshaped(memory, folded))
            k = _heads_view(w.new((kv_len, batch, dim), dtype), kv_len, batch, heads, head)
            v = _heads_view(w.new((kv_len, batch, dim), dtype), kv_len, batch, heads, head)
    else:
        kv_len = seq
        packed = w.new((3, seq, batch, dim), dtype)
        q = k = v = _heads_view(packed, seq, batch, heads, head)
    if node.args.get("causal"):  # the boolean mask becomes an additive float (seq, kv) mask
        w.extra(seq * kv_len, dtype)
    out = _sdpa_core(w, q, k, v, float(node.args.get("dropout") or 0.0), dtype)
    moved = w.permuted(out, (2, 0, 1, 3))  # (seq, batch, heads, head)
    if not is_contiguous(moved.shape, moved.strides):
        moved = w.new(moved.shape, dtype)
    w.save(moved)
    projected = w.new((seq * batch, dim), dtype)
    return View(projected.storage, shape, (dim, batch * dim, 1), dtype, True, projected.grad_id)


def _heads_view(packed: View, seq: int, batch: int, heads: int, head: int) -> View:
    """q, k or v of a (n, seq, batch, dim) projection seen as (batch, heads, seq, head)."""
    dim = heads * head
    return View(
        packed.storage,
        (batch, heads, seq, head),
        (heads * head, head, batch * dim, 1),
        packed.dtype,
        True,
        packed.grad_id,
    )


def _rotary(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    seq, head = shape[-2], shape[-1]
    w.extra(seq * head, dtype)  # cos
    w.extra(seq * head, dtype)  # sin
    return w.new(shape, dtype, like(ins[0], shape))


def _recurrent(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """An estimate: the input, every step's gates and states, per layer and direction."""
    x = ins[0]
    batch, seq = x.shape[0], x.shape[1]
    hidden = int(node.args["hidden"])
    gates = 4 if node.op == "lstm" else 3
    layers = int(node.args.get("num_layers", 1)) * (2 if node.args.get("bidirectional") else 1)
    w.save(x)
    w.extra(layers * batch * seq * hidden * (gates + 2), dtype)
    out = w.new(shape, dtype)
    w.save(out)
    return out


RULES: dict[str, Rule] = {
    # views: nothing saved, no new storage
    "reshape": _reshape,
    "flatten": _reshape,
    "transpose": _transpose,
    "permute": _permute,
    "split": _same_strides,
    "chunk": _same_strides,
    "slice": _same_strides,
    "select": _select,
    "squeeze": _squeeze_like,
    "unsqueeze": _squeeze_like,
    "expand": _squeeze_like,
    "identity": _alias,
    "dropout": _dropout,
    "drop_path": _dropout,
    "parameter": _parameter,
    # parametric layers
    "dense": _dense,
    "conv1d": _conv,
    "conv2d": _conv,
    "conv3d": _conv,
    "conv_transpose1d": _conv,
    "conv_transpose2d": _conv,
    "conv_transpose3d": _conv,
    "embedding": _embedding,
    "positional_encoding": _saves_nothing,
    "batchnorm": _batchnorm,
    "instance_norm": _instance_norm,
    "layer_norm": _layer_norm,
    "rms_norm": _layer_norm,
    "group_norm": _group_norm,
    "multihead_attention": _attention,
    "lstm": _recurrent,
    "gru": _recurrent,
    # activations: relu, sigmoid, tanh, softmax keep their output; the rest their input
    "relu": _saves_output,
    "sigmoid": _saves_output,
    "tanh": _saves_output,
    "softmax": _saves_output,
    "log_softmax": _saves_output,
    # merges and arithmetic
    "add": _saves_nothing,
    "subtract": _saves_nothing,
    "concat": _saves_nothing,
    "multiply": _multiply,
    "divide": _divide,
    "matmul": _matmul,
    # pooling and reductions
    "maxpool": _pool_with_indices,
    "adaptive_max_pool": _pool_with_indices,
    "avgpool": _saves_input,
    "adaptive_avg_pool": _adaptive_avg,
    "global_avg_pool": _saves_nothing,
    "mean": _saves_nothing,
    "sum": _saves_nothing,
    "global_max_pool": _amax,
    "amax": _amax,
    "max": _amax,
    # resampling
    "pad": _pad,
    "upsample": _saves_nothing,
    "pixel_shuffle": _saves_nothing,
    # attention helpers
    "scaled_dot_product_attention": _sdpa,
    "rotary_embedding": _rotary,
}
RULES["buffer"] = _buffer


def _where(w: Walk, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """torch.where keeps the condition for backward, not the values."""
    w.save(ins[0])
    return w.new(shape, dtype, like(ins[1], shape))


RULES["where"] = _where
RULES["masked_fill"] = lambda w, node, ins, shape, dtype: _where(
    w, node, [ins[-1], ins[0]], shape, dtype
)
for _name in (  # index arithmetic and constructors: nothing kept for backward
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_not",
    "to",
    "cumsum",
    "roll",
    "arange",
    "zeros",
    "ones",
    "full",
    "zeros_like",
    "ones_like",
    "full_like",
):
    RULES[_name] = _saves_nothing
for _name in (
    "gelu",
    "silu",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "softplus",
    "mish",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "glu",
):
    RULES[_name] = _saves_input
