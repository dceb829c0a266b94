"""Issue 25, item 1: runs never clobber each other.

Each run writes into a folder of its own under the job's checkpoint folder (``run_0001``,
...), ``latest`` points at the newest, ``--resume`` continues it (or a named one), and
reusing a folder needs ``--overwrite``. The summary's time and counts cover the whole run
across resumes. The first test drives ``aurane run`` as a user would (the issue's case:
a 2-epoch run, then the same program with ``--epochs 1``), in this process (run_here); the
rest call the generated function in process (no interpreter start).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.training.helpers import compile_text, main_here, run_here

SHORT = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 32\n    features = 4\n"
    "    batch = 8\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    "        x -> dense(1)\n\ntrain M on d:\n    epochs = {epochs}\n    loss = mse\n"
    '    checkpoint_dir = "{folder}"\n    save_best = true\n    checkpoint_every = 1\n'
)


def _digests(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative name -> sha256), links not followed."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def test_a_second_run_of_a_program_leaves_every_file_of_the_first_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first run through ``aurane run`` (run_here: the command and its program in this
    process, drawing metrics.png); the second and the resume run the program's command
    line in this process (main_here)."""
    (tmp_path / "prog.aur").write_text(SHORT.format(epochs=2, folder="ck"))
    with monkeypatch.context() as drawing:
        drawing.setenv("AURANE_PLOT", "1")
        first = run_here("prog.aur", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = _digests(tmp_path / "ck" / "run_0001")
    assert {"last.pt", "best.pt", "epoch_0001.pt", "epoch_0002.pt", "metrics.csv"} <= set(before)
    monkeypatch.chdir(tmp_path)
    main_here(SHORT.format(epochs=2, folder="ck"), "--epochs", "1", job="train_m", name="prog")
    second_out = capsys.readouterr().out
    assert _digests(tmp_path / "ck" / "run_0001") == before  # nothing of run 1 changed
    assert os.readlink(tmp_path / "ck" / "latest") == "run_0002"
    assert "train_m: run ck/run_0002 - 1 epoch x 4 batches = 4 steps" in second_out
    newer = torch.load(tmp_path / "ck" / "run_0002" / "last.pt", weights_only=True)
    assert len(newer["history"]) == 1
    # the summary lists the second run's own files: no stale metrics.png of the first
    files = next(line for line in second_out.splitlines() if "files in" in line)
    assert files.strip().startswith("files in ck/run_0002:") and "metrics.png" not in files
    assert "metrics.png" in before  # (the first run drew one)
    # --resume continues the latest run, in its folder
    main_here(SHORT.format(epochs=2, folder="ck"), "--resume", "--epochs", "2", job="train_m")
    resumed_out = capsys.readouterr().out
    assert "epoch 2/2" in resumed_out and "epoch 1/2" not in resumed_out
    assert sorted(p.name for p in (tmp_path / "ck").glob("run_*")) == ["run_0001", "run_0002"]
    assert _digests(tmp_path / "ck" / "run_0001") == before


def _job(folder: Path, epochs: int) -> Any:
    """The generated train function, executed in this process."""
    code = compile_text(SHORT.format(epochs=epochs, folder=folder), "short.aur")
    namespace: dict[str, Any] = {"__name__": "short"}
    exec(compile(code, "short.py", "exec"), namespace)
    return namespace["train_m"]


@pytest.fixture
def folder_options() -> Any:
    """``--run NAME`` / ``--overwrite`` as ``rt.main`` sets them, reset afterwards."""
    from aurane.runtime import run as run_module

    yield run_module._FOLDER_OPTIONS
    run_module._FOLDER_OPTIONS.clear()


def test_a_named_run_is_refused_when_it_exists_unless_overwrite(
    tmp_path: Path, folder_options: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from aurane.runtime import RunFolderError

    folder = tmp_path / "ck"
    folder_options.update(run="baseline", overwrite=False)
    _job(folder, 2)()
    assert sorted(os.listdir(folder)) == ["baseline", "latest"]
    kept = _digests(folder / "baseline")
    with pytest.raises(RunFolderError, match="already holds a run; continue it with --resume"):
        _job(folder, 1)()
    assert _digests(folder / "baseline") == kept  # refused before writing anything
    folder_options.update(overwrite=True)
    model = _job(folder, 1)()
    assert "--overwrite: removed best.pt, config.json, epoch_0001.pt, epoch_0002.pt" in (
        capsys.readouterr().out
    )
    assert len(model.training_history) == 1
    assert sorted(os.listdir(folder / "baseline")) == sorted(
        ["best.pt", "config.json", "epoch_0001.pt", "last.pt", "metrics.csv", "metrics.jsonl"]
    )
    # --overwrite alone reuses the latest run's folder
    folder_options.update(run=None)
    _job(folder, 1)()
    assert sorted(os.listdir(folder)) == ["baseline", "latest"]


def test_resuming_from_an_epoch_file_starts_a_new_run_and_keeps_the_old_one(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ck"
    _job(folder, 3)()
    kept = _digests(folder / "run_0001")
    more = _job(folder, 4)(resume_from=str(folder / "run_0001" / "epoch_0002.pt"))
    assert [row["epoch"] for row in more.training_history] == [1, 2, 3, 4]
    assert _digests(folder / "run_0001") == kept
    assert os.readlink(folder / "latest") == "run_0002"
    config = (folder / "run_0002" / "config.json").read_text()
    assert '"from": "' in config and "epoch_0002.pt" in config  # where it started from


def test_the_summary_covers_every_session_of_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ck"
    _job(folder, 1)()
    first = torch.load(folder / "latest" / "last.pt", weights_only=True)
    capsys.readouterr()
    _job(folder, 3)(resume_from=str(folder))
    out = capsys.readouterr().out
    last = torch.load(folder / "latest" / "last.pt", weights_only=True)
    assert last["sessions"] == 2 and last["elapsed"] > first["elapsed"] > 0
    summary = next(line for line in out.splitlines() if line.startswith("train_m: 3 epochs"))
    seconds = float(summary.split(" in ")[1].split("s ")[0])
    assert seconds >= round(first["elapsed"], 1)  # the first session's time is in it
    assert "12 steps in" in summary
    assert "over 2 sessions (the whole run; this session: epochs 2-3 in " in summary
    assert "resumed at epoch 2, step 4 (session 2)" in out  # the header
    import json

    sessions = json.loads((folder / "latest" / "config.json").read_text())["sessions"]
    assert len(sessions) == 2 and sessions[1]["resumed"]["epoch"] == 1
