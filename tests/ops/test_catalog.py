"""The catalog against itself and against PyTorch: coverage, samples, FLOPs, error paths."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from aurane.codes import CODES
from aurane.ops import ALIASES, CATALOG, argument_errors, bind_defaults, context, lookup
from aurane.ops.rules import FLOAT_DTYPES
from aurane.ops.spec import InferContext, OpError, OpSpec, TensorType, tensor_positions

SAMPLES = [
    pytest.param(spec, args, shapes, id=f"{name}-{i}")
    for name, spec in CATALOG.items()
    if "composition" not in spec.kinds
    for i, (args, shapes) in enumerate(spec.samples)
]


def _input_dtype(spec: OpSpec) -> str:
    return "int64" if spec.input_dtypes == "int" else "float32"


def _dtypes(spec: OpSpec, count: int) -> tuple[str, ...]:
    """Per-input dtypes of a sample: the spec's ``sample_dtypes`` (masks, indices), else one."""
    given = tuple(spec.extra.get("sample_dtypes", ()))
    return (given + (_input_dtype(spec),) * count)[:count]


def _context(spec: OpSpec, args: dict[str, Any], shapes: tuple[tuple[int, ...], ...]) -> Any:
    return context(spec, args, shapes, dtypes=_dtypes(spec, len(shapes)), batch=2)


def _positional(args: dict[str, Any], shapes: tuple[tuple[int, ...], ...]) -> int:
    return len(shapes) - len(tensor_positions(args))


# -- coverage and structure -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_entry_has_samples_doc_and_valid_params(name: str) -> None:
    spec = CATALOG[name]
    assert spec.name == name
    assert spec.samples, f"{name} has no samples"
    assert spec.doc and "\n" not in spec.doc and spec.doc[0].islower()
    names = [p.name for p in spec.params]
    assert len(names) == len(set(names))
    for args, shapes in spec.samples:
        assert argument_errors(spec, args) == [], (name, args)
        bind_defaults(spec, args)
        count = _positional(args, shapes)
        assert spec.min_inputs <= count and (spec.variadic or count <= spec.max_inputs)  # type: ignore[operator]


def test_aliases_resolve_and_agree_with_specs() -> None:
    assert {a: s.name for s in CATALOG.values() for a in s.aliases} == ALIASES
    for alias, name in ALIASES.items():
        assert alias not in CATALOG
        assert lookup(alias) is CATALOG[name]
    assert lookup("linear") is CATALOG["dense"] and lookup("densee") is None


def test_required_operations_present() -> None:
    expected = {
        "dense conv1d conv2d batchnorm layer_norm embedding positional_encoding dropout flatten"
        " reshape maxpool avgpool global_avg_pool upsample add concat multihead_attention lstm"
        " gru relu gelu sigmoid tanh softmax log_softmax leaky_relu silu mish elu selu"
        " hardswish repeat scaled_dot_product_attention rotary_embedding"
        " multiply subtract divide matmul permute transpose unsqueeze squeeze select slice"
        " expand split chunk pad pixel_shuffle identity mean sum max amax parameter"
        " conv3d conv_transpose1d conv_transpose2d conv_transpose3d adaptive_avg_pool"
        " adaptive_max_pool global_max_pool group_norm instance_norm rms_norm drop_path"
        " softplus relu6 hardtanh hardsigmoid glu"
        " eq ne lt le gt ge logical_and logical_or logical_not where masked_fill to cumsum roll"
        " arange zeros ones full zeros_like ones_like full_like gather take_along_dim"
        " index_select lookup buffer abs log exp sin cos clamp cross_batch_matmul"
    }
    assert set(CATALOG) == set(next(iter(expected)).split())
    assert lookup("swish") is CATALOG["silu"]
    assert lookup("cast") is CATALOG["to"]


