"""K-CKPT / issue 21 item 7: a SIGKILL at every named point of a checkpoint save loses no file.

``AURANE_KILL_AT=POINT[@N]`` makes the runtime SIGKILL itself the Nth time it reaches POINT,
an instant of ``save_file`` (``opened``: the temporary file is empty; ``written``: the
payload is written but partly still buffered; ``synced``: on disk, not yet renamed;
``replaced``: renamed, the folder not yet synced) for each file of an epoch's save. One
driver imports torch once and forks, per point, a run killed there, checks what it left
against its ``last.pt`` (``kill_checks.committed``), resumes it in a fresh child to the end
(default and --standalone programs alternate, so each resumes the other's files) and
compares the folder with an uninterrupted run's, file by file. The tests below read the
one driver's results, one case each. AURANE_LONG=1 (the campaign) also kills at later
epochs' saves (5 epochs, 50 kills).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from tests.training.helpers import run_python, write_program
from tests.training.kill_checks import CHECKS
from tests.training.programs import CLASSIFIER

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
    pytest.mark.skipif(sys.platform == "darwin", reason="fork after torch import is unsafe"),
]

LONG = os.environ.get("AURANE_LONG") == "1"
EPOCHS = 5 if LONG else 3
PHASES = ("opened", "written", "synced", "replaced")
# Each file's arrivals (the Nth time its save reaches a point) that land mid-run: last.pt is
# also written for epoch 0, so its third arrival is epoch 2's save; the history files'
# second is epoch 2's; best.pt's first is epoch 1's (the first epoch always improves);
# epoch_0002.pt is the first epoch file. AURANE_LONG=1 adds later epochs' arrivals.
ARRIVALS = {
    "epoch_NNNN.pt": (1, 2) if LONG else (1,),
    "best.pt": (1,),
    "metrics.csv": (2, 3, 4) if LONG else (2,),
    "metrics.jsonl": (2, 3, 4) if LONG else (2,),
    "last.pt": (3, 4, 5) if LONG else (3,),
}


def _points() -> list[str]:
    points = [
        f"{name}:{phase}@{n}" for name, ns in ARRIVALS.items() for phase in PHASES for n in ns
    ]
    before = ["last.pt:synced@1", "last.pt:replaced@1"]  # before any training
    # making the run's folder, and pointing ``latest`` at it after its first checkpoint
    return [*points, *before, "run:created", "latest:linked"]


POINTS = _points()
# issue 25: the checkpoint every 4 steps (6 batches an epoch: steps 4, 8, 16, ... are in the
# middle of an epoch). last.pt's second arrival is step 4's, in epoch 1 (no history yet);
# its fourth is step 8's, in epoch 2, as is the history files' second (after epoch 1's).
STEP_POINTS = [
    *(f"steps/last.pt:{phase}@{n}" for phase in PHASES for n in (2, 4)),
    *(f"steps/metrics.jsonl:{phase}@2" for phase in ("written", "replaced")),
    "steps/step@5",  # between two step checkpoints: resumed from step 4's
]

DRIVER = (
    CHECKS
    + """
import json, sys, traceback
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)  # imports what the runs need
import job_default, job_standalone, steps_default, steps_standalone
programs = {"": (job_default, job_standalone), "steps": (steps_default, steps_standalone)}
for program in ("", "steps"):
    os.makedirs("ref" + program)

def child(folder, job, resume, kill_at):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.chdir(folder)
            if kill_at:
                os.environ["AURANE_KILL_AT"] = kill_at
            job.train_net(resume_from=resume)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return os.waitpid(pid, 0)[1]

assert child("ref", job_default, None, None) == 0
assert child("refsteps", steps_default, None, None) == 0
results = {}
for index, named in enumerate(%(points)r):
    program, _, point = named.rpartition("/")
    jobs = programs[program]
    folder = f"p{index}"
    os.makedirs(folder)
    status = child(folder, jobs[index %% 2], None, point)
    outcome = {"killed": os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9}
    run = run_of(folder + "/ck")
    outcome["epoch"], outcome["problems"] = committed(run) if run else (-1, [])
    outcome["left"] = sorted(os.listdir(run)) if run else []
    if run is None and os.path.isdir(folder + "/ck"):  # killed before its first checkpoint
        outcome["left"] = sorted(os.listdir(os.path.join(folder, "ck", "run_0001")))
    outcome["partial"] = bool(run) and torch.load(
        os.path.join(run, "last.pt"), weights_only=True
    )["partial"] is not None
    resume = "ck" if run is not None else None
    if child(folder, jobs[(index + 1) %% 2], resume, None) != 0:
        outcome["after"] = ["the resumed run failed"]
    else:
        outcome["after"] = same_folders(run_of(folder + "/ck"), run_of(f"ref{program}/ck"))
    results[named] = outcome
