"""The refusals a generated class opens ``__init__`` with, written in one place
(``backends/torch/refusals.py``), and three defects around them: a row's block that none
of the calls' rows give raised ``AttributeError`` (now a named ``ValueError``); a
network's branch no variant takes was written ``elif mode == 2: pass`` beside the refusal
of its arguments (now it goes); a lowering at arguments no call gives swallowed every
exception as "no phantom" (now a bug surfaces)."""

from __future__ import annotations

import ast as pyast
import types
from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.modules import INDENT, LINE_LIMIT  # noqa: E402
from aurane.backends.torch.refusals import refusal  # noqa: E402
from aurane.backends.torch.rolled import BRANCH, _fill, without_empty_branches  # noqa: E402
from aurane.compile import prepare_program  # noqa: E402
from aurane.ir import lower  # noqa: E402
from aurane.ops.spec import OpError  # noqa: E402
from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import build, variants_alike  # noqa: E402
from tests.backends.torch.test_network_top_branches import BRANCHES  # noqa: E402
from tests.backends.torch.test_rolled_block_items import ROWS  # noqa: E402


def _refused(lines: list[str], **given: object) -> str:
    """The message ``lines`` (a refusal, at the top of ``__init__``) raise at ``given``."""
    params = ", ".join(given)
    source = "\n".join([f"{INDENT}def __init__(self, {params}):", *lines])
    namespace: dict[str, object] = {}
    exec(f"class Fam:\n{source}\n", namespace)  # noqa: S102 - the lines written here
    with pytest.raises(ValueError) as raised:
        namespace["Fam"](**given)  # type: ignore[operator]
    return str(raised.value)


def test_a_value_refused_reads_as_hand_written() -> None:
    lines = refusal("Fam0", "n != 2", "for n == 2", "its loops are written out for this value", "n")
    assert lines == [
        "        if n != 2:  # its loops are written out for this value",
        '            raise ValueError(f"Fam0 is written for n == 2, not {n}")',
    ]
    assert _refused(lines, n=3) == "Fam0 is written for n == 2, not 3"


def test_a_body_refused_says_what_the_class_is_written_without() -> None:
    """No arguments shown: a plain string, not an f-string."""
    said = "without the branch at 6:9, which no call takes"
    lines = refusal("Fam", "mode == 2", said, "no call takes it: not written")
    assert lines[1] == (
        '            raise ValueError("Fam is written without the branch at 6:9, which no call takes")'
    )
    assert _refused(lines, mode=2) == f"Fam is written {said}"


def test_a_long_refusal_wraps_as_black_does() -> None:
    """A test and message too long for one line: the comment above the test, the message
    on a line of its own (a value set's was one line of 120 characters, as fuzz seed
    91000225 shows)."""
    rows = "((8, nn.Sigmoid), (2, nn.Tanh), (3, nn.SiLU))"
    lines = refusal("Fam0_3", f"tuple(rows1) != {rows}", f"for rows1 == {rows}", "x" * 40, "rows1")
    assert lines[0] == f"        # {'x' * 40}"
    assert lines[2] == "            raise ValueError("
    assert lines[-1] == "            )"
    # black leaves a string too long as it is; every other line fits
    assert all(len(line) <= LINE_LIMIT for line in lines if "is written" not in line), lines
    pyast.parse("def f(rows1):\n" + "\n".join(lines))


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ('for act == "relu"', "gelu"),  # double quotes: in single ones
        ("for act in ('relu', \"gelu\")", "tanh"),  # both: the double ones escaped
        ("for rows == {1: 2}", "x"),  # braces: the f-string's own doubled
    ],
)
def test_a_message_holding_quotes_or_braces_is_python(said: str, value: str) -> None:
    lines = refusal("Fam", "True", said, "written out for this value", "act")
    assert _refused(lines, act=value) == f"Fam is written {said}, not {value}"


DEEP = """\
model Deep(width):
    def forward(x):
        x -> dense(width)

"""


