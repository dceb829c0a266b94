"""Cross-attention, scaled dot-product attention (grouped-query) and rotary embeddings.

Catalog samples already run through tests/backends/torch/test_ops.py against the twins in
tests/ops/twins.py (outputs, input and parameter gradients); this file covers what those
one-op programs do not: graph-form input counting, located errors, the emitted text, the
padding-mask rule of cross-attention, dtypes, and what FlopCounterMode sees.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from aurane.ops import CATALOG, context
from tests.backends.torch.util import generate, load
from tests.helpers import errors, only_error

torch = pytest.importorskip("torch")
from tests.ops.twins import HFRotary, ManualAttention  # noqa: E402  (needs torch)

CROSS = """
model Cross:
    input_shape = (6, 16)
    def forward(x):
        memory = reshape(dense(x, 6), 3, 12)
        y = multihead_attention(x, memory, heads=4, dim=16)
        return y
"""


def test_cross_attention_equals_nn_multihead_attention_with_memory() -> None:
    _, _, code = generate(CROSS)
    assert "nn.MultiheadAttention(16, 4, kdim=12, vdim=12, batch_first=True)" in code
    assert "self.multihead_attention1(x, memory, memory, need_weights=False)" in code
    model = load(code).Cross()
    # no padding_mask parameter and no self_attention helper: cross-attention ignores it
    assert list(inspect.signature(model.forward).parameters) == ["x"]
    assert "def self_attention" not in code
    twin = torch.nn.MultiheadAttention(16, 4, kdim=12, vdim=12, batch_first=True)
    twin.load_state_dict(model.multihead_attention1.state_dict())  # same keys, strict
    x = torch.randn(2, 6, 16)
    memory = model.dense1(x).reshape(2, 3, 12)
    expected = twin(x, memory, memory, need_weights=False)[0]
    torch.testing.assert_close(model(x), expected)


def test_causal_cross_attention_of_equal_lengths() -> None:
    _, _, code = generate(
        """
        model M:
            input_shape = (5, 8)
            def forward(x):
                y = multihead_attention(x, dense(x, 8), heads=2, dim=8, causal=true)
                return y
        """
    )
    model = load(code).M().eval()
    x = torch.randn(3, 5, 8)
    memory = model.dense1(x)
    mask = torch.ones(5, 5, dtype=torch.bool).triu(1)
    twin = model.multihead_attention1
    expected = twin(x, memory, memory, attn_mask=mask, need_weights=False)[0]
    torch.testing.assert_close(model(x), expected)


def test_self_and_cross_attention_in_one_model_keep_the_padding_mask() -> None:
    _, _, code = generate(
        """
        model M:
            input_shape = (5, 8)
            def forward(x):
                h = multihead_attention(x, heads=2, dim=8)
                y = multihead_attention(h, x, heads=2, dim=8)
                return y
        """
    )
    assert "self_attention(self.multihead_attention1, x, padding_mask)" in code
    assert "self.multihead_attention2(h, x, x, need_weights=False)" in code
    model = load(code).M()
    mask = torch.zeros(2, 5, dtype=torch.bool)
    mask[0, 3:] = True
    assert torch.isfinite(model(torch.randn(2, 5, 8), padding_mask=mask)).all()


@pytest.mark.parametrize(
    "call",
    [
        "multihead_attention(x, 2, 8)",  # positional heads and dim: still one input
        "multihead_attention(x, H, D)",  # constants are values, not tensors
        "multihead_attention(x, heads=H, dim=D)",
    ],
)
def test_positional_values_are_not_taken_for_a_memory(call: str) -> None:
    fe, _, code = generate(
        f"""
        model M:
            input_shape = (5, 8)
            H = 2
            D = 8
            def forward(x):
                y = {call}
                return y
        """
    )
    (node,) = fe.graphs["M"].nodes
    assert len(node.inputs) == 1 and node.args["heads"] == 2
    assert "self_attention(" in code


def gqa_source(dropout: float = 0.0, causal: bool = True) -> str:
    flag = "true" if causal else "false"
    return f"""
    model Gqa:
        input_shape = (8, 6, 4)
        def forward(q):
            k = reshape(dense(q, 1), 2, 6, 4)
            v = reshape(dense(q, 1), 2, 6, 4)
            o = scaled_dot_product_attention(q, k, v, causal={flag}, dropout={dropout})
            return o
    """


@pytest.mark.parametrize("causal", [False, True])
def test_grouped_query_sdpa_equals_manual_softmax_attention(causal: bool) -> None:
    fe, _, code = generate(gqa_source(causal=causal))
    assert "k.repeat_interleave(4, dim=1), v.repeat_interleave(4, dim=1)" in code
    assert fe.graphs["Gqa"].output_value.sample_shape == (8, 6, 4)
    model = load(code).Gqa()
    q = torch.randn(2, 8, 6, 4, requires_grad=True)
    q2 = q.detach().clone().requires_grad_()
    out = model(q)
    k = model.dense1(q2).reshape(2, 2, 6, 4)
    v = model.dense2(q2).reshape(2, 2, 6, 4)
    twin = ManualAttention({"scale": None, "causal": causal, "dropout": 0.0})
    expected = twin(q2, k, v)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    out.sum().backward()
    expected.sum().backward()
    torch.testing.assert_close(q.grad, q2.grad, atol=1e-6, rtol=1e-5)


def test_sdpa_dropout_only_in_training() -> None:
    _, _, code = generate(gqa_source(dropout=0.5, causal=False))
    assert "dropout_p=0.5 if self.training else 0.0" in code
    model = load(code).Gqa()
    q = torch.randn(2, 8, 6, 4)
    model.eval()
    torch.testing.assert_close(model(q), model(q))
    model.train()
    assert not torch.allclose(model(q), model(q))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_rotary_embedding_equals_hugging_face_llama(dtype: str, base: float) -> None:
    _, _, code = generate(
        f"""
        model Rope:
            input_shape = (4, 7, 8)
            input_dtype = {dtype}
            def forward(x):
                y = rotary_embedding(x, base={base})
                return y
        """
    )
    assert code.count("def rotary_embedding(") == 1 and "import aurane" not in code
    model = load(code).Rope()
    assert model.state_dict() == {}  # cos/sin are computed in forward: no extra keys
    x = torch.randn(2, 4, 7, 8, dtype=getattr(torch, dtype))
    torch.testing.assert_close(model(x), HFRotary(base, 8)(x))


def test_llama_style_attention_block() -> None:
    """Projections, the head transpose, rotary on q and k, grouped-query causal sdpa."""
    from aurane.backends.torch.emit import EMITTERS

    if "transpose" not in CATALOG or "transpose" not in EMITTERS:
        pytest.skip("transpose is not in the catalog yet")
    fe, _, code = generate(
        """
        model Attn:
            input_shape = (6, 16)
            def forward(x):
                q = rotary_embedding(transpose(reshape(dense(x, 16, bias=false), 6, 4, 4), 1, 2))
                k = rotary_embedding(transpose(reshape(dense(x, 8, bias=false), 6, 2, 4), 1, 2))
                v = transpose(reshape(dense(x, 8, bias=false), 6, 2, 4), 1, 2)
                o = scaled_dot_product_attention(q, k, v, causal=true)
                return o
        """
    )
    assert fe.graphs["Attn"].output_value.sample_shape == (4, 6, 4)
    assert code.count("def rotary_embedding(") == 1
    assert load(code).Attn()(torch.randn(2, 6, 16)).shape == (2, 4, 6, 4)


# -- located errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "marked"),
    [
        (
            "y = multihead_attention(x, reshape(x, 4, 10), heads=2, dim=8, causal=true)",
            "T082",
            "causal",
        ),
        ("y = multihead_attention(x, heads=2, dim=8, kdim=4)", "T083", "kdim"),
        ("y = multihead_attention(x, dense(x, 6), heads=2, dim=8, kdim=4)", "T001", "kdim"),
        ("y = rotary_embedding(dense(x, 7))", "T080", "rotary_embedding"),
        ("y = scaled_dot_product_attention(x, x)", "S017", "scaled_dot_product_attention"),
    ],
)
def test_located_errors(body: str, code: str, marked: str) -> None:
    source = f"model M:\n    input_shape = (5, 8)\n    def forward(x):\n        {body}\n"
    found = only_error(source)
    assert found.code == code, found
    line = source.splitlines()[found.span.line - 1]
    text = line[found.span.column - 1 :]
    assert text.startswith(marked), (found, text)


def test_kv_heads_must_divide_query_heads() -> None:
    found = errors(
        """
        model M:
            input_shape = (6, 5, 4)
            def forward(q):
                k = reshape(dense(q, 2), 4, 5, 3)
                o = scaled_dot_product_attention(q, k, k)
                return o
        """
    )
    assert [d.code for d in found] == ["T001"]  # head_dim 4 vs 3 first
    found = errors(
        """
        model M:
            input_shape = (6, 5, 4)
            def forward(q):
                k = reshape(dense(q, 2), 4, 5, 3)
                o = scaled_dot_product_attention(q, reshape(dense(q, 4), 4, 5, 6), k)
                return o
        """
    )
    assert [d.code for d in found] == ["T001"]


def test_sdpa_kv_heads_error_names_the_heads() -> None:
    spec = CATALOG["scaled_dot_product_attention"]
    from aurane.ops.spec import OpError

    with pytest.raises(OpError) as info:
        spec.infer(context(spec, {}, [(8, 5, 4), (3, 5, 4), (3, 5, 4)]))
    assert info.value.code == "T081" and "multiple" in info.value.message


# -- FLOPs ----------------------------------------------------------------------------------


def test_flop_counter_misses_the_cpu_sdpa_kernel() -> None:
    """Why the catalog's MAC test checks sdpa on the written-out twin: on CPU,
    F.scaled_dot_product_attention runs a fused kernel that FlopCounterMode does not count
    (it registers only the CUDA flash / efficient / cuDNN kernels)."""
    from torch.utils.flop_counter import FlopCounterMode

    spec = CATALOG["scaled_dot_product_attention"]
    shapes = [(4, 6, 8), (2, 6, 8), (2, 6, 8)]
    ctx = context(spec, {}, shapes)
    macs = spec.macs(ctx, spec.infer(ctx))
    q, k, v = (torch.randn(2, *s) for s in shapes)
    k2, v2 = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    with FlopCounterMode(display=False) as fused, torch.no_grad():
        torch.nn.functional.scaled_dot_product_attention(q, k2, v2)
    with FlopCounterMode(display=False) as manual, torch.no_grad():
        twin: Any = ManualAttention({"scale": None, "causal": False, "dropout": 0.0})
        twin(q, k, v)
    assert manual.get_total_flops() == 2 * 2 * macs
    assert fused.get_total_flops() in (0, 2 * 2 * macs)  # 0 on CPU today
