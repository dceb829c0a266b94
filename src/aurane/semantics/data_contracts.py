"""Data contracts: what each dataset yields per sample, known before anything runs.

One table (``SOURCES``) says, for every dataset class whose output is known, the sample it
yields (shape, dtype; a PIL image for most torchvision sets) and its targets (class labels
with their range, token ids, regression values). ``TRANSFORMS`` says how each torchvision
transform changes a sample. ``contract`` combines both with a dataset block's fields into a
``DataContract`` whose facts carry their provenance (``(3, 16, 16) from `image_size` at
12:5``); ``ir/contracts.py`` checks a job's models and loss against it.

A fact nobody can know statically stays ``None``: a module the program declares with
``use``, a dataset without ``from``, ``ImageFolder`` image sizes before a resize, class
counts of a folder, any ``target_transform``. For those the generated program checks its
first batch (``aurane.runtime.contracts``). docs/training.md lists what is known.

Pure front end: never imports torch or torchvision, never runs the source.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.ops.rules import fmt_shape
from aurane.records import record, replace
from aurane.semantics.data_files import (
    DataFileError,
    csv_header,
    first_shard_array,
    parquet_columns,
    saved_dataset_columns,
    table_format,
    token_meta,
)
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.values import NotLiteral, literal_value
from aurane.source import Span
from aurane.syntax import ast

PIL = "PIL image"  # the "dtype" of a sample that is still a PIL image (uint8 pixels)

# The loss decides the task (how outputs pair with targets); the runtime's EpochStats and
# match_target read the same names; the metrics each task allows: aurane.runtime.tasks.
LOSS_TASKS: dict[str, str] = {
    "cross_entropy": "class",
    "cross_entropy_with_label_smoothing": "class",
    "nll": "class",
    "bce": "binary",
    "bce_with_logits": "binary",
    "mse": "regression",
    "mae": "regression",
    "huber": "regression",
}


@record(frozen=True, slots=True)
class Origin:
    """Where a fact came from, shown as ``from `image_size` at 12:5``."""

    what: str
    span: Span | None

    def __str__(self) -> str:
        return f"{self.what} at {self.span}" if self.span is not None else self.what


@record(frozen=True, slots=True)
class Sample:
    """One input sample as the loader yields it (batch axis excluded)."""

    shape: tuple[int, ...] | None  # None: not known statically
    dtype: str | None  # a torch dtype name, PIL, or None
    origin: Origin  # of the shape
    dtype_origin: Origin | None = None  # of the dtype, when another step set it


@record(frozen=True, slots=True)
class Targets:
    """One target. ``kind``: "class" (integer labels in ``[low, classes)``), "regression"
    (floats), or None when unknown."""

    kind: str | None
    shape: tuple[int, ...] | None
    dtype: str | None
    classes: int | None
    origin: Origin
    low: int = 0  # STL10's unlabeled split marks samples with -1


@record(frozen=True, slots=True)
class DataContract:
    dataset: str
    source: str | None
    sample: Sample
    targets: Targets
    problems: tuple[Diagnostic, ...] = ()  # transforms that cannot apply (T095)
    # samples that are dicts of named fields (issue 23): every field in order, and the one
    # ``targets`` describes (empty: ``(input, target)`` pairs, ``sample`` the input)
    fields: tuple[tuple[str, Sample], ...] = ()
    target_field: str | None = None

    @property
    def sample_known(self) -> bool:
        return self.sample.shape is not None and self.sample.dtype is not None


# ---------------------------------------------------------------- sources


Args = Mapping[str, ast.Field]


def _arg(args: Args, name: str, default: Any) -> tuple[Any, Origin | None]:
    """The literal value of constructor field ``name`` and its origin (None: the default)."""
    item = args.get(name)
    if item is None:
        return default, None
    try:
        return literal_value(item.value), Origin(f"`{name}`", item.value.span)
    except NotLiteral:
        return None, Origin(f"`{name}`", item.value.span)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _shape(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, tuple | list) and value and all(_int(d) for d in value):
        return tuple(value)
    return None


@record(frozen=True, slots=True)
class _Source:
    """A dataset class: what it yields given its arguments."""

    build: Callable[[Args, Origin], tuple[Sample, Targets]]
    doc: str  # one line for docs/training.md
    # a source of dict samples: its fields, and the name of the one that is the target
    fields: Callable[[Args, Origin], tuple[tuple[str, Sample], ...]] | None = None
    target_field: str | None = None


def _fixed(channels: int, height: int, width: int, classes: int | None, doc: str) -> _Source:
    """A torchvision set of fixed-size PIL images with integer labels in ``[0, classes)``."""

    def build(args: Args, source: Origin) -> tuple[Sample, Targets]:
        origin = Origin(f"{source.what} ({doc})", source.span)
        sample = Sample((channels, height, width), PIL, origin)
        return sample, Targets("class", (), "int64", classes, origin)

    return _Source(build, f"{fmt_shape((channels, height, width))} PIL images, {classes} classes")


def _folder(doc: str, size: tuple[int, int] | None = None, classes: int | None = None) -> _Source:
    """RGB images of varying size (until a transform fixes it); labels from the folders."""

    def build(args: Args, source: Origin) -> tuple[Sample, Targets]:
        origin = Origin(f"{source.what} ({doc})", source.span)
        shape = (3, *size) if size else (3, 0, 0)  # 0: a size only a transform can fix
        return Sample(shape, PIL, origin), Targets("class", (), "int64", classes, origin)

    shown = fmt_shape((3, *size)) if size else "RGB"
    return _Source(build, f"{shown} PIL images, {classes or 'folder-many'} classes")


def _synthetic_images(args: Args, source: Origin) -> tuple[Sample, Targets]:
    size, size_origin = _arg(args, "image_size", (1, 28, 28))
    classes, classes_origin = _arg(args, "num_classes", 10)
    default = Origin("the default of SyntheticImages", source.span)
    sample = Sample(_shape(size), "float32", size_origin or default)
    targets = Targets("class", (), "int64", _int(classes), classes_origin or default)
    return sample, targets


def _synthetic_segmentation(args: Args, source: Origin) -> tuple[Sample, Targets]:
    size, size_origin = _arg(args, "image_size", (3, 32, 32))
    classes, classes_origin = _arg(args, "num_classes", 2)
    default = Origin("the default of SyntheticSegmentation", source.span)
    shape = _shape(size)
    sample = Sample(shape, "float32", size_origin or default)
    mask = shape[1:] if shape and len(shape) == 3 else None  # one label per pixel
    targets = Targets("class", mask, "int64", _int(classes), classes_origin or default)
    return sample, targets


def _synthetic_tokens(args: Args, source: Origin) -> tuple[Sample, Targets]:
    length, length_origin = _arg(args, "sequence_length", 32)
    vocab, vocab_origin = _arg(args, "vocab_size", 64)
    default = Origin("the default of SyntheticTokens", source.span)
    shape = (length,) if _int(length) else None
    sample = Sample(shape, "int64", length_origin or default)
    targets = Targets("class", shape, "int64", _int(vocab), vocab_origin or default)
    return sample, targets


def _synthetic_regression(args: Args, source: Origin) -> tuple[Sample, Targets]:
    features, features_origin = _arg(args, "features", 8)
    outputs, outputs_origin = _arg(args, "targets", 1)
    default = Origin("the default of SyntheticRegression", source.span)
    sample = Sample((features,) if _int(features) else None, "float32", features_origin or default)
    shape = (outputs,) if _int(outputs) else None
    return sample, Targets("regression", shape, "float32", None, outputs_origin or default)


def _masked_text_fields(args: Args, source: Origin) -> tuple[tuple[str, Sample], ...]:
    length, length_origin = _arg(args, "sequence_length", 16)
    default = Origin("the default of SyntheticMaskedText", source.span)
    shape = (length,) if _int(length) else None
    origin = length_origin or default

    def field(name: str) -> Origin:
        return Origin(f"SyntheticMaskedText's {name}", source.span)

    return (
        ("input_ids", Sample(shape, "int64", origin, field("input_ids"))),
        ("attention_mask", Sample(shape, "int64", origin, field("attention_mask"))),
        ("label", Sample((), "int64", origin, field("label"))),
    )


def _masked_text(args: Args, source: Origin) -> tuple[Sample, Targets]:
    classes, classes_origin = _arg(args, "num_classes", 2)
    default = Origin("the default of SyntheticMaskedText", source.span)
    ids = _masked_text_fields(args, source)[0][1]
    return ids, Targets("class", (), "int64", _int(classes), classes_origin or default)


def _denoising_fields(args: Args, source: Origin) -> tuple[tuple[str, Sample], ...]:
    size, size_origin = _arg(args, "image_size", (1, 16, 16))
    origin = size_origin or Origin("the default of SyntheticDenoising", source.span)
    shape = _shape(size)

    def field(name: str) -> Origin:
        return Origin(f"SyntheticDenoising's {name}", source.span)

    return (
        ("image", Sample(shape, "float32", origin, field("image"))),
        ("timestep", Sample((), "int64", field("timestep"), field("timestep"))),
        ("noise", Sample(shape, "float32", origin, field("noise"))),
    )


def _denoising(args: Args, source: Origin) -> tuple[Sample, Targets]:
    image, _, noise = _denoising_fields(args, source)
    return image[1], Targets("regression", noise[1].shape, "float32", None, noise[1].origin)


def _fake_data(args: Args, source: Origin) -> tuple[Sample, Targets]:
    size, size_origin = _arg(args, "image_size", (3, 224, 224))
    classes, classes_origin = _arg(args, "num_classes", 10)
    default = Origin("the default of FakeData", source.span)
    shape = _shape(size)
    # FakeData draws a tensor of image_size and hands it through ToPILImage
    sample = Sample(shape if shape and len(shape) == 3 else None, PIL, size_origin or default)
    return sample, Targets("class", (), "int64", _int(classes), classes_origin or default)


# EMNIST: classes per split (torchvision's classes_split_dict; "letters" labels are 1..26)
_EMNIST_CLASSES = {
    "byclass": 62,
    "bymerge": 47,
    "balanced": 47,
    "letters": 27,
    "digits": 10,
    "mnist": 10,
}


def _emnist(args: Args, source: Origin) -> tuple[Sample, Targets]:
    split, split_origin = _arg(args, "split", None)
    origin = Origin(f"{source.what} (28x28 grey images)", source.span)
    classes = _EMNIST_CLASSES.get(split) if isinstance(split, str) else None
    where = split_origin or origin
    label_origin = Origin(f"`split = {split!r}`", where.span) if classes else where
    sample = Sample((1, 28, 28), PIL, origin)
    return sample, Targets("class", (), "int64", classes, label_origin)


def _stl10(args: Args, source: Origin) -> tuple[Sample, Targets]:
    split, split_origin = _arg(args, "split", "train")
    origin = Origin(f"{source.what} (96x96 RGB images)", source.span)
    unlabeled = isinstance(split, str) and "unlabeled" in split
    targets = Targets("class", (), "int64", 10, split_origin or origin, -1 if unlabeled else 0)
    return Sample((3, 96, 96), PIL, origin), targets


class _Problem(Exception):
    """A data file that contradicts the dataset block (T118), raised while building."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _problem(message: str, origin: Origin | None, source: Origin, hint: str) -> _Problem:
    span = origin.span if origin is not None and origin.span is not None else source.span
    return _Problem(diag("T118", message, span, hint=hint))


