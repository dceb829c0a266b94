"""Issue 24 item 3: MobileNetV3's config rows passed on to an inner block (``for out,
expand, a, se in cfg: x = Bneck(x, out, expand, a, se)``, or ``x -> Inner(w, a)``), and
rows in a block constant built from an operation-valued parameter (``table = [(8, act),
(6, gelu)]``, ``for w, a in table: x -> dense(w) -> a``). Each kept a class per call
('a' is not the IR's argument act: the row's operation was checked as the operation
itself, not as the module class the call passes; the constant 'table' is not '[(8, act),
(6, nn.GELU)]' at every call: the compiler's value of the constant left ``act`` out).
Each program runs against its IR, its ``Net`` is built as the build of one class per call
builds it (the same modules in the same order), strict-loads it and computes the same,
and ``roll_check`` rebuilds the rolled class at each call's arguments; the rows the calls
did not give are checked here too, against the class of one call a program giving them
compiles to."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    ANY_CLASS,
    CLASS,
    block_class,
    build,
    built_alike,
    loads_and_computes_alike,
    roll_notes,
    rolls_exactly,
    same,
    twin,
)

BNECK = """\
model Bneck(out, expand, act, use_se):
    def forward(x):
        h = x -> conv2d(expand, 1) -> batch_norm().act -> conv2d(out, 3, padding=1) -> batch_norm()
        if use_se:
            h -> conv2d(out, 1).sigmoid
        return h

model Stage(cfg):
    def forward(x):
        for out, expand, a, se in cfg:
            x = Bneck(x, out, expand, a, se)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Stage(ROWS_S) as s -> Stage(ROWS_T) as t -> flatten() -> dense(2) as head
"""
ROWS_S = "[(8, 16, relu, False), (8, 24, hardswish, True)]"
ROWS_T = "[(12, 32, hardswish, True)]"


def _bneck(rows_s: str = ROWS_S, rows_t: str = ROWS_T) -> str:
    return BNECK.replace("ROWS_S", rows_s).replace("ROWS_T", rows_t)


INNER = """\
model Inner(width, act):
    def forward(x):
        x -> dense(width).act

model Stage(cfg):
    def forward(x):
        for w, a in cfg:
            x = Inner(x, w, a)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8, relu), (6, gelu)]) as s -> Stage([(4, tanh)]) as t -> dense(2) as head
