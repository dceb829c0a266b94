"""Loss and metrics over whole epochs, output/target pairing, and evaluation passes."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
import torch.distributed as dist


def match_target(
    outputs: torch.Tensor, targets: torch.Tensor, task: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pair outputs with targets for the loss; a shape mismatch is an error, never broadcast.

    "class": outputs (batch, classes) or (batch, ..., classes) with integer targets
    (batch, ...), flattened to (N, classes) and (N,); (batch, classes, ...) also works.
    "binary" and "regression": outputs and targets of one shape, targets cast to the
    outputs' dtype; for binary losses (batch, 1) outputs take (batch,) targets.
    """
    if task == "class":
        if targets.is_floating_point() or targets.dtype == torch.bool:
            raise TypeError(f"class targets must be integer indices, got {targets.dtype}")
        if outputs.dim() == targets.dim() + 1:
            if outputs.dim() > 2 and outputs.shape[:-1] == targets.shape:
                return outputs.reshape(-1, outputs.shape[-1]), targets.reshape(-1)
            if outputs.shape[:1] + outputs.shape[2:] == targets.shape:
                flat = outputs.movedim(1, -1).reshape(-1, outputs.shape[1])
                return flat, targets.reshape(-1)
        wanted = "one class index per output row"
    else:
        single = outputs.dim() == 2 and outputs.shape[1] == 1
        if task == "binary" and single and targets.shape == outputs.shape[:1]:
            targets = targets.reshape(-1, 1)
        if outputs.shape == targets.shape:
            return outputs, targets.to(outputs.dtype)
        wanted = "the same shape as the outputs"
    raise ValueError(
        f"model outputs of shape {tuple(outputs.shape)} do not fit targets of shape "
        f"{tuple(targets.shape)}: a {task} loss needs {wanted} (shapes are never broadcast)"
    )


METRICS_BY_TASK = {
    "class": {"accuracy", "topk", "precision", "recall", "f1", "auc", "perplexity"},
    "binary": {
        "accuracy",
        "binary_accuracy",
        "precision",
        "recall",
        "f1",
        "auc",
        "mse",
        "mae",
        "perplexity",
    },
    "regression": {"mse", "mae", "perplexity"},
}


