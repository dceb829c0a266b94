"""Attention: multi-head self- and cross-attention, scaled dot-product attention, RoPE.

``multihead_attention`` is ``nn.MultiheadAttention(batch_first=True)``. With one input it
is self-attention (and reads the model's ``padding_mask``, SPEC §4.3); graph form with a
second tensor input, ``multihead_attention(x, memory, heads=8, dim=512)``, is
cross-attention: queries from ``x`` ``(S, dim)``, keys and values from ``memory``
``(S_kv, M)``; ``kdim``/``vdim`` default to ``M`` and ``S_kv`` may differ from ``S``.
Cross-attention does not read ``padding_mask``: its memory may be another sequence (a
learned table, latents, a summary), so Aurane never guesses which memory positions are
padding; it attends to every memory position and does not zero query rows.

``scaled_dot_product_attention(q, k, v)`` is ``F.scaled_dot_product_attention`` on
per-sample ``(heads, S, Dh)`` queries and ``(kv_heads, S_kv, Dh)`` keys / ``(kv_heads,
S_kv, Dv)`` values (the layout after the head transpose of Llama / nanoGPT code). Grouped
query attention (``heads`` a multiple of ``kv_heads``) repeats each key/value head
``heads // kv_heads`` times with ``repeat_interleave`` over the head axis, which is what
``enable_gqa=True`` computes (that flag needs torch >= 2.5; the floor is 2.4).

``rotary_embedding(base=10000)`` rotates ``(..., S, Dh)`` (``(heads, S, Dh)`` per sample)
with the rotate-half convention of Hugging Face's Llama; cos/sin are computed in forward,
so the module has no state and ``state_dict`` no extra keys.

MACs: projections (``S*D*D`` for q and out, ``S_kv*M*D`` for k and v) plus the two
attention products, ``heads*S*S_kv*Dh`` for ``QK^T`` and ``heads*S*S_kv*Dv`` for ``AV``.
"""

from __future__ import annotations

from aurane.ops.rules import (
    ATTENTION,
    FLOAT_DTYPES,
    PARAMETER_FREE,
    PARAMETRIC,
    POSITIVE,
    SHAPE_PRESERVING,
    fmt_shape,
    make_spec,
    optional,
    per_element,
    positive_number,
    probability,
    require_min_rank,
    require_rank,
    same_dtype,
)
from aurane.ops.spec import (
    ArgKind,
    InferContext,
    OpError,
    OpSpec,
    Param,
    TensorArg,
    TensorType,
)

_SEQUENCE = "(sequence, features)"

# -- attention masks ---------------------------------------------------------------------------

MASK_SHAPE = "T119"
MASK_DTYPE = "T120"


def check_mask(
    op: str,
    name: str,
    mask: TensorType | None,
    target: tuple[int, ...],
    query_dtype: str | None,
    layout: str,
) -> None:
    """A mask broadcasts to ``target`` (per sample; the batch axis is its first axis, as for
    every value) under the size-1 rule and is bool or the query's float dtype (added)."""
    if mask is None:
        return
    fits = mask.rank == len(target) and all(
        m in (1, t) for m, t in zip(mask.shape, target, strict=True)
    )
    if not fits:
        raise OpError(
            MASK_SHAPE,
            f"{op} {name} {fmt_shape(mask.shape)} does not broadcast to (batch, {layout}) = "
            f"(batch, {', '.join(map(str, target))}): a mask has one axis per {layout} axis "
            "(batch first), each of the same size or 1",
            blame=name,
            hint="unsqueeze the missing axes, e.g. a (key,) padding mask is "
            "unsqueeze(unsqueeze(m, 1), 1) for (1, 1, key)",
        )
    legal = {"bool", query_dtype} if query_dtype is not None else {"bool", *FLOAT_DTYPES}
    if mask.dtype is not None and mask.dtype not in legal:
        wanted = f"bool or the query's dtype {query_dtype}" if query_dtype else "bool or float"
        raise OpError(
            MASK_DTYPE,
            f"{op} {name} has dtype {mask.dtype}; a mask is {wanted} (bool selects positions, "
            "a float mask is added to the scores)",
            blame=name,
            hint='make it bool with a comparison (ne(ids, 0)) or cast it: to(m, dtype="float32")',
        )


# -- multihead_attention: self (one input) or cross (query, memory) ---------------------------


def is_cross(ctx: InferContext) -> bool:
    return len(ctx.inputs) == 2


