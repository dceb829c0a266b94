"""Issue 24 item 3, more forms of a network used through variants written as one class
(``backends/torch/rolled.py``, ``network_walk.py``): each rolled variant builds the modules
(keys, initial weights) of its class written out (``roll_networks=False``), strict-loads
its weights and computes the same (``one_class.rolls_exactly``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import build, rolls_exactly, same  # noqa: E402
from tests.backends.torch.test_network_roll_forms import (  # noqa: E402
    BLOCKS,
    DENSE,
    JOINS,
    RESIDUAL,
)

# unnamed modules in network loops: a residual's two convs, a norm after the join, and a
# conv before a named norm in a second loop; unnamed ones outside loops around them
UNNAMED = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1)
        for i in range(n):
            h = x -> conv2d(width, kernel=3, padding=1).relu -> conv2d(width, 3, padding=1)
            x = add(x, h)
            x -> batchnorm().relu
        for i in range(n):
            x -> conv2d(2 * width, 1) -> batchnorm() as norms{i}
        x -> flatten() -> dense(10)
        return x

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2):
    input_shape = (3, 8, 8)
"""


def test_unnamed_modules_in_network_loops_take_the_irs_names() -> None:
    """The IR numbers unnamed modules on across iterations (``conv2d2``, ``conv2d3``,
    ``conv2d4``, ...): ``setattr(self, f"conv2d{2 * i + 2}", ...)``, as the block roller
    writes them (it was an AttributeError: the network's walk had no ``numbers``). The
    second loop numbers on from the first's count, ``conv2d{2 * n + i + 2}`` (it was
    ``conv2d{i + 6}``, which both variants' ``n = 2`` fit, but a class built at ``n = 3``
    made ``conv2d6`` and ``conv2d7`` of the first loop again)."""
    code = rolls_exactly(UNNAMED, "unnamed", torch.randn(2, 3, 8, 8))
    assert (
        "        self.conv2d1 = nn.Conv2d(3, width, kernel_size=3, padding=1)\n"
        "        channels = width\n"
        "        for i in range(n):\n"
        "            setattr(\n"
        '                self, f"conv2d{2 * i + 2}", nn.Conv2d(channels, width, kernel_size=3,'
        " padding=1)\n"
        "            )\n"
        "            setattr(\n"
        '                self, f"conv2d{2 * i + 3}", nn.Conv2d(channels, width, kernel_size=3,'
        " padding=1)\n"
        "            )\n"
        '            setattr(self, f"batchnorm{i + 1}", nn.BatchNorm2d(channels))\n'
        "        for i in range(n):\n"
        '            setattr(self, f"conv2d{2 * n + i + 2}", nn.Conv2d(channels, 2 * width,'
        " kernel_size=1))\n"
        "            channels = 2 * width\n"
        '            setattr(self, f"norms{i}", nn.BatchNorm2d(channels))\n'
        "        self.dense1 = nn.Linear(channels * 8 * 8, 10)\n"
    ) in code, code


def test_unnamed_modules_of_one_iteration_take_the_irs_names() -> None:
    """A loop of one iteration in every variant: the step is ``k`` unnamed calls of the
    operation in the body (here 2), one visit each."""
    code = rolls_exactly(
        UNNAMED.replace("Net(4, 2)", "Net(4, 1)").replace("Net(6, 2)", "Net(6, 1)"),
        "unnamed_one",
        torch.randn(2, 3, 8, 8),
    )
    assert 'f"conv2d{2 * i + 2}"' in code, code
    assert 'setattr(self, f"conv2d{2 * n + i + 2}", ' in code  # numbered on from the first loop


def test_unnamed_modules_in_nested_network_loops_are_named_by_both_targets() -> None:
    """Numbered on across two loops' counts (``batchnorm1`` to ``batchnorm4`` at two
    iterations of two): ``f"batchnorm{i * 2 + j + 1}"`` (it fell back: 'an unnamed
    'batchnorm' module in a loop at 10:22'); forward is the variants' own, which read
    alike (``test_rolled_nested_loops`` has the looped forward)."""
    source = UNNAMED.replace(
        "            x -> batchnorm().relu\n",
        "            for j in range(2):\n                x -> batchnorm().relu\n",
    )
    code = rolls_exactly(source, "nested", torch.randn(2, 3, 8, 8))
    assert (
        "            for j in range(2):\n"
        '                setattr(self, f"batchnorm{i * 2 + j + 1}", nn.BatchNorm2d(channels))\n'
    ) in code, code


