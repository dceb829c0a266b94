"""Issue 24 item 3: a loop body or ``if`` branch that no call of a block runs
(``for i in range(n1)`` with ``n1=0`` at every call, ``if flag:`` with ``true`` at every
call) left the block one class per call with the note 'a loop that no variant takes' (the
most frequent reason in ``bench/one_class_per_block.py``): the roller had no IR to write the
body from. It now lowers the block once more at arguments that run the body (a phantom
call: ``n1=1``, ``flag=false``) and reads it beside the calls, so the class writes that body
too; the program builds nothing of the phantom. Where no phantom lowers, the class is
written without the body and refuses the arguments that would run it (``ValueError``), with
a located note. Each program's ``Net`` is built as the build of one class per call builds
it (the same modules in the same order), strict-loads it and computes the same;
``roll_check`` rebuilds the class at arguments the calls did not give (those that run the
body among them) against the class of a call compiled so."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    program,
    refusing,
    roll_notes,
    same,
    twin,
)

AFTER = """\
model Fam(w0, n0, w1, n1):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) as layers.{i}
            x -> layer_norm()
        for i in range(n1):
            x -> dense(w1) as d1_{i + 1} -> tanh()
        return x
"""

BEFORE = """\
model Fam(w0, n0, w1, n1):
    def forward(x):
        for i in range(n1):
            x -> dense(w1) as d1_{i + 1} -> tanh()
        for i in range(n0):
            x -> dense(w0) as layers.{i}
            x -> layer_norm()
        return x
"""

BETWEEN = """\
model Fam(w0, n0, w1, n1, n2):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) as layers.{i}
        for i in range(n1):
            x -> dense(w1) as d1_{i + 1} -> tanh()
        for i in range(n2):
            x -> dense(w0).relu
        return x
"""

IF_ELSE = """\
model Fam(flag, w, n):
    def forward(x):
        if flag:
            x -> dense(w).relu
        else:
            x -> layer_norm()
        for i in range(n):
            x -> dense(w) as d{i}
        return x
"""

ELIF = """\
model Fam(mode, w, n):
    def forward(x):
        for i in range(n):
            x -> dense(w) as d{i}
        if mode == 1:
            x -> dense(w).relu
        elif mode == 2:
            x -> dense(w).tanh
        else:
            x -> layer_norm()
        return x
"""

# fuzz seed 91000234's form: the calls give an operation (the phantom gives the first's)
OPERATION = """\
model Fam(w0, n0, flag, w1, op0 = relu):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) -> op0
        if flag:
            x -> dense(w1).relu
        else:
            x -> dense(w1) -> layer_norm()
        return x
