"""Issue 24 item 3: a triangle of loops, an inner loop whose count reads the outer
loop's target (``for i in range(a): for j in range(i + b):``, ``for w, k in cfg: for j
in range(k):``). No product of counts numbers the inner iterations, so an unnamed module
in them (``dense2`` to ``dense8`` at ``a = 2``, ``b = 3``) or after them fell back ('an
unnamed 'dense' module in a loop', 'after nested loops'). The rolled class keeps a
running count of the inner iterations, as a hand-written one would: ``n = 0`` before the
loops, ``n += 1`` ending each inner iteration, in ``__init__`` and ``forward``, the
modules named ``dense{n + 2}`` in the loops and after them; a module of the operation
in the outer loop outside the inner one (a stage's first) adds the outer count
(``dense{i + n + 1}``). Each program runs against
its IR, builds the modules of the build with one class per call (``roll=False``) in the
same order, strict-loads its state dict and computes the same; a block's class built at
arguments the calls did not give is that call's class (``check_source``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    roll_notes,
    rolls_exactly,
    twin,
)

TOWER = """\
model Tower(w, a, b):
    def forward(x):
        x -> dense(w) as stem
        for i in range(a):
            for j in range(i + b):
                x -> dense(w).relu
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2) as t1 -> Tower(8, 2, 3) as t2 -> dense(2) as head
"""


def one_class(source: str, name: str, x: torch.Tensor, *, others: bool = True) -> str:
    """The block ``Tower`` rolled to one class, twin of the build with one class per call:
    the same modules in the same order, a strict load, the same outputs; built at other
    arguments (``others``: numbers the calls write), that call's class. Its class text."""
    checked = twin(source, name, x, against=("flat",))
    gen, flat, counts = checked.gen, checked.flat, checked.counts
    assert CLASS.findall(gen.code) == ["Tower", "Net"], gen.code
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    assert counts["other arguments"] > 0 or not others, counts
    return block_class(gen, "Tower")


def test_unnamed_modules_in_and_after_a_triangle_of_loops_read_a_running_count() -> None:
    text = one_class(TOWER, "triangle", torch.randn(2, 6))
    assert (
        "        n = 0\n"
        "        for i in range(a):\n"
        "            for j in range(i + b):\n"
        '                setattr(self, f"dense{n + 2}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                n += 1\n"
        '        setattr(self, f"dense{n + 2}", nn.Linear(channels, 3))\n'
    ) in text, text
    assert (
        "        n = 0\n"
        "        for i in range(self.a):\n"
        "            for j in range(i + self.b):\n"
        '                x = getattr(self, f"dense{n + 2}")(x)\n'
        "                x = F.relu(x)\n"
        "                n += 1\n"
        '        return getattr(self, f"dense{n + 2}")(x)\n'
    ) in text, text
    one, _, _ = build(TOWER, "triangle_keys")
    state = one.Net().state_dict()
    assert "t1.dense4.weight" in state  # 1 + 2 iterations, then the head
    assert "t2.dense9.weight" in state  # 1 + (3 + 4) iterations, then the head


def test_a_running_count_numbers_several_modules_an_iteration() -> None:
    """Two ``dense`` and a ``layer_norm`` each inner iteration: ``dense{2 * n + 2}``,
    ``layer_norm{n + 1}``, ``dense{2 * n + 3}``."""
    source = TOWER.replace("dense(w).relu\n", "dense(w).relu -> layer_norm() -> dense(w)\n")
    text = one_class(source, "triangle_several", torch.randn(2, 6))
    assert (
        '                setattr(self, f"dense{2 * n + 2}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        '                setattr(self, f"layer_norm{n + 1}", nn.LayerNorm(channels))\n'
        '                setattr(self, f"dense{2 * n + 3}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                n += 1\n"
        '        setattr(self, f"dense{2 * n + 2}", nn.Linear(channels, 3))\n'
    ) in text, text


def test_named_modules_in_a_triangle_number_the_unnamed_one_after_it() -> None:
    """``as d{i}_{j}``: the IR numbers the named ``dense`` too, so the head after the
    loops is ``dense{n + 2}``; the names in the loops are the templates'."""
    source = TOWER.replace("dense(w).relu\n", "dense(w).relu as d{i}_{j}\n")
    text = one_class(source, "triangle_named", torch.randn(2, 6))
    assert '                setattr(self, f"d{i}_{j}", nn.Linear(channels, w))\n' in text, text
    assert '        return getattr(self, f"dense{n + 2}")(x)\n' in text, text


