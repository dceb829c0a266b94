"""Issue 24 item 2: names. Quoted parts, ``*`` (the next index), repeats that start at an
index or continue a container, splicing a block's layers, parameters under numbered
containers and ``tie=`` between any layers with equal weights; checked against
torchvision's own builders where one exists (strict ``load_state_dict``, equal outputs)."""

from __future__ import annotations

import textwrap

import pytest
import torch
from torch import nn
from torchvision.models.vgg import make_layers
from torchvision.ops.misc import Conv2dNormActivation

from aurane.verify import verify_text
from tests.backends.torch.util import generate, load
from tests.helpers import front


def build(source: str, name: str = "Net") -> nn.Module:
    text = textwrap.dedent(source)
    (report,) = verify_text(text, "t.aur", name)
    assert report.ok, report.diagnostics
    _, _, code = generate(text)
    module: nn.Module = getattr(load(code), name)()
    return module


def errors(source: str) -> list[tuple[str, int, int, str]]:
    fe = front(source)
    return [(d.code, d.span.line, d.span.column, d.message) for d in fe.diagnostics if d.is_error]


def same_function(ours: nn.Module, theirs: nn.Module, shape: tuple[int, ...]) -> None:
    theirs.load_state_dict(ours.state_dict(), strict=True)
    ours.eval()
    theirs.eval()
    x = torch.randn(2, *shape)
    torch.testing.assert_close(ours(x), theirs(x), atol=1e-5, rtol=1e-5)


VGG = """
cfg = [8, "M", 16, 16, "M"]

model Features(batch_norm: bool):
    def forward(x):
        for v in cfg:
            if v == "M":
                x -> maxpool(2, stride=2) as features.*
            else:
                x -> conv2d(v, kernel=3, padding=1) as features.*
                if batch_norm:
                    x -> batchnorm() as features.*
                x -> relu() as features.*
        return x

model Net = Features(true):
    input_shape = (3, 16, 16)
"""


def test_star_appends_like_torchvisions_make_layers() -> None:
    ours = build(VGG)
    theirs = nn.Module()
    theirs.features = make_layers([8, "M", 16, 16, "M"], batch_norm=True)
    theirs.forward = lambda x: theirs.features(x)  # type: ignore[method-assign]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    same_function(ours, theirs, (3, 16, 16))


def test_splice_puts_a_blocks_layers_into_the_container() -> None:
    source = """
    model ConvBN(c, stride: int = 1):
        def forward(x):
            return x -> conv2d(c, kernel=3, stride=stride, padding=1, bias=false)
                     -> batchnorm().relu

    model Net:
        input_shape = (3, 8, 8)
        def forward(x):
            x -> *ConvBN(8, stride=2) as features.*
            x -> *ConvBN(16) as features.*
            return x
    """
    ours = build(source)

    class Twin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                Conv2dNormActivation(3, 8, 3, stride=2), Conv2dNormActivation(8, 16, 3)
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.features(x)

    assert "features.0.0.weight" in ours.state_dict()
    same_function(ours, Twin(), (3, 8, 8))


def test_flat_splice_and_quoted_parts() -> None:
    source = """
    model Stem(c):
        def forward(x):
            return x -> conv2d(c, kernel=1) -> relu()

    model Net:
        input_shape = (3, 4, 4)
        def forward(x):
            x -> *Stem(4) as features
            x -> conv2d(4, kernel=1) as trunk.block1."block1-0"
            for i in range(2):
                x -> conv2d(4, kernel=1) as trunk.block2."block2-{i}"
            return x
    """
    ours = build(source)
    assert list(ours.state_dict()) == [
        "features.0.weight",
        "features.0.bias",
        "trunk.block1.block1-0.weight",
        "trunk.block1.block1-0.bias",
        "trunk.block2.block2-0.weight",
        "trunk.block2.block2-0.bias",
        "trunk.block2.block2-1.weight",
        "trunk.block2.block2-1.bias",
    ]


def test_repeat_starts_at_an_index_and_continues_a_container() -> None:
    source = """
    model B(c, stride: int = 1):
        def forward(x):
            return x -> conv2d(c, kernel=3, stride=stride, padding=1) as conv

    model Net:
        input_shape = (4, 8, 8)
        def forward(x):
            x -> B(8, stride=2) as layer1.0 -> repeat(B(8), 2) as layer1
            x -> repeat(B(8), 2, start=1) as layer2
            x -> repeat(B(8), 2) as layer3 -> B(8) as layer3.*
            return x
    """
    ours = build(source)
    keys = [k for k in ours.state_dict() if k.endswith("weight")]
    assert keys == [
        "layer1.0.conv.weight",
        "layer1.1.conv.weight",
        "layer1.2.conv.weight",
        "layer2.1.conv.weight",
        "layer2.2.conv.weight",
        "layer3.0.conv.weight",
        "layer3.1.conv.weight",
        "layer3.2.conv.weight",
    ]
    assert isinstance(ours.layer1, nn.Sequential) and len(ours.layer1) == 3


