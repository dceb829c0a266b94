"""Issue 24 item 3: templated layer names that repeat at arguments no call gives (hunt109
F7). The source checks its names at each call (S124, S044): ``as d{i % 2}`` at ``n = 3``,
``d{i}`` beside ``d{i + 1}`` at ``n = 2``, ``d{c}`` over rows holding 4 twice. The rolled
class wrote ``setattr(self, f"d{i % 2}", ...)`` for every count, so at those arguments it
overwrote the earlier module without a word (one module applied twice, a state dict
short of a key). A name the roller cannot show to stay apart at every argument now keeps
one class per call, with a located note; each class refuses the counts it was not written
for, so ``roll_check`` (trying other and refused arguments) finds nothing. Names that do
stay apart (``layer{i + 1}`` over ``range(n)``, ``d{i}_{j}`` in two loops, one template in
both branches of an ``if``) still roll."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, build, refusing, roll_notes, twin  # noqa: E402


def _block(loop: str, calls: str, params: str = "n: int, w: int") -> str:
    """A block ``P`` running ``loop`` (its forward's first lines) then a head."""
    return f"""\
model P({params}):
    def forward(x):
{loop}
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> {calls}
        return x
"""


MODULO = _block(
    "        for i in range(n):\n            x -> dense(w) as d{i % 2}",
    "P(1, 4) -> P(2, 5)",
)
SHIFTED_TWICE = _block(
    "        for i in range(n):\n"
    "            x -> dense(w) as d{i}\n"
    "            x -> dense(w) as d{i + 1}",
    "P(1, 4) -> P(1, 5)",
)
ROW_ITEM = _block(
    "        for c, use in zip(widths, flags):\n"
    "            if use:\n"
    "                x -> dense(c) as d{c}\n"
    "            x -> relu()",
    "P([4], [true], 4) -> P([5, 6], [false, true], 5)",
    params="widths, flags, w: int",
)
NESTED_ONE_HOLE = _block(
    "        for i in range(n):\n"
    "            for j in range(2):\n"
    "                x -> dense(w) as d{i}",
    "P(0, 4) -> P(0, 5)",
)

UNGUARDED_BESIDE_FIXED = _block(  # ``P(4, ...)`` builds ``d3`` twice: S044
    "        x -> dense(w) as d3\n        for i in range(n):\n            x -> dense(w) as d{i}",
    "P(1, 4) -> P(2, 5)",
)


@pytest.mark.parametrize(
    ("source", "name", "written"),
    [
        (MODULO, "modulo", "'d{i % 2}' may repeat"),
        (SHIFTED_TWICE, "shifted", "'d{i}' and 'd{i + 1}' may be the same"),
        (ROW_ITEM, "row_item", "'d{c}' may repeat"),
        (NESTED_ONE_HOLE, "nested", "'d{i}' may repeat"),
        (UNGUARDED_BESIDE_FIXED, "unguarded", "'d3' and 'd{i}' may be the same"),
    ],
)
def test_a_name_that_may_repeat_keeps_a_class_per_call(
    source: str, name: str, written: str
) -> None:
    """No class that overwrites a module: the located note, classes that strict-load the
    per-call build, and ``roll_check`` (other and refused arguments) finds nothing."""
    notes, code = roll_notes(source)
    assert len(notes) == 1 and notes[0].startswith("block 'P' at 1:7: "), notes
    assert written in notes[0], notes
    assert 'setattr(self, f"d{' not in code, code
    refusing(source, name, torch.randn(2, 3, 8))
    # T040 (a boolean count) is a refused kind the generator leaves (docs/codegen.md)
    problems = check_source(source, refused=True)
    assert [p for p in problems if "T040" not in p] == [], problems


def test_the_class_written_per_call_refuses_the_repeating_count() -> None:
    """``P(8, 3, 4)`` (the source refuses ``P(3, 4)``: S124) raises, never shares ``d0``."""
    module, _, _ = build(MODULO, "modulo_refuses")
    first = module.Net().p1
    with pytest.raises(ValueError, match="written for n == 1"):
        type(first)(8, 3, 4)


APART = _block(
    "        for i in range(n):\n"
    "            x -> dense(w) as layer{i + 1}\n"
    "            x -> dense(w) as proj{i}",
    "P(1, 4) -> P(2, 5)",
)
TWO_LOOPS = _block(
    "        for i in range(n):\n"
    "            for j in range(2):\n"
    "                x -> dense(w) as d{i}_{j}",
    "P(1, 4) -> P(2, 5)",
)
BOTH_BRANCHES = _block(
    "        for i in range(n):\n"
    "            if i > 0:\n"
    "                x -> dense(w) as d{i}\n"
    "            else:\n"
    "                x -> dense(w, bias=false) as d{i}",
    "P(1, 4) -> P(2, 5)",
)


SCALED = _block(
    "        for i in range(n):\n"
    "            x -> dense(w) as d{2 * i}\n"
    "            x -> dense(w) as d{2 * i + 1}",
    "P(1, 4) -> P(2, 5)",
)
GUARDED_BESIDE_FIXED = _block(
    "        x -> dense(w) as d0\n"
    "        for i in range(n):\n"
    "            if i > 0:\n"
    "                x -> dense(w) as d{i}",
    "P(1, 4) -> P(2, 5)",
)

DIGITS = _block(
    "        for i in range(n):\n"
    "            for j in range(2):\n"
    "                x -> dense(w) as d{2 * i + j}",
    "P(1, 4) -> P(2, 5)",
)
AFTER_THE_LOOP = _block(
    "        for i in range(n):\n            x -> dense(w) as d{i}\n        x -> dense(w) as d{n}",
    "P(1, 4) -> P(2, 5)",
)


@pytest.mark.parametrize(
    ("source", "name", "template"),
    [
        (APART, "apart", 'f"layer{i + 1}"'),
        (SCALED, "scaled", 'f"d{2 * i + 1}"'),
        (GUARDED_BESIDE_FIXED, "guarded", 'f"d{i}"'),
        (DIGITS, "digits", 'f"d{2 * i + j}"'),
        (AFTER_THE_LOOP, "after_loop", 'f"d{n}"'),
        (TWO_LOOPS, "two_loops", 'f"d{i}_{j}"'),
        (BOTH_BRANCHES, "branches", 'f"d{i}"'),
    ],
)
def test_names_that_stay_apart_still_roll(source: str, name: str, template: str) -> None:
    checked = twin(source, name, torch.randn(2, 3, 8))
    assert CLASS.findall(checked.code) == ["P", "Net"], checked.code
    assert template in checked.code, checked.code


@pytest.mark.parametrize(
    ("first", "second", "alike"),
    [
        ("d{}", "d{}", True),
        ("d{}", "d1", True),
        ("d{}", "d-1", True),
        ("d{}", "dx", False),
        ("d{}", "d{}_a", False),
        ("d{}_{}", "d{}_{}", True),
        ("layer{}", "layer{}.0", False),
        ("a{}b", "a1{}b", True),
        ("head", "d{}", False),
    ],
)
def test_two_spellings_that_may_meet(first: str, second: str, alike: bool) -> None:
    """Each hole spells any whole number (``-?\\d+``)."""
    from aurane.backends.torch.layer_names import _may_spell_alike, _tokens

    assert _may_spell_alike(_tokens(first), _tokens(second)) is alike
