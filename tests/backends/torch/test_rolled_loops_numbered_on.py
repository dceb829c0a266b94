"""Issue 24 item 3: unnamed modules whose IR names number on from loops before them that
the calls run a different number of times. The IR numbers an operation's unnamed
modules across the whole forward (``dense1``, ``dense2``, ...), so a second loop's
``dense`` goes on from the first loop's (``dense4`` at ``a = 2``), a module after two loops
counts both, and one in loops nested three deep counts all three. Each kept a class per
call with the note 'an unnamed 'dense' module in a loop' or 'an unnamed module after a
loop, numbered by the calls' counts'; the rolled class names them by the loops' counts
(``dense{a + j + 2}``, ``dense{a + b + 1}``, ``dense{(i * b + j) * c + k + 1}``), keeping
the state-dict keys of the build with one class per call. Each program runs against its
IR, is built as that build builds it (the same modules in the same order), computes the
same, and its rolled class rebuilt at other arguments builds that call's class."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    rolls_exactly,
    twin,
)

SECOND = """\
model Tower(w, a, b):
    def forward(x):
        x -> dense(w)
        for i in range(a):
            x -> dense(w).relu -> layer_norm()
        for j in range(b):
            x -> dense(w).gelu
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2) as t1 -> Tower(8, 2, 3) as t2 -> dense(2) as head
"""


def _checked(source: str, name: str, width: int) -> str:
    """The block's rolled class, after the checks of the module docstring."""
    checked = twin(source, name, torch.randn(2, width), against=("flat",))
    gen, flat, counts = checked.gen, checked.flat, checked.counts
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Tower", "Net"], gen.code
    # built with other counts: that call's class
    assert counts["other arguments"] > 0, counts
    return block_class(gen, "Tower")


def test_a_second_loop_numbers_on_from_the_first_loops_count() -> None:
    """``dense{a + j + 2}``: after ``dense1`` and the first loop's ``a``."""
    text = _checked(SECOND, "second_loop", 6)
    assert (
        "        for j in range(b):\n"
        '            setattr(self, f"dense{a + j + 2}", nn.Linear(channels, w))\n'
    ) in text, text
    assert (
        "        for j in range(self.b):\n"
        '            x = getattr(self, f"dense{self.a + j + 2}")(x)\n'
    ) in text, text
    one, _, _ = build(SECOND, "second_loop_one")
    per_call, _, _ = build(SECOND, "second_loop_flat", roll=False)
    mine, _ = built_alike(one, per_call, "Net")
    assert "t2.dense6.weight" in mine.state_dict()


TWO_PER = """\
model Tower(w, a, b):
    def forward(x):
        for i in range(a):
            for j in range(b):
                x -> dense(w).relu -> dense(w)
        for k in range(b):
            x = x -> dense(w).tanh -> dense(w)
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2) as t1 -> Tower(8, 2, 3) as t2 -> dense(2) as head
"""


def test_loops_making_two_a_step_after_nested_loops() -> None:
    """Two ``dense`` an iteration after nested loops: ``dense{2 * a * b + 2 * k + 1}``,
    and the head after both, ``dense{2 * a * b + 2 * b + 1}``."""
    text = _checked(TWO_PER, "two_per", 6)
    assert 'setattr(self, f"dense{2 * a * b + 2 * k + 1}", ' in text, text
    assert 'setattr(self, f"dense{2 * a * b + 2 * k + 2}", ' in text, text
    assert 'setattr(self, f"dense{2 * a * b + 2 * b + 1}", nn.Linear(channels, 3))' in text
    assert 'return getattr(self, f"dense{2 * self.a * self.b + 2 * self.b + 1}")(x)' in text


AFTER_TWO = """\
model Tower(w, a, b):
    def forward(x):
        for i in range(a):
            x -> dense(w).relu
        for j in range(b):
            x -> dense(w).gelu
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2) as t1 -> Tower(8, 2, 3) as t2 -> dense(2) as head
"""


def test_an_unnamed_module_after_two_loops_counts_both() -> None:
    """``dense{a + b + 1}`` (was 'an unnamed module after a loop, numbered by the calls'
    counts ('dense4'): name it with 'as'')."""
    text = _checked(AFTER_TWO, "after_two", 6)
    assert '        setattr(self, f"dense{a + b + 1}", nn.Linear(channels, 3))\n' in text, text
    assert '        return getattr(self, f"dense{self.a + self.b + 1}")(x)\n' in text, text


