"""Aurane's training runtime: what generated training functions call.

Ordinary typed modules, importable on their own; a generated program imports this package
as ``rt`` and calls ``rt.require(N)`` with the runtime version it was compiled for.
``aurane compile --standalone`` copies the parts a program uses into the program instead
(see ``aurane.backends.torch.runtime``), from these same files.

Modules: ``distributed`` (seeding, devices, torchrun/DDP, rank-0 output), ``rng`` (capture
and restore), ``checkpoint`` (atomic writes committed by last.pt, fingerprints, validated
loads, leftovers of killed runs), ``faults`` (pid liveness, the kill tests' named points), ``metrics``
(epoch metrics, evaluation), ``progress``, ``history`` (metrics.csv/jsonl, plots), ``lock``,
``folders`` (a folder per run, ``latest``), ``optim`` (weight-decay groups), ``run`` (the
run around a training loop: steps, interrupts, summary, ``main``), ``schedule`` (the run's
length in steps, warmup_cosine), ``gan``, ``contracts`` (the first-batch check of data not
known statically), ``data`` (the synthetic datasets ``aurane.data`` re-exports), ``tasks`` (the metrics each loss task allows, also read by the checker),
``sharding`` (``strategy = "fsdp"``: FSDP2 per block, activation checkpointing),
``sharded`` (FSDP checkpoints in torch.distributed.checkpoint folders, ``consolidate``),
``version``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aurane.runtime.checkpoint import (
        CHECKPOINT_FORMAT,
        CheckpointError,
        CheckpointMissing,
        fingerprint,
        load_checkpoint,
        save_checkpoints,
        save_file,
    )
    from aurane.runtime.contracts import BatchCheck, DataMismatch, Feed, dataset_class
    from aurane.runtime.distributed import (
        data_loader,
        distribute,
        finish_distributed,
        is_main_process,
        log,
        set_epoch,
        setup,
        to_device,
    )
    from aurane.runtime.folders import RunFolderError, latest_run
    from aurane.runtime.gan import (
        check_sample_shape,
        freeze,
        gan_scores,
        real_batch,
        save_samples,
        unfreeze,
    )
    from aurane.runtime.history import plot_runs, read_history, write_history
    from aurane.runtime.lock import RunLockedError, acquire_lock, release_lock
    from aurane.runtime.metrics import EpochStats, evaluate, match_target
    from aurane.runtime.optim import decay_groups
    from aurane.runtime.progress import Progress, epoch_line
    from aurane.runtime.rng import restore_rng, rng_state
    from aurane.runtime.run import Interrupted, Run, main
    from aurane.runtime.schedule import Budget, warmup_cosine
    from aurane.runtime.sharded import ShardedCheckpoints, consolidate
    from aurane.runtime.sharding import blocks, checkpoint_activations, fully_shard
    from aurane.runtime.version import AURANE_VERSION, RUNTIME_VERSION, require

# name -> submodule: the package imports torch only when a program first uses it, so the
# compiler can read ``aurane.runtime.version`` without importing torch.
_WHERE = {
    "CHECKPOINT_FORMAT": "checkpoint",
    "CheckpointError": "checkpoint",
    "CheckpointMissing": "checkpoint",
    "fingerprint": "checkpoint",
    "load_checkpoint": "checkpoint",
    "save_checkpoints": "checkpoint",
    "save_file": "checkpoint",
    "BatchCheck": "contracts",
    "DataMismatch": "contracts",
    "Feed": "contracts",
    "dataset_class": "contracts",
    "data_loader": "distributed",
    "distribute": "distributed",
    "finish_distributed": "distributed",
    "is_main_process": "distributed",
    "log": "distributed",
    "set_epoch": "distributed",
    "setup": "distributed",
    "to_device": "distributed",
    "check_sample_shape": "gan",
    "freeze": "gan",
    "gan_scores": "gan",
    "real_batch": "gan",
    "save_samples": "gan",
    "unfreeze": "gan",
    "RunFolderError": "folders",
    "latest_run": "folders",
    "plot_runs": "history",
    "read_history": "history",
    "write_history": "history",
    "RunLockedError": "lock",
    "acquire_lock": "lock",
    "release_lock": "lock",
    "EpochStats": "metrics",
    "evaluate": "metrics",
    "match_target": "metrics",
    "Progress": "progress",
    "epoch_line": "progress",
    "decay_groups": "optim",
    "restore_rng": "rng",
    "rng_state": "rng",
    "Interrupted": "run",
    "Run": "run",
    "main": "run",
    "Budget": "schedule",
    "warmup_cosine": "schedule",
    "consolidate": "sharded",
    "ShardedCheckpoints": "sharded",
    "blocks": "sharding",
    "checkpoint_activations": "sharding",
    "fully_shard": "sharding",
    "AURANE_VERSION": "version",
    "RUNTIME_VERSION": "version",
    "require": "version",
}

__all__ = [
    "AURANE_VERSION",
    "BatchCheck",
    "Budget",
    "CHECKPOINT_FORMAT",
    "CheckpointError",
    "CheckpointMissing",
    "DataMismatch",
    "EpochStats",
    "Feed",
    "Interrupted",
    "Progress",
    "RUNTIME_VERSION",
    "Run",
    "RunFolderError",
    "ShardedCheckpoints",
    "RunLockedError",
    "acquire_lock",
    "blocks",
    "check_sample_shape",
    "checkpoint_activations",
    "consolidate",
    "data_loader",
    "dataset_class",
    "decay_groups",
    "distribute",
    "epoch_line",
    "evaluate",
    "fingerprint",
    "finish_distributed",
    "freeze",
    "fully_shard",
    "gan_scores",
    "is_main_process",
    "latest_run",
    "load_checkpoint",
    "log",
    "main",
    "match_target",
    "plot_runs",
    "read_history",
    "real_batch",
    "release_lock",
    "require",
    "restore_rng",
    "rng_state",
    "save_checkpoints",
    "save_file",
    "save_samples",
    "set_epoch",
    "setup",
    "to_device",
    "unfreeze",
    "warmup_cosine",
    "write_history",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'aurane.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"aurane.runtime.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value