def _column_args(args: Args) -> tuple[Any, ...]:
    path, path_origin = _arg(args, "path", None)
    inputs, inputs_origin = _arg(args, "inputs", None)
    target, target_origin = _arg(args, "target", None)
    names = [inputs] if isinstance(inputs, str) else inputs
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        names = None
    return path, path_origin, names, inputs_origin, target, target_origin


def _columns_facts(
    args: Args, source: Origin, path: str, columns: dict[str, str], typed: bool, read: str
) -> tuple[Sample, Targets]:
    """Inputs and target from named columns whose kinds (int, float, bool, class:N) are
    known (``typed``; a CSV header names columns only). ``read``: what check read."""
    _, path_origin, names, inputs_origin, target, target_origin = _column_args(args)
    classes, classes_origin = _arg(args, "classes", None)
    for name, origin in [*((n, inputs_origin) for n in names), (target, target_origin)]:
        if name not in columns:
            hint = did_you_mean(name, columns) or f"columns: {', '.join(list(columns)[:20])}"
            raise _problem(f"'{path}' has no column '{name}'", origin, source, hint)
        numeric = columns[name] in ("int", "float", "bool") or columns[name].startswith("class:")
        if typed and not numeric:
            raise _problem(
                f"column '{name}' of '{path}' is {columns[name]}, not a number",
                origin,
                source,
                "name numeric columns only",
            )
    where = Origin(f"the columns of '{path}' ({read})", (inputs_origin or source).span)
    sample = Sample((len(names),), "float32", where)
    labelled = columns[target].startswith("class:")
    count = _int(classes)
    if count is None and labelled:
        count = int(columns[target].partition(":")[2])
        classes_origin = Origin(f"the ClassLabel of '{target}' ({read})", target_origin.span)
    if count is None:
        return sample, Targets("regression", (1,), "float32", None, target_origin or where)
    if typed and columns[target] != "int" and not labelled:
        raise _problem(
            f"column '{target}' of '{path}' is {columns[target]}, not integer class labels",
            target_origin,
            source,
            "drop `classes` for a regression target",
        )
    return sample, Targets("class", (), "int64", count, classes_origin or where)


