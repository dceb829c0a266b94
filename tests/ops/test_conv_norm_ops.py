"""Convolutions, pooling, normalizations and activations of issue 10.

Catalog samples run through tests/ops/test_catalog.py and tests/backends/torch/test_ops.py
(twins in tests/ops/twins_layers.py); this file covers MACs against ``FlopCounterMode``
over many geometries, PyTorch's pooling sizes with ``ceil_mode``, error paths, emitted
text (defaults omitted, byte-identical old forms) and ``drop_path`` in train and eval.
"""

from __future__ import annotations

import itertools
import re
from functools import partial
from typing import Any

import pytest

from aurane.codes import CODES
from aurane.ops import CATALOG, argument_errors, context
from aurane.ops.spec import OpError
from tests.helpers import only_error, where

ERRORS = [
    # (op, args, shapes, code, blame, words)
    ("conv3d", {"channels": 4}, [(3, 8, 8)], "T002", None, "(channels, depth, height, width)"),
    ("conv3d", {"channels": 4, "kernel": 5}, [(3, 4, 8, 8)], "T005", "kernel", "kernel"),
    ("conv_transpose2d", {"channels": 4}, [(3, 8)], "T002", None, "(channels, height, width)"),
    (
        "conv_transpose2d",
        {"channels": 4, "stride": 2, "output_padding": 2},
        [(3, 4, 4)],
        "S004",
        "output_padding",
        "smaller than the stride",
    ),
    (
        "conv_transpose1d",
        {"channels": 4, "output_padding": 1},
        [(3, 4)],
        "S004",
        "output_padding",
        "output_padding",
    ),
    ("conv_transpose1d", {"channels": 3, "groups": 2}, [(4, 5)], "T007", "groups", "output"),
    (
        "conv_transpose1d",
        {"channels": 2, "kernel": 1, "padding": 1},
        [(2, 1)],
        "T005",
        "padding",
        "empty output",
    ),
    ("maxpool", {"kernel": 2}, [(1, 2, 3, 4, 5)], "T002", None, "depth"),
    ("avgpool", {"kernel": 3, "padding": 2}, [(2, 8)], "S004", "padding", "half"),
    ("adaptive_avg_pool", {"output_size": (2, 2)}, [(3, 8)], "T002", "output_size", "2 values"),
    (
        "adaptive_max_pool",
        {"output_size": None},
        [(3, 8)],
        "S004",
        "output_size",
        "a tuple of sizes",
    ),
    ("adaptive_max_pool", {"output_size": 2}, [(8,)], "T002", None, "(channels, length)"),
    ("global_max_pool", {}, [(8,)], "T002", None, "(channels, *spatial)"),
    ("group_norm", {"groups": 3}, [(8, 4, 4)], "T007", "groups", "8 channels"),
    ("instance_norm", {}, [(8,)], "T002", None, "instance_norm"),
    ("instance_norm", {}, [(8, 1, 1)], "T005", None, "more than one"),
    ("rms_norm", {"axes": 3}, [(4, 5)], "T002", "axes", "axes=3"),
    ("layer_norm", {"axes": 2}, [(5,)], "T002", "axes", "axes=2"),
    ("layer_norm", {"dim": 2}, [(3, 4, 5)], "T004", "dim", "neither the first nor the last"),
    ("layer_norm", {"dim": 0}, [(3, 4, 5)], "T004", "dim", "batch"),
    ("layer_norm", {"dim": 4}, [(3, 4, 5)], "T004", "dim", "out of range"),
    ("layer_norm", {"dim": 1, "axes": 2}, [(3, 4, 5)], "T004", "axes", "channel axis alone"),
    ("hardtanh", {"min_val": 1.0, "max_val": 1.0}, [(4,)], "S004", "max_val", "larger"),
    ("glu", {}, [(5,)], "T007", "dim", "odd"),
    ("glu", {"dim": 0}, [(4,)], "T004", "dim", "batch"),
    ("drop_path", {"p": 0.1}, [(4,)], "T003", None, "dtype"),
]


