"""MaxViT-T (issue 23 item 5): ``examples/zoo/maxvit_t.aur`` against torchvision's
``MaxVit`` (``weights=None``).

At a small configuration (the program's top-level constants rewritten: 128x128 input,
partition 4, narrow stages of 1-2 layers, 10 classes; torchvision's ``MaxVit`` built with
the same settings), the shipped program's own code path is compared numerically: the
generated relative position index buffers equal torchvision's before anything is loaded,
the reference ``state_dict()`` loads with ``strict=True``, the reference's weights are given
unit gain (MaxVit's std 0.02 leaves the attention softmax near uniform), every 1-D tensor
(norm weights and biases, biases, running statistics) is perturbed with seeded values and
the eval-mode outputs are equal (``rtol=1e-5``, ``atol=1e-5 x max|reference|``); the
parameter counts of the generated module, the reference and ``aurane profile`` agree, and
``aurane profile`` MACs equal ``FlopCounterMode`` total / 2 (the counter sees every product:
convolutions, linears and the attention's einsums as ``bmm``).

At the default configuration (``maxvit_t()``, 224x224): ``aurane check`` passes, and on the
``meta`` device (no memory, no arithmetic) the state-dict keys and shapes, the parameter
count (30,919,624, torchvision's ``num_params``) and the MACs (5.558 G, torchvision's
``_ops`` of 5.558 GFLOPS counts multiply-accumulates) agree with ``aurane profile --json``.
"""

from __future__ import annotations

import json
import re
import types
from functools import cache
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from torch import nn  # noqa: E402

from aurane.analysis.profile import profile  # noqa: E402
from aurane.compile import compile_detailed  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from tests.zoo.harness import ZOO, counted_forward, parameter_count, shapes  # noqa: E402

FILE = ZOO / "maxvit_t.aur"
MODEL = "MaxVit_T"

# the program's constants at the small size, and torchvision's MaxVit at the same size
SMALL = {
    "image": 128,
    "classes": 10,
    "stem_width": 8,
    "widths": [8, 16, 16, 32],
    "depths": [1, 2, 1, 1],
    "head_dim": 8,
    "partition": 4,
}


def _small_reference() -> nn.Module:
    from torchvision.models.maxvit import MaxVit

    return MaxVit(
        input_size=(SMALL["image"], SMALL["image"]),
        stem_channels=SMALL["stem_width"],
        partition_size=SMALL["partition"],
        block_channels=SMALL["widths"],
        block_layers=SMALL["depths"],
        head_dim=SMALL["head_dim"],
        stochastic_depth_prob=0.2,
        num_classes=SMALL["classes"],
    )


def _source(constants: dict[str, Any]) -> str:
    text = FILE.read_text(encoding="utf-8")
    for name, value in constants.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.MULTILINE)
        assert count == 1, name
    return text


@cache
def _compiled(small: bool) -> tuple[types.ModuleType, Any]:
    text = _source(SMALL if small else {})
    result = compile_detailed(text, validate=True, filename=FILE.name)
    module = types.ModuleType("zoo_maxvit_t")
    exec(compile(result.output, f"<zoo {FILE.name}>", "exec"), module.__dict__)
    return module, profile(result.graphs[MODEL])


@torch.no_grad()
def _rescale_weights(model: nn.Module) -> None:
    """Weights of unit gain (std 1 / sqrt(fan in)) and a bias table of std 1: with
    MaxVit's std 0.02 initialisation the attention scores are near zero, the softmax near
    uniform, and a wrong score scale or position bias would pass unnoticed."""
    generator = torch.Generator().manual_seed(4)
    for name, tensor in model.named_parameters():
        if name.endswith("relative_position_bias_table"):
            tensor.copy_(torch.randn(tensor.shape, generator=generator))
        elif tensor.ndim > 1:
            fan_in = tensor[0].numel()
            tensor.copy_(torch.randn(tensor.shape, generator=generator) / fan_in**0.5)


