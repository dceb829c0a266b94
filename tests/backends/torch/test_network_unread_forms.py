"""Issue 24 item 3: network forms the network roller kept one class per variant for,
found by ``bench/one_class_per_block.py`` (seeds 134 and 152):

- a buffer no line reads (``h0 = buffer(w0, init=init0)``), then ``return x`` of the
  tensor bound before it ('a return that is not a chain');
- such a buffer made in a loop ('an assignment to 'h0' the roller does not write', 'the
  tensor 'h0' is not joined back'): registered per iteration, dropped at its end;
- a tensor made without a module in a loop and returned after it (``h0 = tanh(x)``,
  ``h0 -> sigmoid()``, ``return h0``: ''x' goes on before 'h0' is joined');
- an operation-valued parameter the variants give differently (``op1=tanh``,
  ``op1=gelu``), applied in a loop or not ('the iterations of 'i' differ', 'the
  variants' forward methods differ'): stored as its module (``self.op1 = op1()``) and
  applied from it, as a block's.

Each is now one class per network: every variant builds the modules and buffers of its
class written out (``roll_networks=False``) in the same order, persistent or not,
strict-loads its weights and computes the same (``one_class.rolls_exactly``), and
``roll_check`` finds no problem at other arguments."""

from __future__ import annotations

import re
from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import build, rolls_exactly  # noqa: E402


def buffers_alike(source: str, name: str) -> None:
    """Each variant's buffers, those left out of the state dict too, under the names
    and with the contents and dtypes of its class written out."""
    rolled, _, _ = build(source, name)
    unrolled, _, _ = build(source, f"{name}_flat", roll=False)
    for variant in re.findall(r"^model (\w+) = ", source, re.MULTILINE):
        mine = dict(getattr(rolled, variant)().named_buffers())
        theirs = dict(getattr(unrolled, variant)().named_buffers())
        assert list(mine) == list(theirs), variant
        for key, value in theirs.items():
            assert mine[key].dtype == value.dtype and torch.equal(mine[key], value), key
    assert check_source(source, Counter()) == []


UNREAD_BUFFER = """\
use torch

model Net(w0, init0):
    def forward(x):
        x -> dense(3) as stem
        x -> dense(w0)
        h0 = buffer(w0, init=init0, persistent={persistent})
        return x

model V0 = Net(8, "ones"):
    input_shape = (2, 3)

model V1 = Net(8, "zeros"):
    input_shape = (2, 3)

model V2 = Net(3, "ones"):
    input_shape = (2, 3)
"""


@pytest.mark.parametrize("persistent", ["true", "false"])
def test_an_unread_buffer_before_the_return_of_the_tensor_before_it(persistent: str) -> None:
    """``return x`` after ``h0 = buffer(...)`` threads ``x`` again: nothing to build."""
    source = UNREAD_BUFFER.format(persistent=persistent)
    code = rolls_exactly(source, f"unread_{persistent}", torch.randn(2, 3))
    assert 'torch.zeros(w0) if init0 == "zeros" else torch.ones(w0)' in code, code
    assert ("persistent=False" in code) == (persistent == "false"), code
    assert "        h0 = self.buffer1.expand(x.shape[0], -1)\n        return x\n" in code, code
    buffers_alike(source, f"unread_buffers_{persistent}")


LOOPED_BUFFER = """\
use torch

model Net(w0, init0, n0, w2, n2):
    def forward(x):
        x -> conv2d(2, 3, padding=1) as stem
        x -> conv2d(w0, 3, padding=1)
        for i in range(n0):
            h0 = buffer(w0, init=init0, persistent={persistent})
        for i in range(n2):
            x -> conv2d(w2, 3, padding=1).relu as d2_{{i + 1}}
            x -> batchnorm()
        return x

model V0 = Net(2, "zeros", 2, 3, 3):
    input_shape = (4, 3, 8)

model V1 = Net(w0=6, init0="ones", n0=1, w2=8, n2=2):
    input_shape = (4, 3, 8)
"""


@pytest.mark.parametrize("persistent", ["true", "false"])
def test_an_unread_buffer_made_in_a_loop_is_registered_per_iteration(persistent: str) -> None:
    """Each iteration's buffer (``buffer1``, ``buffer2``) registered by the loop; the
    tensor is dropped at the end of the iteration, the loop after it threads ``x``."""
    source = LOOPED_BUFFER.format(persistent=persistent)
    code = rolls_exactly(source, f"looped_{persistent}", torch.randn(2, 4, 3, 8))
    assert "        for i in range(n0):\n" in code, code
    assert 'f"buffer{i + 1}",' in code, code
    assert ("persistent=False" in code) == (persistent == "false"), code
    assert (
        "        for i in range(self.n0):\n"
        '            h0 = getattr(self, f"buffer{i + 1}").expand(x.shape[0], -1)\n'
    ) in code, code
    buffers_alike(source, f"looped_buffers_{persistent}")


