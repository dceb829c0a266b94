"""Capture and restore every random state a resumed run needs (Python, NumPy, torch, CUDA,
each data loader's shuffling generator)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from aurane.runtime.distributed import np as np  # numpy, or None without it


def rng_state(loaders: Sequence[Any]) -> dict[str, Any]:
    """Every random state a resumed run needs to continue exactly like an uninterrupted one."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": None,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "loaders": [_loader_generator_state(loader) for loader in loaders],
    }
    if np is not None:
        _, keys, position, has_gauss, cached = np.random.get_state()
        # Plain tensors and numbers only, so the checkpoint loads with weights_only=True.
        state["numpy"] = {
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "position": int(position),
            "has_gauss": int(has_gauss),
            "cached": float(cached),
        }
    return state


def _loader_generator_state(loader: Any) -> torch.Tensor | None:
    generator = getattr(loader, "generator", None)
    return generator.get_state() if generator is not None else None


def restore_rng(state: dict[str, Any], loaders: Sequence[Any]) -> None:
    """Put back what ``rng_state`` captured."""
    random.setstate(state["python"])
    if np is not None and state["numpy"] is not None:
        saved = state["numpy"]
        keys = saved["keys"].numpy().astype(np.uint32)
        position, has_gauss = saved["position"], saved["has_gauss"]
        np.random.set_state(("MT19937", keys, position, has_gauss, saved["cached"]))
    torch.set_rng_state(state["torch"])
    if torch.cuda.is_available() and state["cuda"]:
        torch.cuda.set_rng_state_all(state["cuda"])
    for loader, saved in zip(loaders, state["loaders"], strict=True):
        generator = getattr(loader, "generator", None)
        if generator is not None and saved is not None:
            generator.set_state(saved)