def test_activation_kinds_and_positional_params() -> None:
    base = {"activation", "parameter_free", "shape_preserving"}
    for spec in CATALOG.values():
        if spec.is_activation and spec.name == "glu":  # halves an axis; a suffix too
            assert spec.kinds == {"activation", "parameter_free"}
        elif spec.is_activation:
            assert base <= spec.kinds
            assert ("elementwise" in spec.kinds) == (spec.name not in ("softmax", "log_softmax"))
    assert [p.name for p in CATALOG["leaky_relu"].positional_params] == ["slope"]
    assert CATALOG["concat"].param("dim").keyword_only  # type: ignore[union-attr]
    assert CATALOG["reshape"].param("shape").variadic  # type: ignore[union-attr]
    assert CATALOG["repeat"].kinds == {"composition"}


def test_catalog_does_not_import_torch() -> None:
    code = "import sys, aurane.ops; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- samples against pytorch ------------------------------------------------------------------


def _run_twin(spec: OpSpec, args: dict[str, Any], shapes: tuple[tuple[int, ...], ...]) -> Any:
    torch = pytest.importorskip("torch")
    from .twins import TWINS

    plain = bind_defaults(spec, args).plain()
    module = TWINS[spec.name](plain, shapes)
    module.eval()
    if spec.input_dtypes == "int":
        high = plain["vocabulary"]
        xs = [torch.randint(0, high, (2, *s)) for s in shapes]
    else:
        xs = [
            _sample(torch, spec, plain, shapes, d, s)
            for d, s in zip(_dtypes(spec, len(shapes)), shapes, strict=True)
        ]
    return module, xs


def _sample(
    torch: Any, spec: OpSpec, plain: dict[str, Any], shapes: Any, dtype: str, shape: Any
) -> Any:
    """A random input: bool masks, indices valid for the first input, floats."""
    if dtype == "bool":
        return torch.rand(2, *shape) > 0.3
    if dtype == "int64":
        first = shapes[0]
        dim = plain.get("dim")
        high = first[dim - 1 if dim > 0 else dim] if isinstance(dim, int) else first[0]
        return torch.randint(0, high, (2, *shape))
    return torch.randn(2, *shape)


@pytest.mark.parametrize(("spec", "args", "shapes"), SAMPLES)
def test_sample_matches_pytorch(
    spec: OpSpec, args: dict[str, Any], shapes: tuple[tuple[int, ...], ...]
) -> None:
    torch = pytest.importorskip("torch")
    ctx = _context(spec, args, shapes)
    out = spec.infer(ctx)
    module, xs = _run_twin(spec, args, shapes)
    with torch.no_grad():
        y = module(*xs)
    assert tuple(y.shape) == (2, *out.shape)
    assert str(y.dtype).removeprefix("torch.") == out.dtype
    assert spec.parameters(ctx, out) == sum(p.numel() for p in module.parameters())
    assert spec.other_flops(ctx, out) >= 0


@pytest.mark.parametrize(("spec", "args", "shapes"), SAMPLES)
def test_macs_match_flop_counter(
    spec: OpSpec, args: dict[str, Any], shapes: tuple[tuple[int, ...], ...]
) -> None:
    """FLOPs == 2 * macs * batch, as torch.utils.flop_counter counts them.

    Attention is counted with need_weights=True (explicit bmm products, which the counter
    sees); fused LSTM/GRU kernels are invisible to it, so they are unrolled into cells.
    """
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    from .twins import Attention, unrolled_flops

    ctx = _context(spec, args, shapes)
    out = spec.infer(ctx)
    macs = spec.macs(ctx, out)
    if spec.name in ("lstm", "gru"):
        cls = torch.nn.LSTM if spec.name == "lstm" else torch.nn.GRU
        assert unrolled_flops(cls, bind_defaults(spec, args).plain(), shapes[0]) == 2 * macs
        return
    module, xs = _run_twin(spec, args, shapes)
    if spec.name == "multihead_attention":
        module = Attention(
            bind_defaults(spec, args).plain(), shapes, need_weights=True
        )  # train: no fused path
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        module(*xs)
    assert counter.get_total_flops() == 2 * macs * 2


