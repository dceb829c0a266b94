"""The rolled classes read as written by hand (issue 24 item 3): no store forward does not
read (``self.mode = mode`` where every branch reading it was refused and dropped), no
test refused twice (an untaken body's refusal and a folded value's check), no loop count
or unpacked name that nothing reads (``for i, (c, a) in enumerate(rows1):`` reading only
``c`` and ``a`` is ``for c, a in rows1:``; one reading ``a`` only ``for i, (_, a) in
...``), and one note per refused ``if``. Each program still builds what the build of one
class per call builds, loads it strictly and computes the same; ``roll_check`` finds no
problem."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.rolled import ENUMERATED, enumerated  # noqa: E402
from tests.backends.torch.one_class import block_class, build, twin, variants_alike  # noqa: E402
from tests.backends.torch.test_network_top_branches import BRANCHES  # noqa: E402
from tests.backends.torch.test_rolled_rows_beside_blocks import LOOP_THEN_ROWS  # noqa: E402

# no variant takes ``if mode == 1`` nor ``elif mode == 2``: both are refused and dropped
NO_MODE_BRANCH = BRANCHES.replace("Net(6, 2, true, 1)", "Net(6, 2, true, 3)").replace(
    "Net(8, 3, false, 2)", "Net(8, 3, false, 3)"
)

# every variant gives ``mode == 1``: forward folds it, and ``elif mode == 2`` is untaken
FOLDED_MODE = """\
model Net(w, mode):
    def forward(x):
        x -> dense(w) as stem
        if mode == 1:
            x -> layer_norm() as norm
        elif mode == 2:
            x -> dense(w).tanh as mixer
        return x -> dense(2) as head

model small = Net(6, 1):
    input_shape = (4,)
model big = Net(8, 1):
    input_shape = (4,)
"""

ROWS = """\
model Fam(rows):
    def forward(x):
        for c, a in rows:
            x -> dense(c).a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(4, relu), (3, tanh)]) as f1 -> Fam([(5, gelu)]) as f2 -> dense(2) as head
"""


def _variants_alike(source: str, name: str, variants: tuple[str, ...]) -> tuple[str, list[str]]:
    """``variants_alike`` on a (3, 4) input: the rolled code and the rollers' notes."""
    _, code, notes = variants_alike(source, name, variants, torch.randn(3, 4))
    return code, notes


def test_a_value_only_refused_branches_read_is_not_stored() -> None:
    """Both ``mode`` branches are refused and dropped: forward reads ``self.flag`` and
    ``self.n``, not ``self.mode``, so the constructor stores no ``mode``; one note for the
    if, not one per branch."""
    code, notes = _variants_alike(NO_MODE_BRANCH, "no_mode_branch", ("small", "big", "mid"))
    assert notes == [
        "network 'Net' at 1:7: an if branch at 8:9 runs at no variant: mode must be the variants'"
    ], notes
    assert "self.mode" not in code, code
    assert (
        "        super().__init__()\n"
        "        if mode not in (3, 0) or mode is False:  # a body no variant runs is not written\n"
        '            raise ValueError(f"Net is written for mode in (3, 0), not {mode}")\n'
        "        self.flag = flag\n"
        "        self.n = n\n"
        "        self.stem = nn.Linear(4, w)\n"
    ) in code, code


def test_a_folded_value_refused_for_an_untaken_body_is_refused_once() -> None:
    """``mode == 1`` folded (forward applies ``self.norm`` unconditionally) and ``elif mode
    == 2`` untaken: both would refuse ``mode != 1``; the class says it once."""
    code, _ = _variants_alike(FOLDED_MODE, "folded_mode", ("small", "big"))
    # True is not 1 in the language: the refusal refuses the one boolean mode != 1 lets by
    refused = "if mode != 1 or mode is True:"
    assert code.count(refused) == 1 and "if mode != 1:" not in code, code
    assert (
        "        super().__init__()\n"
        f"        {refused}  # a body no variant runs is not written\n"
        '            raise ValueError(f"Net is written for mode == 1, not {mode}")\n'
        "        self.stem = nn.Linear(4, w)\n"
    ) in code, code
    # after the refusal mode is a number: the test reads as written, no kind test
    assert "        if mode == 1:\n            self.norm = nn.LayerNorm(channels)\n" in code, code
    assert "isinstance(mode, bool) and" not in code, code


