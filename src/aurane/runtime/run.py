"""The run around a training loop: run folders, resume, checkpoints (at epoch ends, every N
steps, and at an interrupt), history files, a lock, the step budget, and the summary.

A generated training function builds its model, optimizer and data, then::

    with rt.Run("train_net", epochs=5, config=config, state={...}, loaders=[...],
                checkpoint_dir="./ck", resume_from=resume_from) as run:
        for epoch in run.epochs():
            stats.reset()
            for inputs, targets in run.batches(train_loader, stats):
                ...  # forward, loss, backward, step: written out in the program
            run.end_epoch(epoch, stats.compute("training data"), validation_scores)
        return run.finish(model)

Each run writes into a folder of its own under ``checkpoint_dir`` (``run_0001``, ...; see
``folders``). A step is an optimizer step (``accumulate`` batches). ``batches`` counts steps
and, between steps, does what the budget asks (a step row, a validation, a checkpoint,
the end at ``max_steps``); a signal stops the loop at the next step's end, where the run
writes a checkpoint of the step it is at (model, optimizer, schedule, scaler, every random
state, the epoch's figures so far, the data order's position), from which a resumed run
continues exactly as an uninterrupted one would.

``main`` is the program's entry point: ``--resume [PATH]``, ``--epochs N``,
``--max-steps N``, ``--run NAME`` and ``--overwrite`` for every job; one line and exit status
130 (SIGINT) or 143 (SIGTERM) on an interrupt, no traceback; a checkpoint that cannot be
resumed, a folder another run holds or a run folder that exists is one ``error:`` line and
exit status 1. The lock is released on every way out of a run, a failure before its first
checkpoint included; a signal during a save waits for the save to end (K-RUN).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data import IterableDataset

from aurane.runtime.checkpoint import (
    CHECKPOINT_FORMAT,
    CheckpointError,
    CheckpointMissing,
    fingerprint,
    load_checkpoint,
    remove_leftovers,
    save_checkpoints,
)
from aurane.runtime.contracts import DataMismatch
from aurane.runtime.distributed import finish_distributed, is_main_process, log, set_epoch
from aurane.runtime.faults import send_signal, step_signal
from aurane.runtime.folders import (
    RunFolderError,
    clear_run_files,
    has_run_files,
    latest_run,
    named_run_folder,
    new_run_folder,
    point_latest,
    read_run_config,
    resumable_run,
    resume_target,
    write_run_config,
)
from aurane.runtime.history import log_scalars, plot_history, tensorboard_writer, write_history
from aurane.runtime.lock import RunLockedError, acquire_lock, release_lock
from aurane.runtime.progress import Progress, epoch_line
from aurane.runtime.rng import restore_rng, rng_state
from aurane.runtime.schedule import OVERRIDES, Budget
from aurane.runtime.version import AURANE_VERSION

_SIGNALS = ("SIGINT", "SIGTERM")
_PENDING: list[int] = []  # a signal that arrived while a run was active, handled at a safe point
_ACTIVE: list[Run] = []
# set by ``main`` from the command line: --run NAME, --overwrite
_FOLDER_OPTIONS: dict[str, Any] = {}
_NEVER = math.inf  # a step no event waits for


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM at a safe point; ``str()`` is the one-line report."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


def _on_signal(signum: int, _frame: object) -> None:
    if _ACTIVE and (not _PENDING or _ACTIVE[-1].saving or _ACTIVE[-1].world > 1):
        # stop at the next safe point (the end of a step, or once the save in progress ends);
        # under torchrun a repeated signal is the same stop (a terminal's Ctrl-C reaches the
        # workers and torchrun passes it on again), and torchrun escalates on its own
        _PENDING.append(signum)
        return
    where = f"; {_ACTIVE[-1].where()}" if _ACTIVE else ""
    raise Interrupted(f"interrupted ({signal.Signals(signum).name}){where}", signum)


def _catch_signals() -> dict[int, Any]:
    """Route SIGINT and SIGTERM to ``_on_signal``; returns the handlers it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for name in _SIGNALS:
        number = getattr(signal, name)
        # ``signal.signal`` returns the handler it replaced, so no ``getsignal`` is needed
        # first (each call converts handlers to enums, a dozen Python calls); reinstalling
        # ``_on_signal`` over itself (under ``main``) changes nothing and is not undone later
        replaced = signal.signal(number, _on_signal)
        if replaced is not _on_signal:
            previous[number] = replaced
    return previous


def _resume_command() -> str:
    """How the user started this program (``aurane run`` sets AURANE_RUN_COMMAND)."""
    command = os.environ.get("AURANE_RUN_COMMAND")
    return command or f"python {shlex.quote(sys.argv[0] or 'program.py')}"


def _command_overrides() -> list[str]:
    """The ``--set`` overrides ``aurane run`` compiled into this program (for the header and
    config.json); it passes them in AURANE_RUN_OVERRIDES as a JSON list of strings."""
    try:
        found = json.loads(os.environ.get("AURANE_RUN_OVERRIDES") or "[]")
    except ValueError:
        return []
    return [str(item) for item in found] if isinstance(found, list) else []


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else os.path.abspath(path)


def _skip_batches(iterator: Any, loader: Any, count: int) -> None:
    """Move ``iterator`` past an epoch's first ``count`` batches, as a resumed run must.

    Loading in this process, the batches' indices are skipped without loading them: their
    random transforms drew from this process's generator, whose state the checkpoint holds
    as it was after them. With worker processes the batches are loaded and dropped, so the
    workers' own generators advance exactly as in an uninterrupted run."""
    indices = getattr(iterator, "_sampler_iter", None)
    dataset = getattr(loader, "dataset", None)
    in_process = getattr(loader, "num_workers", 1) == 0
    if in_process and indices is not None and not isinstance(dataset, IterableDataset):
        for _ in range(count):
            next(indices)
        if hasattr(iterator, "_num_yielded"):
            iterator._num_yielded += count
        return
    for _ in range(count):
        next(iterator)


