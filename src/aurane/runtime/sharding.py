"""``strategy = "fsdp"`` and ``activation_checkpointing``: a model's blocks as FSDP2 units.

The generated training function finds the program's blocks in the model (``blocks``: each
copy of a repeated block, each block called once), recomputes their activations during
backward (``checkpoint_activations``: ``torch.utils.checkpoint``, non-reentrant), and under
torchrun shards each of them, then the rest of the model, with torch's FSDP2
(``fully_shard``). The optimizer is built afterwards, from the sharded parameters. In a
single process ``fully_shard`` changes nothing: the job trains as written.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch.distributed as dist
import torch.utils.checkpoint
from torch import nn

_MESHES: dict[tuple[str, int], Any] = {}  # one device mesh per (device type, world size)
# fsdp_precision: the dtype parameters are gathered and computed in (gradients are
# reduced in float32 and the sharded parameters and optimizer state stay float32)
PRECISIONS = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def blocks(model: nn.Module, *classes: type[nn.Module]) -> list[nn.Module]:
    """The outermost submodules of ``model`` that are instances of ``classes`` (the
    program's blocks called by the model: every copy of a ``repeat``), in module order."""
    found: list[nn.Module] = []
    seen: set[int] = set()

    def visit(module: nn.Module) -> None:
        for child in module.children():
            if id(child) in seen:
                continue
            seen.add(id(child))
            if isinstance(child, classes):
                found.append(child)
            else:
                visit(child)

    visit(model)
    return found


def _checkpointed_forward(module: nn.Module, *args: Any, **kwargs: Any) -> Any:
    forward = type(module).forward
    return torch.utils.checkpoint.checkpoint(forward, module, *args, use_reentrant=False, **kwargs)


def checkpoint_activations(module: nn.Module) -> nn.Module:
    """Keep only ``module``'s inputs during the forward pass and recompute its activations
    in backward (``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``). Parameter
    names, hooks and ``state_dict`` are unchanged; a deep copy keeps the recomputation."""
    module.forward = functools.partial(_checkpointed_forward, module)  # type: ignore[method-assign]
    return module


def fully_shard(
    module: nn.Module,
    device: torch.device,
    *,
    precision: str = "fp32",
    cpu_offload: bool = False,
) -> nn.Module:
    """torch's FSDP2 ``fully_shard(module)`` over every process of torchrun's group (on a
    mesh of ``device``'s type), with a ``MixedPrecisionPolicy`` for ``precision`` "bf16" or
    "fp16" and a ``CPUOffloadPolicy`` for ``cpu_offload``; ``module`` unchanged outside
    torchrun."""
    if not dist.is_initialized():
        return module
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy
    from torch.distributed.fsdp import fully_shard as shard

    key = (device.type, dist.get_world_size())
    if key not in _MESHES:
        _MESHES[key] = init_device_mesh(device.type, (key[1],))
    options: dict[str, Any] = {"mesh": _MESHES[key]}
    dtype = PRECISIONS[precision]
    if dtype is not None:
        options["mp_policy"] = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32)
    if cpu_offload:  # page-locked host memory only where there is a GPU to copy to
        options["offload_policy"] = CPUOffloadPolicy(pin_memory=device.type == "cuda")
    shard(module, **options)
    return module
