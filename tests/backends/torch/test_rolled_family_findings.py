"""Issue 24 item 3: three faults of the rolled block classes the block-family fuzz
campaign found (``roll_check --seed 18``, seeds 24076, 85000239, 18000036).

- An operation-valued parameter applied at every call (``b``, taken as a module class)
  next to one a call applies no time (``a``, in a loop it runs zero times): the roller
  crashed with ``KeyError: 'b'`` looking ``b`` up among the applied functions.
- Two count loops of unnamed ``dense`` when no call runs both: each call numbered its
  second loop from 1, so the rolled class wrote ``dense{i + 1}`` in both loops, and built
  to run both (``Fam(6, 2, 1)``) the second loop made ``dense1`` again (one module where
  the build with one class per call has two). It numbers on: ``dense{n0 + i + 1}``.
- A loop filling a container (``as layers.{i}``) that makes another module after it
  (``batchnorm{i + 1}``): the class bound ``self.layers`` after the loop, so the
  batchnorms came first in the state dict. It makes the container before the loop, where
  the build with one class per call registers it; a loop making the other module before
  the container's first child keeps one class per call with a located note.

Each twin compiles rolled and with a class per call: ONE class, the same modules in the
same order (``named_modules``), a strict load, equal outputs, and ``roll_check`` finds
nothing at the calls and at other arguments."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    roll_notes,
    rolls_exactly,
    twin,
)


def _twin(source: str, name: str, width: tuple[int, ...], *, stateless: bool = True) -> str:
    """The checks of the module docstring; the rolled ``Fam``. ``stateless=False``: the
    modules holding no state left out of the comparison of ``named_modules``."""
    checked = twin(source, name, torch.randn(2, *width), stateless=stateless)
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert CLASS.findall(gen.code) == ["Fam", "Net"], gen.code
    assert CLASS.findall(flat).count("Net") == 1 and len(CLASS.findall(flat)) > 2, flat
    assert counts["calls"] == 2 and counts["other arguments"] > 0, counts
    return block_class(gen, "Fam")


APPLIED_AND_SKIPPED = """\
model Fam(n, a = relu, b = relu):
    def forward(x):
        for i in range(n):
            x -> a
        x -> b
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(1) -> Fam(0)
        return x
"""


def test_an_operation_applied_at_every_call_beside_one_a_call_skips() -> None:
    """``b`` (every call applies it) is the module class ``b=nn.ReLU``; was ``KeyError:
    'b'``. ``a`` (``Fam(0)`` applies it no time) is a module class too (hunt109 F9: it was
    the function ``a=F.relu``, its kind hanging on which calls ran the loop): the class
    builds ``self.a = a()`` for ``Fam(0)`` too, whose own class builds none (a ReLU: no
    state, so the state dicts are alike)."""
    text = _twin(APPLIED_AND_SKIPPED, "applied_and_skipped", (3,), stateless=False)
    assert "def __init__(self, n, a=nn.ReLU, b=nn.ReLU):" in text, text  # reads no width
    assert "            x = self.a(x)\n        return self.b(x)\n" in text, text


APART = """\
model Fam(n0, n1):
    def forward(x):
        for i in range(n0):
            x -> dense(4)
        for i in range(n1):
            x -> dense(4)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Fam(2, 0) -> Fam(0, 3) -> dense(2) as head
"""


def test_a_second_loop_no_call_runs_with_the_first_numbers_on() -> None:
    """``dense{n0 + i + 1}`` (was ``dense{i + 1}``: the second loop overwrote the
    first's modules in a class built to run both)."""
    text = _twin(APART, "apart", (6,))
    assert '            setattr(self, f"dense{n0 + i + 1}", nn.Linear(channels, 4))\n' in text
    assert '            x = getattr(self, f"dense{self.n0 + i + 1}")(x)\n' in text, text
    rolled, _, _ = build(APART, "apart_both")
    both = rolled.Fam(6, 2, 1)  # a class built to run both loops: three layers
    assert [n for n, _ in both.named_modules()] == ["", "dense1", "dense2", "dense3"]
    assert both(torch.randn(2, 6)).shape == (2, 4)


STAGE_THEN_NORM = """\
model Fam(n):
    def forward(x):
        for i in range(n):
            x -> conv1d(4, 3, padding=1) as layers.{i}
            x -> batchnorm()
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Fam(1) -> Fam(2)
        return x
"""


def test_a_container_filled_in_a_loop_registers_before_the_loops_other_modules() -> None:
    """``self.layers = nn.Sequential()`` before the loop (was ``stage = nn.Sequential()``
    and ``self.layers = stage`` after it: ``batchnorm1`` registered before ``layers``)."""
    text = _twin(STAGE_THEN_NORM, "stage_then_norm", (4, 8))
    assert (
        "        self.layers = nn.Sequential()\n"
        "        for i in range(n):\n"
        "            self.layers.append(nn.Conv1d(channels, 4, kernel_size=3, padding=1))\n"
        "            channels = 4\n"
        '            setattr(self, f"batchnorm{i + 1}", nn.BatchNorm1d(channels))\n'
    ) in text, text
    assert "stage" not in text, text


NORM_THEN_STAGE = """\
model Fam(n):
    def forward(x):
        for i in range(n):
            x -> batchnorm()
            x -> conv1d(4, 3, padding=1) as layers.{i}
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Fam(1) -> Fam(2)
        return x
"""


def test_a_module_before_the_containers_first_child_keeps_a_class_per_call() -> None:
    """The build with one class per call registers ``batchnorm1``, ``layers``,
    ``batchnorm2``: no place in the rolled ``__init__`` makes ``layers`` there (the class
    bound it after the loop, after ``batchnorm2``)."""
    notes, code = roll_notes(NORM_THEN_STAGE)
    assert notes == [
        "block 'Fam' at 1:7: a module made in a loop before the first child of 'layers'"
    ], notes
    assert CLASS.findall(code) == ["Fam", "Fam_2", "Net"], code
    assert check_source(NORM_THEN_STAGE) == []


NETWORK_STAGE_THEN_NORM = """\
model Net(n):
    def forward(x):
        for i in range(n):
            x -> conv1d(4, 3, padding=1) as layers.{i}
            x -> batchnorm()
        return x

model small = Net(1):
    input_shape = (4, 8)

model wide = Net(2):
    input_shape = (4, 8)
"""


def test_a_network_container_filled_in_a_loop_registers_before_the_loops_other_modules() -> None:
    """The network roller's class alike: ``self.layers`` made before the loop, so each
    variant builds ``layers`` before ``batchnorm1``, as its own class does."""
    code = rolls_exactly(NETWORK_STAGE_THEN_NORM, "network_stage", torch.randn(2, 4, 8))
    assert "        self.layers = nn.Sequential()\n        for i in range(n):\n" in code, code
    rolled, _, _ = build(NETWORK_STAGE_THEN_NORM, "network_stage_modules")
    unrolled, _, _ = build(NETWORK_STAGE_THEN_NORM, "network_stage_flat", roll=False)
    for variant in ("small", "wide"):
        mine = [n for n, _ in getattr(rolled, variant)().named_modules()]
        assert mine == [n for n, _ in getattr(unrolled, variant)().named_modules()], mine
