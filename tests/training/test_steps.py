"""Issue 25, item 2: steps as a first-class budget.

``max_steps``, ``eval_every_steps``, ``checkpoint_every_steps``, ``log_every_steps`` beside
the epoch fields; schedules sized from the run's real step count; SIGINT and SIGTERM write
a checkpoint of the step they stop at, and the run resumed from it equals an uninterrupted
one bitwise (weights, optimizer, schedule, history, step rows); extending a run whose
schedule was sized for it is refused with the reason and the way to re-plan.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.helpers import front
from tests.training.helpers import compile_text, main_here, run_here
from tests.training.programs import CLASSIFIER

# 43 samples in batches of 8: 6 batches an epoch, 3 steps of 2 batches; 4 epochs = 12 steps.
# Everything a step's position depends on: dropout and shuffling, accumulation (the last
# step of an epoch takes 2 batches of 8 + 3 samples), a schedule sized from the run and
# stepped every optimizer step, step rows, validation and checkpoints every few steps.
EVERYTHING = CLASSIFIER.replace(
    "scheduler = step_lr(step_size=1, gamma=0.7)", "scheduler = warmup_cosine(warmup=0.25)"
).replace(
    "checkpoint_every = 2",
    "checkpoint_every = 2\n    accumulate = 2\n    log_every_steps = 2\n"
    "    eval_every_steps = 3\n    checkpoint_every_steps = 4",
)


def _final(path: Path) -> dict[str, Any]:
    return torch.load(path, weights_only=True)  # type: ignore[no-any-return]


def _same(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two checkpoint values differ (tensors exactly); the session records aside."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        ok = isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)
        return [] if ok else [where]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where} (keys)"]
        return [d for k in a if k not in ("elapsed", "sessions") for d in _same(a[k], b[k], k)]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _same(x, y, f"{where}[{i}]")
        ]
    return [] if a == b else [where]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run's folder (run_0001 of job folder "whole")."""
    folder = tmp_path_factory.mktemp("whole")
    with pytest.MonkeyPatch.context() as patch:  # the program's command line, in this process
        patch.chdir(folder)
        main_here(EVERYTHING.format(epochs=4, folder="whole"), name="whole")
    return folder / "whole" / "run_0001"