def _stream(loader: Any) -> Any | None:
    """``loader``'s dataset when it is a stream that keeps its own position (``Shards``) and
    is read in this process, where its position at a batch boundary is exact; else None (a
    resume then skips the epoch's first batches by reading them)."""
    dataset = getattr(loader, "dataset", None)
    keeps_position = hasattr(dataset, "state_dict") and hasattr(dataset, "load_state_dict")
    in_process = getattr(loader, "num_workers", 1) == 0
    return (
        dataset if isinstance(dataset, IterableDataset) and keeps_position and in_process else None
    )


def _batch_sizes(loader: Any) -> tuple[int, int] | None:
    """(batch size, the last batch's size) of a DataLoader with a fixed batch size, else None."""
    size = getattr(loader, "batch_size", None)
    sampler = getattr(loader, "sampler", None)
    if not size or sampler is None:
        return None
    try:
        samples = len(sampler)
    except TypeError:
        return None
    last = samples % size
    return size, size if last == 0 or getattr(loader, "drop_last", False) else last


class Run:
    """One training job's run. ``state`` maps checkpoint entries ("model", "optimizer",
    "scheduler", ...) to objects with ``state_dict``/``load_state_dict``. The run's length is
    ``epochs`` and/or ``max_steps`` (or a ``budget`` that also sized the learning-rate
    schedule); ``accumulate`` batches make an optimizer step. Every N steps:
    ``log_every`` a step row, ``eval_every_steps`` a ``validate()`` call,
    ``checkpoint_every_steps`` a checkpoint (last.pt). ``sharded``: a
    ``ShardedCheckpoints`` (``strategy = "fsdp"``) for the model and optimizer."""

    def __init__(
        self,
        job: str,
        *,
        config: dict[str, Any],
        state: dict[str, Any],
        loaders: Sequence[Any],
        epochs: int | None = None,
        kind: str = "train",
        checkpoint_dir: str | None = None,
        resume_from: str | bool | None = None,
        save_best: bool = False,
        checkpoint_every: int | None = None,
        monitor: str = "loss",
        patience: int | None = None,
        min_delta: float = 0.0,
        log_every: int | None = None,
        max_steps: int | None = None,
        accumulate: int = 1,
        budget: Budget | None = None,
        eval_every_steps: int | None = None,
        validate: Callable[[], dict[str, float]] | None = None,
        checkpoint_every_steps: int | None = None,
        sharded: Any = None,
    ) -> None:
        self.job, self.kind = job, kind
        self.state, self.loaders = state, list(loaders)
        self.job_folder, self.folder = checkpoint_dir, checkpoint_dir
        self.resume_from, self.save_best, self.every = resume_from, save_best, checkpoint_every
        self.monitor_key, self.patience, self.min_delta = monitor, patience, min_delta
        self.config = config
        # a budget made by the program sized its learning-rate schedule: the run's length
        # is then part of what a resumed run must match
        self.sized_schedule = budget is not None
        if budget is None:
            first = self.loaders[0] if self.loaders else ()
            budget = Budget(first, epochs=epochs, max_steps=max_steps, accumulate=accumulate)
        self.budget = budget
        self.total = budget.epochs
        self.max_steps = budget.max_steps
        self.accumulate = budget.accumulate
        self._fingerprint: dict[str, Any] | None = None
        self.versions = {"aurane": AURANE_VERSION, "torch": str(torch.__version__)}
        self.history: list[dict[str, Any]] = []
        self.monitor: dict[str, Any] = {"best": float("inf"), "bad_epochs": 0, "stopped": False}
        self.first_epoch, self.epoch, self.saved_epoch = 1, 0, -1
        self.saved_step = -1  # the step of the last checkpoint written
        self.best_epoch: int | None = None
        self.lr: float | None = None
        self.progress: Progress | None = None
        self.lock: str | None = None
        self.saving = False  # a signal now waits for the save to end
        self.handlers: dict[int, Any] = {}
        self.files: list[str] = []
        self.writer: Any = None  # TensorBoard, when installed
        self.world = 1  # processes under torchrun (read when the run starts)
        self.group: Any = None  # the gloo group deciding together when to stop (torchrun)
        # steps: optimizer steps over the whole run; batch: batches of this epoch so far
        self.step, self.batch = 0, 0
        self.stepping, self.share = True, 1.0  # accumulate: this batch ends a step; its weight
        self.log_every, self.eval_every = log_every, eval_every_steps
        self.checkpoint_every_steps, self.validate = checkpoint_every_steps, validate
        # epoch rows carry their step when the job counts in steps
        self.counts_steps = any(
            n is not None for n in (log_every, eval_every_steps, checkpoint_every_steps, max_steps)
        )
        self.step_rows: list[dict[str, Any]] = []
        self.next_event: float = _NEVER
        self.signal_at: tuple[int, int] | None = None
        self.partial: dict[str, Any] | None = None  # a mid-epoch checkpoint being resumed
        self.epoch_rng: Any = None  # the training loader's generator at this epoch's start
        self.loader_index: int | None = None
        self.created = False  # this run made its folder (removed again if it fails at once)
        self.saved_within = False  # the last checkpoint is in the middle of an epoch
        self.sizes: tuple[int, int] | None = None  # (batch size, last batch's) to weigh batches
        self.group_samples = 1  # samples (or batches) in the step being accumulated
        self.elapsed_before, self.sessions = 0.0, 1
        self.resumed: dict[str, Any] | None = None
        self.first_session_epoch = 1
        self.outputs: str | None = None  # ``output``'s folder for a job without checkpoints
        # strategy = "fsdp": a ShardedCheckpoints writing the model and optimizer in DCP
        # folders; ``saves`` counts them in this session (their folders' names)
        self.sharded, self.saves = sharded, 0

    @property
    def fingerprint(self) -> dict[str, Any]:
        """The model graph and training configuration's fingerprint (computed when a
        checkpoint is first written or read: parameter names, shapes and dtypes do not
        change while training)."""
        if self._fingerprint is None:
            models = [v for v in self.state.values() if isinstance(v, torch.nn.Module)]
            self._fingerprint = fingerprint(self.config, *models)
        return self._fingerprint

    # -- entering and leaving ------------------------------------------------------

    def __enter__(self) -> Run:
        self.started_at = time.monotonic()
        if dist.is_initialized():
            self.world = dist.get_world_size()
            # stops are decided together, on the CPU (no device sync) and off DDP's stream
            self.group = dist.new_group(backend="gloo") if dist.get_backend() != "gloo" else None
        try:  # a failure before the with block (no checkpoint to resume) releases the lock too
            self.handlers = _catch_signals()
            _ACTIVE.append(self)
            resume = self._open_folder()
            if resume is not None:
                self._resume(resume)
            if self.folder is not None and is_main_process():
                write_run_config(self.folder, self._run_record(resume))
            if resume is None and self.folder is not None:
                self._save(0, best=False)  # a run killed in its first epoch still leaves last.pt
            if self.folder is not None and self.job_folder is not None and is_main_process():
                point_latest(self.job_folder, self.folder)
        except BaseException:
            self.__exit__()
            raise
        self.signal_at = step_signal()
        self._plan_events()
        self.first_session_epoch = self.first_epoch
        log(self.header())
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        _PENDING.clear()
        for number, handler in self.handlers.items():
            signal.signal(number, handler)
        self.handlers = {}
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.lock is not None:
            release_lock(self.lock)
            self.lock = None
        if self.created and self.saved_epoch < 0 and self.folder is not None:
            with contextlib.suppress(OSError):  # failed before its first checkpoint
                for name in os.listdir(self.folder):
                    if name == "config.json":
                        os.remove(os.path.join(self.folder, name))
                os.rmdir(self.folder)
            self.created = False

    def _open_folder(self) -> str | None:
        """Choose this run's folder (rank 0, shared with the others) and lock it; returns the
        checkpoint to resume from, or None."""
        choice: list[Any] = [None, None, None]
        if is_main_process():
            try:
                choice = [*self._choose_folder(), None]
            except BaseException as error:
                if self.world > 1:  # the other ranks wait for the choice: tell them
                    dist.broadcast_object_list([None, None, str(error)], src=0, group=self.group)
                raise
        if self.world > 1:
            dist.broadcast_object_list(choice, src=0, group=self.group)
            if choice[2] is not None:
                raise RunFolderError(f"rank 0 could not start the run: {choice[2]}")
        checkpoint: str | None = choice[0]
        self.folder = choice[1]
        return checkpoint

    def _choose_folder(self) -> tuple[str | None, str | None]:
        """(checkpoint to resume or None, run folder or None), the folder locked."""
        job, resume = self.job_folder, self.resume_from
        name, overwrite = _FOLDER_OPTIONS.get("run"), bool(_FOLDER_OPTIONS.get("overwrite"))
        if resume is not None and resume is not False:
            if resume is True and job is None:
                raise CheckpointMissing(f"cannot resume {self.job}: it writes no checkpoints")
            checkpoint, folder = resume_target(job, resume)
            if not os.path.isfile(checkpoint):
                where = f"no checkpoint at {checkpoint!r}"
                if resume is True and resumable_run(job or ".") is None:
                    where = f"no run to resume in {job!r} (no checkpoint at {checkpoint!r})"
                raise CheckpointMissing(f"cannot resume: {where}")
            if folder is None and job is not None:  # from another file: a run of its own
                folder = self._new_folder(job, name)
            if folder is not None:
                self._lock(folder)
            return checkpoint, folder
        if job is None:
            return None, None
        if name is None and overwrite:
            folder = latest_run(job)
            if folder is not None:
                name = os.path.basename(folder)
        folder = self._new_folder(job, name)
        self._lock(folder)
        if name is not None and has_run_files(folder):
            if not overwrite:
                raise RunFolderError(
                    f"run folder {_shown(folder)!r} already holds a run; continue it with "
                    f"--resume {_shown(folder)}, write over it with --overwrite, or choose "
                    "another --run name"
                )
            log(f"--overwrite: removed {', '.join(clear_run_files(folder))} from {_shown(folder)}")
        return None, folder

    def _new_folder(self, job: str, name: str | None) -> str:
        if name is None:
            self.created = True
            return new_run_folder(job)
        folder = named_run_folder(job, name)
        self.created = not has_run_files(folder) and not os.listdir(folder)
        return folder

    def _lock(self, folder: str) -> None:
        self.lock = acquire_lock(folder)
        left = remove_leftovers(folder)
        if left:
            log(f"removed what an interrupted run left: {', '.join(left)}")

    def _entries(self) -> list[str]:
        best = ["monitor.best", "monitor.bad_epochs", "monitor.stopped"]
        return [*self.state, *(best if self.kind == "train" else ["best"])]

    def _resume(self, path: str) -> None:
        checkpoint = load_checkpoint(
            str(path), self.kind, self.fingerprint, self.versions, self._entries()
        )
        self._check_length(path, checkpoint.get("budget"))
        partial = checkpoint.get("partial")
        if partial is not None and partial["world_size"] != self.world:
            raise CheckpointError(
                f"cannot resume from {path!r}: it was written in the middle of an epoch by "
                f"{partial['world_size']} process(es), so it resumes with as many (this run has "
                f"{self.world}); an epoch's checkpoint (epoch_NNNN.pt, best.pt) resumes with any"
            )
        self._load_state(path, checkpoint)
        self.history = checkpoint["history"]
        if self.kind == "train":
            self.monitor = checkpoint["monitor"]
        else:
            self.monitor["best"] = checkpoint["best"]
        restore_rng(checkpoint["rng"], self.loaders)
        steps = checkpoint.get("steps")
        if steps is not None:
            self.step, self.step_rows = steps["count"], steps["rows"]
        else:  # format 1 without step rows: every epoch so far had its full count of steps
            self.step = checkpoint["epoch"] * (self.budget.steps_per_epoch or 0)
        self.saved_epoch, self.saved_step = checkpoint["epoch"], self.step
        self.first_epoch = self.saved_epoch + 1
        if partial is not None:
            self.partial, self.first_epoch = partial, partial["epoch"]
        self._epochs_for_remaining_steps()
        self.elapsed_before = float(checkpoint.get("elapsed", 0.0))
        self.sessions = int(checkpoint.get("sessions", 1)) + 1
        best = self.monitor["best"]
        self.best_epoch = next(
            (r["epoch"] for r in self.history if r.get(self.monitor_key) == best), None
        )
        self.resumed = {"from": _shown(path), "epoch": self.saved_epoch, "step": self.step}

    def _epochs_for_remaining_steps(self) -> None:
        """A resumed run sized by ``max_steps``: the epochs the steps still to take need,
        counted from where it resumes (an earlier session's last epoch may have ended early
        at its own ``max_steps``, so ``ceil(max_steps / steps per epoch)`` falls short)."""
        per_epoch = self.budget.steps_per_epoch
        if self.max_steps is None or not per_epoch or self.step >= self.max_steps:
            return
        needed = self.first_epoch - 1 + math.ceil((self.max_steps - self.step) / per_epoch)
        if self.partial is not None:  # the epoch it resumes in counts from its start
            needed = self.first_epoch + math.ceil(
                max(0, self.max_steps - self.step - (per_epoch - self._partial_steps())) / per_epoch
            )
        cap = self.budget.max_epochs
        self.total = max(self.total or 0, needed if cap is None else min(cap, needed))

    def _partial_steps(self) -> int:
        """Optimizer steps already taken in the epoch a mid-epoch checkpoint resumes."""
        assert self.partial is not None
        return math.ceil(int(self.partial["batches"]) / self.accumulate)

    def _load_state(self, path: str, checkpoint: dict[str, Any]) -> None:
        """Each state entry from the checkpoint; a model and optimizer sharded by FSDP
        (this run's or the checkpoint's) through torch.distributed.checkpoint."""
        model, optimizer = self.state.get("model"), self.state.get("optimizer")
        done: set[str] = set()
        if self.sharded is not None:
            file = os.path.join(path, "last.pt") if os.path.isdir(path) else path
            done = self.sharded.load(file, checkpoint, model, optimizer)
        elif any(_names_shards(checkpoint.get(key)) for key in self.state):
            raise CheckpointError(
                f"cannot resume from {path!r}: its model and optimizer are sharded (written "
                f'with strategy = "fsdp"); resume it with a program that sets strategy = '
                f'"fsdp" (in one process or more), or make it an ordinary checkpoint first: '
                f"aurane checkpoint consolidate {shlex.quote(path)} -o model.pt"
            )
        for key, value in self.state.items():
            if key not in done:
                value.load_state_dict(checkpoint[key])

    def _check_length(self, path: str, saved: dict[str, Any] | None) -> None:
        """Refuse to change the length of a run whose learning-rate schedule was sized
        from it: the schedule has ended (or would be cut) where the old length said."""
        now = self.budget.record()
        if not self.sized_schedule or saved is None:
            return
        if (saved["epochs"], saved["max_steps"], saved["steps"]) == (
            now["epochs"],
            now["max_steps"],
            now["steps"],
        ):
            return
        old = saved["steps"] if saved["steps"] is not None else "?"
        new = now["steps"] if now["steps"] is not None else "?"
        length = f"epochs = {now['epochs']}" if now["epochs"] is not None else "max_steps"
        raise CheckpointError(
            f"cannot resume {self.job} from {path!r} with another length ({old} steps before, "
            f"{new} now): its learning-rate schedule was sized for {old} steps and ends there, "
            f"so the steps past it would train at the schedule's final rate; to train longer, "
            f"start a new run planned for the new length ({_resume_command()} with "
            f"{length} set for it, e.g. --set {length.replace(' ', '')}), or give the schedule a "
            "length of its own (T_max, max_steps) to extend it"
        )

    def _run_record(self, resume: str | None) -> dict[str, Any]:
        """config.json: the run's configuration, the command-line overrides and its sessions."""
        assert self.folder is not None
        record = read_run_config(self.folder) if resume is not None else {}
        sessions = record.get("sessions")
        sessions = sessions if isinstance(sessions, list) else []
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        session: dict[str, Any] = {
            "started": stamp,
            "command": _resume_command(),
            "overrides": _command_overrides(),
        }
        if self.resumed is not None:
            session["resumed"] = self.resumed
        return {
            "job": self.job,
            "kind": self.kind,
            "run": os.path.basename(os.path.normpath(self.folder)),
            "overrides": _command_overrides(),
            "training": self.config,
            "budget": self.budget.record(),
            "world_size": self.world,
            "versions": self.versions,
            "sessions": [*sessions, session],
        }

    def header(self) -> str:
        """The run's first lines: its folder, its length and the overrides it was given."""
        where = "no checkpoint folder"
        if self.folder is not None:
            where = f"run {_shown(self.folder)}"
        if self.resumed is not None:
            at = f"epoch {self.first_epoch}, step {self.step}"
            where = f"{where}, resumed at {at} (session {self.sessions})"
        lines = [f"{self.job}: {where} - {self.budget.describe()}"]
        overrides = _command_overrides()
        if overrides:
            lines.append("  set on the command line: " + ", ".join(overrides))
        return "\n".join(lines)

    def checkpoint(
        self,
        epoch: int,
        partial: dict[str, Any] | None = None,
        sharded: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Everything a resume needs, as plain tensors and containers (weights_only loads);
        ``sharded``: the entries written by ``save_sharded`` instead (FSDP)."""
        payload: dict[str, Any] = {
            "format": CHECKPOINT_FORMAT,
            "kind": self.kind,
            "job": self.job,
            "versions": self.versions,
            "fingerprint": self.fingerprint,
            "epoch": epoch,
        }
        sharded = sharded or {}
        payload.update(
            {key: sharded.get(key) or value.state_dict() for key, value in self.state.items()}
        )
        payload["history"] = self.history
        if self.kind == "train":
            payload["monitor"] = self.monitor
        else:
            payload["best"] = self.monitor["best"]
        payload["rng"] = rng_state(self.loaders)
        payload["steps"] = {"count": self.step, "rows": self.step_rows}
        payload["budget"] = self.budget.record()
        payload["partial"] = partial
        payload["elapsed"] = self.elapsed()
        payload["sessions"] = self.sessions
        return payload

    def elapsed(self) -> float:
        """Seconds of training over every session of this run so far."""
        return self.elapsed_before + time.monotonic() - self.started_at

    def _save(self, epoch: int, *, best: bool, partial: dict[str, Any] | None = None) -> None:
        """The epoch's files, last.pt last: it commits them (see ``checkpoint``)."""
        assert self.folder is not None
        self.saving = True
        try:
            if is_main_process() and (self.history or self.step_rows):
                self.files = write_history(self.folder, self.history, self.step_rows)
            sharded = None
            if self.sharded is not None:  # FSDP: every process writes its shards first
                self.saves += 1
                tag = f"step_{self.step:08d}-s{self.sessions}-n{self.saves}"
                model, optimizer = self.state["model"], self.state["optimizer"]
                sharded = self.sharded.save(self.folder, tag, model, optimizer)
            checkpoint = self.checkpoint(epoch, partial, sharded)
            save_checkpoints(self.folder, checkpoint, best=best, every=self.every)
            if self.sharded is not None and is_main_process():
                self.sharded.prune(self.folder)  # the folders no .pt file names any more
            self.saved_epoch, self.saved_step = epoch, self.step
            self.saved_within = partial is not None
        finally:
            self.saving = False
        if is_main_process() and epoch > 0 and partial is None:
            if self.writer is None and epoch == self.first_session_epoch:
                self.writer = tensorboard_writer(self.folder)
            if self.writer is not None:
                log_scalars(self.writer, self.history[-1])

    # -- the loop ------------------------------------------------------------------

    def epochs(self) -> Iterator[int]:
        """The epochs still to run (after a resume: from the one the checkpoint is in)."""
        epoch = self.first_epoch
        while self.total is None or epoch <= self.total:
            if self.monitor["stopped"] or (self.partial is None and self._steps_done()):
                break
            self.epoch, self.epoch_started = epoch, time.monotonic()
            optimizer = self.state.get("optimizer")
            self.lr = optimizer.param_groups[0]["lr"] if optimizer is not None else None
            if self.partial is not None:  # resumed within the epoch: the rate it began with
                self.lr = self.partial["lr"]
            yield epoch
            epoch += 1

    def _steps_done(self) -> bool:
        return self.max_steps is not None and self.step >= self.max_steps

    def batches(self, loader: Any, stats: Any) -> Iterator[Any]:
        """``loader``'s batches for this epoch, with a progress bar. ``stats`` (an
        ``EpochStats``, or a function giving the running loss) is what a checkpoint in the
        middle of the epoch keeps of it. Between steps: the budget's events; at a signal,
        a checkpoint of the step and ``Interrupted``."""
        set_epoch(loader, self.epoch)
        running = getattr(stats, "running_loss", stats)
        label = f"epoch {self.epoch}" + (f"/{self.total}" if self.total is not None else "")
        self.progress = Progress(label, loader, running)
        progress = self.progress
        iterator = self._start_epoch(loader, stats)
        if self._steps_done():  # resumed at max_steps: the epoch only needs its row
            progress.close()
            return
        if self.accumulate == 1:
            for batch in iterator:
                yield batch
                self.batch += 1
                self.step += 1
                busy = self.step >= self.next_event or _PENDING or self.world > 1
                if busy and self._after_step(stats):
                    break
                progress.step()
        else:
            for batch, last in self._with_last(iterator):
                self._plan_batch(last)
                yield batch
                self.batch += 1
                if self.stepping:
                    self.step += 1
                    busy = self.step >= self.next_event or _PENDING or self.world > 1
                    if busy and self._after_step(stats):
                        break
                progress.step()
        progress.close()

    def _start_epoch(self, loader: Any, stats: Any) -> Iterator[Any]:
        """The epoch's iterator: where a mid-epoch checkpoint left it (data order, position,
        the figures so far), or from the start; remembers the order's seed for checkpoints."""
        partial, self.partial = self.partial, None
        generator = getattr(loader, "generator", None)
        self.loader_index = next((i for i, x in enumerate(self.loaders) if x is loader), None)
        self.batch = 0
        if partial is not None:
            if generator is not None and partial["loader"] is not None:
                generator.set_state(partial["loader"])
            if hasattr(stats, "load_state_dict") and partial["stats"] is not None:
                rank = dist.get_rank() if self.world > 1 else 0
                stats.load_state_dict(partial["stats"][rank], self._device())
            self.batch = partial["batches"]
        self.epoch_rng = generator.get_state() if generator is not None else None
        self.sizes = _batch_sizes(loader) if self.accumulate > 1 else None
        skip = self.batch
        stream = _stream(loader)
        if skip and stream is not None and partial is not None and partial.get("stream"):
            stream.load_state_dict(partial["stream"])  # there, without reading what came before
            skip = 0
        iterator: Iterator[Any] = iter(loader)
        if skip:
            _skip_batches(iterator, loader, skip)
        return iterator

    def _device(self) -> torch.device | None:
        model = self.state.get("model")
        parameter = next(model.parameters(), None) if model is not None else None
        return parameter.device if parameter is not None else None

    def _with_last(self, iterator: Iterator[Any]) -> Iterator[tuple[Any, bool]]:
        """(batch, whether it is the epoch's last): from the loader's length, else by
        reading one batch ahead."""
        batches = self.budget.batches
        if batches is not None:
            for batch in iterator:
                yield batch, self.batch + 1 == batches
            return
        ahead = next(iterator, _NEVER)
        while ahead is not _NEVER:
            batch, ahead = ahead, next(iterator, _NEVER)
            yield batch, ahead is _NEVER

    def _plan_batch(self, last: bool) -> None:
        """``stepping``: this batch ends a step (every ``accumulate``-th, and an epoch's
        last); ``share``: its weight in the step's loss, its samples over the step's, so
        ``accumulate`` batches of 8 step as one batch of 8 x ``accumulate``."""
        group = self.accumulate
        position = self.batch % group
        self.stepping = last or position == group - 1
        if position == 0:
            count = group
            if self.budget.batches is not None:
                count = min(group, self.budget.batches - self.batch)
            if self.sizes is not None and self.budget.batches is not None:
                size, final = self.sizes
                ends_epoch = self.batch + count == self.budget.batches
                self.group_samples = size * count - (size - final if ends_epoch else 0)
            else:
                self.group_samples = count
        if self.sizes is not None and self.budget.batches is not None:
            size, final = self.sizes
            self.share = (final if last else size) / self.group_samples
        else:
            self.share = 1.0 / self.group_samples

    def accumulating(self, net: Any) -> Any:
        """Under DDP, ``net.no_sync()`` for a batch that does not end a step (gradients are
        averaged over processes once per step, as nanoGPT does); under FSDP2, its
        ``set_requires_gradient_sync(False)``; otherwise nothing."""
        if self.stepping:
            return contextlib.nullcontext()
        if hasattr(net, "set_requires_gradient_sync"):  # FSDP2: reduce once per step too
            return _gradient_sync_off(net)
        if not hasattr(net, "no_sync"):
            return contextlib.nullcontext()
        return net.no_sync()

    def _after_step(self, stats: Any) -> bool:
        """The budget's events at this step; True ends the epoch (``max_steps``)."""
        step = self.step
        if self.signal_at is not None and step == self.signal_at[0]:
            send_signal(self.signal_at[1])  # the tests' real signal, through the real handler
        pending = self._agree() if self.world > 1 else bool(_PENDING)
        saved = False
        if step == self.next_log:
            self._log_step(getattr(stats, "running_loss", stats))
        if step == self.next_eval and self.validate is not None:
            self._evaluate_step()
        if step == self.next_checkpoint and self.batch != self.budget.batches:
            saved = self._save_within(stats)  # (at an epoch's last batch, end_epoch saves)
        stop = self._steps_done()
        self._plan_events()
        if pending and not stop and self.batch != self.budget.batches:  # (else: end_epoch)
            if not saved:
                saved = self._save_within(stats)
            self._interrupt(f"interrupted in epoch {self.epoch} at step {step}")
        return stop

    def _plan_events(self) -> None:
        """The next step at which ``_after_step`` has something to do."""

        def after(every: int | None) -> float:
            return (self.step // every + 1) * every if every else _NEVER

        self.next_log = after(self.log_every)
        self.next_eval = after(self.eval_every)
        self.next_checkpoint = after(self.checkpoint_every_steps)
        events = [self.next_log, self.next_eval, self.next_checkpoint]
        if self.max_steps is not None:
            events.append(self.max_steps)
        if self.signal_at is not None and self.signal_at[0] > self.step:
            events.append(self.signal_at[0])
        self.next_event = min(events)

    def _agree(self) -> bool:
        """Under torchrun: whether any process has a signal pending; all stop together, at
        the same step, or none does (a process that got none takes the others')."""
        value = torch.tensor([_PENDING[0] if _PENDING else 0], dtype=torch.int32)
        dist.all_reduce(value, op=dist.ReduceOp.MAX, group=self.group)
        signum = int(value.item())
        if signum and not _PENDING:
            _PENDING.append(signum)
        return signum != 0

    def _log_step(self, running_loss: Callable[[], float]) -> None:
        """A step row: the epoch in progress, the global step, the epoch's running loss
        and the learning rate now; written to the history files with the next save."""
        row: dict[str, Any] = {"epoch": self.epoch, "step": self.step, "loss": running_loss()}
        optimizer = self.state.get("optimizer")
        if optimizer is not None:
            row["lr"] = optimizer.param_groups[0]["lr"]
        self.step_rows.append(row)

    def _evaluate_step(self) -> None:
        """``eval_every_steps``: validation figures in this step's row, and a line."""
        assert self.validate is not None
        scores = self.validate()
        model = self.state.get("model")
        if model is not None:
            model.train()  # the validation pass left it in eval mode
        row = self.step_rows[-1] if self.step_rows else None
        if row is None or row.get("step") != self.step:
            row = {"epoch": self.epoch, "step": self.step}
            self.step_rows.append(row)
        row.update({"val_" + key: value for key, value in scores.items()})
        shown = " - ".join(f"val_{k} {v:.4g}" for k, v in scores.items())
        log(f"step {self.step} (epoch {self.epoch}) - {shown}")

    def _save_within(self, stats: Any) -> bool:
        """A checkpoint at this step, in the middle of the epoch (last.pt, and the history
        files before it); False when the job writes none or ``stats`` cannot be kept."""
        if self.folder is None or not hasattr(stats, "state_dict"):
            return False
        figures = stats.state_dict()
        if self.world > 1:  # each process's own figures so far, resumed by the same rank
            cpu = torch.device("cpu")
            gathered: list[Any] = [None] * self.world
            mine = {key: _cpu(value, cpu) for key, value in figures.items()}
            dist.all_gather_object(gathered, mine, group=self.group)
            every = gathered
        else:
            every = [figures]
        loader = None if self.loader_index is None else self.loaders[self.loader_index]
        stream = _stream(loader)
        partial = {
            "epoch": self.epoch,
            "batches": self.batch,
            "stream": None if stream is None else stream.state_dict(),
            "stats": every,
            "loader": self.epoch_rng,
            "loader_index": self.loader_index,
            "world_size": self.world,
            "lr": self.lr,  # the rate the epoch began with (its row's)
        }
        self._save(self.epoch - 1, best=False, partial=partial)
        return True

    def end_epoch(
        self, epoch: int, scores: dict[str, float], validation: dict[str, float] | None = None
    ) -> dict[str, Any]:
        """Record the epoch (history, best, early stopping), checkpoint it, print its line."""
        if epoch != self.epoch:
            raise ValueError(f"end_epoch({epoch}) inside epoch {self.epoch}")
        row: dict[str, Any] = {"epoch": epoch, **scores}
        if self.counts_steps:
            row = {"epoch": epoch, "step": self.step, **scores}
        if validation is not None:
            row.update({"val_" + key: value for key, value in validation.items()})
        if self.lr is not None:
            row["lr"] = self.lr
        monitored = row[self.monitor_key]
        improved = monitored < self.monitor["best"] - self.min_delta
        if improved:
            self.monitor["best"], self.monitor["bad_epochs"] = monitored, 0
            self.best_epoch = self.epoch
        else:
            self.monitor["bad_epochs"] += 1
        if self.patience is not None:
            self.monitor["stopped"] = not improved and self.monitor["bad_epochs"] >= self.patience
        self.history.append(row)
        if self.folder is not None:
            self._save(self.epoch, best=improved and self.save_best)
        log(epoch_line(row, self.total, time.monotonic() - self.epoch_started))
        if self.monitor["stopped"]:
            reason = f"{self.monitor_key} stopped improving (patience {self.patience})"
            log(f"early stopping after epoch {self.epoch}: {reason}")
        pending = self._agree() if self.world > 1 else bool(_PENDING)
        if pending:
            self._interrupt(f"interrupted after epoch {self.epoch}")
        return row

    def _interrupt(self, what: str) -> None:
        if self.progress is not None:
            self.progress.close()
        raise Interrupted(f"{what}; {self.where()}", _PENDING[0])

    def where(self) -> str:
        """Where the last complete checkpoint is and how to resume from it."""
        if self.folder is None:
            return "no checkpoint was written (the job sets no checkpoint_dir)"
        if self.saved_epoch < 0:
            return "no checkpoint was written yet"
        last = _shown(os.path.join(self.folder, "last.pt"))
        if self.saved_within:
            at = f"step {self.saved_step}, in epoch {self.saved_epoch + 1}"
        else:
            at = f"epoch {self.saved_epoch}" + (
                f", step {self.saved_step}" if self.counts_steps else ""
            )
        where = f"last complete checkpoint {last} ({at}); "
        return where + f"resume with: {_resume_command()} --resume {shlex.quote(last)}"

    def output(self, folder: str) -> str:
        """Where this run writes files outside its checkpoint folder (GAN samples):
        ``folder``/<the run's name>, so a second run never writes over the first's. A job
        without a checkpoint folder numbers its own (the first call makes it, on rank 0)."""
        if self.folder is not None and self.folder == self.job_folder:
            return folder  # a checkpoint folder from before run folders: as it was
        if self.folder is not None:
            return os.path.join(folder, os.path.basename(os.path.normpath(self.folder)))
        if self.outputs is None and is_main_process():
            self.outputs = new_run_folder(folder)
        return self.outputs or folder

    # -- the end -------------------------------------------------------------------

    def finish(self, *models: Any, test_metrics: dict[str, float] | None = None) -> Any:
        """Attach history and test metrics to the models, print the summary, return them."""
        for model in models:
            model.training_history = self.history
            model.test_metrics = test_metrics or {}
        if test_metrics:
            log("test - " + " - ".join(f"{k} {v:.4g}" for k, v in test_metrics.items()))
        if is_main_process() and self.folder is not None and self.history:
            png = plot_history(self.folder, self.history, self.step_rows)
            self.files += [png] if png else []
        log(self.summary())
        return models[0] if len(models) == 1 else models

    def summary(self) -> str:
        """The whole run (every session): epochs, steps, time; the final and best epochs,
        every file written, how to resume or extend it."""
        this_session = time.monotonic() - self.started_at
        epochs = len(self.history)
        counted = f"{epochs} epoch{'s' if epochs != 1 else ''}, {self.step} steps"
        head = f"{self.job}: {counted} in {self.elapsed():.1f}s"
        if self.sessions > 1:
            done = [r["epoch"] for r in self.history if r["epoch"] >= self.first_session_epoch]
            part = f"epochs {done[0]}-{done[-1]}" if done else "no epochs"
            head += (
                f" over {self.sessions} sessions (the whole run; this session: {part} in "
                f"{this_session:.1f}s)"
            )
        lines = [head]
        if self.history:
            final = self.history[-1]
            shown = " - ".join(f"{k} {v:.4g}" for k, v in final.items() if k != "epoch")
            lines.append(f"  final (epoch {final['epoch']}): {shown}")
            if self.best_epoch is not None or self.kind == "train":
                best = next(
                    (r for r in self.history if r[self.monitor_key] == self.monitor["best"]), None
                )
                if best is not None:
                    lines.append(
                        f"  best epoch {best['epoch']}: {self.monitor_key} {best[self.monitor_key]:.4g}"
                    )
        if self.folder is not None:
            names = sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else []
            files = [n for n in names if n.endswith((".pt", ".csv", ".jsonl", ".png", ".json"))]
            lines.append(f"  files in {_shown(self.folder)}: {', '.join(files)}")
            lines.append(self._next_step_hint())
        return "\n".join(lines)

    def _next_step_hint(self) -> str:
        assert self.folder is not None
        command, folder = _resume_command(), shlex.quote(_shown(self.folder))
        if self.sized_schedule:
            length = "epochs=N" if self.budget.max_epochs is not None else "max_steps=N"
            return (
                f"  the learning-rate schedule ends with this run; to train longer, start a "
                f"new run planned for it: {command} --set {length}"
            )
        if self.budget.max_epochs is None:
            more = (self.max_steps or 0) + (self.budget.steps_per_epoch or self.max_steps or 1)
            return f"  resume or extend: {command} --resume {folder} --max-steps {more}"
        return f"  resume or extend: {command} --resume {folder} --epochs {(self.total or 0) + 1}"


def _names_shards(entry: Any) -> bool:
    """A checkpoint entry naming a DCP folder instead of holding tensors (FSDP)."""
    return isinstance(entry, dict) and set(entry) == {"sharded"}


@contextlib.contextmanager
def _gradient_sync_off(net: Any) -> Iterator[None]:
    """FSDP2's ``no_sync``: gradients of the batches inside are not reduced yet."""
    net.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        net.set_requires_gradient_sync(True)


def _cpu(value: Any, device: torch.device) -> Any:
    """``value`` with its tensors on ``device`` (a mid-epoch state gathered over ranks)."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [_cpu(item, device) for item in value]
    if isinstance(value, dict):
        return {key: _cpu(item, device) for key, item in value.items()}
    return value


def main(*jobs: Callable[..., Any], argv: Sequence[str] | None = None) -> None:
    """Run ``jobs`` in order with the command line's options (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Run this program's training jobs in order.")
    parser.add_argument(
        "--resume",
        nargs="?",
        const=True,
        metavar="PATH",
        help="continue a run: its folder or a checkpoint (default: each job's latest run)",
    )
    parser.add_argument("--epochs", type=int, help="total epochs (to extend a finished run)")
    parser.add_argument("--max-steps", type=int, metavar="N", help="total optimizer steps")
    parser.add_argument("--run", metavar="NAME", help="the run folder's name (default: run_NNNN)")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="write a new run over the latest run's folder (or --run NAME's)",
    )
    args = parser.parse_args(argv)
    for flag, value in (("--epochs", args.epochs), ("--max-steps", args.max_steps)):
        if value is not None and value < 1:
            parser.error(f"{flag} must be a positive integer, got {value}")
    if args.resume is not None and args.overwrite:
        parser.error("--resume continues a run and --overwrite replaces one: choose one")
    options: dict[str, Any] = {}
    if args.resume is not None:
        options["resume_from"] = args.resume
    if args.epochs is not None:
        OVERRIDES["epochs"] = args.epochs
    if args.max_steps is not None:
        OVERRIDES["max_steps"] = args.max_steps
    _FOLDER_OPTIONS.update(run=args.run, overwrite=args.overwrite)
    previous = _catch_signals()
    try:
        for job in jobs:
            job(**options)
    except Interrupted as error:
        if is_main_process():
            print(error, file=sys.stderr, flush=True)
        raise SystemExit(128 + error.signum) from None
    except CheckpointMissing as error:
        start = f"{_resume_command()} without --resume"
        print(f"error: {error}; to start from the beginning: {start}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    except (RunLockedError, RunFolderError, DataMismatch, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    finish_distributed()