# modules of tensors other than the threaded one in network loops: a tensor bound before
# the loop going on (rebound, and by a chain statement) and a later input's projection
# per iteration, each joined to the threaded tensor without a module
ANOTHER = """\
use torch

model Net(width, n):
    def forward(x, cond):
        e = dense(cond, width) as proj
        x -> dense(width) as stem
        for i in range(n):
            e = dense(e, width) as mix{i}
            x = add(x, e)
        for i in range(n):
            e -> dense(width) as post{i} -> relu()
            t = cond -> dense(width) as temb{i} -> silu()
            x -> dense(width) as fc{i}
            x = add(x, t)
            x = add(x, e)
        return x -> dense(3) as head

model small = Net(4, 2):
    input_shape = {x: (5,), cond: (6,)}

model wide = Net(6, 2):
    input_shape = {x: (5,), cond: (6,)}
"""


def test_modules_of_another_tensor_in_network_loops_roll() -> None:
    """Built from that tensor's own width text, with no ``channels`` line: the local
    stays the threaded tensor's (``fc{i}`` reads it)."""
    code = rolls_exactly(ANOTHER, "another", torch.randn(2, 5), torch.randn(2, 6))
    assert (
        "        channels = width\n"
        "        for i in range(n):\n"
        '            setattr(self, f"mix{i}", nn.Linear(width, width))\n'
        "        for i in range(n):\n"
        '            setattr(self, f"post{i}", nn.Linear(width, width))\n'
        '            setattr(self, f"temb{i}", nn.Linear(6, width))\n'
        '            setattr(self, f"fc{i}", nn.Linear(channels, width))\n'
        "        self.head = nn.Linear(channels, 3)\n"
    ) in code, code


def test_a_module_of_another_tensor_that_changes_its_width_rolls() -> None:
    """``e`` is ``width`` wide at the first iteration and ``2 * width`` after: its own
    local carries its width across the iterations (``e_channels``), as ``channels`` the
    threaded tensor's. The iterations wrote different modules (``nn.Linear(width, 2 *
    width)``, then ``nn.Linear(2 * width, 2 * width)``): ``the iterations of 'i'
    differ``, a class per variant."""
    source = ANOTHER.replace("e = dense(e, width) as mix{i}", "e = dense(e, 2 * width) as mix{i}")
    source = source.replace("            x = add(x, e)\n        for", "        for")
    source = source.replace("e -> dense(width) as post{i}", "e -> dense(2 * width) as post{i}")
    source = source.replace("            x = add(x, e)\n", "")
    code = rolls_exactly(source, "another_grows", torch.randn(2, 5), torch.randn(2, 6))
    assert (
        "        e_channels = width\n"
        "        channels = width\n"
        "        for i in range(n):\n"
        '            setattr(self, f"mix{i}", nn.Linear(e_channels, 2 * width))\n'
        "            e_channels = 2 * width\n"
        "        for i in range(n):\n"
        '            setattr(self, f"post{i}", nn.Linear(e_channels, 2 * width))\n'
        "            e_channels = 2 * width\n"
    ) in code, code


def test_a_module_of_another_tensor_whose_width_reads_the_count_rolls() -> None:
    """``e = dense(e, width * (i + 2))``: the text read at the next iteration would give
    another number (it fell back with ``'width * (i + 2)' is not the input width``), so
    the local holds the number, and an inner loop of the stage reads it too."""
    source = ANOTHER.replace(
        "            e = dense(e, width) as mix{i}\n            x = add(x, e)\n",
        "            for j in range(2):\n"
        "                e = dense(e, width * (i + 2) + j) as mix{2 * i + j}\n",
    )
    code = rolls_exactly(source, "another_count", torch.randn(2, 5), torch.randn(2, 6))
    assert (
        "            for j in range(2):\n"
        '                setattr(self, f"mix{2 * i + j}", nn.Linear(e_channels, width * (i + 2) +'
        " j))\n"
        "                e_channels = width * (i + 2) + j\n"
    ) in code, code


