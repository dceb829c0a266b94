"""Issue 24 item 3: a block whose calls keep one class per call (a form the roller cannot
write, with its located note, or ``aurane compile --class-per-call``) writes each class
out for its call, yet the class still takes the block's parameters as constructor
arguments. One built by hand at another value (``Stack_2(6, 8, 5)`` for a class written
for ``n == 3``) silently built what its call gives: three layers where the source says
five. Each such class now refuses a value it folded (a loop count, a list, a flag an
``if`` reads, a number written into a size) that is not its call's, as the one class for
agreeing calls does (``test_agreeing_counts.py``), and is built as before at its own.
Network variants that keep a class each take no arguments at all: nothing to refuse."""

from __future__ import annotations

import re
import types

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, build, built_alike, program, roll_notes, same  # noqa: E402

# a loop between a skip and its join: the roller keeps one class per call
SKIP = """\
model Stack(width, n):
    def forward(x):
        for i in range(n):
            s = x
            for j in range(2):
                x -> dense(width) -> relu()
        s -> dense(width) as lateral
        x -> dense(width) as up
        x = add(x, s)
        return x
"""

# every kind of value a class per call folds, beside the count: a list its loop runs
# over, a flag an ``if`` reads, a number folded into a size (``nn.LayerNorm(5)``) and a
# list of operations
FOLDED = """\
model Stack(widths, act: bool, p, op, k: int, acts):
    def forward(x):
        for w in widths:
            s = x
            for j in range(2):
                x -> dense(w) -> relu()
        s -> dense(widths[-1]) as lateral
        x -> dense(widths[-1]) as up
        if act:
            x -> relu()
        x = add(x, s)
        for a in acts:
            x -> a()
        x -> dropout(p) -> op()
        x -> layer_norm(axes=k) as norm
        return x
"""

FOLDED_CALLS = (
    "Stack([6, 5], true, 0.1, gelu, 1, [relu, gelu]) as a"
    " -> Stack([8, 7, 3], false, 0.2, tanh, 1, [tanh]) as b"
)


# name: (block, its calls, the class built at another value, the error it raises); the
# classes built by hand at their calls' values are those the program's Net builds
REFUSED: dict[str, tuple[str, str, str, str]] = {
    "count": (SKIP, "Stack(6, 2) as a -> Stack(8, 3) as b", "Stack_2(6, 8, 5)", "n == 3, not 5"),
    "count_of_the_first": (
        SKIP,
        "Stack(6, 2) as a -> Stack(8, 3) as b",
        "Stack(4, 6, 3)",
        "n == 2, not 3",
    ),
    "list": (
        FOLDED,
        FOLDED_CALLS,
        "Stack_2(5, (8, 7), False, 0.2, nn.Tanh, 1, (nn.Tanh,))",
        r"widths == \(8, 7, 3\), not \(8, 7\)",
    ),
    "flag": (
        FOLDED,
        FOLDED_CALLS,
        "Stack(4, (6, 5), False, 0.1, nn.GELU, 1, (nn.ReLU, nn.GELU))",
        "act == True, not False",
    ),
    "number_folded_into_a_size": (
        FOLDED,
        FOLDED_CALLS,
        "Stack_2(5, (8, 7, 3), False, 0.2, nn.Tanh, 2, (nn.Tanh,))",
        "k == 1, not 2",
    ),
    "operations": (
        FOLDED,
        FOLDED_CALLS,
        "Stack(4, (6, 5), True, 0.1, nn.GELU, 1, (nn.GELU,))",
        r"acts == \(nn.ReLU, nn.GELU\), not",
    ),
}

# ``k`` folded into the norm's size (``nn.LayerNorm(5)``) though the class writes it in
# ``dense(k + 4)``: the class reads it, yet not where the norm is built
AT_ONE_CALL = SKIP.replace("(width, n)", "(width, n, k: int)").replace(
    "        return x\n",
    "        x -> layer_norm(axes=k) as norm -> dense(k + 4) as last\n        return x\n",
)
REFUSED["number_folded_at_one_call"] = (
    AT_ONE_CALL,
    "Stack(6, 2, 1) as a -> Stack(8, 3, 1) as b",
    "Stack(4, 6, 2, 2)",
    "k == 1, not 2",
)

NOTE = "block 'Stack' at 1:7: a loop between 's = x' and its join"


def _classes(code: str) -> str:
    """The generated classes, without the header naming the source file."""
    return code[code.index("\nclass ") :].split("# aurane-source-map")[0]


def _built(module: types.ModuleType, text: str) -> torch.nn.Module:
    torch.manual_seed(0)
    return eval(text, {**vars(module), "nn": torch.nn})


@pytest.mark.parametrize("per_call", [False, True], ids=["fallback", "class_per_call"])
@pytest.mark.parametrize("form", sorted(REFUSED))
def test_a_class_per_call_refuses_another_value(form: str, per_call: bool) -> None:
    block, calls, other, error = REFUSED[form]
    source = program(block, calls)
    notes, code = roll_notes(source)
    assert notes == [NOTE], notes
    assert CLASS.findall(code) == ["Stack", "Stack_2", "Net"], code
    module, flat_code, _ = build(source, f"guard_{form}", roll=not per_call)
    if per_call:  # aurane compile --class-per-call writes the same classes, guarded alike
        assert _classes(flat_code) == _classes(code), flat_code
    with pytest.raises(ValueError, match=f"{other.split('(')[0]} is written for {error}"):
        _built(module, other)
    # each class built at its own call's values: as the program builds it
    net = module.Net()
    calls_made = re.findall(r"^        self\.(\w+) = (Stack\w*\(.*\))$", code, re.M)
    assert [name for name, _ in calls_made] == ["a", "b"], code
    x = torch.randn(2, 4)
    for name, text in calls_made:
        same(_built(module, text), getattr(net, name), x if name == "a" else net.a(x))


