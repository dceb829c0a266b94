"""Checkpoints of an FSDP-sharded model: ``torch.distributed.checkpoint`` (DCP) folders
beside the run's ``.pt`` files, and their conversion to an ordinary checkpoint.

Under ``strategy = "fsdp"`` every process writes its own shards of the model and the
optimizer into ``sharded/step_NNNNNNNN-sS-nN/`` (DCP's format: a file per process and a
``.metadata`` written last), then rank 0 writes the ``.pt`` file with everything else, its
``model`` and ``optimizer`` entries naming that folder (``{"sharded": "sharded/step_..."}``)
instead of holding tensors. The ``.pt`` file commits the folder as it commits the rest
(K-CKPT): a run killed while the shards are written leaves an unnamed folder, removed
after the next save together with every folder no ``.pt`` file names any more.

DCP reshards on load, so an epoch's checkpoint resumes with any number of processes,
sharded or not (a single process loads it into the plain model). ``consolidate`` turns it
into an ordinary checkpoint (plain tensors, torch's optimizer layout) that ``aurane export
--checkpoint``, ``aurane verify --checkpoint`` and ``--resume`` in one process read like
any other; ``aurane checkpoint consolidate RUN -o model.pt`` writes one.
"""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Mapping
from typing import Any

import torch
import torch.distributed as dist

from aurane.runtime.checkpoint import CheckpointError
from aurane.runtime.distributed import is_main_process, is_sharded
from aurane.runtime.faults import fault_point

SHARDED_FOLDER = "sharded"
SHARDED_ENTRIES = ("model", "optimizer")  # what FSDP shards; the rest stays in the .pt


class ShardedCheckpoints:
    """What ``rt.Run(..., sharded=rt.ShardedCheckpoints())`` writes and reads a sharded
    model's checkpoints with (``strategy = "fsdp"``); a model FSDP did not shard (one
    process) is saved as usual, and loads a sharded checkpoint all the same."""

    def save(self, folder: str, tag: str, model: Any, optimizer: Any) -> dict[str, Any] | None:
        """Write the shards (every process); the .pt file's entries, or None when the model
        is not sharded (the .pt file holds it)."""
        if not is_sharded(model):
            return None
        return save_sharded(folder, tag, model, optimizer)

    def load(
        self, path: str, checkpoint: Mapping[str, Any], model: Any, optimizer: Any
    ) -> set[str]:
        """Load what the checkpoint holds for ``model`` and ``optimizer``, sharded or not,
        into them, sharded or not; the entries loaded (none: load them as usual)."""
        done = load_sharded(path, checkpoint, model, optimizer)
        if not done and is_sharded(model):
            load_full_into_sharded(model, optimizer, checkpoint)
            done = set(SHARDED_ENTRIES)
        return done

    def prune(self, folder: str) -> list[str]:
        """Remove the DCP folders no .pt file names any more (rank 0, after a save)."""
        return prune_sharded(folder)


def sharded_folder(entry: Any) -> str | None:
    """The DCP folder (relative to its ``.pt`` file) a checkpoint entry names, else None."""
    if isinstance(entry, dict) and set(entry) == {"sharded"} and isinstance(entry["sharded"], str):
        return entry["sharded"]
    return None


def is_sharded_checkpoint(checkpoint: Mapping[str, Any]) -> bool:
    """Whether the checkpoint's model and optimizer are in a DCP folder."""
    return any(sharded_folder(checkpoint.get(key)) is not None for key in SHARDED_ENTRIES)


def save_sharded(folder: str, tag: str, model: Any, optimizer: Any) -> dict[str, Any]:
    """Write ``model``'s and ``optimizer``'s shards (every process its own) into
    ``folder/sharded/tag``; returns the ``.pt`` file's entries naming the folder. An
    optimizer without state yet (before its first step) is left to the ``.pt`` file:
    torch's state-dict API would give it one with a step of learning rate 0 first."""
    from torch.distributed.checkpoint.state_dict import (
        get_model_state_dict,
        get_optimizer_state_dict,
    )
    from torch.distributed.checkpoint.state_dict_saver import save

    relative = f"{SHARDED_FOLDER}/{tag}"
    path = os.path.join(folder, relative)
    if is_main_process() and os.path.isdir(path):
        shutil.rmtree(path)  # a killed session's unnamed leftover of the same name
    if dist.is_initialized():
        dist.barrier()
    state: dict[str, Any] = {"model": get_model_state_dict(model)}
    if optimizer.state:
        state["optimizer"] = get_optimizer_state_dict(model, optimizer)
    save(state, checkpoint_id=path)
    fault_point("sharded:written")  # every shard in place, no .pt file names them yet
    return {key: {"sharded": relative} for key in state}


