"""Issue 12, item 4: a run that reports and behaves (K-RUN), with real signals.

The tests drive ``aurane run`` or the generated program: summary at the end, paths
against the working directory, SIGINT/SIGTERM at a safe point with one line and exit
130/143, ``--resume`` and ``-- ARGS``, the checkpoint-folder lock, and the guards of
``compile -o`` and ``run``. Signals, the lock's other holder, SIGKILL and each exit status
are real child processes; the sessions that only read the command's options and the
program's output run both in this process (run_here).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.conftest import run_cli, start_session
from tests.training.helpers import compile_text, main_here, python_here, run_here

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SHORT = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 32\n    features = 4\n"
    "    batch = 8\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    "        x -> dense(1)\n\ntrain M on d:\n    epochs = {epochs}\n    loss = mse\n"
    '    checkpoint_dir = "{folder}"\n    save_best = true\n'
)
# one-sample batches for 100000 epochs: still training when a test signals it
LONG = SHORT.replace("batch = 8", "batch = 1")


def _aurane(*args: str) -> list[str]:
    return [sys.executable, "-m", "aurane", *args]


def _wait_for_training(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None
    header = child.stdout.readline()  # the run's header: its folder and its length
    assert header.startswith("train_m: run ck/run_"), header
    line = child.stdout.readline()  # the first epoch line: training is under way
    assert line.startswith("epoch 1/"), line + (child.stderr.read() if child.stderr else "")


def _finish(child: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = child.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
    return child.returncode, out, err


def _only_complete_files(folder: Path) -> None:
    names = {p.name for p in folder.iterdir()}
    assert not [n for n in names if n.endswith(".tmp")], names
    assert ".aurane-run.lock" not in names, names  # the lock went with the run
    checkpoint = torch.load(folder / "last.pt", weights_only=True)
    assert checkpoint["format"] == "aurane-checkpoint-2"


def test_summary_files_and_paths_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """aurane run, and then the generated program from another folder (``python
    ../src/prog.py``: its argv, that folder its working directory), run in this process
    (run_here, python_here); the compile is a command."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "prog.aur").write_text(SHORT.format(epochs=2, folder="ck"))
    done = run_here("src/prog.aur", cwd=tmp_path)  # aurane run and its program, here
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "ck" / "run_0001"  # beside the working directory, not the source
    assert not (tmp_path / "src" / "ck").exists()
    assert {"last.pt", "best.pt", "metrics.csv", "metrics.jsonl"} <= {
        p.name for p in folder.iterdir()
    }
    _only_complete_files(folder)
    out = done.stdout
    assert out.startswith("train_m: run ck/run_0001 - 2 epochs x 4 batches = 8 steps\n")
    assert "train_m: 2 epochs, 8 steps in" in out
    assert "final (epoch 2): loss" in out and "best epoch" in out
    assert "files in ck/run_0001: best.pt, config.json, last.pt, metrics.csv, metrics.jsonl" in out
    assert "resume or extend: aurane run src/prog.aur --resume ck/run_0001 --epochs 3" in out
    rows = (folder / "metrics.csv").read_text().splitlines()
    assert rows[0].startswith("epoch,loss") and len(rows) == 3
    # the generated program resolves the same relative path against its working directory
    compiled = run_cli("compile", "src/prog.aur", "-o", "src/prog.py", "--no-cache", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    (tmp_path / "elsewhere").mkdir()
    capsys.readouterr()
    with monkeypatch.context() as session:
        session.setattr(sys, "argv", ["../src/prog.py"])
        python_here(
            "import runpy; runpy.run_path('../src/prog.py', run_name='__main__')",
            tmp_path / "elsewhere",
        )
    assert (tmp_path / "elsewhere" / "ck" / "latest" / "last.pt").is_file()
    out = capsys.readouterr().out
    assert "resume or extend: python ../src/prog.py --resume ck/run_0001" in out
    helped = run_cli("run", "--help", cwd=tmp_path)
    assert "working directory" in " ".join(helped.stdout.split())


def test_resume_extend_and_program_arguments(tmp_path: Path) -> None:
    """The three sessions run ``aurane run`` and its program in this process (run_here:
    the command's options and what it hands the program are its own); the program's usage
    error (exit 2, passed on) is a real ``aurane run`` and its child."""
    (tmp_path / "prog.aur").write_text(SHORT.format(epochs=2, folder="ck"))
    first = run_here("prog.aur", "--", "--epochs", "1", cwd=tmp_path)  # passed through
    assert first.returncode == 0, first.stderr
    assert "epoch 1/1" in first.stdout and "epoch 2/" not in first.stdout
    resumed = run_here("prog.aur", "--resume", "--epochs", "3", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    lines = [line for line in resumed.stdout.splitlines() if line.startswith("epoch ")]
    assert [line.split(" - ")[0] for line in lines] == ["epoch 2/3", "epoch 3/3"]
    last = "ck/run_0001/last.pt"  # a run's last.pt: continued in its folder
    explicit = run_here("prog.aur", "--resume", last, "--epochs", "4", cwd=tmp_path)
    assert explicit.returncode == 0, explicit.stderr
    assert "epoch 4/4" in explicit.stdout and "epoch 3/4" not in explicit.stdout
    assert "4 epochs, 16 steps in" in explicit.stdout and "over 3 sessions" in explicit.stdout
    assert [p.name for p in (tmp_path / "ck").glob("run_*")] == ["run_0001"]
    history = torch.load(tmp_path / last, weights_only=True)["history"]
    assert [row["epoch"] for row in history] == [1, 2, 3, 4]
    bad = run_cli("run", "prog.aur", "--", "--no-such-option", cwd=tmp_path)
    assert bad.returncode == 2 and "--no-such-option" in bad.stderr


@pytest.mark.parametrize(
    ("how", "signum", "status"),
    [
        ("aurane", signal.SIGINT, 130),
        ("aurane", signal.SIGTERM, 143),
        ("python", signal.SIGINT, 130),
        ("standalone", signal.SIGTERM, 143),
    ],
)
def test_interrupts_stop_at_a_safe_point_with_one_line(
    tmp_path: Path, how: str, signum: int, status: int
) -> None:
    """Each status in a bare interpreter (``python long.py``), whose own exit status is
    checked (the in-process runs of the training tests see only ``SystemExit``'s code):
    130 for the default program, 143 for the --standalone one (the runtime copied in,
    compiled here); the default program's SIGTERM there is test_run_signals' (two
    signals, 143) and ``aurane run``'s here (its child is a bare interpreter too)."""
    source = LONG.format(epochs=100000, folder="ck")
    (tmp_path / "long.aur").write_text(source)
    if how == "aurane":
        args = _aurane("run", "long.aur")
    elif how == "standalone":
        code = compile_text(source, "long.aur", standalone=True)
        assert not re.search(r"^\s*(import|from) aurane\b", code, re.MULTILINE), code
        (tmp_path / "long.py").write_text(code)
        args = [sys.executable, "long.py"]
    else:
        compiled = run_cli("compile", "long.aur", "-o", "long.py", "--no-cache", cwd=tmp_path)
        assert compiled.returncode == 0, compiled.stderr
        args = [sys.executable, "long.py"]
    child = start_session(args, tmp_path)
    try:
        _wait_for_training(child)
    finally:
        os.kill(child.pid, signum)  # to the one process, as `kill -INT PID` would
    code, _, err = _finish(child)
    assert code == status, err
    assert "Traceback" not in err
    report = [line for line in err.splitlines() if line.startswith("interrupted ")]
    assert len(report) == 1, err
    # 32 one-sample steps an epoch: a checkpoint of the step the signal stopped at (or of
    # the epoch, when it came as the epoch's line was written)
    saved = torch.load(tmp_path / "ck" / "run_0001" / "last.pt", weights_only=True)
    if report[0].startswith("interrupted after epoch "):
        assert f"ck/run_0001/last.pt (epoch {saved['epoch']})" in report[0], report
        assert saved["partial"] is None
    else:
        step = int(report[0].split(" at step ")[1].split(";")[0])
        assert f"checkpoint ck/run_0001/last.pt (step {step}, in epoch " in report[0], report
        assert saved["steps"]["count"] == step and saved["partial"] is not None
    command = "aurane run long.aur" if how == "aurane" else "python long.py"
    assert f"resume with: {command} --resume ck/run_0001/last.pt" in report[0]
    _only_complete_files(tmp_path / "ck" / "run_0001")
    if how == "standalone":  # the checkpoint the line names loads into the program's model
        program: dict[str, Any] = {"__name__": "long_model"}  # not __main__: no run
        exec(compile((tmp_path / "long.py").read_text(), "long.py", "exec"), program)
        program["M"]().load_state_dict(saved["model"], strict=True)


# a dataset whose first sample raises: an error the program leaves uncaught
BROKEN_DATA = """\
import torch


class Broken(torch.utils.data.Dataset):
    def __init__(self, **options):
        pass

    def __len__(self):
        return 8

    def __getitem__(self, index):
        raise ValueError("a broken sample")
"""


def test_run_here_shows_an_uncaught_error_as_the_program_prints_it(tmp_path: Path) -> None:
    """The ``"Traceback" not in stderr`` check of the run_here tests fails when the
    program leaves an error uncaught: its traceback (with the ``.aur`` lines, as the
    child's ``aurane.sourcemap`` hook prints it) opens run_here's stderr, which the
    asserts below read, and the status is 1, as
    `aurane run` passes its program's on. (Before, the command's own "internal error in
    aurane" report, exit 123, stood in for the program's.)"""
    (tmp_path / "broken.py").write_text(BROKEN_DATA)
    source = SHORT.format(epochs=1, folder="ck").replace(
        "from aurane.data.SyntheticRegression", "from broken.Broken"
    )
    (tmp_path / "prog.aur").write_text(f"use broken\n\n{source}")
    done = run_here("prog.aur", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("Traceback (most recent call last):\n"), done.stderr
    assert "ValueError: a broken sample" in done.stderr, done.stderr
    assert "produced by " in done.stderr, done.stderr  # the .aur line of a generated frame
    assert "internal error" not in done.stderr, done.stderr


def test_a_second_run_into_one_folder_is_refused_and_a_stale_lock_is_taken_over(
    tmp_path: Path,
) -> None:
    (tmp_path / "long.aur").write_text(LONG.format(epochs=100000, folder="ck"))
    first = start_session(_aurane("run", "long.aur"), tmp_path)
    lock = tmp_path / "ck" / "run_0001" / ".aurane-run.lock"
    try:
        _wait_for_training(first)
        # the run in progress (aurane run and its program in this process: run_here)
        second = run_here("long.aur", "--resume", cwd=tmp_path)
        assert second.returncode == 1, second.stderr
        assert "is in use by another run" in second.stderr and "Traceback" not in second.stderr
        # SIGKILL the training program itself (its pid is in the lock): the lock stays behind
        owner = int(lock.read_text().split()[0])
        os.kill(owner, signal.SIGKILL)
    finally:
        code, _, err = _finish(first, timeout=60)
    assert code == 128 + signal.SIGKILL, err  # 137: aurane run passes the program's end on
    assert "Traceback" not in err
    assert "ended by SIGKILL; every checkpoint it finished is complete" in err
    assert "to continue from its last.pt: aurane run long.aur --resume" in err
    assert lock.is_file()
    (tmp_path / "short.aur").write_text(SHORT.format(epochs=1, folder="ck"))
    third = run_here("short.aur", "--resume", cwd=tmp_path)  # the stale lock: no matter
    assert third.returncode == 0, third.stderr
    taken = "took over the lock 'ck/run_0001/.aurane-run.lock' of a run that is gone (pid "
    assert f"{taken}{owner} " in third.stderr
    _only_complete_files(tmp_path / "ck" / "run_0001")


def test_resume_with_no_checkpoint_yet_says_so_without_a_traceback_and_leaves_no_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21, item 6: a failure before the first checkpoint (nothing to resume, or a
    checkpoint of another configuration) is one error line, exit 1, and no lock left. The
    run whose checkpoint the second resume refuses, and that resume, run in this process
    (main_here, run_here); the first resume is a real ``aurane run``."""
    (tmp_path / "prog.aur").write_text(SHORT.format(epochs=1, folder="ck"))
    missing = run_cli("run", "prog.aur", "--resume", cwd=tmp_path)
    assert missing.returncode == 1, missing.stderr
    assert "Traceback" not in missing.stderr
    assert "error: cannot resume: no run to resume in 'ck'" in missing.stderr
    assert "to start from the beginning: aurane run prog.aur without --resume" in missing.stderr
    assert not (tmp_path / "ck").exists()  # no folder, no lock, no temporary file
    monkeypatch.chdir(tmp_path)
    main_here(SHORT.format(epochs=1, folder="ck"), job="train_m", name="prog")
    changed = SHORT.replace("loss = mse", "loss = mse\n    optimizer = sgd(lr=0.5)")
    (tmp_path / "prog.aur").write_text(changed.format(epochs=2, folder="ck"))
    refused = run_here("prog.aur", "--resume", cwd=tmp_path)
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    assert "error: cannot resume from 'ck/run_0001/last.pt': the training configuration " in (
        refused.stderr
    )
    _only_complete_files(tmp_path / "ck" / "run_0001")


def test_killing_aurane_run_with_sigkill_ends_the_program_too(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux-only")
    (tmp_path / "long.aur").write_text(LONG.format(epochs=100000, folder="ck"))
    temp = tmp_path / "tmp"  # SIGKILL skips aurane run's clean-up: keep its folder here
    temp.mkdir()
    first = start_session(_aurane("run", "long.aur"), tmp_path, TMPDIR=str(temp))
    try:
        _wait_for_training(first)
        lock = tmp_path / "ck" / "run_0001" / ".aurane-run.lock"
        owner = int(lock.read_text().split()[0])
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        for _ in range(600):  # the program gets SIGTERM and stops at its next safe point
            if not lock.exists():
                break
            time.sleep(0.1)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(owner, 0)
        assert not lock.exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
    _only_complete_files(tmp_path / "ck" / "run_0001")


def test_compile_refuses_to_overwrite_a_file_aurane_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "prog.aur").write_text(SHORT.format(epochs=1, folder="ck"))
    mine = tmp_path / "train.py"
    mine.write_text("print('my own training script')\n")
    refused = run_cli("compile", "prog.aur", "-o", "train.py", "--no-cache", cwd=tmp_path)
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert mine.read_text() == "print('my own training script')\n"
    forced = run_cli("compile", "prog.aur", "-o", "train.py", "--force", "--no-cache", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert mine.read_text().startswith("# Generated by Aurane")
    again = run_cli("compile", "prog.aur", "-o", "train.py", "--no-cache", cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # a generated file is replaced freely


def test_run_without_a_training_job_says_so(tmp_path: Path) -> None:
    (tmp_path / "plain.aur").write_text(
        "model M:\n    input_shape = (4,)\n    def forward(x):\n        x -> dense(2)\n"
    )
    done = run_cli("run", "plain.aur", cwd=tmp_path)
    assert done.returncode == 1
    assert "no training job" in done.stderr


def test_check_warns_about_an_empty_file_and_a_program_without_models(tmp_path: Path) -> None:
    (tmp_path / "empty.aur").write_text("")
    (tmp_path / "data.aur").write_text("dataset d:\n    from aurane.data.SyntheticImages\n")
    empty = run_cli("check", "empty.aur", cwd=tmp_path)
    assert empty.returncode == 0 and "warning[S100]: the file is empty" in empty.stderr
    draft = run_cli("check", "data.aur", "--json", cwd=tmp_path)
    assert draft.returncode == 0
    assert '"code": "S100"' in draft.stdout and "defines no models" in draft.stdout