def _unknown_facts(what: str, source: Origin) -> tuple[Sample, Targets]:
    origin = Origin(what, source.span)
    return Sample(None, None, origin), Targets(None, None, None, None, origin)


def _table(args: Args, source: Origin) -> tuple[Sample, Targets]:
    """Table: the header (CSV) or footer (Parquet) names the columns; nothing else is read."""
    path, path_origin, names, _, target, _ = _column_args(args)
    if not isinstance(path, str) or names is None or not isinstance(target, str):
        return _unknown_facts("Table (a file not read at check time)", source)
    kind = table_format(path)
    if kind is None:
        raise _problem(
            f"'{path}' is not a table file",
            path_origin,
            source,
            "name a .csv, .tsv or .parquet file",
        )
    if not os.path.exists(path):  # data prepared elsewhere: the program checks its first batch
        return _unknown_facts(f"Table ('{path}' not found at check time)", source)
    try:
        columns = {n: "float" for n in csv_header(path)} if kind == "csv" else parquet_columns(path)
    except DataFileError as error:
        raise _problem(str(error), path_origin, source, error.hint) from None
    read = "its header" if kind == "csv" else "its footer"
    return _columns_facts(args, source, path, columns, kind == "parquet", read)


def _hf_dataset(args: Args, source: Origin) -> tuple[Sample, Targets]:
    """HFDataset: a saved dataset's dataset_info.json, or a CSV/Parquet data file's header."""
    path, path_origin, names, _, target, _ = _column_args(args)
    split, split_origin = _arg(args, "split", None)
    if not isinstance(path, str) or names is None or not isinstance(target, str):
        return _unknown_facts("HFDataset (not read at check time)", source)
    if not os.path.exists(path):
        return _unknown_facts(f"HFDataset ('{path}' not found at check time)", source)
    try:
        if os.path.isdir(path):
            columns = saved_dataset_columns(path, split if isinstance(split, str) else None)
            if columns is None:
                raise DataFileError(
                    f"'{path}' is not a dataset saved with save_to_disk (no dataset_info.json)",
                    "name the folder save_to_disk wrote, or a data file",
                )
            return _columns_facts(args, source, path, columns, True, "its dataset_info.json")
        kind = table_format(path)
        if kind is None:  # JSON lines, text: columns known when the program reads them
            return _unknown_facts(f"HFDataset ('{path}': columns not read at check time)", source)
        typed = kind == "parquet"
        columns = parquet_columns(path) if typed else {n: "float" for n in csv_header(path)}
    except DataFileError as error:
        where = split_origin if "split" in str(error) else path_origin
        raise _problem(str(error), where, source, error.hint) from None
    read = "its footer" if typed else "its header"
    return _columns_facts(args, source, path, columns, typed, read)


