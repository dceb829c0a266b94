"""Progress on a terminal (a tqdm bar with the running loss) and each epoch's summary line."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from aurane.runtime.distributed import is_main_process


class Progress:
    """A tqdm bar with the running loss when stderr is a terminal (and tqdm is installed);
    silent otherwise, where the epoch lines alone report progress.

    The running loss is read at most every 0.1 s: reading it waits for the device.
    """

    def __init__(self, label: str, loader: Any, running_loss: Callable[[], float]) -> None:
        self.bar: Any = None
        self.running_loss = running_loss
        self.drawn_at = 0.0
        if not (is_main_process() and sys.stderr.isatty()):
            return
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is optional: epoch lines only
            return
        total = len(loader) if hasattr(loader, "__len__") else None
        self.bar = tqdm(total=total, desc=label, file=sys.stderr, leave=False, dynamic_ncols=True)

    def step(self) -> None:
        if self.bar is None:
            return
        self.bar.update(1)
        now = time.monotonic()
        if now - self.drawn_at >= 0.1 or self.bar.n == self.bar.total:
            self.drawn_at = now
            self.bar.set_postfix_str(f"loss {self.running_loss():.4f}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def epoch_line(row: dict[str, Any], epochs: int | None, seconds: float) -> str:
    """``epoch 3/5 - loss 0.41 - accuracy 0.88 - ... - 1.2s`` (``epoch 3 - ...`` for a run
    whose length is ``max_steps`` only)."""
    parts = [f"epoch {row['epoch']}" + (f"/{epochs}" if epochs is not None else "")]
    parts += [f"{key} {value:.4g}" for key, value in row.items() if key != "epoch"]
    return " - ".join(parts) + f" - {seconds:.1f}s"
