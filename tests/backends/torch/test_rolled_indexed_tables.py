"""Issue 24 item 3: an item of a constant table a block parameter indexes
(``dense(sizes[k])`` of ``sizes = [4, 8, 16, 32]``). The constant evaluator folded the item
to each call's number (``nn.Linear(in_features, 16)``), so calls that disagree on ``k``
kept a class each, refusing its other values. The item is now a size whose tree is the
table indexed by the index's (``symbolic.Item``), and the file defines the table once as
a module constant the classes index: ``SIZES = [4, 8, 16, 32]``,
``nn.Linear(in_features, SIZES[k])``. Python's indexing is the language's: a negative
index counts from the end, one out of range raises ``IndexError``. Each program is one
class, built as the builds with one class per call build it (``twin``), and
``roll_check`` builds it at arguments no call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    ANY_CLASS,
    CLASS,
    build,
    refusing,
    twin,
    variants_alike,
)

BRANCH = """\
model P(k: int, w: int):
    sizes = [4, 8, 16, 32]
    def forward(x):
        if k > 1:
            x -> dense(sizes[k])
        x -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5) -> P(3, 6)
        return x
"""


def test_an_item_under_an_if_is_the_table_indexed() -> None:
    """The issue's program: one class joined over ``if k > 1:``, the item ``SIZES[k]``
    and the width after it the same expression."""
    code = twin(BRANCH, "table_branch", torch.randn(2, 3, 8)).code
    assert CLASS.findall(code) == ["P", "Net"], code
    assert "\n\n\nSIZES = [4, 8, 16, 32]\n\n\nclass P(nn.Module):\n" in code, code
    assert (
        "        if k > 1:\n"
        "            self.dense1 = nn.Linear(in_features, SIZES[k])\n"
        "            self.dense2 = nn.Linear(SIZES[k], w)\n"
    ) in code, code


def test_an_index_out_of_range_raises_and_a_negative_one_counts_from_the_end() -> None:
    """``P(8, 4, 5)``: the source refuses ``sizes[4]`` of four items, the class raises
    (never another item); ``k = -1`` is not taken (``k > 1`` is false), and
    ``SIZES[-1]`` is the language's last item where it is read (below)."""
    module, _, _ = build(BRANCH, "table_range")
    with pytest.raises(IndexError):
        module.P(8, 4, 5)
    assert module.P(8, 3, 5).dense1.out_features == 32


INDEXES = """\
model P(k: int, w: int):
    sizes = [4, 8, 16, 32]
    def forward(x):
        x -> dense(sizes[k - 1]) -> dense(sizes[min(k, 3)]) -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5) -> P(0, 6)
        return x
"""


def test_an_index_expression_is_written_as_the_source_writes_it() -> None:
    """``sizes[k - 1]`` at ``k = 0`` is ``sizes[-1]``, 32: the language counts a negative
    index from the end, as Python does, so the class computes it."""
    code = twin(INDEXES, "table_indexes", torch.randn(2, 3, 8)).code
    assert CLASS.findall(code) == ["P", "Net"], code
    assert (
        "        self.dense1 = nn.Linear(in_features, SIZES[k - 1])\n"
        "        self.dense2 = nn.Linear(SIZES[k - 1], SIZES[min(k, 3)])\n"
        "        self.dense3 = nn.Linear(SIZES[min(k, 3)], w)\n"
    ) in code, code
    module, _, _ = build(INDEXES, "table_indexes_at")
    assert module.P(8, 0, 5).dense1.out_features == 32
    with pytest.raises(IndexError):
        module.P(8, 5, 5)


ROWS = """\
cfg = ((1, 4), (2, 8), (3, 16), (4, 32))

model P(k: int, w: int):
    def forward(x):
        x -> dense(cfg[k][1]) -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5) -> P(-1, 6)
        return x
"""


def test_a_row_of_a_global_table_of_tuples() -> None:
    code = twin(ROWS, "table_rows", torch.randn(2, 3, 8)).code
    assert CLASS.findall(code) == ["P", "Net"], code
    assert "\n\n\nCFG = ((1, 4), (2, 8), (3, 16), (4, 32))\n\n\n" in code, code
    assert "        self.dense1 = nn.Linear(in_features, CFG[k][1])\n" in code, code


