"""``log_every = N``: step rows in metrics.csv / metrics.jsonl beside the epoch rows.

In process (no interpreter start): the generated training function is executed directly,
on the tiny shared classifier (43 samples, batches of 8: 6 steps per epoch).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from aurane.runtime import history
from tests.helpers import front
from tests.training.helpers import compile_text
from tests.training.programs import CLASSIFIER, GAN


@pytest.fixture(autouse=True)
def _no_png(monkeypatch: pytest.MonkeyPatch) -> None:
    """The end-of-run PNG is tested on its own below; matplotlib is slow to draw."""
    monkeypatch.setattr("aurane.runtime.run.plot_history", lambda *args: None)


def _source(folder: Path | str, epochs: int, extra: str = "") -> str:
    """The shared classifier, writing fewer checkpoint files (fsyncs are slow when loaded)."""
    source = CLASSIFIER.format(epochs=epochs, folder=folder)
    source = source.replace("    save_best = true\n    checkpoint_every = 2\n", extra)
    assert "save_best" not in source
    return source


def _program(folder: Path, epochs: int, log_every: int | None = 4) -> dict[str, Any]:
    extra = "" if log_every is None else f"    log_every = {log_every}\n"
    source = _source(folder, epochs, extra)
    code = compile_text(source, "steps.aur")
    namespace: dict[str, Any] = {"__name__": "steps_program"}
    exec(compile(code, "steps.py", "exec"), namespace)
    return namespace


def _rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "latest" / "metrics.jsonl").read_text().splitlines()  # the latest run
    return [json.loads(line) for line in lines]


def test_step_rows_sit_beside_epoch_rows_and_continue_after_a_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ck"
    program = _program(folder, epochs=2)
    model = program["train_net"]()
    rows = _rows(folder)
    steps = [r for r in rows if r["kind"] == "step"]
    epochs = [r for r in rows if r["kind"] == "epoch"]
    # 6 batches an epoch: step rows at 4, 8, 12; epoch rows end at steps 6 and 12
    assert [(r["epoch"], r["step"]) for r in steps] == [(1, 4), (2, 8), (2, 12)]
    assert [(r["epoch"], r["step"]) for r in epochs] == [(1, 6), (2, 12)]
    assert [r["step"] for r in rows] == [4, 6, 8, 12, 12]  # in step order, step row first
    assert all(set(r) == {"kind", "epoch", "step", "loss", "lr"} for r in steps)
    assert "val_loss" in epochs[0] and "accuracy" in epochs[0]
    # the running loss at the epoch's last step is the epoch's loss
    assert steps[-1]["loss"] == pytest.approx(epochs[-1]["loss"], rel=1e-12)
    # training_history stays one dict per epoch (SPEC §7), now with its step
    assert [r["step"] for r in model.training_history] == [6, 12]
    with (folder / "latest" / "metrics.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0])[:3] == ["kind", "epoch", "step"]
    assert [(r["kind"], r["step"]) for r in table] == [(r["kind"], str(r["step"])) for r in rows]
    assert table[0]["val_loss"] == ""  # a step row has no validation figures

    # extend to 3 epochs: rows continue from the checkpoint, none repeated
    resumed = _program(folder, epochs=3)["train_net"](resume_from=str(folder))
    rows = _rows(folder)
    assert [r["step"] for r in rows if r["kind"] == "step"] == [4, 8, 12, 16]
    assert [r["step"] for r in rows if r["kind"] == "epoch"] == [6, 12, 18]
    assert len(resumed.training_history) == 3
    assert "step 18" in capsys.readouterr().out  # the epoch line shows the step


def test_without_log_every_the_files_keep_one_row_per_epoch(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    code = compile_text(_source(folder, 1), "plain.aur")
    assert "log_every=" not in code
    _program(folder, epochs=1, log_every=None)["train_net"]()
    rows = _rows(folder)
    assert len(rows) == 1 and "kind" not in rows[0] and "step" not in rows[0]


def test_log_every_is_emitted_for_standard_and_gan_jobs_and_checked() -> None:
    assert "log_every=5" in compile_text(_source("ck", 1, "    log_every = 5\n"))
    gan = GAN.format(epochs=1, folder="ck") + "    log_every = 3\n"
    assert "log_every=3" in compile_text(gan)
    bad = _source("ck", 1, "    log_every = 0\n")
    errors = [d for d in front(bad, "bad.aur").diagnostics if d.is_error]
    assert errors and "log_every" in errors[0].message


def test_plot_draws_step_rows_and_mixes_runs_with_and_without_them(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    stepped = history.history_rows(
        [{"epoch": 1, "step": 4, "loss": 1.0, "val_loss": 1.2}],
        [{"epoch": 1, "step": 2, "loss": 1.5, "lr": 0.1}, {"epoch": 1, "step": 4, "loss": 1.0}],
    )
    plain = [{"epoch": 1, "loss": 1.1, "val_loss": 1.3}, {"epoch": 2, "loss": 0.9}]
    figure = history.plot_runs([("a", stepped)], str(tmp_path / "a.png"))
    axis = figure.axes[0]
    assert axis.get_xlabel() == "step" and axis.get_title() == "loss"
    assert len(axis.lines) == 3  # the step line, training and validation epoch points
    assert list(axis.lines[0].get_xdata()) == [2, 4]
    figure = history.plot_runs([("a", stepped), ("b", plain)], str(tmp_path / "ab.png"))
    assert figure.axes[0].get_xlabel() == "epoch"  # run b has no steps: compare by epoch
    assert (tmp_path / "ab.png").read_bytes()[:4] == b"\x89PNG"


def test_standalone_programs_write_the_same_step_rows(tmp_path: Path) -> None:
    """--standalone copies what the step rows need (``history_rows`` and the Run's own)."""
    folder = tmp_path / "ck"
    code = compile_text(_source(folder, 1, "    log_every = 4\n"), "alone.aur", standalone=True)
    assert "aurane.runtime" not in code
    namespace: dict[str, Any] = {"__name__": "alone"}
    exec(compile(code, "alone.py", "exec"), namespace)
    namespace["train_net"]()
    assert [(r["kind"], r["step"]) for r in _rows(folder)] == [("step", 4), ("epoch", 6)]
