"""Training-memory estimate for a model with a training job: parameters, gradients,
optimizer state and saved activations at a batch size. An estimate, not a measurement:
allocator overhead, workspace buffers, the CUDA context and temporaries are not counted.

Optimizer state per parameter follows ``torch.optim``: Adam/AdamW keep two moments (three
with ``amsgrad``), SGD one momentum buffer when ``momentum > 0``, RMSprop a square average
(plus a momentum buffer and a mean gradient when asked), Adagrad one sum, Adadelta two
accumulators. With ``mixed_precision = true`` (CUDA autocast) the outputs of matrix
products (dense, convolution, attention, recurrent layers) are half precision, layer norm
and softmax outputs stay float32, other ops follow their inputs; parameters, gradients and
optimizer state stay float32. Activations are every IR value, as saved for backward.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aurane.analysis.profile import ModelProfile, dtype_bytes
from aurane.ir.graph import Graph
from aurane.ops import family
from aurane.ops.rules import CONVOLUTION, FLOAT_DTYPES, is_int, numel
from aurane.records import field, record
from aurane.semantics import config
from aurane.semantics.values import NotLiteral, literal_value
from aurane.syntax import ast

LOW_PRECISION_OPS = frozenset(
    {
        "dense",
        *family(CONVOLUTION),
        "multihead_attention",
        "scaled_dot_product_attention",
        "lstm",
        "gru",
    }
)
FULL_PRECISION_OPS = frozenset({"layer_norm", "group_norm", "softmax", "log_softmax", "softplus"})
PROMOTING_OPS = frozenset({"add", "concat", "positional_encoding"})


@record(frozen=True)
class TrainJob:
    """What the profiler needs from one training job (standard or GAN side)."""

    model: str
    role: str  # "train", "generator" or "discriminator"
    dataset: str
    optimizer: str
    options: Mapping[str, Any] = field(default_factory=dict)
    mixed_precision: bool = False
    batch: int | None = None  # the dataset's loader batch
    low_dtype: str = "float16"  # autocast dtype (bfloat16 when the experiment says bf16)


@record(frozen=True)
class TrainingMemory:
    job: TrainJob
    batch_size: int
    parameter_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    activation_bytes: int
    states_per_parameter: int
    state_note: str
    activation_note: str

    @property
    def total_bytes(self) -> int:
        return (
            self.parameter_bytes
            + self.gradient_bytes
            + self.optimizer_bytes
            + self.activation_bytes
        )


def optimizer_states(name: str, options: Mapping[str, Any]) -> tuple[int, str]:
    """Per-parameter state tensors kept by ``torch.optim`` for optimizer ``name``."""
    key = _canonical_optimizer(name)
    if key in ("adam", "adamw"):
        if options.get("amsgrad"):
            return 3, f"{key} with amsgrad: two moments and the running maximum"
        return 2, f"{key}: first and second moments"
    if key == "sgd":
        if (options.get("momentum") or 0) > 0:
            return 1, "sgd with momentum: one momentum buffer"
        return 0, "plain sgd: no state"
    if key == "rmsprop":
        count = 1 + int((options.get("momentum") or 0) > 0) + int(bool(options.get("centered")))
        return count, "rmsprop: square average" + (" and more buffers" if count > 1 else "")
    if key == "adagrad":
        return 1, "adagrad: one running sum"
    if key == "adadelta":
        return 2, "adadelta: square average and accumulated update"
    return 2, f"{key}: unknown optimizer, two states guessed"


def training_jobs(program: ast.AuraneProgram) -> dict[str, TrainJob]:
    """The first training job of each model, read from the resolved program."""
    batches = {d.name: _int_field(d.fields, "batch", "batch_size") for d in program.datasets}
    low = "bfloat16" if _experiment_precision(program) == "bf16" else "float16"
    jobs: dict[str, TrainJob] = {}
    for stmt in program.statements:
        if isinstance(stmt, ast.Train):
            sides = [(stmt.model.id, "train", "optimizer")]
        elif isinstance(stmt, ast.TrainGan):
            sides = [
                (stmt.generator.id, "generator", "generator_optimizer"),
                (stmt.discriminator.id, "discriminator", "discriminator_optimizer"),
            ]
        else:
            continue
        amp = _bool_field(stmt.fields, "mixed_precision")
        for model, role, key in sides:
            name, options = _optimizer(stmt.fields, key)
            jobs.setdefault(
                model,
                TrainJob(
                    model,
                    role,
                    stmt.dataset.id,
                    name,
                    options,
                    amp,
                    batches.get(stmt.dataset.id),
                    low,
                ),
            )
    return jobs


def _find(fields: tuple[ast.Field, ...], *names: str) -> ast.Expr | None:
    return next((f.value for f in fields if f.name in names), None)


def _literal(expr: ast.Expr | None) -> Any:
    if expr is None:
        return None
    try:
        return literal_value(expr)
    except NotLiteral:
        return None


def _int_field(fields: tuple[ast.Field, ...], *names: str) -> int | None:
    value = _literal(_find(fields, *names))
    return value if is_int(value) else None


def _bool_field(fields: tuple[ast.Field, ...], name: str) -> bool:
    return _literal(_find(fields, name)) is True


def _experiment_precision(program: ast.AuraneProgram) -> str | None:
    for stmt in program.statements:
        if isinstance(stmt, ast.Experiment):
            value = _literal(_find(stmt.fields, "precision"))
            return value if isinstance(value, str) else None
    return None


def _optimizer(fields: tuple[ast.Field, ...], key: str) -> tuple[str, dict[str, Any]]:
    expr = _find(fields, key)
    if isinstance(expr, ast.Call):
        options = {kw.name: _literal(kw.value) for kw in expr.keywords}
        return _canonical_optimizer(expr.func), options
    if isinstance(expr, ast.Name | ast.String):
        name = expr.id if isinstance(expr, ast.Name) else expr.value
        return _canonical_optimizer(name), {}
    return "adam", {}  # the training default


def _canonical_optimizer(name: str) -> str:
    spec = config.OPTIMIZER_TABLE.get(name)
    return spec.name if spec else name


def amp_dtypes(graph: Graph, low: str = "float16") -> dict[str, str | None]:
    """Each value's dtype under CUDA autocast (see the module doc), blocks included."""
    dtypes: dict[str, str | None] = {graph.input: graph.input_value.dtype}
    _amp_walk(graph, dtypes, "", low)
    return dtypes


