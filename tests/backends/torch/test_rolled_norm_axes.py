"""Issue 24 item 3: a norm whose ``axes`` a block parameter gives rolls into one class.

``rms_norm(x, axes=p0)`` normalises the last ``p0`` sample axes. The calls' classes
wrote the trailing sizes as numbers (``nn.RMSNorm(8)`` at ``p0 = 1``), which a class
built with another ``p0`` got wrong, so the block kept one class per call. The class now
cuts the normalised shape from the input's sizes, ``nn.RMSNorm((channels, 8, 8)[-p0:])``,
taking the sizes it reads as constructor arguments (``in_channels``; an axis a module
before it changes, as that module's expression). Each form is checked as
``one_class.twin`` checks a rolled block: one class, the same modules in the same order
as the builds with one class per call, a strict load, equal outputs, and
``roll_check`` building it at a ``p0`` no call gives. A literal ``axes`` stays a literal
(``test_rolled_other_arguments.test_literal_axes_stay_a_literal_and_roll``); on a sample
of one axis the norm is its width (``nn.RMSNorm(channels)``: 1 is the one count the
source accepts there); a loop before the norm that changes a size the class does not
track keeps the located note."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    rolls_exactly,
    twin,
)

# p0 = 1 and 2 across the calls, the norm in a loop
IN_A_LOOP = """\
model Norms(p0, n: int):
    def forward(x):
        for i in range(n):
            h1 = rms_norm(x, axes=p0) as norms{i}
            x = add(x, h1)
        return x

model Net:
    input_shape = (2, 8, 8)
    def forward(x):
        x -> Norms(1, 1) as a -> Norms(2, 2) as b
        return x
"""


def test_a_norm_in_a_loop_cuts_its_shape_from_the_input_sizes() -> None:
    built = twin(IN_A_LOOP, "axes_in_a_loop", torch.randn(2, 2, 8, 8))
    assert CLASS.findall(built.code) == ["Norms", "Net"], built.code
    norms = block_class(built.gen, "Norms")
    assert "    def __init__(self, in_channels, p0, n):\n" in norms, norms
    assert 'setattr(self, f"norms{i}", nn.RMSNorm((channels, 8, 8)[-p0:]))' in norms, norms
    assert "self.a = Norms(2, 1, 1)\n" in built.code, built.code
    assert "self.b = Norms(2, 2, 2)\n" in built.code, built.code
    # built at a p0 no call gives, it normalises the axes the source's block would
    module = built.gen.module
    assert module.Norms(2, 3, 1).norms0.normalized_shape == (2, 8, 8)
    assert module.Norms(4, 2, 1).norms0.normalized_shape == (8, 8)


# outside a loop, between denses that change the last size the norm's shape covers
BETWEEN_DENSES = """\
model Mix(p0, w: int):
    def forward(x):
        x -> dense(w) -> rms_norm(axes=p0) -> dense(w)
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Mix(1, 6) as a -> Mix(2, 5) as b
        return x
"""


def test_a_norm_after_a_dense_reads_its_width() -> None:
    built = twin(BETWEEN_DENSES, "axes_between_denses", torch.randn(2, 4, 8))
    mix = block_class(built.gen, "Mix")
    assert "    def __init__(self, in_channels, in_features, p0, w):\n" in mix, mix
    assert "        self.rms_norm1 = nn.RMSNorm((in_channels, w)[-p0:])\n" in mix, mix
    assert built.gen.module.Mix(3, 8, 2, 7).rms_norm1.normalized_shape == (3, 7)


# layer_norm, its axes an expression of the parameter
EXPRESSION = """\
model Mix(p0, w: int):
    def forward(x):
        x -> dense(w) -> layer_norm(axes=p0 + 1) -> dense(w)
        return x

model Net:
    input_shape = (3, 4, 8)
    def forward(x):
        x -> Mix(0, 6) as a -> Mix(1, 5) as b
        return x
