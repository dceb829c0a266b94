"""What the kill tests check in a checkpoint folder, as source for their driver processes.

``CHECKS`` defines, in a driver that has imported torch:

- ``committed(folder)``: the problems of a folder a SIGKILL left behind, judged against its
  ``last.pt`` (the epoch's commit record): an ``epoch_NNNN.pt`` of a committed epoch missing
  or holding another epoch, a ``best.pt`` behind the best epoch ``last.pt`` records, history
  files missing a committed epoch. Returns ``(epoch of last.pt or -1, [problem, ...])``.
- ``same_folders(folder, reference)``: the problems of a finished folder against an
  uninterrupted run's: other file names (a ``.tmp`` or lock left behind), or a file whose
  content differs (``.pt`` files compared loaded, tensor by tensor, exactly). What records
  the sessions themselves differs by nature and is left out: a checkpoint's ``elapsed``
  (seconds) and ``sessions`` (count), and config.json's content (each session's start).
- ``run_of(job_folder)``: the run folder ``--resume`` would continue (``latest``), or None.
"""

from __future__ import annotations

CHECKS = """
import os
import torch


def _load(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def run_of(job_folder):
    latest = os.path.join(job_folder, "latest")
    if os.path.isdir(latest):
        return os.path.join(job_folder, os.readlink(latest))
    runs = sorted(n for n in os.listdir(job_folder) if n.startswith("run_")) if os.path.isdir(job_folder) else []
    for name in reversed(runs):  # killed before it pointed latest at itself
        if os.path.exists(os.path.join(job_folder, name, "last.pt")):
            return os.path.join(job_folder, name)
    return None


_SESSION_KEYS = ("elapsed", "sessions")


def committed(folder, monitor="val_loss", every=2):
    names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    if "last.pt" not in names:
        return -1, []
    problems = []
    last = _load(os.path.join(folder, "last.pt"))
    if last.get("format") != "aurane-checkpoint-2":
        return -1, ["last: not an Aurane checkpoint"]
    epoch = last["epoch"]
    for number in range(every, epoch + 1, every):
        name = f"epoch_{number:04d}.pt"
        if name not in names:
            problems.append(f"epoch-file: {name} lost (last.pt is at epoch {epoch})")
        elif number > epoch - every and _load(os.path.join(folder, name))["epoch"] != number:
            problems.append(f"epoch-file: {name} holds another epoch")  # the newest, loaded
    rows = last["history"]
    improved = [
        row["epoch"]
        for index, row in enumerate(rows)
        if row[monitor] < min((r[monitor] for r in rows[:index]), default=float("inf"))
    ]
    if improved and "best.pt" not in names:
        problems.append(f"best: best.pt lost (the recorded best is epoch {improved[-1]})")
    elif improved:
        held = _load(os.path.join(folder, "best.pt"))["epoch"]
        if held not in (improved[-1], epoch + 1):  # epoch + 1: written, not yet committed
            problems.append(f"best: best.pt holds epoch {held}, the recorded best is {improved[-1]}")
    if epoch > 0:
        if "metrics.jsonl" not in names:
            problems.append("history: metrics.jsonl lost")
        else:
            with open(os.path.join(folder, "metrics.jsonl")) as handle:
                count = len(handle.read().splitlines())
            if count not in (epoch, epoch + 1):
                problems.append(f"history: metrics.jsonl has {count} rows, last.pt {epoch}")
    return epoch, problems


def _differences(a, b, where, depth=0):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        same = (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and torch.equal(a, b)
        )
        return [] if same else [where]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [where + " (keys)"]
        keys = [key for key in a if not (key in _SESSION_KEYS and depth == 0)]
        return [
            d for key in keys for d in _differences(a[key], b[key], f"{where}.{key}", depth + 1)
        ]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [where + " (length)"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b))
            for d in _differences(x, y, f"{where}[{i}]", depth + 1)
        ]
    return [] if a == b else [where]


def same_folders(folder, reference):
    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
    wanted = sorted(n for n in os.listdir(reference) if os.path.isfile(os.path.join(reference, n)))
    if names != wanted:
        return [f"files {names}, an uninterrupted run has {wanted}"]
    problems = []
    for name in names:
        mine, theirs = os.path.join(folder, name), os.path.join(reference, name)
        if name == "config.json":
            continue  # each session's start time and command
        if name.endswith(".pt"):
            problems += _differences(_load(mine), _load(theirs), name)
        else:
            with open(mine, "rb") as a, open(theirs, "rb") as b:
                if a.read() != b.read():
                    problems.append(name)
    return problems
"""
