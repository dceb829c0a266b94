"""Issue 24 item 3: an unnamed module under an ``if`` that tests its loop's count (``for i
in range(n): if i > 0: x -> dense(w)``), or an item of the loop's rows. The IR numbers it
on from the iterations that took the branch before, so each call kept its class with the
note 'an unnamed 'dense' module in a loop'. The rolled class keeps the running count of
the branches taken (``m = 0``, ``m += 1`` ending the branch) and names the module by it
(``dense{m + 1}``), and the module after the loop too; in the one branch of ``if i > 0:``
the count is ``i - 1``, so the name reads the loop's target (``dense{i}``). Each program
runs against its IR, builds the same modules in the same order as the build with one
class per call, strict-loads its weights and computes the same; ``roll_check`` rebuilds
the class at arguments no call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    program,
    roll_notes,
    rolls_exactly,
    twin,
)


def _one_class(block: str, calls: str, name: str) -> str:
    """The twin checks of the module docstring; the rolled ``Tower``."""
    checked = twin(program(block, calls), name, torch.randn(2, 4))
    assert CLASS.findall(checked.code) == ["Tower", "Net"], checked.code
    assert "class Tower_2" in checked.per_call, checked.per_call
    return block_class(checked.gen, "Tower")


TOWER = """\
model Tower(w, n):
    def forward(x):
        for i in range(n):
            if i > 0:
                x -> dense(w)
            x -> relu()
        return x -> dense(4)
"""


def test_if_past_the_first_iteration_reads_the_target() -> None:
    """``if i > 0:`` has taken the branch ``i - 1`` times before: ``dense{i}``; the module
    after the loop numbers on from the running count (``dense{m + 1}``)."""
    tower = _one_class(TOWER, "Tower(8, 2) -> Tower(8, 3)", "past_first")
    assert (
        "        m = 0\n"
        "        channels = in_features\n"
        "        for i in range(n):\n"
        "            if i > 0:\n"
        '                setattr(self, f"dense{i}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                m += 1\n"
        '        setattr(self, f"dense{m + 1}", nn.Linear(channels, 4))\n'
    ) in tower, tower
    assert (
        "        m = 0\n"
        "        for i in range(self.n):\n"
        "            if i > 0:\n"
        '                x = getattr(self, f"dense{i}")(x)\n'
        "                m += 1\n"
        "            x = F.relu(x)\n"
        '        return getattr(self, f"dense{m + 1}")(x)\n'
    ) in tower, tower


def test_a_bound_every_earlier_iteration_passed_too() -> None:
    """``if i <= k + 1:``: every iteration before took the branch, two modules each:
    ``dense{2 * i + 1}``, ``dense{2 * i + 2}``; ``if i >= 2:`` after two without:
    ``dense{i - 1}``."""
    source = """\
model Tower(w, n, k):
    def forward(x):
        for i in range(n):
            if i <= k + 1:
                x -> dense(w) -> dense(w)
            x -> relu()
        return x -> dense(4)
"""
    calls = "Tower(8, 3, 0) -> Tower(8, 4, 1) -> Tower(8, 1, 2)"
    tower = _one_class(source, calls, "bound_below")
    assert (
        "            if i <= k + 1:\n"
        '                setattr(self, f"dense{2 * i + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        '                setattr(self, f"dense{2 * i + 2}", nn.Linear(channels, w))\n'
    ) in tower, tower
    later = TOWER.replace("if i > 0:", "if i >= 2:")
    tower = _one_class(later, "Tower(8, 3) -> Tower(8, 4) -> Tower(8, 1)", "from_two")
    assert '                setattr(self, f"dense{i - 1}", nn.Linear(channels, w))\n' in tower


def test_no_module_after_the_loop_needs_no_count() -> None:
    source = TOWER.replace("return x -> dense(4)", "return x")
    tower = _one_class(source, "Tower(8, 2) -> Tower(8, 3) -> Tower(8, 1)", "no_after")
    assert '                setattr(self, f"dense{i}", nn.Linear(channels, w))\n' in tower
    assert "m = 0" not in tower and "m += 1" not in tower, tower


def test_every_other_iteration_with_two_modules_in_the_branch() -> None:
    """``if i % 2 == 0:`` no step in ``i`` numbers: the running count does, beside the
    loop's own module each iteration (``dense{m + i + 1}``), adding both of the branch's."""
    source = """\
model Tower(w, n):
    def forward(x):
        for i in range(n):
            if i % 2 == 0:
                x -> dense(w).relu -> dense(w)
            x -> dense(w)
        return x -> dense(4)
