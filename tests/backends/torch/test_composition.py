"""Models as operations (SPEC §4.2): one class per block definition (per parameter dtype), exact
parameters."""

from __future__ import annotations

from typing import Any

import pytest

from aurane.ir.graph import Graph
from tests.backends.torch.test_corpus_models import expected_shapes
from tests.backends.torch.util import generate, load

torch = pytest.importorskip("torch")

BLOCKS = """
model Proj:
    def forward(x):
        x -> dense(8).relu

model Unit:
    input_shape = (8,)
    def forward(x):
        x -> dense(8).relu.residual

model Stack:
    def forward(h):
        h -> Unit() -> repeat(Unit, 2)

model Two:
    input_shape = (4,)
    def forward(x):
        a = Proj(x)
        b = Proj(a)
        c = repeat(b, Unit, 2)
        d = Stack(c)
        return concat(a, d, dim=1)

model Wide:
    input_shape = (8,)
    input_dtype = float64
    def forward(x):
        x -> Unit() -> Proj() -> Stack()
"""

ATTENTION = """
model Mix:
    def forward(x):
        x -> multihead_attention(heads=2, dim=8).residual -> layer_norm() -> dense(8)

model Pair:
    input_shape = (6, 4)
    def forward(x):
        x -> dense(8) -> Mix() -> repeat(Mix, 2) -> reshape(3, 16) -> dense(8) -> Mix()
"""


def check_call_sites(module: Any, graph: Graph) -> None:
    """Every node that owns a submodule has exactly the parameters the IR gives it."""
    for node in graph.nodes:
        layer = getattr(module, node.id, None)
        if layer is None:
            assert node.parameters == 0, node.id
            continue
        tensors = [layer] if isinstance(layer, torch.nn.Parameter) else list(layer.parameters())
        assert sum(t.numel() for t in tensors) == node.parameters, node.id
        if node.op == "block" and node.subgraph is not None:
            check_call_sites(layer, node.subgraph)
        if node.op == "repeat" and node.subgraph is not None:
            assert len(layer) == node.repeat
            for copy in layer:
                check_call_sites(copy, node.subgraph)


def run_and_compare_shapes(net: Any, graph: Graph, x: Any, **kwargs: Any) -> Any:
    seen: dict[str, tuple[int, ...]] = {}
    for name, sub in net.named_modules():
        if name:
            sub.register_forward_hook(
                lambda m, a, out, name=name: seen.__setitem__(
                    name, tuple((out[0] if isinstance(out, tuple) else out).shape)
                )
            )
    out = net(x, **kwargs)
    for path, shape in expected_shapes(graph).items():
        assert seen[path] == (x.shape[0], *shape[1:]), path
    return out


def test_one_class_per_block_signature() -> None:
    _, generator, code = generate(BLOCKS)
    classes = [line.split("(")[0][6:] for line in code.splitlines() if line.startswith("class ")]
    # Proj is called at (4,) and (8,): one class taking in_features (issue 24 item 3); its
    # float64 call has parameters of another dtype, a class of its own
    assert classes == [
        "Proj", "Proj_2", "Unit", "Unit_8_float64", "Stack", "Stack_8_float64", "Two", "Wide",
    ]  # fmt: skip
    assert "self.proj1 = Proj(4)" in code and "self.proj2 = Proj(8)" in code
    assert "dtype=torch.float64" in code.split("class Proj_2")[1].split("class ")[0]
    assert generator.class_names == {
        "Proj": "Proj", "Unit": "Unit", "Stack": "Stack", "Two": "Two", "Wide": "Wide"
    }  # fmt: skip
    # a block call matching the standalone Unit reuses its class
    assert "self.unit1 = Unit()" in code


@pytest.mark.parametrize("model", ["Two", "Wide", "Unit"])
def test_call_sites_have_the_ir_parameters(model: str) -> None:
    fe, generator, code = generate(BLOCKS)
    graph = fe.graphs[model]
    net = getattr(load(code), generator.class_names[model])()
    assert sum(p.numel() for p in net.parameters()) == graph.parameters
    check_call_sites(net, graph)
    dtype = getattr(torch, graph.input_dtype or "float32")
    x = torch.randn(3, *graph.input_value.sample_shape, dtype=dtype)
    out = run_and_compare_shapes(net, graph, x)
    assert tuple(out.shape) == (3, *graph.output_value.sample_shape)
    assert out.dtype == dtype


def test_float64_model_has_float64_parameters_and_rejects_float32() -> None:
    _, _, code = generate(BLOCKS)
    net = load(code).Wide()
    assert {p.dtype for p in net.parameters()} == {torch.float64}
    with pytest.raises(TypeError, match="Wide expects float64 input"):
        net(torch.randn(2, 8))


def test_attention_blocks_take_the_mask_through_repeat() -> None:
    fe, generator, code = generate(ATTENTION)
    graph = fe.graphs["Pair"]
    assert "nn.ModuleList([Mix(8) for _ in range(2)])" in code
    assert "self.mix2 = Mix(8)" in code  # the (3, 8) call shares the class: in_features 8
    assert code.count("class Mix(") == 1 and "Mix_" not in code
    net = load(code).Pair()
    check_call_sites(net, graph)
    assert sum(p.numel() for p in net.parameters()) == graph.parameters
    x = torch.randn(2, 6, 4, requires_grad=True)
    mask = torch.zeros(2, 6, dtype=torch.bool)
    mask[0, 4:] = True
    with pytest.raises(RuntimeError):
        net(x, padding_mask=mask)  # the reshape changes the sequence length: mask no longer fits
    out = run_and_compare_shapes(net, graph, x)
    out.sum().backward()
    assert torch.isfinite(x.grad).all()


def test_float64_sequence_layers_create_float64_parameters() -> None:
    fe, _, code = generate(
        """
        model Seq:
            input_shape = (6, 4)
            input_dtype = float64
            def forward(x):
                x -> positional_encoding(max_len=8) -> multihead_attention(heads=2, dim=4)
                  -> lstm(3, bidirectional=true) -> gru(4) -> layer_norm() -> batchnorm()
                  -> conv1d(2, kernel=1) -> dense(2)
        """
    )
    graph = fe.graphs["Seq"]
    net = load(code).Seq()
    assert {p.dtype for p in net.parameters()} == {torch.float64}
    assert sum(p.numel() for p in net.parameters()) == graph.parameters
    out = net(torch.randn(2, 6, 4, dtype=torch.float64))
    assert out.dtype == torch.float64
    assert tuple(out.shape) == (2, *graph.output_value.sample_shape)
