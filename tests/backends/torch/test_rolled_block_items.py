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
    roll_notes,
)
from tests.backends.torch.test_rolled_loop_operation_items import (  # noqa: E402
    against_per_call,
    per_call,
)

BLOCKS = """\
model Basic(width):
    def forward(x):
        x -> dense(width).relu

model Wide(width):
    def forward(x):
        x -> dense(width * 2).relu -> dense(width)

"""


def _rolled(source: str, name: str, stage: str = "Stage") -> str:
    """The checks of the module docstring; the rolled class ``stage``."""
    gen, flat = against_per_call(source, name, torch.randn(3, 4))
    assert CLASS.findall(flat).count(stage) == 1 and f"class {stage}_2(" in flat, flat
    assert f"class {stage}_2(" not in gen.code, gen.code
    model, _, notes = build(source, f"{name}_modules")
    assert notes == []
    theirs, _ = per_call(source, f"{name}_names")
    names = [n for n, _ in model.Net().named_modules()]
    assert names == [n for n, _ in theirs.Net().named_modules()], names
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
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
