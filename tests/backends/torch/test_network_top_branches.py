"""Issue 24 item 3: a network used through variants whose forward has an ``if`` outside
loops (``if flag: x -> dense(2 * w) as wide``, ``if mode == 1: ... elif mode == 2:``) kept
one class per variant with the note 'an if outside a loop'. It is now one class, as a
block's ``if`` outside loops is (``rolled._Walk._top_branch``): the local holds the width
before the ``if`` (``channels = w``) and each branch sets it as its modules change it;
forward reads the test from the module (``if self.flag:``). Each variant builds the
modules of its class written out (``roll_networks=False``), strict-loads its weights and
computes the same; ``roll_check`` builds the network at each variant's arguments changed
(the other branch among them) against the variant so changed, written out."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import build, rolls_exactly  # noqa: E402

BRANCHES = """\
model Net(w, n, flag, mode):
    def forward(x):
        x -> dense(w) as stem
        if flag:
            x -> dense(2 * w) as wide -> relu()
        for i in range(n):
            x -> dense(w) as d{i}
        if mode == 1:
            x -> layer_norm() as norm
        elif mode == 2:
            x -> dense(w).tanh as mixer
        return x -> dense(2) as head

model small = Net(6, 2, true, 1):
    input_shape = (4,)
model big = Net(8, 3, false, 2):
    input_shape = (4,)
model mid = Net(5, 1, true, 0):
    input_shape = (4,)
"""


def test_ifs_outside_loops_in_a_network_roll() -> None:
    """One class with the source's ifs; it was one class per variant."""
    code = rolls_exactly(BRANCHES, "top_branches", torch.randn(3, 4))
    assert (
        "        self.stem = nn.Linear(4, w)\n"
        "        channels = w\n"
        "        if flag:\n"
        "            self.wide = nn.Linear(channels, 2 * w)\n"
        "            channels = 2 * w\n"
    ) in code, code
    assert (  # True is not 1 in the language (a boolean may reach mode)
        "        if mode == 1 and mode is not True:\n"
        "            self.norm = nn.LayerNorm(channels)\n"
        "        elif mode == 2:\n"
        "            self.mixer = nn.Linear(channels, w)\n"
        "            channels = w\n"
        "        self.head = nn.Linear(channels, 2)\n"
    ) in code, code
    assert (
        "        if self.flag:\n            x = self.wide(x)\n            x = F.relu(x)\n"
    ) in code, code
    counts: Counter[str] = Counter()
    assert check_source(BRANCHES, counts) == []
    assert counts["network arguments"] > 0, counts


def test_an_unnamed_module_numbered_across_a_network_branch_rolls() -> None:
    """``dense(w).tanh`` unnamed after ``if flag: ... as wide``: the IR numbers it
    ``dense4`` or ``dense5`` by the branch taken, which a running count the branches add
    to names, as in a block (``block_walk.branch_counts``); it kept a class per variant."""
    source = BRANCHES.replace(".tanh as mixer", ".tanh")
    code = rolls_exactly(source, "numbered", torch.randn(3, 4))
    assert 'setattr(self, f"dense{m + n + 2}", nn.Linear(channels, w))' in code, code
    assert 'x = getattr(self, f"dense{m + self.n + 2}")(x)' in code, code
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["network arguments"] > 0, counts


def test_an_if_opening_the_forward_falls_back() -> None:
    """No width is held before an ``if`` that opens the forward: a located note."""
    source = BRANCHES.replace("        x -> dense(w) as stem\n", "")
    _, _, notes = build(source, "opening")
    assert notes == [
        "network 'Net' at 1:7: an if outside loops before any tensor is threaded at 3:9"
    ], notes
