"""K-CACHE: hits are byte-identical; every corruption is a miss, then rewritten; no torn records."""

from __future__ import annotations

import builtins
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aurane import cache as cache_mod
from aurane.cache import CACHE_SCHEMA, CachedEntry, CompileCache, cache_key
from tests.conftest import env as child_env

ROUNDS = 100  # RELIABILITY K-CACHE: each corruption kind at least 100 times
TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=300)


def entry(source: str, **overrides: object) -> tuple[str, dict[str, object]]:
    args: dict[str, object] = {
        "compiler_version": "0.1.0",
        "backend": "torch",
        "cache_version": "1",
        "options": {"optimize": 0, "analyze": False},
        "source": source,
    }
    args.update(overrides)
    return cache_key(**args)  # type: ignore[arg-type]


def random_output(rng: random.Random) -> str:
    alphabet = 'abc xyz\n\t"\\{}[]:,é€𝛼\u0000\u001f'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 400)))


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


# --- hits -------------------------------------------------------------------


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(source=TEXT, output=TEXT)
def test_hit_is_byte_identical(tmp_path: Path, source: str, output: str) -> None:
    key, manifest = entry(source)
    assert CompileCache(tmp_path).put(key, manifest, output)
    hit = CompileCache(tmp_path).get(key, manifest)  # a fresh instance: nothing in memory
    assert hit == output
    assert hit is not None and hit.encode("utf-8") == output.encode("utf-8")


def test_missing_record_is_a_miss(tmp_path: Path) -> None:
    key, manifest = entry("x")
    cache = CompileCache(tmp_path)
    assert cache.get(key, manifest) is None
    assert (cache.stats.hits, cache.stats.misses, cache.stats.writes) == (0, 1, 0)
    assert cache.put(key, manifest, "out")
    assert cache.get(key, manifest) == "out"
    assert (cache.stats.hits, cache.stats.misses, cache.stats.writes) == (1, 1, 1)


def test_unencodable_output_is_not_cached(tmp_path: Path) -> None:
    key, manifest = entry("x")
    cache = CompileCache(tmp_path)
    assert cache.put(key, manifest, "lone \ud800 surrogate") is False
    assert cache.get(key, manifest) is None


@pytest.mark.parametrize("bad", ["", "../" + "a" * 61, "A" * 64, "a" * 63, "g" * 64])
def test_malformed_key_is_rejected(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        CompileCache(tmp_path).get(bad, {})
    assert not tmp_path.joinpath("..", "aaaa").exists()


def test_record_layout(tmp_path: Path) -> None:
    key, manifest = entry("src")
    CompileCache(tmp_path).put(key, manifest, "out")
    record = json.loads((tmp_path / key[:2] / f"{key}.json").read_text("utf-8"))
    fields = {"schema", "key", "manifest", "output", "output_sha256", "notes", "notes_sha256"}
    assert set(record) == fields
    assert record["schema"] == CACHE_SCHEMA == 2 and record["key"] == key
    assert record["manifest"] == manifest and record["output"] == "out"
    assert record["output_sha256"] == hashlib.sha256(b"out").hexdigest()
    assert record["notes"] == [] and record["notes_sha256"] == hashlib.sha256(b"[]").hexdigest()


def test_notes_come_back_with_the_output(tmp_path: Path) -> None:
    """A hit says what the compile that wrote it said (a block left one class per call)."""
    key, manifest = entry("src")
    cache = CompileCache(tmp_path)
    notes = ["block 'Stack' at 1:7 stays one class per call: a reason", "second \u00e9 note"]
    assert cache.put(key, manifest, "out", notes)
    assert cache.lookup(key, manifest) == CachedEntry("out", tuple(notes))
    assert cache.get(key, manifest) == "out"
    other, other_manifest = entry("other")
    assert cache.put(other, other_manifest, "out")
    assert cache.lookup(other, other_manifest) == CachedEntry("out", ())


def _rewrite(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    record = json.loads(path.read_text("utf-8"))
    change(record)
    path.write_text(
        json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False), "utf-8"
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(notes=["an invented note"]),  # notes edited, digest kept
        lambda r: r.update(notes=[]),  # notes dropped
        lambda r: r.update(notes=[1]),  # not text
        lambda r: r.update(notes="a note"),  # not a list
        lambda r: r.update(output="other"),  # output edited, digest kept
        lambda r: r.pop("notes"),  # a schema-1 shaped record
    ],
)
def test_a_record_whose_notes_were_edited_is_a_miss(
    tmp_path: Path, change: Callable[[dict[str, Any]], None]
) -> None:
    key, manifest = entry("src")
    cache = CompileCache(tmp_path)
    assert cache.put(key, manifest, "out", ["a note"])
    _rewrite(cache.path_for(key), change)
    assert cache.lookup(key, manifest) is None
    assert cache.get(key, manifest) is None


