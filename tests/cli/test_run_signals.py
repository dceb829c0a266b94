"""Issue 12, item 4: interrupts the other tests do not send (real signals, child processes).

test_run_behaviour.py sends one signal to one process (``kill -INT PID``). Here: a
terminal's Ctrl-C, which goes to the whole foreground process group (``aurane run`` must
pass it on exactly once, so one report line), and a second signal that arrives before the
first one's safe point (it stops at once; still no traceback and nothing half-written).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import start_session
from tests.training.helpers import compile_text

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# one-sample batches for 100000 epochs: still training when the test signals it
LONG = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 32\n    features = 4\n"
    "    batch = 1\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    "        x -> dense(1)\n\ntrain M on d:\n    epochs = 100000\n    loss = mse\n"
    '    checkpoint_dir = "ck"\n'
)


def _interrupt(child: subprocess.Popen[str], send: list[tuple[str, int]]) -> tuple[int, str]:
    """Wait for the first epoch line, send the signals, return (status, stderr)."""
    assert child.stdout is not None and child.stderr is not None
    try:
        header = child.stdout.readline()  # the run's folder and length
        assert header.startswith("train_m: run ck/run_0001"), header + child.stderr.read()
        line = child.stdout.readline()
        assert line.startswith("epoch 1/"), line + child.stderr.read()
        for target, signum in send:
            if target == "group":  # Ctrl-C at a terminal: every process of the job
                os.killpg(child.pid, signum)
            else:
                os.kill(child.pid, signum)
        _, err = child.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
    return child.returncode, err


def _complete(folder: Path) -> None:
    names = {p.name for p in folder.iterdir()}
    assert not [n for n in names if n.endswith(".tmp")], names
    assert ".aurane-run.lock" not in names, names
    assert torch.load(folder / "last.pt", weights_only=True)["format"] == "aurane-checkpoint-2"


def test_ctrl_c_to_the_aurane_run_job_is_reported_once(tmp_path: Path) -> None:
    (tmp_path / "long.aur").write_text(LONG)
    child = start_session([sys.executable, "-m", "aurane", "run", "long.aur"], tmp_path)
    status, err = _interrupt(child, [("group", signal.SIGINT)])
    assert status == 130, err
    assert "Traceback" not in err
    report = [line for line in err.splitlines() if line.startswith("interrupted")]
    assert len(report) == 1, err  # passed on once: not a second, immediate stop
    assert "resume with: aurane run long.aur --resume ck/run_0001/last.pt" in report[0]
    _complete(tmp_path / "ck" / "run_0001")


def test_a_second_signal_stops_at_once_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "long.aur").write_text(LONG)
    (tmp_path / "long.py").write_text(compile_text(LONG, "long.aur"))  # no interpreter start
    child = start_session([sys.executable, "long.py"], tmp_path)
    status, err = _interrupt(child, [("process", signal.SIGTERM), ("process", signal.SIGTERM)])
    assert status == 143, err
    assert "Traceback" not in err
    report = [line for line in err.splitlines() if line.startswith("interrupted")]
    assert len(report) == 1, err
    # the second signal's report also says where the last checkpoint is (issue 21, K-RUN)
    assert "last complete checkpoint ck/run_0001/last.pt (" in report[0], report
    assert "resume with: python long.py --resume ck/run_0001/last.pt" in report[0], report
    _complete(tmp_path / "ck" / "run_0001")
