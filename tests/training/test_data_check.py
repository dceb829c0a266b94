"""The first-batch check of data ``check`` cannot know (``aurane.runtime.contracts``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.training.helpers import compile_text, run_python

torch = pytest.importorskip("torch")

from aurane.runtime.contracts import BatchCheck, DataMismatch  # noqa: E402


def test_inputs_of_another_shape_or_dtype_are_one_line() -> None:
    check = BatchCheck("Net", (1, 16, 16), "float32")
    with pytest.raises(DataMismatch) as caught:
        check("training data 'images'", torch.zeros(2, 3, 16, 16), None)
    assert str(caught.value) == (
        "training data 'images' gives inputs of shape (3, 16, 16) float32, but model 'Net' "
        "takes (1, 16, 16) float32"
    )
    with pytest.raises(DataMismatch, match="float64"):
        BatchCheck("Net", (4,), "float32")("d", torch.zeros(2, 4, dtype=torch.float64), None)
    BatchCheck("Net", (None, 4), "int64")("d", torch.zeros(2, 7, 4, dtype=torch.int32), None)
    BatchCheck("D", (4,), None)("d", torch.zeros(2, 4, dtype=torch.float64), None)


def test_only_the_first_batch_of_each_dataset_is_checked() -> None:
    check = BatchCheck("Net", (4,), "float32")
    check("a", torch.zeros(2, 4), None)
    check("a", torch.zeros(2, 5), None)  # later batches pass through
    with pytest.raises(DataMismatch):
        check("b", torch.zeros(2, 5), None)


@pytest.mark.parametrize(
    ("task", "outputs", "targets", "message"),
    [
        ("class", (4,), torch.tensor([0, 6]), "labels from 0 to 6, but model 'Net' outputs 4"),
        ("class", (4,), torch.zeros(2), "float32 targets"),
        ("class", (8, 4), torch.zeros(2, 3, dtype=torch.int64), "one class index per output"),
        ("regression", (2,), torch.zeros(2, 3), "needs the same shape"),
        ("binary", (2,), torch.zeros(2), "needs the same shape"),
    ],
)
def test_targets_that_do_not_fit_the_loss(
    task: str, outputs: tuple[int, ...], targets: torch.Tensor, message: str
) -> None:
    check = BatchCheck("Net", (3,), "float32", task=task, outputs=outputs)
    with pytest.raises(DataMismatch, match=message):
        check("d", torch.zeros(2, 3), targets)


def test_targets_that_fit() -> None:
    inputs = torch.zeros(2, 3)
    BatchCheck("N", (3,), "float32", task="class", outputs=(4,))("d", inputs, torch.tensor([0, 3]))
    tokens = torch.tensor([[1, -100, 2], [0, 0, 7]])
    BatchCheck("N", (3,), "float32", task="class", outputs=(3, 8))("d", inputs, tokens)
    BatchCheck("N", (3,), "float32", task="binary", outputs=(1,))("d", inputs, torch.zeros(2))


@pytest.mark.parametrize(
    ("targets", "ignore_index", "message"),
    [
        ([-100, 0, 5], -100, "labels from 0 to 5,"),  # the ignored label is not reported
        ([-1, 2], -100, "labels from -1 to 2,"),
        ([3, -100, -7], -100, "labels from -7 to 3,"),
        ([4, 9, 0], 9, "labels from 0 to 4,"),  # an ignore_index above the classes
    ],
)
def test_labels_outside_the_classes_name_the_kept_ones(
    targets: list[int], ignore_index: int, message: str
) -> None:
    check = BatchCheck("N", (3,), "float32", task="class", outputs=(4,), ignore_index=ignore_index)
    with pytest.raises(DataMismatch, match=message):
        check("d", torch.zeros(3, 3), torch.tensor(targets))


@pytest.mark.parametrize(
    ("targets", "ignore_index"),
    [([-100, -100], -100), ([0, 9, 3], 9), ([], -100), ([3, 0], 3)],
)
def test_ignored_labels_may_lie_outside_the_classes(targets: list[int], ignore_index: int) -> None:
    check = BatchCheck("N", (3,), "float32", task="class", outputs=(4,), ignore_index=ignore_index)
    check("d", torch.zeros(len(targets), 3), torch.tensor(targets, dtype=torch.int64))


MODULE = """\
import torch


class Pictures(torch.utils.data.Dataset):
    def __init__(self, size, channels):
        self.size, self.channels = size, channels

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return torch.randn(self.channels, 4, 4), index % 3
"""

PROGRAM = """\
use pictures
experiment E:
    seed = 0
    device = "cpu"
dataset images:
    from pictures.Pictures
    size = 4
    channels = {channels}
    batch = 2
model Net:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(3)
train Net on images:
    epochs = 1
"""


def test_a_program_with_unknown_data_stops_with_one_line(tmp_path: Path) -> None:
    """The program fits (1,)-channel data (tests/trust/test_sourcemap.py runs one that does)."""
    (tmp_path / "pictures.py").write_text(MODULE)
    code = compile_text(PROGRAM.format(channels=3), "job.aur")
    assert code.count("data_check") == 2  # built once, called in the loop
    (tmp_path / "job.py").write_text(code)
    done = run_python("import runpy; runpy.run_path('job.py', run_name='__main__')", tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: training data 'images' gives inputs of shape (3, 4, 4) float32, but model "
        "'Net' takes (1, 4, 4) float32"
    ]