def test_named_modules_in_a_triangle_keep_no_count_where_no_name_reads_it() -> None:
    source = TOWER.replace("dense(w).relu\n", "dense(w).relu as d{i}_{j}\n")
    text = one_class(source.replace("dense(3)", "dense(3) as head"), "named", torch.randn(2, 6))
    assert "n = 0" not in text and "n += 1" not in text, text


def test_a_loop_after_a_triangle_numbers_on_from_its_count() -> None:
    source = TOWER.replace(
        "        return x -> dense(3)\n",
        "        for q in range(a + 1):\n            x -> dense(w)\n        return x -> dense(3)\n",
    )
    text = one_class(source, "after_triangle", torch.randn(2, 6))
    assert (
        "        for q in range(a + 1):\n"
        '            setattr(self, f"dense{n + q + 2}", nn.Linear(channels, w))\n'
        '        setattr(self, f"dense{n + (a + 1) + 2}", nn.Linear(channels, 3))\n'
    ) in text, text


def test_nested_loops_before_a_triangle_number_it_on_by_their_product() -> None:
    source = TOWER.replace(
        "        x -> dense(w) as stem\n",
        "        x -> dense(w) as stem\n"
        "        for q in range(b):\n"
        "            for r in range(a):\n"
        "                x -> dense(w)\n",
    )
    text = one_class(source, "before_triangle", torch.randn(2, 6))
    assert (
        '                setattr(self, f"dense{b * a + n + 2}", nn.Linear(channels, w))\n' in text
    )
    assert '        return getattr(self, f"dense{self.b * self.a + n + 2}")(x)\n' in text, text


ROWS = """\
model Tower(cfg):
    def forward(x):
        for w, k in cfg:
            for j in range(k):
                x -> dense(w).relu -> layer_norm()
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(((8, 1), (4, 2))) as t1 -> Tower(((8, 2), (4, 1), (6, 3))) as t2 -> dense(2) as head
"""


def test_rows_whose_inner_count_is_a_column_read_a_running_count() -> None:
    """``for w, k in cfg: for j in range(k):``: the rows the calls give set the inner
    count, so the outer loop keeps its rows (no ``enumerate``) and the count names."""
    text = one_class(ROWS, "rows", torch.randn(2, 6), others=False)  # rows: no number
    assert (
        "        n = 0\n"
        "        for w, k in cfg:\n"
        "            for j in range(k):\n"
        '                setattr(self, f"dense{n + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        '                setattr(self, f"layer_norm{n + 1}", nn.LayerNorm(channels))\n'
        "                n += 1\n"
        '        setattr(self, f"dense{n + 1}", nn.Linear(channels, 3))\n'
    ) in text, text
    assert (
        "        n = 0\n        for _, k in self.cfg:\n            for j in range(k):\n"
    ) in text, text


def test_rows_the_calls_did_not_give_build_that_call_s_modules() -> None:
    """The rolled class built with other rows is the class of a call given them."""
    one, _, _ = build(ROWS, "rows_one")
    other = "((5, 3), (7, 1), (6, 2))"
    theirs, _, _ = build(ROWS.replace("((8, 2), (4, 1), (6, 3))", other), "rows_other", roll=False)
    mine, per_call = one.Tower(3, ((5, 3), (7, 1), (6, 2))), theirs.Net().t2
    assert list(mine.state_dict()) == list(per_call.state_dict())
    assert "dense7.weight" in mine.state_dict() and "layer_norm6.weight" in mine.state_dict()
    mine.load_state_dict(per_call.state_dict(), strict=True)
    x = torch.randn(2, 3)
    with torch.no_grad():
        torch.testing.assert_close(mine.eval()(x), per_call.eval()(x), rtol=0, atol=0)


def test_the_running_count_takes_a_name_no_parameter_has() -> None:
    """A parameter ``n``: the count is ``m``."""
    source = ROWS.replace("Tower(cfg)", "Tower(cfg, n)").replace("range(k)", "range(k + n)")
    source = source.replace("(4, 2)))", "(4, 2)), 1)").replace("(6, 3)))", "(6, 3)), 0)")
    text = one_class(source, "rows_n", torch.randn(2, 6))
    assert "        m = 0\n" in text, text
    assert '                setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n' in text


