"""Trained weights for ``aurane export`` and ``aurane verify``: a training checkpoint's
entry for one model, loaded without unpickling code."""

from __future__ import annotations

import os
from typing import Any


class CheckpointRefused(ValueError):
    """The checkpoint cannot give the model its weights (an input problem, exit 1)."""


# the checkpoint entries that hold a module's weights (train jobs: model; GAN jobs: the two)
WEIGHT_ENTRIES = ("model", "generator", "discriminator")


def checkpoint_file(path: str) -> str:
    """A checkpoint file from PATH: the file itself, a run folder's ``last.pt``, or a job
    folder's run that ``--resume`` would continue (its ``latest``)."""
    from aurane.runtime.folders import resumable_run

    if os.path.isdir(path):
        run = path if os.path.isfile(os.path.join(path, "last.pt")) else resumable_run(path)
        if run is None:
            raise CheckpointRefused(f"no checkpoint in the folder {path!r} (no last.pt, no run)")
        return os.path.join(run, "last.pt")
    if not os.path.isfile(path):
        raise CheckpointRefused(f"no checkpoint at {path!r}")
    return path


def load_trained(net: Any, model: str, path: str) -> str:
    """Give ``net`` (model ``model``) the weights a training checkpoint holds for it; the
        entry they came from. The file loads with ``weights_only=True`` (tensors and plain
        containers, never pickled code: docs/security.md; a sharded checkpoint's entries are gathered
    from its torch.distributed.checkpoint folder); the entry is the one whose parameter
        names and shapes are exactly the module's, so a checkpoint of another model is refused."""
    import torch

    from aurane.runtime.checkpoint import READABLE_FORMATS
    from aurane.runtime.sharded import consolidate, is_sharded_checkpoint

    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CheckpointRefused(f"{path!r} is not a readable checkpoint ({first})") from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") not in READABLE_FORMATS:
        raise CheckpointRefused(f"{path!r} is not an Aurane training checkpoint")
    if is_sharded_checkpoint(checkpoint):  # strategy = "fsdp": gathered from its shards
        try:
            checkpoint = consolidate(path)
        except ValueError as error:  # its sharded folder is missing or incomplete
            raise CheckpointRefused(str(error)) from None
    wanted = {key: tuple(value.shape) for key, value in net.state_dict().items()}
    found = []
    for entry in WEIGHT_ENTRIES:
        state = checkpoint.get(entry)
        if not isinstance(state, dict):
            continue
        found.append(entry)
        shapes = {key: tuple(getattr(value, "shape", ())) for key, value in state.items()}
        if shapes == wanted:
            net.load_state_dict(state)
            return entry
    held = ", ".join(found) or "none"
    raise CheckpointRefused(
        f"{path!r} holds no weights for model {model} (job {checkpoint.get('job')!r}; "
        f"weight entries: {held}; their parameter names or shapes differ from {model}'s)"
    )


def holds_weights(gen: Any, models: list[str], path: str, *, every: bool) -> list[str]:
    """The models (of ``gen``, a compiled program) whose weights the checkpoint holds, built
    and loaded once each; ``every``: refuse unless each of them has its weights."""
    chosen, refusals = [], []
    for model in models:
        net = getattr(gen.module, gen.class_names[model])()
        try:
            load_trained(net, model, path)
        except CheckpointRefused as error:
            if every:
                raise
            refusals.append(str(error))
        else:
            chosen.append(model)
    if not chosen:
        raise CheckpointRefused("; ".join(refusals))
    return chosen
