"""Issue 24 item 3: blocks the fuzz campaign's programs still wrote as several classes
(``bench/one_class_per_block.py``), now one class with the source's loops. Each program
is executed (``run_accepted`` compares every shape and the parameter count with the
IR's), the one class strict-loads the state dict of the build with one class per call
(``roll_networks=False``) and computes the same, and the classes are counted."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, rolled  # noqa: E402

# 1. a bool parameter given as a layer's argument (fuzz seed 1000003)
BOOL_ARG = """\
use torch

model Stack(w, n, b: bool = true):
    def forward(x):
        for i in range(n):
            x -> dense(w, bias=b).relu as layers{i}
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Stack(8, 2, false) as a -> Stack(8, 3) as b -> Stack(4, 1, b=false) as c
"""


def test_bool_parameter_given_as_a_layer_argument_is_a_constructor_argument() -> None:
    """``dense(w, bias=b)`` in the loop: ``nn.Linear(channels, w, bias=b)`` in the one
    class, each call passing its bool (was ``'b' is not a number`` and a class per call)."""
    gen, flat = rolled(BOOL_ARG, "bool_arg", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Stack_3", "Net"], flat
    text = block_class(gen, "Stack")
    assert 'setattr(self, f"layers{i}", nn.Linear(channels, w, bias=b))' in text, text
    net = gen.module.Net()
    assert net.a.layers0.bias is None and net.b.layers2.bias is not None
    assert net.c.layers0.bias is None
    assert "Stack(6, 8, 2, b=False)" in gen.code and "Stack(8, 4, 1, b=False)" in gen.code


NO_LOOP_BIAS = """\
use torch

model Unit(w, b: bool):
    def forward(x):
        return x -> dense(w, bias=b).relu as fc

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Unit(8, true) as a -> Unit(4, false) as b
"""


def test_bool_parameter_given_as_a_dense_bias_outside_loops_is_one_class() -> None:
    """``dense(w, bias=b)`` in a block without loops: ``nn.Linear(in_features, w,
    bias=b)`` (the dense folded its bias: ``Unit`` and ``Unit_2``)."""
    gen, flat = rolled(NO_LOOP_BIAS, "no_loop_bias", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert "nn.Linear(in_features, w, bias=b)" in block_class(gen, "Unit")
    net = gen.module.Net()
    assert net.a.fc.bias is not None and net.b.fc.bias is None


# 2. a growing loop on the last axis of a sample of rank 2 or more (fuzz seed 1000097)
GROW_LAST = """\
use torch

model Grow(g: int, n):
    def forward(x):
        for i in range(n):
            h = dense(x, g) as dl{i + 1}
            x = concat(x, h, dim=-1)
        return x

model Net:
    input_shape = (3, 5, 2)
    def forward(x):
        x -> Grow(1, n=2) as a -> Grow(3, n=3) as b -> Grow(2, n=1) as c
"""


def test_growing_loop_on_the_last_axis_threads_in_features() -> None:
    """A ``dense`` and a ``concat(..., dim=-1)`` on the last axis of a ``(3, 5, 2)``
    sample: the class takes ``in_features`` and its loop threads the last axis
    (``channels = channels + g``), where the walk read axis 0 (``nn.Linear(2, g)``
    against ``nn.Linear(3, g)``: the iterations differed, one class per call)."""
    gen, flat = rolled(GROW_LAST, "grow_last", torch.randn(2, 3, 5, 2))
    assert CLASS.findall(gen.code) == ["Grow", "Net"], gen.code
    assert CLASS.findall(flat) == ["Grow", "Grow_2", "Grow_3", "Net"], flat
    text = block_class(gen, "Grow")
    assert "def __init__(self, in_features, g, n):" in text, text
    assert 'setattr(self, f"dl{i + 1}", nn.Linear(channels, g))' in text, text
    assert "channels = channels + g" in text, text
    assert "Grow(2, 1, 2)" in gen.code and "Grow(4, 3, 3)" in gen.code, gen.code
    assert list(gen.module.Net().state_dict())[:4] == [
        "a.dl1.weight",
        "a.dl1.bias",
        "a.dl2.weight",
        "a.dl2.bias",
    ]


# 3. an unnamed module in a loop: the IR numbers it across the iterations (seed 1000518)
UNNAMED = """\
use torch