RETURNED_AFTER_LOOP = """\
use torch

model Net(w0, n0):
    def forward(x):
        x -> dense(4) as stem
        for i in range(n0):
            x -> dense(w0).relu
            h0 = tanh(x)
            h0 -> sigmoid()
        return h0

model V0 = Net(2, 2):
    input_shape = (2, 4, 5, 2)

model V1 = Net(6, 1):
    input_shape = (2, 4, 5, 2)

model V2 = Net(6, 3):
    input_shape = (2, 4, 5, 2)
"""


def test_a_tensor_made_without_a_module_in_a_loop_and_returned_after_it() -> None:
    """``h0 = tanh(x)``, ``h0 -> sigmoid()`` in the loop, ``return h0`` after it:
    ``__init__`` builds nothing for ``h0``, forward computes it at every iteration."""
    code = rolls_exactly(RETURNED_AFTER_LOOP, "returned", torch.randn(2, 2, 4, 5, 2))
    assert (
        "        for i in range(self.n0):\n"
        '            x = getattr(self, f"dense{i + 2}")(x)\n'
        "            x = F.relu(x)\n"
        "            h0 = torch.tanh(x)\n"
        "            h0 = torch.sigmoid(h0)\n"
        "        return h0\n"
    ) in code, code
    assert check_source(RETURNED_AFTER_LOOP, Counter()) == []


OPERATION = """\
use torch

sizes0 = [32, 16, 8, 4]

model Net(w1, n1, k0, n0, op1 = relu):
    def forward(x):
        x -> dense(6) as stem
        for i in range(n1):
            x -> dense(w1) -> op1
        for i in range(n0):
            x -> dense(sizes0[k0]).relu
        return x

model V0 = Net(8, 2, k0=2, n0=1, op1=tanh):
    input_shape = (2, 2, 6, 8)

model V1 = Net(4, 3, 3, 2, op1=gelu):
    input_shape = (2, 2, 6, 8)

model V2 = Net(4, 1, 0, 1):
    input_shape = (2, 2, 6, 8)
"""


def test_an_operation_the_variants_give_differently_in_a_loop() -> None:
    """``op1`` applied in the first loop, a table's item sizing the second: the module
    stored before the layers, applied as ``self.op1`` at every iteration."""
    code = rolls_exactly(OPERATION, "operation", torch.randn(2, 2, 2, 6, 8))
    assert "    def __init__(self, w1, n1, k0, n0, op1=nn.ReLU):\n" in code, code
    assert "        self.op1 = op1()\n" in code, code
    assert (
        "        for i in range(self.n1):\n"
        '            x = getattr(self, f"dense{i + 2}")(x)\n'
        "            x = self.op1(x)\n"
    ) in code, code
    assert "        super().__init__(4, 1, 0, 1)\n" in code, code  # the default: nn.ReLU
    assert check_source(OPERATION, Counter()) == []


def test_an_operation_the_variants_give_differently_outside_loops() -> None:
    """``x -> dense(w1) -> op1`` with no loop: forward reads ``self.op1``, not the
    variants' ``torch.tanh`` and ``F.gelu``; no refusal of other operations."""
    source = OPERATION.replace(
        "        for i in range(n1):\n            x -> dense(w1) -> op1\n",
        "        x -> dense(w1) -> op1\n",
    )
    code = rolls_exactly(source, "operation_top", torch.randn(2, 2, 2, 6, 8))
    assert "        x = self.dense2(x)\n        x = self.op1(x)\n" in code, code
    assert "is not nn." not in code, code
    assert check_source(source, Counter()) == []


def test_an_operation_the_variants_give_alike_stays_folded() -> None:
    """Every variant giving ``tanh``: forward is written out for it, the class refusing
    another operation (as before), with no module stored."""
    source = OPERATION.replace("op1=gelu", "op1=tanh").replace(
        "Net(4, 1, 0, 1)", "Net(4, 1, 0, 1, tanh)"
    )
    code = rolls_exactly(source, "operation_alike", torch.randn(2, 2, 2, 6, 8))
    assert "self.op1 = op1()" not in code, code
    assert "if op1 is not nn.Tanh:" in code, code
