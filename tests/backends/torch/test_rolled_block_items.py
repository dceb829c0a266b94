"""Issue 24 item 3: blocks given as values to a block with loops, a model-valued parameter
(``model Stage(w, n, block = Basic)``, ``for i in range(n): x -> block(w)``) or rows of
a config list (``for w, b in cfg: x -> Inner(w, b)``, EfficientNetV2's mix of ``MBConv``
and ``FusedMBConv``). Calls giving different blocks kept a class per call ('block' does
not name the IR's block class, 'b' is not the IR's argument block); the rolled class
takes the block classes as arguments and builds ``block(...)``, reading the width after
it from the module built (``channels = layer.out_channels``, each block's class storing
its own). Each program is compiled rolled and with one class per call: one class, the
same modules in the same order, a strict load, equal outputs, and ``roll_check``
rebuilding the rolled class at arguments no call gives."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    per_call,
    roll_notes,
    twin,
)

BLOCKS = """\
model Basic(width):
    def forward(x):
        x -> dense(width).relu

model Wide(width):
    def forward(x):
        x -> dense(width * 2).relu -> dense(width)

"""


def _rolled(source: str, name: str, stage: str = "Stage", shape: tuple[int, ...] = (3, 4)) -> str:
    """The checks of the module docstring; the rolled class ``stage``."""
    checked = twin(source, name, torch.randn(*shape))
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert CLASS.findall(flat).count(stage) == 1 and f"class {stage}_2(" in flat, flat
    assert f"class {stage}_2(" not in gen.code, gen.code
    assert counts["calls"] >= 2, counts
    return block_class(gen, stage)


PARAMETER = (
    BLOCKS.replace("-> dense(width)\n", "-> dense(width * 3)\n")
    + """\
model Stage(w, n, block = Basic):
    def forward(x):
        for i in range(n):
            x -> block(w)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(8, 2) as s -> Stage(6, 3, Wide) as t -> dense(2) as head
"""
)


def test_a_parameter_holding_a_block_in_a_loop() -> None:
    """``Stage(4, 8, 2)`` and ``Stage(8, 6, 3, block=Wide)``: one class building
    ``block(channels, w)`` per iteration, named ``block1``, ``block2``, ... as the IR
    names a parameter's calls; it was ``Stage`` and ``Stage_2`` with "'block' does not
    name the IR's block class". ``Wide`` leaves ``3 * width``: each block's class
    stores its width, which the loop reads from the module it built."""
    stage = _rolled(PARAMETER, "parameter")
    assert "    def __init__(self, in_features, w, n, block=Basic):\n" in stage, stage
    assert (
        "        for i in range(n):\n"
        "            layer = block(channels, w)\n"
        '            setattr(self, f"block{i + 1}", layer)\n'
        "            channels = layer.out_channels\n"
    ) in stage, stage
    _, code, _ = build(PARAMETER, "parameter_code")
    assert "self.t = Stage(8, 6, 3, block=Wide)" in code
    assert "        self.out_channels = width * 3\n" in code  # Wide's
    assert "        self.out_channels = width\n" in code  # Basic's


def test_a_parameter_holding_a_rolled_block() -> None:
    """A block given whose own class is rolled (``Deep(in_features, width, k)``, its loop
    leaving ``width`` or, at ``k = 0``, its input's): the class stores the width its loop
    left (``self.out_channels = channels``, last), not an expression no count-0 call
    shows; the caller passes each block its own arguments (``block(channels, w, i +
    1)``)."""
    source = """\
model Deep(width, k):
    def forward(x):
        for j in range(k):
            x -> dense(width).relu
        return x

model Wide(width, k):
    def forward(x):
        x -> dense(width * 2).relu
        return x

model Stage(w, n, block = Deep):
    def forward(x):
        for i in range(n):
            x -> block(w, i + 1)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(8, 2) as s -> Stage(6, 3, Wide) as t -> Deep(3, 2) -> dense(2) as head
"""
    stage = _rolled(source, "rolled_inner")
    assert "            layer = block(channels, w, i + 1)\n" in stage, stage
    _, code, _ = build(source, "rolled_inner_code")
    deep = code[code.index("class Deep(") : code.index("class Wide(")]
    assert "            channels = width\n        self.out_channels = channels\n" in deep, deep
    assert "        self.out_channels = width * 2\n" in code


ROWS_TO_INNER = (
    BLOCKS
    + """\
model Inner(w, block):
    def forward(x):
        x -> block(w) -> dense(w)

model Stage(cfg):
    def forward(x):
        for w, b in cfg:
            x -> Inner(w, b)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8, Basic), (6, Wide)]) as s -> Stage([(4, Wide), (3, Basic), (5, Wide)]) as t -> dense(2) as head
