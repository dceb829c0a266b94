"""Issue 25, item 3: the techniques people use, in the generated loop.

``accumulate = N`` (equal to the large batch within float tolerance), ``compile = true``
(every zoo model traces with ``fullgraph=True`` and no graph break), bf16 autocast on the
CPU (fp16 with a gradient scaler is CUDA-only: ``bench/cuda_training.py``), fused
optimizers on CUDA, ``channels_last``, and weight-decay groups that leave out biases, norms
and embeddings. The generated functions run in this process (no interpreter start).
"""

from __future__ import annotations

import inspect
import os
import re
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from aurane.compile import compile_detailed
from aurane.semantics.sizes import evaluate, example_sizes
from tests.helpers import front
from tests.subset import representative
from tests.training.helpers import compile_text

REPO = Path(__file__).resolve().parents[2]

# 43 samples: batches of 32 are [32, 11]; batches of 8 in steps of 4 are [8, 8, 8, 8] and
# [8, 3], so each step sees the same samples as the large batch (uneven last step included)
BATCHED = """
experiment Same:
    seed = 4
    device = "cpu"

dataset points:
    from aurane.data.SyntheticImages
    size = 43
    image_size = (1, 6, 6)
    num_classes = 3
    batch = {batch}

model Net:
    input_shape = (1, 6, 6)
    def forward(x):
        x -> flatten() -> dense(16).relu -> dense(3)

train Net on points:
    epochs = 3
    optimizer = sgd(lr=0.5, momentum=0.9)
    metrics = [accuracy]
{extra}"""


def _job(source: str, name: str = "job") -> dict[str, Any]:
    code = compile_text(source, f"{name}.aur")
    namespace: dict[str, Any] = {"__name__": name}
    exec(compile(code, f"{name}.py", "exec"), namespace)
    return namespace


def test_accumulating_4_batches_of_8_equals_batches_of_32() -> None:
    large = _job(BATCHED.format(batch=32, extra=""))["train_net"]()
    source = BATCHED.format(batch=8, extra="    accumulate = 4\n")
    code = compile_text(source)
    assert "with run.accumulating(net):" in code and "(loss * run.share).backward()" in code
    assert "if run.stepping:  # every 4 batches, and an epoch's last" in code
    small = _job(source)["train_net"]()
    for key, value in large.state_dict().items():
        torch.testing.assert_close(small.state_dict()[key], value, rtol=1e-5, atol=1e-6)
    for big, accumulated in zip(large.training_history, small.training_history, strict=True):
        assert accumulated["loss"] == pytest.approx(big["loss"], rel=1e-5)
        assert accumulated["accuracy"] == big["accuracy"]
    # without accumulation the same batches of 8 take 4 times the steps: not the same run
    plain = _job(BATCHED.format(batch=8, extra=""))["train_net"]()
    assert not torch.allclose(
        plain.state_dict()["dense1.weight"], large.state_dict()["dense1.weight"]
    )


# The default run traces these; the others (``-m slow``) repeat their forward code: the
# efficientnet family's forward is efficientnet_b0's blocks in the loops the other rolled
# families (resnet, densenet, convnext) trace, mobilenet_v2's operations are a subset of
# mobilenet_v3's and efficientnet_b0's, convnext_tiny of convnext's, resnet50 of resnet18's
# and resnet's. Every operation and every rolled form a zoo forward uses is traced here.
TRACED_BY_DEFAULT = {
    "bert", "clip", "convnext", "dcgan", "densenet", "efficientnet_b0", "gpt2", "llama",
    "maxvit_t", "mobilenet_v3", "resnet", "resnet18", "t5", "unet", "unet2d", "vgg", "vit_b_16",
}  # fmt: skip


def _zoo_models() -> list[Any]:
    paths = sorted((REPO / "examples" / "zoo").glob("*.aur"))
    return representative(paths, TRACED_BY_DEFAULT, lambda path: path.stem)