def test_a_loop_whose_count_names_nothing_drops_enumerate() -> None:
    """The loop calling ``Unit2`` by name counts its modules with ``made``, not ``i``: no
    ``enumerate`` in ``__init__``; forward reads neither ``c`` nor ``a``
    (``for _ in self.rows1:``) and of the rows only ``b`` (``for _, b in ...``)."""
    checked = twin(LOOP_THEN_ROWS, "tidy_loop_then_rows", torch.randn(3, 4))
    fam = block_class(checked.gen, "Fam")
    assert "enumerate" not in fam and "for i" not in fam, fam
    assert "        made = {}\n        for c, a in rows1:\n" in fam, fam
    assert (
        "        made = {}\n"
        "        for _ in self.rows1:\n"
        "            made[Unit2] = made.get(Unit2, 0) + 1\n"
        '            x = getattr(self, f"unit2{made[Unit2]}")(x)\n'
        "        for _, b in self.rows0:\n"
    ) in fam, fam


def test_a_name_a_loop_unpacks_and_never_reads_is_underscore() -> None:
    """``__init__`` builds from ``c`` alone, forward applies ``a`` alone."""
    checked = twin(ROWS, "tidy_rows", torch.randn(3, 4))
    fam = block_class(checked.gen, "Fam")
    assert "        for i, (c, _) in enumerate(rows):\n" in fam, fam
    assert "        for i, (_, a) in enumerate(self.rows):\n" in fam, fam


def _header(target: str, iterable: str, index: str = "i", pad: str = "        ") -> str:
    return f"{pad}for {index}, {target} in enumerate({iterable}):{ENUMERATED}"


@pytest.mark.parametrize(
    ("body", "header"),
    [
        (['            x = getattr(self, f"d{i}")(x) * w'], "for i, w in enumerate(widths):"),
        (['            x = getattr(self, f"d{i}")(x)'], "for i in range(len(widths)):"),
        (["            x = x * w"], "for w in widths:"),
        (["            x = x + 1"], "for _ in widths:"),
    ],
)
def test_a_counted_loop_writes_what_its_body_reads(body: list[str], header: str) -> None:
    lines = enumerated([_header("w", "widths"), *body, "        return x"])
    assert lines == [f"        {header}", *body, "        return x"]


def test_a_count_read_after_the_loop_is_kept() -> None:
    """``i`` read after the loop (the last count): the loop still binds it; a later loop
    binding ``i`` again ends the search."""
    kept = enumerated([_header("w", "widths"), "            x = x * w", "        return x + i"])
    assert kept[0] == "        for i, w in enumerate(widths):"
    rebound = [
        _header("w", "widths"),
        "            x = x * w",
        "        for i in range(3):",
        "            x = x + i",
    ]
    assert enumerated(rebound)[0] == "        for w in widths:"


def test_an_unpacked_pair_reads_as_by_hand() -> None:
    """A tuple target: its unread names ``_``; ``enumerate`` gone with an unread count; a
    literal list counted by its length."""
    assert enumerated([_header("(c, a)", "rows"), "            y = c"]) == [
        "        for c, _ in rows:",
        "            y = c",
    ]
    assert enumerated([_header("(c, a)", "rows"), "            y = f(i, a)"]) == [
        "        for i, (_, a) in enumerate(rows):",
        "            y = f(i, a)",
    ]
    assert enumerated([_header("a", "[act, nn.Sigmoid]"), "            y = 1"]) == [
        "        for _ in range(2):",
        "            y = 1",
    ]


@pytest.mark.parametrize("mode", [True, 2])
def test_a_network_written_for_mode_1_refuses_true(mode: object) -> None:
    """``mode != 1`` let ``True`` through (Python's ``True == 1``), and the class, built
    without ``self.norm`` (``if mode == 1 and mode is not True``), failed in
    forward; the language's ``if mode == 1:`` sends ``true`` elsewhere, so it is refused."""
    module, _, _ = build(FOLDED_MODE, "folded_mode_true")
    module.Net(6, 1)(torch.randn(2, 4))
    with pytest.raises(ValueError, match=r"Net is written for mode == 1, not"):
        module.Net(6, mode)
