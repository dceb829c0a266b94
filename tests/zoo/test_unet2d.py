"""``examples/zoo/unet2d.aur`` against diffusers' ``UNet2DModel`` (issue 23 item 5).

The program is diffusers' default ``UNet2DModel()`` on (3, 64, 64) samples: inputs
``sample, timestep`` (one int64 timestep per batch item, an input of shape ``()``), output
``sample``. Numerically it is compared at a small size (a variant of the program's
configurable ``UNet2D`` block: 16 x 16 samples, widths (32, 32, 64, 64), 8 groups) with
``UNet2DModel(sample_size=16, block_out_channels=(32, 32, 64, 64), norm_num_groups=8)``:
the reference state dict loads with ``strict=True`` and, after its 1-D parameters are
perturbed, outputs are equal within ``rtol=1e-5`` (``atol=1e-5 x max|reference|``). At the
default size both are built on the ``meta`` device: state-dict keys and shapes, parameter
counts and MACs (``FlopCounterMode`` total / 2, which on ``meta`` sees the attention
products too) are equal.

MACs on CPU: the counter does not see ``F.scaled_dot_product_attention`` (a fused kernel,
as for the zoo's GPT-2), so the small comparison adds 2 S^2 C per attention layer
(S = pixels, C = channels); with that the figures are equal.
"""

from __future__ import annotations

import subprocess
import sys
import types
from typing import Any

import pytest

torch = pytest.importorskip("torch")
diffusers = pytest.importorskip("diffusers")

from torch import nn  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from aurane.analysis.profile import profile  # noqa: E402
from aurane.compile import compile_detailed  # noqa: E402
from aurane.diagnostics import CompilationError  # noqa: E402
from tests.zoo.harness import ZOO, parameter_count, perturb_constants, shapes  # noqa: E402

PROGRAM = ZOO / "unet2d.aur"
# the configurable network at a small size, as a variant of the program's own block
SMALL = """
model Small = UNet2D((32, 32, 64, 64), down_block_types, up_block_types, groups=8):
    input_shape = {sample: (3, 16, 16), timestep: ()}
    input_dtype = {sample: float32, timestep: int64}
"""
SMALL_REFERENCE: dict[str, Any] = {
    "sample_size": 16,
    "block_out_channels": (32, 32, 64, 64),
    "norm_num_groups": 8,
}


def _compile(text: str, model: str = "UNet2DModel") -> tuple[types.ModuleType, Any]:
    result = compile_detailed(text, validate=True, filename="unet2d.aur")
    module = types.ModuleType("zoo_unet2d")
    exec(compile(result.output, "<zoo unet2d>", "exec"), module.__dict__)
    return module, result.graphs[model]


def _small_source() -> str:
    return PROGRAM.read_text(encoding="utf-8") + SMALL


def _inputs(side: int, batch: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    sample = torch.randn(batch, 3, side, side, generator=generator)
    timestep = torch.randint(0, 1000, (batch,), generator=generator)
    return sample, timestep


def _reference(**config: Any) -> nn.Module:
    from diffusers import UNet2DModel

    return UNet2DModel(**config)


@pytest.fixture(scope="module")
def small() -> tuple[nn.Module, nn.Module, Any]:
    module, graph = _compile(_small_source(), "Small")
    torch.manual_seed(0)
    reference = _reference(**SMALL_REFERENCE)
    perturb_constants(reference)  # norm weights and biases, biases: seeded values
    torch.manual_seed(1)
    generated = module.Small()
    generated.load_state_dict(reference.state_dict(), strict=True)
    return generated.eval(), reference.eval(), graph


def test_small_outputs_equal_diffusers(small: tuple[nn.Module, nn.Module, Any]) -> None:
    generated, reference, _ = small
    sample, timestep = _inputs(16)
    with torch.no_grad():
        expected = reference(sample, timestep).sample
        out = generated(sample, timestep)
    assert out.shape == expected.shape == (3, 3, 16, 16)
    scale = float(expected.abs().max())
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5 * scale)
    # the timestep matters: another one gives another output
    with torch.no_grad():
        other = generated(sample, (timestep + 500) % 1000)
    assert not torch.allclose(other, out, rtol=1e-3, atol=1e-3 * scale)