"""

# name: (block, the calls, the class built by hand at arguments that run the body, the
# modules it then has beyond the calls' (by name), the untaken body's line in the class,
# the first call so changed)
TAKEN: dict[str, tuple[str, str, str, tuple[str, ...], str, str]] = {
    "loop_after": (
        AFTER,
        "Fam(6, 2, 5, 0) as a -> Fam(6, 1, 5, n1=0) as b",
        "Fam(4, 6, 1, 5, 2)",
        ("d1_1", "d1_2"),
        '            setattr(self, f"d1_{i + 1}", nn.Linear(channels, w1))\n',
        "Fam(6, 1, 5, 2) as a",
    ),
    "loop_before": (
        BEFORE,
        "Fam(6, 2, 5, 0) as a -> Fam(6, 1, 5, n1=0) as b",
        "Fam(4, 6, 1, 5, 2)",
        ("d1_1", "d1_2"),
        '            setattr(self, f"d1_{i + 1}", nn.Linear(channels, w1))\n',
        "Fam(6, 1, 5, 2) as a",
    ),
    "loop_between": (
        BETWEEN,
        "Fam(6, 2, 5, 0, 1) as a -> Fam(6, 1, 5, 0, 2) as b",
        "Fam(4, 6, 1, 5, 2, 1)",
        ("d1_1", "d1_2"),
        '            setattr(self, f"d1_{i + 1}", nn.Linear(channels, w1))\n',
        "Fam(6, 1, 5, 2, 1) as a",
    ),
    "if_else": (
        IF_ELSE,
        "Fam(true, 6, 2) as a -> Fam(true, 6, 1) as b",
        "Fam(4, False, 6, 1)",
        ("layer_norm1",),
        "            self.layer_norm1 = nn.LayerNorm(channels)\n",
        "Fam(false, 6, 1) as a",
    ),
    "operation_given": (
        OPERATION,
        "Fam(6, 2, false, 5, op0=tanh) as a -> Fam(6, 1, false, 4, op0=silu) as b",
        "Fam(4, 6, 1, True, 5)",
        ("dense2",),
        "        if flag:\n",
        "Fam(6, 1, true, 5) as a",
    ),
    "elif_else": (
        ELIF,
        "Fam(1, 6, 2) as a -> Fam(1, 6, 1) as b",
        "Fam(4, 3, 6, 1)",
        ("d0", "layer_norm1"),
        "        else:\n            self.layer_norm1 = nn.LayerNorm(channels)\n",
        "Fam(3, 6, 1) as a",
    ),
    "elif": (
        ELIF,
        "Fam(1, 6, 2) as a -> Fam(1, 6, 1) as b",
        "Fam(4, 2, 6, 1)",
        ("d0", "dense2"),  # the IR numbers the named d0 too
        "        elif mode == 2:\n",
        "Fam(2, 6, 1) as a",
    ),
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_a_body_no_call_runs_is_written(name: str) -> None:
    """One class for the calls, writing the body none of them runs; it was one class per
    call. Built at arguments that run it, it has that body's modules, and ``roll_check``
    finds it computing what a call at those arguments computes."""
    block, calls, by_hand, more, line, _ = TAKEN[name]
    source = program(block, calls)
    checked = twin(source, name, torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Fam", "Net"], gen.code
    fam = block_class(gen, "Fam")
    assert line in fam, fam
    assert "raise ValueError" not in fam, fam
    built = eval(by_hand, {"Fam": gen.module.Fam})
    names = {n for n, _ in built.named_modules()}
    assert set(more) <= names, names
    counts = checked.counts  # roll_check's, at arguments no call gives
    assert counts["calls"] == 2 and counts["other arguments"] > 0, counts


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_built_where_the_body_runs_it_computes_as_such_a_call(name: str) -> None:
    """The class built by hand at arguments that run the body against the class of a
    call at those arguments, compiled with one class per call: the same modules in the
    same order, a strict load, the same outputs."""
    block, calls, by_hand, _, _, taking = TAKEN[name]
    rolled, _, _ = build(program(block, calls), f"{name}_rolled")
    first = calls.split(" -> ")[0]
    flat, _, _ = build(program(block, calls.replace(first, taking)), f"{name}_taking", roll=False)
    torch.manual_seed(0)
    theirs = flat.Net().a
    torch.manual_seed(0)
    mine = eval(by_hand, {"Fam": rolled.Fam})
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    same(theirs, mine, torch.randn(3, 4))


def test_the_loop_is_written_as_the_source_says() -> None:
    """Fuzz seed 91000008's form: the loop no call runs reads its own count and width."""
    source = program(AFTER, TAKEN["loop_after"][1])
    checked = twin(source, "form", torch.randn(3, 4))
    gen = checked.gen
    assert (
        "        for i in range(n1):\n"
        '            setattr(self, f"d1_{i + 1}", nn.Linear(channels, w1))\n'
        "            channels = w1\n"
    ) in block_class(gen, "Fam")
    assert (
        "        for i in range(self.n1):\n"
        '            x = getattr(self, f"d1_{i + 1}")(x)\n'
        "            x = torch.tanh(x)\n"
    ) in block_class(gen, "Fam")


def test_the_phantom_builds_nothing() -> None:
    """The program's modules, their names and its state dict are the calls' alone."""
    source = program(IF_ELSE, TAKEN["if_else"][1])
    rolled, code, notes = build(source, "nothing")
    assert notes == []
    flat, _, _ = build(source, "nothing_flat", roll=False)
    mine, theirs = built_alike(rolled, flat, "Net")
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert "layer_norm" not in "".join(mine.state_dict())
    same(theirs, mine, torch.randn(3, 4))


# the untaken loop reshapes its input to 7 features: no argument that runs it lowers at
# the calls' inputs of 4 features
UNLOWERED = """\
model Fam(w0, n0, n1):
    def forward(x):
        for i in range(n0):
            x -> dense(w0) as layers.{i}
        for i in range(n1):
            x -> reshape(7)
        return x
"""


def test_a_body_that_lowers_at_no_other_arguments_is_refused() -> None:
    """One class, written without the body and refusing the count that would run it,
    with a located note; ``roll_check`` finds the refusal (never a wrong class)."""
    source = (
        f"{UNLOWERED}\nmodel Net:\n    input_shape = (4,)\n    def forward(x):\n"
        "        x -> Fam(4, 2, 0) as a -> Fam(4, 1, 0) as b -> dense(2) as head\n"
    )
    rolled, code, notes = refusing(source, "refused", torch.randn(3, 4))
    assert notes == [
        "block 'Fam' at 1:7: the loop at 5:9 runs at no call, and no phantom call that "
        "runs it could be lowered and read: n1 must be the calls'"
    ], notes
    assert CLASS.findall(code) == ["Fam", "Net"], code
    assert (
        "        if n1 != 0:  # a body no call runs is not written\n"
        '            raise ValueError(f"Fam is written for n1 == 0, not {n1}")\n'
    ) in code, code
    with pytest.raises(ValueError, match="Fam is written for n1 == 0, not 1"):
        rolled.Fam(4, 4, 1, 1)


