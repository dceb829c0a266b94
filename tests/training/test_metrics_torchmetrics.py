"""Evidence for docs/training.md "What is still hand-written": Aurane's epoch metrics
against torchmetrics' on the same random data, ignore_index and absent classes included.

Each test pins down where the two agree (micro accuracy, top-k, binary counts from
integer predictions, MSE/MAE) and where torchmetrics' documented definitions differ from
SPEC §7's (macro precision/recall/F1 and one-vs-rest AUC with an absent class or an ignored
class inside the class range; binary inputs it guesses to be logits or probabilities per
batch; float32 results). If a torchmetrics release changes any of these, a test here
fails and the decision in docs/training.md should be revisited.
"""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import pytest
import torch

from aurane.runtime.metrics import EpochStats, match_target
from tests.helpers import LazyModule

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torchmetrics") is None, reason="torchmetrics is not installed"
)
# imported by the first test that reads them, not by every worker's collection
sk = LazyModule("sklearn.metrics")
tm = LazyModule("torchmetrics.classification")
tm_regression = LazyModule("torchmetrics.regression")

CLASSES = 6
SPLIT = [7, 64, 1, 50, 78]  # uneven batches, one of a single sample


def _ours(
    names: list[str], logits: torch.Tensor, targets: torch.Tensor, **kw: Any
) -> dict[str, float]:
    """Aurane's epoch row over SPLIT, with a tiny flush size so several flushes happen."""
    stats = EpochStats(names, task="class", outputs="logits", **kw)
    stats.FLUSH_BATCHES = 2
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=kw.get("ignore_index", -100))
    start = 0
    for size in SPLIT:
        out, tgt = match_target(
            logits[start : start + size], targets[start : start + size], "class"
        )
        stats.update(out, tgt, loss_fn(out, tgt))
        start += size
    return stats.compute("test data")


def _theirs(logits: torch.Tensor, targets: torch.Tensor, ignore: int | None) -> dict[str, float]:
    """torchmetrics, updated batch by batch over the same split (its own accumulation)."""
    common: dict[str, Any] = {"num_classes": CLASSES, "ignore_index": ignore}
    metrics = {
        "accuracy": tm.MulticlassAccuracy(average="micro", **common),
        "top2_accuracy": tm.MulticlassAccuracy(average="micro", top_k=2, **common),
        "precision": tm.MulticlassPrecision(average="macro", **common),
        "recall": tm.MulticlassRecall(average="macro", **common),
        "f1": tm.MulticlassF1Score(average="macro", **common),
        "auc": tm.MulticlassAUROC(average="macro", thresholds=None, **common),
    }
    start = 0
    for size in SPLIT:
        part, tgt = logits[start : start + size], targets[start : start + size]
        for name, metric in metrics.items():
            metric.update(part.softmax(1) if name == "auc" else part, tgt)
        start += size
    with warnings.catch_warnings():  # about classes without positives: values are checked
        warnings.simplefilter("ignore")
        return {name: float(metric.compute()) for name, metric in metrics.items()}


def _data(seed: int, *, absent: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(sum(SPLIT), CLASSES, generator=g)
    targets = torch.randint(0, CLASSES - 1 if absent else CLASSES, (sum(SPLIT),), generator=g)
    if absent:  # the last class is neither a target nor ever predicted
        logits[:, CLASSES - 1] -= 100
    return logits, targets


NAMES = ["accuracy", "top2_accuracy", "precision", "recall", "f1", "auc"]


def test_every_metric_agrees_when_every_class_occurs_and_nothing_is_ignored() -> None:
    logits, targets = _data(0)
    ours, theirs = _ours(NAMES, logits, targets), _theirs(logits, targets, None)
    for name in NAMES:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-6), name
    # but torchmetrics answers in float32: ours equals scikit-learn to 1e-12, theirs not
    y, pred = targets.numpy(), logits.argmax(1).numpy()
    expected = sk.precision_score(y, pred, average="macro", zero_division=0)
    assert ours["precision"] == pytest.approx(expected, abs=1e-12)
    assert abs(theirs["precision"] - expected) > 1e-12


def test_ignored_targets_outside_the_class_range_agree() -> None:
    logits, targets = _data(1)
    targets[::5] = -100
    ours = _ours(NAMES, logits, targets, ignore_index=-100)
    theirs = _theirs(logits, targets, -100)
    for name in NAMES:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-6), name