# a per-stage skip kept for after the loop (the last stage's input), its width changed
# after it is saved (downsampling stages), read by a module and a join after the loop
SKIP = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            s = x
            x -> conv2d(width * 2 ** (i + 1), 3, stride=2, padding=1) as downs{i} -> relu()
        x -> upsample(scale_factor=2) -> conv2d(width, 1) as up
        s -> conv2d(width, 1) as lateral
        x = add(x, s)
        x -> global_avg_pool() -> dense(10) as head
        return x

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2):
    input_shape = (3, 8, 8)
"""


def test_a_skip_kept_after_a_network_loop_rolls_with_its_own_width() -> None:
    """The local changes after ``s = x`` in the body, so the skip's width is a local of
    its own (``s_channels = channels``): ``nn.Conv2d(s_channels, width, ...)`` after the
    loop, where the variants wrote 8 and 12 (it fell back: ``the tensor 's' is not
    joined back``)."""
    code = rolls_exactly(SKIP, "skip", torch.randn(2, 3, 8, 8))
    assert (
        "        channels = width\n        for i in range(n):\n            s_channels = channels\n"
    ) in code, code
    assert "            channels = width * 2 ** (i + 1)\n" in code
    assert "        self.up = nn.Conv2d(channels, width, kernel_size=1)\n" in code
    assert "        self.lateral = nn.Conv2d(s_channels, width, kernel_size=1)\n" in code


def test_a_skip_kept_after_a_network_loop_of_one_width_reads_the_local() -> None:
    """The local holds the skip's width after the loop: no line of its own."""
    source = SKIP.replace("width * 2 ** (i + 1), 3, stride=2, padding=1", "width, 3, padding=1")
    source = source.replace("x -> upsample(scale_factor=2) -> conv2d", "x -> conv2d")
    code = rolls_exactly(source, "skip_same", torch.randn(2, 3, 8, 8))
    assert "s_channels" not in code, code
    assert "        self.lateral = nn.Conv2d(channels, width, kernel_size=1)\n" in code


def test_a_skip_whose_local_would_clash_takes_another_name() -> None:
    """``s_channels`` is a parameter of the network: the skip's local, which would shadow
    it, is ``s_channels_`` (it fell back: ``the names ['s_channels'] clash``)."""
    source = SKIP.replace("Net(width, n)", "Net(width, n, s_channels=0)")
    code = rolls_exactly(source, "skip_clash", torch.randn(2, 3, 8, 8))
    assert "            s_channels_ = channels\n" in code, code
    assert "        self.lateral = nn.Conv2d(s_channels_, width, kernel_size=1)\n" in code


def test_a_skip_saved_before_an_inner_loop_keeps_its_own_width() -> None:
    """``s = x`` then an inner loop that changes the width: the inner loop changes the
    local, so the skip has its own (it was the IR's number, 8 and 12: ``the variant
    'wide' builds differently``). Forward stays written out for the variants' count (the
    loop writer cannot thread the last stage's own locals through the inner loop), so the
    class refuses another count: it made ``downs2`` at three and never applied it."""
    source = SKIP.replace(
        "            x -> conv2d(width * 2 ** (i + 1), 3, stride=2, padding=1) as downs{i}"
        " -> relu()\n",
        "            for j in range(2):\n"
        "                x -> conv2d(width * 2 ** (i + 1), 3, padding=1) as downs{i}.{j}"
        " -> relu()\n"
        "            x -> maxpool(2)\n",
    )
    code = rolls_exactly(source, "skip_inner", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(n):\n"
        "            s_channels = channels\n"
        "            stage = nn.Sequential()\n"
        "            for j in range(2):\n"
    ) in code, code
    assert "        self.lateral = nn.Conv2d(s_channels, width, kernel_size=1)\n" in code
    assert (
        "        if n != 2:  # forward is written out for this count\n"
        '            raise ValueError(f"Net is written for n == 2, not {n}")\n'
        "        for i in range(n):\n"
    ) in code