STAGES = """\
model Tower(cfg):
    def forward(x):
        for w, k in cfg:
            x -> dense(w)
            for j in range(k):
                x -> dense(w).relu
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(((8, 1), (4, 2))) as t1 -> Tower(((8, 2), (4, 1), (6, 3))) as t2 -> dense(2) as head
"""


def test_a_stage_opening_module_numbers_on_by_the_outer_count_and_the_running_count() -> None:
    """A ``dense`` opening each stage, then the stage's repeats: each stage makes one more
    than its inner iterations, so the names read the stage's count too (``i + n``), and
    the head after the loops their number (``len(cfg) + n``)."""
    text = one_class(STAGES, "stages", torch.randn(2, 6), others=False)
    assert (
        "        n = 0\n"
        "        for i, (w, k) in enumerate(cfg):\n"
        '            setattr(self, f"dense{i + n + 1}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        "            for j in range(k):\n"
        '                setattr(self, f"dense{i + n + 2}", nn.Linear(channels, w))\n'
        "                n += 1\n"
        '        setattr(self, f"dense{len(cfg) + n + 1}", nn.Linear(channels, 3))\n'
    ) in text, text
    assert (
        "        n = 0\n"
        "        for i, (_, k) in enumerate(self.cfg):\n"
        '            x = getattr(self, f"dense{i + n + 1}")(x)\n'
        "            for j in range(k):\n"
        '                x = getattr(self, f"dense{i + n + 2}")(x)\n'
        "                x = F.relu(x)\n"
        "                n += 1\n"
        '        return getattr(self, f"dense{len(self.cfg) + n + 1}")(x)\n'
    ) in text, text


def test_a_module_after_the_inner_loop_and_a_loop_after_the_stages_number_on() -> None:
    source = STAGES.replace(
        "            x -> dense(w)\n            for j in range(k):\n                x -> dense(w).relu\n",
        "            for j in range(k):\n                x -> dense(w).relu\n"
        "            x -> dense(w) -> layer_norm()\n",
    ).replace(
        "        return x -> dense(3)\n",
        "        for v in range(len(cfg)):\n            x -> dense(4)\n        return x -> dense(3)\n",
    )
    text = one_class(source, "stages_after", torch.randn(2, 6), others=False)
    assert (
        "            for j in range(k):\n"
        '                setattr(self, f"dense{i + n + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                n += 1\n"
        '            setattr(self, f"dense{i + n + 1}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        '            setattr(self, f"layer_norm{i + 1}", nn.LayerNorm(channels))\n'
        "        for v in range(len(cfg)):\n"
        '            setattr(self, f"dense{len(cfg) + n + v + 1}", nn.Linear(channels, 4))\n'
    ) in text, text


def test_a_module_of_the_operation_in_a_triangle_s_outer_loop_at_other_counts() -> None:
    """``range(a)`` around a ``dense`` and ``range(i + b)``: built at other ``a`` and
    ``b``, the class of a call given them."""
    source = TOWER.replace(
        "        for i in range(a):\n", "        for i in range(a):\n            x -> dense(w)\n"
    )
    text = one_class(source, "outer_dense", torch.randn(2, 6))
    assert '            setattr(self, f"dense{i + n + 2}", nn.Linear(channels, w))\n' in text
    assert '                setattr(self, f"dense{i + n + 3}", nn.Linear(channels, w))\n' in text
    assert '        setattr(self, f"dense{a + n + 2}", nn.Linear(channels, 3))\n' in text, text


NETWORK = """\
model Net(w, a, b):
    def forward(x):
        x -> dense(w) as stem
        for i in range(a):
            for j in range(i + b):
                x -> dense(w).relu
        return x -> dense(3)

model small = Net(4, 1, 2):
    input_shape = (5,)

model wide = Net(6, 2, 3):
    input_shape = (5,)
"""


def test_a_network_runs_a_triangle_of_loops_with_its_running_count() -> None:
    """The variants run the loops a different number of times: forward is written with
    them and the count, naming the modules as ``__init__`` does."""
    code = rolls_exactly(NETWORK, "triangle_network", torch.randn(2, 5))
    assert (
        "        n = 0\n"
        "        for i in range(a):\n"
        "            for j in range(i + b):\n"
        '                setattr(self, f"dense{n + 2}", nn.Linear(channels, w))\n'
        "                n += 1\n"
        '        setattr(self, f"dense{n + 2}", nn.Linear(channels, 3))\n'
    ) in code, code
    assert (
        "        n = 0\n"
        "        for i in range(self.a):\n"
        "            for j in range(i + self.b):\n"
        '                x = getattr(self, f"dense{n + 2}")(x)\n'
        "                x = F.relu(x)\n"
        "                n += 1\n"
        '        return getattr(self, f"dense{n + 2}")(x)\n'
    ) in code, code


