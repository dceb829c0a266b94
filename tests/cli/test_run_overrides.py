"""Issue 25, item 4: ``aurane run FILE --set NAME=VALUE`` (repeatable).

Overrides change any train, dataset or experiment field before the program is checked; a
bad value is a located error at its ``--set`` (exit 1, nothing runs); the overrides are
recorded in the run's config.json and printed in its header.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aurane.compile import CompilationError, compile_source
from aurane.overrides import OverrideError, apply_overrides
from tests.conftest import run_cli
from tests.training.helpers import run_here

PROGRAM = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 32\n    features = 4\n"
    "    batch = 8\n\ndataset v:\n    from aurane.data.SyntheticRegression\n    size = 16\n"
    "    features = 4\n    batch = 8\n    train = false\n\nmodel M:\n    input_shape = (4,)\n"
    "    def forward(x):\n        x -> dense(1)\n\ntrain M on d:\n    validate_on = v\n"
    '    epochs = 1\n    loss = mse\n    optimizer = sgd(lr=0.1)\n    checkpoint_dir = "ck"\n'
)


def test_set_changes_fields_and_is_recorded_in_the_header_and_config(tmp_path: Path) -> None:
    (tmp_path / "prog.aur").write_text(PROGRAM)
    sets = ["--set", "lr=0.05", "--set", "batch=16", "--set", "epochs=2"]
    # aurane run and its program in this process (run_here): what --set does is the
    # command's own work and the program's output; the refusals below are real commands
    done = run_here("prog.aur", *sets, "--set", "v.batch=4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "train_m: run ck/run_0001 - 2 epochs x 2 batches = 4 steps"  # 32 / 16
    assert lines[1] == "  set on the command line: lr=0.05, batch=16, epochs=2, v.batch=4"
    record = json.loads((tmp_path / "ck" / "run_0001" / "config.json").read_text())
    assert record["overrides"] == ["lr=0.05", "batch=16", "epochs=2", "v.batch=4"]
    assert record["training"]["optimizer"] == ["sgd", {"lr": 0.05}]
    assert record["budget"]["epochs"] == 2 and record["budget"]["batches_per_epoch"] == 2
    assert record["sessions"][0]["overrides"] == record["overrides"]
    # the resume command repeats the overrides: the program it continues is the same one
    hint = next(line for line in lines if "resume or extend" in line)
    assert "aurane run prog.aur --set lr=0.05 --set batch=16 --set epochs=2 --set v.batch=4" in hint
    assert (tmp_path / "prog.aur").read_text() == PROGRAM  # the file itself is unchanged


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("lr=-1", "--set lr=-1:1:4: error[S013]: field 'lr' must be positive, got -1"),
        ("batch=true", "--set batch=true:1:7: error[S013]: field 'batch' must be an integer"),
        ("lrr=3e-4", "--set lrr=3e-4:1:1: error[S131]: no field 'lrr' in this program's blocks"),
        ("epochs", "--set epochs:1:1: error[S131]: --set 'epochs' needs NAME=VALUE"),
        ("nowhere.batch=4", "error[S131]: no block named 'nowhere' to set batch in"),
        ("optimizer=adamm(lr=1)", "--set optimizer=adamm(lr=1):1:11: error[S011]: unknown"),
    ],
    ids=["range", "type", "unknown-name", "no-value", "unknown-block", "unknown-option"],
)
def test_an_invalid_set_is_exit_1_with_a_located_error_and_nothing_runs(
    tmp_path: Path, argument: str, expected: str
) -> None:
    (tmp_path / "prog.aur").write_text(PROGRAM)
    done = run_cli("run", "prog.aur", "--set", argument, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "ck").exists() and not done.stdout  # nothing ran


def test_overrides_edit_the_text_and_keep_other_diagnostics_in_place() -> None:
    edited = apply_overrides(
        PROGRAM, "prog.aur", ["gradient_clip=1.0", "seed=7", "d.size=64", "lr=0.2"]
    )
    text = edited.text
    assert "    optimizer = sgd(lr=0.2)\n" in text  # the rate used: the call's own lr=, too
    assert "    lr = 0.2\n" in text and "    gradient_clip = 1.0\n" in text
    assert "    size = 64\n" in text and text.count("size = 16") == 1  # only d's size
    assert text.endswith("\n\nexperiment Overrides:\n    seed = 7\n")  # none before: added
    code = compile_source(text, filename="prog.aur")
    assert "clip_grad_norm_(model.parameters(), 1.0)" in code and "seed=7" in code
    # a problem of the program itself keeps its line in the file as written
    broken = PROGRAM.replace("    loss = mse\n", "    loss = mse\n    colour = 3\n")
    edited = apply_overrides(broken, "prog.aur", ["gradient_clip=1.0", "d.size=64"])
    with pytest.raises(CompilationError) as caught:
        compile_source(edited.text, filename="prog.aur")
    (diagnostic, shown, where), *_ = edited.locate(caught.value.diagnostics, broken, "prog.aur")
    assert where == "prog.aur" and shown == broken
    assert diagnostic.code == "S010" and diagnostic.span is not None
    line = broken.splitlines()[diagnostic.span.line - 1]
    assert line == "    colour = 3" and diagnostic.span.column == 5


def test_a_value_is_one_line_and_one_value() -> None:
    with pytest.raises(OverrideError) as caught:
        apply_overrides(PROGRAM, "prog.aur", ["lr=0.1\nmodel Evil:"])
    diagnostic, shown, where = caught.value.located[0]
    assert diagnostic.code == "S131" and "one line" in diagnostic.message
    assert where == "--set lr=0.1\nmodel Evil:"
    edited = apply_overrides(PROGRAM, "prog.aur", ["lr=0.1, 2"])
    with pytest.raises(CompilationError) as error:
        compile_source(edited.text, filename="prog.aur")
    located = edited.locate(error.value.diagnostics, PROGRAM, "prog.aur")
    assert located[0][2] == "--set lr=0.1, 2"  # the error is the override's
