"""Seeding, device choice, torchrun/DDP set-up and rank-0-only output."""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

np: Any
try:
    import numpy as np
except ImportError:  # NumPy is optional for torch; then there is no NumPy RNG to seed
    np = None


def setup(seed: int | None, device: str) -> torch.device:
    """Seed Python, NumPy and torch; join torchrun's process group; return the device."""
    if seed is not None:
        random.seed(seed)
        torch.manual_seed(seed)
        if np is not None:
            np.random.seed(seed % 2**32)
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1 and not dist.is_initialized():
        # Started by torchrun: one process per device, gradients averaged by DDP.
        backend = "nccl" if torch.cuda.is_available() and device != "cpu" else "gloo"
        dist.init_process_group(backend)
    if dist.is_initialized() and torch.cuda.is_available() and device != "cpu":
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    return torch.device(device)


def is_sharded(module: Any) -> bool:
    """Whether FSDP2 sharded ``module`` (``strategy = "fsdp"`` under torchrun). Without
    importing ``torch.distributed.fsdp`` (seconds): nothing is sharded before it is."""
    fsdp = sys.modules.get("torch.distributed.fsdp")
    return fsdp is not None and isinstance(module, fsdp.FSDPModule)


def to_device(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """``model.to(device)``, skipped when every parameter and buffer is already there, and
    for a model FSDP sharded (it moved its shards, or keeps them on the host: CPU offload).

    ``Module.to`` sends every submodule and tensor through ``_apply`` even when nothing
    moves (about 50 us for a 3-layer MLP, on every call of a training function); reading
    the tensors' devices costs a tenth of that. A device without an index, such as "cuda",
    never equals a tensor's "cuda:0": such a model takes the full ``to``, right either way.
    """
    if is_sharded(model):
        return model
    for module in model.modules():
        # each module's own tensors, read from the dicts that ``parameters(recurse=False)``
        # and ``buffers(recurse=False)`` would walk through two generators each
        for tensor in (*module._parameters.values(), *module._buffers.values()):
            if tensor is not None and tensor.device != device:
                return model.to(device)
    return model


def is_main_process() -> bool:
    """True outside torchrun and on rank 0: the only process that writes files and prints."""
    return not dist.is_initialized() or dist.get_rank() == 0


def log(message: str) -> None:
    """Print ``message`` once (on rank 0 under torchrun)."""
    if is_main_process():
        print(message, flush=True)


def finish_distributed() -> None:
    """Leave torchrun's process group (a no-op in a single process)."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def data_loader(
    dataset: Any,
    *,
    batch_size: int,
    shuffle: bool,
    seed: int | None,
    num_workers: int = 0,
    pin_memory: bool = False,
    drop_last: bool = False,
) -> DataLoader[Any]:
    """A DataLoader whose shuffling comes from its own generator (saved in checkpoints).

    Under torchrun each process reads its own shard through a DistributedSampler.
    """
    generator = torch.Generator()
    if seed is None:  # no experiment seed: draw one from torch's global generator
        seed = int(torch.randint(2**62, ()).item())
    generator.manual_seed(seed)
    sampler: DistributedSampler[Any] | None = None
    if isinstance(dataset, torch.utils.data.IterableDataset):  # a stream keeps its order
        shuffle = False
    elif dist.is_initialized():
        sampler = DistributedSampler(dataset, shuffle=shuffle, seed=seed, drop_last=drop_last)
        shuffle = False
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=pin_memory,
        drop_last=drop_last,
        generator=generator,
    )


def set_epoch(loader: Any, epoch: int) -> None:
    """Give every epoch its own DistributedSampler order (the same again after a resume)."""
    sampler = getattr(loader, "sampler", None)
    if isinstance(sampler, DistributedSampler):
        sampler.set_epoch(epoch)


def distribute(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """Wrap ``model`` in DistributedDataParallel under torchrun; unchanged otherwise."""
    if not dist.is_initialized():
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)