model Stack(w, n):
    def forward(x):
        x -> dense(w) as proj
        for i in range(n):
            x -> dense(w).relu -> layernorm() -> dense(w)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Stack(8, 2) as a -> Stack(8, 0) as b -> Stack(4, 3) as c
"""


def test_unnamed_modules_in_a_loop_are_named_by_the_iteration() -> None:
    """Two unnamed ``dense`` and a ``layernorm`` per iteration after a named ``proj``:
    the IR's ``dense2``, ``layer_norm1``, ``dense3`` (iteration 0), ``dense4``, ... are
    ``f"dense{2 * i + 2}"``, ``f"layer_norm{i + 1}"``, ``f"dense{2 * i + 3}"``, the
    state-dict keys unchanged (was `an unnamed 'dense' module in a loop` and a class per
    call)."""
    gen, flat = rolled(UNNAMED, "unnamed", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Stack_3", "Net"], flat
    text = block_class(gen, "Stack")
    assert 'setattr(self, f"dense{2 * i + 2}", nn.Linear(channels, w))' in text, text
    assert 'setattr(self, f"layer_norm{i + 1}", nn.LayerNorm(channels))' in text, text
    assert 'x = getattr(self, f"dense{2 * i + 3}")(x)' in text, text
    keys = [k.rsplit(".", 1)[0] for k in gen.module.Net().c.state_dict()][::2]
    assert keys == ["proj", "dense2", "layer_norm1", "dense3", "dense4", "layer_norm2"] + [
        "dense5",
        "dense6",
        "layer_norm3",
        "dense7",
    ]
    assert list(gen.module.Net().b.state_dict()) == ["proj.weight", "proj.bias"]


UNNAMED_ONE_COUNT = """\
use torch

model Stack(w, n):
    def forward(x):
        for i in range(n):
            x -> dense(w).relu -> dense(w)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Stack(8, 1) as a -> Stack(8, 0) as b -> Stack(4, 1) as c
