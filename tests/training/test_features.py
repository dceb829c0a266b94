"""Every loss, optimizer and scheduler runs; options, callbacks, test_on and injection work.

The drivers run in this process (``python_here``), as a child would run them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.training.helpers import python_here, write_program

DATA = """
experiment Matrix:
    seed = 1
    device = "cpu"

dataset images:
    from aurane.data.SyntheticImages
    size = 30
    image_size = (1, 4, 4)
    num_classes = 3
    batch = 8

dataset images_val:
    from aurane.data.SyntheticImages
    size = 12
    image_size = (1, 4, 4)
    num_classes = 3
    train = false
    batch = 5

dataset binary:
    from aurane.data.SyntheticImages
    size = 30
    image_size = (1, 4, 4)
    num_classes = 2
    batch = 8

dataset numbers:
    from aurane.data.SyntheticRegression
    size = 30
    features = 4
    targets = 2
    batch = 7

dataset injected_only:
    batch = 4

model C:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(8).relu -> dense(3)

model L:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(3).log_softmax(dim=-1)

model B:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(1)

model P:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(1).sigmoid

model R:
    input_shape = (4,)
    def forward(x):
        x -> dense(2)

train C on images:
    epochs = 2
    loss = cross_entropy(weight=[1.0, 2.0, 1.0], label_smoothing=0.1)
    optimizer = sgd(lr=0.1, momentum=0.9)
    scheduler = step_lr(step_size=1, gamma=0.5)
    metrics = [accuracy, top2_accuracy, precision, recall, f1_score, auc, perplexity]
    test_on = images_val

train C on images:
    epochs = 2
    loss = cross_entropy_with_label_smoothing(smoothing=0.2)
    optimizer = adamw
    lr = 0.01
    scheduler = cosine_annealing
    mixed_precision = true

train L on images:
    epochs = 2
    loss = nll
    optimizer = rmsprop(lr=0.01)
    scheduler = exponential_lr(gamma=0.9)

train B on binary:
    validate_on = binary
    epochs = 3
    loss = bce_with_logits(pos_weight=[2.0])
    optimizer = adagrad(lr=0.1)
    scheduler = reduce_lr_on_plateau(patience=0, factor=0.5, threshold=0.0)
    metrics = [binary_accuracy, auc]
    checkpoint_dir = "plateau"

train P on binary:
    epochs = 3
    loss = bce
    optimizer = adadelta(lr=1.0)
    scheduler = warmup_cosine(warmup_steps=4, max_steps=12)
    gradient_clipping = 0.5

train R on numbers:
    epochs = 2
    loss = huber(delta=0.5)
    metrics = [mse, mae]

train R on numbers:
    epochs = 5
    loss = mae
    optimizer = adam(lr=0.5)
    callbacks = [early_stopping(patience=0, min_delta=100.0), checkpoint(checkpoint_dir="stop")]

train R on injected_only:
    epochs = 1
    loss = mse
"""

DRIVER = """
import torch
import matrix as m

def keys(model):
    return [sorted(row) for row in model.training_history]

c = m.train_c()
assert len(c.training_history) == 2, c.training_history
assert set(c.training_history[0]) == {
    "epoch", "loss", "accuracy", "top2_accuracy", "precision", "recall", "f1", "auc",
    "perplexity", "lr"}
assert [row["lr"] for row in c.training_history] == [0.1, 0.05]
assert set(c.test_metrics) == {"loss", "accuracy", "top2_accuracy", "precision", "recall",
                               "f1", "auc", "perplexity"}
c2 = m.train_c_2()
assert c2 is not c and c2.test_metrics == {}
l = m.train_l()
assert [round(r["lr"], 6) for r in l.training_history] == [0.01, 0.009]
b = m.train_b()
assert "val_binary_accuracy" in b.training_history[0] and "val_auc" in b.training_history[0]
best = torch.load("plateau/latest/last.pt", weights_only=True)["scheduler"]["best"]
assert best == min(row["val_loss"] for row in b.training_history), best
p = m.train_p()
lrs = [row["lr"] for row in p.training_history]
assert lrs[0] == 0.0 and 0 < lrs[1] <= 1.0, lrs  # warmup from 0, stepped per optimizer step
r = m.train_r()
assert set(r.training_history[0]) == {"epoch", "loss", "mse", "mae", "lr"}
stopped = m.train_r_2()
assert len(stopped.training_history) == 2, stopped.training_history  # min_delta=100: stops
assert torch.load("stop/latest/last.pt", weights_only=True)["monitor"]["stopped"] is True
try:
    m.train_r_3()
except ValueError as error:
    assert "injected_only" in str(error), error
else:
    raise AssertionError("a dataset without 'from' needs an injected loader")
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 2)), batch_size=4)
given = m.R()
r3 = m.train_r_3(train_loader=loader, model=given)
assert r3 is given and len(r3.training_history) == 1
print("features ok")
"""


def test_feature_matrix_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_program(tmp_path, DATA, "matrix")
    python_here(DRIVER, tmp_path)
    assert "features ok" in capsys.readouterr().out


ERRORS = """
experiment E:
    seed = 0
    device = "cpu"

dataset tiny:
    from aurane.data.SyntheticImages
    size = 3
    image_size = (1, 2, 2)
    num_classes = 2
    batch = 4
    drop_last = true

dataset regress:
    from aurane.data.SyntheticRegression
    size = 8
    features = 4
    targets = 3
    batch = 4

dataset regress_two:
    from aurane.data.SyntheticRegression
    size = 8
    features = 4
    targets = 2
    batch = 4

model M:
    input_shape = (1, 2, 2)
    def forward(x):
        x -> flatten() -> dense(2)

model W:
    input_shape = (4,)
    def forward(x):
        x -> dense(2)

model Big:
    input_shape = (4,)
    def forward(x):
        x -> dense(3)

train M on tiny:
    epochs = 1

train W on regress_two:
    epochs = 1
    loss = mse

train Big on regress:
    epochs = 1
    loss = mse
    optimizer = sgd(lr=1e30)
    checkpoint_dir = "big"
"""

ERROR_DRIVER = """
import torch
import errors as e

def fails(call, kind, text):
    try:
        call()
    except kind as error:
        assert text in str(error), error
    else:
        raise AssertionError(f"expected {kind.__name__}")

fails(e.train_m, ValueError, "produced no batches")
# targets the program did not declare (check refuses declared ones: T093)
data = torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randn(8, 3))
loader = torch.utils.data.DataLoader(data, batch_size=4)
fails(lambda: e.train_w(train_loader=loader), ValueError, "never broadcast")
fails(e.train_big, FloatingPointError, "non-finite loss")
fails(lambda: e.train_w(resume_from="big"), ValueError, "different model")
fails(lambda: e.train_big(resume_from="missing.pt"), FileNotFoundError, "no checkpoint")
print("errors ok")
"""


def test_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_program(tmp_path, ERRORS, "errors")
    python_here(ERROR_DRIVER, tmp_path)
    assert "errors ok" in capsys.readouterr().out
