"""Issue 24 item 3: a loop inside an ``if`` outside loops (``if deep: for i in range(n):
x -> dense(w).relu else: x -> dense(w)``), as torchvision's ``if downsample:`` around
``for _ in range(n):``. Each call kept its class with the note 'a loop in an if outside
loops'; the rolled class writes the loop inside the branch in ``__init__`` and
``forward``, its modules named as the build with one class per call names them. Each
program runs against its IR, builds the same modules in the same order as that build,
strict-loads its weights and computes the same; ``roll_check`` rebuilds the class at
arguments no call gives. An unnamed module after such a loop that the IR numbers on from
its iterations (``dense{n + 1}`` or ``dense2``, as the branch taken decides) is named by a
running count started before the if, which each iteration of the loop and the other
branch add to (``dense{m + 1}``); an if in that loop making the operation keeps a class
per call with a located note. A network used through variants writes it alike."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    program,
    rolls_exactly,
    twin,
)

STAGE = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                x -> dense(w).relu
        else:
            x -> dense(w)
        return x
"""


def test_a_loop_in_one_branch_is_written_inside_it() -> None:
    """``Stage(8, 2, true)`` takes the loop, ``Stage(8, 3, false)`` the other branch."""
    checked = twin(
        program(STAGE, "Stage(8, 2, true) -> Stage(8, 3, false)"), "loop_branch", torch.randn(2, 4)
    )
    text = block_class(checked.gen, "Stage")
    assert (
        "        channels = in_features\n"
        "        if deep:\n"
        "            for i in range(n):\n"
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "        else:\n"
        "            self.dense1 = nn.Linear(channels, w)\n"
    ) in text, text
    assert (
        "        if self.deep:\n"
        "            for i in range(self.n):\n"
        '                x = getattr(self, f"dense{i + 1}")(x)\n'
        "                x = F.relu(x)\n"
        "        else:\n"
        "            x = self.dense1(x)\n"
    ) in text, text


def test_both_calls_taking_the_loop_at_different_counts() -> None:
    checked = twin(
        program(STAGE, "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(8, 1, false)"),
        "loop_branch_counts",
        torch.randn(2, 4),
    )
    assert "class Stage_2" not in checked.code


def test_a_loop_no_call_runs_is_read_from_a_phantom() -> None:
    """No call takes the branch: the class writes its loop all the same."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                x -> dense(w).relu
        return x -> layer_norm()
"""
    checked = twin(
        program(source, "Stage(8, 2, false) -> Stage(6, 3, false)"),
        "phantom_loop",
        torch.randn(2, 4),
    )
    assert 'setattr(self, f"dense{i + 1}", nn.Linear(channels, w))' in checked.code


