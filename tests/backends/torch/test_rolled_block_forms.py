"""Issue 24 item 3: more forms of a block whose calls differ in loop counts written as one
class with the source's loops (``backends/torch/rolled_block.py``). Each program is
executed (``run_accepted`` compares every shape and the parameter count with the IR's),
the rolled class strict-loads the state dict of the build with one class per call
(``roll_networks=False``) and computes the same, and the classes are counted. The forms
still written one class per call keep their located note (``roll_fallbacks``)."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, roll_notes, rolled  # noqa: E402

# 1. a concat join that grows the width: DenseNet's dense block written as one block
DENSE = """\
use torch

model Dense(growth, n):
    def forward(x):
        for i in range(n):
            h = x -> batchnorm() as norms{i} -> conv2d(growth, 3, padding=1) as convs{i}
            x = concat(x, h, dim=1)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Dense(4, 2) as a -> Dense(5, 3) as b -> conv2d(6, 1) as squeeze
          -> Dense(2, 1) as c -> global_avg_pool() -> dense(2) as head
"""


def test_concat_join_that_grows_the_width_is_one_class() -> None:
    """``x = concat(x, h, dim=1)`` after ``h = x -> ...``: the second tensor's layers read
    the running width, and after them the width grows by the second's
    (``channels = channels + growth``); three calls at different counts and input widths
    are one class."""
    gen, flat = rolled(DENSE, "dense", torch.randn(2, 3, 8, 8))
    code = gen.code
    assert CLASS.findall(code) == ["Dense", "Net"], code
    assert CLASS.findall(flat) == ["Dense", "Dense_2", "Dense_3", "Net"], flat
    assert block_class(gen, "Dense").rstrip() + "\n" == textwrap.dedent(
        """\
        class Dense(nn.Module):
            def __init__(self, in_channels, growth, n):
                super().__init__()
                self.n = n
                channels = in_channels
                for i in range(n):
                    setattr(self, f"norms{i}", nn.BatchNorm2d(channels))
                    setattr(self, f"convs{i}", nn.Conv2d(channels, growth, kernel_size=3, padding=1))
                    channels = channels + growth

            def forward(self, x):
                # x: (batch, in_channels, 8, 8)
                for i in range(self.n):
                    h = getattr(self, f"norms{i}")(x)
                    h = getattr(self, f"convs{i}")(h)
                    x = torch.cat([x, h], dim=1)
                return x
        """
    )
    assert "self.a = Dense(3, 4, 2)" in code and "self.b = Dense(11, 5, 3)" in code, code


# the second tensor changes its width itself (a bottleneck) and the concat puts it first
BOTTLENECK = """\
use torch

model Dense(growth, n):
    def forward(x):
        for i in range(n):
            h = x -> batchnorm().relu as norm1s{i} -> conv2d(4 * growth, 1) as conv1s{i}
                  -> batchnorm().relu as norm2s{i} -> conv2d(growth, 3, padding=1) as conv2s{i}
            x = concat(h, x, dim=1)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Dense(4, 1) as a -> Dense(2, 3) as b -> global_avg_pool() -> dense(2) as head
