"""``aurane run`` and ``aurane init``: offline, files where promised, exit statuses."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import corpus_dir, env, run_cli
from tests.training.helpers import run_here

# 100000 epochs of one-sample batches: still training when the test signals it
LONG_RUN = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 64\n    features = 4\n"
    "    batch = 1\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    "        x -> dense(1)\n\ntrain M on d:\n    epochs = 100000\n    loss = mse\n"
)


def _corpus(name: str, folder: Path) -> Path:
    # the project's copy of the valid corpus (tests/corpus/valid); a missing ``name`` is an error
    target = folder / name
    shutil.copy(corpus_dir("valid") / name, target)
    return target


def _start_long_run(tmp_path: Path, **extra_env: str) -> subprocess.Popen[bytes]:
    """``aurane run long.aur`` in ``tmp_path``, in a new session, stdout and stderr piped."""
    (tmp_path / "long.aur").write_text(LONG_RUN)
    return subprocess.Popen(
        [sys.executable, "-m", "aurane", "run", "long.aur"],
        cwd=tmp_path,
        env=env(**extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _offline() -> dict[str, str]:
    # no proxy and no route: any download attempt fails instead of silently succeeding
    return {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}


def test_run_corpus_training_leaves_checkpoints(tmp_path: Path) -> None:
    _corpus("training.aur", tmp_path)
    done = run_cli("run", "training.aur", cwd=tmp_path, env=_offline())
    assert done.returncode == 0, done.stderr
    assert "epoch 2/2" in done.stdout
    folder = tmp_path / "checkpoints" / "digits" / "run_0001"
    assert {"last.pt", "best.pt", "config.json"} <= {p.name for p in folder.iterdir()}
    checkpoint = torch.load(folder / "last.pt", weights_only=True)
    assert checkpoint["epoch"] == 2 and len(checkpoint["history"]) == 2
    assert not list(tmp_path.glob("*.py"))  # the temporary program is gone


def test_run_corpus_gan_leaves_png_and_tensor_samples(tmp_path: Path) -> None:
    _corpus("gan.aur", tmp_path)
    done = run_cli("run", "gan.aur", cwd=tmp_path, env=_offline())
    assert done.returncode == 0, done.stderr
    # each run's samples in a folder of their own, named like its checkpoint folder
    png = tmp_path / "samples" / "run_0001" / "samples_0001.png"
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    samples = torch.load(png.with_suffix(".pt"), weights_only=True)
    assert samples.shape == (4, 1, 16, 16)
    from PIL import Image

    with Image.open(png) as image:  # torchvision's save_image draws one-channel grids as RGB
        assert image.mode == "RGB" and image.size == (38, 38)  # 2x2 grid, 2 px padding
        red, green, blue = image.split()
        assert red.tobytes() == green.tobytes() == blue.tobytes()


def test_run_reports_compile_errors_and_program_failures(tmp_path: Path) -> None:
    (tmp_path / "bad.aur").write_text(
        "model M:\n    input_shape = (4,)\n    def forward(x):\n"
        "        x -> dense(2)\n\ntrain M on nowhere:\n"
    )
    done = run_cli("run", "bad.aur", cwd=tmp_path)
    assert done.returncode == 1 and "nowhere" in done.stderr
    (tmp_path / "fails.aur").write_text(
        "dataset d:\n    batch = 2\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
        "        x -> dense(2)\n\ntrain M on d:\n    epochs = 1\n"
    )
    done = run_cli("run", "fails.aur", cwd=tmp_path)
    assert done.returncode == 1 and "has no 'from' source" in done.stderr
    assert run_cli("run", "missing.aur", cwd=tmp_path).returncode == 1


def test_run_keep_temp_and_program_arguments(tmp_path: Path) -> None:
    """aurane run and its program in this process (run_here): --keep-temp and '--' are the
    command's own work; the runs above and below start it for real."""
    (tmp_path / "short.aur").write_text(LONG_RUN.replace("100000", "3"))
    done = run_here("short.aur", "--keep-temp", "--", "--epochs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "epoch 1/1" in done.stdout  # the arguments after '--' reached the program
    kept = Path(re.search(r"kept the generated program: (.+)", done.stderr).group(1))  # type: ignore[union-attr]
    assert kept.is_file() and "class M" in kept.read_text()
    shutil.rmtree(kept.parent)


# Ctrl+C to the whole foreground group of `aurane run` (exit 130): tests/cli/test_run_signals.py
# (test_ctrl_c_to_the_aurane_run_job_is_reported_once, which checks its one report too)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def test_run_terminated_forwards_the_signal_and_cleans_up(tmp_path: Path) -> None:
    """A plain ``kill`` of ``aurane run`` ends the program too and removes the temp file."""
    if not hasattr(signal, "SIGTERM") or sys.platform == "win32":
        pytest.skip("POSIX signals")
    temp = tmp_path / "tmp"
    temp.mkdir()
    child = _start_long_run(tmp_path, TMPDIR=str(temp))
    assert child.stdout is not None
    try:
        child.stdout.readline()  # the first epoch line: training is under way
        programs = list(temp.glob("aurane-run-*/long.py"))
        assert len(programs) == 1
        child.terminate()  # SIGTERM to aurane alone, not to the process group
        assert child.wait(timeout=60) == 128 + signal.SIGTERM
        leftover = _group_alive(child.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # whatever the group left behind
        child.wait()
    assert not leftover, "the program outlived aurane run as an orphan"
    assert not list(temp.glob("aurane-run-*"))  # the temporary folder is gone


def test_init_check_compile_run_offline(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    done = run_cli("init", str(project))
    assert done.returncode == 0, done.stderr
    assert (project / "model.aur").is_file() and (project / "README.md").is_file()
    assert run_cli("check", "model.aur", cwd=project).returncode == 0
    compiled = run_cli("compile", "model.aur", "-o", "model.py", "--no-cache", cwd=project)
    assert compiled.returncode == 0, compiled.stderr
    assert "import aurane.data" in (project / "model.py").read_text()
    trained = run_cli("run", "model.aur", cwd=project, env=_offline())
    assert trained.returncode == 0, trained.stderr
    assert "epoch 3/3" in trained.stdout
    assert (project / "checkpoints" / "latest" / "last.pt").is_file()


def test_init_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    done = run_cli("init", str(tmp_path))
    assert done.returncode == 1 and "not empty" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