def _memory(ctx: InferContext) -> TensorType:
    return ctx.inputs[1] if is_cross(ctx) else ctx.input


def _kv_dims(ctx: InferContext) -> tuple[int, int]:
    """(kdim, vdim): the memory width unless given (self-attention: dim)."""
    width = _memory(ctx).shape[1]
    kdim, vdim = ctx.args["kdim"], ctx.args["vdim"]
    return (width if kdim is None else kdim, width if vdim is None else vdim)


def _attention_infer(ctx: InferContext) -> TensorType:
    t, a = ctx.input, ctx.args
    op = "multihead_attention"
    for index, tensor in enumerate(ctx.inputs):
        what = _SEQUENCE if index == 0 else "(memory sequence, features) memory"
        require_rank(op, tensor, (2,), what)
    dim: int = a["dim"]
    heads: int = a["heads"]
    if dim != t.shape[1]:
        raise OpError(
            "T001",
            f"multihead_attention dim={dim} does not match the input feature size {t.shape[1]}",
            blame="dim",
            hint=f"use dim={t.shape[1]} or project the input with dense({dim}) first",
        )
    if dim % heads:
        raise OpError(
            "T007",
            f"multihead_attention heads={heads} does not divide dim={dim}",
            blame="heads",
            hint="pick a number of heads that divides dim",
        )
    memory = _memory(ctx)
    for name in ("kdim", "vdim"):
        given = a[name]
        if given is None:
            continue
        if not is_cross(ctx):
            raise OpError(
                "T083",
                f"multihead_attention {name}={given} needs a memory input (cross-attention)",
                blame=name,
                hint="self-attention keys and values have width dim: drop the argument, or "
                "pass the memory: multihead_attention(x, memory, ...)",
            )
        if given != memory.shape[1]:
            raise OpError(
                "T001",
                f"multihead_attention {name}={given} does not match the memory feature size "
                f"{memory.shape[1]}",
                blame=name,
                hint=f"use {name}={memory.shape[1]} or leave it out (it defaults to the memory width)",
            )
    _conflict(op, ctx)
    check_mask(
        op,
        "attn_mask",
        ctx.tensor("attn_mask"),
        (heads, t.shape[0], memory.shape[0]),
        t.dtype,
        "heads, query, key",
    )
    check_mask(
        op, "key_padding_mask", ctx.tensor("key_padding_mask"), (memory.shape[0],), t.dtype, "key"
    )
    if is_cross(ctx):
        if a["causal"] and memory.shape[0] != t.shape[0]:
            raise OpError(
                "T082",
                f"multihead_attention causal=true needs as many memory positions as queries, "
                f"got {t.shape[0]} queries and {memory.shape[0]} memory positions",
                blame="causal",
                hint="a causal mask orders one sequence; drop causal for cross-attention",
            )
        return TensorType(t.shape, same_dtype(op, ctx.inputs))
    return t


def _conflict(op: str, ctx: InferContext) -> None:
    if ctx.args["causal"] and ctx.tensor("attn_mask") is not None:
        raise OpError(
            "S004",
            f"{op} takes causal=true or an attn_mask, not both",
            blame="causal",
            hint="fold the causal rule into the mask (logical_and with a causal_mask buffer) "
            "or drop the mask",
        )


def _attention_parameters(ctx: InferContext, out: TensorType) -> int:
    dim: int = ctx.args["dim"]
    kdim, vdim = _kv_dims(ctx)
    return dim * (2 * dim + kdim + vdim) + (4 * dim if ctx.args["bias"] else 0)


def _attention_macs(ctx: InferContext, out: TensorType) -> int:
    length, dim = ctx.input.shape
    kv_length = _memory(ctx).shape[0]
    kdim, vdim = _kv_dims(ctx)
    projections = 2 * length * dim * dim + kv_length * dim * (kdim + vdim)
    return projections + 2 * length * kv_length * dim


def _attention_other(ctx: InferContext, out: TensorType) -> int:
    length, dim = ctx.input.shape
    kv_length = _memory(ctx).shape[0]
    heads: int = ctx.args["heads"]
    scores = heads * length * kv_length
    biases = 2 * length * dim + 2 * kv_length * dim
    return 4 * scores + (biases if ctx.args["bias"] else 0)  # scale + softmax, biases


