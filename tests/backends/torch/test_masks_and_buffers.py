"""Issue 23 items 2-3 end to end, in single-input models, against reference code:

- a T5 relative position bias (arange, bucket arithmetic, a lookup in a learned table)
  equals Hugging Face's ``T5Attention._relative_position_bucket`` + ``nn.Embedding``;
- a key padding mask computed from token ids reaches ``nn.MultiheadAttention`` and
  ``F.scaled_dot_product_attention`` as a hand-written torch twin passes it;
- a Swin relative position index buffer and a lookup equal torchvision's
  ``_get_relative_position_bias``; the buffer is in ``state_dict`` as PyTorch registers it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.backends.torch.util import generate, load
from tests.helpers import errors

torch = pytest.importorskip("torch")
F = torch.nn.functional

T5_BIAS = """
model T5Bias:
    input_shape = (8, 16)
    def forward(x):
        pos = arange(8)
        rel = subtract(unsqueeze(pos, 1), unsqueeze(pos, -1))
        ahead = multiply(to(gt(rel, 0), "int64"), 16)
        n = abs(rel)
        small = lt(n, 8)
        scaled = multiply(divide(log(divide(to(n, "float32"), 8.0)), 2.772588722239781), 8)
        large = clamp(add(to(scaled, "int64"), full_like(n, value=8)), max=15)
        buckets = add(ahead, where(small, n, large))
        table = parameter((32, 4), batch_axis=false) as relative_attention_bias
        bias = permute(lookup(table, index=buckets), 3, 1, 2)
        q = transpose(reshape(x, 8, 4, 4), 1, 2)
        y = scaled_dot_product_attention(q, q, q, attn_mask=bias, scale=1.0)
        return y
"""


def test_t5_relative_position_bias_equals_hugging_face() -> None:
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    _, _, code = generate(T5_BIAS)
    assert "gather_rows(table, buckets)" in code and "attn_mask=bias" in code
    model = load(code).T5Bias()
    with torch.no_grad():
        model.relative_attention_bias.normal_()
    x = torch.randn(2, 8, 16)
    positions = torch.arange(8)
    relative = positions[None, :] - positions[:, None]  # memory - context, as T5 computes
    # T5Config's defaults: 32 buckets (16 per direction, 8 exact), max_distance 128, so the
    # program divides log(n / 8) by log(128 / 8) = 2.7725887... and scales by 16 - 8
    buckets = t5.T5Attention._relative_position_bucket(relative, True, 32, 128)
    embedding = torch.nn.Embedding(32, 4)
    embedding.weight.data.copy_(model.relative_attention_bias.data)
    bias = embedding(buckets).permute(2, 0, 1)[None]  # (1, heads, q, k)
    q = x.reshape(2, 8, 4, 4).transpose(1, 2)
    expected = F.scaled_dot_product_attention(q, q, q, attn_mask=bias, scale=1.0)
    torch.testing.assert_close(model(x), expected)


PADDED = """
model Padded:
    input_shape = (6,)
    input_dtype = int64
    def forward(ids):
        x = embedding(ids, 11, 16)
        pad = eq(ids, 0)
        y = multihead_attention(x, heads=4, dim=16, key_padding_mask=pad)
        keep = unsqueeze(unsqueeze(ne(ids, 0), 1), 1)
        q = transpose(reshape(y, 6, 4, 4), 1, 2)
        z = scaled_dot_product_attention(q, q, q, attn_mask=keep)
        return z
"""


def test_key_padding_mask_from_token_ids_equals_torch_twin() -> None:
    _, _, code = generate(PADDED)
    assert "key_padding_mask=pad" in code and "def self_attention" not in code
    model = load(code).Padded()
    model.eval()
    ids = torch.tensor([[3, 5, 7, 0, 0, 0], [1, 2, 3, 4, 5, 9]])
    embed = torch.nn.Embedding(11, 16)
    attn = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    embed.load_state_dict(model.embedding1.state_dict())
    attn.load_state_dict(model.multihead_attention1.state_dict())
    attn.eval()
    x = embed(ids)
    y = attn(x, x, x, key_padding_mask=ids == 0, need_weights=False)[0]
    q = y.reshape(2, 6, 4, 4).transpose(1, 2)
    expected = F.scaled_dot_product_attention(q, q, q, attn_mask=(ids != 0)[:, None, None, :])
    with torch.no_grad():
        out = model(ids)
    torch.testing.assert_close(out, expected.detach())
    # padding changes nothing for the real tokens: the padded positions are never attended
    longer = torch.tensor([[3, 5, 7, 0, 0, 0]])
    swapped = longer.clone()
    swapped[0, 4] = 0  # still padding
    torch.testing.assert_close(model(longer), model(swapped))


SWIN = """
model WindowBias:
    input_shape = (9, 8)
    def forward(x):
        index = buffer((9, 9), init="relative_position_index", window=(3, 3)) as relative_position_index
        table = parameter((25, 2), init=normal(0.02), batch_axis=false) as relative_position_bias_table
        bias = permute(lookup(table, index=index), 3, 1, 2)
        q = transpose(reshape(x, 9, 2, 4), 1, 2)
        y = scaled_dot_product_attention(q, q, q, attn_mask=bias)
        return y
