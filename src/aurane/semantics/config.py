"""One catalog of configuration concepts: losses, optimizers, schedulers, metrics, callbacks,
transforms, dtypes, and the fields of experiment, dataset, model, train and train_gan blocks.

Every stage reads these tables: constant resolution (which fields take catalog names rather
than constants), semantic checks (names, keyword arguments, ranges), code generation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from typing import Any, Protocol, TypeVar

from aurane.ops.rules import FLOAT_DTYPES as FLOAT_DTYPES
from aurane.ops.rules import is_number
from aurane.ops.rules import positive_number as positive
from aurane.ops.rules import probability as unit_interval_open
from aurane.ops.spec import REQUIRED, ArgKind, Param
from aurane.records import record
from aurane.syntax import ast

# ---------------------------------------------------------------- range checks
# positive and unit_interval_open ([0, 1)) are the operation catalog's checks


def non_negative(value: Any) -> str | None:
    return None if value >= 0 else "must not be negative"


def fraction(value: Any) -> str | None:
    return None if 0 <= value <= 1 else "must be in [0, 1]"


def open_unit(value: Any) -> str | None:
    return None if 0 < value < 1 else "must be in (0, 1)"


def betas_check(value: Any) -> str | None:
    if not (isinstance(value, tuple) and len(value) == 2):
        return "must be a pair (beta1, beta2)"
    if not all(map(is_number, value)):
        return "must be a pair of numbers"
    return None if all(0 <= v < 1 for v in value) else "each beta must be in [0, 1)"


INT64_MAX = 2**63 - 1


def within_int64(value: Any) -> str | None:
    """A shape whose element count (and so every size computed from it) torch can index."""
    if isinstance(value, tuple) and all(isinstance(d, int) for d in value):
        total = 1
        for d in value:
            total *= d
        if total > INT64_MAX:
            return f"has {total} elements, more than torch's int64 sizes allow (2**63 - 1)"
    return None


def number_list(value: Any) -> str | None:
    ok = isinstance(value, tuple | list) and all(map(is_number, value))
    return None if ok else "must be a list of numbers"


# ---------------------------------------------------------------- option catalogs


# A cross-argument rule: given the bound values (defaults filled in), None when they agree,
# else (the argument to point at, the problem). Rules mirror what torch checks when it builds
# or steps the object (tests/semantics/test_config_torch.py draws argument sets against it).
Rule = Callable[[dict[str, Any]], "tuple[str, str] | None"]


@record(frozen=True, slots=True)
class OptionSpec:
    """A catalog entry configured by a call: ``adam(lr=1e-3)``, ``step_lr(step_size=2)``."""

    name: str
    params: tuple[Param, ...]
    doc: str
    aliases: tuple[str, ...] = ()
    torch_name: str = ""
    rules: tuple[Rule, ...] = ()


def _nesterov(v: dict[str, Any]) -> tuple[str, str] | None:
    if v["nesterov"] and (v["momentum"] <= 0 or v["dampening"] != 0):
        return "nesterov", "needs momentum > 0 and dampening = 0 (as torch.optim.SGD checks)"
    return None


def _warmup_within_max(v: dict[str, Any]) -> tuple[str, str] | None:
    if v["warmup_steps"] is not None and v["warmup"] is not None:
        return "warmup", "and warmup_steps both give the warmup: keep one"
    both = v["warmup_steps"] is not None and v["max_steps"] is not None
    if both and v["warmup_steps"] > v["max_steps"]:
        return "warmup_steps", f"({v['warmup_steps']}) must not exceed max_steps ({v['max_steps']})"
    return None


def _p(name: str, kind: ArgKind, default: Any = REQUIRED, check: Any = None, **kw: Any) -> Param:
    return Param(name, kind, default, check, keyword_only=True, **kw)


_LR = _p("lr", ArgKind.FLOAT, None, non_negative)
_WD = _p("weight_decay", ArgKind.FLOAT, 0.0, non_negative)
_EPS = _p("eps", ArgKind.FLOAT, 1e-8, positive)
_WEIGHT = _p("weight", ArgKind.ANY, None, number_list)
_IGNORE = _p("ignore_index", ArgKind.INT, -100)

LOSSES: tuple[OptionSpec, ...] = (
    OptionSpec(
        "cross_entropy",
        (_WEIGHT, _IGNORE, _p("label_smoothing", ArgKind.FLOAT, 0.0, unit_interval_open)),
        "cross entropy on logits",
        ("cross_entropy_loss",),
        "CrossEntropyLoss",
    ),
    OptionSpec(
        "cross_entropy_with_label_smoothing",
        (_p("smoothing", ArgKind.FLOAT, 0.1, unit_interval_open), _WEIGHT, _IGNORE),
        "cross entropy with label smoothing",
        (),
        "CrossEntropyLoss",
    ),
    OptionSpec("mse", (), "mean squared error", ("mse_loss",), "MSELoss"),
    OptionSpec("mae", (), "mean absolute error", ("l1_loss",), "L1Loss"),
    OptionSpec(
        "huber",
        (_p("delta", ArgKind.FLOAT, 1.0, positive),),
        "Huber loss",
        ("huber_loss",),
        "HuberLoss",
    ),
    OptionSpec(
        "bce",
        (_WEIGHT,),
        "binary cross entropy on probabilities",
        ("bce_loss", "binary_cross_entropy"),
        "BCELoss",
    ),
    OptionSpec(
        "bce_with_logits",
        (_WEIGHT, _p("pos_weight", ArgKind.ANY, None, number_list)),
        "binary cross entropy on logits",
        ("bce_with_logits_loss",),
        "BCEWithLogitsLoss",
    ),
    OptionSpec(
        "nll",
        (_WEIGHT, _IGNORE),
        "negative log likelihood on log-probabilities",
        ("nll_loss",),
        "NLLLoss",
    ),
)

OPTIMIZERS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "adam",
        (
            _LR,
            _p("betas", ArgKind.ANY, (0.9, 0.999), betas_check),
            _EPS,
            _WD,
            _p("amsgrad", ArgKind.BOOL, False),
        ),
        "Adam",
        (),
        "Adam",
    ),
    OptionSpec(
        "adamw",
        (
            _LR,
            _p("betas", ArgKind.ANY, (0.9, 0.999), betas_check),
            _EPS,
            _p("weight_decay", ArgKind.FLOAT, 0.01, non_negative),
            _p("amsgrad", ArgKind.BOOL, False),
        ),
        "AdamW",
        (),
        "AdamW",
    ),
    OptionSpec(
        "sgd",
        (
            _LR,
            _p("momentum", ArgKind.FLOAT, 0.0, non_negative),
            _p("dampening", ArgKind.FLOAT, 0.0, non_negative),
            _WD,
            _p("nesterov", ArgKind.BOOL, False),
        ),
        "stochastic gradient descent",
        (),
        "SGD",
        (_nesterov,),
    ),
    OptionSpec(
        "rmsprop",
        (
            _LR,
            _p("alpha", ArgKind.FLOAT, 0.99, unit_interval_open),
            _EPS,
            _WD,
            _p("momentum", ArgKind.FLOAT, 0.0, non_negative),
            _p("centered", ArgKind.BOOL, False),
        ),
        "RMSprop",
        (),
        "RMSprop",
    ),
    OptionSpec(
        "adagrad",
        (
            _LR,
            _p("lr_decay", ArgKind.FLOAT, 0.0, non_negative),
            _WD,
            _p("initial_accumulator_value", ArgKind.FLOAT, 0.0, non_negative),
            _p("eps", ArgKind.FLOAT, 1e-10, positive),
        ),
        "Adagrad",
        (),
        "Adagrad",
    ),
    OptionSpec(
        "adadelta",
        (
            _LR,
            _p("rho", ArgKind.FLOAT, 0.9, unit_interval_open),
            _p("eps", ArgKind.FLOAT, 1e-6, positive),
            _WD,
        ),
        "Adadelta",
        (),
        "Adadelta",
    ),
)

SCHEDULERS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "step_lr",
        (
            _p("step_size", ArgKind.INT, REQUIRED, positive),
            _p("gamma", ArgKind.FLOAT, 0.1, positive),
        ),
        "multiply lr by gamma every step_size epochs",
        (),
        "StepLR",
    ),
    OptionSpec(
        "exponential_lr",
        (_p("gamma", ArgKind.FLOAT, REQUIRED, positive),),
        "multiply lr by gamma every epoch",
        (),
        "ExponentialLR",
    ),
    OptionSpec(
        "cosine_annealing",
        (
            _p("T_max", ArgKind.OPTIONAL_INT, None, positive),
            _p("eta_min", ArgKind.FLOAT, 0.0, non_negative),
        ),
        "cosine annealing over T_max epochs (default: epochs)",
        (),
        "CosineAnnealingLR",
    ),
    OptionSpec(
        "reduce_lr_on_plateau",
        (
            _p("mode", ArgKind.STR, "min", choices=("min", "max")),
            _p("factor", ArgKind.FLOAT, 0.1, open_unit),
            _p("patience", ArgKind.INT, 10, non_negative),
            _p("threshold", ArgKind.FLOAT, 1e-4, non_negative),
            _p("cooldown", ArgKind.INT, 0, non_negative),
            _p("min_lr", ArgKind.FLOAT, 0.0, non_negative),
        ),
        "reduce lr when the monitored loss stops improving",
        ("reduce_on_plateau",),
        "ReduceLROnPlateau",
    ),
    OptionSpec(
        "warmup_cosine",
        (
            _p("warmup_steps", ArgKind.OPTIONAL_INT, None, non_negative),
            _p("warmup", ArgKind.FLOAT, None, fraction),
            _p("max_steps", ArgKind.OPTIONAL_INT, None, positive),
            _p("min_lr", ArgKind.FLOAT, 0.0, non_negative),
        ),
        "linear warmup (warmup_steps, or warmup: a fraction of the run) then cosine decay to "
        "min_lr at max_steps (default: the run's optimizer steps), stepped per optimizer step",
        (),
        "LambdaLR",
        (_warmup_within_max,),
    ),
)

CALLBACKS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "early_stopping",
        (
            _p("patience", ArgKind.INT, 3, non_negative),
            _p("min_delta", ArgKind.FLOAT, 0.0, non_negative),
        ),
        "stop when validation loss stops improving",
    ),
    OptionSpec(
        "checkpoint",
        (
            _p("checkpoint_dir", ArgKind.STR, "./checkpoints"),
            _p("checkpoint_every", ArgKind.OPTIONAL_INT, None),
            _p("save_best", ArgKind.BOOL, False),
        ),
        "write checkpoints",
    ),
)

METRICS: tuple[str, ...] = (
    "accuracy",
    "perplexity",
    "mse",
    "mae",
    "precision",
    "recall",
    "f1",
    "auc",
    "binary_accuracy",
)
METRIC_ALIASES = {"f1_score": "f1"}
# what each metric measures (docs/reference.md; a test requires an entry for every metric)
METRIC_DOCS: dict[str, str] = {
    "accuracy": "fraction predicted right (argmax; binary tasks: thresholded)",
    "perplexity": "exp of the epoch's mean loss",
    "mse": "mean squared error",
    "mae": "mean absolute error",
    "precision": "macro precision over the classes (binary: class 1; zero division 0)",
    "recall": "macro recall over the classes (binary: class 1; zero division 0)",
    "f1": "macro F1 over the classes (binary: class 1; zero division 0)",
    "auc": "area under the ROC curve (several classes: one-vs-rest macro on softmax)",
    "binary_accuracy": "binary tasks: logits thresholded at 0, probabilities at 0.5",
}
# what a train_gan job logs every epoch; its `metrics` field names them (upstream 3.0's
# examples list all four), and each is in the history whichever are named
GAN_METRICS: tuple[str, ...] = ("generator_loss", "discriminator_loss", "real_score", "fake_score")
TOPK_METRIC = r"top([1-9][0-9]*)_accuracy"  # compiled on first use (re's cache)

TRANSFORMS: tuple[str, ...] = (
    "Compose",
    "ToTensor",
    "PILToTensor",
    "Normalize",
    "Resize",
    "CenterCrop",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "RandomResizedCrop",
    "ColorJitter",
    "Grayscale",
    "Pad",
    "RandomRotation",
)

# what input_dtype may name; FLOAT_DTYPES (the floating ones) comes from the operation rules
DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")
# the integer dtypes input_dtype may name (operations accept more: ops.rules.INT_DTYPES)
INPUT_INT_DTYPES = frozenset({"int32", "int64"})

GAN_LOSSES = frozenset({"bce", "bce_with_logits", "mse"})


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...


_SpecT = TypeVar("_SpecT", bound=_Named)


def _index(specs: tuple[_SpecT, ...]) -> dict[str, _SpecT]:
    """Specs by name and by each alias."""
    table: dict[str, _SpecT] = {}
    for spec in specs:
        table[spec.name] = spec
        for alias in spec.aliases:
            table[alias] = spec
    return table


LOSS_TABLE = _index(LOSSES)
OPTIMIZER_TABLE = _index(OPTIMIZERS)
SCHEDULER_TABLE = _index(SCHEDULERS)
CALLBACK_TABLE = _index(CALLBACKS)


def option_name(expr: ast.Expr) -> str | None:
    """The catalog name an option field gives (``adam``, ``"adam"``, ``adam(lr=...)``), or None."""
    match expr:
        case ast.Name(id=name) | ast.String(value=name) | ast.Call(func=name):
            return name
    return None


def canonical_loss(name: str | None) -> str | None:
    """The catalog name of the loss ``name`` (an alias resolved); None when it is no loss."""
    spec = LOSS_TABLE.get(name) if name is not None else None
    return spec.name if spec is not None else None


def canonical_metric(name: str) -> str | None:
    name = METRIC_ALIASES.get(name, name)
    if name in METRICS or re.fullmatch(TOPK_METRIC, name):
        return name
    return None


# ---------------------------------------------------------------- block fields


class FieldKind(Enum):
    INT = "integer"
    FLOAT = "number"
    BOOL = "boolean"
    STR = "string"
    SHAPE = "tuple of positive integers"
    PAIR = "pair of numbers"
    DTYPE = "dtype"
    LOSS = "loss"
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    METRICS = "list of metrics"
    GAN_METRICS = "list of GAN metrics"
    CALLBACKS = "list of callbacks"
    DATASET = "dataset name"
    TRANSFORM = "transform"
    TRANSFORMS = "list of transforms"
    FIELD_NAME = "name of a data field or model output"
    FEED = "dict of model inputs to data fields"
    ANY = "value"

    @property
    def takes_catalog_names(self) -> bool:
        """Bare names in these fields are catalog entries or references, not constants."""
        return self in _CATALOG_KINDS


_CATALOG_KINDS = frozenset(
    {
        FieldKind.DTYPE,
        FieldKind.LOSS,
        FieldKind.OPTIMIZER,
        FieldKind.SCHEDULER,
        FieldKind.METRICS,
        FieldKind.GAN_METRICS,
        FieldKind.CALLBACKS,
        FieldKind.DATASET,
        FieldKind.TRANSFORM,
        FieldKind.TRANSFORMS,
        FieldKind.FIELD_NAME,
        FieldKind.FEED,
    }
)


@record(frozen=True, slots=True)
class FieldSpec:
    name: str
    kind: FieldKind
    check: Any = None
    choices: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = ()
    doc: str = ""


def _seed(value: Any) -> str | None:
    return None if 0 <= value < 2**64 else "must be a non-negative 64-bit integer"


DEVICE_PATTERN = r"cpu|cuda(:[0-9]+)?|mps|auto"  # compiled on first use (re's cache)


def _device(value: Any) -> str | None:
    ok = re.fullmatch(DEVICE_PATTERN, value)
    return None if ok else 'must be "cpu", "cuda", "cuda:N", "mps" or "auto"'


EXPERIMENT_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("seed", FieldKind.INT, _seed, doc="random seed for Python, NumPy and torch"),
    FieldSpec("device", FieldKind.STR, _device, doc="where training runs"),
    FieldSpec(
        "backend", FieldKind.STR, choices=("torch",), doc="code generation target (only torch)"
    ),
    FieldSpec(
        "precision",
        FieldKind.STR,
        choices=("fp32", "fp16", "bf16"),
        doc='fp32, or autocast: "bf16" everywhere, "fp16" with a gradient scaler on CUDA',
    ),
)

MODEL_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "input_shape",
        FieldKind.SHAPE,
        within_int64,
        doc="per-sample input shape, batch excluded",
    ),
    FieldSpec(
        "input_dtype", FieldKind.DTYPE, doc="input dtype; floating dtypes also set parameters"
    ),
    FieldSpec(
        "input_padding_idx",
        FieldKind.INT,
        non_negative,
        doc="token id whose positions are masked as padding in attention",
    ),
)

LOADER_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("batch", FieldKind.INT, positive, aliases=("batch_size",), doc="samples per batch"),
    FieldSpec("shuffle", FieldKind.BOOL, doc="reshuffle the samples every epoch"),
    FieldSpec(
        "num_workers",
        FieldKind.INT,
        non_negative,
        doc="DataLoader worker processes (0: load in the training process)",
    ),
    FieldSpec(
        "pin_memory", FieldKind.BOOL, doc="page-locked host memory for faster copies to the GPU"
    ),
    FieldSpec("drop_last", FieldKind.BOOL, doc="drop the last incomplete batch"),
)

DATASET_FIELDS: tuple[FieldSpec, ...] = (
    *LOADER_FIELDS,
    FieldSpec("transform", FieldKind.TRANSFORM, doc="torchvision transform applied to each input"),
    FieldSpec(
        "transforms",
        FieldKind.TRANSFORMS,
        doc="torchvision transforms composed in order on each input",
    ),
    FieldSpec(
        "target_transform", FieldKind.TRANSFORM, doc="torchvision transform applied to each target"
    ),
    FieldSpec(
        "download", FieldKind.BOOL, doc="let torchvision download the dataset (never without it)"
    ),
    FieldSpec("train", FieldKind.BOOL, doc="torchvision's train split (false: its test split)"),
)

_COMMON_TRAIN: tuple[FieldSpec, ...] = (
    FieldSpec("epochs", FieldKind.INT, positive, doc="passes over the training data"),
    FieldSpec(
        "lr",
        FieldKind.FLOAT,
        positive,
        aliases=("learning_rate",),
        doc="learning rate (the optimizer call's own lr= wins)",
    ),
    FieldSpec(
        "gradient_clip",
        FieldKind.FLOAT,
        positive,
        aliases=("gradient_clipping",),
        doc="clip the gradients' global norm to this value",
    ),
    FieldSpec(
        "checkpoint_dir",
        FieldKind.STR,
        doc="folder of the job's run folders (last.pt, best.pt, history)",
    ),
    FieldSpec("checkpoint_every", FieldKind.INT, positive, doc="keep epoch_NNNN.pt every N epochs"),
    FieldSpec(
        "save_best",
        FieldKind.BOOL,
        doc="keep best.pt (lowest validation loss; GAN jobs: lowest generator loss)",
    ),
    # a step row (epoch, step, running loss, lr) in the history files every N steps
    FieldSpec(
        "log_every",
        FieldKind.INT,
        positive,
        aliases=("log_every_steps",),
        doc="a step row (epoch, step, running loss, lr) in the history every N steps",
    ),
)


# ``strategy``: how a train job runs under torchrun (``aurane plan`` names the same)
STRATEGIES = ("ddp", "fsdp")

# what weight decay leaves out by default (aurane.runtime.optim.NO_DECAY_DEFAULT)
NO_WEIGHT_DECAY_DEFAULT = ("bias", "norm", "embedding")


def _no_decay(value: Any) -> str | None:
    kinds = NO_WEIGHT_DECAY_DEFAULT
    if isinstance(value, tuple | list) and all(item in kinds for item in value):
        return None
    return "must be a list of " + ", ".join(f'"{kind}"' for kind in kinds)


TRAIN_FIELDS: tuple[FieldSpec, ...] = (
    *_COMMON_TRAIN,
    # data to several inputs (issue 23): which field feeds which input, which output the
    # loss reads
    FieldSpec(
        "inputs",
        FieldKind.FEED,
        doc="model inputs fed by named data fields: {ids: input_ids, mask: attention_mask} "
        "(default: by name for dict samples, by position for tuples)",
    ),
    FieldSpec(
        "target",
        FieldKind.FIELD_NAME,
        doc="the data field the loss compares with (default: the one no input takes)",
    ),
    FieldSpec(
        "output",
        FieldKind.FIELD_NAME,
        doc="the model output the loss and metrics read, by its name in `return a, b`",
    ),
    # the run's length in optimizer steps, and what happens every N of them (issue 25)
    FieldSpec("max_steps", FieldKind.INT, positive, doc="end after this many optimizer steps"),
    FieldSpec("eval_every_steps", FieldKind.INT, positive, doc="validate every N steps"),
    FieldSpec("checkpoint_every_steps", FieldKind.INT, positive, doc="last.pt every N steps"),
    FieldSpec(
        "accumulate",
        FieldKind.INT,
        positive,
        aliases=("gradient_accumulation_steps", "accumulate_grad_batches"),
        doc="batches per optimizer step",
    ),
    FieldSpec("compile", FieldKind.BOOL, doc="train through torch.compile"),
    FieldSpec("channels_last", FieldKind.BOOL, doc="channels-last memory for image models"),
    # issue 27: how torchrun's processes share the model (one process: as written)
    FieldSpec(
        "strategy",
        FieldKind.STR,
        choices=STRATEGIES,
        doc='under torchrun: "ddp" (a replica per process) or "fsdp" (FSDP2, each block sharded)',
    ),
    FieldSpec(
        "activation_checkpointing",
        FieldKind.BOOL,
        doc="recompute each block's activations in backward instead of keeping them",
    ),
    FieldSpec(
        "fsdp_precision",
        FieldKind.STR,
        choices=("fp32", "bf16", "fp16"),
        doc='FSDP mixed precision: parameters gathered and computed in "bf16" or "fp16"',
    ),
    FieldSpec(
        "cpu_offload",
        FieldKind.BOOL,
        doc="FSDP: keep parameters, gradients and optimizer state in host memory",
    ),
    FieldSpec(
        "no_weight_decay",
        FieldKind.ANY,
        _no_decay,
        doc='parameters weight decay leaves out (default ["bias", "norm", "embedding"])',
    ),
    # GAN jobs train in full precision; their blocks refuse the field rather than ignore it
    FieldSpec(
        "mixed_precision", FieldKind.BOOL, doc='autocast as precision = "fp16" (train jobs only)'
    ),
    FieldSpec(
        "validate_on",
        FieldKind.DATASET,
        doc="dataset evaluated after every epoch (and every eval_every_steps)",
    ),
    FieldSpec("test_on", FieldKind.DATASET, doc="dataset evaluated once after training"),
    FieldSpec("loss", FieldKind.LOSS, doc="loss function (catalog below)"),
    FieldSpec("optimizer", FieldKind.OPTIMIZER, doc="optimizer (catalog below; default adam)"),
    FieldSpec(
        "metrics", FieldKind.METRICS, doc="metrics reported on validation and test (catalog below)"
    ),
    FieldSpec("scheduler", FieldKind.SCHEDULER, doc="learning-rate scheduler (catalog below)"),
    FieldSpec("early_stopping", FieldKind.BOOL, doc="stop when validation loss stops improving"),
    FieldSpec(
        "patience",
        FieldKind.INT,
        non_negative,
        doc="evaluations without improvement before early stopping",
    ),
    FieldSpec(
        "min_delta",
        FieldKind.FLOAT,
        non_negative,
        doc="smallest decrease of validation loss that counts as improvement",
    ),
    FieldSpec("callbacks", FieldKind.CALLBACKS, doc="callbacks (catalog below)"),
)

GAN_FIELDS: tuple[FieldSpec, ...] = (
    *_COMMON_TRAIN,
    FieldSpec(
        "generator_optimizer", FieldKind.OPTIMIZER, doc="the generator's optimizer (catalog below)"
    ),
    FieldSpec(
        "discriminator_optimizer",
        FieldKind.OPTIMIZER,
        doc="the discriminator's optimizer (catalog below)",
    ),
    FieldSpec(
        "generator_loss", FieldKind.LOSS, doc="the generator's loss (bce, bce_with_logits or mse)"
    ),
    FieldSpec(
        "discriminator_loss",
        FieldKind.LOSS,
        doc="the discriminator's loss (bce, bce_with_logits or mse)",
    ),
    FieldSpec(
        "discriminator_steps", FieldKind.INT, positive, doc="discriminator updates per batch"
    ),
    FieldSpec("generator_steps", FieldKind.INT, positive, doc="generator updates per batch"),
    FieldSpec(
        "generate_samples_every",
        FieldKind.INT,
        positive,
        doc="write generated samples every N epochs",
    ),
    FieldSpec("num_samples", FieldKind.INT, positive, doc="samples generated each time"),
    FieldSpec(
        "save_dir", FieldKind.STR, doc="folder of the generated samples (a folder per run inside)"
    ),
    FieldSpec(
        "sample_format",
        FieldKind.STR,
        choices=("tensor", "png", "both"),
        doc="samples as tensors (.pt), PNG images, or both",
    ),
    FieldSpec(
        "sample_range",
        FieldKind.PAIR,
        doc="the generator's output range, mapped to pixels in PNG samples",
    ),
    FieldSpec(
        "metrics",
        FieldKind.GAN_METRICS,
        doc="what the history names (generator_loss, discriminator_loss, real_score, "
        "fake_score); all four are logged every epoch",
    ),
)


EXPERIMENT_TABLE = _index(EXPERIMENT_FIELDS)
MODEL_TABLE = _index(MODEL_FIELDS)
DATASET_TABLE = _index(DATASET_FIELDS)
TRAIN_TABLE = _index(TRAIN_FIELDS)
GAN_TABLE = _index(GAN_FIELDS)

ConfigBlock = ast.Experiment | ast.Dataset | ast.Train | ast.TrainGan

# each configuration block's field table, and whether it accepts fields outside the table
# (a dataset's other fields are arguments of its constructor: resolved, never reported)
BLOCK_TABLES: dict[type[ConfigBlock], tuple[dict[str, FieldSpec], bool]] = {
    ast.Experiment: (EXPERIMENT_TABLE, False),
    ast.Dataset: (DATASET_TABLE, True),
    ast.Train: (TRAIN_TABLE, False),
    ast.TrainGan: (GAN_TABLE, False),
}
