"""Issue 24 item 3: a block whose calls agree on a loop count (or list, or rows) is one
class, and that class takes the count as a constructor argument, so a class built by hand
at another count (``Stack(4, 6, 3)``) must build and compute what the source says there.
It was written out for the calls' count, ignoring the argument: two layers where the
source says three, silently. It now runs the source's loops (the block roller,
``rolled_block.py``, also for calls that agree); where it is still written out (the
roller cannot write it, or an ``if`` reads the value), it refuses another value when built
(``ValueError``). Each form is also checked by ``roll_check``, which builds every block
class taking a parameter at other values."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    build,
    program,
    refusing,
    roll_notes,
    same,
    twin,
)

STACK = """\
model Stack(width, n):
    def forward(x):
        for i in range(n):
            x -> dense(width).relu
        return x
"""


# name: (block, the calls (agreeing), the class built by hand at the first call, the
# first call so changed)
ROLLED: dict[str, tuple[str, str, str, str]] = {
    "count": (STACK, "Stack(6, 2) as a -> Stack(8, 2) as b", "Stack(4, 6, 3)", "Stack(6, 3)"),
    "one_call": (STACK, "Stack(6, 2) as a", "Stack(4, 6, 3)", "Stack(6, 3)"),
    "no_iteration": (
        STACK,
        "Stack(6, 2) as a -> Stack(8, 2) as b",
        "Stack(4, 6, 0)",
        "Stack(6, 0)",
    ),
    "named": (
        STACK.replace("dense(width).relu", "dense(width) as fc{i} -> relu()"),
        "Stack(6, 2) as a -> Stack(8, 2) as b",
        "Stack(4, 6, 3)",
        "Stack(6, 3)",
    ),
    "after_the_loop": (
        STACK.replace("return x", "return x -> dense(4)"),
        "Stack(6, 2) as a -> Stack(8, 2) as b",
        "Stack(4, 6, 3)",
        "Stack(6, 3)",
    ),
    "constant_count": (
        STACK.replace("    def forward", "    depth = 2 * n\n    def forward").replace(
            "range(n)", "range(depth)"
        ),
        "Stack(6, 1) as a -> Stack(8, 1) as b",
        "Stack(4, 6, 2)",
        "Stack(6, 2)",
    ),
    "items": (
        "model Stack(widths):\n    def forward(x):\n        for w in widths:\n"
        "            x -> dense(w).relu\n        return x\n",
        "Stack([6, 5]) as a -> Stack([6, 5]) as b",
        "Stack(4, (6, 5, 3))",
        "Stack([6, 5, 3])",
    ),
    "rows": (
        "model Stack(cfg):\n    def forward(x):\n        for w, k in cfg:\n"
        "            x -> dense(w) -> dropout(0.1 * k)\n        return x\n",
        "Stack([(6, 1), (5, 2)]) as a -> Stack([(6, 1), (5, 2)]) as b",
        "Stack(4, ((6, 1), (5, 2), (3, 1)))",
        "Stack([(6, 1), (5, 2), (3, 1)])",
    ),
}


@pytest.mark.parametrize("form", sorted(ROLLED))
def test_one_class_for_agreeing_calls_builds_another_count(form: str) -> None:
    block, calls, other, changed = ROLLED[form]
    source = program(block, calls)
    # the calls as the build with one class per call builds and computes them
    x = torch.randn(2, 4)
    checked = twin(source, f"agree_{form}", x, against=("flat",))
    code = checked.code
    assert CLASS.findall(code) == ["Stack", "Net"], code
    assert "        for " in code and "raise ValueError" not in code, code
    # the class built by hand at another count, as a program calling it so builds it
    first = calls.split(" as a")[0]
    written_out, _, _ = build(
        program(block, calls.replace(first, changed, 1)), f"agree_{form}_other", roll=False
    )
    torch.manual_seed(0)
    built = eval(other, dict(vars(checked.gen.module)))
    same(built, written_out.Net().a, x)
    assert checked.counts["other arguments"] >= 1, checked.counts


def test_a_count_agreeing_calls_give_is_the_class_s_loop() -> None:
    _, code = roll_notes(program(STACK, "Stack(6, 2) -> Stack(8, 2)"))
    assert (
        "class Stack(nn.Module):\n"
        "    def __init__(self, in_features, width, n):\n"
        "        super().__init__()\n"
        "        self.n = n\n"
        "        channels = in_features\n"
        "        for i in range(n):\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, width))\n'
        "            channels = width\n"
        "\n"
        "    def forward(self, x):\n"
        "        # x: (batch, in_features)\n"
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = F.relu(x)\n"
        "        return x\n"
    ) in code, code
    assert "self.stack1 = Stack(4, 6, 2)\n" in code, code


# name: (block, the calls (agreeing), the class built by hand at another value, the
# error it raises)
REFUSED: dict[str, tuple[str, str, str, str]] = {
    # an ``if`` on the iteration: one count cannot tell how its branch numbers modules
    "branch_on_the_iteration": (
        "model Stack(width, n):\n    def forward(x):\n        for i in range(n):\n"
        "            if i == n - 1:\n                x -> dense(width)\n"
        "            else:\n                x -> dense(width).relu\n        return x\n",
        "Stack(6, 2) -> Stack(8, 2)",
        "Stack(4, 6, 3)",
        "Stack is written for n == 2, not 3",
    ),
    # the roller cannot write a loop between a skip and its join: a located note
    "loop_the_roller_cannot_write": (
        "model Stack(width, n):\n    def forward(x):\n        for i in range(n):\n"
        "            s = x\n            for j in range(2):\n"
        "                x -> dense(width) -> relu()\n        s -> dense(width) as lateral\n"
        "        x -> dense(width) as up\n        x = add(x, s)\n        return x\n",
        "Stack(6, 2) -> Stack(8, 2)",
        "Stack(4, 6, 3)",
        "Stack is written for n == 2, not 3",
    ),
    "flag": (
        "model Stack(width, act: bool):\n    def forward(x):\n        x -> dense(width)\n"
        "        if act:\n            x -> relu()\n        return x\n",
        "Stack(6, true) -> Stack(8, true)",
        "Stack(4, 6, False)",
        "Stack is written for act == True, not False",
    ),
    "width_an_if_reads": (
        "model Stack(width):\n    def forward(x):\n        x -> dense(width)\n"
        "        if width > 4:\n            x -> relu()\n        return x\n",
        "Stack(6) -> Stack(8)",
        "Stack(4, 3)",
        r"Stack is written for width in \(6, 8\), not 3",
    ),
    # read by the source, folded into a number by the class: nn.LayerNorm((6,))
    "folded_into_a_number": (
        "model Stack(width, p: int):\n    def forward(x):\n"
        "        return x -> dense(width) -> layer_norm(axes=p) as norm\n",
        "Stack(6, 1) -> Stack(8, 1)",
        "Stack(4, 6, 2)",
        "Stack is written for p == 1, not 2",
    ),
}


# the located notes of the count forms the roller does not write
NOTES = {
    "branch_on_the_iteration": [
        "block 'Stack' at 1:7: an 'if' on a loop's iteration, at one count"
    ],
    "loop_the_roller_cannot_write": ["block 'Stack' at 1:7: a loop between 's = x' and its join"],
}


@pytest.mark.parametrize("form", sorted(REFUSED))
def test_a_class_written_out_refuses_another_value(form: str) -> None:
    block, calls, other, error = REFUSED[form]
    source = program(block, calls)
    # the calls build as before
    rolled, code, notes = refusing(source, f"refused_{form}", torch.randn(2, 4))
    assert notes == NOTES.get(form, []), notes
    assert CLASS.findall(code) == ["Stack", "Net"], code
    with pytest.raises(ValueError, match=error):
        eval(other, dict(vars(rolled)))


def test_roll_check_finds_a_class_written_for_the_calls_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``roll_check`` builds every block class taking a parameter at another value, also
    one for calls that agree: with no parameter seen as folded (the class written out, as
    before, with no guard), it finds ``Stack`` built at ``n=3`` short of a layer."""
    from aurane.backends.torch import param_blocks

    source = program(STACK, "Stack(6, 2) as a -> Stack(8, 2) as b")
    monkeypatch.setattr(param_blocks, "loop_params", lambda model: frozenset())
    monkeypatch.setattr(param_blocks, "branch_params", lambda model: frozenset())
    monkeypatch.setattr(param_blocks, "read_params", lambda model: frozenset())
    found = check_source(source)
    assert found and found[0].startswith("Stack with n=3 (at 'a'): state-dict keys"), found


def test_the_note_says_the_class_is_written_out_for_the_calls_count() -> None:
    """One class for agreeing calls is no class per call: ``aurane compile``'s note says
    it is written out for their count."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    block = REFUSED["branch_on_the_iteration"][0]
    parsed, graphs, _ = prepare_program(program(block, "Stack(6, 2)"), filename="n.aur")
    generator = TorchCodeGenerator(parsed, graphs)
    generator.generate()
    assert [f.note for f in generator.roll_fallbacks] == [
        "block 'Stack' at 1:7 is written out for its calls' counts (refusing another):"
        " an 'if' on a loop's iteration, at one count"
    ]
