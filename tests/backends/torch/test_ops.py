"""Every operation: the generated module equals native PyTorch, outputs and gradients.

Each case compiles a one-operation model, copies the generated layer's weights into the
hand-written twin from tests/ops/twins.py, runs both on the same input with the same RNG
state and compares outputs, input gradients and parameter gradients (float32, 1e-6).
"""

from __future__ import annotations

from typing import Any

import pytest

from aurane.ops import CATALOG, buffer
from aurane.ops import index as index_ops
from aurane.ops.spec import tensor_positions
from aurane.semantics.sizes import evaluate
from tests.backends.torch.util import aur_literal, generate, load, numel

torch = pytest.importorskip("torch")
from tests.ops.twins import TWINS  # noqa: E402  (needs torch)

BATCH = 3
INDEX_OPS = frozenset(spec.name for spec in (*index_ops.SPECS, *buffer.SPECS))

# argument combinations that change behaviour beyond each OpSpec's samples
EXTRA: dict[str, list[tuple[dict[str, Any], tuple[tuple[int, ...], ...]]]] = {
    "dense": [({"features": 1}, ((1,),))],
    "conv2d": [({"channels": 2, "kernel": (1, 3), "padding": (0, 1)}, ((2, 4, 5),))],
    "maxpool": [({"kernel": 2, "stride": 1}, ((2, 5),))],
    "avgpool": [({"kernel": 3, "stride": 1, "padding": 1}, ((2, 5, 5),))],
    "global_avg_pool": [({}, ((2, 3, 4, 5),))],
    "upsample": [
        ({"size": 5}, ((2, 3),)),
        ({"scale_factor": 2, "mode": "bilinear"}, ((2, 3, 3),)),
        ({"scale_factor": 3, "mode": "linear", "align_corners": True}, ((1, 4),)),
    ],
    "concat": [({"dim": -2}, ((2, 3), (4, 3)))],
    "softmax": [({"dim": 2}, ((2, 3, 4),)), ({"dim": -3}, ((2, 3, 4),))],
    "log_softmax": [({"dim": 1}, ((5,),)), ({"dim": 3}, ((2, 3, 4),))],
    "leaky_relu": [({"slope": 0.0}, ((4,),))],
    "elu": [({"alpha": 2.0}, ((3, 3),))],
    "multihead_attention": [({"heads": 2, "dim": 6, "causal": True}, ((7, 6),))],
    "lstm": [({"hidden": 3, "num_layers": 2, "bidirectional": True, "dropout": 0.5}, ((4, 2),))],
    "gru": [({"hidden": 2, "num_layers": 3, "bias": False}, ((5, 3),))],
    "embedding": [({"vocabulary": 5, "width": 2, "padding_idx": -1}, ((4,),))],
    "batchnorm": [({"momentum": 0.5}, ((3, 2, 2),))],
    "layer_norm": [({"eps": 0.1}, ((7,),))],
    "dropout": [({"p": 0.9}, ((3, 5),))],
}


def cases() -> list[Any]:
    out = []
    for op, spec in CATALOG.items():
        if op == "repeat":
            continue  # composition: tests/backends/torch/test_composition.py
        if op in INDEX_OPS:
            continue  # masks, indices, constructors: tests/backends/torch/test_index_ops.py
        for index, (args, shapes) in enumerate([*spec.samples, *EXTRA.get(op, [])]):
            if not shapes or any(len(s) == 0 for s in shapes):  # parameter: no input
                continue  # a model input needs at least one axis
            out.append(pytest.param(op, dict(args), shapes, id=f"{op}-{index}"))
    return out


def source(op: str, args: dict[str, Any], shapes: tuple[tuple[int, ...], ...]) -> str:
    spec = CATALOG[op]
    parts: list[str] = []
    keywords = tensor_positions(args)
    for param in spec.params:
        if param.name in keywords:  # attn_mask=extra2: a tensor of the body
            parts.append(f"{param.name}=extra{keywords[param.name] - 1}")
        elif param.name in args:
            value = args[param.name]
            if param.variadic:
                parts += [aur_literal(v) for v in value]
            else:
                parts.append(f"{param.name}={aur_literal(value)}")
    lines = ["model M:", f"    input_shape = {aur_literal(shapes[0])}"]
    if spec.input_dtypes == "int":
        lines.append("    input_dtype = int64")
    lines += ["    def forward(x):", "        flat = flatten(x)"]
    inputs = ["x"]
    for index, shape in enumerate(shapes[1:]):
        # extra inputs: reshape(dense(flatten(x))) gives any shape from the one model input
        sizes = ", ".join(map(str, shape))
        lines.append(f"        extra{index} = reshape(dense(flat, {numel(shape)}), {sizes})")
        inputs.append(f"extra{index}")
    positional = [name for i, name in enumerate(inputs) if i not in keywords.values()]
    lines.append(f"        out = {op}({', '.join(positional + parts)})")
    lines.append("        return out")
    if len(shapes) == 1:
        lines.remove("        flat = flatten(x)")
    return "\n".join(lines) + "\n"


