"""Source maps: a runtime error in a generated forward names the ``.aur`` line and column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aurane.compile import generated_source
from aurane.sourcemap import PREFIX, parse_table
from tests.conftest import env, run_cli
from tests.trust.util import MLP

pytest.importorskip("torch")

DRIVER = """\
import aurane.sourcemap; aurane.sourcemap.install()
import torch
from net_gen import Net
Net()(torch.randn(2, 5))
"""

# `check` refuses data that does not fit a model when it knows the dataset, and the program
# checks the first batch of one it does not; this one drifts after its first batch.
DRIFT = """\
import torch


class Drift(torch.utils.data.Dataset):
    def __init__(self, size, features, later, targets=1, later_targets=1):
        self.size, self.widths = size, ((features, targets), (later, later_targets))

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        width, targets = self.widths[index >= 4]
        return torch.randn(width), torch.randn(targets)
"""

TRAIN = """\
use drift
dataset points:
    from drift.Drift
    size = 8
    features = 4
    later = 5
    batch = 4
    shuffle = false
model Reg:
    input_shape = (4,)
    def forward(x):
        x -> dense(8).relu
          -> dense(1)

train Reg on points:
    epochs = 1
    loss = mse
"""


def test_the_table_maps_forward_and_init_lines_to_spans() -> None:
    code = generated_source(MLP, "mlp.aur")
    lines = code.splitlines()
    table = [line for line in lines if line.startswith(PREFIX)]
    assert table and all(len(line) <= 100 for line in table)
    assert lines[-len(table) :] == table  # at the end of the file
    parsed = parse_table(lines)
    assert parsed is not None and parsed.source == "mlp.aur"
    first = next(i for i, line in enumerate(lines, 1) if "self.dense1(features)" in line)
    assert parsed.locate(first) == (4, 18)  # hidden = dense(features, 8).relu
    init = next(i for i, line in enumerate(lines, 1) if "self.dense2 = " in line)
    assert parsed.locate(init) == (5, 18)
    compile(code, "mlp.py", "exec")


def _write(tmp_path: Path, source: str) -> None:
    (tmp_path / "net.aur").write_text(source)
    (tmp_path / "net_gen.py").write_text(generated_source(source, "net.aur"))


def test_a_runtime_error_in_forward_names_the_aur_line(tmp_path: Path) -> None:
    _write(tmp_path, MLP)
    (tmp_path / "drive.py").write_text(DRIVER)
    done = subprocess.run(
        [sys.executable, "drive.py"], cwd=tmp_path, capture_output=True, text=True, env=env()
    )
    assert done.returncode == 1
    assert "mat1 and mat2 shapes cannot be multiplied" in done.stderr
    frame = done.stderr.index('net_gen.py", line')
    assert "produced by net.aur:4:18" in done.stderr[frame:]
    assert done.stderr.rstrip().endswith("came from net.aur:4:18")


def test_the_runner_module_installs_the_hook(tmp_path: Path) -> None:
    _write(tmp_path, MLP)
    (tmp_path / "plain.py").write_text(DRIVER.split("\n", 1)[1])
    done = subprocess.run(
        [sys.executable, "-m", "aurane.sourcemap", "plain.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env(),
    )
    assert done.returncode == 1 and "net.aur:4:18" in done.stderr


def test_aurane_run_reports_the_aur_line(tmp_path: Path) -> None:
    (tmp_path / "train.aur").write_text(TRAIN)
    (tmp_path / "drift.py").write_text(DRIFT)
    done = run_cli("run", "train.aur", cwd=tmp_path)
    assert done.returncode == 1
    assert "produced by train.aur:12:14" in done.stderr


def test_a_training_function_error_names_its_train_block(tmp_path: Path) -> None:
    wrong_targets = TRAIN.replace("    later = 5\n", "    later = 4\n    later_targets = 3\n")
    (tmp_path / "train.aur").write_text(wrong_targets)
    (tmp_path / "drift.py").write_text(DRIFT)
    done = run_cli("run", "train.aur", cwd=tmp_path)
    assert done.returncode == 1
    frame = done.stderr.index(", in train_reg")
    assert "produced by train.aur:16:1" in done.stderr[frame:]  # train Reg on points:
