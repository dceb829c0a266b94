"""Epoch metrics equal scikit-learn on the same predictions, whatever the batch split."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from aurane.runtime import metrics
from tests.helpers import LazyModule

sk = LazyModule("sklearn.metrics")  # imported by the first test that compares

NS: dict[str, Any] = {"_EpochStats": metrics.EpochStats, "_match_target": metrics.match_target}
SPLITS = [[64], [16, 16, 16, 16], [30, 30, 4], [7, 13, 1, 43]]


def _epoch(
    metrics: list[str],
    task: str,
    outputs_kind: str,
    outputs: torch.Tensor,
    targets: torch.Tensor,
    loss_fn: Any,
    split: list[int],
    **kw: Any,
) -> dict[str, float]:
    stats = NS["_EpochStats"](metrics, task=task, outputs=outputs_kind, **kw)
    start = 0
    for size in split:
        out, tgt = NS["_match_target"](
            outputs[start : start + size], targets[start : start + size], task
        )
        stats.update(out, tgt, loss_fn(out, tgt))
        start += size
    result: dict[str, float] = stats.compute("test data")
    return result


def _assert_macro(row: dict[str, float], y: Any, pred: Any, labels: list[int]) -> None:
    """Macro precision, recall and F1 over ``labels`` equal scikit-learn's."""
    for name, fn in (
        ("precision", sk.precision_score),
        ("recall", sk.recall_score),
        ("f1", sk.f1_score),
    ):
        expected = fn(y, pred, average="macro", labels=labels, zero_division=0)
        assert row[name] == pytest.approx(expected, abs=1e-12), name


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("classes", [2, 5])
def test_classification_metrics_match_sklearn(split: list[int], classes: int) -> None:
    g = torch.Generator().manual_seed(classes)
    logits = torch.randn(64, classes, generator=g)
    targets = torch.randint(0, classes, (64,), generator=g)
    names = ["accuracy", "top2_accuracy", "precision", "recall", "f1", "auc", "perplexity"]
    row = _epoch(names, "class", "logits", logits, targets, torch.nn.CrossEntropyLoss(), split)
    y, pred = targets.numpy(), logits.argmax(1).numpy()
    probs = torch.softmax(logits.double(), 1).numpy()
    labels = list(range(classes))
    assert row["accuracy"] == pytest.approx(sk.accuracy_score(y, pred), abs=1e-12)
    top2 = 1.0 if classes == 2 else sk.top_k_accuracy_score(y, logits.numpy(), k=2, labels=labels)
    assert row["top2_accuracy"] == pytest.approx(top2, abs=1e-12)
    _assert_macro(row, y, pred, labels)
    auc = (
        sk.roc_auc_score(y, probs[:, 1])
        if classes == 2
        else sk.roc_auc_score(y, probs, multi_class="ovr", average="macro")
    )
    assert row["auc"] == pytest.approx(auc, abs=1e-12)
    log_loss = sk.log_loss(y, probs, labels=labels)
    assert row["loss"] == pytest.approx(log_loss, rel=1e-6)
    assert row["perplexity"] == pytest.approx(math.exp(log_loss), rel=1e-6)


def test_sequence_outputs_with_ignored_targets() -> None:
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(12, 5, 7, generator=g)  # (batch, sequence, vocabulary)
    targets = torch.randint(0, 7, (12, 5), generator=g)
    targets[0, :3] = -100
    row = _epoch(
        ["accuracy"], "class", "logits", logits, targets, torch.nn.CrossEntropyLoss(), [5, 5, 2]
    )
    keep = targets.reshape(-1) != -100
    y = targets.reshape(-1)[keep].numpy()
    pred = logits.reshape(-1, 7).argmax(1)[keep].numpy()
    assert row["accuracy"] == pytest.approx(sk.accuracy_score(y, pred), abs=1e-12)
    expected = torch.nn.functional.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1))
    assert row["loss"] == pytest.approx(float(expected), rel=1e-6)


@pytest.mark.parametrize("split", SPLITS)
def test_an_ignored_class_is_left_out_of_macro_averages(split: list[int]) -> None:
    """ignore_index = 0 (a padding token that is also a class index) is excluded everywhere.

    The split [7, 13, 1, 43] has a one-sample batch whose target is ignored: its NaN mean
    loss must not make the epoch's loss NaN.
    """
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(64, 5, generator=g)
    targets = torch.randint(0, 5, (64,), generator=g)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=0)
    names = ["accuracy", "precision", "recall", "f1", "auc"]
    row = _epoch(names, "class", "logits", logits, targets, loss_fn, split, ignore_index=0)
    keep = targets != 0
    y, pred = targets[keep].numpy(), logits.argmax(1)[keep].numpy()
    labels = [1, 2, 3, 4]  # predictions of class 0 stay wrong predictions of no kept class
    assert row["accuracy"] == pytest.approx(sk.accuracy_score(y, pred), abs=1e-12)
    _assert_macro(row, y, pred, labels)
    expected_loss = torch.nn.functional.cross_entropy(logits, targets, ignore_index=0)
    assert row["loss"] == pytest.approx(float(expected_loss), rel=1e-6)
    probs = torch.softmax(logits.double(), 1)[keep].numpy()
    per_class = [sk.roc_auc_score(y == c, probs[:, c]) for c in labels]
    assert row["auc"] == pytest.approx(sum(per_class) / len(per_class), abs=1e-12)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("kind", ["logits", "probabilities"])
