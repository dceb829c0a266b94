"""Metrics checked as the runtime checks them (issue 11 item 3, the metrics part).

Every metric name of the catalog (aliases and top-k forms included) against every task a
loss can set: ``check`` accepts the program exactly when the runtime's ``EpochStats``
builds with that metric and computes it on outputs and targets of the program's shapes.
The domain is small, so it is enumerated rather than drawn.
"""

from __future__ import annotations

import pytest

from aurane.semantics import config
from tests.helpers import errors

torch = pytest.importorskip("torch")
from aurane.runtime.metrics import EpochStats  # noqa: E402  (needs torch)

CLASSES = 3
PROGRAM = """\
model Net:
    input_shape = (8,)
    def forward(x):
        return dense(x, {outputs})
dataset d:
    from {source}
    size = 4
{data}train Net on d:
    epochs = 1
    loss = {loss}
    metrics = [{metric}]
"""
TASKS = {
    "class": {
        "outputs": CLASSES,
        "source": "aurane.data.SyntheticImages",
        "data": f"    image_size = (8,)\n    num_classes = {CLASSES}\n",
        "loss": "cross_entropy",
    },
    "binary": {
        "outputs": 1,
        "source": "aurane.data.SyntheticImages",
        "data": "    image_size = (8,)\n    num_classes = 2\n",
        "loss": "bce_with_logits",
    },
    "regression": {
        "outputs": 1,
        "source": "aurane.data.SyntheticRegression",
        "data": "    features = 8\n",
        "loss": "mse",
    },
}
NAMES = [*config.METRICS, *config.METRIC_ALIASES, *(f"top{k}_accuracy" for k in range(1, 6))]


def runtime_accepts(metric: str, task: str) -> bool:
    name = config.canonical_metric(metric)
    assert name is not None, metric
    torch.manual_seed(0)
    if task == "class":
        outputs, targets = torch.randn(4, CLASSES), torch.tensor([0, 1, 2, 1])
    else:
        outputs = torch.randn(4, 1)
        targets = torch.tensor([[0.0], [1.0], [1.0], [0.0]]) if task == "binary" else outputs + 1
    try:
        stats = EpochStats([name], task=task, outputs="logits")
        stats.update(outputs, targets, torch.tensor(0.5))
        value = stats.compute("train")[name]
    except (ValueError, RuntimeError, IndexError, KeyError):
        return False
    return value == value  # not NaN


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("metric", NAMES)
def test_metrics_as_the_runtime_checks_them(metric: str, task: str) -> None:
    found = errors(PROGRAM.format(metric=metric, **TASKS[task]))
    assert all(d.code == "T094" for d in found), found  # only the metric may be refused
    accepted = not found
    assert accepted == runtime_accepts(metric, task), (metric, task, found)
