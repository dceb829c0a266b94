"""K-DDP: under torchrun (gloo, CPU) both ranks end with identical weights, rank 0 writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.training.helpers import env, run_python, write_program
from tests.training.programs import CLASSIFIER

DRIVER = """
import os
import torch
import job
model = job.train_net()
torch.save(model.state_dict(), f"rank{os.environ['RANK']}.pt")
(job._finish_distributed if hasattr(job, "_finish_distributed") else job.rt.finish_distributed)()
"""


@pytest.mark.parametrize("standalone", [False, True], ids=["default", "standalone"])
def test_torchrun_two_ranks_identical_weights_one_set_of_files(
    tmp_path: Path, standalone: bool
) -> None:
    write_program(tmp_path, CLASSIFIER.format(epochs=3, folder="ck"), "job", standalone=standalone)
    (tmp_path / "driver.py").write_text(DRIVER)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        "driver.py",
    ]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env={**env(), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    assert all(torch.equal(first[key], second[key]) for key in first)
    assert done.stdout.count("epoch 3/3") == 1  # rank 0 alone prints
    written = sorted(p.name for p in (tmp_path / "ck").iterdir())
    assert [name for name in written if name.endswith(".pt")] == [
        "best.pt",
        "epoch_0002.pt",
        "last.pt",
    ]
    assert {"metrics.csv", "metrics.jsonl"} <= set(written)  # the history, written by rank 0
    assert not any(name.endswith((".tmp", ".lock")) for name in written)
    checkpoint = torch.load(tmp_path / "ck" / "last.pt", weights_only=True)
    assert checkpoint["epoch"] == 3
    # a checkpoint written at world size 2 resumes in a single process
    write_program(tmp_path, CLASSIFIER.format(epochs=4, folder="ck"), "more")
    resumed = run_python(
        "import more; m = more.train_net(resume_from='ck'); print(len(m.training_history))",
        tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1] == "4"