# SKIP with variants of different counts
SKIP_COUNTS = SKIP.replace("model wide = Net(6, 2):", "model wide = Net(6, 3):")


@pytest.mark.parametrize("source", [SKIP, SKIP_COUNTS], ids=["agree", "differ"])
def test_a_skip_read_after_a_network_loop_through_modules_runs_the_loop(source: str) -> None:
    """``s = x`` opening each iteration and ``s -> conv2d(width, 1) as lateral`` after the
    loop: forward runs the source's loop (``s = x`` at each iteration's start), the
    lateral conv reading the running width at the last one's start. The variants' own
    forwards bind ``s`` after the loop (``s = self.lateral(x)``), which made it fall back
    (``the iterations of 'i' differ``), written out for one count where they agreed."""
    code = rolls_exactly(source, "skip_loop", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(self.n):\n"
        "            s = x\n"
        '            x = getattr(self, f"downs{i}")(x)\n'
        "            x = F.relu(x)\n"
        "        upsample1 = self.upsample1(x)\n"
    ) in code, code
    assert "        s = self.lateral(s)\n" in code
    assert "        self.lateral = nn.Conv2d(s_channels, width, kernel_size=1)\n" in code


@pytest.mark.parametrize("other", ["Net(4, 1)", "Net(4, 3)", "Net(5, 4)"])
def test_a_skip_read_after_a_network_loop_built_at_another_count(other: str) -> None:
    """The rolled ``Net`` built by hand at a count no variant has applies every module it
    makes (``downs2`` of ``Net(4, 3)`` was made and never applied) and computes what that
    variant written out computes."""
    x = torch.randn(2, 3, 16, 16)
    rolled, _, _ = build(SKIP, "skip_rolled")
    deeper = SKIP + f"\nmodel deeper = {other}:\n    input_shape = (3, 16, 16)\n"
    written_out, _, _ = build(deeper, "skip_deeper", roll=False)
    torch.manual_seed(0)
    mine = eval(other, {"Net": rolled.Net})
    torch.manual_seed(0)
    same(mine, written_out.deeper(), x)


def test_a_skip_bound_again_first_after_a_network_loop_runs_the_loop() -> None:
    """``s -> conv2d(width, 1) as lateral`` before the threaded tensor's steps after the
    loop: ``s`` holds the lateral's output from there, ``x`` the loop's."""
    source = SKIP_COUNTS.replace(
        "        x -> upsample(scale_factor=2) -> conv2d(width, 1) as up\n"
        "        s -> conv2d(width, 1) as lateral\n",
        "        s -> conv2d(width, 1) as lateral\n"
        "        x -> upsample(scale_factor=2) -> conv2d(width, 1) as up\n",
    )
    code = rolls_exactly(source, "skip_first", torch.randn(2, 3, 8, 8))
    assert (
        "            x = F.relu(x)\n        s = self.lateral(s)\n        x = self.upsample1(x)\n"
    ) in code, code


# a loop's container whose children forward applies one by one (a relu after each)
CHILDREN = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            for j in range(2):
                x -> conv2d(width * 2 ** (i + 1), 3, padding=1) as downs{i}.{j} -> relu()
            x -> maxpool(2)
        x -> global_avg_pool() -> dense(10) as head
        return x

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2):
    input_shape = (3, 8, 8)