@pytest.mark.parametrize(
    ("signal_name", "status", "standalone", "step"),
    [("SIGINT", 130, False, 5), ("SIGTERM", 143, True, 5), ("SIGINT", 130, False, 1)],
    ids=["sigint-default-step5", "sigterm-standalone-step5", "sigint-default-step1"],
)
def test_a_signal_mid_epoch_then_resume_equals_the_uninterrupted_run_bitwise(
    tmp_path: Path,
    uninterrupted: Path,
    signal_name: str,
    status: int,
    standalone: bool,
    step: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = EVERYTHING.format(epochs=4, folder="split")
    # a real signal through the real handler, after step 5 (epoch 2, its 4th batch of 6)
    # or step 1 (epoch 1, its 2nd batch); the stopped session is the program's command line
    # in this process too (`python split.py`: its argv), its SystemExit the exit status
    # (the interpreter's own, with the same line, is tests/cli/test_run_behaviour.py's)
    epoch, batches = (step - 1) // 3 + 1, ((step - 1) % 3 + 1) * 2
    monkeypatch.chdir(tmp_path)
    with monkeypatch.context() as session, pytest.raises(SystemExit) as stopped:
        session.setenv("AURANE_SIGNAL_AT", f"{step}:{signal_name}")
        session.setattr(sys, "argv", ["split.py"])
        main_here(source, name="split", standalone=standalone)
    stderr = capsys.readouterr().err
    assert stopped.value.code == status, stderr
    assert "Traceback" not in stderr
    report = stderr.strip().splitlines()[-1]
    assert report.startswith(f"interrupted in epoch {epoch} at step {step}; last complete ")
    assert f"split/run_0001/last.pt (step {step}, in epoch {epoch})" in report
    assert "resume with: python split.py --resume split/run_0001/last.pt" in report
    partial = _final(tmp_path / "split" / "run_0001" / "last.pt")
    assert partial["partial"]["epoch"] == epoch and partial["partial"]["batches"] == batches
    assert partial["steps"]["count"] == step and partial["epoch"] == epoch - 1
    # the resume: the same program's command line in this process (no second interpreter)
    main_here(source, "--resume", name="split", standalone=standalone)
    assert f"resumed at epoch {epoch}, step {step} (session 2)" in capsys.readouterr().out
    whole = _final(uninterrupted / "last.pt")
    split = _final(tmp_path / "split" / "run_0001" / "last.pt")
    assert not _same(whole, split), _same(whole, split)
    assert split["steps"]["count"] == 12 and len(split["history"]) == 4
    rows = split["steps"]["rows"]
    assert [row["step"] for row in rows] == [2, 3, 4, 6, 8, 9, 10, 12]  # every 2, and 3, 6, 9
    assert "val_loss" in rows[1] and "loss" in rows[2] and "val_loss" not in rows[2]
    for name in ("metrics.csv", "metrics.jsonl"):  # the history files too, byte for byte
        assert (tmp_path / "split" / "run_0001" / name).read_bytes() == (
            uninterrupted / name
        ).read_bytes()


def _job(source: str, name: str = "job") -> Any:
    code = compile_text(source, f"{name}.aur")
    namespace: dict[str, Any] = {"__name__": name}
    exec(compile(code, f"{name}.py", "exec"), namespace)
    return namespace


def test_max_steps_ends_the_run_in_the_middle_of_an_epoch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = CLASSIFIER.format(epochs=1, folder=tmp_path / "ck").replace(
        "    epochs = 1\n", "    max_steps = 8\n"
    )
    model = _job(source)["train_net"]()
    out = capsys.readouterr().out
    assert [(row["epoch"], row["step"]) for row in model.training_history] == [(1, 6), (2, 8)]
    assert "run " in out and "- 8 steps (max_steps)" in out.splitlines()[0]
    assert "\nepoch 2/2 - step 8 - loss" in out  # the epochs 8 steps take
    assert "train_net: 2 epochs, 8 steps in" in out
    assert "--resume " in out and "--max-steps 14" in out
    # epochs and max_steps together: whichever ends first (Lightning's rule)
    both = source.replace("    max_steps = 8\n", "    epochs = 5\n    max_steps = 8\n")
    again = _job(both)["train_net"]()
    assert [row["step"] for row in again.training_history] == [6, 8]


def test_a_run_stopped_by_max_steps_resumes_to_a_larger_max_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first session's epoch ended early at its max_steps: the resumed session counts
    the epochs its remaining steps need from there (it trained nothing before the fix).
    The first session through ``aurane run --max-steps`` (run_here: the command and its
    program in this process), the resumed one in process."""
    source = CLASSIFIER.format(epochs=5, folder="ck")
    (tmp_path / "prog.aur").write_text(source)
    first = run_here("prog.aur", "--max-steps", "2", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert _final(tmp_path / "ck" / "latest" / "last.pt")["steps"]["count"] == 2
    monkeypatch.chdir(tmp_path)
    main_here(source, "--resume", "--max-steps", "9", name="prog")
    checkpoint = _final(tmp_path / "ck" / "latest" / "last.pt")
    assert checkpoint["steps"]["count"] == 9  # epoch 2's 6 steps, then 1 of epoch 3
    assert [row["epoch"] for row in checkpoint["history"]] == [1, 2, 3]
    assert "epoch 3/3 - loss" in capsys.readouterr().out


def test_a_schedule_without_a_length_is_sized_from_the_run(tmp_path: Path) -> None:
    source = CLASSIFIER.format(epochs=2, folder=tmp_path / "ck").replace(
        "step_lr(step_size=1, gamma=0.7)", "warmup_cosine(warmup=0.25, min_lr=0.001)"
    )
    code = compile_text(source)
    assert "budget = rt.Budget(train_loader, epochs=2)  # the run's length sizes the sched" in code
    assert "max_steps=budget.total_steps()," in code and "warmup=0.25," in code
    assert "budget=budget," in code and "epochs=2," not in code
    model = _job(source)["train_net"]()
    checkpoint = _final(tmp_path / "ck" / "latest" / "last.pt")
    # 2 epochs of 6 steps: the schedule ends exactly at the run's 12th step, at min_lr
    assert checkpoint["scheduler"]["last_epoch"] == 12
    assert checkpoint["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.001)
    assert model.training_history[0]["lr"] == 0.0  # warmup from 0: round(0.25 * 12) steps


def test_extending_a_run_whose_schedule_was_sized_for_it_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: a cosine_annealing run offered '--epochs N+1', which then trained
    at lr 0.0. Its length is the schedule's: the summary offers a new run, and an
    extension is refused with the reason and how to re-plan (through ``aurane run``, its
    program in this process: run_here); a schedule of a length of its own extends (in
    process)."""
    source = CLASSIFIER.replace("step_lr(step_size=1, gamma=0.7)", "cosine_annealing")
    (tmp_path / "prog.aur").write_text(source.format(epochs=2, folder="ck"))
    first = run_here("prog.aur", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "resume or extend" not in first.stdout
    assert (
        "the learning-rate schedule ends with this run; to train longer, start a new run "
        "planned for it: aurane run prog.aur --set epochs=N"
    ) in first.stdout
    extended = run_here("prog.aur", "--resume", "--epochs", "3", cwd=tmp_path)
    assert extended.returncode == 1, extended.stderr
    message = extended.stderr.strip()
    assert message.startswith("error: cannot resume train_net from 'ck/run_0001/last.pt' with ")
    assert "another length (12 steps before, 18 now)" in message
    assert "schedule was sized for 12 steps and ends there" in message
    assert "--set epochs=3" in message and "T_max" in message
    assert "Traceback" not in extended.stderr
    # with a length of its own (T_max), the run extends
    own = source.replace("cosine_annealing", "cosine_annealing(T_max=4)")
    monkeypatch.chdir(tmp_path)
    main_here(own.format(epochs=2, folder="own"), name="own")
    capsys.readouterr()
    main_here(own.format(epochs=2, folder="own"), "--resume", "--epochs", "3", name="own")
    assert "epoch 3/3" in capsys.readouterr().out
    assert _final(tmp_path / "own" / "latest" / "last.pt")["epoch"] == 3


def test_eval_every_steps_needs_validate_on() -> None:
    source = (
        CLASSIFIER.format(epochs=1, folder="ck")
        .replace("    validate_on = held_out\n", "")
        .replace("checkpoint_every = 2", "checkpoint_every = 2\n    eval_every_steps = 3")
    )
    errors = [d for d in front(source, "job.aur").diagnostics if d.is_error]
    assert [d.code for d in errors] == ["S130"]
    assert "eval_every_steps" in errors[0].message and errors[0].span is not None
    assert errors[0].hint == "add validate_on = <dataset>, or remove eval_every_steps"


def test_config_json_records_the_budget(tmp_path: Path) -> None:
    source = EVERYTHING.format(epochs=1, folder=tmp_path / "ck")
    _job(source)["train_net"]()
    record = json.loads((tmp_path / "ck" / "latest" / "config.json").read_text())
    assert record["budget"] == {
        "epochs": 1,
        "max_steps": None,
        "accumulate": 2,
        "batches_per_epoch": 6,
        "steps": 3,
    }
    assert record["training"]["accumulate"] == 2
