"""The two training loops that train_speed.py times and train_instructions.py counts: the
generated training function and a minimal hand-written loop, on the same model, initial
weights, data and loader (``Loops``), so both benchmarks measure the very same runs."""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 2  # as in bench/programs/train.aur
LR = 0.001


class CountingLoader:
    """A DataLoader wrapper that counts the batches each side takes."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        self.loader = loader
        self.dataset = loader.dataset
        self.sampler = loader.sampler
        self.batch_size = loader.batch_size
        self.steps = 0

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        for batch in self.loader:
            self.steps += 1
            yield batch


def hand_written(model: nn.Module, loader: CountingLoader, epochs: int) -> float:
    """A minimal loop; returns the last epoch's mean loss (per sample)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    mean = math.nan
    for _ in range(epochs):
        total = torch.zeros((), dtype=torch.float64)
        count = 0
        for inputs, targets in loader:
            loss = loss_fn(model(inputs), targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach().double() * len(targets)
            count += len(targets)
        mean = float(total) / count
    return mean


# a run's steps, its last epoch's mean loss (per sample) and its final parameters
Outcome = tuple[int, float, dict[str, torch.Tensor]]


class Loops:
    """Both loops of one model on ``data``: the same initial weights, one loader (counting
    the batches each side takes), output kept quiet. ``aurane()`` and ``hand()`` each train
    a fresh copy. Shared with ``train_instructions.py``, which counts the same runs."""

    def __init__(self, program: dict[str, Any], name: str, data: TensorDataset) -> None:
        torch.manual_seed(0)
        self.make: Callable[[], nn.Module] = program[name]
        self.initial = {k: v.clone() for k, v in self.make().state_dict().items()}
        self.loader = CountingLoader(DataLoader(data, batch_size=32, shuffle=False))
        self.train = program[f"train_{name.lower()}"]
        self.quiet = io.StringIO()

    def fresh(self) -> nn.Module:
        model = self.make()
        model.load_state_dict(self.initial)
        return model

    def silenced(self) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        stack.enter_context(contextlib.redirect_stdout(self.quiet))
        stack.enter_context(contextlib.redirect_stderr(self.quiet))
        return stack

    def aurane(self) -> Outcome:
        model, before = self.fresh(), self.loader.steps
        with self.silenced():
            trained = self.train(train_loader=self.loader, model=model)
        loss = float(trained.training_history[-1]["loss"])
        return self.loader.steps - before, loss, trained.state_dict()

    def hand(self) -> Outcome:
        model, before = self.fresh(), self.loader.steps
        with self.silenced():
            loss = hand_written(model, self.loader, EPOCHS)
        return self.loader.steps - before, loss, model.state_dict()