@pytest.mark.parametrize(
    ("op", "args", "shapes", "code", "blame", "words"),
    ERRORS,
    ids=[f"{e[0]}-{e[3]}-{i}" for i, e in enumerate(ERRORS)],
)
def test_error_paths(
    op: str,
    args: dict[str, Any],
    shapes: list[tuple[int, ...]],
    code: str,
    blame: str | None,
    words: str,
) -> None:
    spec = CATALOG[op]
    assert argument_errors(spec, {k: v for k, v in args.items() if v is not None}) == []
    dtype = "int64" if code == "T003" else "float32"
    with pytest.raises(OpError) as info:
        spec.infer(context(spec, args, shapes, dtype))
    error = info.value
    assert (error.code, error.blame) == (code, blame), error.message
    assert code in CODES
    assert words in error.message and error.message == error.message.lower()
    assert error.hint


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("conv3d", {"channels": 4, "kernel": (3, 3, 0)}),
        ("conv3d", {"channels": 4, "stride": (1, 2)}),
        ("conv_transpose2d", {"channels": 4, "output_padding": -1}),
        ("conv_transpose2d", {"channels": 4, "kernel": (2, 2, 2)}),
        ("conv_transpose1d", {"channels": 0}),
        ("maxpool", {"kernel": (2, 2, 2, 2)}),
        ("adaptive_avg_pool", {"output_size": 0}),
        ("adaptive_avg_pool", {"output_size": (2, 2, 2, 2)}),
        ("adaptive_max_pool", {"output_size": (2, "a")}),
        ("group_norm", {"groups": 0}),
        ("instance_norm", {"momentum": 1.5}),
        ("rms_norm", {"eps": 0.0}),
        ("layer_norm", {"axes": 0}),
        ("softplus", {"beta": 0}),
        ("drop_path", {"p": 1.0}),
    ],
)
def test_argument_checks(op: str, args: dict[str, Any]) -> None:
    errors = argument_errors(CATALOG[op], args)
    assert len(errors) == 1 and errors[0][0] in args
    assert errors[0][1] == errors[0][1].lower()


def test_located_error_in_a_program() -> None:
    diagnostic = only_error("""
        model G:
            input_shape = (8, 4, 4)
            def forward(x):
                x -> conv_transpose2d(4, kernel=4, stride=2, output_padding=2)
    """)
    assert diagnostic.code == "S004" and "output_padding" in diagnostic.message
    assert where(diagnostic) == (4, 54)  # the output_padding argument


torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402  (needs torch)

from tests.backends.torch.util import generate, load  # noqa: E402  (needs torch)

# -- MACs against FlopCounterMode ---------------------------------------------------------------

CONV_GEOMETRIES = [
    # (op, args, input sample shape)
    ("conv3d", {"channels": 6, "kernel": 3, "padding": 1}, (4, 5, 6, 7)),
    (
        "conv3d",
        {"channels": 4, "kernel": (1, 3, 3), "stride": (1, 2, 2), "groups": 2},
        (2, 4, 9, 9),
    ),
    ("conv3d", {"channels": 3, "kernel": 2, "dilation": (1, 2, 2)}, (3, 4, 6, 6)),
    ("conv_transpose1d", {"channels": 5, "kernel": 4, "stride": 2, "padding": 1}, (3, 8)),
    ("conv_transpose1d", {"channels": 4, "kernel": 3, "stride": 3, "groups": 2}, (6, 5)),
    ("conv_transpose2d", {"channels": 3, "kernel": 4, "stride": 2, "padding": 1}, (8, 4, 4)),
    (
        "conv_transpose2d",
        {"channels": 8, "kernel": (3, 5), "stride": (2, 1), "output_padding": (1, 0)},
        (4, 3, 5),
    ),
    ("conv_transpose2d", {"channels": 6, "kernel": 3, "dilation": 2, "groups": 3}, (3, 4, 4)),
    ("conv_transpose2d", {"channels": 64, "kernel": 4, "bias": False}, (100, 1, 1)),
    ("conv_transpose3d", {"channels": 2, "kernel": 2, "stride": 2}, (4, 2, 3, 3)),
    (
        "conv_transpose3d",
        {"channels": 4, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1},
        (2, 2, 2, 2),
    ),
]