def test_binary_metrics_match_sklearn(split: list[int], kind: str) -> None:
    g = torch.Generator().manual_seed(2)
    raw = torch.randn(64, 1, generator=g)
    outputs = raw if kind == "logits" else torch.sigmoid(raw)
    targets = torch.randint(0, 2, (64,), generator=g)  # (batch,) targets for (batch, 1) outputs
    loss = torch.nn.BCEWithLogitsLoss() if kind == "logits" else torch.nn.BCELoss()
    names = ["accuracy", "binary_accuracy", "precision", "recall", "f1", "auc", "mse", "mae"]
    row = _epoch(names, "binary", kind, outputs, targets, loss, split)
    y = targets.numpy()
    probs = torch.sigmoid(raw).double().numpy().ravel()
    pred = (raw.numpy().ravel() > 0).astype(int)
    assert row["accuracy"] == pytest.approx(sk.accuracy_score(y, pred), abs=1e-12)
    assert row["binary_accuracy"] == row["accuracy"]
    assert row["precision"] == pytest.approx(sk.precision_score(y, pred, zero_division=0))
    assert row["recall"] == pytest.approx(sk.recall_score(y, pred, zero_division=0))
    assert row["f1"] == pytest.approx(sk.f1_score(y, pred, zero_division=0))
    assert row["auc"] == pytest.approx(sk.roc_auc_score(y, probs), abs=1e-12)
    assert row["mse"] == pytest.approx(sk.mean_squared_error(y, probs), rel=1e-6)
    assert row["mae"] == pytest.approx(sk.mean_absolute_error(y, probs), rel=1e-6)
    assert row["loss"] == pytest.approx(sk.log_loss(y, probs), rel=1e-5)


@pytest.mark.parametrize("split", SPLITS)
def test_regression_metrics_match_sklearn(split: list[int]) -> None:
    g = torch.Generator().manual_seed(3)
    outputs, targets = torch.randn(64, 3, generator=g), torch.randn(64, 3, generator=g)
    row = _epoch(
        ["mse", "mae"], "regression", "outputs", outputs, targets, torch.nn.MSELoss(), split
    )
    y, p = targets.double().numpy(), outputs.double().numpy()
    assert row["mse"] == pytest.approx(sk.mean_squared_error(y, p), rel=1e-9)
    assert row["mae"] == pytest.approx(sk.mean_absolute_error(y, p), rel=1e-9)
    assert row["loss"] == pytest.approx(sk.mean_squared_error(y, p), rel=1e-6)


def test_tied_scores_auc_matches_sklearn() -> None:
    scores = torch.tensor([0.1, 0.4, 0.4, 0.4, 0.8, 0.8, 0.2, 0.9]).reshape(-1, 1)
    targets = torch.tensor([0, 1, 0, 1, 1, 0, 0, 1])
    row = _epoch(["auc"], "binary", "probabilities", scores, targets, torch.nn.BCELoss(), [3, 5])
    assert row["auc"] == pytest.approx(sk.roc_auc_score(targets.numpy(), scores.numpy().ravel()))


def test_shape_mismatch_is_an_error_never_broadcast() -> None:
    with pytest.raises(ValueError, match="never broadcast"):
        NS["_match_target"](torch.zeros(4, 3), torch.zeros(4, 1), "regression")
    with pytest.raises(ValueError, match="never broadcast"):
        NS["_match_target"](torch.zeros(4, 3), torch.zeros(5, dtype=torch.long), "class")
    with pytest.raises(TypeError, match="integer"):
        NS["_match_target"](torch.zeros(4, 3), torch.zeros(4), "class")


def test_metric_that_does_not_fit_the_loss_is_refused() -> None:
    with pytest.raises(ValueError, match="does not apply"):
        NS["_EpochStats"](["accuracy"], task="regression", outputs="outputs")


def test_empty_epoch_fails_clearly() -> None:
    stats = NS["_EpochStats"]([], task="class", outputs="logits")
    with pytest.raises(ValueError, match="no batches"):
        stats.compute("training data 'x'")


def test_an_epoch_of_ignored_targets_only_fails_clearly() -> None:
    stats = NS["_EpochStats"]([], task="class", outputs="logits")
    targets = torch.full((4,), -100)
    loss = torch.nn.functional.cross_entropy(torch.zeros(4, 3), targets)  # NaN: nothing kept
    stats.update(torch.zeros(4, 3), targets, loss)
    with pytest.raises(ValueError, match=r"no batches \(or only ignored targets\)"):
        stats.compute("training data 'x'")


def test_non_finite_loss_fails_clearly() -> None:
    stats = NS["_EpochStats"]([], task="regression", outputs="outputs")
    stats.update(torch.zeros(2, 1), torch.zeros(2, 1), torch.tensor(float("nan")))
    with pytest.raises(FloatingPointError, match="non-finite loss"):
        stats.compute("training data 'x'")


def test_numpy_is_available_for_reference() -> None:
    assert np.__version__