# --- corruption -------------------------------------------------------------

Corrupt = Callable[[Path, random.Random, "Corpus"], None]


class Corpus:
    """A cache with ROUNDS entries, plus valid records of other keys to swap in."""

    def __init__(self, root: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cache = CompileCache(root / "cache")
        self.outside = root / "outside"
        self.outside.mkdir()
        self.entries = []
        for i in range(ROUNDS):
            output = random_output(self.rng)
            key, manifest = entry(f"model m{i} {seed}")
            self.entries.append((key, manifest, output))


def _truncate(path: Path, rng: random.Random, corpus: Corpus) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: rng.randrange(0, len(data))])


def _flip(path: Path, rng: random.Random, corpus: Corpus) -> None:
    data = bytearray(path.read_bytes())
    data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))


def _non_utf8(path: Path, rng: random.Random, corpus: Corpus) -> None:
    data = bytearray(path.read_bytes())
    at = rng.randrange(len(data) + 1)
    data[at:at] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])
    path.write_bytes(bytes(data))


def _swap_other_key(path: Path, rng: random.Random, corpus: Corpus) -> None:
    # Another entry's valid record: its digest verifies, its key does not.
    key, manifest = entry(f"other {rng.random()}")
    output = path.read_text("utf-8") if rng.random() < 0.5 else random_output(rng)
    other = CompileCache(corpus.outside / "other")
    assert other.put(key, manifest, output)
    shutil.copyfile(other.path_for(key), path)