@pytest.mark.parametrize(
    ("op", "args", "shape"),
    CONV_GEOMETRIES,
    ids=[f"{g[0]}-{i}" for i, g in enumerate(CONV_GEOMETRIES)],
)
def test_conv_macs_equal_flop_counter(
    op: str, args: dict[str, Any], shape: tuple[int, ...]
) -> None:
    from .twins import TWINS

    spec = CATALOG[op]
    ctx = context(spec, args, [shape], "float32")
    out = spec.infer(ctx)
    module = TWINS[op](dict(ctx.args.plain()), (shape,))
    batch = 3
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        y = module(torch.randn(batch, *shape))
    assert tuple(y.shape) == (batch, *out.shape)
    assert counter.get_total_flops() == 2 * batch * spec.macs(ctx, out)
    assert spec.parameters(ctx, out) == sum(p.numel() for p in module.parameters())


# -- pooling sizes ----------------------------------------------------------------------------


def _torch_pool(kind: str, dims: int, *args: Any, **kwargs: Any) -> Any:
    name = f"{'Max' if kind == 'maxpool' else 'Avg'}Pool{dims}d"
    return getattr(torch.nn, name)(*args, **kwargs)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("kind", ["maxpool", "avgpool"])
def test_pool_verdicts_and_sizes_equal_torch_over_a_grid(
    kind: str, ceil_mode: bool, dims: int
) -> None:
    """Every (size, kernel, stride, padding) in a small grid, a kernel larger than the input
    included: the IR accepts exactly what torch runs, with torch's size."""
    spec = CATALOG[kind]
    sizes = range(1, 9) if dims == 1 else range(1, 5)
    for size, kernel, stride, padding in itertools.product(
        sizes, range(1, 5), range(1, 4), range(3)
    ):
        if 2 * padding > kernel:
            continue  # S004, a rule of its own
        args = {"kernel": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil_mode}
        module = _torch_pool(
            kind, dims, kernel, stride=stride, padding=padding, ceil_mode=ceil_mode
        )
        try:
            expected: tuple[int, ...] | None = tuple(
                module(torch.randn(1, 2, *(size,) * dims)).shape[1:]
            )
        except RuntimeError:
            expected = None
        try:
            got: tuple[int, ...] | None = spec.infer(
                context(spec, args, [(2, *(size,) * dims)])
            ).shape
        except OpError as error:
            assert error.code == "T005", (args, size, error)
            got = None
        assert got == expected, (args, size)


def _named_value(values: dict[str, int], leaf: Any) -> int:
    return values[leaf.name]


@pytest.mark.parametrize(
    "symbolic", [("size",), ("size", "stride"), ("kernel", "stride"), ("size", "kernel", "padding")]
)
def test_a_symbolic_ceil_mode_size_equals_torch_at_other_arguments(
    symbolic: tuple[str, ...],
) -> None:
    """Inside a block the pool's operands are symbolic and the size's expression is what a
    rolled class writes. Computed at one point of a grid, it must give torch's size at
    every other point, not only on the side of the last-window rule the call took
    (``maxpool(k, stride=s, ceil_mode=true)`` of 3 wrote 2 windows at k=1 whatever s: 1 at
    s=4, roll_check seed 47000000)."""
    from aurane.ops.pool import ceil_windows
    from aurane.semantics.symbolic import Ref, SymInt, evaluate, tree_of

    grid = [
        point
        for point in itertools.product(range(1, 9), range(1, 5), range(1, 5), range(3))
        if 2 * point[3] <= point[1]
    ]
    expected: dict[tuple[int, ...], int | None] = {}
    for size, kernel, stride, padding in grid:
        pool = torch.nn.MaxPool1d(kernel, stride=stride, padding=padding, ceil_mode=True)
        try:
            expected[(size, kernel, stride, padding)] = pool(torch.randn(1, 1, size)).shape[-1]
        except RuntimeError:
            expected[(size, kernel, stride, padding)] = None
    names = ("size", "kernel", "stride", "padding")
    for base in grid[::7]:  # the call's values
        if expected[base] is None:
            continue
        operands = [
            SymInt(value, Ref(name)) if name in symbolic else value
            for name, value in zip(names, base, strict=True)
        ]
        result = ceil_windows(*operands)
        assert result == expected[base], base
        tree = tree_of(result)
        for point in grid:
            if any(a != b for n, a, b in zip(names, base, point, strict=True) if n not in symbolic):
                continue  # a plain operand keeps the call's value
            got = evaluate(tree, partial(_named_value, dict(zip(names, point, strict=True))))
            want = expected[point]
            assert got == want if want is not None else got < 1, (base, point, got, want)


