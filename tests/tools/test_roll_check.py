"""``aurane.tools.roll_check`` at CI size: the fuzz programs whose rolled block classes
were right only at the program's calls (seed 68000233's ``causal=True`` of ``causal=p1``,
seed 36000088's ``nn.RMSNorm((8, 8))`` of ``axes=2 * p0``) check clean, and the command
runs over a few programs."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")

from aurane.tools.fuzz import generate  # noqa: E402
from aurane.tools.roll_check import check_source, main  # noqa: E402
from tests.backends.torch.one_class import choice  # noqa: E402


@pytest.mark.parametrize("seed", [68000233, 36000088])
def test_known_fuzz_programs_check_clean(seed: int) -> None:
    assert check_source(generate(seed).text) == []


def test_the_command_checks_a_few_programs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--programs", "3", "--seed", "68"]) == 0
    assert ", 0 problems" in capsys.readouterr().out


def test_a_class_joined_over_branches_is_checked() -> None:
    """A block whose calls took different ``if`` branches is one class (``branches.py``),
    not a rolled one: it is compared at its calls and at other arguments with the build
    of one class per call (``per_call=True``), where it was not checked at all."""
    from collections import Counter

    source = (
        "model Sel(flag, w):\n    def forward(x):\n        if flag:\n"
        "            x -> dense(w).relu\n        else:\n            x -> layer_norm()\n"
        "        return x\n\nmodel Net:\n    input_shape = (3,)\n    def forward(x):\n"
        "        x -> Sel(true, 4) -> Sel(false, 2)\n        return x\n"
    )
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["calls"] == 2 and counts["other arguments"] > 0


LEFT_OUT = """
model Unit0(w):
    def forward(x):
        return x -> dense(w).relu

model Unit1(w):
    def forward(x):
        return x -> dense(w).relu -> dense(2 * w)

model Fam0(w0, n0, block0 = Unit0):
    def forward(x):
        for i in range(n0):
            x -> block0(w0)
        return x

model Net:
    input_shape = (5,)
    def forward(x):
        h = Fam0(x, 3, 3)
        x = Fam0(h, 2, 3, block0=Unit1)
        return x
"""


def test_a_call_leaving_a_defaulted_parameter_out_pairs_its_arguments_right() -> None:
    """camp76 (fuzz seed 101000034): the tensors a call is made on were counted as the
    arguments past the parameters, so ``Fam0(x, 3, 3)`` (``block0`` left out) paired
    ``x`` with ``w0`` and the check changed ``w0``'s literal as if it were ``n0``'s: a
    problem the class does not have. A chain's step is called on one tensor fewer."""
    from collections import Counter

    from aurane.backends.torch.rolled import syntax_items
    from aurane.syntax import ast
    from aurane.syntax.parser import parse_program
    from aurane.tools.roll_check import _chain_steps, _param_arguments

    counts: Counter[str] = Counter()
    assert check_source(LEFT_OUT, counts) == []
    assert counts["other arguments"] > 0, counts
    source = (
        "model B(w, n = 2):\n    def forward(x):\n        return x\n\n"
        "model N:\n    input_shape = (4,)\n    def forward(x):\n        h = B(x, 3)\n"
        "        return h -> B(5)\n"
    )
    program, _ = parse_program(source, "n.aur")
    assert program is not None
    block, entry = program.models
    assert entry.forward is not None
    steps = _chain_steps(entry.forward.body)
    calls = [i for i in syntax_items(entry.forward.body) if isinstance(i, ast.Call)]
    pairs = [[(p, v.value) for p, v in _param_arguments(c, block, steps)] for c in calls]
    assert pairs == [[("w", 3)], [("w", 5)]], pairs


BOOLEAN_FOR_ONE = choice("p == 1", "P(1, 4) -> P(2, 4)")


def test_a_boolean_is_tried_where_the_calls_give_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check builds a class with ``True`` where a call gives 1 (and 1 where one gives
    ``true``): a test written with Python's ``==`` (``True == 1``, review82 F1) is found,
    where the language's ``true == 1`` is false. Here the kind tests are left out."""
    from aurane.backends.torch import branches, rolled

    assert check_source(BOOLEAN_FOR_ONE) == []
    monkeypatch.setattr(rolled, "kind_compare", lambda *_: None)
    monkeypatch.setattr(branches, "kind_compare", lambda *_: None)
    problems = check_source(BOOLEAN_FOR_ONE)
    assert problems and problems[0].startswith("P with p=true (at 'p1'): "), problems


ONES_AT_TWO_COUNTS = """\
model Loop0(p0: int, p1: str, n):
    def forward(x):
        for i in range(n):
            h2 = buffer(p0, init=p1)
            x = add(x, h2)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "ones", 2) as a -> Loop0(3, "ones", 3) as b -> dense(2) as head
"""


def test_a_buffer_fill_a_call_gives_is_tried_at_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """``buffer(p0, init=p1)`` with calls giving ``"ones"``: the check builds the class at
    ``"zeros"`` and ``"full"`` too (the campaign's families give buffer inits by
    parameter), where a class folding the calls' fill would be silently wrong; strings
    were never changed before."""
    from aurane.tools import roll_check

    tried: list[str] = []
    compare = roll_check._one_other

    def recording(
        source: str, cls: type, path: str, bound: dict[str, Any], value: Any, text: str
    ) -> str | None:
        tried.append(text)
        return compare(source, cls, path, bound, value, text)

    monkeypatch.setattr(roll_check, "_one_other", recording)
    assert check_source(ONES_AT_TWO_COUNTS) == []
    assert '"zeros"' in tried and '"full"' in tried, tried