"""


def test_swin_relative_position_index_buffer_equals_torchvision() -> None:
    swin = pytest.importorskip("torchvision.models.swin_transformer")
    fe, _, code = generate(SWIN)
    assert 'self.register_buffer("relative_position_index", relative_position_index(3, 3))' in code
    assert "def relative_position_index(" in code and "import aurane" not in code
    model = load(code).WindowBias()
    state = model.state_dict()
    assert list(state) == ["relative_position_bias_table", "relative_position_index"]
    assert state["relative_position_index"].dtype == torch.int64
    # a buffer is no parameter: the model and the IR count the table only
    assert sum(p.numel() for p in model.parameters()) == 50 == fe.graphs["WindowBias"].parameters
    index = state["relative_position_index"]
    bias = swin._get_relative_position_bias(model.relative_position_bias_table, index, [3, 3])
    x = torch.randn(2, 9, 8)
    q = x.reshape(2, 9, 2, 4).transpose(1, 2)
    expected = F.scaled_dot_product_attention(q, q, q, attn_mask=bias)
    torch.testing.assert_close(model(x), expected)
    reference = torch.nn.Module()
    reference.register_buffer("relative_position_index", index.clone())
    coords = torch.stack(torch.meshgrid(torch.arange(3), torch.arange(3), indexing="ij")).flatten(1)
    relative = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
    relative[:, :, 0] += 2
    relative[:, :, 1] += 2
    relative[:, :, 0] *= 5
    torch.testing.assert_close(index, relative.sum(-1))


def test_non_persistent_buffer_is_not_in_state_dict() -> None:
    source = """
model Causal:
    input_shape = (5, 8)
    def forward(x):
        mask = buffer((5, 5), init="causal_mask", persistent=false)
        table = buffer((5, 8), init="sinusoid") as pe
        q = unsqueeze(add(x, table), 1)
        y = scaled_dot_product_attention(q, q, q, attn_mask=unsqueeze(mask, 1))
        return y
"""
    found = errors(source)
    assert [d.code for d in found] == ["S003"] and "name a tensor" in found[0].message
    fixed = source.replace("attn_mask=unsqueeze(mask, 1))", "attn_mask=m)").replace(
        "        y = ", "        m = unsqueeze(mask, 1)\n        y = "
    )
    _, _, code = generate(fixed)
    assert "torch.ones(5, 5, dtype=torch.bool).tril(), persistent=False" in code
    model = load(code).Causal()
    assert list(model.state_dict()) == ["pe"] and not list(model.parameters())
    x = torch.randn(2, 5, 8)
    position = torch.arange(5.0)[:, None]
    rates = torch.pow(10000.0, -torch.arange(0, 8, 2) / 8.0)
    table = torch.zeros(5, 8)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * rates), torch.cos(position * rates)
    q = (x + table)[:, None]
    expected = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    torch.testing.assert_close(model(x), expected)


# -- located errors ---------------------------------------------------------------------------

ERRORS = [
    # (body lines, code, the text the error points at, words of the message)
    (
        ["keep = ne(ids, 0)", "y = scaled_dot_product_attention(q, q, q, attn_mask=keep)"],
        "T119",
        "attn_mask=keep",
        "does not broadcast to (batch, heads, query, key)",
    ),
    (
        [
            "m = unsqueeze(unsqueeze(ids, 1), 1)",
            "y = scaled_dot_product_attention(q, q, q, attn_mask=m)",
        ],
        "T120",
        "attn_mask=m",
        "a mask is bool or",
    ),
    (
        [
            "pad = eq(ids, 0)",
            "z = reshape(pad, 1, 6)",
            "y = multihead_attention(h, heads=2, dim=8, key_padding_mask=z)",
        ],
        "T119",
        "key_padding_mask=z",
        "(batch, key)",
    ),
    (
        ['f = to(ids, "float32")', "y = gather(h, 1, index=f)"],
        "T121",
        "index=f",
        "int64 or int32",
    ),
    (
        ["y = masked_fill(h, ids, 0.0)"],
        "T123",
        "ids",
        "must be a bool tensor",
    ),
    (
        ['b = buffer((9, 8), init="relative_position_index", window=(3, 3))'],
        "S132",
        "(9, 8)",
        "has shape (9, 9)",
    ),
    (
        ["y = scaled_dot_product_attention(q, q, q, attn_mask=undefined_mask)"],
        "S007",
        "attn_mask=undefined_mask",
        "undefined tensor",
    ),
]


@pytest.mark.parametrize(("body", "code", "at", "words"), ERRORS, ids=[e[1] for e in ERRORS])
def test_mask_index_and_buffer_errors_are_located(
    body: list[str], code: str, at: str, words: str
) -> None:
    head = [
        "model M:",
        "    input_shape = (6,)",
        "    input_dtype = int64",
        "    def forward(ids):",
        "        h = embedding(ids, 10, 8)",
        "        q = transpose(reshape(h, 6, 2, 4), 1, 2)",
    ]
    lines = head + [f"        {line}" for line in body] + [f"        return {body[-1].split()[0]}"]
    found = errors("\n".join(lines) + "\n")
    assert [d.code for d in found] == [code], found
    error = found[0]
    assert words in error.message and error.hint
    assert error.span is not None
    line = lines[error.span.line - 1]
    assert line[error.span.column - 1 :].startswith(at), (line, error.span)


def test_buffer_lookup_and_mask_export_with_a_dynamic_batch(tmp_path: Any) -> None:
    """The lookup is a gather (take_along_dim would fix the batch at export) and the buffer
    and the table are expanded views: torch.export keeps the batch dynamic."""
    from aurane.export import export_model
    from aurane.verify import load_generated

    gen = load_generated(SWIN, "swin.aur")
    path = str(tmp_path / "swin.pt2")
    export_model(gen, "WindowBias", "pt2", path)
    program = torch.export.load(path)
    torch.manual_seed(0)
    model = getattr(gen.module, gen.class_names["WindowBias"])().eval()
    model.load_state_dict(program.state_dict, strict=False)
    for batch in (1, 3):
        x = torch.randn(batch, 9, 8)
        with torch.no_grad():
            torch.testing.assert_close(program.module()(x), model(x))
