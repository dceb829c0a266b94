"""Every corpus model: compiles, imports, has the expected parameters and output shape,
trains one step, and its runtime shapes equal the IR's at every submodule."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from aurane.ir.graph import Graph
from tests.backends.torch.util import corpus_path, corpus_sources, generate, load
from tests.conftest import corpus_expected

torch = pytest.importorskip("torch")


def corpus_models() -> list[Any]:
    expected = corpus_expected("valid") if corpus_sources() else {}
    return [
        pytest.param(source, model, facts, id=f"{source}:{model}")
        for source, models in expected.items()
        for model, facts in models.items()
    ]


def batch_input(graph: Graph, batch: int = 2) -> Any:
    shape = (batch, *graph.input_value.sample_shape)
    if graph.input_dtype in ("int64", "int32"):
        vocab = min(n.args["vocabulary"] for n in graph.nodes if n.op == "embedding")
        return torch.randint(0, vocab, shape, dtype=getattr(torch, graph.input_dtype))
    return torch.randn(shape, dtype=getattr(torch, graph.input_dtype or "float32"))


def compiled(source: str) -> tuple[dict[str, Graph], dict[str, str], Any]:
    fe, generator, code = generate(corpus_path(source).read_text(), source)
    return fe.graphs, generator.class_names, load(code)


@pytest.mark.parametrize(("source", "model", "facts"), corpus_models())
def test_corpus_model_runs_with_expected_facts(source: str, model: str, facts: Any) -> None:
    graphs, names, module = compiled(source)
    net = getattr(module, names[model])()
    assert sum(p.numel() for p in net.parameters()) == facts["parameters"]
    x = batch_input(graphs[model])
    out = net(x)
    assert tuple(out.shape) == (2, *facts["output_shape"])
    out.float().square().mean().backward()
    grads = [p.grad for p in net.parameters()]
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)


def expected_shapes(graph: Graph, prefix: str = "") -> dict[str, tuple[Any, ...]]:
    """Module path -> IR output shape for every node that owns a submodule."""
    values = {v.name: v for v in graph.values}
    out: dict[str, tuple[Any, ...]] = {}
    for node in graph.nodes:
        if node.op in ("positional_encoding",) or node.op in _FUNCTIONAL:
            continue
        path = prefix + node.id
        shape = values[node.output].shape
        assert shape is not None
        if node.op == "repeat":
            assert node.subgraph is not None
            for copy in range(node.repeat):
                out.update(expected_shapes(node.subgraph, f"{path}.{copy}."))
        else:
            out[path] = shape
            if node.subgraph is not None:
                out.update(expected_shapes(node.subgraph, f"{path}."))
    return out


_FUNCTIONAL = {
    "add", "concat", "flatten", "reshape", "global_avg_pool", "relu", "gelu", "sigmoid",
    "tanh", "softmax", "log_softmax", "leaky_relu", "silu", "mish", "elu", "selu", "hardswish",
}  # fmt: skip


@pytest.mark.parametrize(("source", "model", "facts"), corpus_models())
def test_runtime_shapes_equal_ir_shapes(source: str, model: str, facts: Any) -> None:
    graphs, names, module = compiled(source)
    graph = graphs[model]
    net = getattr(module, names[model])()
    seen: dict[str, tuple[int, ...]] = {}

    def hook(name: str) -> Any:
        def record(mod: Any, args: Any, output: Any) -> None:
            tensor = output[0] if isinstance(output, tuple) else output
            seen[name] = tuple(tensor.shape)

        return record

    for name, sub in net.named_modules():
        if name:
            sub.register_forward_hook(hook(name))
    net(batch_input(graph, batch=3))
    expected = expected_shapes(graph)
    assert expected, "no submodule to compare"
    for path, shape in expected.items():
        assert path in seen, f"{path} never ran"
        assert seen[path] == (3, *shape[1:]), path


def _write_module(code: str, tmp_path: Path, name: str) -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("source", "model"), [("tiny_cnn.aur", "TinyNet"), ("sequence_lm.aur", "TinyLM")]
)
def test_export_and_compile(source: str, model: str, tmp_path: Path) -> None:
    fe, generator, code = generate(corpus_path(source).read_text(), source)
    module = _write_module(code, tmp_path, f"gen_{model.lower()}")
    try:
        net = getattr(module, generator.class_names[model])().eval()
        x = batch_input(fe.graphs[model])
        with torch.no_grad():
            eager = net(x)
            exported = torch.export.export(net, (x,))
            torch.testing.assert_close(exported.module()(x), eager)
            fast = torch.compile(net, fullgraph=True)
            torch.testing.assert_close(fast(x), eager)
    finally:
        sys.modules.pop(module.__name__, None)
