"""``roll_check`` at input sizes no call gives: a rolled class taking its input's sizes as
constructor arguments (``Stack(in_features, w, n)``) is built at the entry's
``input_shape`` with each size one more and one less, where the source accepts it, and
compared with the class of one call the program so changed compiles to, as at other
arguments (a size the roller folded in holds at the calls only)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("torch")

from aurane.tools import roll_check  # noqa: E402
from aurane.tools.roll_check import check_source  # noqa: E402

STACK = """\
model Stack(w, n):
    def forward(x):
        for i in range(n):
            x -> dense(w).relu
        return x

model Net:
    input_shape = (2, 5)
    def forward(x):
        x -> Stack(4, 2) -> Stack(3, 1)
        return x
"""


def test_a_class_taking_its_input_size_is_tried_at_other_sizes() -> None:
    counts: Counter[str] = Counter()
    assert check_source(STACK, counts) == []
    # the entry's (2, 5) as (3, 5), (1, 5), (2, 6) and (2, 4): each a first call's input
    # no call gives ((2, 4) is the second call's), and the second call's at some
    assert counts["other input sizes"] >= 4, counts
    assert counts["other input sizes not paired"] == 0


def _folding(monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    """The rolled build's code with ``old`` written as ``new`` (a roller's mistake)."""
    compiled = roll_check._compiled

    def tampered(source: str, *, roll: bool) -> Any:
        if not roll:
            return compiled(source, roll=roll)
        from aurane.backends.torch import TorchCodeGenerator
        from aurane.compile import prepare_program

        program, graphs, _ = prepare_program(source, filename="checked.aur")
        generator = TorchCodeGenerator(program, graphs, roll_networks=True, per_call=False)
        code = generator.generate()
        assert old in code
        module = roll_check._module(code.replace(old, new), "rolled")
        return program, graphs, module, generator.rolled_blocks

    monkeypatch.setattr(roll_check, "_compiled", tampered)


def test_a_size_folded_in_that_torch_refuses_is_loud(monkeypatch: pytest.MonkeyPatch) -> None:
    """A class right at its calls' inputs (5 and 4 features) that caps the size at the
    calls' largest builds another layer than the source's at 6 features (no strict
    load), and fails there in torch's matmul: loud, counted, no problem. (seed 7000910's
    per-call ``Fam0(in_channels, rows0, v0)``, written for its call's spatial sizes,
    ``nn.Linear(120, v0)`` after a flatten, is such a class.)"""
    _folding(monkeypatch, "channels = in_features", "channels = min(in_features, 5)")
    counts: Counter[str] = Counter()
    assert check_source(STACK, counts) == []
    assert counts["other input sizes refused by torch"] >= 1, counts


def test_a_size_folded_in_that_runs_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Capped and then padded back, the class runs at 6 features with another layer
    than the source's: a problem (its modules are not the source's)."""
    _folding(monkeypatch, "channels = in_features", "channels = min(in_features, 5)")
    compiled = roll_check._compiled

    def cut(source: str, *, roll: bool) -> Any:
        found = compiled(source, roll=roll)
        if roll:  # the class drops the features past its cap: it runs
            cls = found[2].Stack
            forward = cls.forward
            cls.forward = lambda self, x: forward(self, x[..., :5])
        return found

    monkeypatch.setattr(roll_check, "_compiled", cut)
    problems = check_source(STACK)
    assert len(problems) == 1, problems
    assert problems[0].startswith("Stack at input (2, 6) (input_shape's 5 as 6;"), problems
    assert "no strict load" in problems[0]


def test_a_class_computing_otherwise_at_another_input_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Silently wrong at an input no call gives: the same modules, another result."""
    _folding(
        monkeypatch,
        "        for i in range(self.n):\n            x = getattr",
        "        if x.shape[1] == 3:\n            x = x * 2\n"
        "        for i in range(self.n):\n            x = getattr",
    )
    problems = check_source(STACK)
    assert len(problems) == 1 and "computes differently" in problems[0], problems
    assert problems[0].startswith("Stack at input (3, 5)"), problems


def test_an_input_the_source_refuses_is_not_compared() -> None:
    """``reshape(2, 3)`` takes 6 numbers only: at 5 or 7 the source refuses the input,
    so no other size is compared (nor reported)."""
    source = STACK.replace("input_shape = (2, 5)", "input_shape = (6,)").replace(
        "x -> Stack(4, 2)", "x -> reshape(2, 3) -> Stack(4, 2)"
    )
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["calls"] == 2 and counts["other input sizes"] == 0, counts


def test_a_network_class_taking_no_input_size_is_tried_at_other_shapes() -> None:
    """A network's class (``model Small = Fam(2, 2)``) writes the variants' input shape
    and takes no size: built with a variant's arguments on that variant's input with a
    size changed, it computes what the variant so changed computes, or fails loudly
    (hunt109 F5's classes were written for the variants' shapes; never tried before)."""
    source = """\
model Fam(w, n):
    def forward(x):
        x -> dense(4) as stem
        for i in range(n):
            x -> dense(w).relu as d{i + 1}
        return x

model Small = Fam(2, 2):
    input_shape = (3, 5)

model Large = Fam(6, 1):
    input_shape = (3, 5)

model Net:
    input_shape = (3,)
    def forward(x):
        return x -> dense(2)
"""
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["network arguments"] > 0 and counts["other input sizes"] > 0, counts
