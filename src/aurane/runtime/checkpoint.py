"""Checkpoints: atomic writes, fingerprints, and a load that refuses what it cannot resume.

A checkpoint is a plain dict of tensors, numbers, strings and containers, so it loads with
``torch.load(weights_only=True)``; ``last.pt`` is always a complete old or a complete new file.

``last.pt`` is the commit record of an epoch (K-CKPT): each file is written whole beside its
name and renamed over it, and an epoch's other files (``epoch_NNNN.pt``, ``best.pt``, the
history files) are all in place before its ``last.pt`` is. A SIGKILL at any instruction
therefore leaves every file ``last.pt``'s epoch needs; at worst some of the next epoch's
files are already written, and the resumed run, which trains that epoch again, writes them
again. The temporary files a kill leaves (``NAME.tmp``) are removed by the next run
(``remove_leftovers``, called once it holds the folder's lock).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as dist

from aurane.runtime.distributed import is_main_process, log
from aurane.runtime.faults import fault_point

CHECKPOINT_FORMAT = "aurane-checkpoint-2"
# Format 1 (before step positions): resumed at its epoch boundary, as it was written.
READABLE_FORMATS = ("aurane-checkpoint-1", CHECKPOINT_FORMAT)
# What every checkpoint holds besides "format", "kind" and the job's own entries.
CHECKPOINT_ENTRIES = (
    "job",
    "versions.aurane",
    "versions.torch",
    "fingerprint.model",
    "fingerprint.config",
    "epoch",
    "history",
    "rng.python",
    "rng.numpy",
    "rng.torch",
    "rng.cuda",
    "rng.loaders",
)
# What a format-2 checkpoint also holds: the step count and step rows, the run's length, a
# position in the middle of an epoch (None at an epoch's end), the seconds and sessions.
STEP_ENTRIES = (
    "steps.count",
    "steps.rows",
    "budget.epochs",
    "budget.max_steps",
    "budget.accumulate",
    "budget.batches_per_epoch",
    "budget.steps",
    "partial",
    "elapsed",
    "sessions",
)
NUMPY_ENTRIES = tuple(f"rng.numpy.{key}" for key in ("keys", "position", "has_gauss", "cached"))
# What a run writes through ``save_file`` into its checkpoint folder (besides epoch_NNNN.pt):
# a leftover ``NAME.tmp`` of these is a killed run's.
RUN_FILES = ("last.pt", "best.pt", "metrics.csv", "metrics.jsonl", "metrics.png", "config.json")


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: missing, unreadable, incomplete or another job's."""


class CheckpointMissing(CheckpointError, FileNotFoundError):
    """``--resume`` names no checkpoint file (none written yet, or a wrong path)."""


def fingerprint(config: dict[str, Any], *models: torch.nn.Module) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: parameter layout and training configuration."""
    layout = [
        (name, tuple(tensor.shape), str(tensor.dtype))
        for model in models
        for name, tensor in model.state_dict().items()
    ]
    return {"model": hashlib.sha256(repr(layout).encode()).hexdigest(), "config": config}


def save_file(path: str, payload: Any) -> None:
    """Write atomically: a temporary file in the same folder, fsync, then os.replace."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    temporary = path + ".tmp"
    point = os.path.basename(path)
    point = "epoch_NNNN.pt" if _is_epoch_file(point) else point
    try:
        with open(temporary, "wb") as handle:
            fault_point(point + ":opened")
            if isinstance(payload, bytes):
                handle.write(payload)
            else:
                torch.save(payload, handle)
            fault_point(point + ":written")  # part of it may still be in the buffer
            handle.flush()
            os.fsync(handle.fileno())
        fault_point(point + ":synced")
        os.replace(temporary, path)
    except BaseException:  # an error or a second Ctrl-C: leave no partial file behind
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    fault_point(point + ":replaced")
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable (POSIX)
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def save_checkpoints(
    folder: str, checkpoint: dict[str, Any], *, best: bool = False, every: int | None = None
) -> None:
    """epoch_NNNN.pt every ``every`` epochs, best.pt on improvement, then last.pt, which
    commits the epoch: the others are in place before it (see the module's docstring). A
    checkpoint in the middle of an epoch (its ``partial`` entry) is last.pt alone."""
    if is_main_process():
        epoch = checkpoint["epoch"]
        within = checkpoint.get("partial") is not None
        if every is not None and epoch > 0 and epoch % every == 0 and not within:
            save_file(os.path.join(folder, f"epoch_{epoch:04d}.pt"), checkpoint)
        if best and not within:
            save_file(os.path.join(folder, "best.pt"), checkpoint)
        save_file(os.path.join(folder, "last.pt"), checkpoint)
    if dist.is_initialized():
        dist.barrier()  # no rank runs ahead of a checkpoint it might need to resume from