"""


def test_concat_join_after_a_bottleneck_is_one_class() -> None:
    """Inside the second tensor its own width is a text apart (``4 * growth``), so the
    running width is the threaded tensor's until the join, whichever order it names."""
    gen, flat = rolled(BOTTLENECK, "bottleneck", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Dense", "Net"], gen.code
    assert CLASS.findall(flat) == ["Dense", "Dense_2", "Net"], flat
    text = block_class(gen, "Dense")
    assert 'setattr(self, f"norm2s{i}", nn.BatchNorm2d(4 * growth))' in text, text
    assert "            channels = growth + channels\n" in text, text
    assert "            x = torch.cat([h, x], dim=1)\n" in text, text


# an alias joined by a concat: the local keeps the alias's width, the threaded tensor's
# widths are texts apart, and the width grows by both (``test_rolled_block_more.py``)
ALIAS_CONCAT = """\
use torch

model Dense(growth, n):
    def forward(x):
        for i in range(n):
            r = x
            x -> conv2d(growth, 3, padding=1) as convs{i}
            x = concat(x, r, dim=1)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Dense(4, 1) as a -> Dense(2, 2) as b -> global_avg_pool() -> dense(2) as head
"""


def test_alias_joined_by_a_concat_is_one_class() -> None:
    """Was ``the join 'concat' changes the width`` and a class per call."""
    notes, code = roll_notes(ALIAS_CONCAT)
    assert notes == [], notes
    gen, flat = rolled(ALIAS_CONCAT, "alias_concat", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Dense", "Net"], gen.code
    assert CLASS.findall(flat) == ["Dense", "Dense_2", "Net"], flat
    text = block_class(gen, "Dense")
    assert "            channels = growth + channels\n" in text, text
    assert "            x = torch.cat([conv2d, x], dim=1)\n" in text, text


# 2. a loop that runs no iteration at one call and fills a numbered container
ZERO_CONTAINER = """\
use torch

model Stage(width, n: int):
    def forward(x):
        for i in range(n):
            x -> dense(width).relu as layers.{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 0) as a -> Stage(16, 2) as b -> Stage(16, 0) as c -> dense(4) as head
"""


def test_zero_count_loop_filling_a_numbered_container_shares_the_class() -> None:
    """``Stage(16, 0)`` beside ``Stage(16, 2)``, the loop filling ``layers.{i}``: one
    class; the call that runs no iteration holds an empty ``nn.Sequential`` (no
    state-dict key) and is the identity, as its own class was."""
    gen, flat = rolled(ZERO_CONTAINER, "zero_container", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert (
        "        stage = nn.Sequential()\n"
        "        for i in range(n):\n"
        "            stage.append(nn.Linear(channels, width))\n"
        "            channels = width\n"
        "        self.layers = stage\n"
    ) in text, text
    assert "            x = self.layers[i](x)\n" in text, text
    net = gen.module.Net()
    assert type(net.a) is type(net.b) is type(net.c)
    assert isinstance(net.a.layers, torch.nn.Sequential) and len(net.a.layers) == 0
    assert list(net.a.state_dict()) == [] and list(net.c.state_dict()) == []
    x = torch.randn(3, 8)
    assert torch.equal(net.a(x), x)


NETWORK_ZERO = """\
use torch

model Tower(n):
    def forward(x):
        for i in range(n):
            x -> dense(8).relu as layers.{i}
        return x -> dense(2) as head

model none = Tower(0):
    input_shape = (8,)

model two = Tower(2):
    input_shape = (8,)
"""


def test_network_variant_whose_loop_runs_no_iteration_says_why() -> None:
    """A network's variants (not a block's calls) still keep their classes there."""
    notes, code = roll_notes(NETWORK_ZERO)
    assert notes == ["network 'Tower' at 3:7: a loop that runs no iteration in a variant"], notes
    assert CLASS.findall(code) == ["none", "two"], code


# 3. an operation-valued argument without an argument-free module class: a function
ACTIVATION = """\
use torch

model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> dense(width) as fc{i} -> act()
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3, act=exp) as b -> Stage(16, 1, act=log_softmax) as c
          -> Stage(16, 2, act=tanh) as d -> dense(4) as head
"""


def test_operation_argument_without_a_module_class_is_a_function_argument() -> None:
    """``act=exp`` (no module class) and ``act=log_softmax`` (whose module needs ``dim``)
    beside the default ``relu``: one class taking a function (``act=F.relu``, stored as
    ``self.act = act``, applied ``self.act(x)``); each call passes its own
    (``torch.exp``, ``functools.partial(F.log_softmax, dim=-1)``), and the file imports
    functools for it."""
    gen, flat = rolled(ACTIVATION, "functions", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    # a class per operation given: each call's class folds the function it applies
    # (relu and tanh too), so neither build has a module for it
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Stage_3", "Stage_4", "Net"], flat
    text = block_class(gen, "Stage")
    assert "    def __init__(self, in_features, width, n, act=F.relu):\n" in text, text
    assert "        self.n = n\n        self.act = act\n" in text, text
    assert "            x = self.act(x)\n" in text, text
    assert "self.a = Stage(8, 16, 2)\n" in gen.code, gen.code
    assert "self.b = Stage(16, 16, 3, act=torch.exp)\n" in gen.code, gen.code
    assert (
        "self.c = Stage(16, 16, 1, act=functools.partial(F.log_softmax, dim=-1))\n" in gen.code
    ), gen.code
    assert "self.d = Stage(16, 16, 2, act=torch.tanh)\n" in gen.code, gen.code
    assert "\nimport functools\n" in gen.code
    assert "import functools" not in flat  # the classes of one call fold it: not used


# an operation-valued parameter without a default, applied with a keyword (``dim=1``)
SOFTMAX = """\
use torch

model Stage(width, act, n):
    def forward(x):
        for i in range(n):
            x -> dense(width) as fc{i} -> act(dim=1)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, log_softmax, 2) as a -> Stage(16, softmax, 3) as b -> dense(4) as head
"""


def test_operation_argument_applied_with_a_keyword_is_a_partial_function() -> None:
    gen, flat = rolled(SOFTMAX, "softmax", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert "    def __init__(self, in_features, width, act, n):\n" in block_class(gen, "Stage")
    assert "Stage(8, 16, functools.partial(F.log_softmax, dim=1), 2)" in gen.code, gen.code
    assert "Stage(16, 16, functools.partial(F.softmax, dim=1), 3)" in gen.code, gen.code


def test_operation_argument_that_is_no_function_says_why() -> None:
    """``layer_norm`` builds a module with weights per call: no function to pass beside
    ``functools.partial(F.log_softmax, dim=-1)``, so the calls keep their classes with a
    located note (``identity``, its module's instance, rolls:
    test_rolled_operation_args.py)."""
    notes, code = roll_notes(ACTIVATION.replace("act=exp", "act=layer_norm"))
    assert notes == ["block 'Stage' at 3:7: an operation given for 'act' that is no function"]
    assert CLASS.findall(code) == ["Stage", "Stage_2", "Stage_3", "Net"], code  # a, d share


PASSED_ON = """\
use torch

model Inner(width, act = relu):
    def forward(x):
        return x -> dense(width) as fc -> act()

model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> Inner(width, act) as units{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3, act=exp) as b -> dense(4) as head
"""


def test_function_argument_passed_to_an_inner_block_is_passed_on() -> None:
    """An operation without a module class that the block passes on to an inner block in
    its loop: the inner class takes a function (its kind decided first) and the rolled
    class passes its own on; one class each (was a class per call with a note)."""
    notes, _ = roll_notes(PASSED_ON)
    assert notes == [], notes
    gen, flat = rolled(PASSED_ON, "passed_on", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Inner", "Inner_2", "Stage", "Stage_2", "Net"], flat
    assert 'setattr(self, f"units{i}", Inner(channels, width, act))' in gen.code, gen.code
    assert "self.act" not in block_class(gen, "Stage")  # applied by the inner class only


# 4. two temporaries of one iteration that shorten to one name (dense1, dense2: dense)
TWO_DENSE = """\
use torch

model Stage(width, n):
    def forward(x):
        for i in range(n):
            r = x
            x -> layernorm() as norms{i} -> dense(width).gelu as fc{i} -> dense(width) as fc2s{i}
            x = add(x, r)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(16) as stem -> Stage(16, 2) as a -> Stage(16, 3) as b -> dense(4) as head
"""


def test_two_temporaries_that_shorten_to_one_name_share_one_local() -> None:
    """Each call's forward numbers the two ``dense`` temporaries of an iteration
    (``dense1``, ``dense2``; ``dense3``, ``dense4``); the second is made after the first's
    last read, so both are the loop body's ``dense``."""
    gen, flat = rolled(TWO_DENSE, "two_dense", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert (
        "        for i in range(self.n):\n"
        '            layer_norm = getattr(self, f"norms{i}")(x)\n'
        '            dense = getattr(self, f"fc{i}")(layer_norm)\n'
        "            gelu = F.gelu(dense)\n"
        '            dense = getattr(self, f"fc2s{i}")(gelu)\n'
        "            x = dense + x\n"
    ) in text, text


def test_temporary_read_after_the_next_is_made_keeps_its_number_and_says_why() -> None:
    """``layernorm().residual`` after a ``layernorm``: the first temporary is read by the
    residual's add after the second is made, so they cannot share a name; the iterations
    then read differently and the calls keep their classes."""
    source = TWO_DENSE.replace(
        "x -> layernorm() as norms{i} -> dense(width).gelu as fc{i} -> dense(width) as fc2s{i}",
        "x -> layernorm() as n1s{i} -> layernorm().residual as n2s{i}",
    )
    notes, code = roll_notes(source)
    assert notes == ["block 'Stage' at 3:7: the iterations of 'i' differ"], notes
    assert CLASS.findall(code) == ["Stage", "Stage_2", "Net"], code
    rolled(source, "kept_numbers", torch.randn(2, 8))


# 5. the threaded tensor goes on before the second tensor is joined
BEFORE_JOIN = """\
use torch

model Stage(width, n):
    hidden = 2 * width
    def forward(x):
        for i in range(n):
            h = x -> layernorm() as norms{i} -> dense(hidden).gelu as up{i}
                  -> dense(width) as down{i}
            x -> dense(width) as skips{i} -> relu()
            x = add(x, h)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(12) as stem -> Stage(16, 2) as a -> Stage(16, 3) as b -> dense(4) as head
"""


def test_threaded_tensor_going_on_before_the_join_is_one_class() -> None:
    """``x -> dense(width) as skips{i} -> relu()`` between ``h = x -> ...`` and ``x =
    add(x, h)``: the second tensor's widths are texts apart (``nn.Linear(hidden, width)``),
    the local follows the threaded tensor (``channels = width`` after ``skips``)."""
    gen, flat = rolled(BEFORE_JOIN, "before_join", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert (
        "        for i in range(n):\n"
        '            setattr(self, f"norms{i}", nn.LayerNorm(channels))\n'
        '            setattr(self, f"up{i}", nn.Linear(channels, hidden))\n'
        '            setattr(self, f"down{i}", nn.Linear(hidden, width))\n'
        '            setattr(self, f"skips{i}", nn.Linear(channels, width))\n'
        "            channels = width\n"
    ) in text, text
    assert (
        '            h = getattr(self, f"down{i}")(h)\n'
        '            x = getattr(self, f"skips{i}")(x)\n'
        "            x = F.relu(x)\n"
        "            x = x + h\n"
    ) in text, text


def test_threaded_tensor_going_on_under_another_name_is_one_class() -> None:
    """``y = x -> dense(width) as skips{i} -> relu()``, then ``x = add(y, h)``: the
    threaded tensor goes on as ``y`` and the join names it; ``y`` is bound afresh at each
    iteration and read by its join only."""
    source = BEFORE_JOIN.replace(
        "            x -> dense(width) as skips{i} -> relu()\n            x = add(x, h)\n",
        "            y = x -> dense(width) as skips{i} -> relu()\n            x = add(y, h)\n",
    )
    gen, flat = rolled(source, "renamed", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert '            setattr(self, f"skips{i}", nn.Linear(channels, width))\n' in text, text
    assert (
        '            y = getattr(self, f"skips{i}")(x)\n'
        "            y = F.relu(y)\n"
        "            x = y + h\n"
    ) in text, text


@pytest.mark.parametrize(
    ("after", "reason"),
    [
        (
            "            x -> relu()\n            x = add(y, h)\n",
            "a use of 'x' after it goes on as 'y'",
        ),
        (
            "            x = add(y, h)\n            y -> relu()\n",
            "a use of 'y' other than its join",
        ),
    ],
    ids=["old-name-read", "new-name-read-after-join"],
)
def test_threaded_tensor_under_another_name_read_otherwise_says_why(
    after: str, reason: str
) -> None:
    """The old name read before the join, or the new one after it: no width to write."""
    source = BEFORE_JOIN.replace(
        "            x -> dense(width) as skips{i} -> relu()\n            x = add(x, h)\n",
        "            y = x -> dense(width) as skips{i} -> relu()\n" + after,
    )
    notes, code = roll_notes(source)
    assert notes == [f"block 'Stage' at 3:7: {reason}"], notes
    assert CLASS.findall(code) == ["Stage", "Stage_2", "Net"], code


def test_threaded_tensor_changing_the_width_a_second_reads_says_why() -> None:
    """``h = x -> layernorm()`` keeps the running width (its text is ``channels``): the
    threaded tensor changing the local before the concat would change it too."""
    source = BEFORE_JOIN.replace(
        "h = x -> layernorm() as norms{i} -> dense(hidden).gelu as up{i}\n"
        "                  -> dense(width) as down{i}",
        "h = x -> layernorm() as norms{i}",
    ).replace("x = add(x, h)", "x = concat(x, h, dim=1)")
    notes, code = roll_notes(source)
    assert notes == ["block 'Stage' at 3:7: 'x' goes on before 'h' is joined"], notes
    assert CLASS.findall(code) == ["Stage", "Stage_2", "Net"], code
    rolled(source, "before_join_kept", torch.randn(2, 8))


# 6. several inputs: a later input joined to the threaded tensor in the loop
TWO_INPUTS = """\
use torch

model Stage(width, n):
    def forward(x, c):
        for i in range(n):
            x -> dense(width).relu as fc{i}
            x = add(x, c)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        c = x -> dense(16) as cond
        x -> dense(12) as stem
        a = Stage(x, c, 16, 2) as a
        return Stage(a, c, 16, 3) as b
"""


def test_block_with_a_later_input_is_one_class() -> None:
    """``def forward(x, c)`` with ``x = add(x, c)`` in the loop: no module and the width
    kept, so the rolled class takes both inputs (``def forward(self, x, c)``)."""
    gen, flat = rolled(TWO_INPUTS, "two_inputs", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert (
        "        for i in range(n):\n"
        '            setattr(self, f"fc{i}", nn.Linear(channels, width))\n'
        "            channels = width\n"
    ) in text, text
    assert (
        "    def forward(self, x, c):\n"
        "        # x: (batch, in_features)\n"  # the class's name for its width
        "        # c: (batch, 16)\n"
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"fc{i}")(x)\n'
        "            x = F.relu(x)\n"
        "            x = x + c\n"
        "        return x\n"
    ) in text, text


def test_block_reading_a_later_input_otherwise_says_why() -> None:
    """A later input that a chain continues (``c -> dense(width)``) is not written."""
    source = TWO_INPUTS.replace("            x = add(x, c)\n", "            c -> relu()\n")
    notes, code = roll_notes(source)
    assert notes == ["block 'Stage' at 3:7: a block that threads more than one tensor"], notes
    assert CLASS.findall(code) == ["Stage", "Stage_2", "Net"], code


# a second tensor made by a block call, then continued by a chain, joined by a concat
UNIT_SECOND = """\
use torch

model Unit(width):
    def forward(x):
        return x -> layernorm() as norm -> dense(width) as fc

model Stage(width, n):
    def forward(x):
        for i in range(n):
            h = Unit(x, 2 * width) as units{i}
            h = h -> relu() -> dense(width) as outs{i}
            x = concat(x, h, dim=1)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(12) as stem -> Stage(4, 2) as a -> Stage(6, 3) as b -> dense(4) as head
"""


@pytest.mark.parametrize(
    "going_on",
    ["h = h -> relu() -> dense(width) as outs{i}", "h -> relu() -> dense(width) as outs{i}"],
    ids=["assigned", "chain-statement"],
)
def test_second_tensor_made_by_a_block_call_and_continued_by_a_chain_is_one_class(
    going_on: str,
) -> None:
    """``h = Unit(x, 2 * width) as units{i}``, then ``h`` goes on by an assigned chain or
    a chain statement (``h -> ...``), then a concat: one class."""
    source = UNIT_SECOND.replace("h = h -> relu() -> dense(width) as outs{i}", going_on)
    gen, flat = rolled(source, f"unit_second_{going_on[2]}", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Unit", "Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Unit", "Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert (
        "        for i in range(n):\n"
        '            setattr(self, f"units{i}", Unit(channels, 2 * width))\n'
        '            setattr(self, f"outs{i}", nn.Linear(2 * width, width))\n'
        "            channels = channels + width\n"
    ) in text, text
    assert (
        '            h = getattr(self, f"units{i}")(x)\n'
        "            h = F.relu(h)\n"
        '            h = getattr(self, f"outs{i}")(h)\n'
        "            x = torch.cat([x, h], dim=1)\n"
    ) in text, text


DEFAULTED = """\
use torch

model Stack(n):
    def forward(x, mask=ones):
        for i in range(n):
            x = x -> dense(8).relu
        x = multiply(x, mask)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        m = x -> dense(8) as gate
        h = Stack(x, m, 2) as a
        return Stack(h, m, 3) as b -> dense(2) as head
"""


def test_block_with_a_defaulted_input_is_one_class() -> None:
    """``def forward(x, mask=ones)``: the lines building the default when a caller leaves
    the input out stay before the rolled loop."""
    gen, flat = rolled(DEFAULTED, "defaulted", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    assert (
        "    def forward(self, x, mask=None):\n"
        "        # x: (batch, in_features)\n"
        "        # mask: (batch, 8)\n"
        "        if mask is None:\n"
        "            mask = torch.ones_like(x, dtype=torch.float32)\n"
        "        for i in range(self.n):\n"
    ) in text, text
    stack = gen.module.Stack(8, 2)
    x = torch.randn(3, 8)
    torch.testing.assert_close(stack(x), stack(x, torch.ones(3, 8)), rtol=0, atol=0)


def test_defaults_that_differ_between_calls_say_why() -> None:
    """A default built at a size that differs between the calls keeps one class per call,
    with a note."""
    source = DEFAULTED.replace("input_shape = (8,)", "input_shape = (4,)")
    notes, code = roll_notes(source)
    assert CLASS.findall(code) == ["Stack", "Stack_2", "Net"], code
    assert any("block 'Stack' at 3:7" in n and "forward methods differ" in n for n in notes), notes


RETURNED = """\
use torch

model Stack(n):
    def forward(x):
        for i in range(n):
            x = x -> dense(8).relu
        return dense(x, 4) as head

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Stack(2) as a -> Stack(3) as b -> dense(2) as out
"""


def test_block_returning_a_call_after_its_loop_is_one_class() -> None:
    """``return dense(x, 4) as head`` after the loop: the layer after the loop reads the
    running width, and forward returns its call (its local would carry the IR's number,
    which the calls' counts make differ)."""
    gen, flat = rolled(RETURNED, "returned", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    assert "            channels = 8\n        self.head = nn.Linear(channels, 4)\n" in text, text
    assert "            x = F.relu(x)\n        return self.head(x)\n" in text, text


def test_block_returning_an_operation_of_two_tensors_is_one_class() -> None:
    """``return multiply(x, mask)`` after the loop, the mask a defaulted input."""
    source = DEFAULTED.replace(
        "        x = multiply(x, mask)\n        return x\n", "        return multiply(x, mask)\n"
    )
    assert source != DEFAULTED
    gen, _ = rolled(source, "returned_product", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert "            x = F.relu(x)\n        return x * mask\n" in block_class(gen, "Stack")


SAME_WIDTH = """\
use torch

model Stack(n):
    def forward(x):
        for i in range(n):
            x = x -> dense(8).relu
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        return x -> Stack(2) as a -> Stack(3) as b -> dense(2) as head
"""


def test_a_layer_keeps_its_own_width_argument_where_every_call_keeps_the_width() -> None:
    """Every call's input is 8 wide, as each dense's output: the loop still writes the
    width the dense makes (``channels = 8``), so the class built by hand at another input
    width works (before, ``Stack(4, 2)`` built a second layer taking 4 features)."""
    gen, _ = rolled(SAME_WIDTH, "same_width", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert (
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, 8))\n'
        "            channels = 8\n"
    ) in block_class(gen, "Stack")
    assert gen.module.Stack(4, 3)(torch.randn(2, 4)).shape == (2, 8)


def test_a_width_the_loop_never_changes_writes_no_line() -> None:
    """``channels = width`` before the loop and each conv making ``width`` channels: the
    loop body writes no ``channels = width`` of its own."""
    code = roll_notes(RESIDUAL_BLOCK)[1]
    text = code[code.index("class Res(") : code.index("class Net(")]
    assert "channels = width\n        for i in range(n):\n" in text, text
    assert text.count("channels = width") == 1, text


RESIDUAL_BLOCK = """\
use torch

model Res(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            h = x -> conv2d(width, 3, padding=1) as convs{i} -> relu()
            x = add(x, h)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        return x -> Res(4, 1) as a -> Res(4, 2) as b -> flatten() -> dense(2) as head
"""


ALIASED = """\
use torch

model Stack(n, act = relu):
    def forward(x):
        for i in range(n):
            x = x -> dense(8) as fcs{i} -> act()
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        return x -> Stack(2, act=swish) as a -> Stack(3, act=OTHER) as b -> dense(2) as head
"""


@pytest.mark.parametrize(
    ("other", "given"),
    [("exp", "act=F.silu"), ("relu", "act=nn.SiLU")],
    ids=["function", "module-class"],
)
def test_an_operation_given_by_its_alias_is_one_class(other: str, given: str) -> None:
    """``act=swish`` (an alias of ``silu``) applies as the operation it names: the block
    is one class taking ``F.silu`` beside ``torch.exp``, or ``nn.SiLU`` beside the default
    ``nn.ReLU`` (before, the IR recorded no node for the alias and each call was a class)."""
    source = ALIASED.replace("OTHER", other)
    gen, flat = rolled(source, f"aliased_{other}", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    assert f"self.a = Stack(8, 2, {given})" in gen.code, gen.code


STEM_FIRST = """\
use torch

model Stack(n):
    def forward(x):
        x = x -> dense(8)
        for i in range(n):
            x = x -> dense(8).relu
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Stack(2) as a -> Stack(3) as b -> dense(2) as head
"""


def test_an_unnamed_module_before_the_loop_is_one_class() -> None:
    """``x -> dense(8)`` unnamed before a loop of unnamed ones: ``dense1`` at every call,
    the loop's ``dense{i + 2}`` after it (it kept a class per call: 'an unnamed module')."""
    gen, flat = rolled(STEM_FIRST, "stem_first", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    text = block_class(gen, "Stack")
    assert "        self.dense1 = nn.Linear(in_features, 8)\n" in text, text
    assert '            setattr(self, f"dense{i + 2}", nn.Linear(channels, 8))\n' in text, text


def test_an_unnamed_module_after_the_loop_is_named_by_the_count() -> None:
    """After the loop an unnamed module's IR name counts the loop's modules (``dense4``
    at two iterations, ``dense5`` at three): it is named by the count, ``dense{n + 2}``
    after the stem's ``dense1`` (it kept a class per call, the note saying to name it)."""
    source = STEM_FIRST.replace("        return x\n", "        return x -> dense(4)\n")
    notes, code = roll_notes(source)
    assert notes == [], notes
    assert CLASS.findall(code) == ["Stack", "Net"], code
    assert 'setattr(self, f"dense{n + 2}", nn.Linear(channels, 4))' in code, code
    rolled(source, "unnamed_after", torch.randn(2, 6))
    rolled(source.replace("dense(4)\n", "dense(4) as out\n"), "named_after", torch.randn(2, 6))


ACT_AFTER = """\
use torch

model Stage(n, act = relu):
    def forward(x):
        for i in range(n):
            x = x -> dense(8) as fc{i}
        return x -> dense(4) as out -> act()

model Net:
    input_shape = (8,)
    def forward(x):
        return x -> Stage(2, act=exp) as a -> Stage(3, act=tanh) as b -> dense(2) as head
"""


def test_a_local_named_after_the_operation_a_call_gave_is_named_after_the_parameter() -> None:
    """After the loop, ``-> act()`` ends a chain whose local each call's class names after
    its operation (``exp1``, ``tanh1``): the one class names it after the parameter
    (``act1``); it kept a class per call ('the calls' forward methods differ')."""
    gen, flat = rolled(ACT_AFTER, "act_after", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert "        act1 = self.act(act1)\n        return act1\n" in block_class(gen, "Stage")
