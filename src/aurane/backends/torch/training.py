"""Templates for standard training jobs (SPEC §7): the train function and its helpers.

``TRAIN_TEMPLATE`` is the body of one ``train_<model>`` function. A line starting with
``[flag]`` is kept only when ``flag`` is set (``[!flag]`` when it is not); ``$name``
placeholders are filled by ``jobs.py`` with already-rendered Python source.
"""

from __future__ import annotations

from aurane.backends.torch.runtime import JOB_HELPERS, Helper

MATCH_TARGET = '''\
def _match_target(outputs, targets, task):
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
    )'''

EPOCH_STATS = '''\
_METRICS_BY_TASK = {
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


class _EpochStats:
    """Loss and metrics over a whole epoch from sums and counts, never a mean of batch means.

    Sums stay on the device until ``compute``, so training does not wait on every batch.
    Macro precision, recall and F1 average over every class but an ignored one (an
    ``ignore_index`` inside the class range, such as a padding token); AUC is one-vs-rest
    macro.
    """

    def __init__(self, metrics, *, task, outputs, ignore_index=-100):
        self.metrics = list(metrics)
        self.task = task
        self.outputs = outputs  # "logits", "probabilities" or "log_probabilities"
        self.ignore_index = ignore_index
        self.counts_classes = bool({"accuracy", "precision", "recall", "f1"} & set(metrics))
        for name in self.metrics:
            kind = "topk" if name.startswith("top") else name
            if kind not in _METRICS_BY_TASK[task]:
                raise ValueError(f"metric {name!r} does not apply to a {task} loss")
        self.reset()

    def reset(self):
        self.sums = {}
        self.scores = []
        self.labels = []
        self.batches = 0

    def _add(self, key, value):
        self.sums[key] = self.sums[key] + value if key in self.sums else value

    def update(self, outputs, targets, loss):
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

    def _update_class(self, outputs, targets, loss):
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

    def running_loss(self):
        if "count" not in self.sums:
            return math.nan
        return float(self.sums["loss"] / self.sums["count"].clamp(min=1))

    def compute(self, what):
        """Loss and metrics of the epoch; fails clearly on empty data or a non-finite loss."""
        sums = {key: value.double() for key, value in self.sums.items()}
        scores, labels = self.scores, self.labels
        if dist.is_initialized():
            for key in sorted(sums):
                dist.all_reduce(sums[key])
            gathered = [None] * dist.get_world_size()
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

    def _metric(self, name, sums, count, loss, scores, labels):
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


def _auc(scores, labels, task):
    """ROC AUC from ranks (ties share their mean rank): binary, or one-vs-rest macro."""
    if task == "binary":
        return _binary_auc(scores, labels.bool())
    per_class = [_binary_auc(scores[:, c], labels == c) for c in range(scores.shape[1])]
    defined = [value for value in per_class if not math.isnan(value)]
    return sum(defined) / len(defined) if defined else math.nan


def _binary_auc(scores, positive):
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
    return (rank_sum - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative)'''

EVALUATE = '''\
def _evaluate(model, loader, loss_fn, stats, device, task, what, amp_dtype=None):
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
            outputs, targets = _match_target(outputs, targets, task)
            stats.update(outputs, targets, loss_fn(outputs, targets))
    return stats.compute(what)'''

HELPERS: dict[str, Helper] = {
    "_match_target": (MATCH_TARGET, (), ("import torch",)),
    "_EpochStats": (
        EPOCH_STATS,
        (),
        ("import math", "import torch", "import torch.distributed as dist"),
    ),
    "_evaluate": (EVALUATE, ("_match_target", "_EpochStats"), ("import torch",)),
}