THREE = """\
model Tower(w, a, b, c):
    def forward(x):
        for i in range(a):
            for j in range(b):
                for k in range(c):
                    x -> dense(w).relu
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2, 2) as t1 -> Tower(8, 2, 3, 1) as t2 -> dense(2) as head
"""


def test_loops_nested_three_deep() -> None:
    """``dense{(i * b + j) * c + k + 1}`` (was 'an unnamed 'dense' module in a loop')."""
    text = _checked(THREE, "three_deep", 6)
    assert (
        "                for k in range(c):\n"
        '                    setattr(self, f"dense{(i * b + j) * c + k + 1}", '
        "nn.Linear(channels, w))\n"
    ) in text, text
    assert 'getattr(self, f"dense{(i * self.b + j) * self.c + k + 1}")(x)' in text, text


NETWORK = """\
model Net(w, a, b):
    def forward(x):
        x -> dense(w) as stem
        for i in range(a):
            x -> dense(w).relu
        for j in range(b):
            x -> dense(w).gelu
        return x -> dense(3) as head

model small = Net(4, 1, 2):
    input_shape = (5,)

model wide = Net(6, 2, 3):
    input_shape = (5,)
"""


def test_a_network_second_loop_numbers_on_from_the_first() -> None:
    """A network whose variants run the loops differently: the same names."""
    code = rolls_exactly(NETWORK, "second_network", torch.randn(2, 5))
    assert 'setattr(self, f"dense{a + j + 2}", nn.Linear(channels, w))' in code, code
    assert 'x = getattr(self, f"dense{self.a + j + 2}")(x)' in code, code


FIXED = """\
model Tower(w, a):
    def forward(x):
        for j in range(2):
            x -> dense(w)
        for i in range(a):
            x -> dense(w).relu
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1) as t1 -> Tower(8, 2) as t2 -> dense(2) as head
"""


def test_a_loop_whose_count_is_a_number_is_in_the_base() -> None:
    """``range(2)`` runs two times at every call: its modules are a number of the base,
    ``dense{a + 3}`` (was ``dense{2 + a + 1}``)."""
    text = _checked(FIXED, "fixed_count", 6)
    assert '            setattr(self, f"dense{i + 3}", nn.Linear(channels, w))\n' in text, text
    assert '        setattr(self, f"dense{a + 3}", nn.Linear(channels, 3))\n' in text, text
    assert '        return getattr(self, f"dense{self.a + 3}")(x)\n' in text, text


NAMED_TOO = """\
model Tower(a, b):
    def forward(x):
        for i in range(a):
            x -> dense(8) as fc{i} -> dense(8)
        for j in range(b):
            x -> layer_norm() as norms{j}
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(1, 1) as t1 -> Tower(1, 2) as t2 -> dense(2) as head
"""


def test_a_named_module_of_the_operation_takes_a_number_too() -> None:
    """The IR numbers an operation's nodes whatever their ``as`` names (``fc0`` is
    ``dense1``), so two ``dense`` an iteration: ``dense{2 * i + 2}``. Every call runs the
    loop once, so the step is the body's; it counted the unnamed calls only
    (``dense{i + 2}``), whose class built at ``a = 2`` had ``dense3`` for ``dense4``."""
    text = _checked(NAMED_TOO, "named_too", 6)
    assert '            setattr(self, f"dense{2 * i + 2}", nn.Linear(channels, 8))\n' in text


NAMED_BEFORE = """\
model Tower(a, b):
    def forward(x):
        for i in range(a):
            x -> dense(4).relu as fc{i}
        for j in range(b):
            x -> dense(4)
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(1, 1) as t1 -> Tower(2, 2) as t2 -> dense(2) as head
"""


def test_unnamed_modules_number_on_from_a_loop_of_named_ones() -> None:
    """``fc{i}`` takes ``dense1``, ``dense2``, ...: the second loop's ``dense{a + j + 1}``
    and the head's ``dense{a + b + 1}`` count it (was 'an unnamed 'dense' module in a
    loop')."""
    text = _checked(NAMED_BEFORE, "named_before", 6)
    assert '            setattr(self, f"dense{a + j + 1}", nn.Linear(channels, 4))\n' in text
    assert '        return getattr(self, f"dense{self.a + self.b + 1}")(x)\n' in text, text