MULTIHEAD_ATTENTION = make_spec(
    name="multihead_attention",
    params=(
        Param("heads", ArgKind.INT, check=POSITIVE, doc="attention heads; must divide dim"),
        Param("dim", ArgKind.INT, check=POSITIVE, doc="model width, equal to the input features"),
        Param("dropout", ArgKind.FLOAT, 0.0, probability, doc="dropout on attention weights"),
        Param("causal", ArgKind.BOOL, False, doc="mask attention to later positions"),
        Param("bias", ArgKind.BOOL, True, doc="biases in the projections"),
        Param(
            "kdim",
            ArgKind.OPTIONAL_INT,
            None,
            optional(POSITIVE),
            keyword_only=True,
            doc="key width of the memory (cross-attention); defaults to the memory width",
        ),
        Param(
            "vdim",
            ArgKind.OPTIONAL_INT,
            None,
            optional(POSITIVE),
            keyword_only=True,
            doc="value width of the memory (cross-attention); defaults to the memory width",
        ),
        Param(
            "attn_mask",
            ArgKind.TENSOR,
            None,
            keyword_only=True,
            doc="(heads or 1, query or 1, key or 1) mask, bool (true = hidden, as torch's "
            "nn.MultiheadAttention) or float added to the scores",
        ),
        Param(
            "key_padding_mask",
            ArgKind.TENSOR,
            None,
            keyword_only=True,
            doc="(key,) mask of the memory positions, bool (true = padding) or float added",
        ),
    ),
    infer=_attention_infer,
    doc="batch-first multi-head attention (nn.MultiheadAttention): self-attention on one "
    "input, cross-attention with a second (memory) input in graph form",
    samples=(
        ({"heads": 2, "dim": 8}, ((5, 8),)),
        ({"heads": 4, "dim": 12, "causal": True, "bias": False}, ((6, 12),)),
        ({"heads": 1, "dim": 4, "dropout": 0.1}, ((3, 4),)),
        ({"heads": 2, "dim": 8}, ((5, 8), (7, 8))),
        ({"heads": 2, "dim": 8, "kdim": 6, "vdim": 6}, ((5, 8), (3, 6))),
        ({"heads": 4, "dim": 8, "causal": True, "bias": False}, ((4, 8), (4, 5))),
        ({"heads": 2, "dim": 8, "key_padding_mask": TensorArg(1)}, ((5, 8), (5,))),
        ({"heads": 2, "dim": 8, "attn_mask": TensorArg(1)}, ((5, 8), (1, 5, 5))),
        ({"heads": 2, "dim": 8, "attn_mask": TensorArg(2)}, ((5, 8), (3, 8), (2, 1, 3))),
    ),
    kinds={PARAMETRIC, ATTENTION, SHAPE_PRESERVING},
    min_inputs=1,
    max_inputs=2,
    parameters=_attention_parameters,
    macs=_attention_macs,
    other_flops=_attention_other,
)

# -- scaled_dot_product_attention -------------------------------------------------------------

_HEADS = "(heads, sequence, head_dim)"


def _sdpa_infer(ctx: InferContext) -> TensorType:
    op = "scaled_dot_product_attention"
    q, k, v = ctx.inputs
    for tensor, what in ((q, "query"), (k, "key"), (v, "value")):
        require_rank(op, tensor, (3,), f"{_HEADS} {what}")
    dtype = same_dtype(op, ctx.inputs)
    shapes = tuple((i, fmt_shape(t.shape)) for i, t in enumerate(ctx.inputs))
    if q.shape[2] != k.shape[2]:
        raise OpError(
            "T001",
            f"{op} query head_dim {q.shape[2]} differs from key head_dim {k.shape[2]}",
            hint="queries and keys need one head size (the last axis)",
            input_notes=shapes[:2],
        )
    if k.shape[:2] != v.shape[:2]:
        raise OpError(
            "T001",
            f"{op} keys {fmt_shape(k.shape)} and values {fmt_shape(v.shape)} differ in heads "
            "or length",
            hint="keys and values need the same (heads, sequence) axes",
            input_notes=shapes[1:],
        )
    if q.shape[0] % k.shape[0]:
        raise OpError(
            "T081",
            f"{op} query heads {q.shape[0]} are not a multiple of key/value heads {k.shape[0]}",
            hint="grouped-query attention shares each key/value head among heads // kv_heads "
            "query heads: pick kv_heads dividing heads",
            input_notes=shapes,
        )
    _conflict(op, ctx)
    check_mask(
        op,
        "attn_mask",
        ctx.tensor("attn_mask"),
        (q.shape[0], q.shape[1], k.shape[1]),
        q.dtype,
        "heads, query, key",
    )
    if ctx.args["causal"] and q.shape[1] != k.shape[1]:
        raise OpError(
            "T082",
            f"{op} causal=true needs as many keys as queries, got {q.shape[1]} queries and "
            f"{k.shape[1]} keys",
            blame="causal",
            hint="a causal mask orders one sequence; drop causal or use equal lengths",
        )
    return TensorType((q.shape[0], q.shape[1], v.shape[2]), dtype)