def test_a_row_block_none_of_the_rows_give_is_refused_by_name() -> None:
    """``for w, b in cfg: x = b(x, w)`` with the rows giving ``Basic`` and ``Wide``: the
    class reads the width after ``b`` from the module built (``layer.out_channels``),
    which only their classes store, so a class built with ``Deep`` raised
    ``AttributeError: 'Deep' object has no attribute 'out_channels'``. It says which
    blocks it is written for; the rows' blocks in another order still build."""
    source = ROWS.replace("model Stage(cfg)", f"{DEEP}model Stage(cfg)")
    source = source.replace("as t ->", "as t -> Deep(3) ->")
    module, code, notes = build(source, "unknown_row_block")
    assert notes == []
    assert (
        "        for i, (w, b) in enumerate(cfg):\n"
        "            if b not in (Basic, Wide):  # the blocks the calls' rows give\n"
        '                raise ValueError(f"Stage is written for b in (Basic, Wide), not {b.__name__}")\n'
        "            made[b] = made.get(b, 0) + 1\n"
    ) in code, code
    with pytest.raises(ValueError, match=r"Stage is written for b in \(Basic, Wide\), not Deep$"):
        module.Stage(5, ((4, module.Basic), (3, module.Deep)))
    built = module.Stage(5, ((4, module.Wide), (3, module.Basic)))
    assert [n for n, _ in built.named_children()] == ["wide1", "dense1", "basic1", "dense2"]
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["other blocks"] > 0, counts


TWO_ROW_LOOPS = """\
model Unit0(w):
    def forward(x):
        return x -> dense(w).relu

model Unit2(w, act = relu):
    def forward(x):
        return x -> dense(w) -> act

model Unit3(w):
    def forward(x):
        return x -> dense(w + 1).tanh

model Fam(rows0, rows1):
    def forward(x):
        for c, b in rows0:
            x = b(x, c)
        for c, b in rows1:
            x = b(x, c)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(4, Unit0), (3, Unit2)], [(3, Unit0), (8, Unit2)]) as f1 -> Fam([(5, Unit0)], [(4, Unit2)]) as f2 -> Unit3(3) as u -> dense(2) as head
"""


def test_every_loop_over_rows_refuses_a_block_none_of_the_rows_give() -> None:
    """Two loops over rows (``for c, b in rows0`` then ``for c, b in rows1``): the
    refusal was written before the first count line a text search found, so ``Unit3``
    in the second loop's rows raised ``AttributeError: 'Unit3' object has no attribute
    'out_channels'``. Each loop the walk counted a row's block in refuses it by name."""
    module, code, notes = build(TWO_ROW_LOOPS, "two_row_loops")
    assert notes == []
    guard = (
        "            if b not in (Unit0, Unit2):  # the blocks the calls' rows give\n"
        '                raise ValueError(f"Fam is written for b in (Unit0, Unit2), not {b.__name__}")\n'
        "            made[b] = made.get(b, 0) + 1\n"
    )
    assert code.count(guard) == 2, code
    said = r"Fam is written for b in \(Unit0, Unit2\), not Unit3$"
    for rows in (((4, module.Unit3),), ((4, module.Unit0), (3, module.Unit3))):
        with pytest.raises(ValueError, match=said):
            module.Fam(4, ((4, module.Unit0),), rows)
        with pytest.raises(ValueError, match=said):
            module.Fam(4, rows, ((4, module.Unit2),))
    assert check_source(TWO_ROW_LOOPS, Counter()) == []


def test_one_row_block_is_refused_as_one_writes_it() -> None:
    """Rows giving one block: ``if b is not Basic:``, not ``b not in (Basic,)``."""
    source = TWO_ROW_LOOPS.replace(
        "(3, Unit2)], [(3, Unit0), (8, Unit2)]", "(3, Unit0)], [(8, Unit0)]"
    )
    source = source.replace("[(4, Unit2)]", "[(4, Unit0)]")
    module, code, notes = build(source, "one_row_block")
    assert notes == []
    assert (
        "            if b is not Unit0:  # the blocks the calls' rows give\n"
        '                raise ValueError(f"Fam is written for b is Unit0, not {b.__name__}")\n'
    ) in code, code
    with pytest.raises(ValueError, match=r"Fam is written for b is Unit0, not Unit3$"):
        module.Fam(4, ((4, module.Unit0),), ((3, module.Unit3),))


def _twins(source: str, name: str) -> tuple[types.ModuleType, str]:
    """The rolled build's module and code, each variant checked against the build with
    one class per variant (``variants_alike``), with the note of its untaken branch."""
    rolled, code, notes = variants_alike(source, name, ("small", "big", "mid"), torch.randn(3, 4))
    assert notes == [
        "network 'Net' at 1:7: an if branch at 8:9 runs at no variant: mode must be the variants'"
    ], notes
    return rolled, code


