"""Issue 24 item 3: a loop body that no call of a block runs because a list decides it
(``for c in rows:`` with ``[]`` at every call, ``for w, k in cfg:`` with ``()``) got
neither a phantom call nor a refusal (``untaken.py`` tried numbers, booleans and strings
only), and the block stayed one class per call with the note 'a loop that no variant
takes'. The roller now lowers the block once more at a one-item list (its numbers an
integer the first call gives elsewhere, else a small literal, unpacked as the loop's
target says) and writes the body from it; where none lowers, the class is written without
the body and refuses a non-empty list (``if tuple(rows) != ():``). Each program's ``Net``
is built as the build of one class per call builds it (the same modules in the same
order), strict-loads it and computes the same; ``roll_check`` rebuilds the class at lists
the calls did not give against the class of a call compiled so."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    ANY_CLASS,
    CLASS,
    block_class,
    build,
    built_alike,
    program,
    refusing,
    same,
    twin,
)

ROWS = """\
model Fam(w, n, rows):
    def forward(x):
        for i in range(n):
            x -> dense(w) as d{i}
        for c in rows:
            x -> dense(c).relu
        return x
"""

PAIRS = """\
model Fam(w, n, cfg):
    def forward(x):
        for i in range(n):
            x -> dense(w) as d{i}
        for w2, k in cfg:
            x -> dense(w2) -> dense(k)
        return x
"""

ENUMERATED = """\
model Fam(w, n, rows):
    def forward(x):
        for i in range(n):
            x -> dense(w) as d{i}
        for j, c in enumerate(rows):
            x -> dense(c) as up{j} -> layer_norm()
        return x
"""

# name: (block, the calls, the list parameter's lines in the class, the class built by
# hand at a list no call gives, the first call so changed)
TAKEN: dict[str, tuple[str, str, str, str, str]] = {
    "rows": (
        ROWS,
        "Fam(6, 2, []) as a -> Fam(5, 1, []) as b",
        "        for j, c in enumerate(rows):\n"
        '            setattr(self, f"dense{n + j + 1}", nn.Linear(channels, c))\n'
        "            channels = c\n",
        "Fam(4, 6, 2, (3, 7))",
        "Fam(6, 2, [3, 7]) as a",
    ),
    "pairs": (
        PAIRS,
        "Fam(6, 2, ()) as a -> Fam(5, 1, ()) as b",
        "        for j, (w2, k) in enumerate(cfg):\n"
        '            setattr(self, f"dense{n + 2 * j + 1}", nn.Linear(channels, w2))\n'
        "            channels = w2\n"
        '            setattr(self, f"dense{n + 2 * j + 2}", nn.Linear(channels, k))\n'
        "            channels = k\n",
        "Fam(4, 6, 2, ((3, 5), (2, 8)))",
        "Fam(6, 2, ((3, 5), (2, 8))) as a",
    ),
    "enumerated": (
        ENUMERATED,
        "Fam(6, 2, []) as a -> Fam(5, 1, []) as b",
        "        for j, c in enumerate(rows):\n"
        '            setattr(self, f"up{j}", nn.Linear(channels, c))\n',
        "Fam(4, 6, 2, (3, 7))",
        "Fam(6, 2, [3, 7]) as a",
    ),
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_a_loop_over_a_list_no_call_fills_is_written(name: str) -> None:
    """One class for the calls, writing the loop over the list that every call gives
    empty; it was one class per call. ``roll_check`` finds it computing, at lists the
    calls did not give, what a call at those lists computes."""
    block, calls, lines, _, _ = TAKEN[name]
    source = program(block, calls)
    checked = twin(source, name, torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Fam", "Net"], gen.code
    fam = block_class(gen, "Fam")
    assert lines in fam, fam
    assert "raise ValueError" not in fam, fam
    counts = checked.counts  # roll_check's, at arguments no call gives
    assert counts["calls"] == 2 and counts["other arguments"] > 0, counts


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_built_at_a_filled_list_it_computes_as_such_a_call(name: str) -> None:
    """The class built by hand at a list that runs the loop against the class of a call
    given that list, compiled with one class per call: the same modules in the same
    order, a strict load, the same outputs."""
    block, calls, _, by_hand, taking = TAKEN[name]
    rolled, _, notes = build(program(block, calls), f"{name}_rolled")
    assert notes == []
    first = calls.split(" -> ")[0]
    flat, _, _ = build(program(block, calls.replace(first, taking)), f"{name}_taking", roll=False)
    torch.manual_seed(0)
    theirs = flat.Net().a
    torch.manual_seed(0)
    mine = eval(by_hand, {"Fam": rolled.Fam})
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    same(theirs, mine, torch.randn(3, 4))


def test_the_phantom_builds_nothing() -> None:
    """The program's modules, their names and its state dict are the calls' alone."""
    source = program(ROWS, TAKEN["rows"][1])
    rolled, _, notes = build(source, "nothing")
    assert notes == []
    flat, _, _ = build(source, "nothing_flat", roll=False)
    mine, theirs = built_alike(rolled, flat, "Net")
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    same(theirs, mine, torch.randn(3, 4))


# the loop reshapes its input to 7 features: no one-item list lowers at the calls' inputs
UNLOWERED = """\
model Fam(w, n, rows):
    def forward(x):
        for i in range(n):
            x -> dense(w) as d{i}
        for c in rows:
            x -> reshape(7) -> dense(c)
        return x