"""
    tower = _one_class(source, "Tower(8, 2) -> Tower(8, 3) -> Tower(6, 4)", "every_other")
    assert (
        "            if i % 2 == 0:\n"
        '                setattr(self, f"dense{m + i + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        '                setattr(self, f"dense{m + i + 2}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                m += 2\n"
        '            setattr(self, f"dense{m + i + 1}", nn.Linear(channels, w))\n'
    ) in tower, tower
    assert '        setattr(self, f"dense{m + n + 1}", nn.Linear(channels, 4))\n' in tower


def test_the_last_iteration_after_the_loops_own_module() -> None:
    source = """\
model Tower(w, n):
    def forward(x):
        for i in range(n):
            x -> dense(w)
            if i == n - 1:
                x -> dense(w).relu
        return x
"""
    tower = _one_class(source, "Tower(8, 2) -> Tower(8, 3)", "last_iteration")
    assert "            if i == n - 1:\n" in tower, tower
    assert '                setattr(self, f"dense{m + i + 2}", nn.Linear(channels, w))\n' in tower


def test_a_parameter_bound_and_an_else_making_more() -> None:
    """``if i < k:`` one module, ``else`` two: each branch adds its own to the count."""
    source = """\
model Tower(w, n, k):
    def forward(x):
        for i in range(n):
            if i < k:
                x -> dense(w)
            else:
                x -> dense(w) -> dense(w)
        return x -> dense(4)
"""
    calls = "Tower(8, 2, 1) -> Tower(8, 3, 1) -> Tower(8, 4, 2)"
    tower = _one_class(source, calls, "parameter_bound")
    assert (
        "            if i < k:\n"
        '                setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                m += 1\n"
        "            else:\n"
        '                setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        '                setattr(self, f"dense{m + 2}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                m += 2\n"
    ) in tower, tower


def test_an_else_making_as_many_needs_no_count() -> None:
    """Both branches make one ``dense``: the loop's count numbers them (as at main)."""
    source = TOWER.replace(
        "            x -> relu()\n", "            else:\n                x -> dense(2 * w)\n"
    )
    tower = _one_class(source, "Tower(8, 2) -> Tower(8, 3)", "else_alike")
    assert '                setattr(self, f"dense{i + 1}", nn.Linear(channels, 2 * w))\n' in tower
    assert "m = 0" not in tower, tower


def test_an_item_of_the_rows() -> None:
    source = """\
model Tower(cfg):
    def forward(x):
        for w, up in cfg:
            if up:
                x -> dense(w)
            x -> relu()
        return x -> dense(4)
"""
    calls = "Tower([(8, true), (8, false)]) -> Tower([(8, false), (6, true), (6, true)])"
    tower = _one_class(source, calls, "row_item")
    assert (
        "        for w, up in cfg:\n"
        "            if up:\n"
        '                setattr(self, f"dense{n + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                n += 1\n"
    ) in tower, tower


def test_nested_loops_with_the_if_in_the_inner_body() -> None:
    """The count numbers every ``dense`` of the loops: ``dense{n + 1}``."""
    source = """\
model Tower(w, a, b):
    def forward(x):
        for i in range(a):
            for j in range(b):
                if j > 0:
                    x -> dense(w)
                x -> relu()
        return x -> dense(4)
"""
    calls = "Tower(8, 2, 2) -> Tower(8, 2, 3) -> Tower(8, 3, 2)"
    tower = _one_class(source, calls, "nested_if")
    assert (
        "        for i in range(a):\n"
        "            for j in range(b):\n"
        "                if j > 0:\n"
        '                    setattr(self, f"dense{n + 1}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        "                    n += 1\n"
    ) in tower, tower
    outer = source.replace("if j > 0:", "if i > 0:")
    _one_class(outer, calls, "nested_outer_if")


def test_a_triangle_with_the_if_in_its_inner_body() -> None:
    """``for j in range(i + b)``: the branches' ``dense`` by their count (``dense{m +
    2}`` after the named ``stem``), the ``layer_norm`` by the triangle's (``n``)."""
    source = """\
model Tower(w, a, b):
    def forward(x):
        x -> dense(w) as stem
        for i in range(a):
            for j in range(i + b):
                if j > 0:
                    x -> dense(w).relu
                x -> layer_norm()
        return x
"""
    tower = _one_class(source, "Tower(8, 1, 2) -> Tower(8, 2, 3)", "triangle_if")
    assert (
        "            for j in range(i + b):\n"
        "                if j > 0:\n"
        '                    setattr(self, f"dense{m + 2}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        "                    m += 1\n"
        '                setattr(self, f"layer_norm{n + 1}", nn.LayerNorm(channels))\n'
        "                n += 1\n"
    ) in tower, tower