"""


def _rolled(source: str, name: str, *inputs: torch.Tensor, blocks: list[str]) -> str:
    """The checks of the module docstring at the calls; the rolled ``Stage``."""
    checked = twin(source, name, *inputs)
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert {"Stage", "Stage_2"} <= set(CLASS.findall(flat)), flat  # a class per call
    assert CLASS.findall(gen.code) == [*blocks, "Stage", "Net"], gen.code
    assert counts["calls"] >= 2, counts  # the rolled inner block's calls too
    return block_class(gen, "Stage")


def _at_other_rows(source: str, other: str, stage: str, *inputs: torch.Tensor) -> None:
    """``Stage`` of ``source``'s rolled build, made with ``stage``'s arguments (rows no
    call of ``source`` gives), against the ``Stage`` that ``other`` (a program calling it
    so, as ``s``) builds with one class per call: the same modules in the same order, a
    strict load, equal outputs."""
    rolled, _, _ = build(source, "rows_rolled")
    flat, _, _ = build(other, "rows_other", roll=False)
    torch.manual_seed(0)
    theirs = flat.Net().s
    torch.manual_seed(0)
    mine = eval(stage, {"nn": torch.nn, "Stage": rolled.Stage})  # noqa: S307
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    loads_and_computes_alike(mine, theirs, *inputs)


def test_mobilenet_config_rows_build_the_inner_block_in_a_loop() -> None:
    """``for i, (out, expand, a, se) in enumerate(cfg): setattr(self, f"bneck{i + 1}",
    Bneck(channels, out, expand, a, se))``, one ``Bneck`` for every row; it was ``Stage``
    and ``Stage_2``, each writing its rows out."""
    source = _bneck()
    stage = _rolled(source, "bneck_rows", torch.randn(2, 3, 8, 8), blocks=["Bneck"])
    assert (
        "        for i, (out, expand, a, se) in enumerate(cfg):\n"
        '            setattr(self, f"bneck{i + 1}", Bneck(channels, out, expand, a, se))\n'
        "            channels = out\n"
    ) in stage, stage
    assert (
        "        for i in range(len(self.cfg)):\n"
        '            x = getattr(self, f"bneck{i + 1}")(x)\n'
    ) in stage, stage
    _, code, _ = build(source, "bneck_rows_code")
    assert "Stage(3, ((8, 16, nn.ReLU, False), (8, 24, nn.Hardswish, True)))" in code
    assert "Stage(8, ((12, 32, nn.Hardswish, True),))" in code
    other = _bneck("[(6, 8, hardswish, True), (4, 12, relu, True), (8, 8, relu6, False)]")
    _at_other_rows(
        source,
        other,
        "Stage(3, ((6, 8, nn.Hardswish, True), (4, 12, nn.ReLU, True), (8, 8, nn.ReLU6, False)))",
        torch.randn(2, 3, 8, 8),
    )


@pytest.mark.parametrize(
    "call", ["x = Inner(x, w, a)", "x -> Inner(w, a)", "x = Inner(x, w, act=a)"]
)
def test_rows_passed_on_to_an_inner_block(call: str) -> None:
    """``Inner(channels, w, a)`` (``act=a`` as the source writes it), the row's module
    class passed on as the inner class takes it."""
    source = INNER.replace("x = Inner(x, w, a)", call)
    stage = _rolled(source, "inner_rows", torch.randn(3, 4), blocks=["Inner"])
    passed = "act=a" if "act=" in call else "a"
    assert (
        "        for i, (w, a) in enumerate(cfg):\n"
        f'            setattr(self, f"inner{{i + 1}}", Inner(channels, w, {passed}))\n'
    ) in stage, stage
    other = INNER.replace("[(8, relu), (6, gelu)]", "[(5, silu), (7, leaky_relu), (3, sigmoid)]")
    _at_other_rows(
        source,
        other,
        "Stage(4, ((5, nn.SiLU), (7, nn.LeakyReLU), (3, nn.Sigmoid)))",
        torch.randn(3, 4),
    )


NUMBERS = """\
model Inner(width, k):
    def forward(x):
        for i in range(k):
            x -> dense(width).relu

model Stage(cfg):
    def forward(x):
        for w, k in cfg:
            x -> Inner(w, k)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(ROWS) as s -> Stage([(4, 3)]) as t -> dense(2) as head
"""

# the width after ``Inner`` is what its loop left: ``w``, or its input's at ``k = 0``
READ_WIDTH = (
    "        for i, (w, k) in enumerate(cfg):\n"
    "            layer = Inner(channels, w, k)\n"
    '            setattr(self, f"inner{i + 1}", layer)\n'
    "            channels = layer.out_channels\n"
)
STORED_WIDTH = (
    "        for i in range(k):\n"
    '            setattr(self, f"dense{i + 1}", nn.Linear(channels, width))\n'
    "            channels = width\n"
    "        self.out_channels = channels\n"
    "\n"
    "    def forward(self, x):\n"
)


@pytest.mark.parametrize("rows", ["[(8, 1), (6, 2)]", "[(8, 1), (7, 0), (6, 2)]"])
def test_rows_of_numbers_passed_on_to_an_inner_block(rows: str) -> None:
    """The plainer ``for w, k in cfg: x -> Inner(w, k)``, the inner block looping ``k``
    times: one ``Stage`` and one ``Inner``. At ``k = 0`` ``Inner`` passes its input on, so
    ``Stage`` reads the width from the ``Inner`` it built, which stores what its loop
    left; ``channels = w`` (as before) built ``Inner(7, 6, 2)`` after a row ``(7, 0)``
    where the input is 8 wide, and a row ``(7, 0)`` the program gives kept a class per
    call ('the width after 'Inner' is no expression of the source')."""
    source = NUMBERS.replace("ROWS", rows)
    stage = _rolled(source, "number_rows", torch.randn(3, 4), blocks=["Inner"])
    assert READ_WIDTH in stage, stage
    _, code, _ = build(source, "number_rows_inner")
    assert STORED_WIDTH in code, code
    other = NUMBERS.replace("ROWS", "[(5, 2), (7, 0), (3, 3), (6, 0)]")
    _at_other_rows(source, other, "Stage(4, ((5, 2), (7, 0), (3, 3), (6, 0)))", torch.randn(3, 4))


def test_roll_check_tries_a_count_of_0_in_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """``roll_check`` builds the rolled class with each number of the rows changed, a
    count also at 0 (no call gives it): with the width read as ``w`` again (the roller
    before), the row ``(8, 0)`` is found; as written, none."""
    from aurane.backends.torch import rolled

    source = NUMBERS.replace("ROWS", "[(8, 1), (6, 2)]")
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["other arguments"] >= 4, counts
    monkeypatch.setattr(rolled._Walk, "_loop_width_fixed", lambda *args: False)
    found = check_source(source)
    assert found and found[0].startswith("Stage with cfg[0][1]=0 (at 's'): "), found


PASSED_ON = """\
model Inner(width, k):
    def forward(x):
        for i in range(k):
            x -> dense(width).relu

