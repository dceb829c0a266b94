"""Issue 24 item 3: several operations numbered on across the branch taken of an if
(bench seed 94000096: ``if flag: x -> dense(w).relu else: x -> layer_norm()``, then ``for
i in range(n): x -> dense(v) -> layer_norm()``). The IR numbers the loop's ``dense`` on
from the ``dense`` the branch taken made and its ``layer_norm`` on from the
``layer_norm``; the running count of ``rolled.BranchCount`` counted one operation only,
so each call kept its class ('an unnamed 'layer_norm' module ... numbered on across the
branch taken'). Each operation now keeps its own running count (``n``, ``m``:
``block_walk.branch_counts``), in ``__init__`` and forward alike. Each program runs
against its IR, builds the modules of the build with one class per call in the same
order, strict-loads its weights and computes the same; ``roll_check`` rebuilds the class
at arguments no call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import block_class, program, twin  # noqa: E402

FAMILY = """\
model Fam(w, flag: bool, v, k):
    def forward(x):
        x -> dense(w)
        if flag:
            x -> dense(w).relu
        else:
            x -> layer_norm()
        for i in range(k):
            x -> dense(v).relu
            x -> layer_norm()
        return x
"""


def test_two_operations_each_keep_a_running_count() -> None:
    calls = "Fam(6, false, 3, 0) -> Fam(2, false, 8, 1) -> Fam(8, true, 4, 2)"
    checked = twin(program(FAMILY, calls), "two_counts", torch.randn(2, 4))
    text = block_class(checked.gen, "Fam")
    assert (
        "        n = 0\n"
        "        m = 0\n"
        "        channels = w\n"
        "        if flag:\n"
        "            self.dense2 = nn.Linear(channels, w)\n"
        "            channels = w\n"
        "            n += 1\n"
        "        else:\n"
        "            self.layer_norm1 = nn.LayerNorm(channels)\n"
        "            m += 1\n"
        "        for i in range(k):\n"
        '            setattr(self, f"dense{n + i + 2}", nn.Linear(channels, v))\n'
        "            channels = v\n"
        '            setattr(self, f"layer_norm{m + i + 1}", nn.LayerNorm(channels))\n'
    ) in text, text
    assert (
        "        for i in range(self.k):\n"
        '            x = getattr(self, f"dense{n + i + 2}")(x)\n'
        "            x = F.relu(x)\n"
        '            x = getattr(self, f"layer_norm{m + i + 1}")(x)\n'
    ) in text, text


def test_the_bench_program_whose_calls_all_take_one_branch() -> None:
    """Seed 94000096's calls all take the ``else``: the ``if`` branch is read from a
    phantom call, and both counts are kept."""
    calls = "Fam(6, false, 3, 0) -> Fam(2, false, 8, 1) -> Fam(8, false, 4, 0)"
    checked = twin(program(FAMILY, calls), "two_counts_one_branch", torch.randn(2, 4))
    assert 'setattr(self, f"layer_norm{m + i + 1}", nn.LayerNorm(channels))' in checked.code


def test_three_operations_across_an_elif() -> None:
    """``rms_norm`` too, each branch making one of the three: three counts (``count``)."""
    source = """\
model Fam(w, kind, k):
    def forward(x):
        if kind == 0:
            x -> dense(w)
        elif kind == 1:
            x -> layer_norm()
        else:
            x -> rms_norm()
        for i in range(k):
            x -> dense(w) -> layer_norm() -> rms_norm()
        return x
"""
    calls = "Fam(8, 0, 2) -> Fam(8, 1, 1) -> Fam(8, 2, 3)"
    checked = twin(program(source, calls), "three_counts", torch.randn(2, 4))
    text = block_class(checked.gen, "Fam")
    assert (
        '            setattr(self, f"rms_norm{count + i + 1}", nn.RMSNorm(channels))\n' in text
    ), text
