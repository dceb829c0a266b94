"""Dataset factories: ``dataset name:`` blocks become lazy ``_make_<name>_loader()`` functions.

Loader fields (``batch``, ``shuffle``, ``num_workers``, ``pin_memory``, ``drop_last``) go to
the DataLoader, every other field to the constructor named by ``from``. Torchvision
sources get ``ToTensor()`` unless a transform is given; ``transforms = [...]`` is shorthand
for ``transform = Compose([...])``. Nothing is built (or downloaded) at import time.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from aurane.backends.torch.names import Namespace
from aurane.records import record
from aurane.semantics.config import (
    DATASET_TABLE,
    LOADER_FIELDS,
    FieldSpec,
    OptionSpec,
    option_name,
)
from aurane.semantics.sources import checked_at_run_time
from aurane.semantics.values import literal_value
from aurane.syntax import ast

WIDTH = 100  # the project's ruff line length; exploded calls carry a trailing comma

_LOADER_NAMES = {spec.name for spec in LOADER_FIELDS}
_TRANSFORM_FIELDS = ("transform", "target_transform")


@record(frozen=True)
class Seq:
    """``head`` + bracketed items: a call, list or tuple that may be exploded one per line."""

    head: str
    items: tuple[Doc, ...]
    brackets: str = "()"
    one_tuple: bool = False  # ``(x,)`` keeps its comma when flat


Doc = Seq | str


def flat(doc: Doc) -> str:
    if isinstance(doc, str):
        return doc
    inner = ", ".join(flat(item) for item in doc.items) + ("," if doc.one_tuple else "")
    return f"{doc.head}{doc.brackets[0]}{inner}{doc.brackets[1]}"


def render(doc: Doc, indent: int, suffix: str = "") -> list[str]:
    """Flat when it fits in ``WIDTH``; else exploded with trailing commas (ruff keeps those)."""
    pad = " " * indent
    one = pad + flat(doc) + suffix
    if isinstance(doc, str) or len(one) <= WIDTH or not doc.items:
        return [one]
    lines = [pad + doc.head + doc.brackets[0]]
    for item in doc.items:
        lines += render(item, indent + 4, ",")
    return [*lines, pad + doc.brackets[1] + suffix]


def format_call(head: str, args: Sequence[Doc], indent: int, suffix: str = "") -> list[str]:
    """``head(args)`` on one line when it fits, else one argument per line (trailing comma)."""
    return render(Seq(head, tuple(args)), indent, suffix)


def quote(text: str) -> str:
    """repr() with double quotes where that needs no escaping (ruff-format's preference)."""
    shown = repr(text)
    if shown.startswith("'") and '"' not in text and "'" not in text:
        return '"' + shown[1:-1] + '"'
    return shown


def literal_doc(value: Any, head: str = "") -> Doc:
    """A literal as Python source; every user string goes through repr."""
    if isinstance(value, tuple):
        return Seq(head, tuple(literal_doc(v) for v in value), "()", len(value) == 1)
    if isinstance(value, list):
        return Seq(head, tuple(literal_doc(v) for v in value), "[]")
    if isinstance(value, dict):
        items = tuple(literal_doc(v, f"{quote(k)}: ") for k, v in value.items())
        return Seq(head, items, "{}")
    return head + (quote(value) if isinstance(value, str) else repr(value))


def format_literal(value: Any) -> str:
    return flat(literal_doc(value))


def format_dict(head: str, items: dict[str, Any], indent: int) -> list[str]:
    return render(literal_doc(items, head), indent)


def loader_name(dataset: str) -> str:
    return f"_make_{dataset}_loader"


@record(frozen=True)
class DatasetInfo:
    name: str
    source: str | None  # the dotted constructor, or None (a loader must be injected)
    constructor: dict[str, ast.Expr]
    loader: dict[str, Any]

    @property
    def module(self) -> str | None:
        if self.source is None or "." not in self.source:
            return None
        return self.source.rsplit(".", 1)[0]

    @property
    def torchvision(self) -> bool:
        return self.source is not None and self.source.startswith("torchvision.")


def dataset_info(dataset: ast.Dataset) -> DatasetInfo:
    constructor: dict[str, ast.Expr] = {}
    loader: dict[str, Any] = {}
    for name, value in block_fields(dataset.fields, DATASET_TABLE).items():
        if name in _LOADER_NAMES:
            loader[name] = literal_value(value)
        else:
            constructor[name] = value
    # as Python reads it (semantics/sources.py checked this form against the allowlist)
    source = unicodedata.normalize("NFKC", dataset.source.id) if dataset.source else None
    return DatasetInfo(dataset.name, source, constructor, loader)


def uses_torchvision(info: DatasetInfo) -> bool:
    names = ("transform", "transforms", "target_transform")
    return info.torchvision or any(key in info.constructor for key in names)


def imports_for(info: DatasetInfo) -> tuple[str, ...]:
    lines = []
    if uses_torchvision(info):
        lines.append("import torchvision")
    if info.module and not info.module.startswith("torchvision"):
        lines.append(f"import {info.module}")
    return tuple(lines)


def transform_expr(expr: ast.Expr, head: str = "") -> Doc:
    """A transform call (or list of them) as torchvision source."""
    if isinstance(expr, ast.Call):
        name = expr.func.rsplit(".", 1)[-1]
        args = [transform_expr(arg) for arg in expr.args]
        args += [transform_expr(kw.value, f"{kw.name}=") for kw in expr.keywords]
        return Seq(f"{head}torchvision.transforms.{name}", tuple(args))
    if isinstance(expr, ast.ListExpr):
        return Seq(head, tuple(transform_expr(item) for item in expr.items), "[]")
    if isinstance(expr, ast.TupleExpr):
        items = tuple(transform_expr(item) for item in expr.items)
        return Seq(head, items, "()", len(items) == 1)
    return literal_doc(literal_value(expr), head)


def _constructor_args(info: DatasetInfo) -> list[Doc]:
    args: list[Doc] = []
    transform: Doc | None = None
    for key, expr in info.constructor.items():
        if key == "transforms":
            transform = Seq("transform=torchvision.transforms.Compose", (transform_expr(expr),))
        elif key == "transform":
            transform = transform_expr(expr, "transform=")
        elif key == "target_transform":
            args.append(transform_expr(expr, "target_transform="))
        else:
            args.append(literal_doc(literal_value(expr), f"{key}="))
    if transform is None and info.torchvision:
        transform = "transform=torchvision.transforms.ToTensor()"  # PIL images to tensors
    if transform is not None:
        args.append(transform)
    return args


def emit_loader_factory(info: DatasetInfo) -> str:
    """The source of ``_make_<name>_loader(seed=None)``."""
    lines = [f"def {loader_name(info.name)}(seed=None):"]
    if info.source is None:
        message = f"dataset {info.name} has no 'from' source: pass its loader to the job"
        lines += [
            f'    """The {info.name} dataset names no source, so its loader is injected."""',
            *format_call("raise ValueError", [quote(message)], 4),
        ]
        return "\n".join(lines)
    lines.append(f'    """The {info.name} dataset ({info.source}), batched; built on first use."""')
    # the local is allocated: `use dataset` + `from dataset.Data` must not hide the module
    names = Namespace()
    names.claim({info.source.split(".")[0], "seed", "rt"})
    local = names.fresh("dataset")
    constructor = info.source
    if checked_at_run_time(info.source):
        # a class of the program's own `use` module: only a dataset class is called
        constructor = names.fresh("dataset_class")
        lines += format_call(
            f"{constructor} = rt.dataset_class", [info.source, quote(info.source)], 4
        )
    lines += format_call(f"{local} = {constructor}", _constructor_args(info), 4)
    shuffle = info.loader.get("shuffle")
    if shuffle is None:
        # SPEC §6: shuffle defaults to the value of `train` when given, else True.
        train = info.constructor.get("train")
        shuffle = literal_value(train) if train is not None else True
    loader_args = [
        local,
        f"batch_size={info.loader.get('batch', 1)!r}",
        f"shuffle={shuffle!r}",
        "seed=seed",
    ]
    for key in ("num_workers", "pin_memory", "drop_last"):
        if key in info.loader:
            loader_args.append(f"{key}={info.loader[key]!r}")
    lines += format_call("return rt.data_loader", loader_args, 4)
    return "\n".join(lines)


# ---------------------------------------------------------------- catalog options


@record(frozen=True)
class Option:
    """A catalog entry as written: ``adam`` or ``adam(lr=1e-3)``, aliases resolved."""

    name: str
    spec: OptionSpec
    kwargs: dict[str, Any]


def read_option(expr: ast.Expr, table: dict[str, OptionSpec]) -> Option:
    name = option_name(expr)
    assert name is not None, "the semantic pass accepts only named options"
    spec = table[name]
    keywords = expr.keywords if isinstance(expr, ast.Call) else ()
    return Option(spec.name, spec, {kw.name: literal_value(kw.value) for kw in keywords})


def default_of(spec: OptionSpec, param: str) -> Any:
    return next(p.default for p in spec.params if p.name == param)


def block_fields(fields: tuple[ast.Field, ...], table: dict[str, FieldSpec]) -> dict[str, ast.Expr]:
    """Field values by canonical name (``gradient_clipping`` is ``gradient_clip``)."""
    found: dict[str, ast.Expr] = {}
    for item in fields:
        spec = table.get(item.name)
        found[spec.name if spec else item.name] = item.value
    return found


def dataset_ref(expr: ast.Expr) -> str:
    return expr.id if isinstance(expr, ast.Name) else str(literal_value(expr))


def loss_source(option: Option, target: str, indent: int) -> list[str]:
    """``target = nn.<Loss>(...)``; weight lists become float32 tensors on ``device``."""
    kwargs = dict(option.kwargs)
    if option.name == "cross_entropy_with_label_smoothing":
        kwargs["label_smoothing"] = kwargs.pop("smoothing", default_of(option.spec, "smoothing"))
    args: list[Doc] = []
    for key, value in kwargs.items():
        if key in ("weight", "pos_weight"):
            tensor = (
                f"torch.tensor({format_literal(list(value))}, dtype=torch.float32, device=device)"
            )
            args.append(f"{key}={tensor}")
        else:
            args.append(literal_doc(value, f"{key}="))
    return format_call(f"{target} = nn.{option.spec.torch_name}", args, indent)


def optimizer_source(
    option: Option, block_lr: Any, params: str, target: str, indent: int
) -> tuple[list[str], dict[str, Any]]:
    """``target = torch.optim.<Opt>(params, lr=..., ...)`` and the options used (for the config)."""
    kwargs = dict(option.kwargs)
    lr = kwargs.pop("lr", None)
    if lr is None:
        lr = block_lr if block_lr is not None else 0.001
    used = {"lr": lr, **kwargs}
    args: list[Doc] = [params, *(literal_doc(value, f"{key}=") for key, value in used.items())]
    return format_call(f"{target} = torch.optim.{option.spec.torch_name}", args, indent), used


# ---------------------------------------------------------------- pieces of every job


# (folder, every, save_best) of a job that writes checkpoints
Checkpointing = tuple[str, int | None, bool]


@record(frozen=True)
class Experiment:
    seed: int | None
    device: str
    precision: str


def field_literal(fields: dict[str, ast.Expr], name: str, default: Any = None) -> Any:
    """The literal value of a job field, or ``default`` when the job does not set it."""
    return literal_value(fields[name]) if name in fields else default


def checkpointing(
    fields: dict[str, ast.Expr], callbacks: dict[str, Option], job: str
) -> Checkpointing | None:
    """(folder, every, save_best), or None when the job writes no checkpoints."""
    options = callbacks["checkpoint"].kwargs if "checkpoint" in callbacks else {}
    folder = field_literal(fields, "checkpoint_dir", options.get("checkpoint_dir"))
    every = field_literal(fields, "checkpoint_every", options.get("checkpoint_every"))
    save_best = bool(field_literal(fields, "save_best", options.get("save_best", False)))
    if folder is None and "checkpoint" in callbacks:
        folder = "./checkpoints"
    if folder is None and (every is not None or save_best):
        folder = f"./checkpoints/{job}"
    return None if folder is None else (folder, every, save_best)


def log_every_args(fields: dict[str, ast.Expr]) -> list[Doc]:
    """``log_every=N`` for ``rt.Run`` when the job logs step rows (``log_every = N``)."""
    every = field_literal(fields, "log_every")
    return [] if every is None else [f"log_every={int(every)!r}"]


def run_call(
    name: str,
    kind: str,
    config: dict[str, Any],
    state: dict[str, str],
    loaders: Sequence[str],
    ckpt: Checkpointing | None,
    epochs: int,
    extra: Sequence[Doc] = (),
) -> str:
    """The job's ``with rt.Run(...) as run:`` line (resume, checkpoints, lock, summary)."""
    items = tuple(f"{quote(key)}: {value}" for key, value in state.items())
    args: list[Doc] = [
        quote(name),
        f"epochs={epochs!r}",
        literal_doc(config, "config="),
        Seq("state=", items, "{}"),
        Seq("loaders=", tuple(loaders), "[]"),
    ]
    if kind != "train":
        args.append(f"kind={quote(kind)}")
    if ckpt is not None:
        folder, every, save_best = ckpt
        args.append(f"checkpoint_dir={quote(folder)}")
        args += ["save_best=True"] if save_best else []
        args += [f"checkpoint_every={every!r}"] if every is not None else []
    args += ["resume_from=resume_from", *extra]
    return "\n".join(format_call("with rt.Run", args, 4, " as run:"))


def add_clip(
    fields: dict[str, ast.Expr], flags: set[str], values: dict[str, str], config: dict[str, Any]
) -> None:
    """``gradient_clip``: the ``[clip]`` lines, their value and the config entry."""
    clip = field_literal(fields, "gradient_clip")
    if clip is not None:
        flags.add("clip")
        values["clip"] = format_literal(clip)
        config["gradient_clip"] = clip


def add_checkpointing(
    fields: dict[str, ast.Expr],
    callbacks: dict[str, Option],
    job: str,
    flags: set[str],
) -> Checkpointing | None:
    """The job's checkpointing (folder, every, save_best), flagging ``ckpt`` when it has one."""
    ckpt = checkpointing(fields, callbacks, job)
    if ckpt is not None:
        flags.add("ckpt")
    return ckpt


def job_values(
    name: str,
    title: str,
    epochs: int,
    experiment: Experiment,
    dataset: str,
) -> dict[str, str]:
    """Placeholders every job template has; ``title`` starts the docstring's first line."""
    return {
        "name": name,
        "doc": title + f", for {epochs} epoch{'s' if epochs != 1 else ''}.",
        "epochs": repr(epochs),
        "seed": repr(experiment.seed),
        "device": quote(experiment.device),
        "make_train": loader_name(dataset),
    }
