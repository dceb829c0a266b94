"""examples/zoo/clip.aur against Hugging Face ``CLIPModel`` (issue 23 item 5).

The shipped program is at ``CLIPConfig()``'s defaults; it is compared numerically at a small
size (its top-level constants rewritten, the same code path) with a ``CLIPModel`` built from
config objects (no download): the reference's ``state_dict`` loads with ``strict=True``, and
after its 1-D parameters (norms, biases, the class embedding, the logit scale) are perturbed,
``logits_per_image`` and ``logits_per_text`` are equal within ``rtol=1e-5`` on texts whose
end-of-text token sits at a different position in each row (one row holds it twice, one not
at all), with right padding in the attention mask. At the defaults: ``aurane check`` and the
parameter count (the reference on the ``meta`` device).

MACs (docs/zoo.md): ``aurane profile`` counts per sample ``macs(B)``, a formula in the batch
``B`` (``cross_batch_matmul`` scores each sample against the batch). FlopCounterMode's total
/ 2 / B on the reference differs by what that counter does not see and one product:

- the attention products of every layer, 2 S^2 D (F.scaled_dot_product_attention runs fused
  on the CPU, as the zoo notes for GPT-2 and ViT);
- the program computes ``logits_per_image`` with a second ``cross_batch_matmul`` (B x P per
  sample) where HF transposes ``logits_per_text``: the batch axis cannot be transposed.
"""

from __future__ import annotations

import re
import types
from functools import cache
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from torch import nn  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from aurane.analysis.profile import profile  # noqa: E402
from aurane.compile import compile_detailed  # noqa: E402
from aurane.semantics.sizes import evaluate  # noqa: E402
from aurane.stages import CompilationError  # noqa: E402
from tests.zoo.harness import ZOO, parameter_count, shapes  # noqa: E402

SMALL = {
    "vocab": 99,
    "seq": 12,
    "text_width": 32,
    "text_heads": 4,
    "text_hidden": 37,
    "text_layers": 2,
    "eos": 98,
    "image": 32,
    "patch": 8,
    "vision_width": 48,
    "vision_heads": 4,
    "vision_hidden": 64,
    "vision_layers": 2,
    "projection": 24,
}
BATCH = 4


def _config(small: bool) -> Any:
    if not small:
        return transformers.CLIPConfig()
    s = SMALL
    text = {
        "vocab_size": s["vocab"],
        "max_position_embeddings": s["seq"],
        "hidden_size": s["text_width"],
        "num_attention_heads": s["text_heads"],
        "intermediate_size": s["text_hidden"],
        "num_hidden_layers": s["text_layers"],
        "eos_token_id": s["eos"],
        "bos_token_id": s["eos"] - 1,
        "pad_token_id": 1,
    }
    vision = {
        "image_size": s["image"],
        "patch_size": s["patch"],
        "hidden_size": s["vision_width"],
        "num_attention_heads": s["vision_heads"],
        "intermediate_size": s["vision_hidden"],
        "num_hidden_layers": s["vision_layers"],
    }
    return transformers.CLIPConfig(
        text_config=text, vision_config=vision, projection_dim=s["projection"]
    )


@cache
def _compiled(small: bool) -> tuple[types.ModuleType, Any]:
    text = (ZOO / "clip.aur").read_text(encoding="utf-8")
    for name, value in SMALL.items() if small else ():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.MULTILINE)
        assert count == 1, name
    result = compile_detailed(text, validate=True, filename="clip.aur")
    module = types.ModuleType("zoo_clip")
    exec(compile(result.output, "<zoo clip>", "exec"), module.__dict__)
    return module, result.graphs["CLIP"]


@torch.no_grad()
def _perturb_one_dimensional(model: nn.Module) -> None:
    generator = torch.Generator().manual_seed(2)
    for parameter in model.parameters():
        if parameter.dim() <= 1:  # norms, biases, class embedding, logit scale
            parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))


@pytest.fixture(scope="module")
def pair() -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(0)
    reference = transformers.CLIPModel(_config(small=True))
    _perturb_one_dimensional(reference)
    generated = _compiled(small=True)[0].CLIP()
    generated.load_state_dict(reference.state_dict(), strict=True)
    return generated.eval(), reference.eval()


