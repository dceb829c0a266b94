"""The zoo (issue 10): every ``examples/zoo`` program against its reference implementation.

For each case (``CASES``): the program compiles (validated); the reference's ``state_dict``
loads into the generated module with ``strict=True``; in eval mode the outputs on a seeded
input are equal (``rtol=1e-5``); the parameter counts of the generated module, the
reference and ``aurane profile`` are equal; ``aurane profile`` MACs equal
``FlopCounterMode`` total / 2 run on the reference, plus what that counter cannot see.

Deliberate differences between the profile and FlopCounterMode (also in docs/zoo.md):

| model    | counter misses                               | added here as ``unseen_macs``  |
| -------- | -------------------------------------------- | ------------------------------ |
| vit_b_16 | nn.MultiheadAttention's fused CPU attention   | 12 layers x 2 S^2 D, S=197     |
| gpt2     | F.scaled_dot_product_attention (fused on CPU) | layers x 2 T^2 D               |

The Llama twin writes its attention out (``matmul``/``softmax``), so the counter sees it.
The biggest models run once, at their default input size, batch 1; GPT-2 small and the
Llama decoder are compared numerically at a small size (constants rewritten in the program
text) and structurally at full size on the ``meta`` device.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from torch import Tensor, nn  # noqa: E402

from tests.zoo import twins  # noqa: E402
from tests.zoo.harness import (  # noqa: E402
    ZooCase,
    compiled,
    counted_forward,
    generated_model,
    parameter_count,
    reference_model,
    sample_input,
    shapes,
)

tv = torchvision.models

# GPT-2 small is compared at this size (the program's constants are rewritten).
GPT_SMALL = {"vocab": 97, "block": 16, "n_layer": 2, "n_head": 4, "n_embd": 64}
LLAMA_SMALL = {
    "vocab": 101,
    "seq": 12,
    "n_layer": 2,
    "n_embd": 64,
    "n_head": 8,
    "n_kv_head": 2,
    "hidden": 176,
}


def _attention_macs(layers: int, seq: int, width: int) -> int:
    """Score and value products, softmax(QK^T)V: 2 S^2 D per layer (all heads)."""
    return layers * 2 * seq * seq * width


def _constants(values: dict[str, int]) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(value)) for name, value in values.items())


def _gpt_small() -> nn.Module:
    g = GPT_SMALL
    config = twins.GPTConfig(g["block"], g["vocab"], g["n_layer"], g["n_head"], g["n_embd"])
    return twins.GPT(config)


def _llama(values: dict[str, int] | None = None) -> nn.Module:
    if values is None:
        return twins.LlamaForCausalLM(twins.LlamaConfig(**LLAMA_FULL))
    return twins.LlamaForCausalLM(
        twins.LlamaConfig(
            vocab_size=values["vocab"],
            hidden_size=values["n_embd"],
            intermediate_size=values["hidden"],
            num_hidden_layers=values["n_layer"],
            num_attention_heads=values["n_head"],
            num_key_value_heads=values["n_kv_head"],
            rms_norm_eps=1e-5,
        )
    )


# The zoo program's published size (examples/zoo/llama.aur): a 1.1B TinyLlama-shaped decoder.
LLAMA_FULL: dict[str, Any] = {
    "vocab_size": 32000,
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 22,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-5,
}

IMAGE = (1, 3, 224, 224)  # the default input size: the biggest models, once
SMALL_IMAGE = (2, 3, 64, 64)  # the others (their programs' `image` constant rewritten)

CASES = [
    ZooCase(
        "resnet18_64px",
        "resnet18",
        "ResNet18",
        lambda: tv.resnet18(weights=None),
        SMALL_IMAGE,
        constants=(("image", "64"),),
    ),
    ZooCase("resnet50", "resnet50", "ResNet50", lambda: tv.resnet50(weights=None), IMAGE),
    ZooCase(
        "mobilenet_v2_64px",
        "mobilenet_v2",
        "MobileNetV2",
        lambda: tv.mobilenet_v2(weights=None),
        SMALL_IMAGE,
        constants=(("image", "64"),),
    ),
    ZooCase(
        "vit_b_16",
        "vit_b_16",
        "ViT_B_16",
        lambda: tv.vit_b_16(weights=None),
        IMAGE,
        unseen_macs=lambda: _attention_macs(12, 197, 768),
    ),
    ZooCase(
        "convnext_tiny",
        "convnext_tiny",
        "ConvNeXtTiny",
        lambda: tv.convnext_tiny(weights=None),
        IMAGE,
    ),
    ZooCase(
        "efficientnet_b0",
        "efficientnet_b0",
        "EfficientNetB0",
        lambda: tv.efficientnet_b0(weights=None),
        IMAGE,
    ),
    ZooCase(
        "gpt2_small_config",
        "gpt2",
        "GPT",
        _gpt_small,
        (2, GPT_SMALL["block"]),
        integer_input=GPT_SMALL["vocab"],
        constants=_constants(GPT_SMALL),
        unseen_macs=lambda: _attention_macs(
            GPT_SMALL["n_layer"], GPT_SMALL["block"], GPT_SMALL["n_embd"]
        ),
    ),
    ZooCase(
        "gpt2_full_size",
        "gpt2",
        "GPT",
        lambda: twins.GPT(twins.GPTConfig()),
        (1, 1024),
        integer_input=50257,
        full_size=True,
    ),
    ZooCase(
        "llama_small_config",
        "llama",
        "Llama",
        lambda: _llama(LLAMA_SMALL),
        (2, LLAMA_SMALL["seq"]),
        integer_input=LLAMA_SMALL["vocab"],
        constants=_constants(LLAMA_SMALL),
    ),
    ZooCase(
        "llama_full_size",
        "llama",
        "Llama",
        lambda: _llama(),
        (1, 2048),
        integer_input=32000,
        full_size=True,
    ),
    ZooCase(
        "unet",
        "unet",
        "UNet",
        lambda: twins.UNet(3, 2, base=16),
        (2, 3, 64, 64),
        constants=(("base", "16"), ("image", "64")),
    ),
    ZooCase("dcgan_generator", "dcgan", "Generator", twins.Generator, (2, 100, 1, 1)),
    ZooCase("dcgan_discriminator", "dcgan", "Discriminator", twins.Discriminator, (2, 3, 64, 64)),
]

NUMERIC = [case for case in CASES if not case.full_size]


@pytest.fixture(scope="module", params=CASES, ids=[case.id for case in CASES])
def case(request: pytest.FixtureRequest) -> ZooCase:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def pair(case: ZooCase) -> tuple[nn.Module, nn.Module]:
    """(generated, reference); the reference's state is loaded into the generated module."""
    reference = reference_model(case)
    generated = generated_model(case)
    # on the meta device too: copying is a no-op there, the keys and shapes are checked, and
    # tied weights stay one tensor (assign=True would untie them)
    generated.load_state_dict(reference.state_dict(), strict=True)
    return generated.eval(), reference.eval()