def inputs_for(op: str, args: dict[str, Any], shape: tuple[int, ...]) -> Any:
    if CATALOG[op].input_dtypes == "int":
        return torch.randint(0, args["vocabulary"], (BATCH, *shape))
    return torch.randn(BATCH, *shape, requires_grad=True)


def tensors(module: Any) -> list[Any]:
    if isinstance(module, torch.nn.Parameter):
        return [module]
    return list(module.state_dict(keep_vars=True).values())


def dense_grad(t: Any) -> Any:
    return t.to_dense() if t.is_sparse else t


@pytest.mark.parametrize(("op", "args", "shapes"), cases())
def test_operation_matches_pytorch(op: str, args: dict[str, Any], shapes: Any) -> None:
    fe, _, code = generate(source(op, args, shapes))
    graph = fe.graphs["M"]
    node = next(n for n in graph.nodes if n.op == op)
    model = load(code).M()
    bound = dict(node.args)
    twin = TWINS[op](bound, shapes)
    layer = getattr(model, node.id, None)
    if layer is not None:  # copy the generated layer's state into the twin, by position
        ours, theirs = tensors(layer), twin.state_dict()
        assert [t.shape for t in ours] == [t.shape for t in theirs.values()]
        twin.load_state_dict(dict(zip(theirs, (t.detach() for t in ours), strict=True)))
    x = inputs_for(op, args, shapes[0])
    torch.manual_seed(0)
    out = model(x)
    extras = [getattr(model, f"dense{i + 1}") for i in range(len(shapes) - 1)]
    torch.manual_seed(0)
    x2 = x.detach().clone().requires_grad_(x.requires_grad)
    more = [d(x2.flatten(1)).reshape(BATCH, *s) for d, s in zip(extras, shapes[1:], strict=True)]
    expected = twin(x2, *more)
    sample = evaluate(graph.output_value.sample_shape, {"batch": BATCH})  # cross_batch_matmul
    assert out.shape == expected.shape == (BATCH, *sample)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    if x.requires_grad:
        torch.testing.assert_close(x.grad, x2.grad, atol=1e-6, rtol=1e-5)
    if layer is not None:
        ours_p = [layer] if isinstance(layer, torch.nn.Parameter) else list(layer.parameters())
        for mine, theirs_p in zip(ours_p, twin.parameters(), strict=True):
            torch.testing.assert_close(
                dense_grad(mine.grad), dense_grad(theirs_p.grad), atol=1e-6, rtol=1e-5
            )
        # buffers too (batchnorm running statistics after a training step)
        for mine, theirs_t in zip(tensors(layer), twin.state_dict().values(), strict=True):
            torch.testing.assert_close(mine.detach(), theirs_t, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize(("op", "args", "shapes"), cases())
def test_layer_parameters_equal_the_ir(op: str, args: dict[str, Any], shapes: Any) -> None:
    fe, _, code = generate(source(op, args, shapes))
    graph = fe.graphs["M"]
    model = load(code).M()
    for node in graph.nodes:
        layer = getattr(model, node.id, None)
        count = 0 if layer is None else sum(p.numel() for p in tensors_params(layer))
        assert count == node.parameters, node.id
    assert sum(p.numel() for p in model.parameters()) == graph.parameters


def tensors_params(layer: Any) -> list[Any]:
    return [layer] if isinstance(layer, torch.nn.Parameter) else list(layer.parameters())


SUFFIXES = [
    ("dense(x, 4).relu.residual", (4,), lambda m, x: x + torch.relu(m.dense1(x))),
    ("dense(x, 4).residual.gelu", (4,), lambda m, x: torch.nn.functional.gelu(x + m.dense1(x))),
    (
        "conv2d(x, 3, kernel=3, padding=1).leaky_relu(0.2).residual",
        (3, 5, 5),
        lambda m, x: x + torch.nn.functional.leaky_relu(m.conv2d1(x), 0.2),
    ),
    (
        "dense(x, 6).softmax(dim=1).log_softmax(dim=-1)",
        (2, 5),
        lambda m, x: torch.log_softmax(torch.softmax(m.dense1(x), dim=1), dim=-1),
    ),
    (
        "layer_norm(x).residual.residual",
        (5,),
        lambda m, x: x + (x + m.layer_norm1(x)),
    ),
    (
        "dense(x, 3).elu(alpha=0.5).tanh",
        (3,),
        lambda m, x: torch.tanh(torch.nn.functional.elu(m.dense1(x), 0.5)),
    ),
]


@pytest.mark.parametrize(("expr", "shape", "reference"), SUFFIXES, ids=[s[0] for s in SUFFIXES])
def test_suffixes_match_pytorch(expr: str, shape: tuple[int, ...], reference: Any) -> None:
    text = (
        f"model M:\n    input_shape = {aur_literal(shape)}\n"
        f"    def forward(x):\n        y = {expr}\n        return y\n"
    )
    _, _, code = generate(text)
    model = load(code).M()
    x = torch.randn(BATCH, *shape, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    out, expected = model(x), reference(model, x2)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    out.sum().backward()
    expected.sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, atol=1e-6, rtol=1e-5)