def _token_file(args: Args, source: Origin) -> tuple[Sample, Targets]:
    """TokenFile: the vocabulary size from the sidecar ``prepare_tokens`` wrote."""
    path, path_origin = _arg(args, "path", None)
    length, length_origin = _arg(args, "sequence_length", None)
    given, given_origin = _arg(args, "vocab_size", None)
    shape = (length,) if _int(length) else None
    where = length_origin or source
    sample = Sample(shape, "int64", where)
    if not isinstance(path, str) or not os.path.exists(path + ".json"):
        # data prepared elsewhere: the vocabulary is known only from `vocab_size`, if given
        vocab = _int(given)
        origin = given_origin or Origin("TokenFile (its sidecar not found at check time)", None)
        origin = origin if origin.span is not None else replace(origin, span=source.span)
        return sample, Targets("class", shape, "int64", vocab, origin)
    try:
        meta = token_meta(path)
    except DataFileError as error:
        raise _problem(str(error), path_origin, source, error.hint) from None
    stored = meta.get("vocab_size")
    if not (_int(stored) and meta.get("dtype") in ("uint16", "uint32")):
        raise _problem(
            f"'{path}.json' is not a token file sidecar (vocab_size, dtype)",
            path_origin,
            source,
            "write it with aurane.data.prepare_tokens",
        )
    if _int(given) is not None and given != stored:
        raise _problem(
            f"vocab_size = {given}, but '{path}' holds tokens of a vocabulary of {stored}",
            given_origin,
            source,
            f"write vocab_size = {stored}, or drop it",
        )
    origin = Origin(f"the vocabulary of '{path}' (its sidecar)", (path_origin or source).span)
    return sample, Targets("class", shape, "int64", _int(stored), origin)