"""


def test_layer_norm_axes_an_expression_of_the_parameter() -> None:
    built = twin(EXPRESSION, "axes_expression", torch.randn(2, 3, 4, 8))
    mix = block_class(built.gen, "Mix")
    assert "self.layer_norm1 = nn.LayerNorm((in_channels, 4, w)[-(p0 + 1):])" in mix, mix
    assert built.gen.module.Mix(3, 8, 2, 7).layer_norm1.normalized_shape == (3, 4, 7)


# the channels a convolution makes, and spatial sizes a parameter's pool changes
CONV = """\
model Conv(p0, c: int):
    def forward(x):
        x -> conv2d(c, kernel=3, padding=1) -> rms_norm(axes=p0) -> relu()
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Conv(1, 4) as a -> Conv(2, 6) as b
        return x
"""

POOLED = """\
model Pooled(p0, k: int):
    def forward(x):
        x -> avgpool(k) -> rms_norm(axes=p0)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Pooled(1, 2) as a -> Pooled(2, 1) as b
        return x
"""


def test_a_norm_after_a_convolution_reads_its_channels() -> None:
    built = twin(CONV, "axes_conv", torch.randn(2, 3, 8, 8))
    conv = block_class(built.gen, "Conv")
    assert "        self.rms_norm1 = nn.RMSNorm((c, 8, 8)[-p0:])\n" in conv, conv


def test_a_norm_after_a_pool_reads_the_pooled_sizes() -> None:
    built = twin(POOLED, "axes_pooled", torch.randn(2, 3, 8, 8))
    pooled = block_class(built.gen, "Pooled")
    assert "    def __init__(self, in_channels, in_height, in_width, p0, k):\n" in pooled
    assert "(in_channels, (in_height - k) // k + 1, (in_width - k) // k + 1)[-p0:]" in pooled
    assert built.gen.module.Pooled(3, 8, 8, 3, 4).rms_norm1.normalized_shape == (3, 2, 2)


# the loop's count gives the axes
LOOP_COUNT = """\
model Norms(n: int):
    def forward(x):
        for i in range(n):
            h1 = layer_norm(x, axes=i + 1) as norms{i}
            x = add(x, h1)
        return x

model Net:
    input_shape = (2, 8, 8)
    def forward(x):
        x -> Norms(1) as a -> Norms(3) as b
        return x
"""


def test_axes_the_loop_counts() -> None:
    built = twin(LOOP_COUNT, "axes_loop_count", torch.randn(2, 2, 8, 8))
    norms = block_class(built.gen, "Norms")
    assert 'f"norms{i}", nn.LayerNorm((channels, 8, 8)[-(i + 1):])' in norms, norms


# network variants giving the axes
NETWORK = """\
model Net(p, width):
    def forward(x):
        x -> dense(width) -> rms_norm(axes=p) -> mean(dim=1) -> dense(2) as head
        return x

model small = Net(1, 16):
    input_shape = (5, 8)

model large = Net(2, 32):
    input_shape = (5, 8)
"""


def test_network_variants_of_other_axes_are_one_class() -> None:
    code = rolls_exactly(NETWORK, "axes_network", torch.randn(2, 5, 8))
    assert "        self.rms_norm1 = nn.RMSNorm((5, width)[-p:])\n" in code, code
    assert check_source(NETWORK) == []


# a loop before the norm changes the spatial sizes its shape covers: the class carries
# them as running locals (``height = (height - 1) // 2 + 1``; it kept one class per call,
# noted, when it wrote them as the calls' numbers; ``test_rolled_running_lengths``)
LOOP_BEFORE = """\
model Down(p0, c: int, n: int):
    def forward(x):
        for i in range(n):
            x -> conv2d(c, kernel=3, stride=2, padding=1)
        x -> rms_norm(axes=p0)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Down(1, 4, 1) as a -> Down(2, 6, 2) as b
        return x
"""


def test_a_loop_changing_a_covered_size_carries_it() -> None:
    checked = twin(LOOP_BEFORE, "axes_loop_before", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(checked.code) == ["Down", "Net"], checked.code
    down = block_class(checked.gen, "Down")
    assert "            height = (height - 1) // 2 + 1\n" in down, down
    assert "nn.RMSNorm((channels, height, width)[-p0:])" in down, down


# config rows give the axes (fuzz seed 85000136): ``a0 = 1`` is no size the loop's later
# norms read, though the sample's last size is 1 too
ROWS = """\
model Loop0(cfg):
    def forward(x):
        for a0, in cfg:
            x -> rms_norm(axes=a0)
        return x

model Net:
    input_shape = (6, 1)
    def forward(x):
        x -> Loop0(cfg=[(1,), (2,), (1,)]) as a -> Loop0(cfg=[(2,), (1,)]) as b
        return x
