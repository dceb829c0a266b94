"""Attention padding (SPEC §4.3): padding masks, causal masks, fully padded rows, blocks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.backends.torch.util import corpus_path, generate, load

torch = pytest.importorskip("torch")

SEQ, DIM = 5, 8


def attention_model(causal: bool) -> Any:
    flag = "true" if causal else "false"
    _, _, code = generate(
        f"""
        model M:
            input_shape = ({SEQ}, {DIM})
            def forward(x):
                y = multihead_attention(x, heads=2, dim={DIM}, causal={flag})
                return y
        """
    )
    return load(code).M()


def native_twin(model: Any) -> Any:
    twin = torch.nn.MultiheadAttention(DIM, 2, batch_first=True)
    twin.load_state_dict(model.multihead_attention1.state_dict())
    return twin


def causal_mask() -> Any:
    return torch.ones(SEQ, SEQ, dtype=torch.bool).triu(1)


# right padding: 0, 2 and 4 padded positions; no sequence is fully padded
LENGTHS = (5, 3, 1)


def right_padding(lengths: tuple[int, ...] = LENGTHS) -> Any:
    return torch.arange(SEQ)[None, :] >= torch.tensor(lengths)[:, None]


@pytest.mark.parametrize("causal", [False, True])
def test_padding_mask_matches_key_padding_mask(causal: bool) -> None:
    model = attention_model(causal)
    twin = native_twin(model)
    mask = right_padding()
    x = torch.randn(len(LENGTHS), SEQ, DIM, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    out = model(x, padding_mask=mask)
    expected = twin(
        x2, x2, x2, key_padding_mask=mask, attn_mask=causal_mask() if causal else None,
        need_weights=False,
    )[0]  # fmt: skip
    keep = ~mask
    torch.testing.assert_close(out[keep], expected[keep], atol=1e-6, rtol=1e-5)
    assert (out[mask] == 0).all(), "padded query positions must be zeros"
    out[keep].sum().backward()
    expected[keep].sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, atol=1e-6, rtol=1e-5)
    for mine, theirs in zip(
        model.multihead_attention1.parameters(), twin.parameters(), strict=True
    ):
        torch.testing.assert_close(mine.grad, theirs.grad, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_without_mask_equals_plain_attention(causal: bool) -> None:
    model = attention_model(causal)
    twin = native_twin(model)
    x = torch.randn(2, SEQ, DIM)
    expected = twin(x, x, x, attn_mask=causal_mask() if causal else None, need_weights=False)[0]
    torch.testing.assert_close(model(x), expected, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_fully_padded_rows_are_finite_zeros_with_finite_gradients(causal: bool) -> None:
    model = attention_model(causal)
    # a fully padded row, a left-padded row (causal queries see only padding) and a full row
    mask = torch.tensor([[True] * SEQ, [True, True, False, False, False], [False] * SEQ])
    x = torch.randn(3, SEQ, DIM, requires_grad=True)
    out = model(x, padding_mask=mask)
    assert torch.isfinite(out).all()
    assert (out[mask] == 0).all()
    (out.square().sum() + out.sum()).backward()
    assert torch.isfinite(x.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())
    assert (x.grad[0] == 0).all(), "a fully padded sequence influences nothing"


def test_token_model_derives_mask_from_padding_idx() -> None:
    fe, generator, code = generate(corpus_path("sequence_lm.aur").read_text(), "sequence_lm.aur")
    net = getattr(load(code), generator.class_names["TinyLM"])().eval()
    tokens = torch.randint(1, 1000, (2, 32))
    tokens[0, :12] = 0  # left padding: causal queries after it would see it unmasked
    tokens[1, :] = 0  # fully padded
    derived = net(tokens)
    explicit = net(tokens, padding_mask=tokens == 0)
    torch.testing.assert_close(derived, explicit)
    assert torch.isfinite(derived).all()
    no_padding = net(tokens, padding_mask=torch.zeros_like(tokens, dtype=torch.bool))
    assert not torch.allclose(derived[0, 12:], no_padding[0, 12:])


def test_mask_reaches_attention_inside_repeated_blocks() -> None:
    fe, generator, code = generate(corpus_path("composition.aur").read_text(), "composition.aur")
    net = getattr(load(code), generator.class_names["Encoder"])().eval()
    mask = torch.zeros(2, 16, dtype=torch.bool)
    mask[0, 10:] = True
    x = torch.randn(2, 16, 48)
    changed = x.clone()
    changed[0, 10:] = torch.randn(6, 48)  # only padded positions differ
    a, b = net(x, padding_mask=mask), net(changed, padding_mask=mask)
    torch.testing.assert_close(a[0, :10], b[0, :10])
    torch.testing.assert_close(a[1], b[1])
    assert not torch.allclose(net(x)[0, :10], net(changed)[0, :10]), "mask had no effect"


def test_wrong_input_dtype_is_rejected_not_cast() -> None:
    _, generator, code = generate(corpus_path("sequence_lm.aur").read_text(), "sequence_lm.aur")
    net = getattr(load(code), generator.class_names["TinyLM"])()
    with pytest.raises(TypeError, match="TinyLM expects int64 input, got torch.float32"):
        net(torch.zeros(2, 32))
