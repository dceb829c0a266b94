"""Issue 24 item 3, three forms a review of round 1 found (review98 F4, F8, F11).

A block without loops making a buffer whose ``init`` a parameter gives (``h2 =
buffer(p0, init=p1)``, calls ``Loop0(3, "zeros")`` and ``Loop0(3, "ones")``) kept
``Loop0`` and ``Loop0_2`` with the note 'a block without loops whose calls write ...
torch.zeros(p0) against ... torch.ones(p0)', and one with an ``if`` was joined over its
branches with each call's contents in its branch (``Loop0(3, "ones", true)`` silently
filled with zeros). Both are one class now, choosing the contents by the parameter as the
loop roller does (``torch.zeros(p0) if p1 == "zeros" else torch.ones(p0)``) and refusing
another init. A rolled block that never reads its input width no longer takes it
(``Loop0(n)``, not ``Loop0(in_channels, n)``), nor do its callers pass it. A class
written out for one value of a parameter a boolean may reach guards as one writes it
(``if n != 1 or n is True:``), not with the kinds as a tuple.

Each rolled program gets the twin check (``one_class.twin``): one class, the same modules
in the same order as the builds with one class per call, a strict state-dict load, equal
outputs, and ``roll_check.check_source`` finding no problem at arguments no call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.kinds import refusing_text  # noqa: E402
from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, build, per_call, roll_notes, twin  # noqa: E402

LOOPLESS = """\
model Loop0(p0: int, p1: str):
    def forward(x):
        h2 = buffer(p0, init=p1)
        return add(x, h2)

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "zeros") as a -> Loop0(3, "ones") as b -> dense(2) as head
"""

# the buffer beside a layer reading the input width: the class takes that width
BESIDE_A_LAYER = """\
model Loop0(p0: int, p1: str, w):
    def forward(x):
        h2 = buffer(p0, init=p1)
        x = add(x, h2)
        return x -> dense(w)

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "zeros", 5) as a -> Loop0(5, "ones", 4) as b -> dense(2) as head
"""

# an if and no loop: joined over its branches, each call's contents stayed in its branch
IN_AN_IF_BLOCK = """\
model Loop0(p0: int, p1: str, deep: bool):
    def forward(x):
        h2 = buffer(p0, init=p1)
        x = add(x, h2)
        if deep:
            x -> dense(p0)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Loop0(3, "zeros", true) as a -> Loop0(3, "ones", false) as b -> dense(2) as head
"""

# review98's r1: Loop0 pools and gates, reading no input width
UNREAD_WIDTH = """\
model Loop0(n):
    def forward(x):
        for i in range(n):
            h1 = global_avg_pool(x)
            h1 -> glu()
        return h1

model Outer(c, n):
    def forward(x):
        return x -> conv2d(c, 1) -> Loop0(n) -> dense(4)

model Net:
    input_shape = (4, 3, 2)
    def forward(x):
        a = x -> Outer(4, 3)
        b = x -> Outer(6, 2)
        return concat(a, b, dim=1)