"""


def test_a_container_whose_children_forward_applies_one_by_one_is_not_applied_whole() -> None:
    """``getattr(self, f"downs{i}")[j](x)``, ``F.relu``: the first child is not the
    container (forward applied ``self.downs0(x)``, both convs, then the second again,
    and computed otherwise than the variants' classes). Forward runs the source's loops:
    written out (``self.downs0[0](x)``, was 'the layer 'downs0.0' in a loop is not a
    numbered child'), a class built with a third stage never applied it."""
    code = rolls_exactly(CHILDREN, "children", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(self.n):\n"
        "            for j in range(2):\n"
        '                x = getattr(self, f"downs{i}")[j](x)\n'
        "                x = F.relu(x)\n"
    ) in code, code


# a skip made by a module of the threaded tensor in each stage (FPN's lateral), the
# threaded tensor going on without it; after the loop it is the last stage's
LATERAL = SKIP.replace(
    "            s = x\n", "            s = x -> conv2d(width, 1) as laterals{i}\n"
).replace("        s -> conv2d(width, 1) as lateral\n", "")


def test_a_skip_made_by_a_module_in_a_network_loop_rolls() -> None:
    """Built from the local's text with no line (as another tensor's): the threaded
    tensor's width stays in the local for ``downs{i}``."""
    code = rolls_exactly(LATERAL, "lateral", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(n):\n"
        '            setattr(self, f"laterals{i}", nn.Conv2d(channels, width, kernel_size=1))\n'
    ) in code, code
    assert "s_channels" not in code


def test_a_skip_made_without_a_module_keeps_its_own_width() -> None:
    """``s = x -> relu()``: its width is the local's text, which the stage then changes,
    so it gets its own local after its steps."""
    source = SKIP.replace("            s = x\n", "            s = x -> relu()\n")
    code = rolls_exactly(source, "skip_relu", torch.randn(2, 3, 8, 8))
    assert "            s_channels = channels\n" in code, code
    assert "        self.lateral = nn.Conv2d(s_channels, width, kernel_size=1)\n" in code


def test_a_second_tensor_joined_after_the_network_loop_rolls() -> None:
    """``h = x -> ... as convs{i}`` in the loop, ``x = add(x, h)`` after it (it fell back
    with ``the tensor 'h' is not joined back``)."""
    source = (
        RESIDUAL.replace("            x = add(x, h)\n", "")
        .replace("        x -> flatten()", "        x = add(x, h)\n        x -> flatten()")
        .replace(", 2)", ", 1)")
    )
    code = rolls_exactly(source, "joined_after", torch.randn(2, 3, 8, 8))
    assert (
        '            setattr(self, f"convs{i}", nn.Conv2d(channels, width, kernel_size=3,'
        " padding=1))\n"
        "        self.head = nn.Linear(channels * 8 * 8, 10)\n"
    ) in code, code


@pytest.mark.parametrize(
    ("source", "traced"),
    [(UNNAMED, False), (ANOTHER, False), (SKIP, False), (LATERAL, False)],
    ids=["unnamed", "another", "skip", "lateral"],
)
def test_verify_traces_each_variant_of_the_rolled_forms(source: str, traced: bool) -> None:
    """``aurane verify`` finds nothing wrong with the rolled forms. A forward that runs the
    source's loops over ``self.n`` (a count the constructor takes) is named "not traced"
    and checked by its parameters (the skip read after the loop through other modules
    too, which was written out for the one count and mapped statement by statement)."""
    from aurane.verify import load_generated, verify_model

    gen = load_generated(source, "more.aur")
    assert ("in range(self.n):" in gen.code) is not traced, gen.code
    for variant in ("small", "wide"):
        report = verify_model(gen, variant, device="meta")
        assert not report.diagnostics, report.diagnostics
        if traced:
            assert not report.unmapped_classes, report.unmapped_classes
            assert report.values_checked >= 8, report
        else:
            assert sorted(report.unmapped_classes) == ["small", "wide"], report
            assert report.parameters_checked >= 1, report


def test_a_skip_read_by_nothing_rolls() -> None:
    """``s = x`` in the loop and never read: nothing to build (it fell back with ``the
    tensor 's' is not joined back``)."""
    source = RESIDUAL.replace("h = x -> ", "s = x\n            x -> ")
    source = source.replace("x = add(x, h)", "x -> relu()")
    code = rolls_exactly(source, "skip_unread", torch.randn(2, 3, 8, 8))
    assert "s_channels" not in code, code


# a skip kept by one loop and read by a later loop that changes the width first
LATER_LOOP = """\
use torch

model Net(width, n):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            s = x
            x -> conv2d(width, 3, padding=1) as a{i}
        for i in range(n):
            x -> conv2d(2 * width, 3, padding=1) as b{i}
            t = s -> conv2d(2 * width, 1) as c{i}
            x = add(x, t)
        x -> global_avg_pool() -> dense(10) as head
        return x

model small = Net(4, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2):
    input_shape = (3, 8, 8)
"""


def test_a_skip_read_by_a_later_loop_keeps_its_own_width() -> None:
    """The local still holds the skip's width after its loop, but the next loop changes
    it before ``c{i}`` reads the skip: a first walk narrows the skip to its own local
    (it built 4 and 6 there, so the variants built differently)."""
    code = rolls_exactly(LATER_LOOP, "later_loop", torch.randn(2, 3, 8, 8))
    assert (
        "        for i in range(n):\n"
        "            s_channels = channels\n"
        '            setattr(self, f"a{i}", nn.Conv2d(channels, width, kernel_size=3, padding=1))\n'
    ) in code, code
    assert (
        '            setattr(self, f"c{i}", nn.Conv2d(s_channels, 2 * width, kernel_size=1))\n'
        in code
    )


def test_a_network_loop_run_a_different_number_of_times_rolls() -> None:
    """``Net(4, 2)`` and ``Net(6, 3)``: the variants' unrolled forwards differ (it fell
    back with ``the variants' forward methods differ``), so forward runs the source's
    loop, reading the count from the module (``self.n``) and each iteration's module by
    its name (``getattr``)."""
    source = RESIDUAL.replace("Net(6, 2)", "Net(6, 3)")
    code = rolls_exactly(source, "counts", torch.randn(2, 3, 8, 8))
    assert "        super().__init__()\n        self.n = n\n" in code, code
    assert (
        "        x = self.stem(x)\n"
        "        for i in range(self.n):\n"
        '            h = getattr(self, f"convs{i}")(x)\n'
        "            h = F.relu(h)\n"
        "            x = x + h\n"
        "        x = torch.flatten(x, 1)\n"
    ) in code


@pytest.mark.parametrize(
    ("source", "counts", "inputs", "blocks"),
    [
        (JOINS, ("Net(6, 3, 2)", "Net(6, 3, 3)"), (torch.randn(2, 5), torch.randn(2, 6)), ()),
        (BLOCKS, ("Net(6, 2, Unit)", "Net(6, 3, Unit)"), (torch.randn(2, 5),), ("Unit",)),
        (DENSE, ("Net(6, 2, Layer)", "Net(6, 3, Layer)"), (torch.randn(2, 3, 8, 8),), ("Layer",)),
        (  # unnamed convs in the loop: getattr(self, f"conv2d{i + 2}")
            RESIDUAL.replace(" as convs{i}", ""),
            ("Net(6, 2)", "Net(6, 3)"),
            (torch.randn(2, 3, 8, 8),),
            (),
        ),
    ],
    ids=["joins", "blocks", "dense", "unnamed"],
)
def test_network_loops_of_second_tensors_run_differently_often_roll(
    source: str, counts: tuple[str, str], inputs: tuple[torch.Tensor, ...], blocks: tuple[str, ...]
) -> None:
    code = rolls_exactly(source.replace(*counts), "counts_forms", *inputs, blocks=blocks)
    assert "        for i in range(self.n):\n" in code, code


def test_verify_names_a_network_of_looped_forward_as_not_traced() -> None:
    """Forward's loop lines up with no one variant's graph: ``aurane verify`` names the
    variants as not traced, as a rolled block's class, never a false mismatch."""
    from aurane.verify import load_generated, verify_model

    gen = load_generated(RESIDUAL.replace("Net(6, 2)", "Net(6, 3)"), "counts.aur")
    for variant in ("small", "wide"):
        report = verify_model(gen, variant, device="meta")
        assert not report.diagnostics, report.diagnostics
        assert sorted(report.unmapped_classes) == ["small", "wide"], report.unmapped_classes


def test_a_network_loop_run_differently_often_beside_init_rules_rolls() -> None:
    """``init dense: normal(0.02)`` gives each variant the same ``_init_weights``, kept
    before the looped forward (it fell back with ``the variants' forward methods
    differ``): the same initial weights as the classes written out."""
    source = RESIDUAL.replace("Net(6, 2)", "Net(6, 3)").replace(
        "    def forward(x):\n", "    init dense: normal(0.02)\n    def forward(x):\n", 1
    )
    code = rolls_exactly(source, "counts_init", torch.randn(2, 3, 8, 8))
    assert (
        "        self._init_weights()\n\n"
        "    def _init_weights(self):\n"
        "        # init dense: normal(std=0.02)\n"
    ) in code, code
    assert "    def forward(self, x):\n" in code
    assert "        for i in range(self.n):\n" in code


# a container of stages, each filled by an inner loop (``as stages.{i}.{j}``)
STAGES = """\
use torch

model Net(width, n, m):
    def forward(x):
        x -> conv2d(width, 3, padding=1) as stem
        for i in range(n):
            for j in range(m):
                x -> conv2d(width, 3, padding=1) as stages.{i}.{j} -> relu()
        x -> flatten() -> dense(10) as head
        return x

model small = Net(4, 2, 2):
    input_shape = (3, 8, 8)

model wide = Net(6, 2, 2):
    input_shape = (3, 8, 8)
"""


@pytest.mark.parametrize(
    "counts", [("Net(6, 2, 2)", "Net(6, 2, 2)"), ("Net(6, 2, 2)", "Net(6, 3, 2)")]
)
def test_a_container_a_nested_network_loop_fills_rolls(counts: tuple[str, str]) -> None:
    """``stages`` is made before the outer loop and each stage appended after its inner
    loop (it fell back with ``a container below another in a loop``); where the variants
    run the loops differently often, forward reads ``self.stages[i][j]``."""
    code = rolls_exactly(STAGES.replace(*counts), "stages", torch.randn(2, 3, 8, 8))
    assert (
        "        self.stages = nn.Sequential()\n"
        "        channels = width\n"
        "        for i in range(n):\n"
        "            stage = nn.Sequential()\n"
        "            for j in range(m):\n"
        "                stage.append(nn.Conv2d(channels, width, kernel_size=3, padding=1))\n"
        "            self.stages.append(stage)\n"
    ) in code, code
    if counts[0] != counts[1]:
        assert "                x = self.stages[i][j](x)\n" in code, code


def test_a_container_a_nested_block_loop_fills_is_one_class() -> None:
    """The same container in a block whose calls differ in loop counts: one class (it was
    a class per call with ``a container below another in a loop``)."""
    from tests.backends.torch.one_class import CLASS, rolled

    source = """\
    use torch

    model Stages(width, n, m):
        def forward(x):
            for i in range(n):
                for j in range(m):
                    x -> conv2d(width, 3, padding=1) as stages.{i}.{j} -> relu()
            return x

    model Net:
        input_shape = (3, 8, 8)
        def forward(x):
            x -> Stages(4, 2, 2) as a -> Stages(5, 3, 2) as b -> global_avg_pool()
              -> dense(2) as head
    """
    gen, flat = rolled(source, "block_stages", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Stages", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stages", "Stages_2", "Net"], flat
    assert "                x = self.stages[i][j](x)\n" in gen.code, gen.code


def test_a_looped_network_forward_keeps_its_input_dtype_check() -> None:
    """Variants that declare one ``input_dtype`` and run a loop differently often: the
    check, naming the instance's class, stays at the top of the forward written with the
    source's loops (it fell back with ``the variants' forward methods differ``)."""
    source = RESIDUAL.replace("Net(6, 2)", "Net(6, 3)").replace(
        "    input_shape = (3, 8, 8)\n", "    input_shape = (3, 8, 8)\n    input_dtype = float32\n"
    )
    code = rolls_exactly(source, "counts_dtype", torch.randn(2, 3, 8, 8))
    assert (
        "        # x: (batch, 3, 8, 8)\n"
        "        if x.dtype != torch.float32:\n"
        '            raise TypeError(f"{type(self).__name__} expects float32 input, got {x.dtype}")\n'
        "        x = self.stem(x)\n"
        "        for i in range(self.n):\n"
    ) in code, code
    module, _, _ = build(source, "counts_dtype_run")
    with pytest.raises(TypeError, match="^wide expects float32 input"):
        module.wide()(torch.zeros(2, 3, 8, 8, dtype=torch.float64))