def test_parameter_under_a_numbered_container() -> None:
    source = """
    model Net:
        input_shape = (8, 4, 4)
        def forward(x):
            for i in range(2):
                h = conv2d(x, 8, kernel=1) as blocks.{i}.conv
                g = parameter((8, 1, 1), init="ones") as blocks.{i}.gamma
                x = add(x, multiply(g, h))
            return x
    """
    ours = build(source)
    assert [k for k in ours.state_dict() if "gamma" in k] == ["blocks.0.gamma", "blocks.1.gamma"]
    assert isinstance(ours.blocks, nn.Sequential)


def test_buffer_under_a_numbered_container() -> None:
    """Item 2: a buffer, like a parameter, may live under a numbered container."""
    source = """
    model Net:
        input_shape = (8, 4, 4)
        def forward(x):
            for i in range(2):
                h = conv2d(x, 8, kernel=1) as blocks.{i}.conv
                s = buffer((8, 1, 1), init="ones") as blocks.{i}.scale
                x = add(x, multiply(s, h))
            return x
    """
    ours = build(source)
    assert [name for name, _ in ours.named_buffers()] == ["blocks.0.scale", "blocks.1.scale"]
    assert isinstance(ours.blocks, nn.Sequential)
    with torch.no_grad():
        ours.blocks[1].scale.fill_(2.0)  # state the twin below reads from the state dict
        x = torch.randn(3, 8, 4, 4)
        want = x
        for i in range(2):
            block = ours.blocks[i]
            want = want + block.scale * block.conv(want)
        torch.testing.assert_close(ours(x), want)
    state = ours.state_dict()
    fresh = build(source)
    fresh.load_state_dict(state, strict=True)
    assert torch.equal(fresh.blocks[1].scale, torch.full((8, 1, 1), 2.0))
    # A buffer that does not persist stays out of the state dict, under a container too.
    transient = build(source.replace('init="ones")', 'init="ones", persistent=false)'))
    assert [name for name, _ in transient.named_buffers()] == ["blocks.0.scale", "blocks.1.scale"]
    assert not any("scale" in key for key in transient.state_dict())


def test_tie_between_convolutions_and_through_numbered_paths() -> None:
    source = """
    model Inner:
        def forward(x):
            return x -> embedding(10, 6) as wte

    model Net:
        input_shape = (5,)
        input_dtype = int64
        def forward(x):
            x -> Inner() as layers.0 -> dense(10, bias=false, tie=layers.0.wte)
            x -> reshape((2, 5, 5)) -> conv2d(2, kernel=1, bias=false) as a
              -> conv2d(2, kernel=1, bias=false, tie=a)
            return x
    """
    ours = build(source)
    named = dict(ours.named_parameters())
    assert set(named) == {"layers.0.wte.weight", "a.weight"}  # each shared tensor once
    fe = front(source)
    assert fe.graphs["Net"].parameters == 60 + 4


def test_tie_between_embeddings_dense_layers_and_through_a_quoted_path() -> None:
    """``tie=`` between any two layers with equal weight shapes: two embeddings, two dense
    layers, and a convolution reached by a quoted name (``tie=trunk."c-0"``)."""
    source = """
    model Net:
        input_shape = (5,)
        input_dtype = int64
        def forward(x):
            a = embedding(x, 10, 6) as enc
            b = embedding(x, 10, 6, tie=enc) as dec
            h = add(a, b)
            h -> dense(6) as p -> dense(6, tie=p) as q -> conv1d(5, kernel=1) as trunk."c-0"
              -> conv1d(5, kernel=1, tie=trunk."c-0")
            return h
    """
    ours = build(source)
    assert ours.dec.weight is ours.enc.weight and ours.q.weight is ours.p.weight
    assert ours.conv1d2.weight is ours.trunk["c-0"].weight
    shared = {"enc.weight", "p.weight", "trunk.c-0.weight"}
    assert shared <= set(dict(ours.named_parameters()))
    assert not {"dec.weight", "q.weight", "conv1d2.weight"} & set(dict(ours.named_parameters()))
    total = sum(p.numel() for p in ours.parameters())
    assert front(source).graphs["Net"].parameters == total == 60 + 36 + 6 + 6 + 25 + 5 + 5


@pytest.mark.parametrize(
    ("line", "code", "message"),
    [
        ("x -> conv2d(4, kernel=1) as f.a -> conv2d(4, kernel=1) as f.*", "S045", "holds named"),
        ("x -> conv2d(4, kernel=1) as f -> conv2d(4, kernel=1) as f.*", "S045", "not a container"),
        ("x -> *conv2d(4, kernel=1) as f", "S129", "only a block call"),
        ("x -> *B() -> relu()", "S129", "name it"),
        ("x -> conv2d(4, kernel=1) as a -> conv2d(4, kernel=3, tie=a)", "T041", "cannot tie"),
        ("x -> conv2d(4, kernel=1) as a -> maxpool(2, tie=a)", "S047", "tie= is for"),
    ],
)
def test_name_misuse_is_located(line: str, code: str, message: str) -> None:
    source = (
        "model B:\n    def forward(x):\n        return x -> relu()\n\n"
        f"model Net:\n    input_shape = (4, 8, 8)\n    def forward(x):\n        {line}\n"
        "        return x\n"
    )
    found = errors(source)
    assert found and found[0][0] == code and message in found[0][3], found
    assert found[0][1] == 8