"""


def test_rows_give_the_axes() -> None:
    built = twin(ROWS, "axes_rows", torch.randn(2, 6, 1))
    loop = block_class(built.gen, "Loop0")
    assert "        for i, (a0,) in enumerate(cfg):\n" in loop, loop
    assert 'setattr(self, f"rms_norm{i + 1}", nn.RMSNorm((channels, 1)[-a0:]))' in loop, loop


# a sample of one axis (fuzz seed 97000057): the norm's width, the one count the source
# accepts there being 1
ONE_AXIS = IN_A_LOOP.replace("(2, 8, 8)", "(8,)").replace("Norms(2, 2)", "Norms(1, 2)")


def test_a_sample_of_one_axis_normalises_its_width() -> None:
    built = twin(ONE_AXIS, "axes_one_axis", torch.randn(2, 8))
    norms = block_class(built.gen, "Norms")
    assert 'setattr(self, f"norms{i}", nn.RMSNorm(channels))' in norms, norms


# an inner block's norm reads every sample size at some p0, so its class takes them all
# (``Inner(in_channels, in_features, p0)``); a loop of an outer block passes it the
# running width and the IR's other sizes, checked as a module reading them is (no
# parameter or loop before the call changes them, a call visits the step twice)
NESTED_IN_A_LOOP = """\
model Inner(p0):
    def forward(x):
        x -> rms_norm(axes=p0)
        return x

model Outer(p0, n: int):
    def forward(x):
        for i in range(n):
            x -> Inner(p0) -> relu()
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> Outer(1, 1) as a -> Outer(2, 2) as b
        return x
"""


def test_an_inner_norm_block_in_a_loop_takes_the_other_sizes_as_numbers() -> None:
    built = twin(NESTED_IN_A_LOOP, "axes_nested", torch.randn(2, 3, 8))
    assert CLASS.findall(built.code) == ["Inner", "Outer", "Net"], built.code
    inner = block_class(built.gen, "Inner")
    assert "        self.rms_norm1 = nn.RMSNorm((in_channels, in_features)[-p0:])\n" in inner
    outer = block_class(built.gen, "Outer")
    assert 'setattr(self, f"inner{i + 1}", Inner(channels, 8, p0))' in outer, outer
    assert built.gen.module.Outer(3, 2, 3).inner3.rms_norm1.normalized_shape == (3, 8)


def test_an_inner_literal_axes_block_in_a_loop_rolls_too() -> None:
    source = NESTED_IN_A_LOOP.replace("axes=p0", "axes=2")
    built = twin(source, "axes_nested_literal", torch.randn(2, 3, 8))
    assert CLASS.findall(built.code) == ["Inner", "Outer", "Net"], built.code
    outer = block_class(built.gen, "Outer")
    assert 'setattr(self, f"inner{i + 1}", Inner(channels, 8, p0))' in outer, outer


# a network's loop passes the inner class the same sizes
NESTED_IN_A_NETWORK = """\
model Inner(p0):
    def forward(x):
        x -> rms_norm(axes=p0)
        return x

model Net(p0, n):
    def forward(x):
        for i in range(n):
            x -> Inner(p0) -> relu()
        x -> mean(dim=1) -> dense(2) as head
        return x

model small = Net(1, 1):
    input_shape = (3, 8)

model large = Net(2, 2):
    input_shape = (3, 8)
"""


def test_an_inner_norm_block_in_a_network_loop_is_one_class() -> None:
    source, inputs = NESTED_IN_A_NETWORK, torch.randn(2, 3, 8)
    code = rolls_exactly(source, "axes_nested_network", inputs, blocks=("Inner",))
    assert 'setattr(self, f"inner{i + 1}", Inner(channels, 8, p0))' in code, code
    assert check_source(NESTED_IN_A_NETWORK) == []


# a parameter changes the size the inner class takes on the last axis: written as the
# calls' number, a class built with another ``w`` would pass the wrong one. The walk of
# the last axis threads it (``channels = w``) and takes the channels, which no step
# changes, by name (``Inner(in_channels, channels, p0)``)
PARAMETER_BEFORE = """\
model Inner(p0):
    def forward(x):
        x -> rms_norm(axes=p0)
        return x

