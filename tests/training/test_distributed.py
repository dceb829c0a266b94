"""K-DDP: under torchrun (gloo, CPU) both ranks end with identical weights, rank 0 writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

from tests.training.helpers import env, run_python, write_program
from tests.training.programs import CLASSIFIER

# One torchrun serves both modes: the --standalone program first (its inlined runtime joins
# the process group), then the default one (the installed runtime finds the group joined).
# Each rank saves its weights; the group is left once, at the end.
DRIVER = """
import os
import torch
import job_standalone, job_default
for job in (job_standalone, job_default):
    model = job.train_net()
    torch.save(model.state_dict(), f"{job.__name__}_rank{os.environ['RANK']}.pt")
job_default.rt.finish_distributed()
"""
MODES = ("standalone", "default")


def test_torchrun_two_ranks_identical_weights_one_set_of_files(tmp_path: Path) -> None:
    for mode in MODES:
        source = CLASSIFIER.format(epochs=3, folder=f"ck_{mode}")
        write_program(tmp_path, source, f"job_{mode}", standalone=mode == "standalone")
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
    assert done.stdout.count("epoch 3/3") == len(MODES)  # rank 0 alone prints
    for mode in MODES:
        first = torch.load(tmp_path / f"job_{mode}_rank0.pt")
        second = torch.load(tmp_path / f"job_{mode}_rank1.pt")
        assert all(torch.equal(first[key], second[key]) for key in first), mode
        written = sorted(p.name for p in (tmp_path / f"ck_{mode}").iterdir())
        assert [name for name in written if name.endswith(".pt")] == [
            "best.pt",
            "epoch_0002.pt",
            "last.pt",
        ]
        assert {"metrics.csv", "metrics.jsonl"} <= set(written)  # the history, by rank 0
        assert not any(name.endswith((".tmp", ".lock")) for name in written)
        checkpoint = torch.load(tmp_path / f"ck_{mode}" / "last.pt", weights_only=True)
        assert checkpoint["epoch"] == 3
    # the two modes train the same weights
    default, standalone = (torch.load(tmp_path / f"job_{m}_rank0.pt") for m in MODES[::-1])
    assert all(torch.equal(default[key], standalone[key]) for key in default)
    # a checkpoint written at world size 2 resumes in a single process
    write_program(tmp_path, CLASSIFIER.format(epochs=4, folder="ck_default"), "more")
    resumed = run_python(
        "import more; m = more.train_net(resume_from='ck_default'); print(len(m.training_history))",
        tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1] == "4"