"""


def test_a_list_whose_loop_lowers_at_no_item_is_refused() -> None:
    """One class, written without the loop and refusing a non-empty list, with a located
    note; ``roll_check`` finds the refusal (never a wrong class)."""
    source = program(UNLOWERED, "Fam(4, 2, []) as a -> Fam(4, 1, []) as b")
    rolled, code, notes = refusing(source, "refused", torch.randn(3, 4))
    assert notes == [
        "block 'Fam' at 1:7: the loop at 5:9 runs at no call, and no phantom call that "
        "runs it could be lowered and read: rows must be the calls'"
    ], notes
    assert CLASS.findall(code) == ["Fam", "Net"], code
    assert (
        "        if tuple(rows) != ():  # a body no call runs is not written\n"
        '            raise ValueError(f"Fam is written for rows == (), not {rows}")\n'
    ) in code, code
    with pytest.raises(ValueError, match=r"Fam is written for rows == \(\), not \(3,\)"):
        rolled.Fam(4, 4, 1, (3,))


# a network whose variants all take ``flag``: its ``else`` runs at no variant
NETWORK = """\
model Net(w, n, flag):
    def forward(x):
        x -> dense(w) as stem
        if flag:
            x -> dense(2 * w) as wide -> relu()
        else:
            x -> layer_norm() as norm
        for i in range(n):
            x -> dense(w) as d{i}
        return x -> dense(2) as head

model small = Net(6, 2, true):
    input_shape = (4,)
model big = Net(8, 3, true):
    input_shape = (4,)
"""


def test_a_network_branch_no_variant_takes_is_refused() -> None:
    """One network class, written without the ``else`` and refusing ``flag=False``, with a
    located note; it was one class per variant ('an if branch that no variant takes').
    Each variant builds the modules of its class written out and computes the same;
    ``roll_check`` finds the refusal (never a wrong class)."""
    rolled, code, _ = build(NETWORK, "network")
    unrolled, flat, _ = build(NETWORK, "network_flat", roll=False)
    assert CLASS.findall(flat) == ["small", "big"], flat
    assert ANY_CLASS.findall(code) == ["Net", "small", "big"], code
    _, _, notes = build(NETWORK, "network_notes")
    assert notes == [
        "network 'Net' at 1:7: an if branch at 4:9 runs at no variant: flag must be the variants'"
    ], notes
    assert (
        "        super().__init__()\n"
        "        if not flag:  # a body no variant runs is not written\n"
        '            raise ValueError(f"Net is written for flag == True, not {flag}")\n'
    ) in code, code
    assert "norm" not in code, code
    for variant in ("small", "big"):
        mine, theirs = built_alike(rolled, unrolled, variant)
        same(theirs, mine, torch.randn(3, 4))
    with pytest.raises(ValueError, match="Net is written for flag == True, not False"):
        rolled.Net(6, 2, False)
    counts: Counter[str] = Counter()
    assert check_source(NETWORK, counts) == []
    assert counts["network arguments"] > 0, counts