def _shards(args: Args, source: Origin) -> tuple[Sample, Targets]:
    """Shards: the first shard's tar headers and its first input array's .npy header."""
    urls, urls_origin = _arg(args, "urls", None)
    ext, ext_origin = _arg(args, "inputs", "npy")
    classes, classes_origin = _arg(args, "classes", None)
    first = urls if isinstance(urls, str) else urls[0] if isinstance(urls, list | tuple) else None
    if not isinstance(first, str) or not isinstance(ext, str) or any(c in first for c in "*?["):
        return _unknown_facts("Shards (not read at check time)", source)
    if not os.path.exists(first):
        return _unknown_facts(f"Shards ('{first}' not found at check time)", source)
    try:
        shape, dtype = first_shard_array(first, ext)
    except DataFileError as error:
        where = ext_origin if "member" in str(error) else urls_origin
        raise _problem(str(error), where, source, error.hint) from None
    origin = Origin(
        f"the first .{ext} array of '{first}' (its header)", (urls_origin or source).span
    )
    sample = Sample(shape, dtype, origin)
    count = _int(classes)
    if count is None:
        return sample, Targets("regression", (1,), "float32", None, origin)
    return sample, Targets("class", (), "int64", count, classes_origin or origin)


_AURANE: dict[str, _Source] = {
    "SyntheticImages": _Source(_synthetic_images, "float32 `image_size` tensors, `num_classes`"),
    "SyntheticSegmentation": _Source(
        _synthetic_segmentation,
        "float32 `image_size` images, int64 `(height, width)` masks `< num_classes`",
    ),
    "SyntheticTokens": _Source(
        _synthetic_tokens, "int64 `(sequence_length,)` tokens, next tokens `< vocab_size`"
    ),
    "SyntheticRegression": _Source(
        _synthetic_regression, "float32 `(features,)`, float32 `(targets,)` targets"
    ),
    "SyntheticMaskedText": _Source(
        _masked_text,
        "dicts: int64 `input_ids` and `attention_mask` `(sequence_length,)` (16), int64 "
        "`label` `< num_classes` (2)",
        _masked_text_fields,
        "label",
    ),
    "SyntheticDenoising": _Source(
        _denoising,
        "dicts: float32 noised `image` `image_size` ((1, 16, 16)), int64 `timestep` "
        "`< timesteps`, float32 `noise` (the target)",
        _denoising_fields,
        "noise",
    ),
    "Table": _Source(
        _table,
        "float32 `(len(inputs),)` from the named columns of a CSV/Parquet `path`; `target`: "
        "int64 labels `< classes`, or float32 `(1,)`",
    ),
    "HFDataset": _Source(
        _hf_dataset,
        "like Table, from a dataset saved with `save_to_disk` (`split`) or a local data file",
    ),
    "Shards": _Source(
        _shards,
        "`.npy` arrays (float32 or int64, shape from the first shard) of webdataset `urls`; "
        "`target` labels `< classes`, or float32 `(1,)`",
    ),
    "TokenFile": _Source(
        _token_file,
        "int64 `(sequence_length,)` windows of a prepared token file, next tokens "
        "`< vocab_size` (from its sidecar)",
    ),
}
_TORCHVISION: dict[str, _Source] = {
    "FakeData": _Source(_fake_data, "`image_size` PIL images, `num_classes` classes"),
    "MNIST": _fixed(1, 28, 28, 10, "28x28 grey images"),
    "FashionMNIST": _fixed(1, 28, 28, 10, "28x28 grey images"),
    "KMNIST": _fixed(1, 28, 28, 10, "28x28 grey images"),
    "QMNIST": _fixed(1, 28, 28, 10, "28x28 grey images"),
    "EMNIST": _Source(_emnist, "(1, 28, 28) PIL images, classes by `split`"),
    "USPS": _fixed(1, 16, 16, 10, "16x16 grey images"),
    "SEMEION": _fixed(1, 16, 16, 10, "16x16 grey images"),
    "CIFAR10": _fixed(3, 32, 32, 10, "32x32 RGB images"),
    "CIFAR100": _fixed(3, 32, 32, 100, "32x32 RGB images"),
    "SVHN": _fixed(3, 32, 32, 10, "32x32 RGB images"),
    "STL10": _Source(_stl10, "(3, 96, 96) PIL images, 10 classes (-1: unlabeled)"),
    "FER2013": _fixed(1, 48, 48, 7, "48x48 grey images"),
    "EuroSAT": _fixed(3, 64, 64, 10, "64x64 RGB images"),
    "PCAM": _fixed(3, 96, 96, 2, "96x96 RGB images"),
    "ImageFolder": _folder("RGB images of the folder's sizes"),
    "ImageNet": _folder("RGB images of varying size", classes=1000),
    "Imagenette": _folder("RGB images of varying size", classes=10),
    "Food101": _folder("RGB images of varying size", classes=101),
    "Flowers102": _folder("RGB images of varying size", classes=102),
    "GTSRB": _folder("RGB images of varying size", classes=43),
    "Country211": _folder("RGB images of varying size", classes=211),
    "DTD": _folder("RGB images of varying size", classes=47),
}
SOURCES: dict[str, dict[str, _Source]] = {
    "aurane.data": _AURANE,
    "torchvision.datasets": _TORCHVISION,
}