def _amp_walk(graph: Graph, dtypes: dict[str, str | None], prefix: str, low: str) -> None:
    values = graph.value_map
    for node in graph.nodes:
        key = prefix + node.output
        ins = [dtypes.get(prefix + name) for name in node.inputs]
        if node.subgraph is not None:
            sub = node.subgraph
            current = ins[0] if ins else None
            for copy in range(node.repeat):
                inner = f"{key}/{copy}/"
                dtypes[inner + sub.input] = current
                _amp_walk(sub, dtypes, inner, low)
                current = dtypes[inner + sub.output]
            dtypes[key] = current
            continue
        ir_dtype = values[node.output].dtype
        dtypes[key] = _amp_dtype(node.op, ir_dtype, ins, low)


def _amp_dtype(op: str, ir_dtype: str | None, ins: list[str | None], low: str) -> str | None:
    if ir_dtype is not None and ir_dtype not in FLOAT_DTYPES:
        return ir_dtype  # integer values are never autocast
    if op in LOW_PRECISION_OPS:
        return low
    if op in FULL_PRECISION_OPS:
        return "float32"
    floats = [d or "float32" for d in ins if d is None or d in FLOAT_DTYPES]
    if op in PROMOTING_OPS:
        if op == "positional_encoding":
            floats.append("float32")  # a float32 parameter is added
        return max(floats, key=dtype_bytes) if floats else ir_dtype
    if op == "embedding":
        return ir_dtype  # float32 weights, not autocast
    return floats[0] if floats else ir_dtype


def amp_activation_bytes(graph: Graph, low: str = "float16") -> int:
    """Per-sample bytes of every value (input included) under autocast."""
    return sum(count * dtype_bytes(dtype) for count, dtype in _amp_values(graph, low))


def _amp_values(graph: Graph, low: str) -> list[tuple[int, str | None]]:
    dtypes = amp_dtypes(graph, low)
    sizes: list[tuple[int, str | None]] = []
    _collect_sizes(graph, "", dtypes, sizes, top=True)
    return sizes


def _collect_sizes(
    graph: Graph,
    prefix: str,
    dtypes: Mapping[str, str | None],
    sizes: list[tuple[int, str | None]],
    top: bool,
) -> None:
    values = graph.value_map
    if top:
        sizes.append((_numel(values[graph.input].sample_shape), dtypes.get(graph.input)))
    for node in graph.nodes:
        key = prefix + node.output
        if node.subgraph is not None:
            for copy in range(node.repeat):
                _collect_sizes(node.subgraph, f"{key}/{copy}/", dtypes, sizes, top=False)
            continue
        sizes.append((_numel(values[node.output].sample_shape), dtypes.get(key)))


def _numel(shape: tuple[int, ...] | None) -> int:
    return 0 if shape is None else numel(shape)


def training_memory(
    graph: Graph, profile_: ModelProfile, job: TrainJob, batch_size: int | None = None
) -> TrainingMemory:
    """Training memory of ``graph`` under ``job``; ``batch_size`` defaults to the loader's."""
    batch = batch_size or job.batch or 1
    param_bytes = profile_.parameter_bytes
    grad_bytes = profile_.trainable_parameters * dtype_bytes(profile_.param_dtype)
    states, note = optimizer_states(job.optimizer, job.options)
    if job.mixed_precision:
        per_sample = amp_activation_bytes(graph, job.low_dtype)
        act_note = (
            f"mixed precision on CUDA: matrix products in {job.low_dtype}, "
            "norms and softmax in float32 (full precision on CPU)"
        )
    else:
        per_sample = profile_.activation_bytes_per_sample
        act_note = "each value at its dtype"
    if profile_.unknown_dtypes:
        act_note += "; unknown dtypes guessed at 4 bytes (float32)"
    return TrainingMemory(
        job=job,
        batch_size=batch,
        parameter_bytes=param_bytes,
        gradient_bytes=grad_bytes,
        optimizer_bytes=states * grad_bytes,
        activation_bytes=batch * per_sample,
        states_per_parameter=states,
        state_note=note,
        activation_note=act_note,
    )
