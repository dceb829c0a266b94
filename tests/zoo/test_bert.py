"""``examples/zoo/bert.aur`` against Hugging Face ``BertModel`` (issue 23 item 5).

The shipped program is BERT-base (``BertModel(BertConfig())``). Numerically it is compared at
a small configuration: the program's top-level constants rewritten (2 layers of width 32,
4 heads), the reference built from a ``BertConfig`` of the same sizes, no download. The
reference's 1-D parameters (biases, LayerNorm weights and biases) are perturbed with seeded
random values first, so that a missing bias or a LayerNorm on the wrong tensor cannot pass
as an identity. The batch has rows padded at the end (``attention_mask`` zeros) and both
token types, and both of Hugging Face's attention implementations are compared (``eager``:
the mask added as ``finfo.min`` to the scores; ``sdpa``).

MACs: ``aurane profile --at seq=S`` equals ``FlopCounterMode`` total / 2 on the ``eager``
reference exactly (its attention is two ``matmul``\\ s the counter sees); on ``sdpa`` the
counter does not see the fused CPU attention kernel, 2 S^2 D per layer (docs/zoo.md).

At the default configuration: ``aurane check`` passes, and the generated module's
``state_dict`` keys and shapes and its parameter count equal the reference's, both built
on the ``meta`` device (nothing allocated), and equal ``aurane profile``'s count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from torch import Tensor, nn  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from tests.zoo.harness import (  # noqa: E402
    REPO,
    ZOO,
    ZooCase,
    compiled,
    generated_model,
    parameter_count,
    shapes,
    source_of,
)

# The small configuration: the program's constants, and the BertConfig of the same sizes.
SMALL = {
    "vocab": 99,
    "max_positions": 64,
    "hidden": 32,
    "n_layer": 2,
    "n_head": 4,
    "intermediate": 64,
}
BATCH, SEQ = 3, 10
PADDED = (SEQ, 7, 4)  # tokens per row; the rest of each row is padding (mask 0, id 0)


def _small_reference(attn_implementation: str) -> nn.Module:
    config = transformers.BertConfig(
        attn_implementation=attn_implementation,
        vocab_size=SMALL["vocab"],
        max_position_embeddings=SMALL["max_positions"],
        hidden_size=SMALL["hidden"],
        num_hidden_layers=SMALL["n_layer"],
        num_attention_heads=SMALL["n_head"],
        intermediate_size=SMALL["intermediate"],
    )
    return transformers.BertModel(config)


CASE = ZooCase(
    "bert_small_config",
    "bert",
    "BertModel",
    lambda: _small_reference("eager"),
    (BATCH, SEQ),
    integer_input=SMALL["vocab"],
    constants=tuple((name, str(value)) for name, value in SMALL.items()),
)
FULL = ZooCase(
    "bert_full_size",
    "bert",
    "BertModel",
    lambda: transformers.BertModel(transformers.BertConfig()),
    (1, 512),
    integer_input=30522,
    full_size=True,
)


@torch.no_grad()
def _perturb_vectors(model: nn.Module) -> None:
    """Seeded random values added to every 1-D parameter (biases, LayerNorm weights and
    biases: zeros and ones after Hugging Face's initialisation)."""
    generator = torch.Generator().manual_seed(2)
    for parameter in model.parameters():
        if parameter.dim() == 1:
            parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))


def _reference(attn_implementation: str) -> nn.Module:
    torch.manual_seed(0)
    reference = _small_reference(attn_implementation)
    _perturb_vectors(reference)
    return reference.eval()


def _generated(reference: nn.Module) -> nn.Module:
    model = generated_model(CASE)
    model.load_state_dict(reference.state_dict(), strict=True)
    return model.eval()


def _inputs() -> tuple[Tensor, Tensor, Tensor]:
    """Token ids, a mask with rows padded at the end, and two token types per row."""
    generator = torch.Generator().manual_seed(3)
    ids = torch.randint(1, SMALL["vocab"], (BATCH, SEQ), generator=generator)
    mask = torch.zeros(BATCH, SEQ, dtype=torch.int64)
    types = torch.zeros(BATCH, SEQ, dtype=torch.int64)
    for row, length in enumerate(PADDED):
        mask[row, :length] = 1
        types[row, length // 2 : length] = 1  # sentence B: the second half of the tokens
    ids = ids.masked_fill(mask == 0, 0)
    return ids, mask, types


def _assert_equal(got: tuple[Tensor, ...], want: tuple[Tensor, ...]) -> None:
    assert len(got) == len(want) == 2
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape
        scale = float(b.abs().max())
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5 * scale)