def load_sharded(path: str, checkpoint: Mapping[str, Any], model: Any, optimizer: Any) -> set[str]:
    """Load a sharded checkpoint's model and optimizer (``path``: its ``.pt`` file) into
    ``model`` and ``optimizer``, sharded or not, resharded for this run's processes; the
    entries loaded (none for an ordinary checkpoint)."""
    from torch.distributed.checkpoint.state_dict import (
        get_model_state_dict,
        get_optimizer_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
    )
    from torch.distributed.checkpoint.state_dict_loader import load

    relative = sharded_folder(checkpoint.get("model"))
    if relative is None:
        return set()
    folder = _dcp_folder(path, relative)
    state: dict[str, Any] = {"model": get_model_state_dict(model)}
    if sharded_folder(checkpoint.get("optimizer")) is not None:
        state["optimizer"] = get_optimizer_state_dict(model, optimizer)
    load(state, storage_reader=_reader(folder))
    set_model_state_dict(model, state["model"])
    if "optimizer" in state:
        set_optimizer_state_dict(model, optimizer, state["optimizer"])
    return set(state)


def load_full_into_sharded(model: Any, optimizer: Any, checkpoint: Mapping[str, Any]) -> None:
    """An ordinary checkpoint's model and optimizer (plain tensors, torch's optimizer
    layout) into an FSDP-sharded ``model`` and its ``optimizer``: each process keeps its
    shards (a DDP or single-process run continued with ``strategy = "fsdp"``)."""
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        set_model_state_dict,
        set_optimizer_state_dict,
    )

    options = StateDictOptions(full_state_dict=True)
    set_model_state_dict(model, checkpoint["model"], options=options)
    saved = checkpoint["optimizer"]
    if not saved["state"]:  # before the first step: only the groups' settings
        optimizer.load_state_dict(saved)
        return
    names = {id(parameter): name for name, parameter in model.named_parameters()}
    order = [names[id(p)] for group in optimizer.param_groups for p in group["params"]]
    by_name: dict[str, Any] = {
        "state": {order[int(key)]: value for key, value in saved["state"].items()},
        "param_groups": [
            {**group, "params": [order[int(i)] for i in group["params"]]}
            for group in saved["param_groups"]
        ],
    }
    set_optimizer_state_dict(model, optimizer, by_name, options=options)


def prune_sharded(folder: str) -> list[str]:
    """Remove the DCP folders under ``folder/sharded`` that no ``.pt`` file in ``folder``
    names (rank 0, after a save); returns their names. Nothing is removed while a ``.pt``
    file cannot be read."""
    base = os.path.join(folder, SHARDED_FOLDER)
    if not os.path.isdir(base):
        return []
    named: set[str] = set()
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".pt"):
            continue
        try:
            checkpoint = torch.load(
                os.path.join(folder, name), map_location="cpu", weights_only=True
            )
        except Exception:
            return []  # being replaced, or not ours: keep everything
        if isinstance(checkpoint, dict):
            named |= {sharded_folder(checkpoint.get(key)) or "" for key in SHARDED_ENTRIES}
    removed = []
    for name in sorted(os.listdir(base)):
        if f"{SHARDED_FOLDER}/{name}" not in named:
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
            removed.append(name)
    return removed


