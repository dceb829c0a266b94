"""``aurane interactive`` driven through a pipe (no terminal), plus the session in-process.

The subprocess runs merge stdout and stderr (unbuffered) into one transcript, so the order
of diagnostics and status lines is the order a user sees.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys

from aurane.cli.interactive_cmd import Session
from tests.conftest import env


def model(name: str, *steps: str, shape: str = "(8,)") -> list[str]:
    chain = " -> ".join(steps)
    return [
        f"model {name}:",
        f"    input_shape = {shape}",
        "    def forward(x):",
        f"        x -> {chain}",
        "",
    ]


def drive(*lines: str) -> tuple[int, str]:
    """Run a session fed ``lines`` through stdin; the exit status and the transcript."""
    done = subprocess.run(
        [sys.executable, "-m", "aurane", "interactive"],
        input="\n".join(lines) + "\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env(PYTHONUNBUFFERED="1"),
        timeout=120,  # a hang guard
    )
    return done.returncode, done.stdout


def statuses(transcript: str) -> list[str]:
    """Each entry's status (ok or not added), checking none says ok after reporting errors."""
    out: list[str] = []
    errors = False
    for raw in transcript.splitlines():
        line = re.sub(r"^(?:(?:>>>|\.\.\.) )+", "", raw)
        if re.search(r"\berror\[[A-Z]\d+\]", line):
            errors = True
        elif line.startswith("ok"):
            assert not errors, f"'ok' after errors in:\n{transcript}"
            out.append(line)
        elif line.startswith("entry not added"):
            assert errors, f"'not added' without a diagnostic in:\n{transcript}"
            errors = False
            out.append(line)
    assert not errors, f"errors without a status in:\n{transcript}"
    return out


def section(transcript: str, start: str, end: str) -> str:
    """The text between the first ``start`` after the previous marker and ``end``."""
    begin = transcript.index(start)
    return transcript[begin : transcript.index(end, begin + len(start))]


def test_define_redefine_fail_and_fix_through_a_pipe() -> None:
    rc, transcript = drive(
        "width = 4",
        *model("Net", "dense(width).relu", "dense(2)"),
        ".ir Net",
        ".#1",
        # redefine the constant and the model: both replaced, shapes change
        "width = 6",
        *model("Net", "dense(width).relu", "dense(3)"),
        ".ir Net",
        ".#2",
        # a shape error, a name error and a syntax error: none is added
        *model("Net", "dense(width).relu", "conv2d(3, kernel=3)"),
        *model("Net", "dense(widht)"),
        "model Net",
        ".ir Net",
        ".#3",
        ".compile",
        ".#4",
        ".show",
        ".#5",
        # the fixed model after failures: accepted, replacing
        *model("Net", "dense(width).relu", "dense(5)"),
        ".ir",
        ".#6",
        "model Tail:",  # an unfinished entry at EOF is submitted and may fail
        "    input_shape = (8,)",
        "    def forward(x):",
        "        x -> nothing(1)",
    )
    assert rc == 0, transcript
    states = statuses(transcript)
    assert [s.split(" ", 1)[0] for s in states] == [
        "ok",
        "ok",
        "ok",
        "ok",
        "entry",
        "entry",
        "entry",
        "ok",
        "entry",
    ], states
    assert states[1] == "ok (Net: 46 parameters)"
    first = section(transcript, "graph Net", ".#1")
    assert "(batch, 4)" in first and "(batch, 2)" in first and "46 parameters" in first
    assert "replaced constant width" in transcript and "replaced model Net" in transcript
    second = section(transcript, "#1", ".#2")
    assert "dense1: (batch, 6)" in second and "(batch, 3)" in second and "75 parameters" in second
    # the failures are reported with their codes; the program is what it was
    failed = section(transcript, "#2", ".#3")
    assert "error[T" in failed and ("error[R001]" in failed or "error[S001]" in failed)
    assert "error[P" in failed and "duplicate" not in failed
    assert failed.count("the program is unchanged") == 3
    assert "dense2: (batch, 3)" in failed.split("entry not added")[-1]  # .ir: the old graph
    compiled = section(transcript, "#3", ".#4")
    assert "nn.Linear(8, 6)" in compiled and "nn.Linear(6, 3)" in compiled
    shown = section(transcript, "#4", ".#5")
    assert shown.count("width = ") == 1 and shown.count("model Net:") == 1
    assert "dense(3)" in shown and "conv2d" not in shown and "widht" not in shown
    fixed = section(transcript, "#5", ".#6")
    assert "(batch, 5)" in fixed and "duplicate" not in fixed
    assert "error[S001]" in transcript.split(".#6")[-1]


