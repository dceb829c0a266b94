"""The per-operation rules of ``aurane.analysis.autograd_rules`` against what PyTorch's
autograd saves on the CPU, one small program per family of operations, at batch 1 and
batch 3 (strides differ at batch 1), plus the view arithmetic, parameter tensors and optimizer
state against torch itself."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from aurane.analysis.memory import optimizer_states  # noqa: E402
from aurane.analysis.saved import (  # noqa: E402
    buffer_bytes,
    graph_parameter_tensors,
    step_memory,
    view_strides,
)
from aurane.frontend import run_front_end  # noqa: E402
from tests.subset import representative  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench"
ZOO = Path(__file__).resolve().parents[2] / "examples" / "zoo"


@pytest.fixture(scope="module")
def pm() -> Iterator[object]:
    sys.path.insert(0, str(BENCH))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        import _plan_measure

        yield _plan_measure
    finally:
        torch.set_num_threads(threads)
        sys.path.remove(str(BENCH))


PROGRAMS = {
    "pools": """
model Net:
    input_shape = (4, 8, 8)
    def forward(x):
        h = conv2d(x, 6, kernel=3, padding=1).relu6
        a = maxpool(h, kernel=2)
        b = avgpool(h, kernel=2)
        c = adaptive_max_pool(h, output_size=2)
        d = adaptive_avg_pool(h, output_size=2)
        e = adaptive_avg_pool(h, output_size=1)
        m = global_max_pool(h)
        g = global_avg_pool(h)
        s = add(flatten(a), flatten(b))
        t = add(flatten(c), flatten(d))
        u = concat(s, t, dim=1)
        return concat(u, flatten(e), m, g, dim=1)
""",
    "norms": """
model Net:
    input_shape = (4, 6, 6)
    def forward(x):
        h = conv2d(x, 8, kernel=3, padding=1)
        a = batchnorm(h).leaky_relu
        b = group_norm(a, groups=2).silu
        c = instance_norm(b, affine=true).elu
        d = layer_norm(c, dim=1).gelu
        e = layer_norm(d, axes=3).hardswish
        f = pad(e, padding=(1, 1, 1, 1), mode="reflect")
        g = upsample(f, scale_factor=2).mish
        return pixel_shuffle(g, upscale_factor=2)
""",
    "regularize": """
model Net:
    input_shape = (10, 16)
    def forward(x):
        h = dense(x, 32).selu
        h = dropout(h, 0.25)
        h = drop_path(h, 0.2)
        h = dense(h, 32).softplus
        h = dropout(h, 0.0)
        s = softmax(h, dim=-1)
        l = log_softmax(h, dim=-1)
        y = multiply(s, l)
        z = divide(y, dense(h, 32).sigmoid)
        w = multiply(z, 0.5)
        return glu(subtract(w, h), dim=-1)
""",
    "views": """
model Net:
    input_shape = (6, 8)
    def forward(x):
        h = dense(x, 24)
        a, b, c = split(h, 8, dim=-1)
        p = transpose(a, 1, 2)
        q = matmul(b, p)
        r = reshape(transpose(c, 1, 2), 48)
        s = dense(r, 6)
        t = select(q, dim=1, index=0)
        u = slice(q, dim=2, start=1, end=4)
        v = dense(flatten(u), 6)
        w = dense(permute(h, 2, 1), 3)
        k = unsqueeze(add(s, t), dim=1)
        e = expand(k, sizes=(4, 6))
        return concat(flatten(e), v, flatten(w), dim=1)
""",
    "attention": """
model Net:
    input_shape = (12, 16)
    def forward(x):
        h = multihead_attention(x, heads=4, dim=16)
        h = multihead_attention(h, heads=2, dim=16, causal=true).tanh
        m = dense(x, 8)
        c = multihead_attention(h, m, heads=2, dim=16)
        return layer_norm(add(c, x))
""",
    "sdpa": """
model Net:
    input_shape = (10,)
    input_dtype = int64
    def forward(ids):
        x = embedding(ids, 50, 32)
        x = positional_encoding(x, max_len=16)
        q = transpose(reshape(dense(x, 32), 10, 4, 8), 1, 2)
        k = transpose(reshape(dense(x, 16), 10, 2, 8), 1, 2)
        v = transpose(reshape(dense(x, 16), 10, 2, 8), 1, 2)
        q = rotary_embedding(q)
        k = rotary_embedding(k)
        y = scaled_dot_product_attention(q, k, v, causal=true)
        y = reshape(transpose(y, 1, 2), 10, 32)
        one = reshape(x, 1, 10, 32)
        z = scaled_dot_product_attention(one, reshape(dense(x, 32), 1, 10, 32), one)
        return dense(rms_norm(add(y, reshape(z, 10, 32))), 50)
""",
    "masks": """
model Net:
    input_shape = (9, 8)
    def forward(x):
        index = buffer((9, 9), init="relative_position_index", window=(3, 3))
        table = parameter((25, 8), init=normal(0.02), batch_axis=false)
        bias = select(lookup(table, index=index), dim=1, index=0)
        z = dense(x, 8)
        keep = where(gt(z, 0.0), z, multiply(z, 0.5))
        pad = unsqueeze(lt(select(x, dim=2, index=0), -1.0), -1)
        hidden = masked_fill(add(bias, keep), pad, 0.0)
        return multiply(hidden, to(ge(x, 0.0), "float32"))
