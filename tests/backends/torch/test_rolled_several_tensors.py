"""Issue 24 item 3: a network used through variants whose forward takes several inputs and
binds several tensors (``t = ...``, ``a0, d0 = block(h, emb, ...)``) is one class written
from the source (``backends/torch/rolled.py``), as the zoo's U-Net; what it cannot write
falls back, located, to one class per variant. Each rolled variant has the modules, initial
weights and outputs of its class written out (``roll_networks=False``)."""

from __future__ import annotations

import re
import types

import pytest

from aurane.compile import compile_detailed

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import build, built_alike, rolls_exactly  # noqa: E402

# each class with its base: a variant's is the network's
CLASS = re.compile(r"^class (\w+)\((\w+|nn\.Module)\):", re.MULTILINE)

# two inputs; ``c`` and the block's outputs bound to other names; a block given as a
# parameter returning two tensors; ``Up`` taking its skip's and embedding's sizes
# (``skip_channels``, ``emb_features``); a return of a layer call; a dtype check
TWO_INPUTS = """\
use torch

model Down(width):
    def forward(x, emb):
        a = conv2d(x, width, kernel=3, padding=1) as conv
        e = dense(emb, width) as proj
        a = add(a, unsqueeze(unsqueeze(e, 2), 3), broadcast=true)
        d = conv2d(a, width, kernel=3, stride=2, padding=1) as down
        return a, d

model Up(width):
    def forward(x, skip, emb):
        h = upsample(x, scale_factor=2, mode="nearest")
        h = conv2d(concat(h, skip, dim=1), width, kernel=3, padding=1) as conv
        e = dense(emb, width) as proj
        return add(h, unsqueeze(unsqueeze(e, 2), 3), broadcast=true)

model Net(widths, block, out: int = 2):
    def forward(x, cond):
        c = multiply(cond, 2.0)
        emb = dense(c, 4 * widths[0]).silu as embed.0
        h = conv2d(x, widths[0], kernel=3, padding=1) as stem
        a0, d0 = block(h, emb, widths[0]) as downs.0
        a1, d1 = block(d0, emb, widths[1]) as downs.1
        u = Up(d1, a1, emb, widths[1]) as ups.0
        u = Up(u, a0, emb, widths[0]) as ups.1
        return conv2d(u, out, kernel=1) as head

model small = Net([4, 8], Down):
    input_shape = {x: (3, 8, 8), cond: (5,)}
    input_dtype = {x: float32, cond: float32}

model wide = Net([8, 8], Down, out=3):
    input_shape = {x: (3, 8, 8), cond: (5,)}
    input_dtype = {x: float32, cond: float32}
"""


def _same_variant(rolled: types.ModuleType, unrolled: types.ModuleType, variant: str) -> None:
    """The same modules built in the same order (keys and initial weights), a strict load
    of the written-out class's weights, equal outputs."""
    mine, theirs = built_alike(rolled, unrolled, variant)
    torch.manual_seed(1)
    fresh = getattr(rolled, variant)()
    fresh.load_state_dict(theirs.state_dict(), strict=True)
    x, cond = torch.randn(2, 3, 8, 8), torch.randn(2, 5)
    torch.testing.assert_close(fresh(x, cond), theirs(x, cond), rtol=0, atol=0)
    graph = compile_detailed(TWO_INPUTS, filename="two.aur").graphs[variant]
    assert sum(p.numel() for p in fresh.parameters()) == graph.parameters


def test_two_input_network_with_tuple_outputs_is_one_class() -> None:
    rolled, code, reasons = build(TWO_INPUTS, "two")
    unrolled, flat, _ = build(TWO_INPUTS, "two_flat", roll=False)
    assert reasons == []
    assert CLASS.findall(code) == [
        ("Down", "nn.Module"),
        ("Up", "nn.Module"),
        ("Net", "nn.Module"),
        ("small", "Net"),
        ("wide", "Net"),
    ], code
    assert "class Net" not in flat
    assert "    def __init__(self, widths, block, out=2):\n" in code
    # the block parameter's outputs are bound by the call's own arguments; Up takes the
    # skip's width and the embedding's size from the tensors the call names
    assert "        self.downs.append(block(widths[0], 4 * widths[0], widths[1]))\n" in code
    assert "        self.ups.append(Up(widths[1], widths[0], 4 * widths[0], widths[0]))\n" in code
    assert "        self.head = nn.Conv2d(widths[0], out, kernel_size=1)\n" in code
    # a width no module made (the input ``cond`` through ``multiply``) is the IR's number
    assert "        self.embed.append(nn.Linear(5, 4 * widths[0]))\n" in code
    assert "        a0, d0 = self.downs[0](h, emb)\n" in code
    assert code.count("def forward(self, x, cond):") == 1
    assert "class wide(Net):\n    def __init__(self):\n" in code
    assert "        super().__init__([8, 8], Down, out=3)\n" in code
    for variant in ("small", "wide"):
        _same_variant(rolled, unrolled, variant)