"""
)


def test_a_block_from_a_row_passed_on_to_an_inner_block() -> None:
    """``for w, b in cfg: x -> Inner(w, b)``: the rows' blocks are passed on as the
    classes the calls give (``Stage(4, ((8, Basic), (6, Wide)))``), each checked against
    the class the inner block's class takes at that call; it was "'b' is not the IR's
    argument block"."""
    stage = _rolled(ROWS_TO_INNER, "rows_inner")
    assert (
        "        for i, (w, b) in enumerate(cfg):\n"
        '            setattr(self, f"inner{i + 1}", Inner(channels, w, b))\n'
    ) in stage, stage
    model, code, _ = build(ROWS_TO_INNER, "rows_inner_code")
    assert "Stage(4, ((8, Basic), (6, Wide)))" in code
    net = model.Net()
    assert isinstance(net.t.inner2.block1, model.Basic)
    assert isinstance(net.t.inner3.block1, model.Wide)


def test_a_row_block_the_inner_class_folds_stays_located() -> None:
    """Every call gives ``Inner`` the same block, so its class folds it (``Basic(...)``
    written out, no ``block`` argument): a rolled ``Stage`` passing ``b`` on could not
    build another row's block, so each call keeps its class, with a located note."""
    source = ROWS_TO_INNER.replace("(6, Wide)", "(6, Basic)").replace(
        "[(4, Wide), (3, Basic), (5, Wide)]", "[(4, Basic)]"
    )
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Stage' at 13:7: 'b' gives the block 'Basic' for block: the inner class"
        " takes no class there, not Basic"
    ], notes
    assert "class Stage_2(" in code


def test_an_inner_width_that_depends_on_the_row_block_stays_located() -> None:
    """``Inner`` ending on the block (``x -> dense(w) -> block(w)``) with a ``Wide`` that
    leaves ``3 * width``: the width after ``Inner`` is ``w`` after ``Basic`` and ``3 *
    w`` after ``Wide``, which no one text says, so each call keeps its class, with a
    located note."""
    source = ROWS_TO_INNER.replace("x -> block(w) -> dense(w)", "x -> dense(w) -> block(w)")
    source = source.replace("-> dense(width)\n", "-> dense(width * 3)\n")
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Stage' at 13:7: the width after 'Inner' is no expression of the source"
    ], notes
    assert "class Stage_2(" in code


ROWS = (
    BLOCKS
    + """\
model Stage(cfg):
    def forward(x):
        for w, b in cfg:
            x = b(x, w)
            x -> dense(w)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8, Basic), (6, Wide), (5, Basic)]) as s -> Stage([(4, Wide), (3, Wide)]) as t -> dense(2) as head
"""
)