# a model traced at fewer layers per stage than published (the same blocks, fewer copies):
# (pattern, replacement, how many lines it must change). Two layers where a stack's first
# layer differs from the rest (T5's relative bias, a stage's downsampling first block).
SHALLOW: dict[str, list[tuple[str, str, int]]] = {
    "maxvit_t": [(r"^depths = .*$", "depths = [1, 1, 1, 1]", 1)],
    # the stages of 3 and 4 MBConv layers (before depth scaling) at two
    "efficientnet": [(r"^(    \(\d, \d, \d, \d+, \d+, )[3-9]\),$", r"\g<1>2),", 3)],
    "densenet": [(r"(DenseNet\(\d+, )\[[\d, ]+\]", r"\1[2, 2, 2, 2]", 4)],
    "resnet": [(r"(ResNet\(\w+, )\[[\d, ]+\]", r"\1[2, 2, 2, 2]", 8)],
    "convnext": [(r"(ConvNeXt\(\[[\d, ]+\], )\[[\d, ]+\]", r"\1[2, 2, 2, 2]", 3)],
    "llama": [(r"^n_layer = .*$", "n_layer = 2", 1)],
    "gpt2": [(r"^n_layer = .*$", "n_layer = 2", 1)],
    "bert": [(r"^n_layer = .*$", "n_layer = 2", 1)],
    "t5": [(r"^n_(decoder_)?layer = .*$", r"n_\1layer = 2", 2)],
    "clip": [(r"^(text|vision)_layers = .*$", r"\1_layers = 2", 2)],
}


