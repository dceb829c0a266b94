"""EpochStats keeps batches and folds them in vectorised passes (issue 12, overhead): the
result does not depend on when the passes happen, and a training step costs (almost) no
tensor operation. The values themselves are checked against scikit-learn in
test_metrics.py."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from aurane.runtime.metrics import EpochStats, match_target

SPLIT = [7, 13, 1, 43, 16, 8]

CASES: dict[str, tuple[str, str, list[str]]] = {
    "class": ("class", "logits", ["accuracy", "top2_accuracy", "precision", "f1", "auc"]),
    "binary": ("binary", "logits", ["accuracy", "recall", "auc", "mse", "mae"]),
    "regression": ("regression", "outputs", ["mse", "mae", "perplexity"]),
}


def _data(task: str) -> tuple[torch.Tensor, torch.Tensor, Any]:
    g = torch.Generator().manual_seed(7)
    n = sum(SPLIT)
    if task == "class":
        targets = torch.randint(0, 5, (n,), generator=g)
        targets[::9] = -100  # ignored targets, one batch of them only ([1] at index 20: no)
        return torch.randn(n, 5, generator=g), targets, torch.nn.CrossEntropyLoss()
    if task == "binary":
        targets = torch.randint(0, 2, (n,), generator=g)
        return torch.randn(n, 1, generator=g), targets, torch.nn.BCEWithLogitsLoss()
    return torch.randn(n, 3, generator=g), torch.randn(n, 3, generator=g), torch.nn.MSELoss()


def _row(case: str, **sizes: int) -> dict[str, float]:
    task, outputs, names = CASES[case]
    stats = EpochStats(names, task=task, outputs=outputs)
    for key, value in sizes.items():
        setattr(stats, key, value)
    out_all, tgt_all, loss_fn = _data(case)
    for epoch in range(2):  # reset between epochs: the second epoch equals the first
        stats.reset()
        start = 0
        for size in SPLIT:
            out, tgt = match_target(
                out_all[start : start + size], tgt_all[start : start + size], task
            )
            stats.update(out, tgt, loss_fn(out, tgt))
            if epoch == 1 and size == 13:
                stats.running_loss()  # a progress bar's read flushes in the middle
            start += size
        row = stats.compute("test data")
        if epoch == 0:
            first = row
    assert row == first  # a mid-epoch read of the running loss changes nothing
    return row


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_flush_size_does_not_change_the_epoch(case: str) -> None:
    once = _row(case)
    for sizes in ({"FLUSH_BATCHES": 1}, {"FLUSH_BATCHES": 2}, {"FLUSH_ELEMENTS": 10}):
        other = _row(case, **sizes)
        assert other.keys() == once.keys()
        for name, value in once.items():
            assert other[name] == pytest.approx(value, rel=1e-12, abs=1e-12), (sizes, name)


class _Ops(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [([], []), (["accuracy", "f1"], ["aten.argmax.default"])],
)
def test_a_step_costs_no_tensor_work_beyond_what_its_metrics_need(
    metrics: list[str], expected: list[str]
) -> None:
    stats = EpochStats(metrics, task="class", outputs="logits")
    outputs, targets = torch.randn(8, 4), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(outputs, targets).detach()
    stats.update(outputs, targets, loss)  # the first batch
    with _Ops() as ops:
        out, tgt = match_target(outputs, targets, "class")
        stats.update(out, tgt, loss)
    assert ops.names == expected


def test_an_epoch_of_loss_alone_costs_ten_operators() -> None:
    """The fixed work of ``compute`` for a class loss without metrics (issue 12, overhead):
    stack the losses, join the targets, spread the losses over the kept targets, the two
    sums and their two reads; the element-to-batch index is built in the first epoch only."""
    stats = EpochStats([], task="class", outputs="logits")
    outputs, targets = torch.randn(8, 4), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(outputs, targets).detach()
    for _ in range(2):
        stats.reset()
        for _ in range(3):
            stats.update(outputs, targets, loss)
        with _Ops() as ops:
            stats.compute("test data")
    assert len(ops.names) <= 10, ops.names