def test_an_absent_class_counts_for_us_and_not_for_torchmetrics() -> None:
    """SPEC §7 macro averages over all C classes (zero_division 0); torchmetrics leaves out a
    class with tp + fp + fn = 0 (as scikit-learn does without ``labels``). For AUC it is the
    other way round: a class without positives is undefined and left out by us, scored 0
    by torchmetrics."""
    logits, targets = _data(2, absent=True)
    ours, theirs = _ours(NAMES, logits, targets), _theirs(logits, targets, None)
    for name in ("accuracy", "top2_accuracy"):
        assert ours[name] == pytest.approx(theirs[name], abs=1e-6), name
    y, pred = targets.numpy(), logits.argmax(1).numpy()
    for name, fn in (("precision", sk.precision_score), ("recall", sk.recall_score)):
        every = fn(y, pred, average="macro", labels=list(range(CLASSES)), zero_division=0)
        present = fn(y, pred, average="macro", zero_division=0)
        assert ours[name] == pytest.approx(every, abs=1e-12), name
        assert theirs[name] == pytest.approx(present, abs=1e-6), name
        assert abs(ours[name] - theirs[name]) > 1e-3, name
    assert theirs["auc"] < ours["auc"] - 0.05  # a 0 averaged in


def test_an_ignored_class_inside_the_range_is_averaged_by_torchmetrics() -> None:
    """ignore_index = 0 (padding that is also a class index): torchmetrics drops the ignored
    targets but still averages class 0 in whenever it is predicted (precision 0 then); we
    leave the ignored class out of every macro average, as a padding token should be."""
    logits, targets = _data(3)
    targets[::4] = 0
    ours = _ours(NAMES, logits, targets, ignore_index=0)
    theirs = _theirs(logits, targets, 0)
    for name in ("accuracy", "top2_accuracy"):
        assert ours[name] == pytest.approx(theirs[name], abs=1e-6), name
    keep = targets != 0
    y, pred = targets[keep].numpy(), logits.argmax(1)[keep].numpy()
    kept = list(range(1, CLASSES))
    expected = sk.precision_score(y, pred, average="macro", labels=kept, zero_division=0)
    assert ours["precision"] == pytest.approx(expected, abs=1e-12)
    assert abs(ours["precision"] - theirs["precision"]) > 1e-3
    assert abs(ours["auc"] - theirs["auc"]) > 1e-3  # class 0 has no positives left: 0 for them


def test_binary_metrics_agree_given_predictions_but_not_given_logits_in_0_1() -> None:
    """Binary counts agree when torchmetrics gets our integer predictions. Given raw logits
    it decides per batch whether they are logits (any value outside [0, 1]: sigmoid first)
    or probabilities (threshold 0.5 as they are), so a batch of logits inside [0, 1] is
    misread; we know the kind from the loss."""
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(200, 1, generator=g)
    targets = torch.randint(0, 2, (200,), generator=g)
    stats = EpochStats(
        ["accuracy", "precision", "recall", "f1", "mse", "mae"], task="binary", outputs="logits"
    )
    out, tgt = match_target(logits, targets, "binary")
    stats.update(out, tgt, torch.nn.functional.binary_cross_entropy_with_logits(out, tgt))
    ours = stats.compute("test data")
    predicted = (logits.ravel() > 0).long()
    for name, metric in (
        ("accuracy", tm.BinaryAccuracy()),
        ("precision", tm.BinaryPrecision()),
        ("recall", tm.BinaryRecall()),
        ("f1", tm.BinaryF1Score()),
    ):
        assert ours[name] == pytest.approx(float(metric(predicted, targets)), abs=1e-6), name
    probabilities = torch.sigmoid(logits.ravel())
    mse = float(tm_regression.MeanSquaredError()(probabilities, targets.float()))
    mae = float(tm_regression.MeanAbsoluteError()(probabilities, targets.float()))
    assert ours["mse"] == pytest.approx(mse, rel=1e-5)
    assert ours["mae"] == pytest.approx(mae, rel=1e-5)
    small = torch.tensor([0.2, 0.4, 0.6, 0.8])  # logits, all positive: every one predicts 1
    truth = torch.ones(4, dtype=torch.long)
    assert float(tm.BinaryAccuracy()(small, truth)) == 0.5  # read as probabilities
    stats = EpochStats(["accuracy"], task="binary", outputs="logits")
    out, tgt = match_target(small[:, None], truth, "binary")
    stats.update(out, tgt, torch.nn.functional.binary_cross_entropy_with_logits(out, tgt))
    assert stats.compute("test data")["accuracy"] == 1.0
