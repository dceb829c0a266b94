"""Issue 24: model variants ``model NAME = Block(args):`` (the block's layers at the root, the
variant's own input_shape, dtype and init rules), blocks that read their input's sizes,
splicing inside a parameterised block, and uncalled blocks using the new constructs."""

from __future__ import annotations

import textwrap

import torch

from aurane.verify import verify_text
from tests.backends.torch.util import generate, load
from tests.helpers import front

RESNET = """
model Basic(width, stride: int = 1):
    def forward(x):
        h = x -> conv2d(width, kernel=3, stride=stride, padding=1, bias=false) as conv1
              -> batchnorm().relu as bn1
        if stride != 1 or x.shape[1] != width:
            s = (x -> conv2d(width, kernel=1, stride=stride, bias=false) -> batchnorm()) as downsample
        else:
            s = x
        return relu(add(h, s))

model ResNet(block, layers, widths = [8, 16]):
    def forward(x):
        x -> conv2d(8, kernel=3, padding=1, bias=false) as conv1 -> batchnorm().relu as bn1
        for i, (n, w) in enumerate(zip(layers, widths)):
            for j in range(n):
                x -> block(w, stride=2 if i > 0 and j == 0 else 1) as layer{i + 1}.{j}
        return x -> global_avg_pool() -> dense(10) as fc

model tiny = ResNet(Basic, [1, 2]):
    input_shape = (3, 16, 16)
    init conv2d: kaiming_normal(mode="fan_out", nonlinearity="relu")

model alias = ResNet(Basic, [1, 1])

model Head:
    input_shape = (3, 16, 16)
    def forward(x):
        return x -> alias() as body
"""


def test_variant_has_the_blocks_layers_at_its_root() -> None:
    text = textwrap.dedent(RESNET)
    fe = front(text)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    for report in verify_text(text, "t.aur"):
        assert report.ok, report.diagnostics
    _, _, code = generate(text)
    module = load(code)
    torch.manual_seed(0)
    net = module.tiny()
    keys = list(net.state_dict())
    assert keys[:2] == ["conv1.weight", "bn1.weight"]
    assert "layer1.0.conv1.weight" in keys and "layer2.0.downsample.0.weight" in keys
    assert "layer2.1.downsample.0.weight" not in keys  # stride 1, same width: no projection
    assert "layer1.0.downsample.0.weight" not in keys
    assert net(torch.zeros(2, 3, 16, 16)).shape == (2, 10)
    conv = net.state_dict()["conv1.weight"]
    assert abs(conv.std().item() - (2 / (8 * 9)) ** 0.5) < 0.06  # the variant's init rule
    head = module.Head()
    assert list(head.state_dict())[0] == "body.conv1.weight"  # the alias used as a block


def test_variant_errors_are_located() -> None:
    fe = front(
        """
        model B(w):
            def forward(x):
                return x -> dense(w)

        model a = Missing(2):
            input_shape = (4,)
        model b = B(2, 3):
            input_shape = (4,)
        """
    )
    found = [(d.code, d.span.line) for d in fe.diagnostics if d.is_error and d.span]
    assert ("S128", 5) in found and ("S043", 7) in found


def test_a_block_reading_its_input_size_is_resolved_per_call() -> None:
    source = textwrap.dedent(
        """
        model Shuffle:
            def forward(x):
                c = x.shape[1]
                return x -> reshape((2, c // 2, x.shape[2], x.shape[3]))
                         -> transpose(1, 2) -> reshape((c, x.shape[2], x.shape[3]))

        model Net:
            input_shape = (4, 8, 8)
            def forward(x):
                x -> Shuffle() -> conv2d(6, kernel=1) -> Shuffle()
                return x
        """
    )
    fe = front(source)
    assert not fe.ok  # 'c = x.shape[1]' binds a tensor name: constants live outside forward
    source = source.replace("        c = x.shape[1]\n", "").replace("c // 2", "x.shape[1] // 2")
    source = source.replace("reshape((c,", "reshape((x.shape[1],")
    fe = front(source)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    first, _, second = (n.subgraph for n in fe.graphs["Net"].nodes)
    assert first is not None and second is not None
    assert first.nodes[0].args["shape"] == (2, 2, 8, 8)
    assert second.nodes[0].args["shape"] == (2, 3, 8, 8)
    (report,) = verify_text(source, "t.aur")
    assert report.ok, report.diagnostics


def test_splice_inside_a_parameterised_block_keeps_its_sizes() -> None:
    source = textwrap.dedent(
        """
        model ConvBN(c):
            def forward(x):
                return x -> conv2d(c, kernel=3, padding=1, bias=false) -> batchnorm().relu

        model Stage(width):
            def forward(x):
                x -> *ConvBN(width) as features.*
                x -> *ConvBN(2 * width) as features.*
                return x

        model Net:
            input_shape = (3, 8, 8)
            def forward(x):
                return x -> Stage(4) as a -> Stage(8) as b
        """
    )
    (report,) = verify_text(source, "t.aur")
    assert report.ok, report.diagnostics
    _, _, code = generate(source)
    net = load(code).Net()
    assert net.b.features[1][0].weight.shape == (16, 8, 3, 3)  # features.1.0: the second


def test_uncalled_blocks_with_loops_and_operation_parameters_are_checked_quietly() -> None:
    fe = front(
        """
        model Unused(block, widths, act = relu, n: int = 2):
            def forward(x):
                for i in range(n):
                    for w in widths:
                        x -> block(w) -> act()
                if n > 1:
                    x -> dense(4).act
                return x

        model Typo(n: int = 2):
            def forward(x):
                for i in range(n):
                    x -> densse(4)
                return x
        """
    )
    assert [(d.code, d.span.line) for d in fe.diagnostics if d.is_error and d.span] == [
        ("S001", 13)
    ]
