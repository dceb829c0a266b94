"""The run around a training loop: resume, checkpoints, history files, a lock on the
checkpoint folder, interrupts at safe points, and the end-of-run summary.

A generated training function builds its model, optimizer and data, then::

    with rt.Run("train_net", epochs=5, config=config, state={...}, loaders=[...],
                checkpoint_dir="./ck", resume_from=resume_from) as run:
        for epoch in run.epochs():
            for inputs, targets in run.batches(train_loader, stats.running_loss):
                ...  # forward, loss, backward, step: written out in the program
            run.end_epoch(epoch, stats.compute("training data"), validation_scores)
        return run.finish(model)

``main`` is the program's entry point: ``--resume [PATH]`` and ``--epochs N`` for every job,
one line and exit status 130 (SIGINT) or 143 (SIGTERM) on an interrupt, no traceback; a
checkpoint that cannot be resumed, or a folder another run holds, is one ``error:`` line and
exit status 1. The lock is released on every way out of a run, a failure before its first
checkpoint included; a signal during a save waits for the save to end (K-RUN).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

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
from aurane.runtime.history import log_scalars, plot_history, tensorboard_writer, write_history
from aurane.runtime.lock import RunLockedError, acquire_lock, release_lock
from aurane.runtime.progress import Progress, epoch_line
from aurane.runtime.rng import restore_rng, rng_state
from aurane.runtime.version import AURANE_VERSION

_SIGNALS = ("SIGINT", "SIGTERM")
_PENDING: list[int] = []  # a signal that arrived while a run was active, handled at a safe point
_ACTIVE: list[Run] = []
_OVERRIDES: dict[str, Any] = {}  # set by ``main`` from the command line (--epochs)


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM at a safe point; ``str()`` is the one-line report."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


def _on_signal(signum: int, _frame: object) -> None:
    if _ACTIVE and (not _PENDING or _ACTIVE[-1].saving):
        # stop at the next safe point (between batches, or once the save in progress ends)
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


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else os.path.abspath(path)


class Run:
    """One training job's run. ``state`` maps checkpoint entries ("model", "optimizer",
    "scheduler", ...) to objects with ``state_dict``/``load_state_dict``; ``log_every = N``
    adds a step row to the history files every N training batches."""

    def __init__(
        self,
        job: str,
        *,
        epochs: int,
        config: dict[str, Any],
        state: dict[str, Any],
        loaders: Sequence[Any],
        kind: str = "train",
        checkpoint_dir: str | None = None,
        resume_from: str | bool | None = None,
        save_best: bool = False,
        checkpoint_every: int | None = None,
        monitor: str = "loss",
        patience: int | None = None,
        min_delta: float = 0.0,
        log_every: int | None = None,
    ) -> None:
        self.job, self.kind, self.total = job, kind, _OVERRIDES.get("epochs", epochs)
        self.state, self.loaders, self.folder = state, list(loaders), checkpoint_dir
        self.resume_from, self.save_best, self.every = resume_from, save_best, checkpoint_every
        self.monitor_key, self.patience, self.min_delta = monitor, patience, min_delta
        self.config = config
        self._fingerprint: dict[str, Any] | None = None
        self.versions = {"aurane": AURANE_VERSION, "torch": str(torch.__version__)}
        self.history: list[dict[str, Any]] = []
        self.monitor: dict[str, Any] = {"best": float("inf"), "bad_epochs": 0, "stopped": False}
        self.first_epoch, self.epoch, self.saved_epoch = 1, 0, -1
        self.best_epoch: int | None = None
        self.lr: float | None = None
        self.progress: Progress | None = None
        self.lock: str | None = None
        self.saving = False  # a signal now waits for the save to end
        self.handlers: dict[int, Any] = {}
        self.files: list[str] = []
        self.writer: Any = None  # TensorBoard, when installed
        # ``log_every = N``: a step row (epoch, step, running loss, lr) every N batches
        self.log_every = log_every
        self.step = 0  # training batches so far, over all epochs (kept only with log_every)
        self.next_log = log_every if log_every else -1
        self.step_rows: list[dict[str, Any]] = []

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
        try:  # a failure before the with block (no checkpoint to resume) releases the lock too
            if self.folder is not None and is_main_process():
                self.lock = acquire_lock(self.folder)
                left = remove_leftovers(self.folder)
                if left:
                    log(f"removed what an interrupted run left: {', '.join(left)}")
            self.handlers = _catch_signals()
            _ACTIVE.append(self)
            if self.resume_from is not None and self.resume_from is not False:
                self._resume(self.folder if self.resume_from is True else self.resume_from)
            elif self.folder is not None:  # a run killed in its first epoch still leaves last.pt
                self._save(0, best=False)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        _PENDING.clear()
        for number, handler in self.handlers.items():
            signal.signal(number, handler)
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.lock is not None:
            release_lock(self.lock)
            self.lock = None

    def _entries(self) -> list[str]:
        best = ["monitor.best", "monitor.bad_epochs", "monitor.stopped"]
        return [*self.state, *(best if self.kind == "train" else ["best"])]

    def _resume(self, path: str | None) -> None:
        if path is None:
            raise CheckpointMissing(f"cannot resume {self.job}: it writes no checkpoints")
        checkpoint = load_checkpoint(
            str(path), self.kind, self.fingerprint, self.versions, self._entries()
        )
        for key, value in self.state.items():
            value.load_state_dict(checkpoint[key])
        self.history = checkpoint["history"]
        if self.kind == "train":
            self.monitor = checkpoint["monitor"]
        else:
            self.monitor["best"] = checkpoint["best"]
        restore_rng(checkpoint["rng"], self.loaders)
        if self.log_every:  # optional: a run may start logging steps when it is resumed
            steps = checkpoint.get("steps", {"count": 0, "rows": []})
            self.step, self.step_rows = steps["count"], steps["rows"]
            self.next_log = (self.step // self.log_every + 1) * self.log_every
        self.saved_epoch = checkpoint["epoch"]
        self.first_epoch = self.saved_epoch + 1

    def checkpoint(self, epoch: int) -> dict[str, Any]:
        """Everything a resume needs, as plain tensors and containers (weights_only loads)."""
        payload: dict[str, Any] = {
            "format": CHECKPOINT_FORMAT,
            "kind": self.kind,
            "job": self.job,
            "versions": self.versions,
            "fingerprint": self.fingerprint,
            "epoch": epoch,
        }
        payload.update({key: value.state_dict() for key, value in self.state.items()})
        payload["history"] = self.history
        if self.kind == "train":
            payload["monitor"] = self.monitor
        else:
            payload["best"] = self.monitor["best"]
        payload["rng"] = rng_state(self.loaders)
        if self.log_every:
            payload["steps"] = {"count": self.step, "rows": self.step_rows}
        return payload

    def _save(self, epoch: int, *, best: bool) -> None:
        """The epoch's files, last.pt last: it commits them (see ``checkpoint``)."""
        assert self.folder is not None
        self.saving = True
        try:
            if is_main_process() and epoch > 0:
                self.files = write_history(self.folder, self.history, self.step_rows)
            save_checkpoints(self.folder, self.checkpoint(epoch), best=best, every=self.every)
            self.saved_epoch = epoch
        finally:
            self.saving = False
        if is_main_process() and epoch > 0:
            if self.writer is None and epoch == self.first_epoch:
                self.writer = tensorboard_writer(self.folder)
            if self.writer is not None:
                log_scalars(self.writer, self.history[-1])

    # -- the loop ------------------------------------------------------------------

    def epochs(self) -> Iterator[int]:
        """The epochs still to run (after a resume: from the one after the checkpoint)."""
        for epoch in range(self.first_epoch, self.total + 1):
            if self.monitor["stopped"]:
                break
            self.epoch, self.epoch_started = epoch, time.monotonic()
            optimizer = self.state.get("optimizer")
            self.lr = optimizer.param_groups[0]["lr"] if optimizer is not None else None
            yield epoch

    def batches(self, loader: Any, running_loss: Callable[[], float]) -> Iterator[Any]:
        """``loader``'s batches for this epoch, with a progress bar; stops at an interrupt."""
        set_epoch(loader, self.epoch)
        self.progress = Progress(f"epoch {self.epoch}/{self.total}", loader, running_loss)
        progress = self.progress
        for batch in loader:
            if _PENDING:
                self._interrupt(f"interrupted in epoch {self.epoch}")
            yield batch
            if self.next_log > 0:
                self.step += 1
                if self.step == self.next_log:
                    self._log_step(running_loss)
            progress.step()
        progress.close()

    def _log_step(self, running_loss: Callable[[], float]) -> None:
        """A step row: the epoch in progress, the global step, the epoch's running loss
        and the learning rate now; written to the history files with the epoch's row."""
        assert self.log_every is not None
        self.next_log += self.log_every
        row: dict[str, Any] = {"epoch": self.epoch, "step": self.step, "loss": running_loss()}
        optimizer = self.state.get("optimizer")
        if optimizer is not None:
            row["lr"] = optimizer.param_groups[0]["lr"]
        self.step_rows.append(row)

    def end_epoch(
        self, epoch: int, scores: dict[str, float], validation: dict[str, float] | None = None
    ) -> dict[str, Any]:
        """Record the epoch (history, best, early stopping), checkpoint it, print its line."""
        if epoch != self.epoch:
            raise ValueError(f"end_epoch({epoch}) inside epoch {self.epoch}")
        row: dict[str, Any] = {"epoch": epoch, **scores}
        if self.log_every:
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
        if _PENDING:
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
        where = f"last complete checkpoint {last} (epoch {self.saved_epoch}); "
        return where + f"resume with: {_resume_command()} --resume {shlex.quote(last)}"

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
        """Best and final epoch, wall time, every file written, how to resume or extend."""
        seconds = time.monotonic() - self.started_at
        lines = [f"{self.job}: {len(self.history)} epochs in {seconds:.1f}s"]
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
            files = [n for n in names if n.endswith((".pt", ".csv", ".jsonl", ".png"))]
            lines.append(f"  files in {_shown(self.folder)}: {', '.join(files)}")
            last = shlex.quote(_shown(os.path.join(self.folder, "last.pt")))
            lines.append(
                f"  resume or extend: {_resume_command()} --resume {last} --epochs {self.total + 1}"
            )
        return "\n".join(lines)


def main(*jobs: Callable[..., Any], argv: Sequence[str] | None = None) -> None:
    """Run ``jobs`` in order with the command line's ``--resume`` and ``--epochs``."""
    parser = argparse.ArgumentParser(description="Run this program's training jobs in order.")
    parser.add_argument(
        "--resume",
        nargs="?",
        const=True,
        metavar="PATH",
        help="continue from a checkpoint file or folder (default: each job's own last.pt)",
    )
    parser.add_argument("--epochs", type=int, help="total epochs (to extend a finished run)")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {}
    if args.resume is not None:
        options["resume_from"] = args.resume
    if args.epochs is not None:
        _OVERRIDES["epochs"] = args.epochs
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
    except (RunLockedError, DataMismatch, CheckpointError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    finish_distributed()