def test_rows_holding_blocks() -> None:
    """``for w, b in cfg: x = b(x, w)``: the IR names each row's module after its block,
    numbered per block (``basic1``, ``wide1``, ``basic2``; ``wide1``, ``wide2``), so the
    class counts each block's modules as it builds them and forward counts them again;
    it kept a class per call ("'b' gives the block 'Basic' of a list the calls pass").
    ``roll_check`` also builds it with the rows reversed and with each row's block
    swapped for the other, against the class of one call of the program so changed."""
    stage = _rolled(ROWS, "rows")
    assert (
        "        made = {}\n"
        "        for i, (w, b) in enumerate(cfg):\n"
        "            if b not in (Basic, Wide):  # the blocks the calls' rows give\n"
        '                raise ValueError(f"Stage is written for b in (Basic, Wide), not {b.__name__}")\n'
        "            made[b] = made.get(b, 0) + 1\n"
        "            layer = b(channels, w)\n"
        '            setattr(self, f"{b.__name__.lower()}{made[b]}", layer)\n'
        "            channels = layer.out_channels\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
    ) in stage, stage
    assert (
        "        made = {}\n"
        "        for i, (_, b) in enumerate(self.cfg):\n"
        "            made[b] = made.get(b, 0) + 1\n"
        '            x = getattr(self, f"{b.__name__.lower()}{made[b]}")(x)\n'
    ) in stage, stage
    model, code, _ = build(ROWS, "rows_code")
    assert "Stage(4, ((8, Basic), (6, Wide), (5, Basic)))" in code
    assert [n for n, _ in model.Net().s.named_children()] == [
        "basic1",
        "dense1",
        "wide1",
        "dense2",
        "basic2",
        "dense3",
    ]
    counts: Counter[str] = Counter()
    assert check_source(ROWS, counts) == []
    assert counts["other blocks"] >= 4, counts  # swapped blocks and reversed rows


def test_rows_of_blocks_in_a_class_built_at_other_rows() -> None:
    """The rolled class built with rows no call gives names and builds what a program
    giving them compiles to with a class per call."""
    other = ROWS.replace("[(4, Wide), (3, Wide)]", "[(4, Basic), (3, Wide), (2, Basic)]")
    mine, _, _ = build(ROWS, "rows_other")
    theirs, _ = per_call(other, "rows_other_per_call")
    torch.manual_seed(0)
    built = mine.Stage(5, ((4, mine.Basic), (3, mine.Wide), (2, mine.Basic)))
    torch.manual_seed(0)
    net = theirs.Net()
    assert list(built.state_dict()) == list(net.t.state_dict())
    built.load_state_dict(net.t.state_dict(), strict=True)
    x = torch.randn(3, 5)
    with torch.no_grad():
        torch.testing.assert_close(built(x), net.t(x), rtol=0, atol=0)


def test_a_block_called_by_name_beside_the_rows_stays_located() -> None:
    """``x -> Basic(4)`` before the loop is ``basic1``, so the rows' ``Basic`` modules
    are numbered on from 2 in the IR, which a count from 1 would not write (and a class
    given only ``Wide`` rows at its calls would build ``basic1`` twice over for others):
    each call keeps its class, with a located note."""
    source = ROWS.replace(
        "        for w, b in cfg:", "        x -> Basic(4)\n        for w, b in cfg:"
    )
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Stage' at 9:7: 'b' gives the block 'Basic' named 'basic2', not 'basic1':"
        " its numbering is not the rows' alone"
    ], notes
    assert "class Stage_2(" in code
    only_wide = source.replace("[(8, Basic), (6, Wide), (5, Basic)]", "[(8, Wide)]")
    notes, code = roll_notes(only_wide)
    assert notes == [
        "block 'Stage' at 9:7: the name 'basic1' takes a block's numbering beside the rows' blocks"
    ], notes


def test_rows_of_convolution_blocks_as_in_efficientnet_v2() -> None:
    """EfficientNetV2's config mixes ``MBConv`` and ``FusedMBConv`` rows: ``for out, e, b
    in cfg: x = b(x, out, e)`` over images, each block's class taking ``in_channels``."""
    source = """\
model MB(out, expand):
    def forward(x):
        x -> conv2d(out * expand, 1).relu -> conv2d(out, 3, padding=1)

model Fused(out, expand):
    def forward(x):
        x -> conv2d(out, 3, padding=1).relu

model Stage(cfg):
    def forward(x):
        for out, e, b in cfg:
            x = b(x, out, e)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Stage([(8, 1, Fused), (6, 2, MB), (4, 4, MB)]) as s -> Stage([(4, 2, MB), (5, 1, Fused)]) as t -> flatten() -> dense(2) as head
"""
    stage = _rolled(source, "efficientnet_rows", shape=(2, 3, 8, 8))
    assert "            layer = b(channels, out, e)\n" in stage, stage
    model, _, _ = build(source, "efficientnet_rows_code")
    assert [n for n, _ in model.Net().s.named_children()] == ["fused1", "mb1", "mb2"]