model Stage(width, n, m):
    def forward(x):
        for j in range(m):
            x -> Inner(width, n)
        x -> dense(5) as proj
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(CALL) as s -> Stage(6, 2, 1) as t -> dense(2) as head
"""


def test_a_count_parameter_passed_on_to_an_inner_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Stage(width, n, m)`` passing its own ``n`` on as ``Inner``'s count: the width
    after ``Inner`` is read from it, so ``Stage(4, 7, 0, 2)`` (no call gives ``n = 0``)
    builds what the class of one call does; ``roll_check`` tries ``n = 0`` (a parameter
    passed on to a loop's count) and, with the width read as ``width`` again, finds it."""
    from aurane.backends.torch import rolled

    source = PASSED_ON.replace("CALL", "8, 1, 2")
    stage = _rolled(source, "passed_on", torch.randn(3, 4), blocks=["Inner"])
    assert "            layer = Inner(channels, width, n)\n" in stage, stage
    other = PASSED_ON.replace("CALL", "7, 0, 2")
    _at_other_rows(source, other, "Stage(4, 7, 0, 2)", torch.randn(3, 4))
    monkeypatch.setattr(rolled._Walk, "_loop_width_fixed", lambda *args: False)
    found = check_source(source)
    assert found and found[0].startswith("Stage with n=0 (at 's'): "), found


def test_rows_whose_counts_agree_pass_them_on_to_a_rolled_inner_class() -> None:
    """Rows whose counts are all 1: ``Inner``'s calls agree on the count, and its one
    class still runs the source's loop (it was written for that count, one ``dense1``,
    so a ``Stage`` passing it ``k`` from other rows kept a class per call with a note):
    one ``Stage``, which ``roll_check`` builds at ``cfg[0][1]=2`` (two layers) and 0."""
    source = NUMBERS.replace("ROWS", "[(8, 1), (6, 1)]").replace("[(4, 3)]", "[(4, 1)]")
    notes, code = roll_notes(source)
    assert notes == [], notes
    assert "class Stage_2(" not in code, code
    assert "        for i in range(k):\n" in code, code
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["other arguments"] >= 4, counts


TABLE = """\
model Stage(n, act):
    table = [(8, act), (6, gelu)]
    def forward(x):
        for i in range(n):
            x -> dense(4).STEP
        for w, a in table:
            x -> dense(w) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(1, relu) as s -> Stage(2, tanh) as t -> dense(2) as head
"""


@pytest.mark.parametrize("step", ["relu", "act"])
def test_a_block_constant_built_from_an_operation_parameter(step: str) -> None:
    """``table = [(8, act), (6, nn.GELU)]``, a local of ``__init__`` reading the class's
    parameter, stored for forward, which builds each row's module where it applies it
    (``x = a()(x)``); the class of one call builds ``self.act = act()``, kept for the same
    modules (a module class of an operation without weights)."""
    source = TABLE.replace("STEP", step)
    stage = _rolled(source, f"table_{step}", torch.randn(3, 4), blocks=[])
    assert "        table = [(8, act), (6, nn.GELU)]\n" in stage, stage
    assert "        self.table = table\n" in stage and "        self.act = act()\n" in stage
    assert (
        "        for j, (_, a) in enumerate(self.table):\n"
        '            x = getattr(self, f"dense{self.n + j + 1}")(x)\n'
        "            x = a()(x)\n"
    ) in stage, stage
    other = TABLE.replace("STEP", step).replace("Stage(1, relu)", "Stage(3, silu)")
    _at_other_rows(source, other, "Stage(4, 3, nn.SiLU)", torch.randn(3, 4))


