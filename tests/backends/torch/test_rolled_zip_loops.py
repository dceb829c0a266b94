"""Issue 24 item 3: a loop over ``zip`` whose targets forward does not read (hunt109 F2).
Forward counts the loop's modules but reads none of its items, and the roller wrote
``for i in range(len(zip(self.widths, KS))):``: a ``zip`` has no ``len``, so the program
crashed at its own calls, with no note. The loop now reads ``for i, _ in
enumerate(zip(self.widths, KS)):``, and the count of a ``zip`` has one writer
(``rolled._count_text``: ``min(...)`` of its inputs' counts). Each program is checked
against the build with one class per call and by ``roll_check`` (``one_class.twin``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.rolled import _count_text  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    twin,
    variants_alike,
)


def _zip_block(header: str, step: str, params: str, calls: str, fields: str = "") -> str:
    """A block ``P`` looping ``header`` over ``step`` then a head, and a ``Net`` of ``calls``."""
    return f"""\
model P({params}):
{fields}    def forward(x):
        {header}
            x -> {step}
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> {calls}
        return x
"""


def _loop_lines(code: str) -> list[str]:
    """The loop headers of ``P``'s forward."""
    forward = code.split("    def forward(self, x):")[1].split("\nclass ")[0]
    return [line.strip() for line in forward.splitlines() if line.strip().startswith("for ")]


ZIP_WITH_A_TABLE = _zip_block(
    "for c, k in zip(widths, ks):",
    "dense(c * k).relu",
    "widths, w: int",
    "P([4], 4) -> P([5, 6], 5)",
    fields="    ks = [1, 2, 3]\n",
)


def test_a_zip_with_a_table_forward_counts_by_enumerate() -> None:
    """``zip(widths, ks)`` (a parameter and a constant table): forward reads neither item."""
    checked = twin(ZIP_WITH_A_TABLE, "zip_table", torch.randn(2, 3, 8))
    assert CLASS.findall(checked.code) == ["P", "Net"], checked.code
    assert _loop_lines(checked.code) == ["for i, _ in enumerate(zip(self.widths, KS)):"]
    assert "len(zip" not in checked.code


ZIP_OF_TWO_PARAMETERS = _zip_block(
    "for c, k in zip(widths, ks):",
    "dense(c * k).relu",
    "widths, ks, w: int",
    "P([4], [1], 4) -> P([5, 6], [2, 3], 5)",
)


def test_a_zip_of_two_parameters() -> None:
    checked = twin(ZIP_OF_TWO_PARAMETERS, "zip_params", torch.randn(2, 3, 8))
    assert CLASS.findall(checked.code) == ["P", "Net"], checked.code
    assert _loop_lines(checked.code) == ["for i, _ in enumerate(zip(self.widths, self.ks)):"]


ZIP_OF_THREE = _zip_block(
    "for a, b, c in zip(widths, ks, widths):",
    "dense(a * b + c).relu",
    "widths, w: int",
    "P([4], 4) -> P([5, 6], 5)",
    fields="    ks = [1, 2, 3]\n",
)


def test_a_zip_of_three_lists() -> None:
    checked = twin(ZIP_OF_THREE, "zip_three", torch.randn(2, 3, 8))
    assert _loop_lines(checked.code) == [
        "for i, _ in enumerate(zip(self.widths, KS, self.widths)):"
    ]


ZIP_OF_A_RANGE = _zip_block(
    "for i, c in zip(range(n), widths):",
    "dense(c + i).relu",
    "n: int, widths, w: int",
    "P(1, [4], 4) -> P(2, [5, 6], 5)",
)


def test_a_zip_of_a_range_and_a_list() -> None:
    """``zip(range(n), widths)``: the loop's count is not ``i`` (a fresh name counts)."""
    checked = twin(ZIP_OF_A_RANGE, "zip_range", torch.randn(2, 3, 8))
    (header,) = _loop_lines(checked.code)
    assert header.endswith(", _ in enumerate(zip(range(self.n), self.widths)):"), header


ZIP_ITEM_READ_BY_FORWARD = _zip_block(
    "for c, k in zip(widths, ks):",
    "dense(c).relu -> dropout(0.1 * k)",
    "widths, w: int",
    "P([4], 4) -> P([5, 6], 5)",
    fields="    ks = [1, 2, 3]\n",
)


def test_a_zip_whose_item_forward_reads_is_unchanged() -> None:
    """Forward reads ``k`` (a dropout's rate): the loop still ``enumerate``s the zip."""
    checked = twin(ZIP_ITEM_READ_BY_FORWARD, "zip_read", torch.randn(2, 3, 8))
    forward = block_class(checked.gen, "P").split("def forward")[1]
    assert "enumerate(zip(self.widths, KS))" in forward, forward
    assert "len(zip" not in checked.code


NETWORK_ZIP = """\
ks = [1, 2, 3]

model Fam(widths, w: int):
    def forward(x):
        for c, k in zip(widths, ks):
            x -> dense(c * k).relu
        return x -> dense(w) as head

model small = Fam([4], 3):
    input_shape = (5,)

model big = Fam([5, 6], 3):
    input_shape = (5,)
"""


def test_the_network_roller_counts_a_zip_by_enumerate() -> None:
    _, code, notes = variants_alike(NETWORK_ZIP, "net_zip", ["small", "big"], torch.randn(2, 5))
    assert notes == [], notes
    assert "for i, _ in enumerate(zip(self.widths, KS)):" in code, code
    assert "len(zip" not in code


@pytest.mark.parametrize(
    ("iterable", "count"),
    [
        ("zip(widths, KS)", "min(len(widths), len(KS))"),
        ("zip(range(n), widths)", "min(n, len(widths))"),
        ("zip([a, b], widths, strict=True)", "min(2, len(widths))"),
        ("enumerate(widths, 1)", "len(widths)"),
        ("enumerate(zip(a, b))", "min(len(a), len(b))"),
        ("[act, nn.Sigmoid]", "2"),
        ("[*rows]", "len([*rows])"),
    ],
)
def test_the_count_of_an_iterable_has_one_writer(iterable: str, count: str) -> None:
    """``_count_text`` counts what ``enumerated`` counts (no ``len`` of a zip)."""
    assert _count_text(iterable) == count