def _swap_same_key_other_manifest(path: Path, rng: random.Random, corpus: Corpus) -> None:
    # Same file name and key string, different manifest: only the manifest check catches it.
    record = json.loads(path.read_text("utf-8"))
    record["manifest"] = entry("x", compiler_version=f"9.{rng.randrange(99)}")[1]
    path.write_text(json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def _wrong_types(path: Path, rng: random.Random, corpus: Corpus) -> None:
    record = json.loads(path.read_text("utf-8"))
    field = rng.choice(sorted(record))
    choice = rng.randrange(4)
    if choice == 0:
        del record[field]
    elif choice == 1:
        # Anything but the original value with its original type (schema 1 stays valid).
        original = record[field]
        candidates: tuple[object, ...] = (None, 1, True, [], {}, "1", 1.0)
        values = [v for v in candidates if (type(v), v) != (type(original), original)]
        record[field] = rng.choice(values)
    elif choice == 2:
        record["extra"] = 1
    else:
        path.write_text(json.dumps(rng.choice([[record], "record", 1, None])))  # not an object
        return
    path.write_text(json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def _directory(path: Path, rng: random.Random, corpus: Corpus) -> None:
    path.unlink()
    path.mkdir()
    if rng.random() < 0.5:
        (path / "inner.json").write_text("{}")


def _symlink_to_valid(path: Path, rng: random.Random, corpus: Corpus) -> None:
    # Even a link to the very same valid bytes is refused: the cache never follows links.
    target = corpus.outside / f"valid-{rng.random()}.json"
    shutil.copyfile(path, target)
    path.unlink()
    path.symlink_to(target)


def _symlink_outside(path: Path, rng: random.Random, corpus: Corpus) -> None:
    target = corpus.outside / f"precious-{rng.random()}.txt"
    target.write_text("do not overwrite")
    path.unlink()
    path.symlink_to(target if rng.random() < 0.7 else corpus.outside / "dangling")


def _empty(path: Path, rng: random.Random, corpus: Corpus) -> None:
    path.write_bytes(b"" if rng.random() < 0.5 else b" " * rng.randrange(1, 50))


def _fifo(path: Path, rng: random.Random, corpus: Corpus) -> None:
    path.unlink()
    os.mkfifo(path)


def _shard_symlink(path: Path, rng: random.Random, corpus: Corpus) -> None:
    # The shard folder itself replaced by a link to a folder outside holding a valid copy.
    shard = path.parent
    target = corpus.outside / f"shard-{rng.random()}"
    shutil.copytree(shard, target)
    shutil.rmtree(shard)
    shard.symlink_to(target, target_is_directory=True)


KINDS: dict[str, Corrupt] = {
    "truncate": _truncate,
    "flip_byte": _flip,
    "non_utf8": _non_utf8,
    "swap_other_key": _swap_other_key,
    "swap_other_manifest": _swap_same_key_other_manifest,
    "wrong_types": _wrong_types,
    "directory": _directory,
    "symlink_to_valid": _symlink_to_valid,
    "symlink_outside": _symlink_outside,
    "empty": _empty,
    "fifo": _fifo,
    "shard_symlink": _shard_symlink,
}


def outside_snapshot(outside: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(outside)): p.read_bytes()
        for p in sorted(outside.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_corruption_is_a_miss_then_rewritten(tmp_path: Path, kind: str) -> None:
    corpus = Corpus(tmp_path, seed=sum(map(ord, kind)))
    cache, wrong = corpus.cache, 0
    for key, manifest, output in corpus.entries:
        assert cache.put(key, manifest, output)
        path = cache.path_for(key)
        KINDS[kind](path, corpus.rng, corpus)
        before = outside_snapshot(corpus.outside)
        got = cache.get(key, manifest)
        wrong += got is not None and got != output
        assert got is None, f"{kind}: corrupted record was served"
        assert cache.put(key, manifest, output), f"{kind}: rewrite failed"
        assert outside_snapshot(corpus.outside) == before, f"{kind}: wrote through a link"
        assert path.is_file() and not path.is_symlink() and not path.parent.is_symlink()
        assert cache.get(key, manifest) == output
    assert wrong == 0
    assert cache.stats.hits == ROUNDS and cache.stats.misses == ROUNDS
    assert not list(cache.directory.rglob("*.tmp"))


def test_every_single_byte_edit_is_a_miss(tmp_path: Path) -> None:
    # Exhaustive over positions; includes edits that still decode to the same record
    # (hex case in \u escapes, added whitespace), which only the canonical-bytes check catches.
    cache = CompileCache(tmp_path)
    key, manifest = entry("escapes")
    output = 'a\u0000b\u001fc\u007f"\\é'
    assert cache.put(key, manifest, output)
    path = cache.path_for(key)
    good = path.read_bytes()
    assert b"\\u001f" in good
    edits = [good[:i] + bytes([good[i] ^ 0x20]) + good[i + 1 :] for i in range(len(good))]
    edits += [good[:i] + b" " + good[i:] for i in range(len(good) + 1)]
    record = json.loads(good)
    edits += [json.dumps(record, sort_keys=True).encode(), json.dumps(record, indent=1).encode()]
    edits += [good + b"\n", good.replace(b"\\u001f", b"\\u001F")]
    for data in edits:
        path.write_bytes(data)
        assert cache.get(key, manifest) is None
    path.write_bytes(good)
    assert cache.get(key, manifest) == output


def _root_reads_anything(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        with open(probe, "rb"):
            return True
    except PermissionError:
        return False
    finally:
        probe.chmod(0o600)


def test_unreadable_record_chmod(tmp_path: Path) -> None:
    if _root_reads_anything(tmp_path):
        pytest.skip("running with privileges that read mode-000 files; see the simulated test")
    rng, cache = random.Random(7), CompileCache(tmp_path / "c")
    for i in range(ROUNDS):
        key, manifest = entry(f"chmod {i}")
        output = random_output(rng)
        cache.put(key, manifest, output)
        cache.path_for(key).chmod(0)
        assert cache.get(key, manifest) is None
        assert cache.put(key, manifest, output)  # replace needs only the folder writable
        assert cache.get(key, manifest) == output


def test_unreadable_record_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Runs even as root: the OS refuses the open exactly as for a mode-000 file.
    rng, cache = random.Random(8), CompileCache(tmp_path / "c")
    real_open = os.open
    denied: set[str] = set()

    def guarded_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if os.path.basename(str(path)) in denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", guarded_open)
    for i in range(ROUNDS):
        key, manifest = entry(f"perm {i}")
        output = random_output(rng)
        assert cache.put(key, manifest, output)
        denied.add(cache.path_for(key).name)
        assert cache.get(key, manifest) is None
        denied.clear()
        assert cache.put(key, manifest, output)
        assert cache.get(key, manifest) == output


def test_write_failure_is_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key, manifest = entry("x")
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    cache = CompileCache(blocked)
    assert cache.put(key, manifest, "out") is False
    assert cache.get(key, manifest) is None
    assert cache.stats.write_failures == 1

    good = CompileCache(tmp_path / "c")

    def failing_replace(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    assert good.put(key, manifest, "out") is False
    monkeypatch.undo()
    assert not list(good.directory.rglob("*.tmp")), "temp file left behind"
    assert good.get(key, manifest) is None


# --- concurrency ------------------------------------------------------------

SHARED_KEYS = 6


def _big_output(i: int) -> str:
    # Large enough that a non-atomic write would be observable half-done.
    return f"# output {i}\n" + ("x = torch.zeros(3)  # é\n" * (4000 + 997 * i))


def _hammer(directory: str, worker: int, rounds: int) -> int:
    cache, wrong = CompileCache(directory), 0
    rng = random.Random(worker)
    for _ in range(rounds):
        i = rng.randrange(SHARED_KEYS)
        key, manifest = entry(f"shared {i}")
        got = cache.get(key, manifest)
        if got is not None and got != _big_output(i):
            wrong += 1
        cache.put(key, manifest, _big_output(i))
    return wrong


def test_concurrent_writers_leave_only_complete_records(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(8) as pool:
        wrongs = pool.starmap(_hammer, [(str(tmp_path), w, 40) for w in range(8)])
    assert wrongs == [0] * 8
    cache = CompileCache(tmp_path)
    records = sorted(tmp_path.rglob("*.json"))
    assert len(records) == SHARED_KEYS
    for i in range(SHARED_KEYS):
        key, manifest = entry(f"shared {i}")
        assert cache.get(key, manifest) == _big_output(i)
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".json"]


# --- location and disabled cache --------------------------------------------


def test_location_env_explicit_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AURANE_CACHE_DIR", raising=False)
    assert CompileCache().directory == tmp_path / ".aurane_cache"
    monkeypatch.setenv("AURANE_CACHE_DIR", "")
    assert CompileCache().directory == tmp_path / ".aurane_cache"
    monkeypatch.setenv("AURANE_CACHE_DIR", str(tmp_path / "env"))
    cache = CompileCache()
    assert cache.directory == tmp_path / "env"
    assert CompileCache(tmp_path / "explicit").directory == tmp_path / "explicit"
    key, manifest = entry("x")
    cache.put(key, manifest, "out")
    assert (tmp_path / "env" / key[:2] / f"{key}.json").is_file()
    monkeypatch.chdir(tmp_path / "env")  # resolved at construction: a chdir does not move it
    assert cache.get(key, manifest) == "out"
    assert not (tmp_path / ".aurane_cache").exists()


def test_disabled_cache_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "never"
    cache = CompileCache(target, enabled=False)
    key, manifest = entry("x")
    assert cache.put(key, manifest, "out") is False
    assert cache.get(key, manifest) is None
    assert cache.clear() == 0
    assert not target.exists()
    assert cache.stats.writes == 0 and cache.stats.misses == 1


def test_disabled_cache_does_no_io(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = CompileCache(tmp_path / "never", enabled=False)
    key, manifest = entry("x")

    def no_io(*args: object, **kwargs: object) -> None:
        raise AssertionError("disabled cache touched the filesystem")

    with monkeypatch.context() as patch:
        for name in (
            "open",
            "mkdir",
            "makedirs",
            "lstat",
            "stat",
            "replace",
            "rename",
            "unlink",
            "rmdir",
            "scandir",
            "listdir",
            "fsync",
            "mkfifo",
            "symlink",
        ):
            patch.setattr(os, name, no_io)
        patch.setattr(builtins, "open", no_io)
        patch.setattr(tempfile, "mkstemp", no_io)
        patch.setattr(shutil, "rmtree", no_io)
        patch.setattr(Path, "iterdir", no_io)
        assert cache.put(key, manifest, "out") is False
        assert cache.get(key, manifest) is None
        assert cache.clear() == 0
    assert not (tmp_path / "never").exists()


def test_clear_removes_only_cache_files(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    keys = [entry(f"c{i}") for i in range(5)]
    for key, manifest in keys:
        cache.put(key, manifest, "out")
    foreign = tmp_path / keys[0][0][:2] / "notes.txt"
    foreign.write_text("mine")
    (tmp_path / "README").write_text("mine too")
    assert cache.clear() == 5
    assert all(cache.get(k, m) is None for k, m in keys)
    assert foreign.read_text() == "mine" and (tmp_path / "README").is_file()


# --- key --------------------------------------------------------------------


def test_key_changes_with_every_component() -> None:
    base_key, base_manifest = entry("model m: x")
    variants = {
        "compiler_version": entry("model m: x", compiler_version="0.1.1"),
        "backend": entry("model m: x", backend="other"),
        "cache_version": entry("model m: x", cache_version="2"),
        "source": entry("model m: x "),
        "option optimize": entry("model m: x", options={"optimize": 1, "analyze": False}),
        "option analyze": entry("model m: x", options={"optimize": 0, "analyze": True}),
        "option added": entry("model m: x", options={"optimize": 0, "analyze": False, "v": 1}),
        "option removed": entry("model m: x", options={"optimize": 0}),
        "option 0 vs false": entry("model m: x", options={"optimize": False, "analyze": False}),
        "option 0 vs 0.0": entry("model m: x", options={"optimize": 0.0, "analyze": False}),
    }
    keys = {name: key for name, (key, _) in variants.items()}
    assert base_key not in keys.values()
    assert len(set(keys.values())) == len(keys), "two different manifests share a key"
    # Compare as JSON: in Python, {"optimize": False} == {"optimize": 0}.
    base_json = json.dumps(base_manifest, sort_keys=True)
    assert all(json.dumps(m, sort_keys=True) != base_json for _, m in variants.values())


def test_key_ignores_option_order_and_backend_spelling() -> None:
    a = entry("s", options={"a": 1, "b": [1, 2]}, backend="torch")
    b = entry("s", options={"b": (1, 2), "a": 1}, backend="  TORCH ")
    assert a == b
    assert a[1]["schema"] == CACHE_SCHEMA and a[1]["backend"] == "torch"
    assert "s" not in json.dumps(a[1]["source_sha256"])  # the source is hashed, not stored


def test_key_stable_across_hash_seeds() -> None:
    code = (
        "from aurane.cache import cache_key\n"
        "print(cache_key(compiler_version='0.1.0', backend='Torch', cache_version='1',"
        " options={'z': 1, 'a': [1, 'x'], 'm': {'q': None, 'b': 2.5}}, source='model é')[0])"
    )
    expected = cache_key(
        compiler_version="0.1.0",
        backend="Torch",
        cache_version="1",
        options={"m": {"b": 2.5, "q": None}, "a": [1, "x"], "z": 1},
        source="model é",
    )[0]
    for seed in ("0", "1", "4242"):
        env = child_env(PYTHONHASHSEED=seed)
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        assert out.stdout.strip() == expected


def test_no_pickle_or_torch() -> None:
    text = Path(cache_mod.__file__).read_text("utf-8")
    assert "pickle" not in text.replace("No pickle", "") and "import torch" not in text
