"""Deterministic offline datasets, usable as ``from`` sources in ``.aur`` programs.

Each dataset returns ``(input, target)`` pairs and is fully determined by its arguments:
the same ``seed`` gives the same tensors in every process. ``seed`` fixes the *task*
(class prototypes, the linear map, the token transition table); ``train`` picks one of
two disjoint sample streams of that task, so a model fitted on ``train=True`` can be
evaluated on ``train=False``.

This module needs torch. ``import aurane`` never imports it; generated programs that
name one of these datasets import ``aurane.data`` (which re-exports them), and
``--standalone`` copies them in from this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils.data import Dataset

__all__ = ["SyntheticImages", "SyntheticRegression", "SyntheticTokens"]

Transform = Callable[[Any], Any] | None

# Task and sample streams use distinct generator seeds so that changing ``train``
# never changes the task itself.
_TASK_STREAM = 0
_SAMPLE_STREAM = {True: 1, False: 2}


def _generator(seed: int, stream: int) -> torch.Generator:
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    # Mix the stream into the seed with a large odd multiplier; stays within 64 bits.
    return torch.Generator().manual_seed((seed * 0x9E3779B1 + stream) % (2**63))


def _positive(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class _TensorPairs(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Precomputed ``inputs[i], targets[i]`` pairs with optional transforms."""

    inputs: torch.Tensor
    targets: torch.Tensor

    def __init__(self, transform: Transform, target_transform: Transform) -> None:
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        item: Any = self.inputs[index]
        target: Any = self.targets[index]
        if self.transform is not None:
            item = self.transform(item)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return item, target

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={len(self)})"


