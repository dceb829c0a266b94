"""``aurane.tools.roll_check`` at CI size: the fuzz programs whose rolled block classes
were right only at the program's calls (seed 68000233's ``causal=True`` of ``causal=p1``,
seed 36000088's ``nn.RMSNorm((8, 8))`` of ``axes=2 * p0``) check clean, and the command
runs over a few programs. ``check_source(..., refused=True)`` (the command's default)
also builds the classes at the arguments the source refuses (review98 F5): some of these
programs' classes still accept them (68000233's ``Loop0`` a boolean ``p1`` given as 1,
36000088's ``axes=4`` past the input's axes, the ``Fam0`` of LEFT_OUT a count ``true``),
for the generator to refuse (roll101's report)."""

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
    assert main(["--programs", "3", "--seed", "68", "--skip-refused"]) == 0
    out = capsys.readouterr().out
    assert ", 0 arguments the source refuses tried (0 run empty), " in out
    assert ", 0 problems and 0 refused values accepted" in out


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
        source: str, cls: type, path: str, bound: dict[str, Any], value: Any, text: str, *rest: Any
    ) -> str | None:
        tried.append(text)
        return compare(source, cls, path, bound, value, text, *rest)

    monkeypatch.setattr(roll_check, "_one_other", recording)
    assert check_source(ONES_AT_TWO_COUNTS) == []
    assert '"zeros"' in tried and '"full"' in tried, tried


NORM_AXES = """
model P(p0):
    def forward(x):
        x -> conv2d(8, 3, padding=1) -> rms_norm(axes=p0)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> P(1) -> P(2) -> P(3)
        return x
"""

# hand-written ``P`` classes for NORM_AXES: the source refuses ``axes`` 0, -1, 4 (the
# input has 3 sample axes) and ``true``; each class computes the source's at 1 to 3
ACCEPTING = """
class P(nn.Module):
    def __init__(self, in_channels, p0):
        super().__init__()
        self.conv2d1 = nn.Conv2d(in_channels, 8, kernel_size=3, padding=1)
        self.rms_norm1 = nn.RMSNorm((8, 8, 8)[-p0:])

    def forward(self, x):
        return self.rms_norm1(self.conv2d1(x))
"""
REFUSING = ACCEPTING.replace(
    "        super().__init__()\n",
    "        super().__init__()\n"
    "        if isinstance(p0, bool) or not 1 <= p0 <= 3:\n"
    "            raise ValueError(f'P normalises 1 to 3 axes, not {p0!r}')\n",
)


def _with_class(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    """The rolled build's ``P`` replaced by the hand-written class ``code``: the check's
    outcome is the class's, whatever the generator writes."""
    from aurane.tools import roll_check

    compiled = roll_check._compiled

    def patched(source: str, *, roll: bool) -> tuple[object, object, object, object]:
        program, graphs, module, rolled = compiled(source, roll=roll)
        if roll:
            exec(compile(code, "<hand-written>", "exec"), module.__dict__)
        return program, graphs, module, rolled

    monkeypatch.setattr(roll_check, "_compiled", patched)


def test_a_class_accepting_arguments_the_source_refuses_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """review98 F5: where the program calling the block at the other arguments is
    rejected (``rms_norm(axes=true)``, ``axes=0``), the class built there was not
    checked at all; now it is built and run on the call's input, and one that builds
    and runs (``nn.RMSNorm((8, 8, 8)[-p0:])`` at ``p0 = True``) is reported."""
    from collections import Counter

    _with_class(monkeypatch, ACCEPTING)
    counts: Counter[str] = Counter()
    problems = check_source(NORM_AXES, counts, refused=True)
    assert len(problems) == 1 and problems[0].startswith("P with p0="), problems
    assert "accepts what the source refuses: S003: argument 'axes'" in problems[0], problems
    # reported once; the block's other values are still tried (hunt109 F8)
    assert counts["refused arguments"] > 1, counts
    # the tests of each form leave it out (the default) until the generator refuses all
    assert check_source(NORM_AXES) == []


def test_a_class_refusing_them_by_name_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same class refusing ``p0`` outside 1 to 3 (``ValueError`` naming it) has no
    problem: it is loud, not wrong; every refused value tried (``true``, ``0``, ``-1``,
    ``4`` one past the calls' largest, ``false``) is counted."""
    from collections import Counter

    _with_class(monkeypatch, REFUSING)
    counts: Counter[str] = Counter()
    assert check_source(NORM_AXES, counts, refused=True) == []
    assert counts["refused arguments"] >= 5, counts
    assert counts["other arguments"] > 0, counts


def test_integers_are_tried_where_the_source_often_refuses_them() -> None:
    """Each integer literal a block call writes is tried at 0, -1, one past the largest
    its calls give there (past a table or the input's axes) and as a boolean."""
    from aurane.source import Span
    from aurane.syntax import ast
    from aurane.tools.roll_check import _changed

    three = ast.Number(value=3, text="3", span=Span(1, 1, 1, 2))
    texts = [text for text, _ in _changed(three, False, largest=5, refused=True)]
    assert texts == ["4", "6", "0", "-1", "true", "false"], texts
    assert [text for text, _ in _changed(three, False)] == ["4"]


def test_only_a_refusal_at_the_changed_call_is_demanded() -> None:
    """An error inside the changed call's instance (a label ``in the call W(0)``) is
    demanded of the class; one the call only leads to (its wider output refused by the
    caller's ``add``) is not: the class built there is not the one wrong."""
    from aurane.compile import prepare_program
    from aurane.source import Span
    from aurane.stages import CompilationError
    from aurane.tools.roll_check import _refusal

    def rejection(width: int) -> CompilationError:
        source = (
            "model W(w):\n    def forward(x):\n        return x -> dense(w)\n\n"
            "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
            f"        h = W(x, {width})\n        return add(h, x)\n"
        )
        with pytest.raises(CompilationError) as error:
            prepare_program(source)
        return error.value

    literal = Span(8, 18, 8, 19)  # the width in ``h = W(x, 4)``
    inside = _refusal(rejection(0), literal)
    assert inside is not None and inside.code == "S004", inside
    assert _refusal(rejection(5), literal) is None