def test_modules_before_and_a_named_one_after_the_if() -> None:
    """The loop's ``dense`` number on from the one before the if (``dense{i + 2}``)."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        x -> dense(w)
        if deep:
            for i in range(n):
                x -> dense(w).relu -> layer_norm()
        else:
            x -> dense(w)
        return x -> dense(w) as out
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(8, 3, false)"
    checked = twin(program(source, calls), "loop_branch_around", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert '                setattr(self, f"dense{i + 2}", nn.Linear(channels, w))\n' in text, text
    assert "        self.out = nn.Linear(channels, w)\n" in text, text


def test_a_triangle_in_a_branch_keeps_its_running_count_there() -> None:
    """``for j in range(i + 1)`` in ``for i in range(n)`` under the ``if``: the running
    count (``m``: ``n`` is a parameter) starts in the branch, before the loops."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                for j in range(i + 1):
                    x -> dense(w).relu
        else:
            x -> dense(w)
        return x
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(8, 3, false)"
    checked = twin(program(source, calls), "triangle_branch", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert (
        "        if deep:\n"
        "            m = 0\n"
        "            for i in range(n):\n"
        "                for j in range(i + 1):\n"
        '                    setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        "                    m += 1\n"
    ) in text, text


def test_an_unnamed_module_numbered_on_from_the_branch_loop_rolls() -> None:
    """``dense`` after the if is ``dense{n + 1}`` where the loop ran, ``dense2`` where the
    other branch did: one running count (``m``: ``n`` is a parameter) that the loop's
    iterations and the other branch add to names it, in ``__init__`` and forward alike."""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(8, 3, false)"
    source = program(STAGE.replace("        return x\n", "        return x -> dense(w)\n"), calls)
    checked = twin(source, "numbered_on_branch_loop", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert (
        "        m = 0\n"
        "        channels = in_features\n"
        "        if deep:\n"
        "            for i in range(n):\n"
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                m += 1\n"
        "        else:\n"
        "            self.dense1 = nn.Linear(channels, w)\n"
        "            channels = w\n"
        "            m += 1\n"
        '        setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n'
    ) in text, text
    assert (
        "        m = 0\n"
        "        if self.deep:\n"
        "            for i in range(self.n):\n"
        '                x = getattr(self, f"dense{i + 1}")(x)\n'
        "                x = F.relu(x)\n"
        "                m += 1\n"
        "        else:\n"
        "            x = self.dense1(x)\n"
        "            m += 1\n"
        '        return getattr(self, f"dense{m + 1}")(x)\n'
    ) in text, text
    assert {"stage2.dense4", "stage3.dense2"} <= set(checked.modules), checked.modules


def test_modules_before_the_if_and_two_after_number_on_from_both() -> None:
    """A ``dense`` before the if, the loop's ``dense{i + 2}``, then two unnamed ones, the
    second in a later loop: ``dense{m + 2}`` and ``dense{m + i + 3}``."""
    source = """\
model Stage(w, n, k, deep: bool):
    def forward(x):
        x -> dense(w)
        if deep:
            for i in range(n):
                x -> dense(w).relu -> layer_norm()
        else:
            x -> dense(w) -> dense(w)
        x -> dense(w)
        for j in range(k):
            x -> dense(w).gelu
        return x
"""
    calls = "Stage(8, 2, 1, true) -> Stage(6, 3, 2, true) -> Stage(8, 3, 2, false)"
    checked = twin(program(source, calls), "branch_loop_around", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert "            self.dense3 = nn.Linear(channels, w)\n" in text, text
    assert "            m += 2\n" in text, text
    assert '        setattr(self, f"dense{m + 2}", nn.Linear(channels, w))\n' in text, text
    assert 'setattr(self, f"dense{m + j + 3}", nn.Linear(channels, w))' in text, text


def test_a_triangle_in_the_branch_adds_its_own_count() -> None:
    """A triangle in the branch keeps its own count (``m``), which the running count
    that names the ``dense`` after the if adds after the loops (``count += m``): no
    second count of the same iterations."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                for j in range(i + 1):
                    x -> dense(w).relu
        else:
            x -> dense(w)
        return x -> dense(w)
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(8, 3, false)"
    checked = twin(program(source, calls), "triangle_branch_after", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert CLASS.findall(checked.code) == ["Stage", "Net"], checked.code
    init, forward = text.split("    def forward")
    for method in (init, forward):
        assert "            count += m\n        else:\n" in method, method
        assert method.count("count += ") == 2, method  # the triangle's total, the else's 1
    assert 'setattr(self, f"dense{count + 1}", nn.Linear(channels, w))' in init, init
    assert 'return getattr(self, f"dense{count + 1}")(x)' in forward, forward


def test_an_unnamed_module_after_the_loop_in_its_own_branch() -> None:
    """``x -> dense(w)`` after the loop, in the same branch: ``dense{m + 1}`` there too
    (it kept a class per call with the note 'numbered on from the loop ... in an if's
    branch'); the other branch's ``dense`` stays ``self.dense1``."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                x -> dense(w).relu
            x -> dense(w)
        else:
            x -> dense(w)
        return x -> dense(w)
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(5, 2, false)"
    checked = twin(program(source, calls), "after_loop_in_branch", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert (
        "                m += 1\n"
        '            setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        "            m += 1\n"
        "        else:\n"
        "            self.dense1 = nn.Linear(channels, w)\n"
    ) in text, text
    assert '            x = getattr(self, f"dense{m + 1}")(x)\n' in text, text


def test_an_increment_no_later_module_reads_is_not_written() -> None:
    """A second if after the count's last reader adds to it in a branch: ``m += 1`` there
    would be dead, in ``__init__`` and forward alike; the first if's, read by the
    ``dense`` after it, stay."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                x -> dense(w).relu
        else:
            x -> dense(w)
        x -> dense(w)
        if deep:
            x -> dense(w)
        else:
            x -> layer_norm()
        return x
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(5, 2, false)"
    checked = twin(program(source, calls), "dead_increment", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    init, forward = text.split("    def forward")
    assert (
        '            setattr(self, f"dense{m + 2}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        "        else:\n"
    ) in init, init
    read_last = '            x = getattr(self, f"dense{m + 2}")(x)\n        else:\n'
    assert read_last in forward, forward
    for method in (init, forward):
        assert method.count("m += 1") == 2, method


ELIF = """\
model Stage(w, n, mode):
    def forward(x):
        if mode == 1:
            for i in range(n):
                x -> dense(w).relu
        elif mode == 2:
            x -> dense(w) -> dense(w)
        elif mode == 3:
            for i in range(n):
                x -> dense(w) -> layer_norm() -> dense(w)
        else:
            x -> layer_norm()
        return x -> dense(w)
"""


def test_an_elif_chain_of_loops_and_branches_without_loops() -> None:
    """Each branch adds what it made: the loops each iteration's, the others theirs, the
    last none (no ``n += 0``)."""
    calls = "Stage(8, 2, 1) -> Stage(6, 3, 2) -> Stage(8, 2, 3) -> Stage(4, 3, 3) -> Stage(4, 1, 4)"
    checked = twin(program(ELIF, calls), "elif_branch_loops", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert "                m += 2\n" in text, text  # two dense an iteration of mode 3
    assert "+= 0" not in text, text
    assert '        setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n' in text, text


def test_an_if_with_no_else_adds_nothing_where_it_is_not_taken() -> None:
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        x -> dense(w)
        if deep:
            for i in range(n):
                x -> dense(w).relu
        return x -> dense(w)
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, false) -> Stage(8, 1, true)"
    checked = twin(program(source, calls), "no_else_branch_loop", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert "        else:\n" not in text, text
    assert '        setattr(self, f"dense{m + 2}", nn.Linear(channels, w))\n' in text, text


def test_an_if_in_the_branch_loop_adds_in_its_branch() -> None:
    """An if in the branch's loop making the operation: the running count adds in that
    if's branch (``m += 1`` where it makes the module), so the ``dense`` after the outer
    if is ``dense{m + 1}`` whichever branches ran (it kept a class per call with the note
    'numbered on from the loop ... in an if's branch'); a call taking the loop but not
    the inner branch (``Stage(5, 2, true, false)``) makes none in it."""
    source = """\
model Stage(w, n, deep: bool, wide: bool):
    def forward(x):
        if deep:
            for i in range(n):
                if wide:
                    x -> dense(w)
        else:
            x -> dense(w)
        return x -> dense(w)
"""
    calls = (
        "Stage(8, 2, true, true) -> Stage(6, 3, true, true) -> Stage(8, 3, false, false)"
        " -> Stage(5, 2, true, false)"
    )
    checked = twin(program(source, calls), "if_in_branch_loop", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert CLASS.findall(checked.code) == ["Stage", "Net"], checked.code
    assert (
        "        if deep:\n"
        "            for i in range(n):\n"
        "                if wide:\n"
        '                    setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        "                    m += 1\n"
    ) in text, text
    assert '        setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n' in text, text
    assert (
        "                if self.wide:\n"
        '                    x = getattr(self, f"dense{i + 1}")(x)\n'
        "                    m += 1\n"
    ) in text, text
    assert '        return getattr(self, f"dense{m + 1}")(x)\n' in text, text
    assert {"stage2.dense4", "stage3.dense2", "stage4.dense1"} <= set(checked.modules)


def test_an_if_in_the_branch_loop_whose_branches_make_different_numbers() -> None:
    """``if wide: dense else: dense -> dense`` in the branch's loop: each inner branch
    adds what it made (``m += 1``, ``m += 2``), its modules numbered by the loop's count
    as outside an if's branch (``dense{2 * i + 1}``)."""
    source = """\
model Stage(w, n, deep: bool, wide: bool):
    def forward(x):
        if deep:
            for i in range(n):
                if wide:
                    x -> dense(w)
                else:
                    x -> dense(w) -> dense(w)
        else:
            x -> dense(w)
        return x -> dense(w)
"""
    calls = "Stage(8, 2, true, true) -> Stage(6, 3, true, false) -> Stage(8, 3, false, false)"
    checked = twin(program(source, calls), "if_else_in_branch_loop", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert CLASS.findall(checked.code) == ["Stage", "Net"], checked.code
    for method in text.split("    def forward"):
        assert "                    m += 1\n                else:\n" in method, method
        assert "                    m += 2\n        else:\n" in method, method


NESTED_BESIDE = """\
model Stage(w, n, k, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                x -> dense(w)
                for j in range(k):
                    x -> dense(w).relu
        else:
            x -> dense(w)
        return x -> dense(w)
"""


def test_nested_loops_in_a_branch_whose_outer_body_makes_the_operation() -> None:
    """``for i: dense; for j in range(k): dense`` in a branch: no step in ``i`` numbers
    both loops' modules, so the inner loop keeps a running count (``m``, as a triangle's)
    that names them (``dense{i + m + 1}``, ``dense{i + m + 2}``), and the branch count
    adds both loops' (it kept a class per call with 'an unnamed 'dense' module in a
    loop at 5:22')."""
    calls = "Stage(8, 2, 2, true) -> Stage(6, 3, 1, true) -> Stage(8, 3, 2, false)"
    checked = twin(program(NESTED_BESIDE, calls), "nested_beside_branch", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert CLASS.findall(checked.code) == ["Stage", "Net"], checked.code
    assert (
        "        if deep:\n"
        "            m = 0\n"
        "            for i in range(n):\n"
        '                setattr(self, f"dense{i + m + 1}", nn.Linear(channels, w))\n'
        "                channels = w\n"
        "                for j in range(k):\n"
        '                    setattr(self, f"dense{i + m + 2}", nn.Linear(channels, w))\n'
        "                    m += 1\n"
        "                    count += 1\n"
        "                count += 1\n"
    ) in text, text
    assert '        return getattr(self, f"dense{count + 1}")(x)\n' in text, text
    assert {"stage1.dense7", "stage2.dense7", "stage3.dense2"} <= set(checked.modules)


def test_nested_loops_whose_outer_body_makes_the_operation_outside_a_branch() -> None:
    """The same loops outside any if, a ``dense`` after them: the inner loop's running
    count names all three (it kept a class per call with 'an unnamed 'dense' module
    after nested loops')."""
    source = """\
model Stage(w, n, k):
    def forward(x):
        for i in range(n):
            x -> dense(w)
            for j in range(k):
                x -> dense(w).relu
        return x -> dense(w)
"""
    calls = "Stage(8, 2, 2) -> Stage(6, 3, 1) -> Stage(5, 1, 3)"
    checked = twin(program(source, calls), "nested_beside", torch.randn(2, 4))
    text = block_class(checked.gen, "Stage")
    assert CLASS.findall(checked.code) == ["Stage", "Net"], checked.code
    assert '        return getattr(self, f"dense{self.n + m + 1}")(x)\n' in text, text


def test_an_if_on_the_loop_count_in_the_branch_loop_adds_to_the_count() -> None:
    """``if i > 0:`` in the branch's loop: the iterations make different modules, which
    the running count numbers (``dense{m + 1}``), as outside an if's branch
    (``test_rolled_if_on_count.py``); it kept a class per call with 'an unnamed 'dense'
    module in a loop at 6:26'."""
    source = """\
model Stage(w, n, deep: bool):
    def forward(x):
        if deep:
            for i in range(n):
                if i > 0:
                    x -> dense(w)
        else:
            x -> dense(w)
        return x -> dense(w)
"""
    calls = "Stage(8, 2, true) -> Stage(6, 3, true) -> Stage(8, 3, false)"
    checked = twin(program(source, calls), "count_in_branch_loop", torch.randn(2, 4))
    assert CLASS.findall(checked.code) == ["Stage", "Net"], checked.code
    text = block_class(checked.gen, "Stage")
    assert (
        "        if deep:\n"
        "            for i in range(n):\n"
        "                if i > 0:\n"
        '                    setattr(self, f"dense{m + 1}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        "                    m += 1\n"
    ) in text, text


NETWORK = """\
model Net(w, n, deep):
    def forward(x):
        x -> dense(w) as stem
        if deep:
            for i in range(n):
                x -> dense(w).relu
        else:
            x -> dense(2 * w)
        return x -> dense(2) as head

model small = Net(6, 2, true):
    input_shape = (4,)
model big = Net(8, 3, false):
    input_shape = (4,)
model mid = Net(5, 1, true):
    input_shape = (4,)
"""


def test_a_loop_in_a_network_branch_rolls() -> None:
    """A network used through variants writes the loop in the branch as a block does;
    each variant builds the modules of its class written out, strict-loads its weights and
    computes the same, and ``roll_check`` builds it at the variants' arguments changed."""
    code = rolls_exactly(NETWORK, "network_loop_branch", torch.randn(3, 4))
    assert (
        "        if deep:\n"
        "            for i in range(n):\n"
        '                setattr(self, f"dense{i + 2}", nn.Linear(channels, w))\n'
        "        else:\n"
        "            self.dense2 = nn.Linear(channels, 2 * w)\n"
        "            channels = 2 * w\n"
        "        self.head = nn.Linear(channels, 2)\n"
    ) in code, code
    counts: Counter[str] = Counter()
    assert check_source(NETWORK, counts) == []
    assert counts["network arguments"] > 0, counts


def test_an_unnamed_module_after_a_network_branch_loop_rolls() -> None:
    """The network's ``dense`` after the if (``dense{n + 2}`` or ``dense3``) is named by
    the running count, as a block's; it kept a class per variant."""
    source = NETWORK.replace("dense(2) as head", "dense(2)")
    code = rolls_exactly(source, "network_loop_branch_after", torch.randn(3, 4))
    assert (
        "        m = 0\n"
        "        channels = w\n"
        "        if deep:\n"
        "            for i in range(n):\n"
        '                setattr(self, f"dense{i + 2}", nn.Linear(channels, w))\n'
        "                m += 1\n"
        "        else:\n"
        "            self.dense2 = nn.Linear(channels, 2 * w)\n"
        "            channels = 2 * w\n"
        "            m += 1\n"
        '        setattr(self, f"dense{m + 2}", nn.Linear(channels, 2))\n'
    ) in code, code
    assert '        return getattr(self, f"dense{m + 2}")(x)\n' in code, code
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["network arguments"] > 0, counts


def test_a_triangle_in_a_network_branch_adds_its_count() -> None:
    """A network's triangle in the branch: ``count += m`` after it names the ``dense``
    after the if, as in a block."""
    source = NETWORK.replace(
        "            for i in range(n):\n                x -> dense(w).relu\n",
        "            for i in range(n):\n                for j in range(i + 1):\n"
        "                    x -> dense(w).relu\n",
    ).replace("dense(2) as head", "dense(2)")
    code = rolls_exactly(source, "network_triangle_branch", torch.randn(3, 4))
    assert "            count += m\n        else:\n" in code, code
    assert 'setattr(self, f"dense{count + 2}", nn.Linear(channels, 2))' in code, code
    assert 'return getattr(self, f"dense{count + 2}")(x)' in code, code
    assert check_source(source, Counter()) == []


def test_network_nested_loops_beside_in_a_branch_roll() -> None:
    """A network's branch holding ``for i: dense; for j in range(k): dense``: the inner
    running count names both loops' modules and the branch count the ``dense`` after
    the if, as in a block."""
    source = (
        NETWORK.replace("model Net(w, n, deep):", "model Net(w, n, deep, k = 2):")
        .replace(
            "            for i in range(n):\n                x -> dense(w).relu\n",
            "            for i in range(n):\n                x -> dense(w)\n"
            "                for j in range(k):\n                    x -> dense(w).relu\n",
        )
        .replace("dense(2) as head", "dense(2)")
    )
    code = rolls_exactly(source, "network_nested_beside", torch.randn(3, 4))
    assert '                setattr(self, f"dense{i + m + 2}", nn.Linear(channels, w))\n' in code
    assert 'return getattr(self, f"dense{count + 2}")(x)' in code, code
    assert check_source(source, Counter()) == []


def test_an_if_in_a_network_branch_loop_adds_in_its_branch() -> None:
    """A network's branch loop holding ``if wide:`` making the operation: the count adds
    in that if's branch, as in a block."""
    source = (
        NETWORK.replace("model Net(w, n, deep):", "model Net(w, n, deep, wide = true):")
        .replace(
            "                x -> dense(w).relu\n",
            "                if wide:\n                    x -> dense(w).relu\n",
        )
        .replace("dense(2) as head", "dense(2)")
    )
    code = rolls_exactly(source, "network_if_in_branch_loop", torch.randn(3, 4))
    assert "                if self.wide:\n" in code, code
    assert 'return getattr(self, f"dense{m + 2}")(x)' in code, code
    assert check_source(source, Counter()) == []