def test_the_guards_leave_the_calls_as_they_were() -> None:
    """The guards run before any module is made: the program builds the modules it
    built, in the same order, and computes the same."""
    source = program(FOLDED, FOLDED_CALLS)
    rolled, code, _ = build(source, "guards_fallback")
    per_call, _, _ = build(source, "guards_flat", roll=False)
    mine, theirs = built_alike(rolled, per_call, "Net")
    same(mine, theirs, torch.randn(2, 4))
    assert (
        "class Stack_2(nn.Module):\n"
        "    def __init__(self, in_features, widths, act, p, op, k, acts):\n"
        "        super().__init__()\n"
        "        if tuple(widths) != (8, 7, 3):  # written out for this value\n"
        '            raise ValueError(f"Stack_2 is written for widths == (8, 7, 3), not {widths}")\n'
        "        if act:  # written out for this value\n"
        '            raise ValueError(f"Stack_2 is written for act == False, not {act}")\n'
        "        if k != 1:  # written out for this value\n"
        '            raise ValueError(f"Stack_2 is written for k == 1, not {k}")\n'
        "        if acts != (nn.Tanh,):  # written out for this value\n"
        '            raise ValueError(f"Stack_2 is written for acts == (nn.Tanh,), not {acts}")\n'
    ) in code, code


def test_a_value_the_class_writes_as_its_parameter_needs_no_guard() -> None:
    """``width``, ``p`` and ``op`` are written as the parameters (``nn.Linear(in_features,
    width)``, ``nn.Dropout(p)``, ``op()``): any value builds what the source says."""
    _, code = roll_notes(program(FOLDED, FOLDED_CALLS))
    for param in ("width", "p", "op"):
        assert f"written for {param} ==" not in code, code
    _, code = roll_notes(program(SKIP, "Stack(6, 2) as a -> Stack(8, 3) as b"))
    assert "written for width" not in code and "nn.Linear(width, width)" in code, code


def test_network_variants_kept_apart_take_no_arguments() -> None:
    """A network whose variants keep a class each (the network roller's note) builds
    each with no constructor arguments: nothing it folded can be given another value."""
    source = (
        "use torch\nmodel Net(width, n, act: bool):\n    def forward(x):\n"
        "        x -> dense(width) as stem\n        for i in range(n):\n"
        "            s = x\n            for j in range(2):\n"
        "                x -> dense(width * (i + 1)) -> relu()\n"
        "        s -> dense(width) as lateral\n        x -> dense(width) as up\n"
        "        x = add(x, s)\n        if act:\n            x -> relu()\n"
        "        return x -> dense(3) as head\n\n"
        "model small = Net(4, 2, true):\n    input_shape = (5,)\n\n"
        "model wide = Net(6, 3, false):\n    input_shape = (5,)\n"
    )
    _, code, notes = build(source, "variants_apart")
    assert len(notes) == 1 and notes[0].startswith("network 'Net' at 2:7: "), notes
    assert re.findall(r"^class (\w+)\(nn\.Module\):\n    def __init__\(self\):$", code, re.M) == [
        "small",
        "wide",
    ], code


# review75: a class written out for calls at (4, true), (6, true), (9, false) guarded w and
# flag apart, so Fam(4, 9, True) passed both and built no layer norm where the source
# (w >= 8 and flag) builds one
MIXED = """\
model Fam(w, flag):
    def forward(x):
        x -> dense(w) as stem
        if w >= 8 and flag:
            x -> layer_norm() as ln
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(4, true) -> Fam(6, true) -> Fam(9, false) -> dense(2) as head
"""


def test_values_the_calls_give_only_together_are_refused_apart() -> None:
    from aurane.tools.roll_check import check_source

    notes, code = roll_notes(MIXED)
    assert "if (w, flag) not in ((4, True), (6, True), (9, False)):" in code, code
    module = build(MIXED, "mixed")[0]
    for w, flag in ((4, True), (6, True), (9, False)):
        module.Fam(4, w, flag)
    with pytest.raises(ValueError, match=r"Fam is written for \(w, flag\) in .*, not \(9, True\)"):
        module.Fam(4, 9, True)
    assert check_source(MIXED) == []


# review75: the child name ``norm=`` (and a keyword ``eps=0.001``) read as the parameter of
# that name, so the folded normalised shape went unguarded (Fam(2, 2) built
# nn.LayerNorm((2, 3, 8)) where the source normalises (3, 8); on samples of several axes the
# class now writes ``(in_channels, 3, 8)[-norm:]``, so the norm is folded on one axis here:
# ``nn.LayerNorm(in_features)``, right at ``norm == 1`` only)
NAMED_LIKE = """\
model Fam(norm):
    def forward(x):
        x -> layer_norm(axes=norm) as layers.norm
        x -> dense(4) as layers.proj
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Fam(1) -> dense(2) as head
"""


def test_a_parameter_named_like_a_child_or_keyword_is_still_refused() -> None:
    _, code = roll_notes(NAMED_LIKE)
    assert "if norm != 1:  # written out for this value" in code, code
    module = build(NAMED_LIKE, "named_like")[0]
    with pytest.raises(ValueError, match="Fam is written for norm == 1, not 2"):
        module.Fam(8, 2)
    assert module.Fam(8, 1).layers.norm.normalized_shape == (8,)
