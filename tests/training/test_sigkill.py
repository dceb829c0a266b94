"""K-CKPT: SIGKILL at random moments always leaves a last.pt that loads and resumes exactly.

One driver process imports torch once and forks a training child per attempt (a fresh
interpreter per kill would spend the CI budget on imports). Each child resumes from the
previous child's last.pt; the driver kills it after a random delay, loads last.pt with
weights_only=True and checks every file that last.pt's epoch commits (``kill_checks``: no
epoch_NNNN.pt lost, best.pt not behind the recorded best, no history row lost). The
children alternate between the default program and its --standalone twin, so each mode
resumes the other's checkpoints. After the kills, a last child finishes the job: its
weights, and every file of its folder, must equal an uninterrupted run's, bitwise, with no
.tmp file or lock left. test_save_kill_points.py kills at each named point of the save;
AURANE_LONG=1 raises the kill count here to 100 (the campaign, see docs/training.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.training.helpers import run_python, write_program
from tests.training.kill_checks import CHECKS
from tests.training.programs import CLASSIFIER

KILLS = 100 if os.environ.get("AURANE_LONG") == "1" else 20

DRIVER = """
import os, random, signal, time
import torch
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
import job_default, job_standalone, whole
jobs = (job_default, job_standalone)

def child(function, resume):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            model = function(resume_from=resume)
            torch.save(model.state_dict(), "final.pt" if resume is not None else "whole.pt")
        except BaseException:
            import traceback; traceback.print_exc(); code = 1
        os._exit(code)
    return pid

rng = random.Random({seed})
loads = 0
for attempt in range({kills}):
    resume = "ck" if run_of("ck") is not None else None  # the job's folder: its latest run
    pid = child(jobs[attempt % 2].train_net, resume)
    while resume is None and run_of("ck") is None:
        time.sleep(0.005)  # training has started once the first last.pt exists
    time.sleep(rng.uniform(0.0, 0.25))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0, status
    assert len([n for n in os.listdir("ck") if n.startswith("run_")]) == 1  # resumed in place
    checkpoint = torch.load(os.path.join(run_of("ck"), "last.pt"), weights_only=True)
    assert checkpoint["format"] == "aurane-checkpoint-2"
    epoch, problems = committed(run_of("ck"))
    assert not problems, (attempt, problems)
    loads += 1
for function, resume in ((job_standalone.train_net, "ck"), (whole.train_net, None)):
    _, status = os.waitpid(child(function, resume), 0)
    assert os.WEXITSTATUS(status) == 0, status
final, reference = torch.load("final.pt"), torch.load("whole.pt")
assert all(torch.equal(final[k], reference[k]) for k in reference)
problems = same_folders(run_of("ck"), run_of("whole_ck"))
assert not problems, problems
print("epoch at last kill", checkpoint["epoch"], "loads", loads)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.skipif(sys.platform == "darwin", reason="fork after torch import is unsafe on macOS")
def test_sigkill_at_random_moments_always_leaves_a_resumable_last_pt(tmp_path: Path) -> None:
    # a slow lr decay, so every epoch still changes the weights the final check compares
    source = CLASSIFIER.replace("gamma=0.7", "gamma=0.99")
    for mode in ("default", "standalone"):
        job = source.format(epochs=150, folder="ck")
        write_program(tmp_path, job, f"job_{mode}", standalone=mode == "standalone")
    write_program(tmp_path, source.format(epochs=150, folder="whole_ck"), "whole")
    done = run_python(CHECKS + DRIVER.format(seed=11, kills=KILLS), tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"loads {KILLS}" in done.stdout