""",
}


def measured_and_planned(pm: object, name: str, batch: int) -> tuple[int, int]:
    text = PROGRAMS[name].lstrip()
    front = run_front_end(text, f"{name}.aur")
    assert front.ok, front.diagnostics
    graph = front.graphs["Net"]
    module = pm.compile_module(text, f"{name}.aur")  # type: ignore[attr-defined]
    torch.manual_seed(0)
    model = module.Net()
    inputs, targets = pm.sample_batch(  # type: ignore[attr-defined]
        graph.input_value.sample_shape,
        graph.input_value.dtype,
        graph.output_value.sample_shape,
        "mse",
        batch,
        50,
        torch.device("cpu"),
    )
    measured = pm.measure_step(model, inputs, targets, "mse", None)  # type: ignore[attr-defined]
    planned = step_memory(graph, batch, "mse", device="cpu").activation_bytes
    return planned, measured.activation_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("batch", [1, 3])
def test_operation_rules_match_autograd(pm: object, name: str, batch: int) -> None:
    planned, measured = measured_and_planned(pm, name, batch)
    assert planned == measured, (name, batch, planned, measured)


def test_view_strides_agree_with_torch_view() -> None:
    """Every reshape of a few strided layouts: a view exactly when torch.view succeeds,
    with torch's strides."""
    base = torch.empty(2, 3, 4, 6)
    layouts = [
        base,
        base.transpose(1, 2),
        base.permute(0, 2, 3, 1),
        base[:, :, :, :3],
        base.transpose(0, 1)[:1],
    ]
    targets = [(2, 72), (6, 24), (2, 3, 24), (24, 6), (2, 12, 6), (144,), (2, 3, 2, 2, 6)]
    checked = 0
    for tensor, shape in itertools.product(layouts, targets):
        if tensor.numel() != int(torch.tensor(shape).prod()):
            continue
        try:
            expected = tuple(tensor.view(shape).stride())
        except RuntimeError:
            expected = None
        got = view_strides(tuple(tensor.shape), tuple(tensor.stride()), shape)
        assert got == expected, (tuple(tensor.shape), tuple(tensor.stride()), shape)
        checked += 1
    assert checked >= 20


# Left to ``-m slow`` (4.5 s of 9): families whose layers (convolutions, batch norms, dense
# layers, a squeeze-excitation) the default run counts in efficientnet_b0, resnet18, resnet50
# and the other rolled families (convnext, mobilenet_v3, vgg).
COUNTED_SLOW = {"efficientnet", "densenet", "resnet"}
ZOO_PROGRAMS = sorted(p.stem for p in ZOO.glob("*.aur"))


@pytest.mark.parametrize("program", representative(ZOO_PROGRAMS, set(ZOO_PROGRAMS) - COUNTED_SLOW))
def test_parameter_tensors_and_buffers_of_the_full_size_zoo(pm: object, program: str) -> None:
    """Every parameter tensor (as model.parameters() lists them, a tied weight once) and the
    buffer bytes, at full size on the meta device (nothing allocated)."""
    text = (ZOO / f"{program}.aur").read_text(encoding="utf-8")
    front = run_front_end(text, f"{program}.aur")
    module = pm.compile_module(text, f"{program}.aur")  # type: ignore[attr-defined]
    for name, graph in front.graphs.items():
        with torch.device("meta"):
            model = getattr(module, name)()
        expected = sorted(p.numel() for p in model.parameters())
        assert sorted(graph_parameter_tensors(graph)) == expected, name
        assert buffer_bytes(graph) == sum(b.numel() * b.element_size() for b in model.buffers())


OPTIMIZERS = [
    ("adam", {}),
    ("adam", {"amsgrad": True}),
    ("adamw", {"weight_decay": 0.1}),
    ("sgd", {}),
    ("sgd", {"momentum": 0.9, "nesterov": True}),
    ("rmsprop", {}),
    ("rmsprop", {"momentum": 0.9, "centered": True}),
    ("adagrad", {}),
    ("adadelta", {}),
]


@pytest.mark.parametrize(("name", "options"), OPTIMIZERS)
def test_optimizer_state_is_torch_optims(pm: object, name: str, options: dict) -> None:  # type: ignore[type-arg]
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Linear(7, 3, bias=False))
    optimizer = pm.make_optimizer(model, name, options)  # type: ignore[attr-defined]
    model(torch.randn(2, 5)).sum().backward()
    optimizer.step()
    moments = counters = 0
    for entry in optimizer.state.values():
        for key, tensor in entry.items():
            if key == "step":
                counters += tensor.numel() * tensor.element_size()
            elif isinstance(tensor, torch.Tensor):
                moments += tensor.numel() * tensor.element_size()
    states, _ = optimizer_states(name, options)
    assert moments == states * (5 * 7 + 7 + 7 * 3) * 4
    assert counters == (0 if name == "sgd" else 4 * 3)
