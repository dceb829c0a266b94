"""Bounded metadata readers for the data files a dataset names (``check`` never loads data).

Each reader looks at headers only: a CSV's first line (at most ``CSV_HEADER_BYTES``, parsed
by the ``csv`` module), a Parquet file's footer (pyarrow's schema reader, which reads the
footer and nothing else), a token file's JSON sidecar (at most ``META_BYTES``). Nothing is
executed or unpickled. Every data file is hostile input: a problem is a ``DataFileError``
that the caller turns into a located diagnostic, never a traceback. pyarrow is imported
here lazily; without it the error names the extra that installs it.
"""

from __future__ import annotations

import csv
import io
import json
import os

CSV_HEADER_BYTES = 1 << 20  # a header line longer than this is refused
META_BYTES = 1 << 16  # a token file's JSON sidecar
DATA_EXTRA = "pip install 'aurane[data]'"


class DataFileError(Exception):
    """A data file that cannot give its metadata; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def table_format(path: str) -> str | None:
    """ "csv" or "parquet" by the file name (the runtime's Table reads the same rule)."""
    lowered = path.lower()
    if lowered.endswith((".csv", ".csv.gz", ".tsv")):
        return "csv"
    if lowered.endswith((".parquet", ".pq")):
        return "parquet"
    return None


def _read_prefix(path: str, limit: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except OSError as error:
        raise DataFileError(f"cannot read '{path}': {error.strerror}", "check the path") from None


def csv_header(path: str) -> list[str]:
    """The column names on a CSV (or TSV) file's first line."""
    if path.lower().endswith(".gz"):
        raise DataFileError(
            f"'{path}' is compressed; check reads only plain CSV headers", "decompress the file"
        )
    data = _read_prefix(path, CSV_HEADER_BYTES)
    line, newline, _ = data.partition(b"\n")
    if not newline and len(data) > CSV_HEADER_BYTES:
        raise DataFileError(
            f"the header line of '{path}' is longer than {CSV_HEADER_BYTES} bytes",
            "give the file a header line of column names",
        )
    try:
        text = line.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataFileError(f"the header of '{path}' is not UTF-8", "save it as UTF-8") from None
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    names = next(csv.reader(io.StringIO(text.rstrip("\r")), delimiter=delimiter), [])
    if not names or not any(name.strip() for name in names):
        raise DataFileError(f"'{path}' has no header line", "put the column names on line 1")
    return names


def parquet_columns(path: str) -> dict[str, str]:
    """Column name -> "int", "float", "bool" or the Arrow type's name, from the footer."""
    try:
        import pyarrow.parquet as parquet
        import pyarrow.types as types
    except ImportError:
        raise DataFileError(f"reading the columns of '{path}' needs pyarrow", DATA_EXTRA) from None
    if not os.path.isfile(path):
        raise DataFileError(f"cannot read '{path}': not a file", "check the path")
    try:
        schema = parquet.read_schema(path)
    except Exception as error:  # pyarrow raises its own error types for a broken footer
        first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise DataFileError(
            f"'{path}' is not a readable Parquet file: {first}", "check the file"
        ) from None
    kinds: dict[str, str] = {}
    for field in schema:
        if types.is_boolean(field.type):
            kinds[field.name] = "bool"
        elif types.is_integer(field.type):
            kinds[field.name] = "int"
        elif types.is_floating(field.type) or types.is_decimal(field.type):
            kinds[field.name] = "float"
        else:
            kinds[field.name] = str(field.type)
    return kinds


def token_meta(path: str) -> dict[str, object]:
    """The JSON sidecar ``<path>.json`` that ``prepare_tokens`` writes beside a token file."""
    meta_path = path + ".json"
    data = _read_prefix(meta_path, META_BYTES)
    if len(data) > META_BYTES:
        raise DataFileError(f"'{meta_path}' is larger than {META_BYTES} bytes", "rewrite it")
    try:
        meta = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise DataFileError(f"'{meta_path}' is not JSON", "run prepare_tokens again") from None
    if not isinstance(meta, dict):
        raise DataFileError(f"'{meta_path}' is not a JSON object", "run prepare_tokens again")
    return meta


HF_INFO_BYTES = 4 << 20  # a saved dataset's dataset_info.json / dataset_dict.json


def _bounded_json(path: str, limit: int) -> object:
    data = _read_prefix(path, limit)
    if len(data) > limit:
        raise DataFileError(f"'{path}' is larger than {limit} bytes", "check the dataset")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise DataFileError(f"'{path}' is not JSON", "save the dataset again") from None


def _feature_kind(feature: object) -> str:
    """ "int", "float", "bool", "class:N" or a description of another feature type."""
    if not isinstance(feature, dict):
        return "a nested feature"
    kind = feature.get("_type")
    if kind == "ClassLabel":
        names = feature.get("names")
        count = len(names) if isinstance(names, list) else feature.get("num_classes")
        return f"class:{count}" if isinstance(count, int) and count > 0 else "int"
    if kind == "Value":
        dtype = str(feature.get("dtype", ""))
        if dtype == "bool":
            return "bool"
        if dtype.startswith(("int", "uint")):
            return "int"
        if dtype.startswith("float"):
            return "float"
        return dtype or "unknown"
    return str(kind or "unknown")


def saved_dataset_columns(path: str, split: str | None) -> dict[str, str] | None:
    """The columns of a dataset saved with ``save_to_disk`` (its ``dataset_info.json``;
    a ``DatasetDict``'s ``dataset_dict.json`` names the splits), or None when ``path`` is
    not a saved dataset."""
    folder = path
    if os.path.isfile(os.path.join(path, "dataset_dict.json")):
        splits = _bounded_json(os.path.join(path, "dataset_dict.json"), HF_INFO_BYTES)
        names = splits.get("splits") if isinstance(splits, dict) else None
        if not isinstance(names, list):
            raise DataFileError(f"'{path}/dataset_dict.json' lists no splits", "save it again")
        chosen = split or "train"
        if chosen not in names:
            shown = ", ".join(str(n) for n in names[:20])
            raise DataFileError(f"'{path}' has no split '{chosen}' (splits: {shown})", "name one")
        folder = os.path.join(path, chosen)
    info_path = os.path.join(folder, "dataset_info.json")
    if not os.path.isfile(info_path):
        return None
    info = _bounded_json(info_path, HF_INFO_BYTES)
    features = info.get("features") if isinstance(info, dict) else None
    if not isinstance(features, dict):
        raise DataFileError(f"'{info_path}' has no features", "save the dataset again")
    return {str(name): _feature_kind(feature) for name, feature in features.items()}


SHARD_MEMBERS = 64  # tar headers read to find the first sample's array
NPY_HEADER_BYTES = 1 << 16


def npy_header(data: bytes, where: str) -> tuple[tuple[int, ...], str]:
    """(shape, "float32" or "int64" as the runtime yields it) from a .npy header: the
    magic, the version, then a dict literal (``ast.literal_eval``: nothing executed)."""
    import ast as pyast
    import struct

    bad = DataFileError(f"{where} is not a .npy array", "write arrays with numpy.save")
    if len(data) < 10 or not data.startswith(b"\x93NUMPY"):
        raise bad
    major = data[6]
    if major == 1:
        size, start = struct.unpack("<H", data[8:10])[0], 10
    elif major in (2, 3) and len(data) >= 12:
        size, start = struct.unpack("<I", data[8:12])[0], 12
    else:
        raise bad
    if size > NPY_HEADER_BYTES or len(data) < start + size:
        raise bad
    try:
        header = pyast.literal_eval(data[start : start + size].decode("latin-1"))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise bad from None
    if not isinstance(header, dict):
        raise bad
    shape, descr = header.get("shape"), header.get("descr")
    if not (isinstance(shape, tuple) and all(type(d) is int and d >= 0 for d in shape)):
        raise bad
    if not isinstance(descr, str) or len(descr) < 2 or descr[1] not in "fiub":
        raise DataFileError(f"{where} holds {descr!r} values, not numbers", "store numbers")
    return shape, "float32" if descr[1] == "f" else "int64"


def first_shard_array(path: str, ext: str) -> tuple[tuple[int, ...], str]:
    """The shape and dtype of the first ``.ext`` array in a tar shard: tar headers (at
    most ``SHARD_MEMBERS``) and that member's .npy header, nothing else."""
    import tarfile

    try:
        with tarfile.open(path, "r:") as archive:
            for _, member in zip(range(SHARD_MEMBERS), archive, strict=False):
                if member.isfile() and member.name.rpartition("/")[2].partition(".")[2] == ext:
                    handle = archive.extractfile(member)
                    if handle is None:
                        break
                    head = handle.read(NPY_HEADER_BYTES + 12)
                    return npy_header(head, f"'{path}': {member.name}")
    except (OSError, tarfile.TarError, EOFError) as error:
        raise DataFileError(
            f"'{path}' is not a readable tar shard: {error}", "check the shard"
        ) from None
    raise DataFileError(
        f"'{path}' has no .{ext} member among its first {SHARD_MEMBERS} files",
        "name the extension the shards store inputs under",
    )
