"""One folder per run under a job's checkpoint folder, and a pointer to the latest.

A job's ``checkpoint_dir`` holds its runs: ``run_0001``, ``run_0002``, ... (or a name given
with ``--run NAME``), each with its checkpoints, history files and ``config.json``, and
``latest``, a symbolic link to the run most recently started or continued (a one-line text
file naming it where links cannot be made). A new run never writes into another run's
folder, so a second run of a program leaves every file of the first as it was.

- The next number is taken with ``os.mkdir``, which fails if the name exists: two runs
  starting in the same instant get two folders.
- ``latest`` is replaced whole (a new link renamed over it), after the run's first
  checkpoint is in place, so it always names a run that can be resumed.
- ``--resume`` without a path continues ``latest``; a run folder, or its ``last.pt``,
  continues that run in place; any other checkpoint file (``best.pt``, ``epoch_0002.pt``,
  another job's) starts a new run from it, so no finished run is ever written over.
- Reusing a run's folder for a new run needs ``--overwrite``: its run files go first.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from aurane.runtime.checkpoint import _is_epoch_file, save_file
from aurane.runtime.faults import fault_point, pid_runs

RUN_PREFIX = "run_"
LATEST = "latest"
CONFIG_NAME = "config.json"
MAX_CONFIG_BYTES = 1 << 20  # a config.json larger than this is not ours: its sessions restart
# What a run writes into its folder (besides epoch_NNNN.pt): --overwrite removes these.
_RUN_NAMES = ("last.pt", "best.pt", "metrics.csv", "metrics.jsonl", "metrics.png", CONFIG_NAME)


class RunFolderError(RuntimeError):
    """A run folder that cannot be used as asked (it exists, or names no run)."""


def _run_number(name: str) -> int | None:
    digits = name.removeprefix(RUN_PREFIX)
    return int(digits) if name.startswith(RUN_PREFIX) and digits.isdigit() else None


def new_run_folder(job_folder: str) -> str:
    """Create ``job_folder``/run_NNNN, the number after the highest there; returns its path."""
    os.makedirs(job_folder, exist_ok=True)
    _remove_dead_pointers(job_folder)
    numbers = [_run_number(name) for name in os.listdir(job_folder)]
    number = max((n for n in numbers if n is not None), default=0) + 1
    while True:
        path = os.path.join(job_folder, f"{RUN_PREFIX}{number:04d}")
        try:
            os.mkdir(path)
        except FileExistsError:  # another run took this number in the same instant
            number += 1
            continue
        fault_point("run:created")
        return path


def named_run_folder(job_folder: str, name: str) -> str:
    """``job_folder``/``name`` (``--run NAME``), created if needed. Whether a run there may
    be written over (``--overwrite``) is decided once its lock is held."""
    if not name or name in (".", "..", LATEST) or os.sep in name or "/" in name:
        raise RunFolderError(f"--run {name!r}: a run name is one folder name, not a path")
    path = os.path.join(job_folder, name)
    os.makedirs(path, exist_ok=True)
    return path


def has_run_files(folder: str) -> bool:
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return any(name in _RUN_NAMES or _is_epoch_file(name) for name in names)


def clear_run_files(folder: str) -> list[str]:
    """Remove a previous run's files from ``folder`` (``--overwrite``); returns their names."""
    removed = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name in _RUN_NAMES or _is_epoch_file(name):
            os.remove(path)
        elif name == "tensorboard" and os.path.isdir(path) and not os.path.islink(path):
            _remove_tree(path)
        else:
            continue
        removed.append(name)
    return removed


def _remove_tree(path: str) -> None:
    """``shutil.rmtree`` without links followed (a standalone program imports no shutil)."""
    for root, folders, files in os.walk(path, topdown=False):
        for name in files:
            os.remove(os.path.join(root, name))
        for name in folders:
            inner = os.path.join(root, name)
            if os.path.islink(inner):
                os.remove(inner)
            else:
                os.rmdir(inner)
    os.rmdir(path)