def _inputs() -> tuple[Any, Any, Any]:
    """Texts with the end-of-text token at 5, 11 (no padding), 3 and nowhere, padded on the
        right after it (causal layers never let the end-of-text token see that padding); row 0
    holds a second one later (the first counts) and a masked position before the first."""
    s = SMALL
    generator = torch.Generator().manual_seed(3)
    ids = torch.randint(2, s["eos"] - 1, (BATCH, s["seq"]), generator=generator)
    mask = torch.ones(BATCH, s["seq"], dtype=torch.int64)
    for row, (eos, length) in enumerate(((5, 8), (11, 12), (3, 4), (None, 10))):
        if eos is not None:
            ids[row, eos] = s["eos"]
        ids[row, length:] = 1
        mask[row, length:] = 0
    ids[0, 7] = s["eos"]
    mask[0, 2] = 0  # a hole before the end-of-text token: the one padding the pooling sees
    pixels = torch.randn(BATCH, 3, s["image"], s["image"], generator=generator)
    return ids, pixels, mask


def _assert_close(actual: Any, expected: Any) -> None:
    scale = float(expected.abs().max())
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5 * max(scale, 1.0))


def test_state_dict_keys_and_shapes_equal(pair: tuple[nn.Module, nn.Module]) -> None:
    generated, reference = pair  # loaded with strict=True by the fixture
    assert shapes(generated.state_dict()) == shapes(reference.state_dict())


def test_logits_equal_with_padding_and_eos_anywhere(pair: tuple[nn.Module, nn.Module]) -> None:
    generated, reference = pair
    ids, pixels, mask = _inputs()
    with torch.no_grad():
        expected = reference(input_ids=ids, pixel_values=pixels, attention_mask=mask)
        image, text = generated(ids, pixels, mask)
    _assert_close(image, expected.logits_per_image)
    _assert_close(text, expected.logits_per_text)
    assert image.shape == (BATCH, BATCH)
    # the mask matters: without it row 0 scores differently
    with torch.no_grad():
        unmasked = reference(input_ids=ids, pixel_values=pixels).logits_per_text
        default = generated(ids, pixels)[1]  # attention_mask defaults to ones
    _assert_close(default, unmasked)
    assert not torch.allclose(unmasked, text, rtol=1e-3)


def test_parameter_counts_equal(pair: tuple[nn.Module, nn.Module]) -> None:
    generated, reference = pair
    expected = parameter_count(reference)
    assert parameter_count(generated) == expected
    assert profile(_compiled(small=True)[1]).parameters == expected


def test_profile_macs_against_flop_counter(pair: tuple[nn.Module, nn.Module]) -> None:
    _, reference = pair
    ids, pixels, mask = _inputs()
    counter = FlopCounterMode(display=False)
    with counter:  # autograd on: the path training takes
        reference(input_ids=ids, pixel_values=pixels, attention_mask=mask)
    counted = int(counter.get_total_flops()) // (2 * BATCH)
    s = SMALL
    tokens = (s["image"] // s["patch"]) ** 2 + 1
    unseen = s["text_layers"] * 2 * s["seq"] ** 2 * s["text_width"]
    unseen += s["vision_layers"] * 2 * tokens**2 * s["vision_width"]
    second_product = BATCH * s["projection"]  # logits_per_image computed, not transposed
    macs = evaluate(profile(_compiled(small=True)[1]).macs, {"batch": BATCH})
    assert macs == counted + unseen + second_product


def test_shipped_program_at_defaults_checks_and_counts_parameters() -> None:
    module, graph = _compiled(small=False)
    with torch.device("meta"):
        reference = transformers.CLIPModel(_config(small=False))
        generated = module.CLIP()
    expected = parameter_count(reference)
    assert expected == 151_277_313
    assert parameter_count(generated) == expected
    assert profile(graph).parameters == expected
    assert shapes(generated.state_dict()) == shapes(reference.state_dict())


def test_zero_dimensional_parameter_needs_batch_axis_false() -> None:
    source = (
        "model M:\n    input_shape = (4,)\n    def forward(x):\n"
        "        s = parameter(())\n        return multiply(x, unsqueeze(exp(s), 1))\n"
    )
    with pytest.raises(CompilationError) as error:
        compile_detailed(source)
    assert [d.code for d in error.value.diagnostics] == ["S004"]


def test_exports_with_a_dynamic_batch(pair: tuple[nn.Module, nn.Module]) -> None:
    """torch.export keeps the batch dynamic (the logits are (batch, batch)): traced at 2,
    run at 4. (``torch.take_along_dim`` would pin the batch; the pooling uses ``gather``.)"""
    generated, _ = pair
    ids, pixels, mask = _inputs()
    batch = torch.export.Dim("batch")
    exported = torch.export.export(
        generated, (ids[:2], pixels[:2], mask[:2]), dynamic_shapes=({0: batch},) * 3
    )
    with torch.no_grad():
        expected = generated(ids, pixels, mask)
        actual = exported.module()(ids, pixels, mask)
    for a, e in zip(actual, expected, strict=True):
        _assert_close(a, e)