# ---------------------------------------------------------------- transforms


@record
class _State:
    """A sample on its way through the transforms."""

    shape: tuple[int, ...] | None
    dtype: str | None
    origin: Origin
    problems: list[Diagnostic]
    dataset: str
    dtype_origin: Origin | None = None

    def refuse(self, message: str, span: Span, hint: str) -> None:
        self.problems.append(diag("T095", message, span, hint=hint))
        self.shape = self.dtype = None  # one mistake, one diagnostic

    @property
    def image(self) -> tuple[int, int, int] | None:
        if self.shape is not None and len(self.shape) == 3:
            return (self.shape[0], self.shape[1], self.shape[2])
        return None


# parameter order of each transform (for positional arguments)
_PARAMS: dict[str, tuple[str, ...]] = {
    "Resize": ("size", "interpolation", "max_size", "antialias"),
    "CenterCrop": ("size",),
    "RandomCrop": ("size", "padding", "pad_if_needed", "fill", "padding_mode"),
    "RandomResizedCrop": ("size", "scale", "ratio", "interpolation", "antialias"),
    "Grayscale": ("num_output_channels",),
    "Pad": ("padding", "fill", "padding_mode"),
    "Normalize": ("mean", "std", "inplace"),
    "RandomRotation": ("degrees", "interpolation", "expand", "center", "fill"),
}
# transforms that keep shape and dtype
_KEEP = frozenset({"RandomHorizontalFlip", "RandomVerticalFlip", "ColorJitter"})


def _bind(call: ast.Call) -> dict[str, Any] | None:
    names = _PARAMS.get(call.func.rsplit(".", 1)[-1], ())
    try:
        bound = dict(zip(names, (literal_value(a) for a in call.args), strict=False))
        bound.update({kw.name: literal_value(kw.value) for kw in call.keywords})
    except NotLiteral:
        return None
    return bound


def _pair(value: Any) -> tuple[int, int] | None:
    """A crop/resize size: ``n`` or ``(n,)`` is square, ``(h, w)`` as given."""
    if _int(value):
        return (value, value)
    if isinstance(value, tuple | list) and len(value) in (1, 2) and all(_int(v) for v in value):
        return (value[0], value[-1])
    return None


