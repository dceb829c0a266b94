"""Issue 24 item 3: two rolled block classes that were silently wrong at arguments the
calls did not give (review59 P5, P6), each now written right or kept one class per
call with a located note.

- An unnamed module in a loop under an ``if`` (``for i in range(a): if up: x ->
  dense(w).relu else: x -> dense(w).tanh``): the IR numbers the branch that runs only,
  so the ``else`` branch's ``dense`` is ``dense{i + 1}``, not ``dense{2 * i + 1}`` (both
  branches counted). A second loop of unnamed modules after such a loop cannot number
  on from it (its count gives no number of modules) and falls back with a note; it was
  ``dense{j + 1}``, which a class running both loops made again.
- A ``dense`` on an axis the walk does not thread (the last, where it threads the
  channels) in a loop: a second iteration reading the same in-features showed the loop
  keeps that size, but at ``g`` equal to the input's size that number is the one the
  first iteration made (``nn.Linear(4, g)``, wrong at ``g = 5``); it falls back."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    one_class_alike,
    roll_notes,
)

BRANCHES = """\
model B(a, w, up):
    def forward(x):
        for i in range(a):
            if up:
                x -> dense(w).relu
            else:
                x -> dense(w).tanh
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> B(2, 8, true) as p -> B(1, 8, false) as q -> dense(2) as head
"""


def test_an_unnamed_module_in_a_loop_under_an_if_is_numbered_by_its_branch() -> None:
    """One ``dense`` an iteration in either branch: ``dense{i + 1}`` in both (the
    ``else`` branch was ``dense{2 * i + 1}``: ``B(2, 8, false)`` made ``dense3``)."""
    gen, flat = one_class_alike(BRANCHES, "loop_branch", torch.randn(3, 4))
    assert CLASS.findall(flat) == ["B", "B_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["B", "Net"], gen.code
    text = block_class(gen, "B")
    assert (
        "            if up:\n"
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "            else:\n"
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
    ) in text, text
    assert check_source(BRANCHES) == []


UNEVEN = BRANCHES.replace("x -> dense(w).relu\n", "x -> dense(w).relu -> dense(w)\n").replace(
    "B(2, 8, true) as p -> B(1, 8, false)", "B(1, 8, true) as p -> B(1, 8, false)"
)


def test_branches_making_different_numbers_are_numbered_each_by_its_own() -> None:
    """Two ``dense`` an iteration in the ``if`` branch, one in the ``else`` branch:
    ``dense{2 * i + 1}``, ``dense{2 * i + 2}`` and ``dense{i + 1}`` (it was ``dense{3 *
    i + 1}``, both branches counted)."""
    gen, _ = one_class_alike(UNEVEN, "loop_branch_uneven", torch.randn(3, 4))
    assert CLASS.findall(gen.code) == ["B", "Net"], gen.code
    text = block_class(gen, "B")
    assert '                setattr(self, f"dense{2 * i + 2}", nn.Linear(channels, w))\n' in text
    assert (
        "            else:\n"
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
    ) in text, text
    assert check_source(UNEVEN) == []


def test_branches_a_loop_target_chooses_are_numbered_by_a_running_count() -> None:
    """``if i == 1:`` takes the longer branch at one iteration only: no progression in
    ``i`` names the ``else`` branch's modules at every count, so the running count of
    the branches taken does (``dense{n + 1}``; it kept a class per call with 'an unnamed
    'dense' module in a loop at 7:22'; ``test_rolled_if_on_count.py``)."""
    source = UNEVEN.replace("            if up:\n", "            if i == 1:\n").replace(
        "B(1, 8, false)", "B(2, 8, true)"
    )
    gen, flat = one_class_alike(source, "loop_target_branches", torch.randn(3, 4))
    assert CLASS.findall(flat) == ["B", "B_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["B", "Net"], gen.code
    text = block_class(gen, "B")
    assert (
        "            else:\n"
        '                setattr(self, f"dense{n + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                n += 1\n"
    ) in text, text
    assert check_source(source) == []


AFTER_BRANCHES = """\
model B(a, b, w, up):
    def forward(x):
        for i in range(a):
            if up:
                x -> dense(w).relu
            else:
                x -> dense(w).tanh
        for j in range(b):
            x -> dense(w)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> B(2, 0, 8, true) as p -> B(1, 0, 8, false) as q -> B(0, 2, 8, true) as r -> dense(2) as head
"""


def test_a_loop_after_a_loop_making_its_modules_under_an_if() -> None:
    """review59 b5: the second loop was ``dense{j + 1}`` (no call ran both), so ``B(1, 1,
    8, true)`` made ``dense1`` twice and dropped a layer; then a located note (the branch
    decides the count); every branch makes one, so the first loop's count numbers them:
    ``dense{a + j + 1}`` (``test_rolled_running_counts.py``)."""
    notes, code = roll_notes(AFTER_BRANCHES)
    assert notes == [], notes
    assert CLASS.findall(code) == ["B", "Net"], code
    assert 'setattr(self, f"dense{a + j + 1}", nn.Linear(channels, w))' in code, code
    assert check_source(AFTER_BRANCHES) == []
    module, _, _ = build(AFTER_BRANCHES, "after_branches")
    assert module.Net()(torch.randn(2, 4)).shape == (2, 2)
    built = module.B(4, 1, 1, 8, True)  # both loops, which no call ran
    assert [name for name, _ in built.named_children()] == ["dense1", "dense2"]


UNTRACKED = """\
model G(c, g, k):
    def forward(x):
        x -> conv1d(c, 1)
        for i in range(k):
            x -> dense(g)
        return x

model Net:
    input_shape = (3, 4)
    def forward(x):
        x -> G(8, 4, 2) as p -> G(8, 4, 1) as q -> flatten() -> dense(2) as head
"""


def test_a_second_iteration_reading_the_width_it_made_shows_no_size_kept() -> None:
    """review59 u1: at ``g = 4`` on a ``(3, 4)`` input both iterations build
    ``nn.Linear(4, 4)``; the class wrote ``nn.Linear(4, g)``, which ``G(8, 5, 2)``
    cannot load. The second iteration's 4 is the ``g`` the first made: the walk of the
    channels falls back (``untracked_sizes``); the walk of the last axis threads the
    features and takes the channels the convolution reads by name, as the calls' classes
    do (``G(in_channels, in_features, c, g, k)``)."""
    notes, code = roll_notes(UNTRACKED)
    assert notes == [], notes
    assert CLASS.findall(code) == ["G", "Net"], code
    assert "nn.Linear(4, g)" not in code
    assert "nn.Conv1d(in_channels, c, kernel_size=1)" in code, code
    assert 'setattr(self, f"dense{i + 1}", nn.Linear(channels, g))' in code, code
    assert check_source(UNTRACKED) == []