print("RESULTS " + json.dumps(results))
"""
)


@pytest.fixture(scope="module")
def kills(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("kill_points")
    source = CLASSIFIER.format(epochs=EPOCHS, folder="ck")
    write_program(folder, source, "job_default")
    write_program(folder, source, "job_standalone", standalone=True)
    steps = source.replace("save_best = true", "save_best = true\n    checkpoint_every_steps = 4")
    write_program(folder, steps, "steps_default")
    write_program(folder, steps, "steps_standalone", standalone=True)
    done = run_python(DRIVER % {"points": POINTS + STEP_POINTS}, folder, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULTS "))
    results: dict[str, Any] = json.loads(line.removeprefix("RESULTS "))
    return results


def _problems(kills: dict[str, Any], kind: str) -> dict[str, list[str]]:
    found = {p: [m for m in r["problems"] if m.startswith(kind)] for p, r in kills.items()}
    return {point: messages for point, messages in found.items() if messages}


def test_every_phase_point_of_every_save_is_reached_and_killed(kills: dict[str, Any]) -> None:
    assert len(kills) == len(POINTS) + len(STEP_POINTS) >= 33
    assert not [point for point, outcome in kills.items() if not outcome["killed"]]


def test_a_kill_at_a_step_checkpoint_resumes_from_the_middle_of_an_epoch(
    kills: dict[str, Any],
) -> None:
    """Issue 25: kills around the checkpoints every 4 steps (and between two of them) leave
    a last.pt of the step before, or of this step once it is renamed into place; the run
    resumed from it (in the middle of an epoch) equals an uninterrupted one, file by file."""
    steps = {point: kills[point] for point in STEP_POINTS}
    assert {p for p, r in steps.items() if r["partial"]} >= {
        "steps/last.pt:replaced@2",
        "steps/last.pt:replaced@4",
        "steps/step@5",
    }
    assert not steps["steps/last.pt:synced@2"]["partial"]  # epoch 0's, until the rename
    assert not {
        point: outcome["problems"] for point, outcome in steps.items() if outcome["problems"]
    }
    assert not {point: outcome["after"] for point, outcome in steps.items() if outcome["after"]}


def test_a_kill_between_checkpoint_writes_loses_no_epoch_file(kills: dict[str, Any]) -> None:
    assert not _problems(kills, "epoch-file")
    assert not _problems(kills, "last")
    # the kills landed on both sides of epoch 2's commit
    assert {outcome["epoch"] for outcome in kills.values()} >= {0, 1, 2}


def test_best_pt_never_lags_the_recorded_best(kills: dict[str, Any]) -> None:
    assert not _problems(kills, "best")


def test_history_files_never_lose_a_committed_epoch(kills: dict[str, Any]) -> None:
    assert not _problems(kills, "history")


def test_tmp_files_left_by_a_kill_are_removed_by_the_next_run(kills: dict[str, Any]) -> None:
    left = {p: [n for n in r["left"] if n.endswith(".tmp")] for p, r in kills.items()}
    # a kill before the rename leaves the temporary file (half written at "written")...
    files = [p for p in POINTS if p.split(":")[0] in ARRIVALS or p.startswith("last.pt")]
    before_rename = [p for p in files if p.split(":")[1].split("@")[0] != "replaced"]
    assert all(left[point] for point in before_rename), left
    locked = [point for point in kills if point != "run:created"]  # (killed before the lock)
    assert all(".aurane-run.lock" in kills[point]["left"] for point in locked)
    # ...and the resumed run removes it and the stale lock (same_folders: no extra names)
    assert not {p: r["after"] for p, r in kills.items() if any("files" in m for m in r["after"])}


def test_a_run_resumed_after_a_kill_at_any_phase_point_equals_an_uninterrupted_one(
    kills: dict[str, Any],
) -> None:
    assert not {point: outcome["after"] for point, outcome in kills.items() if outcome["after"]}
