"""Learning-rate schedules torch does not ship."""

from __future__ import annotations

import math

import torch


def warmup_cosine(
    optimizer: torch.optim.Optimizer, *, warmup_steps: int, max_steps: int, min_lr: float = 0.0
) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warmup for ``warmup_steps`` optimizer steps, then cosine decay to ``min_lr``."""
    if not 0 <= warmup_steps <= max_steps or max_steps < 1:  # what `aurane check` refuses
        raise ValueError(
            f"warmup_cosine needs 0 <= warmup_steps <= max_steps and max_steps >= 1, got "
            f"warmup_steps={warmup_steps}, max_steps={max_steps}"
        )
    base_lr = optimizer.param_groups[0]["lr"]
    floor = min_lr / base_lr if base_lr > 0 else 0.0

    def factor(step: int) -> float:
        if step < warmup_steps:
            return step / max(1, warmup_steps)
        progress = min(1.0, (step - warmup_steps) / max(1, max_steps - warmup_steps))
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
