"""Issue 24 item 3: a block that returns the tensor its loop's last statement binds
(``for i in range(n): x -> dense(w).relu; h = x -> sigmoid()``, then ``return h``) was
written out for its calls' counts (one class per call where they differ, refusing
another count where they agree), the roller saying 'a return that is not a chain' or 'an
assignment to 'h1' the roller does not write' (fuzz seeds 91000144, 91000127). The
rolled class now runs the loop and returns what its last iteration bound: a tensor no
module makes (forward computes it each iteration, as every call's class does), or one
made by modules of its own (``h = x -> dense(out) as head{i}``), whose width is then the
block's output width. Each form is checked against the build with one class per call:
one class, the same modules in the same order, a strict load, equal outputs, and
``roll_check`` building the class at arguments no call gives."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    build,
    built_alike,
    program,
    roll_notes,
    same,
)

# name: (block, its calls, a line of the rolled class)
FORMS: dict[str, tuple[str, str, str]] = {
    # the last iteration's tensor, made by no module, as wide as the threaded one
    "no_module": (
        "model Stack(width, n):\n    def forward(x):\n        for i in range(n):\n"
        "            x -> dense(width).relu\n            h = x -> sigmoid()\n"
        "        return h\n",
        "Stack(6, 2) as a -> Stack(8, 3) as b",
        "            h = torch.sigmoid(x)\n        return h\n",
    ),
    # a chain from the block's input each iteration (fuzz seed 91000144)
    "from_the_input": (
        "model Stack(n):\n    def forward(x):\n        for i in range(n):\n"
        "            h1 = clamp(x, min=-1.0, max=0.5).sigmoid\n        return h1\n",
        "Stack(1) as a -> Stack(3) as b",
        "        for i in range(self.n):\n            h1 = x.clamp(min=-1.0, max=0.5)\n",
    ),
    # a head each iteration (deep supervision): its modules of its own, its width the
    # block's output width
    "made_by_modules": (
        "model Stack(width, out, n):\n    def forward(x):\n        for i in range(n):\n"
        "            x -> dense(width).relu as fc{i}\n"
        "            h = x -> dense(out) as head{i}\n        return h\n",
        "Stack(6, 3, 2) as a -> Stack(8, 5, 3) as b",
        '            setattr(self, f"head{i}", nn.Linear(channels, out))\n',
    ),
    # agreeing calls: one class, which was written out for their count and refused another
    "agreeing_calls": (
        "model Stack(n):\n    def forward(x):\n        for i in range(n):\n"
        "            h1 = abs(x)\n        return h1\n",
        "Stack(3) as a -> Stack(3) as b",
        "        for i in range(self.n):\n            h1 = x.abs()\n        return h1\n",
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_loop_s_last_tensor_returned_rolls(form: str) -> None:
    block, calls, line = FORMS[form]
    source = program(block, calls)
    notes, code = roll_notes(source)
    assert notes == [], notes
    assert CLASS.findall(code) == ["Stack", "Net"], code
    assert line in code and "raise ValueError" not in code, code
    rolled, _, _ = build(source, f"result_{form}")
    per_call, flat, _ = build(source, f"result_{form}_flat", roll=False)
    assert CLASS.findall(flat)[-1] == "Net", flat
    mine, theirs = built_alike(rolled, per_call, "Net")
    same(mine, theirs, torch.randn(3, 4))
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["other arguments"] >= 1, counts


def test_a_caller_reads_the_returned_tensor_s_width() -> None:
    """A rolled caller whose loop calls the block (``Stack(5, 7, j + 1)``): the width
    after it is the head's (``out``), not the threaded tensor's."""
    block = FORMS["made_by_modules"][0]
    outer = (
        "model Outer(k):\n    def forward(x):\n        for j in range(k):\n"
        "            x -> Stack(5, 7, j + 1) as s{j}\n        return x\n"
    )
    source = program(f"{block}\n{outer}", "Stack(6, 3, 2) as a -> Outer(2) as o -> Outer(3) as p")
    notes, code = roll_notes(source)
    assert notes == [] and CLASS.findall(code) == ["Stack", "Outer", "Net"], code
    assert '            setattr(self, f"s{j}", Stack(channels, 5, 7, j + 1))\n' in code, code
    rolled, _, _ = build(source, "result_outer")
    per_call, _, _ = build(source, "result_outer_flat", roll=False)
    mine, theirs = built_alike(rolled, per_call, "Net")
    same(mine, theirs, torch.randn(3, 4))
    assert check_source(source) == []


# name: (block, its calls, the located note): what still keeps a class per call
KEPT: dict[str, tuple[str, str, str]] = {
    # the returned tensor is bound before the loop's last statement: the threaded
    # tensor may go on after it, and no width text says the tensor's
    "bound_before_the_last_statement": (
        "model Stack(width, n):\n    def forward(x):\n        for i in range(n):\n"
        "            h = x -> dense(width) as head{i}\n            x -> dense(width).relu as fc{i}\n"
        "        return h\n",
        "Stack(6, 2) as a -> Stack(8, 3) as b",
        "block 'Stack' at 1:7: an assignment to 'h' the roller does not write",
    ),
}


@pytest.mark.parametrize("form", sorted(KEPT))
def test_a_return_the_roller_does_not_write_keeps_its_classes(form: str) -> None:
    block, calls, note = KEPT[form]
    source = program(block, calls)
    _, code, notes = build(source, f"kept_{form}")
    assert notes == [note], notes
    assert CLASS.findall(code) == ["Stack", "Stack_2", "Net"], code
    assert "raise ValueError" in code, code  # each written out for its call's count
    assert check_source(source) == []