LOOP = """\
model P(k: int, n: int, w: int):
    sizes = [4, 8, 16, 32]
    def forward(x):
        if k > 0:
            for i in range(n):
                x -> dense(sizes[k] * (i + 1))
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 2, 4) -> P(2, 3, 5) -> P(3, 1, 6) -> P(0, 2, 3)
        return x
"""


def test_an_item_in_a_loop_under_an_if() -> None:
    """The loop roller reads the block's constant by its module constant, as a block
    without loops does (review98 F6: it was a local of ``__init__``, ``sizes[k] * (i +
    1)``), in the source's expression; the module after the loop is named (an unnamed one
    numbered on from a loop in an ``if``'s branch keeps its own note)."""
    code = twin(LOOP, "table_loop", torch.randn(2, 3, 8)).code
    assert CLASS.findall(code) == ["P", "Net"], code
    assert "\n\n\nSIZES = [4, 8, 16, 32]\n\n\n" in code, code
    assert "sizes = " not in code, code
    assert (
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, SIZES[k] * (i + 1)))\n'
    ) in code, code


NETWORK = """\
sizes = [4, 8, 16, 32]

model Net(k, w):
    def forward(x):
        x -> dense(sizes[k]) as stem -> dense(w) as head
        return x

model a = Net(1, 4):
    input_shape = (5,)

model b = Net(3, 6):
    input_shape = (5,)
"""


def test_a_network_used_through_variants() -> None:
    """Each variant was a class of its own with ``nn.Linear(5, 8)`` and ``nn.Linear(5,
    32)`` written out; now one ``Net(k, w)`` the variants call."""
    module, code, notes = variants_alike(NETWORK, "table_network", ["a", "b"], torch.randn(2, 5))
    assert notes == [], notes
    assert ANY_CLASS.findall(code) == ["Net", "a", "b"], code
    assert "        self.stem = nn.Linear(5, SIZES[k])\n" in code, code
    assert module.Net(2, 3).stem.out_features == 16


def test_an_index_no_tree_follows_keeps_the_refusal() -> None:
    """``sizes[k if k < 3 else 3]``: the conditional gives the number 3 at ``k = 4``, no
    parameter's tree, so the item is the calls' number there; the classes refuse other
    values of ``k`` as before, with the roller's located note."""
    source = BRANCH.replace("sizes[k]", "sizes[k if k < 3 else 3]")
    module, code, notes = refusing(source, "table_conditional", torch.randn(2, 3, 8))
    assert CLASS.findall(code) == ["P", "P_2", "P_3", "Net"], code
    assert notes and notes[0].startswith("block 'P' at 1:7: "), notes
    with pytest.raises(ValueError, match="P_2 is written for k == 2, not 3"):
        module.P_2(8, 3, 5)


def test_an_if_test_reading_an_item() -> None:
    """``if sizes[k] > 8:``: the test reads the table by its name as the sizes do."""
    source = BRANCH.replace("if k > 1:", "if sizes[k] > 8:")
    code = twin(source, "table_test", torch.randn(2, 3, 8)).code
    assert CLASS.findall(code) == ["P", "Net"], code
    assert "        if SIZES[k] > 8:\n" in code, code
    assert "        if SIZES[self.k] > 8:\n" in code, code


def test_a_list_a_parameter_gives_stays_folded() -> None:
    """``widths[k]`` of a list parameter: the list differs between calls, so the item is
    the call's number and each class refuses other lists and indexes, as before."""
    source = BRANCH.replace(
        "model P(k: int, w: int):\n    sizes = [4, 8, 16, 32]", "model P(sizes, k: int, w: int):"
    ).replace(
        "P(1, 4) -> P(2, 5) -> P(3, 6)",
        "P([4, 8, 16], 1, 4) -> P([4, 8, 16], 2, 5) -> P([5, 6, 7, 8], 3, 6)",
    )
    module, code, notes = refusing(source, "table_parameter", torch.randn(2, 3, 8))
    assert "SIZES" not in code and "][k]" not in code, code
    assert notes, notes
