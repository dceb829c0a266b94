"""A run split at epoch k and resumed to n equals an uninterrupted n-epoch run, bitwise."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.training.helpers import run_python, write_program
from tests.training.programs import CLASSIFIER, GAN

DRIVER = """
import sys
import torch
torch.use_deterministic_algorithms(True)
import {module}
result = {module}.{function}(resume_from={resume!r})
models = result if isinstance(result, tuple) else (result,)
torch.save(
    {{"states": [m.state_dict() for m in models], "history": models[0].training_history}},
    {out!r},
)
"""


def _run(folder: Path, module: str, function: str, out: str, resume: str | None = None) -> None:
    code = DRIVER.format(module=module, function=function, resume=resume, out=out)
    done = run_python(code, folder)
    assert done.returncode == 0, done.stderr


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    return torch.load(path, weights_only=True)  # type: ignore[no-any-return]


def _assert_equal_runs(a: dict, b: dict) -> None:  # type: ignore[type-arg]
    assert a["history"] == b["history"]
    for left, right in zip(a["states"], b["states"], strict=True):
        assert left.keys() == right.keys()
        for key in left:
            assert torch.equal(left[key], right[key]), key


@pytest.mark.parametrize(
    ("source", "function", "k", "n"),
    [(CLASSIFIER, "train_net", 2, 4), (GAN, "train_gan_maker", 1, 3)],
    ids=["standard", "gan"],
)
@pytest.mark.parametrize("standalone", [False, True], ids=["default", "standalone"])
def test_split_run_equals_uninterrupted(
    tmp_path: Path, source: str, function: str, k: int, n: int, standalone: bool
) -> None:
    """The split run in one mode equals the uninterrupted run in the other, bitwise."""
    mode = {"standalone": standalone}
    write_program(tmp_path, source.format(epochs=k, folder="split"), "part", **mode)
    write_program(tmp_path, source.format(epochs=n, folder="split"), "rest", **mode)
    other = {"standalone": not standalone}
    write_program(tmp_path, source.format(epochs=n, folder="whole"), "whole", **other)
    _run(tmp_path, "part", function, "part.pt")
    checkpoint = _load(tmp_path / "split" / "last.pt")
    assert checkpoint["epoch"] == k
    _run(tmp_path, "rest", function, "rest.pt", resume="split/last.pt")
    _run(tmp_path, "whole", function, "whole.pt")
    rest, whole = _load(tmp_path / "rest.pt"), _load(tmp_path / "whole.pt")
    assert len(whole["history"]) == n
    _assert_equal_runs(rest, whole)


def test_incompatible_configuration_is_refused(tmp_path: Path) -> None:
    write_program(tmp_path, CLASSIFIER.format(epochs=1, folder="ck"), "first")
    changed = CLASSIFIER.replace("adam(lr=0.01)", "adam(lr=0.02)")
    write_program(tmp_path, changed.format(epochs=2, folder="ck"), "second")
    done = run_python(
        """
import first, second
first.train_net()
try:
    second.train_net(resume_from="ck")
except ValueError as error:
    print(error)
""",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "training configuration differs (optimizer:" in done.stdout
    assert "0.01" in done.stdout and "0.02" in done.stdout