def test_program_compiles(case: ZooCase) -> None:
    assert f"class {case.model}(nn.Module):" in compiled(case).code


def test_state_dict_keys_and_shapes_equal(case: ZooCase, pair: tuple[nn.Module, nn.Module]) -> None:
    generated, reference = pair  # the fixture already loaded it with strict=True
    assert shapes(generated.state_dict()) == shapes(reference.state_dict())


def test_parameter_counts_equal(case: ZooCase, pair: tuple[nn.Module, nn.Module]) -> None:
    generated, reference = pair
    expected = parameter_count(reference)
    in_module, in_profile = parameter_count(generated), compiled(case).profile.parameters
    assert in_module == expected, "the generated module's parameters"
    assert in_profile == expected, "aurane profile's parameters (tied weights count once)"


@pytest.fixture(scope="module")
def reference_run(case: ZooCase, pair: tuple[nn.Module, nn.Module]) -> tuple[Tensor, int]:
    """The reference's output on the sample input and FlopCounterMode's MACs per sample."""
    if case.full_size:
        pytest.skip("structure only (meta device): the small configuration computes")
    return counted_forward(pair[1], sample_input(case))


def test_outputs_equal_in_eval_mode(
    case: ZooCase, pair: tuple[nn.Module, nn.Module], reference_run: tuple[Tensor, int]
) -> None:
    expected, _ = reference_run
    actual = pair[0](sample_input(case)).detach()  # autograd on, as the reference ran
    scale = float(expected.abs().max())
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5 * max(scale, 1.0))


def test_profile_macs_equal_flop_counter(case: ZooCase, reference_run: tuple[Tensor, int]) -> None:
    _, macs = reference_run
    profiled = compiled(case).profile.macs
    assert profiled == macs + case.unseen_macs()