TRAIN_TEMPLATE = '''\
def $name(
    train_loader=None, validation_loader=None, model=None, resume_from=None, test_loader=None
):
    """$doc

    Returns the model with ``model.training_history`` (one dict per epoch) and
    ``model.test_metrics``; ``resume_from`` is a checkpoint file or its folder.
    """
    epochs = $epochs
$config
    device = _setup(seed=$seed, device=$device)
    if train_loader is None:
        train_loader = $make_train(seed=$seed)
[val]    if validation_loader is None:
[val]        validation_loader = $make_val(seed=$seed)
[test]    if test_loader is None:
[test]        test_loader = $make_test(seed=$seed)
    if model is None:
        model = $model_class()
    model.to(device)
$loss
$optimizer
[sched]$scheduler
[amp]    # mixed_precision: CUDA autocast with a gradient scaler; full precision elsewhere
[amp]    amp_dtype = $amp_dtype if device.type == "cuda" else None
[amp]    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
$stats
    history = []
    monitor = {"best": math.inf, "bad_epochs": 0, "stopped": False}
    fingerprint = _fingerprint(config, model)
    versions = {"aurane": $version, "torch": str(torch.__version__)}
    loaders = [train_loader, validation_loader, test_loader]
    first_epoch = 1
    if resume_from is not None:
$load_call
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
[sched]        scheduler.load_state_dict(checkpoint["scheduler"])
[amp]        scaler.load_state_dict(checkpoint["scaler"])
        history, monitor = checkpoint["history"], checkpoint["monitor"]
        _restore_rng(checkpoint["rng"], loaders)
        first_epoch = checkpoint["epoch"] + 1
    net = _distribute(model, device)
[ckpt]
[ckpt]    def checkpoint_state(epoch):
[ckpt]        return {
[ckpt]            "format": _CHECKPOINT_FORMAT,
[ckpt]            "kind": "train",
[ckpt]            "job": $job_name,
[ckpt]            "versions": versions,
[ckpt]            "fingerprint": fingerprint,
[ckpt]            "epoch": epoch,
[ckpt]            "model": model.state_dict(),
[ckpt]            "optimizer": optimizer.state_dict(),
[ckpt&sched]            "scheduler": scheduler.state_dict(),
[ckpt&amp]            "scaler": scaler.state_dict(),
[ckpt]            "history": history,
[ckpt]            "monitor": monitor,
[ckpt]            "rng": _rng_state(loaders),
[ckpt]        }
[ckpt]
[ckpt]    if resume_from is None:  # a run killed during its first epoch still leaves last.pt
[ckpt]$first_save
    for epoch in range(first_epoch, epochs + 1):
        if monitor["stopped"]:
            break
        started = time.monotonic()
        lr = optimizer.param_groups[0]["lr"]
        net.train()
        stats.reset()
        _set_epoch(train_loader, epoch)
        progress = _Progress(f"epoch {epoch}/{epochs}", train_loader, stats.running_loss)
        for inputs, targets in train_loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
[amp]            with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
[amp]                outputs = net(inputs)
[amp]            # the loss runs in float32 (BCELoss refuses half precision)
[amp]            outputs, targets = _match_target(outputs.to(torch.float32), targets, $task)
[!amp]            outputs, targets = _match_target(net(inputs), targets, $task)
            loss = loss_fn(outputs, targets)
            optimizer.zero_grad(set_to_none=True)
[amp]            scaler.scale(loss).backward()
[amp&clip]            scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
[!amp]            loss.backward()
[clip]            torch.nn.utils.clip_grad_norm_(model.parameters(), $clip)
[amp]            scaler.step(optimizer)
[amp]            scaler.update()
[!amp]            optimizer.step()
[step_sched]            scheduler.step()  # warmup_cosine advances every optimizer step
            stats.update(outputs.detach(), targets, loss.detach())
            progress.step()
        progress.close()
        row = {"epoch": epoch, **stats.compute($train_what)}
[val]$val_call
[val]        row.update({"val_" + key: value for key, value in scores.items()})
        row["lr"] = lr
        monitored = row[$monitor_key]
[epoch_sched]        scheduler.step()
[plateau_sched]        scheduler.step(monitored)
        improved = monitored < $best_bound
        if improved:
            monitor["best"], monitor["bad_epochs"] = monitored, 0
        else:
            monitor["bad_epochs"] += 1
[es]        monitor["stopped"] = not improved and monitor["bad_epochs"] >= $patience
        history.append(row)
[ckpt]$save_call
        _log(_epoch_line(row, epochs, time.monotonic() - started))
[es]        if monitor["stopped"]:
[es]            reason = $stop_message
[es]            _log(f"early stopping after epoch {epoch}: {reason}")
    test_metrics = {}
[test]$test_call
[test]    _log("test - " + " - ".join(f"{key} {value:.4g}" for key, value in test_metrics.items()))
    model.training_history = history
    model.test_metrics = test_metrics
    return model'''

TRAIN_HELPERS = (*JOB_HELPERS, "_EpochStats", "_match_target", "_evaluate")
TRAIN_IMPORTS = ("import math", "import time", "import torch", "from torch import nn")