model Outer(p0, w: int, n: int):
    def forward(x):
        x -> dense(w)
        for i in range(n):
            x -> Inner(p0) -> relu()
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> Outer(1, 6, 1) as a -> Outer(2, 5, 2) as b
        return x
"""


def test_an_inner_block_size_a_parameter_changes_is_threaded() -> None:
    checked = twin(PARAMETER_BEFORE, "axes_nested_param", torch.randn(2, 3, 8))
    assert CLASS.findall(checked.code) == ["Inner", "Outer", "Net"], checked.code
    outer = block_class(checked.gen, "Outer")
    assert "def __init__(self, in_channels, in_features, p0, w, n):" in outer, outer
    assert 'setattr(self, f"inner{i + 1}", Inner(in_channels, channels, p0))' in outer, outer


# a count the source rejects (none, negative, more axes than the sample has, a boolean):
# the slice would take it (``[-0:]`` is every axis), so the class raises, naming the count
# and its range; in a loop, where the norm is built, so ``n = 0`` builds no norm and
# refuses nothing, as the source
@pytest.mark.parametrize("p0", [0, -1, 4, True])
def test_a_count_the_source_rejects_raises(p0: object) -> None:
    module = twin(IN_A_LOOP, "axes_refused", torch.randn(2, 2, 8, 8)).gen.module
    with pytest.raises(ValueError, match=r"^Norms is written for 1 <= p0 <= 3, not "):
        module.Norms(2, p0, 1)
    assert len(module.Norms(2, p0, 0).state_dict()) == 0


def test_the_refusal_reads_like_a_guard() -> None:
    norms = block_class(twin(IN_A_LOOP, "axes_guard", torch.randn(2, 2, 8, 8)).gen, "Norms")
    assert (
        "        for i in range(n):\n"
        "            if isinstance(p0, bool) or not 1 <= p0 <= 3:"
        "  # a norm of the last 1 to 3 sample axes\n"
        '                raise ValueError(f"Norms is written for 1 <= p0 <= 3, not {p0}")\n'
        '            setattr(self, f"norms{i}", nn.RMSNorm((channels, 8, 8)[-p0:]))\n'
    ) in norms, norms


def test_an_annotated_count_and_an_expression_refuse_no_boolean() -> None:
    """``p0: int`` is refused a boolean at the call; ``p0 + 1`` is a number whatever
    Python adds: the test is the range alone. A class written without loops refuses
    first in ``__init__``."""
    module = twin(EXPRESSION, "axes_expression_refused", torch.randn(2, 3, 4, 8)).gen.module
    for p0 in (-1, 3):
        with pytest.raises(ValueError, match=r"^Mix is written for 1 <= p0 \+ 1 <= 3, not "):
            module.Mix(3, 8, p0, 7)
    code = twin(EXPRESSION, "axes_expression_guard", torch.randn(2, 3, 4, 8)).code
    assert (
        "        super().__init__()\n"
        "        if not 1 <= p0 + 1 <= 3:  # a norm of the last 1 to 3 sample axes\n"
    ) in code, code
    typed = IN_A_LOOP.replace("model Norms(p0, n: int)", "model Norms(p0: int, n: int)")
    norms = block_class(twin(typed, "axes_typed", torch.randn(2, 2, 8, 8)).gen, "Norms")
    assert "            if not 1 <= p0 <= 3:  # a norm of the last 1 to 3 sample axes\n" in norms


def test_rows_and_a_network_refuse_a_count_too() -> None:
    module = twin(ROWS, "axes_rows_refused", torch.randn(2, 6, 1)).gen.module
    for row in ((0,), (3,), (True,)):
        with pytest.raises(ValueError, match=r"^Loop0 is written for 1 <= a0 <= 2, not "):
            module.Loop0(6, [(1,), row])
    network, _, _ = build(NETWORK, "axes_network_refused")
    with pytest.raises(ValueError, match=r"^Net is written for 1 <= p <= 2, not 3$"):
        network.Net(3, 16)


def test_one_axis_takes_the_count_1_alone() -> None:
    module = twin(ONE_AXIS, "axes_one_axis_refused", torch.randn(2, 8)).gen.module
    for p0 in (0, 2, True):
        with pytest.raises(ValueError, match=r"^Norms is written for p0 == 1, not "):
            module.Norms(8, p0, 1)