def test_the_dtype_check_names_the_variant() -> None:
    """The shared forward's dtype check names the instance's class, so each variant's
    message is its own, as before."""
    rolled, code, _ = build(TWO_INPUTS, "dtype")
    assert 'raise TypeError(f"{type(self).__name__} expects float32 input, got {x.dtype}")' in code
    with pytest.raises(TypeError, match="^wide expects float32 input, got torch.float64$"):
        rolled.wide()(torch.randn(1, 3, 8, 8, dtype=torch.float64), torch.randn(1, 5))


def test_variants_that_differ_in_a_width_no_module_made_keep_their_classes() -> None:
    """``cond`` of 5 and of 6 features: the embedding's input width is a number no source
    expression gives, so the variants build differently and keep their classes (located)."""
    head, tail = TWO_INPUTS.split("model wide")
    source = head + "model wide" + tail.replace("cond: (5,)", "cond: (6,)")
    rolled, code, reasons = build(source, "uneven")
    assert reasons == ["network 'Net' at 18:7: the variant 'wide' builds differently"], reasons
    assert [name for name, _ in CLASS.findall(code)] == ["Down", "Up", "small", "wide"], code
    assert rolled.wide()(torch.randn(2, 3, 8, 8), torch.randn(2, 6)).shape == (2, 3, 8, 8)


IN_A_LOOP = """\
use torch

model Net(widths):
    def forward(x, cond):
        for i, w in enumerate(widths):
            e = dense(cond, w) as proj{i}
            x -> conv2d(w, kernel=1) as conv{i}
        return x

model small = Net([4, 8]):
    input_shape = {x: (3, 4, 4), cond: (5,)}
"""


def test_a_module_of_another_tensor_in_a_loop_rolls() -> None:
    """A later input's projection per iteration (``e = dense(cond, w) as proj{i}``) is
    built from that input's width, the local staying the threaded tensor's (it kept the
    variant's class: ``an assignment to 'e' the roller does not write``)."""
    code = rolls_exactly(IN_A_LOOP, "looped", torch.randn(2, 3, 4, 4), torch.randn(2, 5))
    assert (
        "        channels = 3\n"
        "        for i, w in enumerate(widths):\n"
        '            setattr(self, f"proj{i}", nn.Linear(5, w))\n'
        '            setattr(self, f"conv{i}", nn.Conv2d(channels, w, kernel_size=1))\n'
        "            channels = w\n"
    ) in code, code


# ``x``'s width is the loop's ``channels`` when the walk turns to ``e``, whose own loop
# then changes that local: ``x``'s width is no longer known by it, so the head reads the
# IR's number (``channels`` there would be 4, the last ``fc``'s width, not x's 8)
TWO_LOOPS = """\
use torch

model Net(widths):
    def forward(x, cond):
        for i, w in enumerate(widths):
            x -> conv2d(w, kernel=1) as conv{i}
        e = dense(cond, 4) as proj
        for j in range(2):
            e -> dense(4) as fc{j}
        return conv2d(x, 3, kernel=1) as head

model small = Net([6, 8]):
    input_shape = {x: (3, 4, 4), cond: (5,)}
"""


def test_a_width_the_loop_local_held_is_not_read_after_another_loop() -> None:
    rolled, code, reasons = build(TWO_LOOPS, "two_loops")
    unrolled, _, _ = build(TWO_LOOPS, "two_loops_flat", roll=False)
    assert reasons == []
    assert "        self.head = nn.Conv2d(8, 3, kernel_size=1)\n" in code, code
    torch.manual_seed(0)
    theirs = unrolled.small()
    mine = rolled.small()
    mine.load_state_dict(theirs.state_dict(), strict=True)
    x, cond = torch.randn(2, 3, 4, 4), torch.randn(2, 5)
    torch.testing.assert_close(mine(x, cond), theirs(x, cond), rtol=0, atol=0)
