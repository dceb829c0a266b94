"""K-DDP: under torchrun (gloo, CPU) both ranks end with identical weights, rank 0 writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.shared_run import run_once
from tests.training.helpers import env, job_here, write_program
from tests.training.programs import CLASSIFIER

# One torchrun serves both tests (tests/shared_run.py: once per session). The modes'
# part: the --standalone program first (its inlined runtime joins the process group), then
# the default one (the installed runtime finds the group joined); each rank saves its
# weights. Then issue 25's part (SPLIT, below) in the same group, which is left once, at the
# end. Rank 0 prints SPLIT_STARTS between the parts, before the collectives of the second,
# so each test reads the output of its own part.
SPLIT_STARTS = "-- the split run's part --"
DRIVER = """
import os
import sys
import torch
from aurane.runtime import Interrupted
import job_standalone, job_default, job_whole, job_split
for job in (job_standalone, job_default):
    model = job.train_net()
    torch.save(model.state_dict(), f"{{job.__name__}}_rank{{os.environ['RANK']}}.pt")
if os.environ["RANK"] == "0":
    print({split_starts!r}, flush=True)
{split}
job_default.rt.finish_distributed()
# the results are saved and the group is gone: leave without interpreter finalization, where
# gloo's worker threads can still abort the process (SIGABRT, pytorch/pytorch#179291)
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""
MODES = ("standalone", "default")


def _launch(folder: Path) -> None:
    for mode in MODES:
        source = CLASSIFIER.format(epochs=3, folder=f"ck_{mode}")
        write_program(folder, source, f"job_{mode}", standalone=mode == "standalone")
    source = CLASSIFIER.replace("save_best = true", "save_best = true\n    accumulate = 2")
    write_program(folder, source.format(epochs=3, folder="ck_whole"), "job_whole")
    write_program(folder, source.format(epochs=3, folder="ck_split"), "job_split")
    (folder / "driver.py").write_text(DRIVER.format(split_starts=SPLIT_STARTS, split=SPLIT))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    done = subprocess.run(
        [*command, "--nproc-per-node=2", "driver.py"],
        cwd=folder,
        env={**env(), "OMP_NUM_THREADS": "1", "AURANE_PLOT": "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    (folder / "launch.json").write_text(json.dumps([done.returncode, done.stdout, done.stderr]))


@pytest.fixture(scope="module")
def launch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The launch's folder and the output of its two parts (the modes', the split run's)."""
    folder = run_once(tmp_path_factory, "torchrun_two_ranks", _launch)
    code, out, err = json.loads((folder / "launch.json").read_text())
    assert code == 0, out + err
    modes, _, split = out.partition(SPLIT_STARTS + "\n")
    return folder, modes, split


def test_torchrun_two_ranks_identical_weights_one_set_of_files(
    launch: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path, stdout, _ = launch
    assert stdout.count("epoch 3/3") == len(MODES)  # rank 0 alone prints
    for mode in MODES:
        first = torch.load(tmp_path / f"job_{mode}_rank0.pt")
        second = torch.load(tmp_path / f"job_{mode}_rank1.pt")
        assert all(torch.equal(first[key], second[key]) for key in first), mode
        written = sorted(p.name for p in (tmp_path / f"ck_{mode}" / "latest").iterdir())
        assert [name for name in written if name.endswith(".pt")] == [
            "best.pt",
            "epoch_0002.pt",
            "last.pt",
        ]
        assert {"metrics.csv", "metrics.jsonl", "config.json"} <= set(written)  # by rank 0
        assert [p.name for p in (tmp_path / f"ck_{mode}").glob("run_*")] == ["run_0001"]
        assert not any(name.endswith((".tmp", ".lock")) for name in written)
        checkpoint = torch.load(tmp_path / f"ck_{mode}" / "latest" / "last.pt", weights_only=True)
        assert checkpoint["epoch"] == 3
    # the two modes train the same weights
    default, standalone = (torch.load(tmp_path / f"job_{m}_rank0.pt") for m in MODES[::-1])
    assert all(torch.equal(default[key], standalone[key]) for key in default)
    # a checkpoint written at world size 2 resumes in a single process (this one); it
    # continues ck_default, which the other test does not read
    monkeypatch.chdir(tmp_path)
    more = job_here(CLASSIFIER.format(epochs=4, folder="ck_default"), "more")
    assert len(more["train_net"](resume_from="ck_default").training_history) == 4


# Issue 25: a signal on one rank in the middle of an epoch stops both at the same step (they
# decide together), rank 0 writes a checkpoint of that step with each rank's figures so far,
# and the resumed run (both ranks) ends with the uninterrupted run's weights and history,
# bitwise. accumulate = 2 also runs DDP's no_sync on the batches that do not end a step.
SPLIT = """
rank = os.environ["RANK"]
whole = job_whole.train_net()
os.environ.update(AURANE_SIGNAL_AT="3", AURANE_SIGNAL_RANK="1")  # rank 1 alone, after step 3
try:
    job_split.train_net()
except Interrupted as error:
    sys.stdout.write(f"rank {rank}: {error}\\n")  # one write: print writes the newline apart
    sys.stdout.flush()
else:
    raise SystemExit("the signal did not stop the run")
del os.environ["AURANE_SIGNAL_AT"]
partial = torch.load("ck_split/latest/last.pt", weights_only=True)["partial"]
assert partial is not None and partial["epoch"] == 2 and partial["batches"] == 2, partial
assert len(partial["stats"]) == 2  # each rank's figures of epoch 2 so far
resumed = job_split.train_net(resume_from="ck_split")
torch.save(
    {"whole": whole.state_dict(), "resumed": resumed.state_dict(),
     "histories": [whole.training_history, resumed.training_history]},
    f"split_rank{rank}.pt",
)
"""


def test_torchrun_a_signal_on_one_rank_mid_epoch_then_resume_equals_uninterrupted(
    launch: tuple[Path, str, str],
) -> None:
    tmp_path, _, stdout = launch
    # 43 samples over 2 ranks: 22 each, 3 batches of 8 an epoch, 2 steps (2 + 1 batches)
    # two processes share the pipe: a line of one may follow an unfinished line of the other
    found = re.findall(r"rank ([01]): (interrupted .*?)(?=rank [01]: |\n|$)", stdout)
    stopped = dict(found)
    # both ranks stopped at the same step, rank 1's signal (rank 0 had none)
    assert sorted(stopped) == ["0", "1"], stdout
    assert stopped["0"] == stopped["1"], stopped
    assert "interrupted in epoch 2 at step 3; last complete checkpoint" in stopped["0"]
    assert "ck_split/run_0001/last.pt (step 3, in epoch 2)" in stopped["0"]
    for rank in (0, 1):
        saved = torch.load(tmp_path / f"split_rank{rank}.pt")
        whole, resumed = saved["whole"], saved["resumed"]
        assert all(torch.equal(whole[key], resumed[key]) for key in whole), rank
        assert saved["histories"][0] == saved["histories"][1]