def test_modules_before_and_a_loop_after() -> None:
    """``dense{i + 1}`` after a module before the loop; the next loop numbers on from
    the count (``dense{m + i + 2}``)."""
    source = """\
model Tower(w, n):
    def forward(x):
        x -> dense(w)
        for i in range(n):
            if i > 0:
                x -> dense(w)
            x -> relu()
        for i in range(n):
            x -> dense(w)
        return x -> dense(4)
"""
    tower = _one_class(source, "Tower(8, 2) -> Tower(8, 3)", "around")
    assert '                setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n' in tower
    assert '            setattr(self, f"dense{m + i + 2}", nn.Linear(channels, w))\n' in tower


def test_two_loops_each_with_an_if_on_its_count() -> None:
    """A count for each operation numbered on: ``m`` for the first loop's
    ``layer_norm`` (``layer_norm{i}`` in its ``if i > 0:``, ``layer_norm{m + i + 1}`` in
    the second loop), ``count`` for ``dense`` (after ``if up:`` and in the second loop's
    ``if i % 2 == 1:``); the second loop's ``if`` is no count's first."""
    source = """\
model Tower(w, n, up: bool):
    def forward(x):
        if up:
            x -> dense(w)
        for i in range(n):
            if i > 0:
                x -> layer_norm()
            x -> relu()
        for i in range(n):
            if i % 2 == 1:
                x -> dense(w)
            x -> layer_norm()
        return x -> dense(4)
"""
    tower = _one_class(source, "Tower(8, 2, true) -> Tower(8, 3, false)", "two_loops")
    assert (
        "        for i in range(n):\n"
        "            if i % 2 == 1:\n"
        '                setattr(self, f"dense{count + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                count += 1\n"
        '            setattr(self, f"layer_norm{m + i + 1}", nn.LayerNorm(channels))\n'
        '        setattr(self, f"dense{count + 1}", nn.Linear(channels, 4))\n'
    ) in tower, tower
    assert '                setattr(self, f"layer_norm{i}", nn.LayerNorm(channels))\n' in tower


NETWORK = """\
model Net(w, n):
    def forward(x):
        x -> dense(w) as stem
        for i in range(n):
            if i > 0:
                x -> dense(w)
            x -> relu()
        return x -> dense(2)

model small = Net(6, 2):
    input_shape = (4,)
model big = Net(8, 3):
    input_shape = (4,)
"""


def test_a_network_through_variants() -> None:
    """The network roller shares the block's walk: one ``Net`` class for both variants
    (the named ``stem`` is ``dense1`` to the IR, so the loop's are ``dense{i + 1}``)."""
    code = rolls_exactly(NETWORK, "network_if_count", torch.randn(3, 4))
    assert 'setattr(self, f"dense{i + 1}", nn.Linear(channels, w))' in code, code
    assert '        return getattr(self, f"dense{m + 2}")(x)\n' in code, code


@pytest.mark.parametrize(
    ("source", "note"),
    [
        (  # a plain module beside the if in nested loops: no count numbers it
            """\
model Tower(w, a, b):
    def forward(x):
        for i in range(a):
            for j in range(b):
                x -> dense(w)
                if j > 0:
                    x -> dense(w)
        return x -> dense(4)
""",
            "an unnamed 'dense' module at 5:22 numbered on across the branch taken of an if,"
            " in loops nested in each other: name it with 'as'",
        ),
        (  # a loop in the branch: its iterations are counted by none
            """\
model Tower(w, a, b):
    def forward(x):
        for i in range(a):
            if i > 0:
                for j in range(b):
                    x -> dense(w)
            x -> relu()
        return x -> dense(4)
""",
            "an unnamed 'dense' module at 8:21 numbered on across the branch taken of an if,"
            " in loops nested in each other: name it with 'as'",
        ),
    ],
)
def test_forms_the_count_does_not_number_keep_a_class_per_call(source: str, note: str) -> None:
    notes, code = roll_notes(program(source, "Tower(8, 2, 2) -> Tower(8, 3, 1)"))
    assert notes == [f"block 'Tower' at 1:7: {note}"], notes
    assert "class Tower_2(nn.Module):" in code