def _outputs(result: object) -> tuple[Tensor, Tensor]:
    return result.last_hidden_state, result.pooler_output  # type: ignore[attr-defined]


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_padded_batch_with_two_token_types_equals_bert_model(attn_implementation: str) -> None:
    reference = _reference(attn_implementation)
    model = _generated(reference)
    ids, mask, types = _inputs()
    with torch.no_grad():
        want = _outputs(reference(input_ids=ids, attention_mask=mask, token_type_ids=types))
        got = model(ids, mask, types)
        _assert_equal(got, want)
        # the inputs reach the outputs: without the mask or the token types they differ
        unmasked = model(ids, token_type_ids=types)
        one_type = model(ids, mask)
    assert not torch.allclose(unmasked[0][1:], got[0][1:], atol=1e-3)
    assert not torch.allclose(one_type[1], got[1], atol=1e-3)
    torch.testing.assert_close(unmasked[0][0], got[0][0])  # row 0 has no padding


def test_optional_inputs_default_as_bert_model_does() -> None:
    reference = _reference("sdpa")
    model = _generated(reference)
    ids, _, _ = _inputs()
    with torch.no_grad():
        _assert_equal(model(ids), _outputs(reference(input_ids=ids)))


def test_padding_is_invisible_to_the_tokens() -> None:
    """Padded keys are masked: other ids at the padded positions change nothing at the
    tokens' positions (nor the pooled first token)."""
    model = _generated(_reference("eager"))
    ids, mask, types = _inputs()
    noise = torch.randint(1, SMALL["vocab"], ids.shape, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        clean = model(ids, mask, types)
        noisy = model(torch.where(mask == 1, ids, noise), mask, types)
    keep = mask.bool()
    torch.testing.assert_close(noisy[0][keep], clean[0][keep])
    torch.testing.assert_close(noisy[1], clean[1])


def test_parameter_counts_agree() -> None:
    reference = _reference("eager")
    model = _generated(reference)
    count = parameter_count(reference)
    assert parameter_count(model) == count == compiled(CASE).profile.parameters


def _profile_json(source: str, tmp_path: Path, seq: int) -> dict[str, object]:
    path = tmp_path / "bert.aur"
    path.write_text(source, encoding="utf-8")
    command = [sys.executable, "-m", "aurane", "profile", "--json", f"--at=seq={seq}", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO)
    (model,) = json.loads(done.stdout)["models"]
    assert isinstance(model, dict)
    return model


def _counted_macs(reference: nn.Module) -> int:
    ids, mask, types = _inputs()
    counter = FlopCounterMode(display=False)
    with counter:
        reference(input_ids=ids, attention_mask=mask, token_type_ids=types)
    return int(counter.get_total_flops()) // (2 * BATCH)


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_profile_macs_equal_flop_counter(attn_implementation: str, tmp_path: Path) -> None:
    profiled = _profile_json(source_of(CASE), tmp_path, SEQ)
    assert profiled["parameters"] == parameter_count(_small_reference("eager"))
    outputs = profiled["outputs"]
    assert isinstance(outputs, list)  # named as BertModel's outputs, in its order
    assert [o["name"] for o in outputs] == ["last_hidden_state", "pooler_output"]
    counted = _counted_macs(_reference(attn_implementation))
    if attn_implementation == "sdpa":  # the fused CPU kernel is invisible to the counter
        counted += SMALL["n_layer"] * 2 * SEQ * SEQ * SMALL["hidden"]
    assert profiled["macs_per_sample"] == counted


def test_generated_code_reads_as_bert() -> None:
    code = compiled(CASE).code
    assert "def forward(self, input_ids, attention_mask=None, token_type_ids=None):" in code
    assert "attention_mask = torch.ones_like(input_ids, dtype=torch.int64)" in code
    assert "token_type_ids = torch.zeros_like(input_ids, dtype=torch.int64)" in code
    assert "q, k, v, attn_mask=keep" in code
    assert "return h, pooler_output" in code


def test_default_program_checks_and_matches_bert_base_structure() -> None:
    path = ZOO / "bert.aur"
    done = subprocess.run(
        [sys.executable, "-m", "aurane", "check", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    reference = FULL.reference  # BertModel(BertConfig()) on the meta device
    with torch.device("meta"):
        want = reference()
    got = generated_model(FULL)
    assert shapes(got.state_dict()) == shapes(want.state_dict())
    count = parameter_count(want)
    assert count == 109_482_240  # BERT-base
    assert parameter_count(got) == count == compiled(FULL).profile.parameters


def test_initialisation_follows_bert_pretrained_model() -> None:
    """Dense and embedding weights N(0, 0.02), biases zero, LayerNorm ones and zeros, as
    ``BertPreTrainedModel._init_weights`` (initializer_range 0.02) sets them."""
    model = generated_model(CASE)
    for name, tensor in model.state_dict().items():
        if name.endswith("LayerNorm.weight"):
            assert bool((tensor == 1).all()), name
        elif name.endswith("bias"):
            assert bool((tensor == 0).all()), name
        elif tensor.numel() >= 1024:  # enough draws to estimate the spread
            assert 0.015 < float(tensor.std()) < 0.025, name