# fuzz seed 91000106's form: the loop no call runs calls an inner block, which no call
# builds either: the phantom's call of it writes its class
INNER = """\
model Unit(w):
    def forward(x):
        return x -> dense(w).relu

model Fam(w0, n, n0):
    def forward(x):
        for i in range(n):
            x -> dense(w0) as d{i}
        for i in range(n0):
            x -> Unit(w0) as u{i + 1}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(6, 2, 0) as a -> Fam(5, 1, 0) as b -> dense(2) as head
"""


def test_a_body_calling_a_block_no_call_makes_is_written() -> None:
    """The loop calling ``Unit`` is written (it was refused, ``n0 != 0``: ``Unit`` had no
    class): ``Unit`` gets the class the phantom's call of it writes, taking its input's
    width and showing no shape (no call's), though the program builds none. ``Fam``
    built where the loop runs computes what a call compiled with one class per call
    computes; ``roll_check`` finds no class silently wrong."""
    checked = twin(INNER, "inner", torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Unit", "Fam", "Net"], gen.code
    assert block_class(gen, "Unit").rstrip() + "\n" == (
        "class Unit(nn.Module):\n"
        "    def __init__(self, in_features, w):\n"
        "        super().__init__()\n"
        "        self.dense1 = nn.Linear(in_features, w)\n"
        "\n"
        "    def forward(self, x):\n"
        "        relu1 = self.dense1(x)\n"
        "        relu1 = F.relu(relu1)\n"
        "        return relu1\n"
    )
    fam = block_class(gen, "Fam")
    assert "raise ValueError" not in fam, fam
    assert '            setattr(self, f"u{i + 1}", Unit(channels, w0))\n' in fam, fam
    rolled, _, notes = build(INNER, "inner_rolled")
    assert notes == []
    taking = INNER.replace("Fam(6, 2, 0) as a", "Fam(6, 2, 1) as a")
    flat_module, _, _ = build(taking, "inner_taking", roll=False)
    torch.manual_seed(0)
    theirs = flat_module.Net().a
    torch.manual_seed(0)
    mine = rolled.Fam(4, 6, 2, 1)
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    same(theirs, mine, torch.randn(3, 4))
    counts = checked.counts  # roll_check's, at arguments no call gives
    assert counts["other arguments"] > 0, counts


# fuzz seed 91000159's form: the phantom (flag=false) calls Unit at an input of 4
# features, which no call of the program gives it; Unit's one class takes its input's
# width, so the phantom reads it as an instance of that class
INNER_ELSEWHERE = """\
model Unit(w):
    def forward(x):
        return x -> dense(w).relu

model Fam(flag, w0, n):
    def forward(x):
        if flag:
            x -> dense(w0).relu
        else:
            x -> layer_norm()
        for i in range(n):
            x -> Unit(w0) as u{i}
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(true, 6, 1) as a -> Fam(true, 5, 2) as b -> dense(2) as head
"""


def test_a_phantom_calling_a_block_at_an_input_no_call_gives_is_read() -> None:
    """The branch no call runs is written (it was refused: the phantom's inner call had
    no equal among the program's); ``Unit`` stays its one class, and ``Fam`` built where
    the branch runs computes what a call compiled with one class per call computes."""
    checked = twin(INNER_ELSEWHERE, "elsewhere", torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Unit", "Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Unit", "Fam", "Net"], gen.code
    fam = block_class(gen, "Fam")
    assert "raise ValueError" not in fam, fam
    assert (
        "        else:\n"
        "            self.layer_norm1 = nn.LayerNorm(channels)\n"
        "        for i in range(n):\n"
        '            setattr(self, f"u{i}", Unit(channels, w0))\n'
    ) in fam, fam
    rolled, _, notes = build(INNER_ELSEWHERE, "elsewhere_rolled")
    assert notes == []
    taking = INNER_ELSEWHERE.replace("Fam(true, 6, 1) as a", "Fam(false, 6, 1) as a")
    flat_module, _, _ = build(taking, "elsewhere_taking", roll=False)
    torch.manual_seed(0)
    theirs = flat_module.Net().a
    torch.manual_seed(0)
    mine = rolled.Fam(4, False, 6, 1)
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    same(theirs, mine, torch.randn(3, 4))
    counts = checked.counts  # roll_check's, at arguments no call gives
    assert counts["other arguments"] > 0, counts


# review75: the phantoms tried one more than the calls' widths (7, 5, 3) and never 9, so
# ``if w > 8`` was refused (``w`` fixed to the calls' 4 and 6) though w = 9 lowers
THRESHOLD = """
model Fam(w, n):
    def forward(x):
        for i in range(n):
            x -> dense(w) as d{i}
        if w > 8:
            x -> layer_norm() as ln
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(4, 1) -> Fam(6, 2) -> dense(2) as head
"""


def test_a_threshold_no_call_passes_is_written_from_a_phantom_past_it() -> None:
    notes, code = roll_notes(THRESHOLD)
    assert notes == [], notes
    assert "        if w > 8:\n            self.ln = nn.LayerNorm(channels)" in code, code
    assert check_source(THRESHOLD) == []