def test_flop_counter_misses_fused_lstm() -> None:
    """Documents why recurrent MACs are checked on an unrolled twin."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    lstm = torch.nn.LSTM(4, 6, batch_first=True)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        lstm(torch.randn(2, 5, 4))
    spec = CATALOG["lstm"]
    ctx = context(spec, {"hidden": 6}, ((5, 4),))
    assert counter.get_total_flops() < 2 * 2 * spec.macs(ctx, spec.infer(ctx))


# -- error paths ------------------------------------------------------------------------------

ERRORS = [
    # (op, args, shapes, dtype, code, blame, words in the message)
    (
        "conv2d",
        {"channels": 8},
        [(8,)],
        None,
        "T002",
        None,
        "conv2d expects a (channels, height, width) input, got shape (8,)",
    ),
    ("conv1d", {"channels": 8}, [(3, 4, 4)], None, "T002", None, "(channels, length)"),
    ("conv2d", {"channels": 8, "kernel": 5}, [(3, 4, 4)], None, "T005", "kernel", "kernel"),
    (
        "conv1d",
        {"channels": 2, "kernel": 3, "dilation": 3},
        [(1, 6)],
        None,
        "T005",
        "kernel",
        "kernel",
    ),
    ("conv2d", {"channels": 8, "groups": 2}, [(3, 8, 8)], None, "T007", "groups", "input channels"),
    (
        "conv2d",
        {"channels": 3, "groups": 2},
        [(4, 8, 8)],
        None,
        "T007",
        "groups",
        "output channels",
    ),
    (
        "conv2d",
        {"channels": 4, "padding": "same", "stride": 2},
        [(3, 8, 8)],
        None,
        "S004",
        "padding",
        "stride",
    ),
    ("conv2d", {"channels": 4}, [(3, 8, 8)], "int64", "T003", None, "dtype"),
    ("dense", {"features": 4}, [()], None, "T002", None, "dense expects"),
    ("dense", {"features": 4}, [(8,)], "int64", "T003", None, "floating"),
    (
        "embedding",
        {"vocabulary": 100, "width": 8},
        [(16,)],
        "float32",
        "T003",
        None,
        "integer input dtype",
    ),
    (
        "embedding",
        {"vocabulary": 10, "width": 4, "padding_idx": 10},
        [(5,)],
        "int64",
        "S004",
        "padding_idx",
        "padding_idx",
    ),
    ("positional_encoding", {"max_len": 32}, [(40, 8)], None, "T005", "max_len", "max_len"),
    ("positional_encoding", {"max_len": 32}, [(8,)], None, "T002", None, "(sequence, features)"),
    ("layer_norm", {}, [()], None, "T002", None, "layer_norm"),
    ("batchnorm", {}, [(1, 2, 3, 4, 5)], None, "T002", None, "batchnorm"),
    ("dropout", {"p": 0.1}, [(4,)], "int64", "T003", None, "dtype"),
    ("multihead_attention", {"heads": 4, "dim": 30}, [(10, 30)], None, "T007", "heads", "heads"),
    (
        "multihead_attention",
        {"heads": 4, "dim": 32},
        [(10, 30)],
        None,
        "T001",
        "dim",
        "feature size 30",
    ),
    (
        "multihead_attention",
        {"heads": 2, "dim": 30},
        [(30,)],
        None,
        "T002",
        None,
        "(sequence, features)",
    ),
    ("lstm", {"hidden": 8, "dropout": 0.2}, [(5, 4)], None, "S004", "dropout", "num_layers"),
    ("gru", {"hidden": 8, "dropout": 0.5}, [(5, 4)], None, "S004", "dropout", "num_layers"),
    ("gru", {"hidden": 8}, [(5,)], None, "T002", None, "(sequence, features)"),
    ("reshape", {"shape": (4, -1)}, [(6,)], None, "T006", None, "reshape"),
    ("reshape", {"shape": (2, 2)}, [(5,)], None, "T006", None, "element"),
    ("flatten", {}, [()], None, "T002", None, "flatten"),
    ("roll", {"shifts": (1, 2), "dims": ()}, [(3, 4)], None, "T002", "shifts", "one shift"),
    ("roll", {"shifts": (1, 2), "dims": (1,)}, [(3, 4)], None, "T002", "shifts", "2 shifts"),
    ("maxpool", {"kernel": 5}, [(3, 4, 4)], None, "T005", "kernel", "kernel"),
    ("maxpool", {"kernel": 3, "padding": 2}, [(3, 8, 8)], None, "S004", "padding", "half"),
    ("maxpool", {"kernel": (2, 2)}, [(3, 8)], None, "T002", "kernel", "spatial"),
    ("avgpool", {"kernel": 2}, [(8,)], None, "T002", None, "(channels, length)"),
    ("global_avg_pool", {}, [(8,)], None, "T002", None, "(channels, *spatial)"),
    ("upsample", {}, [(3, 4, 4)], None, "S005", None, "neither"),
    ("upsample", {"size": 8, "scale_factor": 2}, [(3, 4, 4)], None, "S004", "scale_factor", "both"),
    (
        "upsample",
        {"scale_factor": 2, "align_corners": True},
        [(3, 4, 4)],
        None,
        "S004",
        "align_corners",
        "linear",
    ),
    ("upsample", {"scale_factor": 2, "mode": "bilinear"}, [(3, 4)], None, "T002", None, "bilinear"),
    ("upsample", {"size": (4, 4, 4)}, [(3, 4, 4)], None, "T002", "size", "size"),
    ("upsample", {"scale_factor": 0.1}, [(3, 4, 4)], None, "T005", "scale_factor", "empty"),
    ("concat", {"dim": 0}, [(4,), (4,)], None, "T004", "dim", "batch"),
    ("concat", {"dim": -2}, [(4,), (4,)], None, "T004", "dim", "batch"),
    ("concat", {"dim": 3}, [(4,), (4,)], None, "T004", "dim", "out of range"),
    ("concat", {"dim": -1}, [(2, 3), (3, 3)], None, "T001", None, "other axes"),
    ("concat", {}, [(2, 3), (3,)], None, "T002", None, "rank"),
    ("softmax", {"dim": 0}, [(4,)], None, "T004", "dim", "batch"),
    ("log_softmax", {"dim": 3}, [(4,)], None, "T004", "dim", "range"),
    ("relu", {}, [(4,)], "int64", "T003", None, "relu"),
]


@pytest.mark.parametrize(
    ("op", "args", "shapes", "dtype", "code", "blame", "words"),
    ERRORS,
    ids=[f"{e[0]}-{e[4]}-{i}" for i, e in enumerate(ERRORS)],
)
def test_error_paths(
    op: str,
    args: dict[str, Any],
    shapes: list[tuple[int, ...]],
    dtype: str | None,
    code: str,
    blame: str | None,
    words: str,
) -> None:
    spec = CATALOG[op]
    assert argument_errors(spec, args) == []
    with pytest.raises(OpError) as info:
        spec.infer(context(spec, args, shapes, dtype))
    error = info.value
    assert (error.code, error.blame) == (code, blame)
    assert code in CODES
    assert words in error.message and error.message == error.message.lower()
    assert error.hint


def test_add_mismatch_labels_each_input() -> None:
    spec = CATALOG["add"]
    with pytest.raises(OpError) as info:
        spec.infer(context(spec, {}, [(4,), (2,)]))
    assert info.value.code == "T001" and "shape" in info.value.message
    assert info.value.input_notes == ((0, "(4,)"), (1, "(2,)"))


@pytest.mark.parametrize("op", ["add", "concat"])
def test_merge_dtypes_must_agree(op: str) -> None:
    spec = CATALOG[op]
    inputs = (TensorType((4,), "float32"), TensorType((4,), "float64"), TensorType((4,), None))
    with pytest.raises(OpError) as info:
        spec.infer(InferContext(bind_defaults(spec, {}), inputs, "float32"))
    assert info.value.code == "T003"
    ok = (TensorType((4,), None), TensorType((4,), "int64"))
    assert spec.infer(InferContext(bind_defaults(spec, {}), ok, "float32")).dtype == "int64"


def test_dtypes_flow() -> None:
    emb = CATALOG["embedding"]
    out = emb.infer(context(emb, {"vocabulary": 5, "width": 3}, [(4,)], None, "float64"))
    assert out == TensorType((4, 3), "float64")
    dense = CATALOG["dense"]
    for dtype in (*sorted(FLOAT_DTYPES), None):
        params = dtype or "float32"  # a model's parameters take its floating input dtype
        assert dense.infer(context(dense, {"features": 2}, [(3,)], dtype, params)).dtype == dtype
    flat = CATALOG["flatten"]
    assert flat.infer(context(flat, {}, [(2, 3)], "int64")) == TensorType((6,), "int64")


ARGUMENT_ERRORS = [
    ("dense", {"features": 0}),
    ("dense", {"features": 2.5}),
    ("dropout", {"p": 1.0}),
    ("dropout", {"p": -0.1}),
    ("conv2d", {"channels": 4, "stride": 0}),
    ("conv2d", {"channels": 4, "kernel": (3, 0)}),
    ("conv2d", {"channels": 4, "kernel": (3, 3, 3)}),
    ("conv2d", {"channels": 4, "padding": "full"}),
    ("conv1d", {"channels": 4, "padding": -1}),
    ("conv1d", {"channels": 4, "groups": 0}),
    ("multihead_attention", {"heads": 0, "dim": 8}),
    ("multihead_attention", {"heads": 2, "dim": 8, "dropout": 1.5}),
    ("lstm", {"hidden": 4, "num_layers": 0}),
    ("gru", {"hidden": 0}),
    ("reshape", {"shape": (-1, -1)}),
    ("reshape", {"shape": (0, 2)}),
    ("upsample", {"scale_factor": 2, "mode": "area"}),
    ("upsample", {"scale_factor": -1.0}),
    ("upsample", {"size": 0}),
    ("maxpool", {"kernel": 0}),
    ("avgpool", {"kernel": 2, "padding": -1}),
    ("batchnorm", {"momentum": 2.0}),
    ("layer_norm", {"eps": 0}),
    ("embedding", {"vocabulary": 10, "width": 4, "max_norm": 0.0}),
    ("positional_encoding", {"max_len": 0}),
    ("repeat", {"block": "B", "times": 0}),
]


@pytest.mark.parametrize(("op", "args"), ARGUMENT_ERRORS, ids=[e[0] for e in ARGUMENT_ERRORS])
def test_argument_checks(op: str, args: dict[str, Any]) -> None:
    errors = argument_errors(CATALOG[op], args)
    assert len(errors) == 1
    name, message = errors[0]
    assert name in args and message == message.lower()


def test_dtype_promotion_is_torchs() -> None:
    """``rules.promote`` equals torch.promote_types wherever it answers; two different float
    precisions are refused (T003), and the arithmetic ops read it."""
    torch = pytest.importorskip("torch")
    from aurane.ops.rules import promote

    kinds = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32"]
    kinds.append("float64")
    for a in kinds:
        for b in kinds:
            types = (TensorType((2,), a), TensorType((2,), b))
            if a != b and a in FLOAT_DTYPES and b in FLOAT_DTYPES:
                with pytest.raises(OpError) as info:
                    promote("add", types)
                assert info.value.code == "T003"
                continue
            expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert promote("add", types) == str(expected).removeprefix("torch."), (a, b)
    multiply = CATALOG["multiply"]
    ctx = context(multiply, {}, [(3,), (3,)], dtypes=["int64", "float32"])
    assert multiply.infer(ctx).dtype == "float32"
    ctx = context(multiply, {}, [(3,), (3,)], dtypes=["bool", "int32"])
    assert multiply.infer(ctx).dtype == "int32"
    divide = CATALOG["divide"]
    assert divide.infer(context(divide, {}, [(3,), (3,)], dtypes=["int64", "int64"])).dtype == (
        "float32"
    )