def test_small_parameters_and_macs(small: tuple[nn.Module, nn.Module, Any]) -> None:
    generated, reference, graph = small
    report = profile(graph)
    assert parameter_count(generated) == parameter_count(reference) == report.parameters
    sample, timestep = _inputs(16)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        reference(sample, timestep)
    seen = int(counter.get_total_flops()) // (2 * sample.shape[0])
    # (pixels, channels) of each attention: down levels 1-3 (two each), the middle (one),
    # up levels 3-1 (three each)
    attention = [(64, 32)] * 2 + [(16, 64)] * 2 + [(4, 64)] * 3 + [(4, 64)] * 3
    attention += [(16, 64)] * 3 + [(64, 32)] * 3
    unseen = sum(2 * pixels * pixels * channels for pixels, channels in attention)
    assert report.macs == seen + unseen


def test_default_program_matches_diffusers_defaults() -> None:
    module, graph = _compile(PROGRAM.read_text(encoding="utf-8"))
    with torch.device("meta"):
        reference = _reference()
        generated = module.UNet2DModel()
        sample = torch.randn(1, 3, 64, 64)
        timestep = torch.zeros(1, dtype=torch.int64)
    assert shapes(generated.state_dict()) == shapes(reference.state_dict())
    report = profile(graph)
    assert parameter_count(generated) == parameter_count(reference) == report.parameters
    assert report.parameters == 274_056_163
    counter = FlopCounterMode(display=False)
    with counter:
        reference(sample, timestep)  # on meta the attention is decomposed: bmm is counted
    assert report.macs == int(counter.get_total_flops()) // 2 == 101_200_031_744


def test_default_program_checks() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "aurane", "check", str(PROGRAM)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout + done.stderr


# -- the language features the program uses ----------------------------------------------

SCALAR_INPUT = """
model Net:
    input_shape = {x: (4,), t: ()}
    input_dtype = {x: float32, t: int64}
    def forward(x, t):
        s = to(unsqueeze(t, 1), "float32")
        return multiply(x, exp(s))
"""


def test_an_input_of_shape_empty_is_one_number_per_batch_item() -> None:
    module, graph = _compile(SCALAR_INPUT, "Net")
    assert [len(value.shape) for value in graph.inputs] == [2, 1]  # (batch, 4), (batch,)
    x = torch.randn(2, 4)
    t = torch.tensor([0, 1])
    out = module.Net()(x, t)
    torch.testing.assert_close(out, x * torch.exp(t[:, None].float()))


def test_a_single_input_of_shape_empty_stays_refused() -> None:
    text = "model Net:\n    input_shape = ()\n    def forward(x):\n        x -> dense(4)\n"
    with pytest.raises(CompilationError, match="S013"):
        compile_detailed(text, filename="net.aur")


BLOCK_VALUED = """
model Down(width):
    def forward(x, temb):
        a = conv2d(x, width, kernel=1) as c0
        b = conv2d(a, width, kernel=1) as c1
        b = add(b, unsqueeze(unsqueeze(temb, 2), 3), broadcast=true)
        return a, b

model Net:
    input_shape = {x: (4, 8, 8), t: (8,)}
    block = Down
    def forward(x, t):
        a, b = block(x, t, 8) as down_blocks.0
        return add(a, b)
"""


def test_a_block_valued_constant_takes_several_tensors_and_keeps_its_name() -> None:
    module, _ = _compile(BLOCK_VALUED, "Net")
    net = module.Net()
    assert sorted(net.state_dict()) == [
        "down_blocks.0.c0.bias",
        "down_blocks.0.c0.weight",
        "down_blocks.0.c1.bias",
        "down_blocks.0.c1.weight",
    ]
    x, t = torch.randn(2, 4, 8, 8), torch.randn(2, 8)
    block = net.down_blocks[0]
    a = block.c0(x)
    expected = a + block.c1(a) + t[:, :, None, None]
    torch.testing.assert_close(net(x, t), expected)


