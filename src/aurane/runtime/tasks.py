"""Which metrics each loss task allows: one table for the checker and the runtime.

The loss decides the task: how outputs pair with targets ("class", "binary", "regression").
``aurane check`` refuses a metric its loss's task does not allow (``ir/contracts.py``, from
``semantics/data_contracts.py``) and the runtime's ``EpochStats`` raises on one; both read
this table. It imports nothing, so the checker reads it without torch, and ``--standalone``
copies it into a program along with the metrics code.
"""

from __future__ import annotations

METRICS_BY_TASK: dict[str, frozenset[str]] = {
    "class": frozenset({"accuracy", "topk", "precision", "recall", "f1", "auc", "perplexity"}),
    "binary": frozenset(
        {
            "accuracy",
            "binary_accuracy",
            "precision",
            "recall",
            "f1",
            "auc",
            "mse",
            "mae",
            "perplexity",
        }
    ),
    "regression": frozenset({"mse", "mae", "perplexity"}),
}