"""


def test_unnamed_modules_in_a_loop_no_call_runs_twice() -> None:
    """No call runs the loop twice (counts 1 and 0): the progression's step is the
    unnamed ``dense`` calls of one iteration, ``f"dense{2 * i + 1}"``, ``f"dense{2 * i +
    2}"`` (seed 1000816's ``Loop0(8, 0)``, ``Loop0(8, 1)``)."""
    gen, flat = rolled(UNNAMED_ONE_COUNT, "unnamed_one", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    assert 'setattr(self, f"dense{2 * i + 1}", nn.Linear(channels, w))' in text, text
    assert 'setattr(self, f"dense{2 * i + 2}", nn.Linear(' in text, text
    assert list(gen.module.Net().c.state_dict()) == [
        "dense1.weight",
        "dense1.bias",
        "dense2.weight",
        "dense2.bias",
    ]


# 4. a concat join whose first call cannot tell two width texts apart (seed 1000283)
GROW_TIE = """\
use torch

model Grow(g: int, n):
    def forward(x):
        for i in range(n):
            h = dense(x, g) as dl{i + 1}
            x = concat(x, h, dim=-1)
        return x

model Net:
    input_shape = (2,)
    def forward(x):
        x -> Grow(2, 1) as a -> Grow(2, 3) as b
"""


def test_concat_join_after_a_call_where_two_widths_tie_is_one_class() -> None:
    """At the first call ``in_features`` and ``g`` are both 2, so the join's text read
    ``channels + channels`` there and ``channels + g`` at the next call (`the width after
    'concat' is no expression of the source`); the join's texts are now narrowed per
    text of its terms: ``channels = channels + g``."""
    gen, flat = rolled(GROW_TIE, "grow_tie", torch.randn(2, 2))
    assert CLASS.findall(gen.code) == ["Grow", "Net"], gen.code
    assert CLASS.findall(flat) == ["Grow", "Grow_2", "Net"], flat
    assert "channels = channels + g" in block_class(gen, "Grow")
    assert "Grow(2, 2, 1)" in gen.code and "Grow(4, 2, 3)" in gen.code, gen.code


# 5. a tensor made in the loop and read by nothing (seed 1000816)
UNUSED = """\
use torch

model Stack(w, n):
    def forward(x):
        for i in range(n):
            h1 = conv2d(x, w, 3, padding=1)
            x -> conv2d(4, 1) as convs{i}
        return x

model Net:
    input_shape = (4, 6, 6)
    def forward(x):
        x -> Stack(8, 1) as a -> Stack(2, 0) as b -> Stack(3, 2) as c
"""


def test_tensor_made_in_a_loop_and_read_by_nothing_is_one_class() -> None:
    """``h1 = conv2d(x, w, 3, padding=1)`` that no statement reads: its module is made
    (the IR's ``conv2d1``, ``conv2d3``: ``f"conv2d{2 * i + 1}"``) and forward computes and
    drops it as each call's class did, the running width the threaded tensor's (was `an
    assignment to 'h1' the roller does not write` or `the tensor 'h1' is not joined
    back`)."""
    gen, flat = rolled(UNUSED, "unused", torch.randn(2, 4, 6, 6))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert len(CLASS.findall(flat)) == 4, flat
    text = block_class(gen, "Stack")
    made = 'setattr(self, f"conv2d{2 * i + 1}", nn.Conv2d(channels, w, kernel_size=3, padding=1))'
    assert made in text, text
    assert 'h1 = getattr(self, f"conv2d{2 * i + 1}")(x)' in text, text
    keys = [k.rsplit(".", 1)[0] for k in gen.module.Net().c.state_dict()][::2]
    assert keys == ["conv2d1", "convs0", "conv2d3", "convs1"], keys


# 6. a loop that builds nothing, beside a call that runs it no time (seed 2000043)
NOTHING = """\
use torch

model Fill(n: int):
    def forward(x):
        for i in range(n):
            h1 = zeros(3)
            x -> ones_like()
        return x

model Net:
    input_shape = (3, 5)
    def forward(x):
        x -> Fill(0) as a -> Fill(3) as b -> dense(2) as head
"""


def test_loop_building_nothing_beside_a_call_that_runs_it_no_time_is_one_class() -> None:
    """``Fill(0)`` and ``Fill(3)``: no module in the loop, so ``__init__`` writes no loop
    for either (was `the calls of 'Fill' build differently`: the call that ran no
    iteration wrote the loop's header); ``h1 = zeros(3)`` is read by nothing."""
    gen, flat = rolled(NOTHING, "nothing", torch.randn(2, 3, 5))
    assert CLASS.findall(gen.code) == ["Fill", "Net"], gen.code
    assert CLASS.findall(flat) == ["Fill", "Fill_2", "Net"], flat
    text = block_class(gen, "Fill")
    assert "for i in range(n)" not in text and "for i in range(self.n):" in text, text
    assert list(gen.module.Net().a.state_dict()) == []


# 7. a residual temporary of an unnamed module in a loop (seed 1000003)
RESIDUAL_UNNAMED = """\
use torch

model Stack(n, b: bool):
    def forward(x):
        for i in range(n):
            h1 = mish(x).residual
            h1 -> conv1d(4, 3, padding=1, bias=b).residual
            x = add(x, h1)
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Stack(2, false) as a -> Stack(3, true) as b
"""


def test_residual_temporary_of_an_unnamed_module_in_a_loop_is_one_local() -> None:
    """``conv1d(...).residual`` unnamed in the loop: forward's temporary (``conv1d1``,
    ``conv1d2``) is one local ``conv1d`` beside the module's ``f"conv1d{i + 1}"`` (the
    name's string no longer counts as a use of the local: `the iterations of 'i'
    differ`)."""
    gen, flat = rolled(RESIDUAL_UNNAMED, "residual_unnamed", torch.randn(2, 4, 8))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    assert 'conv1d = getattr(self, f"conv1d{i + 1}")(h1)' in text, text
    assert "nn.Conv1d(channels, 4, kernel_size=3, padding=1, bias=b)" in text, text
    assert gen.module.Net().a.conv1d1.bias is None