def _resized(shape: tuple[int, int, int], size: Any, max_size: Any) -> tuple[int, int, int]:
    """torchvision's Resize: an int sets the shorter side, keeping the aspect ratio."""
    channels, height, width = shape
    pair = _pair(size)
    if isinstance(size, tuple | list) and len(size) == 2 and pair:
        return (channels, *pair)
    short_size = size[0] if isinstance(size, tuple | list) and len(size) == 1 else size
    if not _int(short_size) or max_size is not None or not (height and width):
        return (channels, 0, 0)
    short, long = (width, height) if width <= height else (height, width)
    new_long = int(short_size * long / short)
    new_h, new_w = (new_long, short_size) if width <= height else (short_size, new_long)
    return (channels, new_h, new_w)


def _padded(shape: tuple[int, int, int], padding: Any) -> tuple[int, int, int] | None:
    """torchvision's Pad: ``p`` every side, ``(x, y)``, or ``(left, top, right, bottom)``."""
    channels, height, width = shape
    sides = [padding] if _int(padding) is not None else padding
    if not isinstance(sides, tuple | list) or not all(_int(p) is not None for p in sides):
        return None
    if len(sides) == 1:
        left = top = right = bottom = sides[0]
    elif len(sides) == 2:
        left, top, right, bottom = sides[0], sides[1], sides[0], sides[1]
    elif len(sides) == 4:
        left, top, right, bottom = sides
    else:
        return None
    return (
        channels,
        height + top + bottom if height else 0,
        width + left + right if width else 0,
    )


def _apply(state: _State, call: ast.Call) -> None:
    """Update ``state`` for one transform call (unknown transforms make the sample unknown)."""
    name = call.func.rsplit(".", 1)[-1]
    if name == "Compose":
        items = call.args[0] if call.args else None
        for item in items.items if isinstance(items, ast.ListExpr) else ():
            if isinstance(item, ast.Call):
                _apply(state, item)
            else:
                state.shape = state.dtype = None
        return
    if state.dtype is None and state.shape is None:
        return
    here = Origin(f"`{name}(...)`" if call.args or call.keywords else f"`{name}()`", call.span)
    args = _bind(call)
    if args is None or name not in (*_PARAMS, *_KEEP, "ToTensor", "PILToTensor"):
        state.shape, state.dtype, state.origin = None, None, here
        return
    if name in ("ToTensor", "PILToTensor"):
        if state.dtype not in (PIL, None):
            state.refuse(
                f"{name}() converts PIL images, but dataset '{state.dataset}' already yields "
                f"{state.dtype} tensors",
                call.span,
                f"remove {name}()",
            )
            return
        state.dtype, state.dtype_origin = ("float32" if name == "ToTensor" else "uint8"), here
        return
    if name == "Normalize":
        _normalize(state, call, args)
        return
    if name in _KEEP:
        return
    image = state.image
    if image is None:  # not an image (or not known): its shape after this is not known
        state.shape, state.origin = None, here
        return
    new: tuple[int, int, int] | None = image
    if name == "Grayscale":
        channels = args.get("num_output_channels", 1)
        new = (channels, image[1], image[2]) if _int(channels) else None
    elif name == "RandomRotation":
        new = None if args.get("expand") else image
    elif name == "Resize":
        new = _resized(image, args.get("size"), args.get("max_size"))
    elif name in ("CenterCrop", "RandomResizedCrop", "RandomCrop"):
        pair = _pair(args.get("size"))
        if name == "RandomCrop" and pair is not None and image[1] and image[2]:
            _check_crop(state, call, image, pair, args)
            if state.dtype is None:
                return
        new = (image[0], *pair) if pair else None
    elif name == "Pad":
        new = _padded(image, args.get("padding"))
    state.shape, state.origin = new, here


def _check_crop(
    state: _State,
    call: ast.Call,
    image: tuple[int, int, int],
    size: tuple[int, int],
    args: dict[str, Any],
) -> None:
    """RandomCrop refuses a crop larger than the (padded) image unless pad_if_needed."""
    padded = _padded(image, args.get("padding") or 0) or image  # None: unknown padding
    if args.get("pad_if_needed") or (size[0] <= padded[1] and size[1] <= padded[2]):
        return
    state.refuse(
        f"RandomCrop({size[0]}, {size[1]}) is larger than the {padded[1]}x{padded[2]} images "
        f"of dataset '{state.dataset}' ({fmt_shape(padded)} from {state.origin})",
        call.span,
        "crop less, add padding, or pass pad_if_needed=True",
    )