def test_a_network_names_the_module_after_a_triangle_of_named_ones_by_the_count() -> None:
    code = rolls_exactly(
        NETWORK.replace("dense(w).relu", "dense(w).relu as d{i}_{j}"),
        "triangle_network_named",
        torch.randn(2, 5),
    )
    assert '                setattr(self, f"d{i}_{j}", nn.Linear(channels, w))\n' in code
    assert '        return getattr(self, f"dense{n + 2}")(x)\n' in code, code


def test_two_triangles_keep_a_running_count_each() -> None:
    """The second triangle's names read the first's total: ``n`` then ``m``."""
    source = TOWER.replace(
        "        return x -> dense(3)\n",
        "        for i in range(a):\n"
        "            for j in range(i + 1):\n"
        "                x -> dense(w)\n"
        "        return x -> dense(3)\n",
    )
    text = one_class(source, "two_triangles", torch.randn(2, 6))
    assert (
        "        m = 0\n"
        "        for i in range(a):\n"
        "            for j in range(i + 1):\n"
        '                setattr(self, f"dense{n + m + 2}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                m += 1\n"
        '        setattr(self, f"dense{n + m + 2}", nn.Linear(channels, 3))\n'
    ) in text, text
    assert '        return getattr(self, f"dense{n + m + 2}")(x)\n' in text, text


def test_a_triangle_in_another_loop_counts_across_its_iterations() -> None:
    """Three loops deep: the running count starts before the loop outside loops and
    goes on across its iterations (it fell back: ``an unnamed 'dense' module in a loop
    at 7:26``; ``test_rolled_running_counts.py``)."""
    source = TOWER.replace(
        "        for i in range(a):\n            for j in range(i + b):\n"
        "                x -> dense(w).relu\n",
        "        for q in range(b):\n            for i in range(a):\n"
        "                for j in range(i + q):\n                    x -> dense(w).relu\n",
    )
    text = one_class(source, "triangle_in_a_loop", torch.randn(2, 6))
    assert (
        "        n = 0\n"
        "        for q in range(b):\n"
        "            for i in range(a):\n"
        "                for j in range(i + q):\n"
        '                    setattr(self, f"dense{n + 2}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        "                    n += 1\n"
        '        setattr(self, f"dense{n + 2}", nn.Linear(channels, 3))\n'
    ) in text, text


NETWORK_STAGES = """\
model Net(cfg):
    def forward(x):
        for w, k in cfg:
            x -> dense(w)
            for j in range(k):
                x -> dense(w).relu
        return x -> dense(3)

model small = Net(((4, 1), (6, 2))):
    input_shape = (5,)

model wide = Net(((4, 2), (6, 1), (5, 3))):
    input_shape = (5,)
"""


def test_a_network_of_stages_given_as_rows_numbers_by_both_counts() -> None:
    code = rolls_exactly(NETWORK_STAGES, "network_stages", torch.randn(2, 5))
    assert (
        "        n = 0\n"
        "        for i, (_, k) in enumerate(self.cfg):\n"
        '            x = getattr(self, f"dense{i + n + 1}")(x)\n'
        "            for j in range(k):\n"
        '                x = getattr(self, f"dense{i + n + 2}")(x)\n'
        "                x = F.relu(x)\n"
        "                n += 1\n"
        '        return getattr(self, f"dense{len(self.cfg) + n + 1}")(x)\n'
    ) in code, code


def test_a_module_of_a_triangle_under_an_if_falls_back() -> None:
    """``if j > 0:`` in the inner loop: its iterations make different numbers of
    ``dense``, which the running count of the iterations does not give. The running
    count of the branches taken numbers those in the loops (``dense{m + 2}``,
    ``test_rolled_if_on_count.py``), but not the module after the triangle."""
    source = TOWER.replace(
        "                x -> dense(w).relu\n",
        "                if j > 0:\n                    x -> dense(w).relu\n"
        "                x -> layer_norm()\n",
    )
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Tower' at 1:7: an unnamed 'dense' module at 9:21 numbered on across the"
        " branch taken of an if, in loops nested in each other: name it with 'as'"
    ], notes
    assert "class Tower_2(" in code