@pytest.mark.parametrize("kind", ["adaptive_avg_pool", "adaptive_max_pool"])
def test_adaptive_pool_window_elements(kind: str) -> None:
    """other_flops counts every element of every (overlapping) window exactly."""
    spec = CATALOG[kind]
    for size, target in itertools.product(range(1, 12), range(1, 8)):
        ctx = context(spec, {"output_size": target}, [(1, size)])
        out = spec.infer(ctx)
        windows = sum(-(-(i + 1) * size // target) - (i * size // target) for i in range(target))
        assert spec.other_flops(ctx, out) == windows


# -- emission ---------------------------------------------------------------------------------

EMITTED = [
    (
        "conv3d(x, 8, kernel=3, padding=1)",
        (4, 5, 6, 7),
        "nn.Conv3d(4, 8, kernel_size=3, padding=1)",
    ),
    (
        "conv_transpose2d(x, 8, kernel=4, stride=2, padding=1, bias=false)",
        (16, 4, 4),
        "nn.ConvTranspose2d(16, 8, kernel_size=4, stride=2, padding=1, bias=False)",
    ),
    (
        "conv_transpose1d(x, 4, kernel=3, stride=2, output_padding=1, dilation=2)",
        (2, 5),
        "nn.ConvTranspose1d(2, 4, kernel_size=3, stride=2, output_padding=1, dilation=2)",
    ),
    ("maxpool(x, 2)", (3, 4, 6, 6), "nn.MaxPool3d(2)"),
    (
        "maxpool(x, 3, stride=2, ceil_mode=true)",
        (3, 9, 9),
        "nn.MaxPool2d(3, stride=2, ceil_mode=True)",
    ),
    (
        "avgpool(x, 3, padding=1, count_include_pad=false)",
        (3, 9),
        "nn.AvgPool1d(3, padding=1, count_include_pad=False)",
    ),
    ("adaptive_avg_pool(x, (None, 7))", (3, 9, 9), "nn.AdaptiveAvgPool2d((None, 7))"),
    ("adaptive_max_pool(x, 1)", (3, 4, 4, 4), "nn.AdaptiveMaxPool3d(1)"),
    ("global_max_pool(x)", (3, 4, 5), "x.amax(dim=(2, 3))"),
    ("batchnorm(x)", (3, 2, 4, 4), "nn.BatchNorm3d(3)"),
    ("layer_norm(x)", (3, 4, 5), "nn.LayerNorm(5)"),
    ("layer_norm(x, axes=3)", (3, 4, 5), "nn.LayerNorm((3, 4, 5))"),
    ("layer_norm(x, dim=1)", (3, 4, 5), "LayerNorm2d(3)"),
    ("layer_norm(x, eps=1e-6, dim=-3)", (3, 4, 5), "LayerNorm2d(3, eps=1e-06)"),
    ("layer_norm(x, dim=1, bias=false)", (6, 7), "LayerNorm2d(6, bias=False)"),
    ("layer_norm(x, dim=1)", (8,), "nn.LayerNorm(8)"),
    ("layer_norm(x, dim=2)", (3, 4), "nn.LayerNorm(4)"),
    ("rms_norm(x)", (8,), "nn.RMSNorm(8)"),
    ("rms_norm(x, eps=1e-6, axes=2)", (3, 8), "nn.RMSNorm((3, 8), eps=1e-06)"),
    ("group_norm(x, 2)", (4, 3, 3), "nn.GroupNorm(2, 4)"),
    ("group_norm(x, 4, affine=false)", (4, 3), "nn.GroupNorm(4, 4, affine=False)"),
    ("instance_norm(x)", (4, 3, 3), "nn.InstanceNorm2d(4)"),
    ("instance_norm(x, affine=true)", (4, 3, 3, 3), "nn.InstanceNorm3d(4, affine=True)"),
    ("softplus(x)", (4,), "F.softplus(x)"),
    ("softplus(x, beta=2.0)", (4,), "F.softplus(x, beta=2.0)"),
    ("relu6(x)", (4,), "F.relu6(x)"),
    ("hardtanh(x, 0.0, 6.0)", (4,), "F.hardtanh(x, min_val=0.0, max_val=6.0)"),
    ("hardsigmoid(x)", (4,), "F.hardsigmoid(x)"),
    ("glu(x)", (4,), "F.glu(x)"),
    ("glu(x, dim=1)", (4, 3), "F.glu(x, dim=1)"),
    ("drop_path(x, 0.1)", (4,), "DropPath(0.1)"),
]


def _program(expr: str, shape: tuple[int, ...]) -> str:
    return (
        f"model M:\n    input_shape = {shape}\n    def forward(x):\n"
        f"        y = {expr}\n        return y\n"
    )


@pytest.mark.parametrize(("expr", "shape", "text"), EMITTED, ids=[e[0] for e in EMITTED])
def test_emitted_text(expr: str, shape: tuple[int, ...], text: str) -> None:
    _, _, code = generate(_program(expr, shape))
    flat = re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", " ".join(code.split())))
    assert text in flat, code
    load(code)


def test_drop_path_helper_emitted_once_and_matches_torchvision() -> None:
    from torchvision.ops import StochasticDepth

    source = """
model Net:
    input_shape = (4, 6)
    def forward(x):
        h = drop_path(dense(x, 6), 0.5)
        return drop_path(h, 0.25)
"""
    _, _, code = generate(source)
    assert code.count("class DropPath(nn.Module):") == 1
    assert "import aurane" not in code
    net = load(code).Net()
    x = torch.randn(64, 4, 6)
    h = net.dense1(x)
    torch.manual_seed(3)
    ours = net(x)
    torch.manual_seed(3)
    theirs = StochasticDepth(0.25, "row")(StochasticDepth(0.5, "row")(h))
    torch.testing.assert_close(ours, theirs)
    zeroed = (ours.flatten(1) == 0).all(dim=1)
    assert 0 < int(zeroed.sum()) < 64  # whole samples dropped, not elements
    net.eval()
    torch.testing.assert_close(net(x), h)


def test_channel_layer_norm_helper_emitted_once_and_matches_torchvision() -> None:
    from torchvision.models.convnext import LayerNorm2d

    source = """
model Net:
    input_shape = (4, 5, 6)
    def forward(x):
        h = layer_norm(x, eps=1e-6, dim=1) as norm
        return layer_norm(conv2d(h, 8, kernel=1), dim=1)
"""
    fe, _, code = generate(source)
    assert code.count("class LayerNorm2d(nn.LayerNorm):") == 1
    assert "self.norm = LayerNorm2d(4, eps=1e-06)" in code
    net = load(code).Net().eval()
    theirs = LayerNorm2d(4, eps=1e-6)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    net.norm.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(3, 4, 5, 6)
    torch.testing.assert_close(net.norm(x), theirs(x))
    assert fe.graphs["Net"].parameters == sum(p.numel() for p in net.parameters()) == 8 + 40 + 16


def test_plain_layer_norm_emits_no_channel_helper() -> None:
    _, _, code = generate(_program("layer_norm(x, dim=-1)", (3, 4, 5)))
    assert "LayerNorm2d" not in code and "nn.LayerNorm(5)" in code


def test_a_model_named_like_the_helper_keeps_working() -> None:
    source = """
model DropPath:
    input_shape = (4,)
    def forward(x):
        return drop_path(x, 0.5)
"""
    _, _, code = generate(source)
    module = load(code)
    assert module.DropPath is not None and hasattr(module, "DropPath_")
    module.DropPath_().eval()(torch.randn(2, 4))