def test_a_network_branch_no_variant_takes_goes_with_its_test() -> None:
    """``elif mode == 2:`` taken by no variant: the class refuses ``mode`` other than the
    variants' and writes neither ``elif mode == 2: pass`` in ``__init__`` nor ``elif
    self.mode == 2: pass`` in forward."""
    source = BRANCHES.replace("Net(8, 3, false, 2)", "Net(8, 3, false, 3)")
    module, code = _twins(source, "dead_elif")
    assert "pass" not in code, code
    # the refusal of mode leaves it numbers alone: its tests need not exclude True
    assert "if mode not in (1, 3, 0) or isinstance(mode, bool):" in code, code
    assert (
        "        if mode == 1:\n"
        "            self.norm = nn.LayerNorm(channels)\n"
        "        self.head = nn.Linear(channels, 2)\n"
    ) in code, code
    norm = "        if self.mode == 1:\n            x = self.norm(x)\n"
    assert f"{norm}        return" in code, code
    with pytest.raises(ValueError, match=r"Net is written for mode in \(1, 3, 0\), not 2"):
        module.Net(6, 2, True, 2)


def test_a_first_branch_no_variant_takes_leaves_the_next_test_first() -> None:
    """``if mode == 1:`` taken by no variant: ``elif mode == 2:`` is the if."""
    source = BRANCHES.replace("Net(6, 2, true, 1)", "Net(6, 2, true, 2)")
    _, code = _twins(source, "dead_if")
    assert "pass" not in code, code
    assert "        if mode == 2:\n            self.mixer = nn.Linear(channels, w)\n" in code
    assert "        if self.mode == 2:\n            x = self.mixer(x)\n" in code


def test_an_else_left_alone_runs_always() -> None:
    """The branches of an if, written: one no call takes (``UNWRITTEN``), an ``else``
    that then always runs, dedented; an ``elif`` after it the if."""
    marker = [f"{BRANCH}3:9:0", f"{BRANCH}3:9:1", f"{BRANCH}3:9:2"]
    lines = [
        "        if mode == 1:",
        marker[0],
        "        elif mode == 2:",
        marker[1],
        "        else:",
        marker[2],
        "        x = 1",
    ]
    bodies = {marker[1]: ["            y = 2"], marker[2]: ["            y = 3"]}
    dropped = {marker[0]}
    assert without_empty_branches(_fill(lines, bodies, dropped)) == [
        "        if mode == 2:",
        "            y = 2",
        "        else:",
        "            y = 3",
        "        x = 1",
    ]
    dropped = {marker[0], marker[1]}
    del bodies[marker[1]]
    assert without_empty_branches(_fill(lines, bodies, dropped)) == [
        "        y = 3",
        "        x = 1",
    ]
    no_else = lines[:4] + lines[6:]  # every branch refused: no if at all
    assert without_empty_branches(_fill(no_else, {}, dropped)) == ["        x = 1"]


FAMILY = """\
model Fam(w, n):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(6, 2) -> Fam(5, 1) -> dense(2)
"""


def _instance() -> tuple[object, object]:
    program, graphs, _ = prepare_program(FAMILY, filename="family.aur")
    instance = next(n.subgraph for n in graphs["Net"].nodes if n.subgraph is not None)
    return program, instance


def test_a_lowering_at_other_arguments_that_fails_is_no_phantom(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shape rule refusing, or the block's own sums failing, at arguments no call
    gives: no instance there (the roller refuses those arguments)."""
    program, instance = _instance()
    assert lower.lower_block_at(program, instance, {"w": 3, "n": 3}) is not None  # type: ignore[arg-type]
    for error in (OpError("T001", "does not fit"), ZeroDivisionError("a count of 0")):

        def failing(*args: object, error: Exception = error) -> None:
            raise error

        monkeypatch.setattr(lower, "blocks", types.SimpleNamespace(lower_instance=failing))
        assert lower.lower_block_at(program, instance, {"w": 3, "n": 3}) is None  # type: ignore[arg-type]


def test_a_bug_in_a_lowering_at_other_arguments_surfaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any other exception is the compiler's bug: it was taken for "no phantom" and
    turned into a refusal of those arguments."""
    program, instance = _instance()

    def broken(*args: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(lower, "blocks", types.SimpleNamespace(lower_instance=broken))
    with pytest.raises(KeyError, match="a bug"):
        lower.lower_block_at(program, instance, {"w": 3, "n": 3})  # type: ignore[arg-type]