def test_rows_an_inner_class_takes_as_functions_keep_a_class_per_call() -> None:
    """A row giving ``exp`` (no module class: the call passes ``"exp"``) makes ``Inner``
    take functions (``act=F.relu``), which no row the calls pass is: a located note,
    where ``tanh`` in its place rolls."""
    source = INNER.replace(".act", " -> act")
    assert roll_notes(source)[0] == []
    notes, code = roll_notes(source.replace("(4, tanh)", "(4, exp)"))
    assert notes == [
        "block 'Stage' at 5:7: 'a' gives the operation 'relu' for act: the call passes"
        " nn.ReLU, the inner class takes F.relu"
    ], notes
    assert "class Stage_2(" in code


def test_a_constant_reading_an_operation_given_as_a_function_keeps_a_class_per_call() -> None:
    """``Stage(2, exp)``: ``act`` is a function (``torch.exp``), which the table's rows
    cannot build as modules: a located note."""
    source = TABLE.replace("STEP", "relu").replace("Stage(2, tanh)", "Stage(2, exp)")
    notes, code = roll_notes(source)
    assert notes == ["block 'Stage' at 1:7: the constant 'table' reads 'act', given as a function"]
    assert "class Stage_2(" in code


def test_rows_of_a_block_constant_passed_on_to_an_inner_block() -> None:
    """Both at once: ``table = [(8, act), (6, gelu)]`` and ``x = Inner(x, w, a)``, the
    row naming the parameter passing the class's own module class on."""
    source = """\
model Inner(width, act):
    def forward(x):
        x -> dense(width).act

model Stage(n, act):
    table = [(8, act), (6, gelu)]
    def forward(x):
        for i in range(n):
            x -> dense(4).relu
        for w, a in table:
            x = Inner(x, w, a)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(1, relu) as s -> Stage(2, tanh) as t -> dense(2) as head
"""
    stage = _rolled(source, "table_inner", torch.randn(3, 4), blocks=["Inner"])
    assert "        table = [(8, act), (6, nn.GELU)]\n" in stage, stage
    assert (
        "        for j, (w, a) in enumerate(table):\n"
        '            setattr(self, f"inner{j + 1}", Inner(channels, w, a))\n'
    ) in stage, stage
    other = source.replace("Stage(1, relu)", "Stage(3, hardswish)")
    _at_other_rows(source, other, "Stage(4, 3, nn.Hardswish)", torch.randn(3, 4))


def test_rows_passed_on_to_an_inner_block_that_loops() -> None:
    """``for w, k, a in cfg: x -> Inner(w, k, a)``, ``Inner`` itself one class looping
    ``k`` times: ``Inner(channels, w, k, a)``."""
    source = """\
model Inner(width, k, act):
    def forward(x):
        for i in range(k):
            x -> dense(width).act

model Stage(cfg):
    def forward(x):
        for w, k, a in cfg:
            x -> Inner(w, k, a)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8, 1, relu), (6, 2, gelu)]) as s -> Stage([(4, 3, tanh)]) as t -> dense(2) as head
"""
    stage = _rolled(source, "looping_inner", torch.randn(3, 4), blocks=["Inner"])
    assert "            layer = Inner(channels, w, k, a)\n" in stage, stage
    assert "            channels = layer.out_channels\n" in stage, stage
    other = source.replace("[(8, 1, relu), (6, 2, gelu)]", "[(5, 2, silu), (7, 1, relu)]")
    _at_other_rows(source, other, "Stage(4, ((5, 2, nn.SiLU), (7, 1, nn.ReLU)))", torch.randn(3, 4))


NETWORK = """\
model Inner(width, act):
    def forward(x):
        x -> dense(width).act

model Net(cfg, classes):
    def forward(x):
        for w, a in cfg:
            CALL
        x -> dense(classes) as head

model large = Net([(8, relu), (6, hardswish), (6, hardswish)], 3):
    input_shape = (4,)
model small = Net([(4, relu)], 2):
    input_shape = (4,)
"""