def remove_leftovers(folder: str) -> list[str]:
    """Remove the temporary files a killed run left in ``folder`` (call it holding the
    folder's lock, so no live run is writing them); returns their names."""
    removed = []
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    for name in names:
        written = name.removesuffix(".tmp")
        if written == name or not (written in RUN_FILES or _is_epoch_file(written)):
            continue  # not a temporary file of ours
        try:
            os.remove(os.path.join(folder, name))
        except FileNotFoundError:
            continue
        removed.append(name)
    return removed


def _is_epoch_file(name: str) -> bool:
    """``epoch_NNNN.pt``: epoch_0002.pt, epoch_12345.pt."""
    number = name.removeprefix("epoch_").removesuffix(".pt")
    return name == f"epoch_{number}.pt" and len(number) >= 4 and number.isdigit()


def load_checkpoint(
    path: str,
    kind: str,
    expected: dict[str, Any],
    versions: dict[str, str],
    entries: Sequence[str],
) -> dict[str, Any]:
    """Load with weights_only=True; refuse an incomplete checkpoint or one of another job.

    ``entries`` are the job's own (dotted) entries, checked with those every job saves, so
    a missing one is named instead of surfacing as a bare KeyError during the resume.
    """
    if os.path.isdir(path):
        path = os.path.join(path, "last.pt")
    if not os.path.isfile(path):
        raise CheckpointMissing(f"cannot resume: no checkpoint at {path!r}")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        message = f"cannot resume from {path!r}: not a readable checkpoint ({error})"
        raise CheckpointError(message) from None
    if not isinstance(checkpoint, dict):
        raise CheckpointError(f"cannot resume from {path!r}: not an Aurane checkpoint")
    if checkpoint.get("format") not in READABLE_FORMATS:
        raise CheckpointError(
            f"cannot resume from {path!r}: not an Aurane checkpoint "
            f"(format {checkpoint.get('format')!r}, expected {CHECKPOINT_FORMAT!r})"
        )
    _check_entries(path, checkpoint, ("kind",))
    if checkpoint["kind"] != kind:
        found = checkpoint["kind"]
        raise CheckpointError(f"cannot resume from {path!r}: a {found} checkpoint, not {kind}")
    _check_entries(path, checkpoint, (*CHECKPOINT_ENTRIES, *entries))
    if checkpoint["format"] == CHECKPOINT_FORMAT:
        _check_entries(path, checkpoint, STEP_ENTRIES)
    if checkpoint["rng"]["numpy"] is not None:
        _check_entries(path, checkpoint, NUMPY_ENTRIES)
    _check_fingerprint(path, checkpoint["fingerprint"], expected)
    written = checkpoint["versions"]
    if (written["aurane"], written["torch"]) != (versions["aurane"], versions["torch"]):
        log(
            f"note: {path!r} was written by aurane {written['aurane']} with torch "
            f"{written['torch']}; this is aurane {versions['aurane']} with torch "
            f"{versions['torch']}, so the resumed run may differ from an uninterrupted one"
        )
    return checkpoint


def _check_fingerprint(path: str, saved: dict[str, Any], now: dict[str, Any]) -> None:
    if saved["model"] != now["model"]:
        raise CheckpointError(
            f"cannot resume from {path!r}: it was written for a different model "
            "(parameter names, shapes or dtypes differ)"
        )
    new, old = now["config"], saved["config"]
    changed = [key for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]
    if changed:
        details = "; ".join(
            f"{key}: checkpoint {old.get(key)!r}, now {new.get(key)!r}" for key in changed
        )
        raise CheckpointError(
            f"cannot resume from {path!r}: the training configuration differs ({details})"
        )


def _check_entries(path: str, checkpoint: dict[str, Any], names: Sequence[str]) -> None:
    """Refuse a checkpoint without one of ``names``; "rng.torch" is checkpoint["rng"]["torch"]."""
    for name in names:
        value: Any = checkpoint
        parts = name.split(".")
        for depth, part in enumerate(parts):
            if not isinstance(value, dict) or part not in value:
                missing = ".".join(parts[: depth + 1])
                raise CheckpointError(
                    f"cannot resume from {path!r}: the checkpoint has no {missing!r} entry "
                    "(it is incomplete or was edited)"
                )
            value = value[part]