VARIANT = """
model Down(width):
    def forward(x, temb):
        a = conv2d(x, width, kernel=1) as c0
        return add(a, unsqueeze(unsqueeze(temb, 2), 3), broadcast=true)

model Net(width):
    def forward(x, t):
        return Down(x, t, width) as down

model Wide = Net(8):
    input_shape = {x: (4, 8, 8), t: (8,)}
"""


def test_a_variant_of_a_block_with_several_inputs_is_lowered() -> None:
    module, graph = _compile(VARIANT, "Wide")
    assert [len(value.shape) for value in graph.inputs] == [4, 2]
    net = module.Wide()
    x, t = torch.randn(2, 4, 8, 8), torch.randn(2, 8)
    torch.testing.assert_close(net(x, t), net.down.c0(x) + t[:, :, None, None])


# -- the configurable network at another size: one class per block, rolled ----------------

CLASS = r"^class (\w+)\("


def _generated(text: str, name: str, roll: bool) -> tuple[types.ModuleType, str, list[str]]:
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(text, filename="unet2d.aur")
    generator = TorchCodeGenerator(program, graphs, roll_networks=roll)
    code = generator.generate()
    module = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module, code, generator.roll_fallbacks


def test_small_variant_has_one_class_per_block_and_rolls() -> None:
    """Issue 24 item 3: at widths (32, 32, 64, 64) AttnDownBlock2D is called with equal
    input and output widths (its first ResnetBlock2D skips conv_shortcut) and with
    different ones; it is one class (a residual's width is the block's ``out``, whichever
    branch a call took), so Small rolls into UNet2D beside UNet2DModel: the sinusoid's
    width is ``2 * half``, and the forward reads ``half`` (112 in one variant, 16 in the
    other) from the module."""
    import re

    _, code, fallbacks = _generated(_small_source(), "unet_small_rolled", True)
    assert fallbacks == []
    classes = re.findall(CLASS, code, re.MULTILINE)
    assert classes == [
        "ResnetBlock2D",
        "Attention",
        "DownBlock2D",
        "AttnDownBlock2D",
        "UNetMidBlock2D",
        "UpBlock2D",
        "AttnUpBlock2D",
        "UNet2D",
        "UNet2DModel",
        "Small",
    ]
    assert "class Small(UNet2D):\n" in code
    assert "ResnetBlock2D(width, temb_features, width, groups=groups)" in code
    assert 'add_module("linear_1", nn.Linear(2 * half, 4 * ch[0]))' in code
    assert "        self.half_ = half\n" in code
    assert "freq = freq / self.half_\n" in code
    # written out (roll_networks=False), the blocks are one class each too
    _, flat, _ = _generated(_small_source(), "unet_small_flat", False)
    assert "AttnDownBlock2D_2" not in flat
    assert "class Small(nn.Module):" in flat


def test_small_rolled_loads_the_unrolled_weights() -> None:
    """The rolled Small builds the unrolled class's modules in the same order (equal keys
    and initial weights under one seed), strict-loads its state dict and computes the
    same output."""
    rolled, _, _ = _generated(_small_source(), "unet_small_rolled", True)
    unrolled, _, _ = _generated(_small_source(), "unet_small_flat", False)
    torch.manual_seed(0)
    mine = rolled.Small()
    torch.manual_seed(0)
    theirs = unrolled.Small().eval()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert torch.equal(mine.state_dict()[key], value), key
    torch.manual_seed(1)
    fresh = rolled.Small().eval()
    fresh.load_state_dict(theirs.state_dict(), strict=True)
    sample, timestep = _inputs(16, batch=2)
    with torch.no_grad():
        expected = theirs(sample, timestep)
        torch.testing.assert_close(fresh(sample, timestep), expected)
    assert fresh.half_ == 16