class SyntheticImages(_TensorPairs):
    """Float32 images of shape ``image_size`` with int64 labels in ``[0, num_classes)``.

    Every class has a fixed random prototype; a sample is its class prototype plus
    Gaussian noise, so a small network learns the labels well above chance.
    """

    def __init__(
        self,
        size: int,
        image_size: tuple[int, ...] = (1, 28, 28),
        num_classes: int = 10,
        seed: int = 0,
        *,
        train: bool = True,
        signal: float = 1.0,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        super().__init__(transform, target_transform)
        size = _positive("size", size)
        num_classes = _positive("num_classes", num_classes)
        shape = tuple(_positive("image_size entry", int(d)) for d in image_size)
        task = _generator(seed, _TASK_STREAM)
        prototypes = torch.randn((num_classes, *shape), generator=task)
        samples = _generator(seed, _SAMPLE_STREAM[bool(train)])
        self.targets = torch.randint(0, num_classes, (size,), generator=samples)
        noise = torch.randn((size, *shape), generator=samples)
        self.inputs = signal * prototypes[self.targets] + noise
        self.num_classes = num_classes
        self.image_size = shape


class SyntheticTokens(_TensorPairs):
    """Next-token pairs: ``input`` is tokens ``0..L-1`` of a sequence, ``target`` tokens ``1..L``.

    Sequences follow a fixed random successor table (each token has a preferred next
    token, taken with probability ``1 - noise``), so next-token prediction is learnable.
    Both tensors are int64 of shape ``(sequence_length,)``.
    """

    def __init__(
        self,
        size: int,
        sequence_length: int = 32,
        vocab_size: int = 64,
        seed: int = 0,
        *,
        train: bool = True,
        noise: float = 0.2,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        super().__init__(transform, target_transform)
        size = _positive("size", size)
        length = _positive("sequence_length", sequence_length)
        vocab = _positive("vocab_size", vocab_size)
        if not 0.0 <= noise <= 1.0:
            raise ValueError(f"noise must be in [0, 1], got {noise!r}")
        successor = torch.randint(0, vocab, (vocab,), generator=_generator(seed, _TASK_STREAM))
        samples = _generator(seed, _SAMPLE_STREAM[bool(train)])
        tokens = torch.empty((size, length + 1), dtype=torch.int64)
        tokens[:, 0] = torch.randint(0, vocab, (size,), generator=samples)
        for t in range(1, length + 1):
            random_next = torch.randint(0, vocab, (size,), generator=samples)
            keep = torch.rand((size,), generator=samples) >= noise
            tokens[:, t] = torch.where(keep, successor[tokens[:, t - 1]], random_next)
        self.inputs = tokens[:, :-1].contiguous()
        self.targets = tokens[:, 1:].contiguous()
        self.vocab_size = vocab


class SyntheticRegression(_TensorPairs):
    """Float32 features ``(features,)`` and targets ``(targets,)`` of a fixed linear map plus noise.

    ``target = features @ weight + bias + noise * N(0, 1)``; ``weight`` and ``bias`` depend
    on ``seed`` only and are exposed as attributes.
    """

    def __init__(
        self,
        size: int,
        features: int = 8,
        targets: int = 1,
        noise: float = 0.1,
        seed: int = 0,
        *,
        train: bool = True,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        super().__init__(transform, target_transform)
        size = _positive("size", size)
        n_in = _positive("features", features)
        n_out = _positive("targets", targets)
        if noise < 0:
            raise ValueError(f"noise must not be negative, got {noise!r}")
        task = _generator(seed, _TASK_STREAM)
        self.weight = torch.randn((n_in, n_out), generator=task) / n_in**0.5
        self.bias = torch.randn((n_out,), generator=task)
        samples = _generator(seed, _SAMPLE_STREAM[bool(train)])
        self.inputs = torch.randn((size, n_in), generator=samples)
        clean = self.inputs @ self.weight + self.bias
        self.targets = clean + noise * torch.randn((size, n_out), generator=samples)


class SyntheticSegmentation(_TensorPairs):
    """Float32 images ``image_size = (channels, height, width)`` with int64 per-pixel class
    masks ``(height, width)`` in ``[0, num_classes)``, for segmentation (a U-Net's task).

    A mask is a grid of random class cells (``cell`` pixels wide, default a quarter of the
    shorter side); each class has a fixed random colour (``seed``), and a pixel is its
    class's colour times ``signal`` plus Gaussian noise, so per-pixel labels are learnable.
    """

    def __init__(
        self,
        size: int,
        image_size: tuple[int, int, int] = (3, 32, 32),
        num_classes: int = 2,
        seed: int = 0,
        *,
        train: bool = True,
        signal: float = 1.0,
        cell: int | None = None,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        super().__init__(transform, target_transform)
        size = _positive("size", size)
        num_classes = _positive("num_classes", num_classes)
        if len(image_size) != 3:
            raise ValueError(f"image_size must be (channels, height, width), got {image_size!r}")
        channels, height, width = (_positive("image_size entry", int(d)) for d in image_size)
        step = _positive("cell", cell) if cell is not None else max(1, min(height, width) // 4)
        task = _generator(seed, _TASK_STREAM)
        colours = torch.randn((num_classes, channels), generator=task)
        samples = _generator(seed, _SAMPLE_STREAM[bool(train)])
        rows, cols = -(-height // step), -(-width // step)
        coarse = torch.randint(0, num_classes, (size, rows, cols), generator=samples)
        masks = coarse.repeat_interleave(step, 1).repeat_interleave(step, 2)[:, :height, :width]
        self.targets = masks.contiguous()
        noise = torch.randn((size, channels, height, width), generator=samples)
        self.inputs = signal * colours[self.targets].permute(0, 3, 1, 2) + noise
        self.num_classes = num_classes
        self.image_size = (channels, height, width)


__all__ += ["SyntheticSegmentation"]


class _DictSamples(Dataset[dict[str, torch.Tensor]]):
    """Precomputed samples as dicts of tensors, field by field (as Hugging Face ``datasets``
    yields them with ``set_format("torch")``); a DataLoader batches each field."""

    fields: dict[str, torch.Tensor]

    def __len__(self) -> int:
        return int(next(iter(self.fields.values())).shape[0])

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {name: values[index] for name, values in self.fields.items()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={len(self)}, fields={list(self.fields)})"


class SyntheticMaskedText(_DictSamples):
    """Padded token sequences with attention masks and a class label per sequence:
    ``{"input_ids": int64 (sequence_length,), "attention_mask": int64 (sequence_length,),
    "label": int64 ()}``, the fields and dtypes a Hugging Face tokenizer gives.

    A sequence has a random length in ``[min_length, sequence_length]``; its tokens are
    drawn from its class's own distribution over ``1..vocab_size-1``, the rest is
    ``pad_id`` (0) with mask 0. The label is learnable from the real tokens alone (a
    masked mean of embeddings), and padding carries no signal.
    """

    def __init__(
        self,
        size: int,
        sequence_length: int = 16,
        vocab_size: int = 64,
        num_classes: int = 2,
        seed: int = 0,
        *,
        train: bool = True,
        min_length: int = 2,
        pad_id: int = 0,
    ) -> None:
        size = _positive("size", size)
        length = _positive("sequence_length", sequence_length)
        vocab = _positive("vocab_size", vocab_size)
        classes = _positive("num_classes", num_classes)
        shortest = _positive("min_length", min_length)
        if shortest > length or vocab < 2:
            raise ValueError("need min_length <= sequence_length and vocab_size >= 2")
        task = _generator(seed, _TASK_STREAM)
        preference = torch.softmax(2.0 * torch.randn((classes, vocab - 1), generator=task), -1)
        samples = _generator(seed, _SAMPLE_STREAM[bool(train)])
        labels = torch.randint(0, classes, (size,), generator=samples)
        tokens = torch.multinomial(preference[labels], length, replacement=True, generator=samples)
        lengths = torch.randint(shortest, length + 1, (size,), generator=samples)
        mask = (torch.arange(length)[None, :] < lengths[:, None]).to(torch.int64)
        ids = torch.where(mask.bool(), tokens + 1, torch.full_like(tokens, pad_id))
        self.fields = {"input_ids": ids, "attention_mask": mask, "label": labels}
        self.vocab_size = vocab
        self.num_classes = classes


class SyntheticDenoising(_DictSamples):
    """A denoising (diffusion) task: ``{"image": float32 image_size, "timestep": int64 (),
    "noise": float32 image_size}``, where ``image`` is a clean image noised to step
    ``timestep`` of a linear DDPM schedule of ``timesteps`` steps and ``noise`` the Gaussian
    noise added, the target a model predicts from the image and the timestep.

    Clean images are a few fixed random patterns (``patterns``, by ``seed``), so the noise
    is learnable: ``image = sqrt(abar_t) * clean + sqrt(1 - abar_t) * noise``.
    """

    def __init__(
        self,
        size: int,
        image_size: tuple[int, ...] = (1, 16, 16),
        timesteps: int = 100,
        seed: int = 0,
        *,
        train: bool = True,
        patterns: int = 4,
    ) -> None:
        size = _positive("size", size)
        steps = _positive("timesteps", timesteps)
        shape = tuple(_positive("image_size entry", int(d)) for d in image_size)
        task = _generator(seed, _TASK_STREAM)
        clean_set = torch.randn((_positive("patterns", patterns), *shape), generator=task)
        samples = _generator(seed, _SAMPLE_STREAM[bool(train)])
        clean = clean_set[torch.randint(0, len(clean_set), (size,), generator=samples)]
        t = torch.randint(0, steps, (size,), generator=samples)
        noise = torch.randn((size, *shape), generator=samples)
        alpha_bar = torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, steps), 0)[t]
        scale = alpha_bar.reshape(-1, *([1] * len(shape)))
        image = scale.sqrt() * clean + (1.0 - scale).sqrt() * noise
        self.fields = {"image": image, "timestep": t, "noise": noise}
        self.timesteps = steps


__all__ += ["SyntheticDenoising", "SyntheticMaskedText"]


# ---------------------------------------------------------------- real data

_DATA_EXTRA = "pip install 'aurane[data]'"


def _need(module: str) -> Any:
    """Import an optional data package, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"{module} is needed to read this data: {_DATA_EXTRA}") from error


def table_format(path: str) -> str:
    """ "csv" or "parquet", from the file name (the checker reads the same rule)."""
    lowered = str(path).lower()
    if lowered.endswith((".csv", ".csv.gz", ".tsv")):
        return "csv"
    if lowered.endswith((".parquet", ".pq")):
        return "parquet"
    raise ValueError(f"{path!r}: a table must be a .csv, .tsv or .parquet file")


class Table(_TensorPairs):
    """Rows of a CSV or Parquet file: the ``inputs`` columns as a float32 ``(len(inputs),)``
    sample, the ``target`` column as int64 class labels when ``classes`` is given (a
    scalar per row, checked to lie in ``[0, classes)``), else float32 ``(1,)`` values.

    The file is read once, only the named columns (pandas; Parquet through pyarrow).
    """

    def __init__(
        self,
        path: str,
        inputs: list[str] | tuple[str, ...] | str,
        target: str,
        classes: int | None = None,
        *,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        super().__init__(transform, target_transform)
        pandas = _need("pandas")
        names = [inputs] if isinstance(inputs, str) else list(inputs)
        if not names or not all(isinstance(n, str) for n in names):
            raise ValueError(f"inputs must name one or more columns, got {inputs!r}")
        wanted = [*names, target]
        if table_format(path) == "csv":
            sep = "\t" if str(path).lower().endswith(".tsv") else ","
            header = list(pandas.read_csv(path, sep=sep, nrows=0).columns)
            _columns_present(path, wanted, header)
            frame = pandas.read_csv(path, sep=sep, usecols=wanted)
        else:
            _need("pyarrow")
            parquet = _need("pyarrow.parquet")
            _columns_present(path, wanted, list(parquet.read_schema(path).names))
            frame = pandas.read_parquet(path, columns=wanted)
        try:
            self.inputs = torch.tensor(frame[names].to_numpy(dtype="float32"))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: input columns {names} are not all numeric") from error
        column = frame[target]
        if classes is not None:
            classes = _positive("classes", classes)
            labels = torch.tensor(column.to_numpy(dtype="int64"))
            if len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= classes):
                raise ValueError(f"{path}: target {target!r} has labels outside [0, {classes})")
            self.targets = labels
        else:
            self.targets = torch.tensor(column.to_numpy(dtype="float32")).reshape(-1, 1)
        self.columns = names
        self.num_classes = classes


def _columns_present(path: str, wanted: list[str], header: list[str]) -> None:
    missing = [name for name in wanted if name not in header]
    if missing:
        raise ValueError(f"{path}: no column {missing[0]!r} (columns: {', '.join(header)})")


__all__ += ["Table"]


# ---------------------------------------------------------------- tokenized text

TOKENS_FORMAT = "aurane-tokens-1"
_TOKEN_META_BYTES = 1 << 16  # the checker's bound on the sidecar, too


def _token_dtype(vocab_size: int) -> str:
    return "uint16" if vocab_size <= 1 << 16 else "uint32"


def prepare_tokens(
    texts: list[str] | tuple[str, ...] | str,
    tokenizer: str,
    out: str,
    *,
    lines_per_batch: int = 1024,
) -> dict[str, Any]:
    """Tokenize text files into one flat token file (``out``: uint16 ids when the
    vocabulary fits, else uint32), as nanoGPT's prepare.py, plus the sidecar
    ``out + ".json"`` (format, dtype, vocab_size, tokens) that ``check`` and ``TokenFile``
    read. ``tokenizer`` is a Hugging Face ``tokenizer.json``, or ``tiktoken:NAME`` for one
    of tiktoken's encodings (``tiktoken:gpt2``, as nanoGPT; tiktoken fetches its table into
    its cache the first time). Text is encoded a batch of lines at a time, so memory stays
    bounded by ``lines_per_batch``; returns the sidecar's contents."""
    import itertools
    import json

    numpy = _need("numpy")
    vocab, encode = _text_encoder(tokenizer)
    dtype = _token_dtype(vocab)
    count = 0
    with open(out, "wb") as sink:
        for text in [texts] if isinstance(texts, str) else texts:
            with open(text, encoding="utf-8") as source:
                while batch := list(itertools.islice(source, lines_per_batch)):
                    for line in encode(batch):
                        ids = numpy.asarray(line, dtype=dtype)
                        sink.write(ids.tobytes())
                        count += int(ids.size)
    meta = {"format": TOKENS_FORMAT, "dtype": dtype, "vocab_size": vocab, "tokens": count}
    with open(str(out) + ".json", "w", encoding="utf-8") as handle:
        json.dump(meta, handle)
    return meta


def _text_encoder(tokenizer: str) -> tuple[int, Callable[[list[str]], list[list[int]]]]:
    """(vocabulary size, lines -> their ids) of a ``tokenizer.json`` or ``tiktoken:NAME``;
    no special tokens are added (a flat stream, as nanoGPT's prepare.py)."""
    name = str(tokenizer)
    if name.startswith("tiktoken:"):
        encoding = _need("tiktoken").get_encoding(name.removeprefix("tiktoken:"))
        return int(encoding.n_vocab), encoding.encode_ordinary_batch
    encoder = _need("tokenizers").Tokenizer.from_file(name)

    def encode(lines: list[str]) -> list[list[int]]:
        return [e.ids for e in encoder.encode_batch(lines, add_special_tokens=False)]

    return int(encoder.get_vocab_size(with_added_tokens=True)), encode


def read_token_meta(path: str) -> dict[str, Any]:
    """The sidecar of a token file, validated (bounded read; JSON only)."""
    import json

    with open(str(path) + ".json", "rb") as handle:
        data = handle.read(_TOKEN_META_BYTES + 1)
    if len(data) > _TOKEN_META_BYTES:
        raise ValueError(f"{path}.json is larger than {_TOKEN_META_BYTES} bytes")
    meta = json.loads(data.decode("utf-8"))
    if (
        not isinstance(meta, dict)
        or meta.get("format") != TOKENS_FORMAT
        or meta.get("dtype") not in ("uint16", "uint32")
        or not isinstance(meta.get("vocab_size"), int)
        or not isinstance(meta.get("tokens"), int)
    ):
        raise ValueError(f"{path}.json is not a token file sidecar ({TOKENS_FORMAT})")
    return meta


class TokenFile(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Fixed-length windows of a token file that ``prepare_tokens`` wrote, memory-mapped
    (nothing is loaded up front): sample ``i`` is tokens ``[i*L, i*L + L)`` as int64
    ``(sequence_length,)``, its target the same window shifted by one (next tokens,
    ``< vocab_size``). Windows do not overlap; the loader's ``shuffle`` orders them."""

    def __init__(
        self,
        path: str,
        sequence_length: int,
        vocab_size: int | None = None,
        *,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        import os

        numpy = _need("numpy")
        meta = read_token_meta(path)
        self.length = _positive("sequence_length", sequence_length)
        self.vocab_size = int(meta["vocab_size"])
        if vocab_size is not None and vocab_size != self.vocab_size:
            raise ValueError(
                f"{path}: vocab_size {vocab_size} given, the file has {self.vocab_size}"
            )
        itemsize = 2 if meta["dtype"] == "uint16" else 4
        if os.path.getsize(path) != meta["tokens"] * itemsize:
            raise ValueError(f"{path}: size does not match its sidecar ({meta['tokens']} tokens)")
        self.tokens: Any = (
            numpy.memmap(path, dtype=meta["dtype"], mode="r") if meta["tokens"] else []
        )
        self.windows = max(0, (int(meta["tokens"]) - 1) // self.length)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return self.windows

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        if not -self.windows <= index < self.windows:
            raise IndexError(index)
        start = (index % self.windows) * self.length
        chunk = torch.from_numpy(self.tokens[start : start + self.length + 1].astype("int64"))
        item: Any = chunk[:-1]
        target: Any = chunk[1:]
        if self.transform is not None:
            item = self.transform(item)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return item, target

    def __repr__(self) -> str:
        return f"TokenFile(windows={self.windows}, sequence_length={self.length})"


__all__ += ["TokenFile", "prepare_tokens"]


# ---------------------------------------------------------------- Hugging Face datasets

# one literal: --standalone copies a module-level name's defining statement only
_HF_BUILDERS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "json",
}


class HFDataset(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Rows of a Hugging Face dataset, as ``Table``: a folder written by ``save_to_disk``
    (a ``DatasetDict``'s ``split``, default "train"), or a local CSV, Parquet or JSON-lines
    file (``datasets.load_dataset``; its cache in ``cache_dir``). ``inputs`` columns give a
    float32 ``(len(inputs),)`` sample; ``target`` int64 labels when ``classes`` is given or
    the column is a ``ClassLabel`` (its class count), else float32 ``(1,)``. Rows stay in
    Arrow's memory-mapped files and are read one at a time; nothing is downloaded."""

    def __init__(
        self,
        path: str,
        inputs: list[str] | tuple[str, ...] | str,
        target: str,
        classes: int | None = None,
        split: str | None = None,
        *,
        cache_dir: str | None = None,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        import os

        datasets = _need("datasets")
        names = [inputs] if isinstance(inputs, str) else list(inputs)
        if os.path.isdir(path):
            loaded = datasets.load_from_disk(path)
            if isinstance(loaded, datasets.DatasetDict):
                chosen = split or "train"
                if chosen not in loaded:
                    raise ValueError(f"{path}: no split {chosen!r} (splits: {', '.join(loaded)})")
                loaded = loaded[chosen]
        else:
            suffix = os.path.splitext(str(path))[1].lower()
            builder = _HF_BUILDERS.get(suffix)
            if builder is None:
                raise ValueError(f"{path!r}: a saved dataset folder or a .csv/.parquet/.jsonl file")
            options = {"delimiter": "\t"} if suffix == ".tsv" else {}
            loaded = datasets.load_dataset(
                builder,
                data_files=str(path),
                split=split or "train",
                cache_dir=cache_dir,
                **options,
            )
        _columns_present(path, [*names, target], list(loaded.column_names))
        feature = loaded.features[target]
        if classes is None and isinstance(feature, datasets.ClassLabel):
            classes = int(feature.num_classes)
        self.num_classes = None if classes is None else _positive("classes", classes)
        self.rows = loaded.select_columns([*names, target])
        self.columns = names
        self.target = target
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        row = self.rows[index]
        item: Any = torch.tensor([float(row[name]) for name in self.columns])
        if self.num_classes is not None:
            label = int(row[self.target])
            if not 0 <= label < self.num_classes:
                raise ValueError(f"row {index}: label {label} outside [0, {self.num_classes})")
            target: Any = torch.tensor(label)
        else:
            target = torch.tensor([float(row[self.target])])
        if self.transform is not None:
            item = self.transform(item)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return item, target

    def __repr__(self) -> str:
        return f"HFDataset(rows={len(self)}, inputs={self.columns}, target={self.target!r})"


__all__ += ["HFDataset"]


# ---------------------------------------------------------------- webdataset shards


def _shard_paths(urls: list[str] | tuple[str, ...] | str) -> list[str]:
    import glob

    patterns = [urls] if isinstance(urls, str) else list(urls)
    paths: list[str] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
        paths += found
    if not paths:
        raise ValueError(f"no shards match {urls!r}")
    return paths


def _decode_array(data: bytes, where: str) -> torch.Tensor:
    import io

    numpy = _need("numpy")
    array = numpy.load(io.BytesIO(data), allow_pickle=False)  # never unpickles
    if array.dtype.kind == "f":
        return torch.from_numpy(array.astype("float32"))
    if array.dtype.kind in "iub":
        return torch.from_numpy(array.astype("int64"))
    raise ValueError(f"{where}: an array of {array.dtype} is not numeric")


def _decode_number(data: bytes, where: str) -> float:
    try:
        return float(data.decode("utf-8").strip())
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"{where}: not a number") from None


class Shards(torch.utils.data.IterableDataset[tuple[torch.Tensor, torch.Tensor]]):
    """Samples streamed from webdataset tar shards (files ``KEY.EXT`` grouped by key), for
    data larger than memory: ``inputs`` is the extension of a ``.npy`` array member
    (loaded without pickle; float arrays as float32, integer as int64), ``target`` of a
    number as text (``cls``): int64 labels when ``classes`` is given, else float32 ``(1,)``.

    Shards are read in order, one sample at a time. ``state_dict()`` is the position (shard,
    samples done in it); ``load_state_dict`` resumes there without reading the earlier
    shards. A finished pass starts the next at the beginning. The loader cannot shuffle a
    stream: shuffle the samples when writing the shards. With loader workers, worker ``i`` of
    ``n`` reads the shards whose index is ``i`` modulo ``n`` (write at least as many shards
    as workers), so each sample still comes once a pass."""

    def __init__(
        self,
        urls: list[str] | tuple[str, ...] | str,
        inputs: str = "npy",
        target: str = "cls",
        classes: int | None = None,
        *,
        transform: Transform = None,
        target_transform: Transform = None,
    ) -> None:
        super().__init__()
        self.paths = _shard_paths(urls)
        self.inputs = inputs
        self.target = target
        self.num_classes = None if classes is None else _positive("classes", classes)
        self.transform = transform
        self.target_transform = target_transform
        self.shard = 0
        self.done = 0  # samples of self.shard already yielded
        self._length: int | None = None

    def state_dict(self) -> dict[str, int]:
        return {"shard": self.shard, "sample": self.done}

    def load_state_dict(self, state: dict[str, int]) -> None:
        shard, done = int(state["shard"]), int(state["sample"])
        if not 0 <= shard <= len(self.paths) or done < 0:
            raise ValueError(f"no position {state!r} in {len(self.paths)} shards")
        self.shard, self.done = shard, done

    def __len__(self) -> int:
        """Samples in all shards, counted once from the tar headers (no data read)."""
        if self._length is None:
            import tarfile

            keys = set()
            for index, path in enumerate(self.paths):
                with tarfile.open(path, "r:") as archive:
                    for member in archive:
                        stem, _, ext = member.name.rpartition("/")[2].partition(".")
                        if ext == self.inputs:
                            keys.add((index, stem))
            self._length = len(keys)
        return self._length

    def __iter__(self) -> Any:
        tariterators = _need("webdataset.tariterators")
        first, skip = self.shard, self.done
        worker = torch.utils.data.get_worker_info()  # each loader worker reads its own shards
        workers, me = (1, 0) if worker is None else (worker.num_workers, worker.id)
        for index in range(first, len(self.paths)):
            if index % workers != me:
                continue
            path = self.paths[index]
            with open(path, "rb") as stream:
                members = tariterators.tar_file_iterator(stream)
                files = ({**member, "__url__": path} for member in members)
                for count, sample in enumerate(tariterators.group_by_keys(files)):
                    if index == first and count < skip:
                        continue
                    self.shard, self.done = index, count + 1
                    yield self._decode(sample, f"{path}: {sample.get('__key__')}")
            self.shard, self.done = index + 1, 0
        self.shard, self.done = 0, 0

    def _decode(self, sample: dict[str, Any], where: str) -> tuple[Any, Any]:
        for ext in (self.inputs, self.target):
            if ext not in sample:
                raise ValueError(f"{where}: no .{ext} member")
        item: Any = _decode_array(sample[self.inputs], where)
        value = _decode_number(sample[self.target], where)
        target: Any
        if self.num_classes is not None:
            if value != int(value) or not 0 <= value < self.num_classes:
                raise ValueError(f"{where}: label {value} outside [0, {self.num_classes})")
            target = torch.tensor(int(value))
        else:
            target = torch.tensor([value], dtype=torch.float32)
        if self.transform is not None:
            item = self.transform(item)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return item, target


__all__ += ["Shards"]
