"""GAN helpers: freezing the other player, fixed-noise samples as tensors or PNG grids."""

from __future__ import annotations

import math
import os
from typing import Any

import torch
import torch.distributed as dist

from aurane.runtime.checkpoint import save_file
from aurane.runtime.distributed import is_main_process


def freeze(model: torch.nn.Module) -> tuple[list[bool], list[torch.Tensor]]:
    """Stop ``model`` learning in the other player's phase: no gradients, same statistics."""
    flags = [parameter.requires_grad for parameter in model.parameters()]
    model.requires_grad_(False)
    return flags, [buffer.clone() for buffer in model.buffers()]


def unfreeze(model: torch.nn.Module, frozen: tuple[list[bool], list[torch.Tensor]]) -> None:
    flags, buffers = frozen
    for parameter, flag in zip(model.parameters(), flags, strict=True):
        parameter.requires_grad_(flag)
    with torch.no_grad():
        for buffer, saved in zip(model.buffers(), buffers, strict=True):
            buffer.copy_(saved)  # running statistics as they were before the phase


def real_batch(batch: Any) -> torch.Tensor:
    """The images of a batch: (input, target) pairs give their inputs."""
    images: torch.Tensor = batch[0] if isinstance(batch, (list, tuple)) else batch
    return images


def check_sample_shape(shape: tuple[int, ...], sample_format: str) -> None:
    if sample_format != "tensor" and (len(shape) != 3 or shape[0] not in (1, 3)):
        raise ValueError(
            f"sample_format {sample_format!r} writes PNG image grids, which need generator "
            f"outputs of shape (1 or 3, height, width), not {tuple(shape)}; use 'tensor'"
        )


def save_samples(
    images: torch.Tensor,
    folder: str,
    epoch: int,
    sample_format: str,
    value_range: tuple[float, float],
) -> None:
    """samples_NNNN.pt and/or samples_NNNN.png (a grid) for one epoch's fixed-noise batch."""
    if not is_main_process():
        return
    images = images.detach().to("cpu", torch.float32)
    stem = os.path.join(folder, f"samples_{epoch:04d}")
    if sample_format in ("tensor", "both"):
        save_file(stem + ".pt", images)
    if sample_format in ("png", "both"):
        _save_grid(stem + ".png", images, value_range)


def _save_grid(path: str, images: torch.Tensor, value_range: tuple[float, float]) -> None:
    """(N, C, H, W) floats in ``value_range`` as one near-square PNG grid (2 px padding),
    drawn by torchvision's ``save_image`` and replaced atomically, like the checkpoints."""
    from torchvision.utils import save_image  # the torch extra; imported for PNG samples only

    temporary = path + ".tmp"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(temporary, "wb") as handle:
        save_image(
            images,
            handle,
            format="png",
            nrow=math.ceil(math.sqrt(images.shape[0])),
            padding=2,
            normalize=True,
            value_range=value_range,
        )
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def gan_scores(
    totals: torch.Tensor, sums: dict[str, int], epoch: int, what: str
) -> dict[str, float]:
    """The epoch's mean GAN losses and scores over every rank; fails on empty data or NaN."""
    device = totals.device
    counts = torch.tensor([sums["count"], sums["g_count"]], dtype=torch.float64, device=device)
    if dist.is_initialized():
        dist.all_reduce(totals)
        dist.all_reduce(counts)
    if counts[0] == 0:
        raise ValueError(f"{what} produced no batches; check size and batch")
    d_loss, real_score, fake_score = (totals[:3] / counts[0]).tolist()
    g_loss = float(totals[3] / counts[1])
    if not (math.isfinite(d_loss) and math.isfinite(g_loss)):
        raise FloatingPointError(
            f"non-finite GAN loss in epoch {epoch} (generator {g_loss}, "
            f"discriminator {d_loss}); lower the learning rates or set gradient_clip"
        )
    return {
        "generator_loss": g_loss,
        "discriminator_loss": d_loss,
        "real_score": real_score,
        "fake_score": fake_score,
    }