def test_help_and_commands_through_a_pipe() -> None:
    rc, transcript = drive(".help", ".nope", "a = 1", ".clear", ".show", ".ir", ".exit", "b = 2")
    assert rc == 0
    for command in (".help", ".show", ".compile", ".ir", ".clear", ".exit"):
        assert command in transcript
    assert "unknown command .nope" in transcript and "program cleared" in transcript
    assert "(empty program)" in transcript and "(no model with an input_shape)" in transcript
    assert statuses(transcript) == ["ok"]  # .exit ends the session before b = 2
    usage = subprocess.run(
        [sys.executable, "-m", "aurane", "interactive", "--help"],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
    )
    assert usage.returncode == 0
    for command in (".help", ".show", ".compile", ".ir", ".clear", ".exit"):
        assert command in usage.stdout
    assert "replaces" in usage.stdout


def session(*lines: str) -> tuple[Session, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    state = Session(out, err)
    for line in lines:
        if not state.feed(line):
            break
    return state, out, err


def test_a_block_redefined_changes_the_models_that_call_it() -> None:
    block = [
        "model Unit(w):",
        "    def forward(x):",
        "        h = dense(x, w).relu",
        "        return add(x, h)",
        "",
    ]
    net = model("Net", "Unit(8)", "dense(2)")
    state, out, err = session(*block, *net)
    assert not err.getvalue() and out.getvalue().splitlines()[-1] == "ok (Net: 90 parameters)"
    # the new Unit breaks Net (add of (8,) and (4,)): refused, both stay as they were
    wider = [line.replace("dense(x, w)", "dense(x, w // 2)") for line in block]
    before = state.program
    assert not state.submit("\n".join(wider))
    assert state.program == before and "T001" in err.getvalue()
    # a block whose output still fits: replaced, Net's parameters follow
    deeper = block[:3] + ["        h = dense(h, w)", *block[3:]]
    assert state.submit("\n".join(deeper) + "\n")
    assert state.program.count("model Unit") == 1 and "dense(h, w)" in state.program
    assert state.front is not None and state.front.graphs["Net"].parameters == 90 + 72


def test_dataset_and_experiment_are_replaced_and_order_is_kept() -> None:
    data = [
        "dataset data:",
        "    from aurane.data.SyntheticRegression",
        "    size = {size}",
        "    features = 8",
        "    batch = 4",
        "",
    ]
    first = [line.format(size=16) for line in data]
    second = [line.format(size=32) for line in data]
    state, out, err = session(
        "experiment A:",
        "    seed = 0",
        "",
        *first,
        "k = 1",
        "experiment B:",
        "    seed = 1",
        "",
        *second,
    )
    assert not err.getvalue(), err.getvalue()
    assert "replaced experiment A" in out.getvalue() and "replaced dataset data" in out.getvalue()
    program = state.program
    assert program.index("experiment B") < program.index("size = 32") < program.index("k = 1")
    assert "size = 16" not in program and "experiment A" not in program


def test_a_bug_in_the_analysis_is_reported_and_the_session_goes_on() -> None:
    state, out, err = session("width = 4")

    def broken(text: str) -> None:
        raise RuntimeError("boom")

    state.engine.update = broken  # type: ignore[method-assign,assignment]
    assert state.feed("depth = 2")  # the session goes on
    assert "internal error" in err.getvalue() and "boom" in err.getvalue()
    assert state.program == "width = 4\n" and out.getvalue().count("ok") == 1
