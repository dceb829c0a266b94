"""The profiler: corpus totals, catalog agreement, formulas, memory and training memory."""

from __future__ import annotations

import pytest

from aurane import ops
from aurane.analysis.formulas import FORMULAS, macs_formula
from aurane.analysis.memory import (
    amp_dtypes,
    optimizer_states,
    training_jobs,
    training_memory,
)
from aurane.analysis.profile import (
    UNKNOWN_DTYPE_BYTES,
    by_operation,
    catalog_context,
    dtype_bytes,
    profile,
    walk,
)
from aurane.analysis.report import human_bytes, model_json, model_text, op_label, profiles_json
from aurane.frontend import run_front_end
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.source import Span
from tests.conftest import VALID, corpus_expected, corpus_files
from tests.helpers import calls_made, front

SPAN = Span(1, 1, 1, 2)


def graphs_of(name: str) -> dict[str, Graph]:
    path = VALID / name
    result = run_front_end(path.read_text(), str(path))
    assert result.ok, result.diagnostics
    return result.graphs


@pytest.mark.parametrize("name", corpus_files("valid") or ["<absent>"])
def test_corpus_parameters_and_flops_exact(name: str) -> None:
    expected = corpus_expected("valid").get(name)
    if expected is None:
        pytest.skip(f"{name} has no expected facts")
    graphs = graphs_of(name)
    for model, facts in expected.items():
        result = profile(graphs[model])
        assert result.parameters == facts["parameters"], model
        assert result.flops == facts["flops_per_sample"], model
        assert result.flops == 2 * result.macs
        assert list(result.output_shape or ()) == facts["output_shape"]


@pytest.mark.parametrize("name", corpus_files("valid") or ["<absent>"])
def test_layers_agree_with_ir_and_roll_up(name: str) -> None:
    for graph in graphs_of(name).values():
        result = profile(graph)
        for layer, node in zip(result.layers, graph.nodes, strict=True):
            assert layer.node == node.id and layer.parameters == node.parameters
            if layer.children:
                assert layer.macs == layer.repeat * sum(c.macs for c in layer.children)
        totals = by_operation(result)
        assert sum(t.macs for t in totals) == result.macs
        assert sum(t.parameters for t in totals) == result.parameters
        assert sum(t.other_flops for t in totals) == result.other_flops


def test_every_formula_agrees_with_the_catalog_on_every_sample() -> None:
    checked = 0
    for name, spec in ops.CATALOG.items():
        if name == "repeat":
            continue
        for args, shapes in spec.samples:
            ctx = ops.context(spec, args, shapes, batch=2)  # cross_batch_matmul reads it
            out = spec.infer(ctx)
            formula = macs_formula(name, ctx, out)
            if formula is None:
                assert spec.macs(ctx, out) == 0, f"{name} has MACs but no formula"
                continue
            assert eval(formula[1], {"__builtins__": {}}) == spec.macs(ctx, out), name
            checked += 1
    assert checked >= len(FORMULAS)


def explained_arithmetic(formula: str) -> int:
    """Evaluate the arithmetic of an ``--explain`` line (``MACs = meaning = a · b = n; ...``)."""
    expression = formula.split("; ")[0].split(" = ")[2]
    python = expression.replace(" \u00b7 ", " * ").replace(" / ", " // ")
    return int(eval(python, {"__builtins__": {}}))


@pytest.mark.parametrize("kernel", ["3", "(2, 3)", "(3, 1)"])
def test_explained_conv_formula_arithmetic_equals_the_count(kernel: str) -> None:
    # (a 1-tuple kernel on a 2-D image is refused since issue 11: torch would build a 1-D kernel)
    graph = front(f"""
        model K:
            input_shape = (6, 8, 8)
            def forward(x):
                x -> conv2d(4, kernel={kernel}, groups=2)
    """).graphs["K"]
    result = profile(graph)
    (layer,) = result.layers
    assert layer.formula is not None
    assert explained_arithmetic(layer.formula) == layer.macs == result.macs
    text = model_text(result, detailed=True, explain=True)
    assert f"conv2d1: {layer.formula}" in text


def chain(nodes: list[tuple[str, str, dict, tuple[int, ...], str | None, int]]) -> Graph:
    """A hand-built graph: (id, op, args, output sample shape, dtype, parameters)."""
    values = [Value("x", (BATCH, 8), None, SPAN, "x")]
    built = []
    current = "x"
    for node_id, op, args, shape, dtype, params in nodes:
        built.append(Node(node_id, op, args, (current,), node_id, params, SPAN))
        values.append(Value(node_id, (BATCH, *shape), dtype, SPAN))
        current = node_id
    return Graph("Hand", "x", current, tuple(values), tuple(built), SPAN, None)


