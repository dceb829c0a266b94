"""The generalisation claims of docs/zoo.md: the characteristic block of other architectures
of the zoo's families, written with the same constructs, loads the torchvision block's
``state_dict`` (strict) and computes the same outputs in eval mode."""

from __future__ import annotations

import types
from collections.abc import Callable

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from torch import nn  # noqa: E402

from aurane.compile import compile_source  # noqa: E402
from tests.zoo.harness import perturb_constants  # noqa: E402

tv = torchvision.models

SHUFFLENET_UNIT = """
use torch

# ShuffleNetV2 stride-1 unit: split the channels, transform one half, shuffle.
model ShuffleUnit(c):
    def forward(x):
        a, b = chunk(x, 2, dim=1)
        h = (
            b -> conv2d(c, kernel=1, bias=false)
              -> batchnorm().relu
              -> conv2d(c, kernel=3, padding=1, groups=c, bias=false)
              -> batchnorm()
              -> conv2d(c, kernel=1, bias=false)
              -> batchnorm().relu
        ) as branch2
        h = concat(a, h, dim=1)
        h = reshape(h, 2, c, 7, 7)
        h = transpose(h, 1, 2)
        h = reshape(h, 2 * c, 7, 7)

model Net:
    input_shape = (116, 7, 7)
    def forward(x):
        x -> ShuffleUnit(58) as unit
"""

SQUEEZENET_FIRE = """
use torch

model Fire(squeeze, expand):
    def forward(x):
        s = conv2d(x, squeeze, kernel=1).relu as squeeze
        a = conv2d(s, expand, kernel=1).relu as expand1x1
        b = conv2d(s, expand, kernel=3, padding=1).relu as expand3x3
        return concat(a, b, dim=1)

model Net:
    input_shape = (64, 9, 9)
    def forward(x):
        x -> Fire(16, 64) as unit
"""

DENSENET_LAYER = """
use torch

# DenseNet's layer, with the block's concatenation of the new features.
model DenseLayer:
    def forward(x):
        h = x -> batchnorm().relu as norm1
              -> conv2d(128, kernel=1, bias=false) as conv1
              -> batchnorm().relu as norm2
              -> conv2d(32, kernel=3, padding=1, bias=false) as conv2
        return concat(x, h, dim=1)

model Net:
    input_shape = (64, 8, 8)
    def forward(x):
        x -> DenseLayer() as unit
"""

RESNEXT_BOTTLENECK = """
use torch

model Bottleneck(width, out, groups=32):
    def forward(x):
        h = x -> conv2d(width, kernel=1, bias=false) as conv1
              -> batchnorm().relu as bn1
              -> conv2d(width, kernel=3, padding=1, groups=groups, bias=false) as conv2
              -> batchnorm().relu as bn2
              -> conv2d(out, kernel=1, bias=false) as conv3
              -> batchnorm() as bn3
        return add(h, x).relu

model Net:
    input_shape = (256, 8, 8)
    def forward(x):
        x -> Bottleneck(128, 256) as unit
"""

MOBILENET_V3_BLOCK = """
use torch

model SqueezeExcitation(channels, squeeze):
    def forward(x):
        gate = x -> adaptive_avg_pool(1)
                 -> conv2d(squeeze, kernel=1).relu as fc1
                 -> conv2d(channels, kernel=1).hardsigmoid as fc2
        return multiply(x, gate)

model InvertedResidual(channels, out):
    def forward(x):
        h = (
            x -> conv2d(channels, kernel=3, stride=2, padding=1, groups=channels, bias=false)
              -> batchnorm(eps=0.001, momentum=0.01).relu
        ) as block.0
        h = SqueezeExcitation(h, channels, 8) as block.1
        h = (h -> conv2d(out, kernel=1, bias=false) -> batchnorm(eps=0.001, momentum=0.01)) as block.2

model Net:
    input_shape = (16, 16, 16)
    def forward(x):
        x -> InvertedResidual(16, 16) as unit
"""


CASES: dict[str, tuple[str, Callable[[], nn.Module], tuple[int, ...]]] = {
    "shufflenet_v2_unit": (
        SHUFFLENET_UNIT,
        lambda: tv.shufflenet_v2_x1_0(weights=None).stage2[1],
        (2, 116, 7, 7),
    ),
    "squeezenet_fire": (
        SQUEEZENET_FIRE,
        lambda: tv.squeezenet1_1(weights=None).features[3],
        (2, 64, 9, 9),
    ),
    "densenet_layer": (
        DENSENET_LAYER,
        lambda: tv.densenet121(weights=None).features.denseblock1.denselayer1,
        (2, 64, 8, 8),
    ),
    "resnext_bottleneck": (
        RESNEXT_BOTTLENECK,
        lambda: tv.resnext50_32x4d(weights=None).layer1[1],
        (2, 256, 8, 8),
    ),
    "mobilenet_v3_block": (
        MOBILENET_V3_BLOCK,
        lambda: tv.mobilenet_v3_small(weights=None).features[1],
        (2, 16, 16, 16),
    ),
}


CONVNEXT_BLOCK = """
use torch

# ConvNeXt's block (all of ConvNeXt-T but its channel-first LayerNorm2d, see docs/zoo.md).
model CNBlock(dim, p=0.0):
    def forward(x):
        h = conv2d(x, dim, kernel=7, padding=3, groups=dim) as block.0
        h = permute(h, 0, 2, 3, 1)  # torchvision's block.1 (a Permute module)
        h = layer_norm(h, eps=1e-6) as block.2
        h = dense(h, 4 * dim).gelu as block.3
        h = dense(h, dim) as block.5
        h = permute(h, 0, 3, 1, 2)
        scale = parameter((dim, 1, 1), init="full", value=1e-6, batch_axis=false) as layer_scale
        h = drop_path(multiply(scale, h), p)
        return add(x, h)

model Net:
    input_shape = (96, 8, 8)
    def forward(x):
        x -> CNBlock(96, p=0.1) as unit
"""
CASES["convnext_block"] = (
    CONVNEXT_BLOCK,
    lambda: tv.convnext_tiny(weights=None).features[1][0],
    (2, 96, 8, 8),
)


def _load(source: str) -> nn.Module:
    module = types.ModuleType("family")
    exec(compile(compile_source(source, validate=True), "<family>", "exec"), module.__dict__)
    torch.manual_seed(1)
    return module.Net().eval()  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(CASES))
def test_family_block_equals_torchvision(name: str) -> None:
    source, build, shape = CASES[name]
    torch.manual_seed(0)
    reference = build().eval()
    perturb_constants(reference)
    generated = _load(source)
    generated.get_submodule("unit").load_state_dict(reference.state_dict(), strict=True)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = reference(x)
        if name == "densenet_layer":  # torchvision's block concatenates the new features
            expected = torch.cat([x, expected], dim=1)
        actual = generated(x)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)