def _covering(entries: list[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    """The smallest variants (fewest modules first) that between them build every module
    class any variant builds: the others repeat the same code at other sizes and counts."""
    built = []
    for entry in entries:
        with torch.device("meta"):
            modules = list(entry[2]().modules())[1:]  # not the variant's own class
        built.append((len(modules), {type(m) for m in modules}, entry))
    covered: set[type] = set()
    chosen = []
    for _, classes, entry in sorted(built, key=lambda item: item[0]):
        if not classes <= covered:
            covered |= classes
            chosen.append(entry)
    assert covered == set().union(*(classes for _, classes, _ in built))
    return chosen


@pytest.mark.parametrize("path", _zoo_models())
def test_every_zoo_model_compiles_with_fullgraph_and_no_graph_break(path: Path) -> None:
    """Each stand-alone model of the zoo (at its published size, on the meta device: no
    memory, no arithmetic) goes through TorchDynamo in training mode as one graph.
    ``torch._dynamo.explain`` is what ``torch.compile(fullgraph=True)`` checks, without a
    backend; inductor itself is tested on a small model (AURANE_LONG=1, below) and on CUDA
    by bench/cuda_training.py.

    A family file's variants share its block definitions and differ in sizes and counts:
    the suite traces the smallest variants that between them build every module class any
    variant builds (resnet18 and resnet50, vgg11 and vgg11_bn, efficientnet_b0, ...), and
    MaxViT with one layer per stage (each of its blocks still runs), and the transformer
    stacks and the ResNet, DenseNet, ConvNeXt and EfficientNet stages at two layers
    (SHALLOW: the first layer and one of the repeated ones, whose code differs);
    ``AURANE_LONG=1`` traces every variant at its published depth."""
    text = path.read_text(encoding="utf-8")
    if os.environ.get("AURANE_LONG") != "1":
        for pattern, replacement, lines in SHALLOW.get(path.stem, []):
            text, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
            assert count == lines, (pattern, count)
    result = compile_detailed(text, filename=path.name)
    module = types.ModuleType(path.stem)
    exec(compile(result.output, path.name, "exec"), module.__dict__)
    entries = []
    for name, graph in result.graphs.items():
        cls = getattr(module, name, None)
        parameters = inspect.signature(cls).parameters.values() if cls is not None else []
        if cls is None or any(p.default is inspect.Parameter.empty for p in parameters):
            continue  # a block built by another model, with arguments
        entries.append((name, graph, cls))
    if os.environ.get("AURANE_LONG") != "1":
        entries = _covering(entries)
    traced = 0
    for name, graph, cls in entries:
        torch._dynamo.reset()
        with torch.device("meta"):
            model = cls().train()
            # one tensor per input (T5's three); symbolic sizes (any length) at an example
            xs = [
                torch.zeros(
                    (2, *evaluate(value.shape[1:], example_sizes(value.shape[1:]))),
                    dtype=torch.int64 if value.dtype in ("int64", "int32") else torch.float32,
                )
                for value in graph.inputs
            ]
        explained = torch._dynamo.explain(model)(*xs)
        assert explained.graph_break_count == 0, (name, explained.break_reasons)
        assert explained.graph_count == 1, name
        traced += 1
    torch._dynamo.reset()
    assert traced >= 1


def test_compile_true_wraps_the_training_model_and_trains_like_eager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``compile = true`` compiles the model the loop trains (checkpoints keep the plain
    module's keys). Compiled with fullgraph and the eager backend, the run equals the
    uncompiled one bitwise."""
    source = BATCHED.format(batch=8, extra="    compile = true\n")
    assert "net = rt.distribute(torch.compile(model), device)  # compile = true" in (
        compile_text(source)
    )
    calls: list[nn.Module] = []
    real = torch.compile

    def compile_eagerly(model: nn.Module, **options: Any) -> Any:
        calls.append(model)
        return real(model, backend="eager", fullgraph=True, **options)

    monkeypatch.setattr(torch, "compile", compile_eagerly)
    compiled = _job(source)["train_net"]()
    torch._dynamo.reset()
    plain = _job(BATCHED.format(batch=8, extra=""))["train_net"]()
    assert calls == [compiled]
    assert compiled.state_dict().keys() == plain.state_dict().keys()  # no _orig_mod. prefix
    for key, value in plain.state_dict().items():
        assert torch.equal(compiled.state_dict()[key], value), key


@pytest.mark.skipif(os.environ.get("AURANE_LONG") != "1", reason="inductor: ~45 s cold (gcc)")
def test_compile_true_with_inductor_on_a_small_model() -> None:
    compiled = _job(BATCHED.format(batch=8, extra="    compile = true\n"))["train_net"]()
    torch._dynamo.reset()
    plain = _job(BATCHED.format(batch=8, extra=""))["train_net"]()
    for key, value in plain.state_dict().items():
        torch.testing.assert_close(compiled.state_dict()[key], value, rtol=1e-4, atol=1e-5)


def test_bf16_autocasts_on_the_cpu_and_fp16_falls_back_to_full_precision() -> None:
    seen: list[torch.dtype] = []

    def record(module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
        if module.training:
            seen.append(output.dtype)

    bf16 = BATCHED.format(batch=8, extra="").replace(
        'device = "cpu"', 'device = "cpu"\n    precision = "bf16"'
    )
    code = compile_text(bf16)
    assert "amp_dtype = torch.bfloat16" in code and "GradScaler" not in code
    namespace = _job(bf16)
    model = namespace["Net"]()
    model.dense1.register_forward_hook(record)
    trained = namespace["train_net"](model=model)
    assert set(seen) == {torch.bfloat16}  # the forward pass ran in bf16, on the CPU
    assert trained.dense1.weight.dtype == torch.float32  # the weights stay float32
    assert all(torch.isfinite(torch.tensor(row["loss"])) for row in trained.training_history)
    fp16 = bf16.replace('precision = "bf16"', 'precision = "fp16"')
    code = compile_text(fp16)
    assert 'amp_dtype = torch.float16 if device.type == "cuda" else None' in code
    assert 'scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype is not None)' in code
    seen.clear()
    namespace = _job(fp16)
    model = namespace["Net"]()
    model.dense1.register_forward_hook(record)
    namespace["train_net"](model=model)
    assert set(seen) == {torch.float32}


def test_fused_optimizers_on_cuda_where_torch_has_them() -> None:
    for name, fused in (("adam", True), ("adamw", True), ("sgd", True), ("rmsprop", False)):
        source = BATCHED.format(batch=8, extra="").replace("sgd(lr=0.5, momentum=0.9)", name)
        line = next(x for x in compile_text(source).splitlines() if "torch.optim." in x)
        assert ('fused=device.type == "cuda"' in compile_text(source)) is fused, (name, line)


WEIGHTS = """
dataset tokens:
    from aurane.data.SyntheticTokens
    size = 16
    sequence_length = 6
    vocab_size = 11
    batch = 4

model Lm:
    input_shape = (6,)
    input_dtype = int64
    def forward(ids):
        ids -> embedding(11, 8) -> layer_norm() -> dense(8).relu -> dense(11)

train Lm on tokens:
    epochs = 1
    optimizer = adamw(lr=0.01, weight_decay=0.1)
{extra}"""


def test_weight_decay_leaves_out_biases_norms_and_embeddings_by_default() -> None:
    from aurane.runtime import decay_groups

    model = nn.Sequential(nn.Embedding(11, 8), nn.LayerNorm(8), nn.Linear(8, 4), nn.BatchNorm1d(4))
    model.scale = nn.Parameter(torch.ones(4))  # a one-dimensional scale (layer scale)
    decayed, kept = decay_groups(model, 0.1)
    assert decayed == {"params": [model[2].weight], "weight_decay": 0.1}
    kept_ids = {id(p) for p in kept["params"]}
    assert kept["weight_decay"] == 0.0 and len(kept["params"]) == 7
    assert {
        id(model[0].weight),
        id(model[1].weight),
        id(model[2].bias),
        id(model.scale),
    } <= kept_ids
    # overridable: only biases left out; or nothing (torch's model.parameters())
    decayed, kept = decay_groups(model, 0.1, ["bias"])
    assert id(model[0].weight) in {id(p) for p in decayed["params"]}
    assert [id(p) for p in kept["params"]] == [
        id(model[1].bias),
        id(model[2].bias),
        id(model[3].bias),
    ]
    assert len(decay_groups(model, 0.1, [])) == 1
    # in a program: adamw's groups, and no_weight_decay = [] for every parameter
    code = compile_text(WEIGHTS.format(extra=""))
    assert "torch.optim.AdamW(rt.decay_groups(model, 0.1), lr=0.01" in code
    everything = compile_text(WEIGHTS.format(extra="    no_weight_decay = []\n"))
    assert "model.parameters(),\n        lr=0.01,\n        weight_decay=0.1," in everything
    only_bias = compile_text(WEIGHTS.format(extra='    no_weight_decay = ["bias"]\n'))
    assert 'rt.decay_groups(model, 0.1, ["bias"])' in only_bias
    bad = WEIGHTS.format(extra='    no_weight_decay = ["weights"]\n')
    errors = [d for d in front(bad, "bad.aur").diagnostics if d.is_error]
    assert [d.code for d in errors] == ["S013"] and "no_weight_decay" in errors[0].message


def test_the_program_trains_with_its_decay_groups(tmp_path: Path) -> None:
    extra = f'    checkpoint_dir = "{tmp_path / "ck"}"\n'
    _job(WEIGHTS.format(extra=extra), "lm")["train_lm"]()
    saved = torch.load(tmp_path / "ck" / "latest" / "last.pt", weights_only=True)
    groups = saved["optimizer"]["param_groups"]
    # dense1.weight, dense2.weight decayed; the embedding, the norm's two and the biases not
    assert [(g["weight_decay"], len(g["params"])) for g in groups] == [(0.1, 2), (0.0, 5)]
    assert saved["fingerprint"]["config"]["weight_decay_groups"] == ["bias", "norm", "embedding"]


def test_channels_last_for_image_models_and_refused_for_others() -> None:
    conv = """
dataset images:
    from aurane.data.SyntheticImages
    size = 8
    image_size = (3, 8, 8)
    num_classes = 2
    batch = 4

model Conv:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> conv2d(4, kernel=3, padding=1).relu -> flatten() -> dense(2)

train Conv on images:
    epochs = 1
    channels_last = true
"""
    code = compile_text(conv)
    assert "model = model.to(memory_format=torch.channels_last)  # channels_last = true" in code
    assert "inputs.to(device, non_blocking=True, memory_format=torch.channels_last)" in code
    model = _job(conv, "conv")["train_conv"]()
    weight = model.conv2d1.weight
    assert weight.is_contiguous(memory_format=torch.channels_last) and not weight.is_contiguous()
    flat = (
        "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 8\n    features = 4\n\n"
        "model M:\n    input_shape = (4,)\n    def forward(x):\n        x -> dense(1)\n\n"
        "train M on d:\n    loss = mse\n    channels_last = true\n"
    )
    errors = [d for d in front(flat, "flat.aur").diagnostics if d.is_error]
    assert [d.code for d in errors] == ["S130"]
    assert "channels_last is for image models" in errors[0].message
