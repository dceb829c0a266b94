"""Issue 24 item 3: a recurrent layer with a residual in a loop (``for i in range(n): x
-> gru(4, bidirectional=true).residual``, a stack of residual bidirectional GRUs) kept a
class per call with the note 'the iterations of 'i' differ' (fuzz seed 92000049): each
call's forward binds the layer's output under the node's name (``gru1, _ =
self.gru1(x)``, ``gru2, _ = ...``), which the roller gave one name per iteration only
where the local is bound alone (``dense1 = ...``). The rolled class binds ``gru, _ =
getattr(self, f"gru{i + 1}")(x)``. Each program runs against its IR, its ``Net`` is
built as the build of one class per call builds it, strict-loads it and computes the
same; ``roll_check`` rebuilds the rolled class at arguments the calls did not give."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    roll_notes,
    twin,
)

RESIDUAL_RNN = """\
model Stack(n, p0 = true):
    def forward(x):
        for i in range(n):
            x -> {layer}(4, num_layers=2, bidirectional=p0).residual
            h1 = abs(x)
            x = add(x, h1)
        return x

model Net:
    input_shape = (5, 8)
    def forward(x):
        x -> Stack(1, p0=true) -> Stack(3)
        return x
"""


@pytest.mark.parametrize("layer", ["gru", "lstm"])
def test_a_residual_recurrent_layer_in_a_loop_is_one_class(layer: str) -> None:
    source = RESIDUAL_RNN.replace("{layer}", layer)
    notes, _ = roll_notes(source)
    assert notes == []
    checked = twin(source, f"residual_{layer}", torch.randn(2, 5, 8))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    stack = block_class(gen, "Stack")
    assert (
        "        for i in range(self.n):\n"
        f'            {layer}, _ = getattr(self, f"{layer}{{i + 1}}")(x)\n'
        f"            x = x + {layer}\n"
    ) in stack, stack
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["calls"] == 2, counts