def test_hand_built_graph_uses_catalog_rules() -> None:
    graph = chain(
        [
            ("dense1", "dense", {"features": 4, "bias": True}, (4,), None, 36),
            ("relu1", "relu", {}, (4,), None, 0),
            ("dense2", "dense", {"features": 2, "bias": False}, (2,), None, 8),
        ]
    )
    result = profile(graph, batch_size=3)
    assert result.parameters == 44 and result.macs == 32 + 8 and result.flops == 80
    assert result.other_flops == 4 + 4  # bias adds of dense1, one op per relu element
    # every value incl. the input, 4-byte guess for the unknown dtypes, times the batch
    assert result.activation_bytes_per_sample == (8 + 4 + 4 + 2) * UNKNOWN_DTYPE_BYTES
    assert result.activation_bytes == 3 * result.activation_bytes_per_sample
    assert result.unknown_dtypes == 4
    assert result.layers[1].formula == "no multiply-accumulates (work counted in other FLOPs)"
    ctx, out = catalog_context(graph.nodes[0], graph.value_map, "float32") or (None, None)
    assert ctx is not None and out is not None and ctx.args["features"] == 4


def test_activation_bytes_follow_dtypes() -> None:
    graphs = front("""
        model LM:
            input_shape = (8,)
            input_dtype = int64
            def forward(t):
                t -> embedding(50, 4) -> dense(3)
        model Half:
            input_shape = (8,)
            input_dtype = float16
            def forward(x):
                x -> dense(2)
    """).graphs
    lm = profile(graphs["LM"])
    assert lm.activation_bytes_per_sample == 8 * 8 + 8 * 4 * 4 + 8 * 3 * 4
    assert lm.unknown_dtypes == 0 and lm.param_dtype == "float32"
    half = profile(graphs["Half"], 2)
    assert half.activation_bytes == 2 * (8 * 2 + 2 * 2)
    assert half.parameter_bytes == 18 * 2
    assert dtype_bytes(None) == 4 and dtype_bytes("float64") == 8 and dtype_bytes("bool") == 1


def test_profile_rejects_bad_batch() -> None:
    with pytest.raises(ValueError):
        profile(chain([]), 0)


def test_walk_paths_and_detailed_text() -> None:
    graph = graphs_of("composition.aur")["SmallResNet"]
    result = profile(graph, 4)
    paths = [path for path, _, _ in walk(result.layers)]
    assert "residualunit1/conv2d2" in paths and "residualunit2/add1" in paths
    text = model_text(result, detailed=True, explain=True)
    assert "not latency" in text and "by operation" in text and "formulas" in text
    assert "MACs = output elements x (input channels / groups) x kernel elements" in text
    plain = model_text(result)
    assert "residualunit1" in plain and "    conv2d1" not in plain  # rolled up by default
    assert "1,290,304" in plain and "activation memory at batch 4" in plain


def test_json_shape_has_spec_keys() -> None:
    result = profile(graphs_of("composition.aur")["Encoder"], 2)
    payload = profiles_json([(result, None)], 2, explain=True)
    assert payload["batch_size"] == 2
    model = payload["models"][0]
    assert {
        "name",
        "parameters",
        "trainable_parameters",
        "flops_per_sample",
        "other_flops_per_sample",
        "activation_bytes",
        "layers",
    } <= set(model)
    layer = model["layers"][0]
    assert {"node", "op", "output_shape", "parameters", "flops_per_sample"} <= set(layer)
    assert layer["op"] == "repeat" and layer["repeat"] == 3 and len(layer["layers"]) == 7
    assert layer["output_shape"] == [16, 48] and "formula" in layer
    assert model_json(result)["estimate"] is True


def test_optimizer_states() -> None:
    assert optimizer_states("adam", {})[0] == 2
    assert optimizer_states("adamw", {"amsgrad": True})[0] == 3
    assert optimizer_states("sgd", {})[0] == 0
    assert optimizer_states("sgd", {"momentum": 0.9})[0] == 1
    assert optimizer_states("rmsprop", {"momentum": 0.9, "centered": True})[0] == 3
    assert optimizer_states("adagrad", {})[0] == 1
    assert optimizer_states("adadelta", {})[0] == 2


def test_training_memory_of_a_train_job() -> None:
    path = VALID / "training.aur"
    result = run_front_end(path.read_text(), str(path))
    assert result.resolved is not None
    jobs = training_jobs(result.resolved)
    job = jobs["Digits"]
    assert job.optimizer == "adamw" and job.batch == 16 and not job.mixed_precision
    graph = result.graphs["Digits"]
    prof = profile(graph)
    memory = training_memory(graph, prof, job)
    assert memory.batch_size == 16
    assert memory.parameter_bytes == memory.gradient_bytes == 43_706 * 4
    assert memory.optimizer_bytes == 2 * 43_706 * 4
    assert memory.activation_bytes == 16 * prof.activation_bytes_per_sample
    assert memory.total_bytes == 4 * 43_706 * 4 + memory.activation_bytes
    assert training_memory(graph, prof, job, 2).batch_size == 2


