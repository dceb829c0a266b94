"""``aurane.tools.roll_check`` stops hiding problems (hunt109 F8): a block's tries go on
after a refused value it accepts (the known T040/S004 kinds came first and ended them),
and the classes are built where the checker never built them: at a parameter's default
no call leaves to the class (F1), with an operation-valued argument swapped for another
of its kind, and networks at input shapes no variant gives (F5)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

pytest.importorskip("torch")

from aurane.tools import roll_check  # noqa: E402
from aurane.tools.roll_check import ACCEPTS_REFUSED, check_source  # noqa: E402

COUNTED = """\
model P(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w).relu
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5)
        return x
"""

OPERATION_DEFAULT = """\
model P(n: int, w: int, act = leaky_relu):
    def forward(x):
        for i in range(n):
            x -> dense(w) -> act(0.2)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4, act=elu) -> P(2, 5, act=leaky_relu)
        return x
"""

OPERATION_ROWS = """\
model P(w: int, cfg = ((4, relu), (6, tanh))):
    def forward(x):
        x -> dense(w)
        for c, a in cfg:
            x -> dense(c) -> a
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(4, cfg=((3, gelu),)) -> P(5, ((2, sigmoid), (3, relu)))
        return x
"""

NETWORK = """\
model Fam(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu
        x -> flatten() -> dense(4) as head
        return x

model small = Fam(1, 4):
    input_shape = (3, 16)

model big = Fam(2, 6):
    input_shape = (3, 16)
"""


def test_tries_go_on_after_a_refused_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused value the class accepts is reported once, and the accepted arguments
    after it are still tried: their problem (the wrong class) is reported first."""
    tried: list[str] = []

    def one_other(
        source: str, cls: type, path: str, bound: Any, value: Any, text: str, *rest: Any
    ) -> str:
        tried.append(text)
        if text in ("2", "true", "false", "-1"):
            return f"{ACCEPTS_REFUSED}: T040: a boolean count"
        return "no strict load: made up" if text == "0" else ""

    monkeypatch.setattr(roll_check, "_one_other", one_other)
    problems = check_source(COUNTED, refused=True)
    assert problems[0].startswith("P with n=0") and "no strict load" in problems[0], problems
    refusals = [p for p in problems if ACCEPTS_REFUSED in p]
    assert len(refusals) == 1 and problems[-1] is refusals[0], problems
    assert tried.index("2") < tried.index("0"), tried  # the refused value came first


def test_the_summary_counts_refused_values_apart(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        roll_check, "check_source", lambda *_, **__: [f"P with n=true: {ACCEPTS_REFUSED}: T040"]
    )
    assert roll_check.main(["--programs", "2", "--seed", "68"]) == 1
    assert "0 problems and 2 refused values accepted" in capsys.readouterr().out


def test_a_default_no_call_leaves_to_the_class_is_built() -> None:
    """Every call gives ``act``: the class is also built with it left out (its own
    default) against the program whose call leaves it out."""
    counts: Counter[str] = Counter()
    assert check_source(OPERATION_DEFAULT, counts) == []
    assert counts["defaults left out"] >= 1, counts


def test_a_wrong_default_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """hunt109 F1: a class whose default drops the arguments the source applies it with
    (``act=F.leaky_relu`` for ``act(0.2)``) computes differently where a call leaves it
    out, which no call of the program did."""
    import torch.nn.functional as F

    compiled = roll_check._compiled

    def wrong_default(source: str, *, roll: bool) -> Any:
        program, graphs, module, rolled = compiled(source, roll=roll)
        if roll and source == OPERATION_DEFAULT:  # the program's own class only
            init = module.P.__init__
            defaults = list(init.__defaults__)
            defaults[-1] = F.leaky_relu  # slope 0.01, not the source's 0.2
            init.__defaults__ = tuple(defaults)
        return program, graphs, module, rolled

    monkeypatch.setattr(roll_check, "_compiled", wrong_default)
    problems = check_source(OPERATION_DEFAULT)
    assert any("with act left out" in p and "computes differently" in p for p in problems)


def test_operations_are_swapped_for_others_of_their_kind() -> None:
    counts: Counter[str] = Counter()
    assert check_source(OPERATION_ROWS, counts) == []
    assert counts["other operations"] >= 3, counts
    assert roll_check._other_operations("relu") == ["tanh", "gelu", "sigmoid", "silu", "identity"]
    assert roll_check._other_operations("leaky_relu") == ["elu"]
    assert roll_check._other_operations("conv1d") == []


def test_an_argument_is_left_out_of_the_source() -> None:
    program = roll_check._compiled(OPERATION_DEFAULT, roll=True)[0]
    calls = list(roll_check._block_calls(program, "P"))
    steps = roll_check._chain_steps(program.models[-1].forward.body)
    call, model = calls[0]
    removed = roll_check._removed(OPERATION_DEFAULT, call, "act", model, steps)
    assert removed is not None and "x -> P(1, 4) -> P(2, 5, act=leaky_relu)" in removed
    # a positional argument before others stays
    assert roll_check._removed(OPERATION_DEFAULT, call, "n", model, steps) is None


def test_networks_are_built_at_other_input_shapes() -> None:
    """A network class taking no sizes (``Fam(n, w)``) is built with a variant's
    arguments on that variant's input with one size changed, also where the changed
    program keeps the variants' own classes: it must compute what the variant so
    changed computes, or fail loudly (torch refusing the input)."""
    counts: Counter[str] = Counter()
    program, _, rolled, _ = roll_check._compiled(NETWORK, roll=True)
    # one class for both variants (a loop keeping the length; hunt109 F5's pools before
    # the flatten keep a class per variant since net113): written for their length 16
    assert roll_check._network_sizes(NETWORK, program, rolled, counts) == []
    assert counts["other input sizes"] >= 4, counts
    assert counts["other input sizes refused by torch"] >= 1, counts


FOLDED_WHEN_AGREEING = """\
model Fam1(w0, n0, op0 = leaky_relu):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) -> op0(0.2)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> Fam1(2, 2, op0=leaky_relu) as fam3 -> Fam1(8, 1, op0=elu) as fam4
        return x
"""


def test_an_operation_the_changed_class_folds_is_not_paired() -> None:
    """Campaign seed 184000032: ``op0=leaky_relu`` swapped for ``elu`` makes both calls
    agree, so the changed program's class folds ``elu`` in and its ``Net`` gives no
    ``op0``; building this class with those arguments ran its own default, a
    ``computes differently`` the class does not have. Such a swap is counted, not built."""
    counts: Counter[str] = Counter()
    assert check_source(FOLDED_WHEN_AGREEING, counts) == []
    assert counts["other operations not paired"] >= 1, counts