@pytest.mark.parametrize("call", ["x = Inner(x, w, a)", "x -> Inner(w, a)"])
def test_a_network_passing_its_rows_on_to_an_inner_block(call: str) -> None:
    """MobileNetV3's variants: ``Net`` loops over its rows in ``__init__``, each variant
    passing its own. ``x = Inner(x, w, a)`` opening forward fell back with 'an assignment
    to 'x' the roller does not write' (the input was threaded from a chain only); checked
    against each variant's class and a variant of rows neither gives."""
    source = NETWORK.replace("CALL", call)
    x = torch.randn(3, 4)
    code = rolls_exactly(source, "net_rows", x, blocks=("Inner",))
    assert (
        "        for i, (w, a) in enumerate(cfg):\n"
        '            setattr(self, f"inner{i + 1}", Inner(channels, w, a))\n'
    ) in code, code
    assert "super().__init__([(8, nn.ReLU), (6, nn.Hardswish), (6, nn.Hardswish)], 3)" in code
    other = "Net([(5, silu), (7, tanh)], 4)"
    rolled, _, _ = build(source, "net_rows_rolled")
    wider = source + f"\nmodel wider = {other}:\n    input_shape = (4,)\n"
    written_out, _, _ = build(wider, "net_rows_wider", roll=False)
    torch.manual_seed(0)
    mine = rolled.Net([(5, torch.nn.SiLU), (7, torch.nn.Tanh)], 4)
    torch.manual_seed(0)
    same(mine, written_out.wider(), x)


def test_an_inner_loop_over_a_written_list_counts_by_no_parameter() -> None:
    """``for a in [act, gelu]`` in an inner class written for its calls (one structure):
    the loop runs twice whatever ``act`` is, so rows passing ``a`` on still roll (the
    check of counts passed on reads the iterable's count, not its items)."""
    source = INNER.replace(
        "        x -> dense(width).act\n",
        "        for b in [act, gelu]:\n            x -> dense(width).b\n",
    )
    assert roll_notes(source)[0] == []
    _rolled(source, "list_loop_inner", torch.randn(3, 4), blocks=["Inner"])


def test_a_network_reads_the_width_its_rows_inner_block_left() -> None:
    """A network's variant giving rows with a count of 0 (``large``): ``Net`` reads each
    ``Inner``'s width from it, as a block's class does; it kept a class per variant ('the
    width after 'Inner' is no expression of the source')."""
    source = """\
model Inner(width, k):
    def forward(x):
        for i in range(k):
            x -> dense(width).relu

model Net(cfg, classes):
    def forward(x):
        for w, k in cfg:
            x -> Inner(w, k)
        x -> dense(classes) as head

model large = Net([(8, 1), (7, 0), (6, 2)], 3):
    input_shape = (4,)
model small = Net([(4, 3)], 2):
    input_shape = (4,)
"""
    x = torch.randn(3, 4)
    rolled, code, notes = build(source, "net_zero_rolled")
    assert notes == [] and ANY_CLASS.findall(code) == ["Inner", "Net", "large", "small"], code
    assert READ_WIDTH in code and STORED_WIDTH in code, code
    unrolled, _, _ = build(source, "net_zero_flat", roll=False)  # Inner_2, ... each variant's
    for variant in ("large", "small"):
        mine, theirs = built_alike(rolled, unrolled, variant)
        torch.manual_seed(1)
        for p in theirs.parameters():
            p.data.normal_()
        same(theirs, mine, x)
    wider = source + "\nmodel wider = Net([(5, 0), (7, 2), (3, 0)], 4):\n    input_shape = (4,)\n"
    written_out, _, _ = build(wider, "net_zero_wider", roll=False)
    torch.manual_seed(0)
    mine = rolled.Net([(5, 0), (7, 2), (3, 0)], 4)
    torch.manual_seed(0)
    same(mine, written_out.wider(), x)


ONE_ITEM_ROWS = """\
model Stage(cfg):
    def forward(x):
        for w, in cfg:
            x -> dense(w).relu
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8,), (6,)]) as s -> Stage([(3,)]) as t -> dense(2) as head
"""


def test_rows_of_one_item_unpack_as_one_item_tuples() -> None:
    """``for w, in cfg``: the header is ``for i, (w,) in enumerate(cfg)``; it was ``(w)``,
    which binds the whole row, so ``nn.Linear(channels, w)`` got a tuple and building
    ``Net`` failed (found by the fuzzer's CI seeds 7017 and 7105)."""
    stage = _rolled(ONE_ITEM_ROWS, "one_item", torch.randn(3, 4), blocks=[])
    assert "for i, (w,) in enumerate(cfg):" in stage, stage
    _at_other_rows(ONE_ITEM_ROWS, ONE_ITEM_ROWS, "Stage(4, ((8,), (6,)))", torch.randn(3, 4))