"""

# review98's c2: Stage keeps a class per call (its note), each guarding what it folded
PER_CALL_GUARDS = """\
model Stage(w, n, k, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                x -> dense(w).relu
            x -> dense(w)
            for j in range(k):
                for i in range(j):
                    x -> dense(w)
        elif n > 2:
            x -> dense(w)
        return x -> dense(w)

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(8, 2, 3, true) -> Stage(6, 3, 2, true) -> Stage(8, 3, 1, false) -> \
Stage(8, 1, 1, false)
        return x
"""

CHOICE = '        self.register_buffer("buffer1", torch.zeros(p0) if p1 == "zeros" else torch.ones(p0))\n'
REFUSAL = (
    '        if p1 not in ("zeros", "ones"):  # the buffer\'s contents are written for these inits\n'
    '            raise ValueError(f\'Loop0 is written for p1 in ("zeros", "ones"), not {p1}\')\n'
)


def _one_loop0(source: str, name: str, *inputs: torch.Tensor) -> str:
    """The twin check, against builds of two classes of ``Loop0``; the rolled code."""
    checked = twin(source, name, *inputs)
    assert CLASS.findall(checked.per_call)[:2] == ["Loop0", "Loop0_2"], checked.per_call
    assert CLASS.findall(checked.gen.code).count("Loop0") == 1, checked.gen.code
    assert "Loop0_2" not in checked.gen.code, checked.gen.code
    return checked.gen.code


def test_a_block_without_loops_chooses_its_buffers_contents_by_the_parameter() -> None:
    """One ``Loop0`` filling its buffer as ``p1`` says, refusing another init by name;
    it reads no input width, so takes none."""
    code = _one_loop0(LOOPLESS, "loopless", torch.randn(2, 3))
    assert (
        f"    def __init__(self, p0, p1):\n        super().__init__()\n{REFUSAL}{CHOICE}"
    ) in code, code
    assert '        self.a = Loop0(3, "zeros")\n        self.b = Loop0(3, "ones")\n' in code, code
    module, _, _ = build(LOOPLESS, "loopless_other")
    assert torch.equal(module.Loop0(4, "ones").buffer1, torch.ones(4))
    assert torch.equal(module.Loop0(2, "zeros").buffer1, torch.zeros(2))
    with pytest.raises(ValueError, match=r"Loop0 is written for p1 in .*, not arange"):
        module.Loop0(3, "arange")


def test_a_buffer_filled_by_a_parameter_beside_a_layer() -> None:
    """The layer reads the input width: the class takes it, at calls of two widths."""
    code = _one_loop0(BESIDE_A_LAYER, "beside_a_layer", torch.randn(2, 3))
    assert "    def __init__(self, in_features, p0, p1, w):\n" in code, code
    assert f"{REFUSAL}{CHOICE}        self.dense1 = nn.Linear(in_features, w)\n" in code, code


def test_a_buffer_filled_by_a_parameter_in_a_block_with_an_if_is_not_joined_by_branch() -> None:
    """Joined over the ``if``, each call's contents went with the branch it took: a class
    built with ``"ones"`` and ``deep`` true filled zeros. The rolled class chooses by
    ``p1`` whatever ``deep`` is."""
    code = _one_loop0(IN_AN_IF_BLOCK, "in_an_if_block", torch.randn(2, 3))
    assert f"{REFUSAL}{CHOICE}" in code, code
    module, _, _ = build(IN_AN_IF_BLOCK, "in_an_if_block_other")
    assert torch.equal(module.Loop0(3, 3, "ones", True).buffer1, torch.ones(3))
    assert torch.equal(module.Loop0(3, 3, "zeros", False).buffer1, torch.zeros(3))


def test_calls_giving_inits_of_different_dtypes_keep_a_class_each() -> None:
    """``"zeros"`` and ``"arange"`` (int64 contents): no one class, a located note that
    says why rather than 'a block without loops'."""
    source = LOOPLESS.replace('Loop0(3, "ones")', 'Loop0(3, "arange")')
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Loop0' at 1:7: the init 'p1' of the buffer at 3:14 gives \"zeros\" and"
        ' "arange", of different dtypes'
    ], notes
    assert CLASS.findall(code) == ["Loop0", "Loop0_2", "Net"], code
    assert check_source(source) == []


def test_a_rolled_block_reading_no_input_width_takes_none() -> None:
    """``Loop0`` pools then gates: no line reads its input width, so neither its
    signature nor its caller's call (``Outer``, rolled too) has it."""
    checked = twin(UNREAD_WIDTH, "unread_width", torch.randn(2, 4, 3, 2))
    code = checked.gen.code
    assert "class Loop0(nn.Module):\n    def __init__(self, n):\n" in code, code
    assert "        self.loop01 = Loop0(n)\n" in code, code
    assert "    def __init__(self, in_channels, c, n):\n" in code, code  # conv2d reads it


def test_a_class_written_for_one_value_guards_as_one_writes_it() -> None:
    """``n`` is 1 at the fourth call, which an ``if`` reads: ``n != 1`` would let
    ``True`` through, which the language does not take for 1; the guard refuses it as
    its own clause, not by comparing ``(n, isinstance(n, bool))`` with ``(1, False)``."""
    calls, code = per_call(PER_CALL_GUARDS, "per_call_guards")
    assert (
        "        if n != 1 or n is True:  # written out for this value\n"
        '            raise ValueError(f"Stage_4 is written for n == 1, not {n}")\n'
    ) in code, code
    assert "isinstance(n, bool)) !=" not in code, code
    with pytest.raises(ValueError, match="Stage_4 is written for n == 1, not True"):
        calls.Stage_4(4, 8, True, 1, False)
    calls.Stage_4(4, 8, 1, 1, False)


@pytest.mark.parametrize(
    ("values", "texts", "expected"),
    [
        ([1], ["1"], "p != 1 or p is True"),
        ([0], ["0"], "p != 0 or p is False"),
        ([3], ["3"], "p != 3"),  # no boolean is 3
        ([True], ["True"], "p is not True"),
        ([0, 5], ["0", "5"], "p not in (0, 5) or p is False"),
        ([0, 1], ["0", "1"], "p not in (0, 1) or isinstance(p, bool)"),
        ([True, False], ["True", "False"], "not isinstance(p, bool)"),
        # both kinds: the kind beside the value reads shorter than a clause per value
        ([0, True], ["0", "True"], "(p, isinstance(p, bool)) not in ((0, False), (True, True))"),
    ],
)
def test_the_refusing_test_of_values_a_boolean_may_reach(
    values: list[object], texts: list[str], expected: str
) -> None:
    """``kinds.refusing_text``: each short form refuses exactly what is not a value."""
    assert refusing_text("p", values, texts) == expected
    for candidate in (0, 1, 3, 5, True, False, 2.0):
        wanted = any(v == candidate and type(v) is type(candidate) for v in values) or any(
            v == candidate and not isinstance(v, bool) and not isinstance(candidate, bool)
            for v in values
        )
        assert eval(expected, {}, {"p": candidate}) is (not wanted), (candidate, expected)