def _normalize(state: _State, call: ast.Call, args: dict[str, Any]) -> None:
    if state.dtype == PIL or state.dtype in ("uint8", "int64", "int32"):
        what = "PIL images" if state.dtype == PIL else f"{state.dtype} tensors"
        state.refuse(
            f"Normalize needs float tensors, but dataset '{state.dataset}' has {what} here",
            call.span,
            "put ToTensor() before Normalize" if state.dtype == PIL else "convert to float first",
        )
        return
    image = state.image
    mean = args.get("mean")
    count = len(mean) if isinstance(mean, tuple | list) else None
    if image is not None and image[0] and count is not None and count not in (1, image[0]):
        state.refuse(
            f"Normalize has {count} means, but the images of dataset '{state.dataset}' have "
            f"{image[0]} channel{'s' if image[0] != 1 else ''} "
            f"({fmt_shape(image)} from {state.origin})",
            call.span,
            f"give 1 or {image[0]} values",
        )


# ---------------------------------------------------------------- contracts


def _unknown(dataset: ast.Dataset, why: str) -> DataContract:
    origin = Origin(why, dataset.source.span if dataset.source else dataset.name_span)
    return DataContract(
        dataset.name,
        None if dataset.source is None else unicodedata.normalize("NFKC", dataset.source.id),
        Sample(None, None, origin),
        Targets(None, None, None, None, origin),
    )


def _final(shape: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """The sample shape, or None while a size is unknown (0: an image size not yet fixed)."""
    return shape if shape is not None and all(shape) else None


def source_spec(dotted: str) -> _Source | None:
    module, _, name = unicodedata.normalize("NFKC", dotted).rpartition(".")
    return SOURCES.get(module, {}).get(name)


def contract(dataset: ast.Dataset) -> DataContract:
    """What ``dataset`` yields per sample: known facts with provenance, None elsewhere."""
    if dataset.source is None:
        return _unknown(dataset, f"dataset '{dataset.name}' (no 'from': an injected loader)")
    dotted = unicodedata.normalize("NFKC", dataset.source.id)
    spec = source_spec(dotted)
    if spec is None:
        return _unknown(dataset, f"{dotted} (not known statically)")
    fields = {f.name: f for f in dataset.fields}
    short = dotted.rpartition(".")[2]
    try:
        sample, targets = spec.build(fields, Origin(short, dataset.source.span))
    except _Problem as problem:
        unknown = _unknown(dataset, f"{dotted} (its data file does not fit)")
        return replace(unknown, problems=(problem.diagnostic,))
    state = _State(sample.shape, sample.dtype, sample.origin, [], dataset.name)
    transform = fields.get("transform") or fields.get("transforms")
    if transform is not None:
        value = transform.value
        items = value.items if isinstance(value, ast.ListExpr) else (value,)
        for item in items:
            if isinstance(item, ast.Call):
                _apply(state, item)
            else:
                state.shape = state.dtype = None
    elif dotted.startswith("torchvision."):
        state.dtype = "float32" if state.dtype == PIL else state.dtype  # the default ToTensor()
    if state.dtype == PIL:
        span = transform.value.span if transform else dataset.source.span
        state.refuse(
            f"dataset '{dataset.name}' yields PIL images, which a DataLoader cannot batch",
            span,
            "end the transforms with ToTensor()",
        )
    if "target_transform" in fields:
        given = fields["target_transform"].value.span
        targets = Targets(None, None, None, None, Origin("`target_transform`", given))
    if spec.fields is not None:  # dict samples: no transforms, each field as the table says
        return DataContract(
            dataset.name,
            dotted,
            sample,
            targets,
            fields=spec.fields(fields, Origin(short, dataset.source.span)),
            target_field=spec.target_field,
        )
    return DataContract(
        dataset.name,
        dotted,
        replace(
            sample,
            shape=_final(state.shape),
            dtype=state.dtype,
            origin=state.origin,
            dtype_origin=state.dtype_origin,
        ),
        targets,
        tuple(state.problems),
    )


def known_sources() -> list[tuple[str, str]]:
    """(dotted source, what it yields) for docs and tests, in table order."""
    return [(f"{m}.{n}", spec.doc) for m, table in SOURCES.items() for n, spec in table.items()]
