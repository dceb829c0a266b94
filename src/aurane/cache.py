"""Verified compile cache (SPEC §10, RELIABILITY K-CACHE).

A record is one canonical JSON file ``<root>/<key[:2]>/<key>.json`` holding the
key, the full key manifest, the output and the output's SHA-256, and the backend's notes
about it (a block left one class per call, and why) with their own SHA-256, so a cache
hit says what a fresh compile says. A read accepts
a record only if its bytes are exactly the canonical encoding of a record whose
key, manifest and digest all match: a digest alone would accept another entry's
valid bytes, and requiring canonical bytes means any single changed byte is a
miss. Anything else is an ordinary miss, never an exception. No pickle, no
mtime: the key is content only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from aurane.backends.registry import normalize_name
from aurane.fs import atomic_write
from aurane.records import record

# 2: records keep the backend's notes beside the output (1 had the output alone).
CACHE_SCHEMA = 2
ENV_VAR = "AURANE_CACHE_DIR"
DEFAULT_DIRNAME = ".aurane_cache"

_KEY_RE = re.compile(r"[0-9a-f]{64}")
_TEMP_RE = re.compile(r"\.[0-9a-f]{64}\.json\..*\.tmp")
_RECORD_FIELDS = frozenset(
    {"schema", "key", "manifest", "output", "output_sha256", "notes", "notes_sha256"}
)
# O_NOFOLLOW refuses a symlinked record; O_NONBLOCK keeps a FIFO planted in
# its place from hanging the open (it is then rejected as not a regular file).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0)


def _canonical(value: object) -> str:
    # Sorted keys, no whitespace, no NaN: one text per value, stable across
    # processes and PYTHONHASHSEED.
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(
    *,
    compiler_version: str,
    backend: str,
    cache_version: str,
    options: Mapping[str, object],
    source: str,
) -> tuple[str, dict[str, object]]:
    """Return (hex SHA-256 key, manifest); options must be JSON values keyed by str."""
    manifest: dict[str, object] = {
        "schema": CACHE_SCHEMA,
        "compiler_version": compiler_version,
        "backend": normalize_name(backend),
        "cache_version": cache_version,
        "options": {str(k): options[k] for k in sorted(options, key=str)},
        "source_sha256": _sha256(source),
    }
    # Round-trip so the returned manifest equals what a record stores (tuples -> lists).
    text = _canonical(manifest)
    return _sha256(text), json.loads(text)


@record
class CachedEntry:
    """What a hit gives back: the generated output and the backend's notes about it."""

    output: str
    notes: tuple[str, ...] = ()


@record
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    write_failures: int = 0


def _check_key(key: str) -> None:
    # The key becomes a path component: anything but 64 hex digits is a caller bug.
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        raise ValueError(f"cache key must be 64 lowercase hex digits, got {key!r}")


def _resolve_directory(directory: Path | str | None) -> Path:
    # Absolute now, so a later chdir does not move the cache.
    if directory is not None:
        return Path(directory).absolute()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).absolute()
    return Path.cwd() / DEFAULT_DIRNAME


