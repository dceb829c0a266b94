"""Loss and metrics over whole epochs, output/target pairing, and evaluation passes."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
import torch.distributed as dist

from aurane.runtime.tasks import METRICS_BY_TASK


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
        if outputs.dim() == 2 and targets.dim() == 1 and outputs.shape[0] == targets.shape[0]:
            return outputs, targets  # the common case, without a tensor operation
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


class EpochStats:
    """Loss and metrics over a whole epoch from sums and counts, never a mean of batch means.

    ``update`` only keeps references to what each batch needs (the loss, the targets, the
    argmax or top-k indices for class metrics) and folds them into the sums in vectorised
    passes every ``FLUSH_BATCHES`` batches (or ``FLUSH_ELEMENTS`` kept elements), so a
    training step pays for almost no extra tensor operations and never waits on the device.
    Sums stay on the device until ``compute``. Macro precision, recall and F1 average over
    every class but an ignored one (an ``ignore_index`` inside the class range, such as a
    padding token); AUC is one-vs-rest macro over the classes it is defined for.
    """

    FLUSH_BATCHES = 256
    FLUSH_ELEMENTS = 1 << 20
    INDEX_CACHE_ELEMENTS = 1 << 16  # the longest element-to-batch index kept (int64)

    def __init__(
        self, metrics: Sequence[str], *, task: str, outputs: str, ignore_index: int = -100
    ) -> None:
        self.metrics = list(metrics)
        self.task = task
        self.outputs = outputs  # "logits", "probabilities" or "log_probabilities"
        self.ignore_index = ignore_index
        self.counts_classes = bool({"accuracy", "precision", "recall", "f1"} & set(metrics))
        self.topk = {
            name: int(name[3:].split("_")[0]) for name in metrics if name.startswith("top")
        }
        for name in self.metrics:
            kind = "topk" if name.startswith("top") else name
            if kind not in METRICS_BY_TASK[task]:
                raise ValueError(f"metric {name!r} does not apply to a {task} loss")
        # binary and regression metrics other than the loss need the outputs themselves
        self.keeps_outputs = task != "class" and bool(set(metrics) - {"perplexity"})
        self._sizes_cache: dict[tuple[tuple[int, ...], torch.device], torch.Tensor] = {}
        self._index_cache: dict[tuple[tuple[int, ...], torch.device], torch.Tensor] = {}
        self.reset()

    def reset(self) -> None:
        self.sums: dict[str, torch.Tensor] = {}
        self.scores: list[torch.Tensor] = []
        self.labels: list[torch.Tensor] = []
        self.batches = 0
        self.classes = 0
        self._losses: list[torch.Tensor] = []
        self._targets: list[torch.Tensor] = []
        self._sizes: list[int] = []
        self._outputs: list[torch.Tensor] = []  # binary/regression outputs, or argmax/top-k
        self._topk: dict[str, list[torch.Tensor]] = {name: [] for name in self.topk}
        self._scores: list[torch.Tensor] = []  # class probabilities (AUC)
        self._pending = 0

    # what ``state_dict`` keeps: everything an epoch has recorded so far, flushed or not, so
    # a run resumed in the middle of an epoch computes the epoch's figures exactly as an
    # uninterrupted one (folding the pending batches early would round differently)
    _STATE = (
        "sums",
        "scores",
        "labels",
        "batches",
        "classes",
        "_losses",
        "_targets",
        "_sizes",
        "_outputs",
        "_topk",
        "_scores",
        "_pending",
    )

    def state_dict(self) -> dict[str, Any]:
        """The epoch so far, as tensors and containers (a mid-epoch checkpoint's entry)."""
        return {key: getattr(self, key) for key in self._STATE}

    def load_state_dict(self, state: dict[str, Any], device: torch.device | None = None) -> None:
        """Continue the epoch ``state`` recorded; its tensors go to ``device`` (checkpoints
        load on the CPU), except AUC's scores and labels, which are kept there."""
        for key in self._STATE:
            value = state[key]
            if device is not None and key not in ("scores", "labels"):
                value = _move_to(value, device)
            setattr(self, key, value)

    def _add(self, key: str, value: torch.Tensor) -> None:
        self.sums[key] = self.sums[key] + value if key in self.sums else value

    def update(self, outputs: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor) -> None:
        """Record one batch (outputs and targets as ``match_target`` returns them, the mean
        loss detached)."""
        self.batches += 1
        self._losses.append(loss)
        size = targets.numel()
        self._sizes.append(size)
        self._pending += size
        if self.task == "class":
            self.classes = outputs.shape[1]
            self._targets.append(targets)
            if self.counts_classes:
                self._outputs.append(outputs.argmax(1))
            for name, k in self.topk.items():
                self._topk[name].append(outputs.topk(min(k, self.classes), dim=1).indices)
            if "auc" in self.metrics:
                self._scores.append(self._probabilities(outputs))
        elif self.keeps_outputs:
            self._targets.append(targets)
            self._outputs.append(outputs)
        if len(self._losses) >= self.FLUSH_BATCHES or self._pending >= self.FLUSH_ELEMENTS:
            self._flush()

    def _probabilities(self, outputs: torch.Tensor) -> torch.Tensor:
        if self.outputs == "logits":
            return torch.softmax(outputs.double(), dim=1)
        if self.outputs == "log_probabilities":
            return outputs.double().exp()
        return outputs.double()

    def _loss_terms(
        self,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """(loss sum, count, targets, kept targets) of the batches since the last flush.

        Sums are float64, of values converted exactly; ``sum(dtype=torch.float64)`` converts
        its input itself, one operator fewer than ``.double()`` first."""
        losses = torch.stack(self._losses)
        if self.task != "class":
            sizes = self._sizes_tensor(losses.device)
            return (losses.double() * sizes).sum(), sizes.sum(dtype=torch.float64), None, None
        flat = [t if t.dim() == 1 else t.reshape(-1) for t in self._targets]
        targets = flat[0] if len(flat) == 1 else torch.cat(flat)
        keep = targets != self.ignore_index
        # each element weighs its batch's mean loss; a batch of ignored targets only (a NaN
        # mean loss, zero gradients) adds nothing instead of making the epoch's loss NaN
        per_element = losses.index_select(0, self._element_batches(losses.device, targets.numel()))
        loss = torch.where(keep, per_element, 0.0).sum(dtype=torch.float64)
        return loss, keep.sum(dtype=torch.float64), targets, keep

    def _flush(self) -> None:
        """Fold the batches recorded since the last flush into ``sums``."""
        if not self._losses:
            return
        loss, count, targets, keep = self._loss_terms()
        self._add("count", count)
        self._add("loss", loss)
        if targets is not None and keep is not None:
            self._flush_class(targets, keep)
        elif self.keeps_outputs:
            self._flush_outputs()
        self._losses, self._targets, self._sizes, self._outputs = [], [], [], []
        self._topk = {name: [] for name in self.topk}
        self._scores, self._pending = [], 0

    def _sizes_tensor(self, device: torch.device) -> torch.Tensor:
        """The recorded batch sizes as a tensor; every epoch has the same ones, so it is
        built once (building a tensor from a list costs more than the rest of a flush)."""
        key = (tuple(self._sizes), device)
        sizes = self._sizes_cache.get(key)
        if sizes is None:
            if len(self._sizes_cache) > 8:
                self._sizes_cache.clear()
            sizes = self._sizes_cache[key] = torch.tensor(self._sizes, device=device)
        return sizes

    def _element_batches(self, device: torch.device, elements: int) -> torch.Tensor:
        """Each recorded element's batch (0, 0, ..., 1, 1, ...), to spread the batches' mean
        losses over their elements. Building it (``repeat_interleave``) costs several times
        what indexing with it does, so while it is small it is kept, as every epoch has the
        same batch sizes; a large one is rebuilt, where the per-element work dominates and
        holding it would cost device memory."""
        key = (tuple(self._sizes), device)
        index = self._index_cache.get(key)
        if index is None:
            sizes = self._sizes_tensor(device)
            index = torch.repeat_interleave(sizes, output_size=elements)
            if elements <= self.INDEX_CACHE_ELEMENTS:
                if len(self._index_cache) > 8:
                    self._index_cache.clear()
                self._index_cache[key] = index
        return index

    def _flush_class(self, targets: torch.Tensor, keep: torch.Tensor) -> None:
        classes = self.classes
        if self.counts_classes:
            predicted = torch.cat(self._outputs)
            # Excluded targets go to an extra bin: counting needs no data-dependent indexing.
            spare = torch.full_like(targets, classes)
            hits = torch.where(keep & (predicted == targets), targets, spare)
            bins = classes + 1
            self._add("true_positive", torch.bincount(hits, minlength=bins))
            predicted = torch.where(keep, predicted, spare)
            self._add("predicted", torch.bincount(predicted, minlength=bins))
            self._add("actual", torch.bincount(torch.where(keep, targets, spare), minlength=bins))
        for name, parts in self._topk.items():
            top = torch.cat(parts) == targets[:, None]
            self._add(name, (top.any(1) & keep).sum())
        if "auc" in self.metrics:  # scores and labels of the kept targets, on the CPU
            self.scores.append(torch.cat(self._scores)[keep].cpu())
            self.labels.append(targets[keep].cpu())

    def _flush_outputs(self) -> None:
        raw = torch.cat([o.reshape(-1) for o in self._outputs])
        targets = torch.cat([t.reshape(-1) for t in self._targets]).double()
        logits = self.outputs == "logits"
        outputs = raw.double()
        # in float64: float32 kernels round by an element's place in the vector, so a batch
        # would score (in the last bits) differently depending on where a flush cut
        scores = torch.sigmoid(outputs) if logits else outputs
        if self.task == "binary":
            predicted = outputs > 0 if logits else outputs > 0.5
            truth = targets > 0.5
            self._add("correct", (predicted == truth).sum())
            self._add("true_positive", (predicted & truth).sum())
            self._add("predicted", predicted.sum())
            self._add("actual", truth.sum())
            if "auc" in self.metrics:
                self.scores.append(scores.cpu())
                self.labels.append(truth.cpu())
        error = scores - targets
        self._add("squared_error", (error * error).sum())
        self._add("absolute_error", error.abs().sum())

    def running_loss(self) -> float:
        """The epoch's mean loss so far (waits for the device). It folds nothing into the
        sums, so when a progress bar reads it cannot change the epoch's figures."""
        loss, count = self.sums.get("loss"), self.sums.get("count")
        if self._losses:
            pending_loss, pending_count, _, _ = self._loss_terms()
            loss = pending_loss if loss is None else loss + pending_loss
            count = pending_count if count is None else count + pending_count
        if loss is None or count is None:
            return math.nan
        return float(loss / count.clamp(min=1))

    def compute(self, what: str) -> dict[str, float]:
        """Loss and metrics of the epoch; fails clearly on empty data or a non-finite loss."""
        self._flush()
        sums = {key: value.double() for key, value in self.sums.items()}
        scores, labels = self.scores, self.labels
        if dist.is_initialized():
            for key in sorted(sums):
                dist.all_reduce(sums[key])
            gathered: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, (scores, labels))
            scores = [s for part in gathered for s in part[0]]
            labels = [y for part in gathered for y in part[1]]
        count = float(sums["count"]) if "count" in sums else 0.0
        if self.batches == 0 or count == 0:
            raise ValueError(
                f"{what} produced no batches (or only ignored targets); "
                "check its size, batch and drop_last"
            )
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


def _move_to(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [_move_to(item, device) for item in value]
    if isinstance(value, dict):
        return {key: _move_to(item, device) for key, item in value.items()}
    return value


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
    check: Callable[[str, torch.Tensor, torch.Tensor], None] | None = None,
    feed: Callable[[Any, torch.device, str], tuple[list[Any], torch.Tensor]] | None = None,
    output: int | None = None,
) -> dict[str, float]:
    """Loss and metrics of ``model`` over ``loader`` in eval mode, without gradients.

    ``check`` (an ``rt.BatchCheck``) sees each batch first when the data is not known
    statically. ``feed`` (an ``rt.Feed``) makes a batch of several fields the model's
    inputs and the targets; ``output``: the output the loss reads of a model that returns
    several."""
    model.eval()
    stats.reset()
    with torch.no_grad():
        for batch in loader:
            if feed is not None:
                inputs, targets = feed(batch, device, what)
            else:
                inputs, targets = batch
                if check is not None:
                    check(what, inputs, targets)
                inputs = [inputs.to(device, non_blocking=True)]
                targets = targets.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
                outputs = model(*inputs)
            if output is not None:
                outputs = outputs[output]
            if amp_dtype is not None:
                outputs = outputs.to(torch.float32)
            outputs, targets = match_target(outputs, targets, stats.task)
            stats.update(outputs, targets, loss_fn(outputs, targets))
    return stats.compute(what)