class EpochStats:
    """Loss and metrics over a whole epoch from sums and counts, never a mean of batch means.

    Sums stay on the device until ``compute``, so training does not wait on every batch.
    Macro precision, recall and F1 average over every class but an ignored one (an
    ``ignore_index`` inside the class range, such as a padding token); AUC is one-vs-rest
    macro.
    """

    def __init__(
        self, metrics: Sequence[str], *, task: str, outputs: str, ignore_index: int = -100
    ) -> None:
        self.metrics = list(metrics)
        self.task = task
        self.outputs = outputs  # "logits", "probabilities" or "log_probabilities"
        self.ignore_index = ignore_index
        self.counts_classes = bool({"accuracy", "precision", "recall", "f1"} & set(metrics))
        for name in self.metrics:
            kind = "topk" if name.startswith("top") else name
            if kind not in METRICS_BY_TASK[task]:
                raise ValueError(f"metric {name!r} does not apply to a {task} loss")
        self.reset()

    def reset(self) -> None:
        self.sums: dict[str, torch.Tensor] = {}
        self.scores: list[torch.Tensor] = []
        self.labels: list[torch.Tensor] = []
        self.batches = 0

    def _add(self, key: str, value: torch.Tensor) -> None:
        self.sums[key] = self.sums[key] + value if key in self.sums else value

    def update(self, outputs: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor) -> None:
        self.batches += 1
        if self.task == "class":
            self._update_class(outputs, targets, loss)
            return
        count = targets.numel()
        self._add("count", torch.tensor(float(count), device=targets.device))
        self._add("loss", loss.detach().double() * count)
        logits = self.outputs == "logits"
        scores = torch.sigmoid(outputs) if logits else outputs
        if self.task == "binary":
            predicted = outputs > 0 if logits else outputs > 0.5
            truth = targets > 0.5
            self._add("correct", (predicted == truth).sum())
            self._add("true_positive", (predicted & truth).sum())
            self._add("predicted", predicted.sum())
            self._add("actual", truth.sum())
            if "auc" in self.metrics:
                self.scores.append(scores.detach().double().flatten().cpu())
                self.labels.append(truth.flatten().cpu())
        error = scores.detach().double() - targets.double()
        self._add("squared_error", (error * error).sum())
        self._add("absolute_error", error.abs().sum())

    def _update_class(
        self, outputs: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor
    ) -> None:
        classes = outputs.shape[1]
        keep = targets != self.ignore_index
        count = keep.sum()
        self._add("count", count.double())
        # A batch of ignored targets only has a NaN mean loss (0 / 0) and zero gradients:
        # it adds nothing, instead of turning the epoch's loss into NaN.
        batch_loss = loss.detach().double() * count
        self._add("loss", torch.where(count > 0, batch_loss, torch.zeros_like(batch_loss)))
        if self.counts_classes:
            predicted = outputs.argmax(1)
            # Excluded targets go to an extra bin: counting needs no data-dependent indexing.
            spare = torch.full_like(targets, classes)
            hits = torch.where(keep & (predicted == targets), targets, spare)
            bins = classes + 1
            self._add("true_positive", torch.bincount(hits, minlength=bins))
            predicted = torch.where(keep, predicted, spare)
            self._add("predicted", torch.bincount(predicted, minlength=bins))
            self._add("actual", torch.bincount(torch.where(keep, targets, spare), minlength=bins))
        for name in self.metrics:
            if name.startswith("top"):
                k = min(int(name[3:].split("_")[0]), classes)
                top = outputs.topk(k, dim=1).indices == targets[:, None]
                self._add(name, (top.any(1) & keep).sum())
        if "auc" in self.metrics:
            if self.outputs == "logits":
                scores = torch.softmax(outputs.detach().double(), dim=1)
            elif self.outputs == "log_probabilities":
                scores = outputs.detach().double().exp()
            else:
                scores = outputs.detach().double()
            self.scores.append(scores[keep].cpu())
            self.labels.append(targets[keep].cpu())

    def running_loss(self) -> float:
        if "count" not in self.sums:
            return math.nan
        return float(self.sums["loss"] / self.sums["count"].clamp(min=1))

    def compute(self, what: str) -> dict[str, float]:
        """Loss and metrics of the epoch; fails clearly on empty data or a non-finite loss."""
        sums = {key: value.double() for key, value in self.sums.items()}
        scores, labels = self.scores, self.labels
        if dist.is_initialized():
            for key in sorted(sums):
                dist.all_reduce(sums[key])
            gathered: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, (scores, labels))
            scores = [s for part in gathered for s in part[0]]
            labels = [y for part in gathered for y in part[1]]
        if self.batches == 0 or "count" not in sums or float(sums["count"]) == 0:
            raise ValueError(
                f"{what} produced no batches (or only ignored targets); "
                "check its size, batch and drop_last"
            )
        count = float(sums["count"])
        loss = float(sums["loss"]) / count
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"non-finite loss ({loss}) on {what}; lower the learning rate, set "
                "gradient_clip, or check the data for NaN and inf values"
            )
        row = {"loss": loss}
        for name in self.metrics:
            row[name] = self._metric(name, sums, count, loss, scores, labels)
        return row

    def _metric(
        self,
        name: str,
        sums: dict[str, torch.Tensor],
        count: float,
        loss: float,
        scores: list[torch.Tensor],
        labels: list[torch.Tensor],
    ) -> float:
        if name == "perplexity":
            return math.exp(min(loss, 700.0))
        if name == "mse":
            return float(sums["squared_error"]) / count
        if name == "mae":
            return float(sums["absolute_error"]) / count
        if name == "auc":
            return _auc(torch.cat(scores), torch.cat(labels), self.task)
        if name.startswith("top"):
            return float(sums[name]) / count
        if name in ("accuracy", "binary_accuracy"):
            hits = sums["correct"] if self.task == "binary" else sums["true_positive"][:-1].sum()
            return float(hits) / count
        tp = sums["true_positive"]
        predicted, actual = sums["predicted"], sums["actual"]
        if self.task == "class":  # drop the excluded-target bin
            tp, predicted, actual = tp[:-1], predicted[:-1], actual[:-1]
            if 0 <= self.ignore_index < tp.numel():  # an ignored class (padding) is not averaged
                kept = torch.arange(tp.numel(), device=tp.device) != self.ignore_index
                tp, predicted, actual = tp[kept], predicted[kept], actual[kept]
        if name == "precision":
            per_class = torch.where(predicted > 0, tp / predicted.clamp(min=1), 0.0)
        elif name == "recall":
            per_class = torch.where(actual > 0, tp / actual.clamp(min=1), 0.0)
        else:
            total = predicted + actual
            per_class = torch.where(total > 0, 2 * tp / total.clamp(min=1), 0.0)
        return float(per_class.mean())


def _auc(scores: torch.Tensor, labels: torch.Tensor, task: str) -> float:
    """ROC AUC from ranks (ties share their mean rank): binary, or one-vs-rest macro."""
    if task == "binary":
        return _binary_auc(scores, labels.bool())
    per_class = [_binary_auc(scores[:, c], labels == c) for c in range(scores.shape[1])]
    defined = [value for value in per_class if not math.isnan(value)]
    return sum(defined) / len(defined) if defined else math.nan


def _binary_auc(scores: torch.Tensor, positive: torch.Tensor) -> float:
    n_positive = int(positive.sum())
    n_negative = positive.numel() - n_positive
    if n_positive == 0 or n_negative == 0:
        return math.nan  # undefined without both classes
    ordered, order = torch.sort(scores)
    _, inverse, counts = torch.unique_consecutive(ordered, return_inverse=True, return_counts=True)
    ends = counts.cumsum(0).double()
    mean_rank = ends - (counts.double() - 1) / 2
    ranks = torch.empty_like(scores, dtype=torch.float64)
    ranks[order] = mean_rank[inverse]
    rank_sum = float(ranks[positive].sum())
    return (rank_sum - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative)


def evaluate(
    model: torch.nn.Module,
    loader: Iterable[Any],
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    stats: EpochStats,
    device: torch.device,
    what: str,
    amp_dtype: torch.dtype | None = None,
) -> dict[str, float]:
    """Loss and metrics of ``model`` over ``loader`` in eval mode, without gradients."""
    model.eval()
    stats.reset()
    with torch.no_grad():
        for inputs, targets in loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
                outputs = model(inputs)
            if amp_dtype is not None:
                outputs = outputs.to(torch.float32)
            outputs, targets = match_target(outputs, targets, stats.task)
            stats.update(outputs, targets, loss_fn(outputs, targets))
    return stats.compute(what)