class CompileCache:
    def __init__(self, directory: Path | str | None = None, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.directory = _resolve_directory(directory)
        self.stats = CacheStats()

    def path_for(self, key: str) -> Path:
        _check_key(key)
        return self.directory / key[:2] / f"{key}.json"

    def lookup(self, key: str, manifest: Mapping[str, object]) -> CachedEntry | None:
        """The verified entry for ``key``, or None (a miss) for anything else."""
        path = self.path_for(key)
        entry = self._read(path, key, manifest) if self.enabled else None
        if entry is None:
            self.stats.misses += 1
        else:
            self.stats.hits += 1
        return entry

    def get(self, key: str, manifest: Mapping[str, object]) -> str | None:
        """The output alone of :meth:`lookup`."""
        entry = self.lookup(key, manifest)
        return None if entry is None else entry.output

    def put(
        self,
        key: str,
        manifest: Mapping[str, object],
        output: str,
        notes: Sequence[str] = (),
    ) -> bool:
        """Publish a record atomically; False (never an exception) if it could not be written."""
        path = self.path_for(key)
        if not self.enabled:
            return False
        notes = list(notes)
        try:
            output_digest, notes_digest = _sha256(output), _sha256(_canonical(notes))
        except UnicodeEncodeError:  # lone surrogates: not representable, so not cached
            return False
        record = {
            "schema": CACHE_SCHEMA,
            "key": key,
            "manifest": dict(manifest),
            "output": output,
            "output_sha256": output_digest,
            "notes": notes,
            "notes_sha256": notes_digest,
        }
        payload = _canonical(record).encode("utf-8")
        try:
            self._prepare(path)
            atomic_write(path, payload, keep_mode=False)
        except OSError:
            self.stats.write_failures += 1
            return False
        self.stats.writes += 1
        return True

    def clear(self) -> int:
        """Remove records and stray temp files; only names the cache itself creates are touched."""
        if not self.enabled:
            return 0
        removed = 0
        try:
            shards = [p for p in self.directory.iterdir() if re.fullmatch(r"[0-9a-f]{2}", p.name)]
        except OSError:
            return 0
        for shard in shards:
            if shard.is_symlink() or not shard.is_dir():
                continue
            removed += _clear_shard(shard)
        return removed

    def _read(self, path: Path, key: str, manifest: Mapping[str, object]) -> CachedEntry | None:
        try:
            data = _read_regular(path)
            record = json.loads(data.decode("utf-8"))
            if not _valid_record(record, key, manifest):
                return None
            # Canonical bytes only: a flipped byte that still parses (say, the
            # case of a \u escape) is a different file, hence a miss.
            if _canonical(record).encode("utf-8") != data:
                return None
        except (OSError, ValueError, TypeError, RecursionError):
            return None
        return CachedEntry(record["output"], tuple(record["notes"]))

    def _prepare(self, path: Path) -> None:
        # Make the shard a real directory and clear a directory squatting on the
        # record name; symlinks are removed, never followed, so writes stay inside.
        self.directory.mkdir(parents=True, exist_ok=True)
        shard = path.parent
        for _ in range(2):  # a concurrent writer may create the shard between lstat and mkdir
            try:
                st = os.lstat(shard)
            except FileNotFoundError:
                try:
                    os.mkdir(shard)
                except FileExistsError:
                    continue
                break
            if stat.S_ISDIR(st.st_mode):
                break
            os.unlink(shard)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        elif not stat.S_ISREG(st.st_mode):
            # a FIFO, socket, device or link squatting on the record: the cache owns the
            # name, and the output rule (fs.output_target) would refuse to write over it
            os.unlink(path)


def _read_regular(path: Path) -> bytes:
    # Open the shard without following a link, then the record relative to it,
    # so neither a symlinked shard nor a symlinked record is ever read through.
    dir_fd = os.open(path.parent, _DIR_FLAGS)
    try:
        fd = os.open(path.name, _READ_FLAGS, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(str(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _valid_record(record: object, key: str, manifest: Mapping[str, object]) -> bool:
    if not isinstance(record, dict) or set(record) != _RECORD_FIELDS:
        return False
    schema, output, notes = record["schema"], record["output"], record["notes"]
    return (
        type(schema) is int  # True == 1, so isinstance/== alone would accept `true`
        and schema == CACHE_SCHEMA
        and record["key"] == key
        and isinstance(record["manifest"], dict)
        and _canonical(record["manifest"]) == _canonical(dict(manifest))
        and isinstance(output, str)
        and _sha256(output) == record["output_sha256"]
        and isinstance(notes, list)
        and all(isinstance(note, str) for note in notes)
        and _sha256(_canonical(notes)) == record["notes_sha256"]
    )


def _clear_shard(shard: Path) -> int:
    removed = 0
    try:
        entries = list(shard.iterdir())
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        ours = (name.endswith(".json") and _KEY_RE.fullmatch(name[:-5])) or _TEMP_RE.fullmatch(name)
        if not ours:
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed += 1
        except OSError:
            continue
    with contextlib.suppress(OSError):
        shard.rmdir()  # only succeeds if nothing foreign is left
    return removed