def consolidate(path: str) -> dict[str, Any]:
    """The ordinary checkpoint of a sharded one (``path``: its ``.pt`` file): the same
    entries, with the model's tensors whole and the optimizer in torch's own layout
    (parameters numbered in its groups' order), loadable by ``torch.load(weights_only=True)``
    in one process (never inside torchrun's group). An ordinary checkpoint comes back as
    it is."""
    # what DCP's own dcp_to_torch_save reads with, given a reader of our own
    from torch.distributed.checkpoint.default_planner import (
        _EmptyStateDictLoadPlanner as Everything,
    )
    from torch.distributed.checkpoint.state_dict_loader import _load_state_dict as read

    checkpoint: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    relative = sharded_folder(checkpoint.get("model")) if isinstance(checkpoint, dict) else None
    if relative is None:
        return checkpoint
    state: dict[str, Any] = {}
    folder = _dcp_folder(path, relative)
    planner = Everything()  # type: ignore[no-untyped-call]
    read(state, storage_reader=_reader(folder), planner=planner, no_dist=True)
    checkpoint["model"] = dict(state["model"])
    if "optimizer" in state:  # (else the .pt file holds it: no state before the first step)
        checkpoint["optimizer"] = _numbered(state["optimizer"])
    return checkpoint


def _numbered(optimizer: Mapping[str, Any]) -> dict[str, Any]:
    """An optimizer state keyed by parameter names (DCP's) in torch's numbered layout."""
    numbers: dict[str, int] = {}
    groups = []
    for group in optimizer["param_groups"]:
        params = []
        for name in group["params"]:
            numbers.setdefault(name, len(numbers))
            params.append(numbers[name])
        groups.append({**group, "params": params})
    state = {numbers[name]: value for name, value in optimizer["state"].items()}
    return {"state": dict(sorted(state.items())), "param_groups": groups}


def _dcp_folder(path: str, relative: str) -> str:
    folder = os.path.join(os.path.dirname(path) or ".", relative)
    if not os.path.isfile(os.path.join(folder, ".metadata")):
        raise CheckpointError(
            f"cannot read {path!r}: its model and optimizer are sharded in {folder!r}, which "
            "is missing or incomplete (keep a .pt file beside its sharded/ folder)"
        )
    return folder


# What DCP's ``.metadata`` (a pickle) may name: its own record classes, and the torch and
# pathlib values they hold. Anything else is refused before it runs, as ``torch.load(...,
# weights_only=True)`` refuses it in a ``.pt`` file (docs/security.md).
_METADATA_MODULES = (
    "torch.distributed.checkpoint.metadata",
    "torch.distributed.checkpoint.filesystem",
)
_METADATA_GLOBALS = {
    ("torch", "Size"),
    ("torch.serialization", "_get_layout"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib", "PurePosixPath"),
    ("pathlib", "PureWindowsPath"),
    ("collections", "OrderedDict"),
}


class _MetadataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = super().find_class(module, name) if module in _METADATA_MODULES else None
        if isinstance(found, type) and found.__module__ == module:
            return found  # a record class defined there (not a name it imported)
        if (module, name) in _METADATA_GLOBALS:
            return super().find_class(module, name)
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        raise pickle.UnpicklingError(
            f"a sharded checkpoint's .metadata names {module}.{name}, which is refused"
        )


def _reader(folder: str) -> Any:
    """DCP's file-system reader, reading ``.metadata`` with ``_MetadataUnpickler``; a
    metadata file naming anything else is a ``CheckpointError`` before DCP starts."""
    from torch.distributed.checkpoint.filesystem import FileSystemReader
    from torch.distributed.checkpoint.metadata import StorageMeta

    def read(name: str) -> Any:
        with open(os.path.join(folder, name), "rb") as handle:
            return _MetadataUnpickler(handle).load()

    try:
        read(".metadata")
    except (pickle.UnpicklingError, EOFError, AttributeError, ValueError) as error:
        raise CheckpointError(f"cannot read the sharded checkpoint {folder!r}: {error}") from None

    class Reader(FileSystemReader):
        def read_metadata(self, *args: Any, **kwargs: Any) -> Any:
            rank = kwargs.get("rank")
            metadata = read(".metadata" if rank is None else f"__{rank}.metadata")
            if getattr(metadata, "storage_meta", None) is None:
                metadata.storage_meta = StorageMeta()
            metadata.storage_meta.load_id = self.load_id
            return metadata

    return Reader(folder)