def latest_run(job_folder: str) -> str | None:
    """The run folder ``latest`` names, or None when there is none (or it names no folder)."""
    pointer = os.path.join(job_folder, LATEST)
    if os.path.islink(pointer):
        name = os.readlink(pointer)
    elif os.path.isfile(pointer):
        with open(pointer, "rb") as handle:
            name = handle.read(4096).decode("utf-8", "replace").strip()
    else:
        return None
    if not name or os.sep in name or "/" in name or name in (".", ".."):
        return None  # not a pointer we wrote
    folder = os.path.join(job_folder, name)
    return folder if os.path.isdir(folder) else None


def resumable_run(job_folder: str) -> str | None:
    """The run ``--resume`` continues: the one ``latest`` names, else (a run killed before
    it could point ``latest`` at itself) the highest-numbered run with a ``last.pt``."""
    latest = latest_run(job_folder)
    if latest is not None and os.path.isfile(os.path.join(latest, "last.pt")):
        return latest
    names = os.listdir(job_folder) if os.path.isdir(job_folder) else []
    runs = sorted((number, name) for name in names if (number := _run_number(name)) is not None)
    for _, name in reversed(runs):
        if os.path.isfile(os.path.join(job_folder, name, "last.pt")):
            return os.path.join(job_folder, name)
    return latest


def point_latest(job_folder: str, run_folder: str) -> None:
    """Make ``job_folder``/latest name ``run_folder``, replacing the pointer whole."""
    name = os.path.basename(os.path.normpath(run_folder))
    if os.path.normpath(os.path.dirname(os.path.normpath(run_folder))) != os.path.normpath(
        job_folder
    ):
        return  # a run continued elsewhere (--resume of another folder): nothing to point at
    pointer = os.path.join(job_folder, LATEST)
    temporary = f"{pointer}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.remove(temporary)
    try:
        os.symlink(name, temporary)
    except (OSError, NotImplementedError):  # no links here (Windows without the privilege)
        save_file(pointer, (name + "\n").encode())
        return
    try:
        fault_point("latest:linked")
        os.replace(temporary, pointer)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


def _remove_dead_pointers(job_folder: str) -> None:
    """``latest.PID.tmp`` links of runs killed while pointing ``latest``."""
    for name in os.listdir(job_folder):
        pid = name.removeprefix(LATEST + ".").removesuffix(".tmp")
        ours = name.startswith(LATEST + ".") and name.endswith(".tmp") and pid.isdigit()
        if ours and not pid_runs(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(job_folder, name))


def resume_target(job_folder: str | None, resume_from: str | bool) -> tuple[str, str | None]:
    """(the checkpoint file to load, the run folder to continue in place, or None: start a
    new run from it). ``True`` is ``--resume`` without a path: the job folder's latest run."""
    if resume_from is True:
        if job_folder is None:
            return "", None  # the caller refuses: the job writes no checkpoints
        resume_from = job_folder
    path = str(resume_from)
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, "last.pt")):
            latest = resumable_run(path)
            if latest is not None:  # a job's folder: its latest run
                return os.path.join(latest, "last.pt"), latest
        # a run's folder, or a checkpoint folder written before run folders existed
        return os.path.join(path, "last.pt"), path
    if os.path.basename(path) == "last.pt":
        return path, os.path.dirname(path) or "."
    return path, None


def read_run_config(folder: str) -> dict[str, Any]:
    """``folder``/config.json as written by ``write_run_config``, or {} (absent, too large,
    not JSON, not an object)."""
    path = os.path.join(folder, CONFIG_NAME)
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            return {}
        with open(path, "rb") as handle:
            found = json.loads(handle.read(MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def write_run_config(folder: str, record: dict[str, Any]) -> str:
    """Write ``folder``/config.json whole (the run's configuration and its sessions)."""
    path = os.path.join(folder, CONFIG_NAME)
    text = json.dumps(record, indent=2, sort_keys=False, default=str) + "\n"
    save_file(path, text.encode())
    return path
