"""How long a run trains (``Budget``, in optimizer steps) and the schedules torch does not ship.

A run's length is ``epochs`` and/or ``max_steps`` (whichever ends first, as Lightning's
``max_epochs``/``max_steps``); an optimizer step takes ``accumulate`` batches, and an epoch's
last, smaller group of batches is a step too. Schedules whose length the program does not
give are sized from the budget, so nobody works out ``max_steps`` by hand.
"""

from __future__ import annotations

import math
from typing import Any

import torch

# Set by ``rt.main`` from the command line (--epochs, --max-steps): they change every job's
# budget, so they are read wherever a budget is made.
OVERRIDES: dict[str, Any] = {}


class Budget:
    """A run's length: ``epochs`` and ``max_steps`` (either may be None, not both), the
    training loader's batches per epoch (None when it has no length) and ``accumulate``
    batches per optimizer step. ``steps``: the run's optimizer steps (None when unknown);
    ``epochs``: the epochs it trains (the last one may end early at ``max_steps``)."""

    def __init__(
        self,
        loader: Any,
        *,
        epochs: int | None = None,
        max_steps: int | None = None,
        accumulate: int = 1,
    ) -> None:
        self.max_epochs: int | None = OVERRIDES.get("epochs", epochs)
        self.max_steps: int | None = OVERRIDES.get("max_steps", max_steps)
        if self.max_epochs is None and self.max_steps is None:
            self.max_epochs = 1
        self.accumulate = accumulate
        try:
            self.batches: int | None = len(loader)
        except TypeError:  # an iterable dataset without a length
            self.batches = None
        per_epoch = None if self.batches is None else math.ceil(self.batches / accumulate)
        self.steps_per_epoch: int | None = per_epoch
        by_epochs = None if per_epoch is None or self.max_epochs is None else per_epoch
        if by_epochs is not None and self.max_epochs is not None:
            by_epochs *= self.max_epochs
        known = [n for n in (by_epochs, self.max_steps) if n is not None]
        self.steps: int | None = min(known) if known else None
        self.epochs: int | None = self.max_epochs
        if per_epoch and self.max_steps is not None:
            needed = math.ceil(self.max_steps / per_epoch)
            self.epochs = needed if self.max_epochs is None else min(self.max_epochs, needed)

    def fraction(self, share: float) -> int:
        """``share`` of the run's steps, rounded (warmup given as a fraction)."""
        return round(share * self.total_steps("a warmup fraction"))

    def total_steps(self, what: str = "the schedule") -> int:
        """The run's optimizer steps; an error naming ``what`` when they are unknown."""
        if self.steps is None:
            raise ValueError(
                f"{what} needs the run's length in steps, but the training data has no length; "
                "set max_steps in the train block"
            )
        return self.steps

    def record(self) -> dict[str, Any]:
        """What checkpoints and config.json keep of the budget."""
        return {
            "epochs": self.max_epochs,
            "max_steps": self.max_steps,
            "accumulate": self.accumulate,
            "batches_per_epoch": self.batches,
            "steps": self.steps,
        }

    def describe(self) -> str:
        """``5 epochs x 8 batches = 40 steps`` (with ``/ 4`` when accumulating)."""
        steps = "? steps" if self.steps is None else f"{self.steps} steps"
        if self.max_epochs is None:
            return f"{steps} (max_steps)"
        batches = "?" if self.batches is None else str(self.batches)
        group = f" / {self.accumulate}" if self.accumulate > 1 else ""
        epochs = f"{self.max_epochs} epoch{'s' if self.max_epochs != 1 else ''}"
        text = f"{epochs} x {batches} batches{group} = {steps}"
        if self.max_steps is not None and self.steps == self.max_steps:
            text += " (max_steps)"
        return text


def warmup_cosine(
    optimizer: torch.optim.Optimizer,
    *,
    max_steps: int,
    warmup_steps: int | None = None,
    warmup: float | None = None,
    min_lr: float = 0.0,
) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warmup for ``warmup_steps`` optimizer steps (or the fraction ``warmup`` of
    ``max_steps``), then cosine decay to ``min_lr`` at ``max_steps``."""
    if warmup_steps is not None and warmup is not None:  # what `aurane check` refuses
        raise ValueError("warmup_cosine takes warmup_steps or warmup (a fraction), not both")
    if warmup is not None and not 0 <= warmup <= 1:
        raise ValueError(f"warmup_cosine's warmup is a fraction of the run, got {warmup}")
    if warmup_steps is None:
        warmup_steps = round((warmup or 0.0) * max_steps)
    if not 0 <= warmup_steps <= max_steps or max_steps < 1:  # what `aurane check` refuses
        raise ValueError(
            f"warmup_cosine needs 0 <= warmup_steps <= max_steps and max_steps >= 1, got "
            f"warmup_steps={warmup_steps}, max_steps={max_steps}"
        )
    base_lr = optimizer.param_groups[0]["lr"]
    floor = min_lr / base_lr if base_lr > 0 else 0.0
    warm = warmup_steps

    def factor(step: int) -> float:
        if step < warm:
            return step / max(1, warm)
        progress = min(1.0, (step - warm) / max(1, max_steps - warm))
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
