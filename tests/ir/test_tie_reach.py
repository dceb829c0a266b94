"""``tie=`` reaches a named layer inside a named block call (``encoder.wte``); a block
cannot tie to its caller's layer."""

from __future__ import annotations

import types

import pytest

from aurane.compile import compile_detailed
from tests.helpers import front

torch = pytest.importorskip("torch")

SOURCE = """\
use torch

model Embed(vocab, width):
    def forward(x):
        x -> embedding(vocab, width) as wte -> layer_norm() as ln

model Net:
    input_shape = (6,)
    input_dtype = "int64"
    def forward(x):
        x -> Embed(50, 16) as encoder -> dense(50, bias=false, tie=encoder.wte) as head
"""


def test_tie_to_a_layer_inside_a_block_call_shares_the_weight() -> None:
    result = compile_detailed(SOURCE, validate=True, filename="tie.aur")
    assert "self.head.weight = self.encoder.wte.weight" in result.output
    module = types.ModuleType("tie")
    exec(compile(result.output, "<tie>", "exec"), module.__dict__)
    net = module.Net()
    assert net.head.weight is net.encoder.wte.weight
    graph = result.graphs["Net"]
    assert sum(p.numel() for p in net.parameters()) == graph.parameters == 50 * 16 + 2 * 16
    out = net(torch.randint(0, 50, (2, 6)))
    out.sum().backward()
    assert out.shape == (2, 6, 50)


def test_a_block_cannot_tie_to_its_callers_layer() -> None:
    source = (
        "use torch\n\n"
        "model Head(vocab):\n    def forward(x):\n"
        "        x -> dense(vocab, bias=false, tie=wte) as out\n\n"
        'model Net:\n    input_shape = (6,)\n    input_dtype = "int64"\n'
        "    def forward(x):\n        x -> embedding(50, 16) as wte -> Head(50)\n"
    )
    errors = [d for d in front(source).diagnostics if d.is_error]
    assert [d.code for d in errors] == ["S047"]
    assert errors[0].span.line == 5 and "nor of the blocks it calls" in errors[0].message
    assert "not a layer of the model that calls this one" in (errors[0].hint or "")