def test_gan_jobs_and_mixed_precision() -> None:
    result = front("""
        dataset data:
            from aurane.data.SyntheticRegression
            size = 8
            features = 4
            batch = 4
        model Net:
            input_shape = (4,)
            def forward(x):
                x -> dense(8).relu -> layer_norm() -> dense(1)
        train Net on data:
            loss = mse
            optimizer = sgd(lr=0.1, momentum=0.9)
            mixed_precision = true
    """)
    assert result.ok, result.diagnostics
    assert result.resolved is not None
    job = training_jobs(result.resolved)["Net"]
    assert job.mixed_precision and job.optimizer == "sgd" and job.batch == 4
    graph = result.graphs["Net"]
    dtypes = amp_dtypes(graph)
    assert dtypes["dense1"] == "float16" and dtypes["relu1"] == "float16"
    assert dtypes["layer_norm1"] == "float32" and dtypes["dense2"] == "float16"
    memory = training_memory(graph, profile(graph), job)
    assert memory.states_per_parameter == 1
    # input 4x4 B guess, dense 8x2, relu 8x2, layer norm 8x4, dense 1x2
    assert memory.activation_bytes == 4 * (16 + 16 + 16 + 32 + 2)
    gan = graphs_of("gan.aur")
    path = VALID / "gan.aur"
    resolved = run_front_end(path.read_text(), str(path)).resolved
    assert resolved is not None
    jobs = training_jobs(resolved)
    assert jobs["Generator"].role == "generator" and jobs["Critic"].role == "discriminator"
    assert jobs["Critic"].batch == 8 and set(gan) == {"Generator", "Critic"}


def test_repeat_amp_copies_chain() -> None:
    graph = graphs_of("composition.aur")["Encoder"]
    dtypes = amp_dtypes(graph)
    assert dtypes["repeat1/0/x"] is None and dtypes["repeat1/1/x"] == "float32"
    assert dtypes["repeat1/2/layer_norm2"] == "float32"


def test_human_bytes() -> None:
    assert human_bytes(12) == "12 B" and human_bytes(2048) == "2.0 KiB"
    assert human_bytes(3 * 1024**3) == "3.0 GiB"


def _chain_graph(ops: int, width: int = 16) -> Graph:
    """``x -> dense(width).relu -> ...``: ``ops`` IR nodes alternating dense and relu."""
    values = [Value("x", (BATCH, width), "float32", SPAN, "x")]
    nodes: list[Node] = []
    current = "x"
    for index in range(ops):
        name = f"{'relu' if index % 2 else 'dense'}{index // 2 + 1}"
        if index % 2 == 0:
            args: dict[str, object] = {"features": width, "bias": True}
            node = Node(name, "dense", args, (current,), name, width * width + width, SPAN)
        else:
            node = Node(name, "relu", {}, (current,), name, 0, SPAN)
        nodes.append(node)
        values.append(Value(name, (BATCH, width), "float32", SPAN))
        current = name
    return Graph("Deep", "x", current, tuple(values), tuple(nodes), SPAN, "float32")


def test_profiling_work_grows_linearly_with_the_operations() -> None:
    # a work limit, not a time limit (timing lives in bench/profile_speed.py): ten times the
    # operations may cost at most 11 times the function calls, so no quadratic step hides
    small, large = _chain_graph(1_000), _chain_graph(10_000)
    assert profile(large, 32).macs == 5_000 * 16 * 16
    ratio = calls_made(lambda: profile(large, 32)) / calls_made(lambda: profile(small, 32))
    assert ratio <= 11, f"10x the operations made {ratio:.1f}x the calls"


NAMED = """
use torch

model Basic(width, stride=1):
    def forward(x):
        h = conv2d(x, width, kernel=3, stride=stride, padding=1, bias=false) as conv1
        h -> batchnorm() as bn1

model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        x -> conv2d(8, kernel=3, padding=1) as stem
          -> repeat(Basic(8), 2) as layer1
          -> Basic(16, stride=2) as layer2
          -> Basic(16)
          -> flatten() -> dense(4) as head
"""


def test_rows_show_layer_names_and_block_calls() -> None:
    result = profile(front(NAMED).graphs["Net"], 2)
    rows = [(layer.shown, op_label(layer)) for layer in result.layers]
    assert rows == [
        ("stem", "conv2d"),
        ("layer1", "Basic(8) x2"),
        ("layer2", "Basic(16, stride=2) (block)"),
        ("basic2", "Basic(16) (block)"),  # unnamed: the IR node id
        ("flatten1", "flatten"),
        ("head", "dense"),
    ]
    paths = [path for path, _, _ in walk(result.layers)]
    assert "layer2/conv1" in paths and "layer1/bn1" in paths
    text = model_text(result)
    assert "Basic(16, stride=2) (block)" in text and "  head " in text
    payload = model_json(result)
    layer2 = payload["layers"][2]
    assert layer2["name"] == "layer2" and layer2["call"] == "Basic(16, stride=2)"
    assert layer2["node"] == "basic1"  # the IR node id stays available