@torch.no_grad()
def _perturb_1d(model: nn.Module) -> None:
    """Seeded values for every 1-D floating tensor: norm weights and biases, biases (all
    zero-initialised in MaxVit) and batch-norm running statistics."""
    generator = torch.Generator().manual_seed(2)
    for name, tensor in model.state_dict(keep_vars=True).items():
        if tensor.is_floating_point() and tensor.ndim == 1:
            noise = torch.randn(tensor.shape, generator=generator)
            if name.endswith("running_var"):
                tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
            else:
                tensor.add_(0.1 * noise)


def test_small_configuration_equals_torchvision() -> None:
    module, prof = _compiled(small=True)
    torch.manual_seed(0)
    reference = _small_reference()
    _rescale_weights(reference)
    _perturb_1d(reference)
    reference.eval()
    torch.manual_seed(1)
    generated = getattr(module, MODEL)()
    # the generated buffers are computed in __init__: equal before anything is loaded
    own, theirs = generated.state_dict(), reference.state_dict()
    indices = [key for key in theirs if key.endswith("relative_position_index")]
    assert len(indices) == 2 * sum(SMALL["depths"])  # window and grid attention per layer
    for key in indices:
        assert own[key].dtype == torch.int64
        assert torch.equal(own[key], theirs[key]), key
    generated.load_state_dict(theirs, strict=True)
    generated.eval()
    assert shapes(generated.state_dict()) == shapes(theirs)
    assert parameter_count(generated) == parameter_count(reference) == prof.parameters
    x = torch.randn(
        2, 3, SMALL["image"], SMALL["image"], generator=torch.Generator().manual_seed(3)
    )
    expected, macs = counted_forward(reference, x)
    actual = generated(x).detach()
    scale = float(expected.abs().max())
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5 * max(scale, 1.0))
    assert prof.macs == macs  # every product is seen by the counter (einsum runs as bmm)


def test_small_configuration_drops_paths_in_training_only() -> None:
    """Stochastic depth: identity in eval (above); in training the generated layers draw
    torchvision's probabilities, linear from 0 to 0.2 over the layers of all stages."""
    module, _ = _compiled(small=True)
    generated = getattr(module, MODEL)()
    reference = _small_reference()

    def probabilities(model: nn.Module, kind: str) -> list[set[float]]:
        """Per MaxViT layer, the probabilities of its stochastic-depth modules (torchvision
        shares one per attention layer, the program has one per residual; torchvision's
        MBConv has no module for p = 0)."""
        return [
            {m.p for m in layer.modules() if type(m).__name__ == kind} - {0.0}
            for block in model.blocks  # type: ignore[union-attr]
            for layer in block.layers
        ]

    expected = probabilities(reference, "StochasticDepth")
    assert probabilities(generated, "DropPath") == expected
    assert expected == [set(), {0.05}, {0.1}, {0.15000000000000002}, {0.2}]  # np.linspace


def test_default_program_checks_and_matches_maxvit_t_on_meta() -> None:
    checked = run_cli("check", str(FILE))
    assert checked.returncode == 0, checked.stderr
    profiled = run_cli("profile", "--json", "--model", MODEL, str(FILE))
    assert profiled.returncode == 0, profiled.stderr
    (report,) = json.loads(profiled.stdout)["models"]
    module, prof = _compiled(small=False)
    with torch.device("meta"):
        reference = torchvision.models.maxvit_t(weights=None)
        generated = getattr(module, MODEL)()
    assert shapes(generated.state_dict()) == shapes(reference.state_dict())
    generated.load_state_dict(reference.state_dict(), strict=True)
    assert parameter_count(generated) == parameter_count(reference) == 30_919_624
    assert prof.parameters == 30_919_624 == report["parameters"]
    with torch.device("meta"):
        _, macs = counted_forward(reference.eval(), torch.empty(1, 3, 224, 224))
    assert prof.macs == macs == report["macs_per_sample"] == 5_558_046_720