def _sdpa_macs(ctx: InferContext, out: TensorType) -> int:
    q, k, v = ctx.inputs
    heads, length, head_dim = q.shape
    return heads * length * k.shape[1] * (head_dim + v.shape[2])


def _sdpa_other(ctx: InferContext, out: TensorType) -> int:
    q, k, _ = ctx.inputs
    return 4 * q.shape[0] * q.shape[1] * k.shape[1]  # scale + softmax


SCALED_DOT_PRODUCT_ATTENTION = make_spec(
    name="scaled_dot_product_attention",
    params=(
        Param("causal", ArgKind.BOOL, False, doc="mask attention to later positions"),
        Param(
            "dropout",
            ArgKind.FLOAT,
            0.0,
            probability,
            doc="dropout on attention weights (training only)",
        ),
        Param(
            "scale",
            ArgKind.OPTIONAL_FLOAT,
            None,
            optional(positive_number),
            doc="score scale; None means 1 / sqrt(head_dim)",
        ),
        Param(
            "attn_mask",
            ArgKind.TENSOR,
            None,
            keyword_only=True,
            doc="(heads or 1, query or 1, key or 1) mask, bool (true = attend, as "
            "F.scaled_dot_product_attention) or float added to the scores",
        ),
    ),
    infer=_sdpa_infer,
    doc="softmax(q k^T * scale) v on (heads, S, Dh) tensors (F.scaled_dot_product_attention); "
    "keys and values may have fewer heads that divide the query heads (grouped-query)",
    samples=(
        ({}, ((2, 5, 4), (2, 5, 4), (2, 5, 4))),
        ({"causal": True}, ((4, 6, 8), (2, 6, 8), (2, 6, 8))),
        ({"scale": 0.5, "dropout": 0.1}, ((2, 3, 4), (1, 7, 4), (1, 7, 6))),
        ({"attn_mask": TensorArg(3)}, ((2, 5, 4), (2, 6, 4), (2, 6, 4), (1, 1, 6))),
        ({"attn_mask": TensorArg(3)}, ((4, 3, 4), (2, 3, 4), (2, 3, 4), (4, 3, 3))),
    ),
    kinds={PARAMETER_FREE, ATTENTION},
    min_inputs=3,
    max_inputs=3,
    macs=_sdpa_macs,
    other_flops=_sdpa_other,
)

# -- rotary_embedding -------------------------------------------------------------------------


def _rotary_infer(ctx: InferContext) -> TensorType:
    t = ctx.input
    require_min_rank("rotary_embedding", t, 2, "(heads, sequence, head_dim)")
    if t.shape[-1] % 2:
        raise OpError(
            "T080",
            f"rotary_embedding needs an even head_dim (last axis), got {t.shape[-1]}",
            hint="rotate-half pairs the two halves of the last axis: use an even head size",
        )
    return t


ROTARY_EMBEDDING = make_spec(
    name="rotary_embedding",
    params=(Param("base", ArgKind.FLOAT, 10000.0, positive_number, doc="frequency base (theta)"),),
    infer=_rotary_infer,
    doc="rotary position embedding over (..., S, Dh), rotate-half convention of HF Llama; "
    "positions along the second-to-last axis, no parameters or buffers",
    samples=(
        ({}, ((2, 5, 8),)),
        ({"base": 500000.0}, ((4, 3, 6),)),
        ({}, ((7, 4),)),
    ),
    kinds={PARAMETER_FREE, SHAPE_PRESERVING},
    other_flops=per_element(3),  # x * cos + rotate_half(x) * sin
)

SPECS: tuple[OpSpec, ...] = (
    MULTIHEAD_ATTENTION,
    SCALED_DOT_PRODUCT_ATTENTION,
    ROTARY_EMBEDDING,
)
