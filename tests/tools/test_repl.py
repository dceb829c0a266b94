"""Line input of ``aurane interactive``: entry boundaries, the prompt loop, a real terminal.

What entries do to the program (replacing, refusing, ``.ir``, ``.compile``) is tested through
a pipe in tests/cli/test_interactive.py; this file covers how typed lines become entries,
the loop's Ctrl+C / Ctrl+D handling, and the command on a pseudo-terminal (prompts,
readline history, a real SIGINT).
"""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from aurane.cli.interactive_cmd import MORE, PROMPT, Session, repl
from aurane.tools.repl import is_entry_complete
from tests.cli.test_interactive import session
from tests.conftest import default_sigint, env

MODEL = [
    "model Net:",
    "    input_shape = (8,)",
    "    def forward(x):",
    "        x -> dense(4).relu",
    "          -> dense(2)",
    "",
]


# ---------------------------------------------------------------- entry boundaries


@pytest.mark.parametrize(
    ("lines", "whole"),
    [
        (MODEL[:1], False),  # a header waits for its block
        (MODEL[:-1], False),  # ... until an empty line
        (MODEL, True),
        (["model Net:  # tiny:"], False),  # a comment after the header
        (["model Net:", ""], True),  # an empty block ends too (the parser reports it)
        (["# todo:"], True),  # a comment is no header
        (["width = 4  # note:"], True),
        (["sizes = [1,"], False),  # an open bracket continues
        (["sizes = [1,", "  2]"], True),
        (["x = ((1,", "2),"], False),
        (["x = ((1,", "2),", "3)"], True),
        (['name = "(["'], True),  # brackets in a string do not count
        (["x = 1  # ("], True),  # nor in a comment
        (['name = "a:'], True),  # an unclosed string is shown at once, not waited on
        (["x = )"], True),  # a stray closer: submitted, the parser reports it
    ],
)
def test_entry_boundaries(lines: list[str], whole: bool) -> None:
    assert is_entry_complete(lines) is whole


def test_lines_become_entries_as_typed() -> None:
    state, out, err = session(*MODEL[:-1])
    assert state.pending and not state.entries and state.prompt == MORE
    state.feed("")
    assert state.prompt == PROMPT and state.program == "\n".join(MODEL[:-1]) + "\n"
    # blank lines between entries are skipped; a bracket continues; a comment is an entry
    for line in ("", "sizes = [1,", "  2]", "# todo: wider", ".show"):
        assert state.feed(line)
    assert state.program.endswith("sizes = [1,\n  2]\n# todo: wider\n")
    assert out.getvalue().count("ok") == 3 and "# todo: wider" in out.getvalue()
    assert not err.getvalue(), err.getvalue()


def test_an_indented_first_line_is_refused() -> None:
    state, out, err = session("width = 4", "    depth = 2", "depth = 2")
    assert "unexpected indentation" in err.getvalue()
    assert state.program == "width = 4\ndepth = 2\n" and out.getvalue().count("ok") == 2


def test_command_arguments() -> None:
    state, out, err = session(*MODEL, ".show Net", ".ir Nope", ".ir Net", ".quit", ".show")
    assert ".show takes no argument" in err.getvalue()
    assert "no model 'Nope' with an input_shape; models: Net" in err.getvalue()
    assert "(batch, 2)" in out.getvalue()
    assert "model Net:" not in out.getvalue()  # .quit ended the session before .show


def test_the_loop_handles_ctrl_c_and_ctrl_d() -> None:
    # each step a typed line, or what input() raises for Ctrl+C / Ctrl+D
    steps: Iterator[str | type[BaseException]] = iter(
        ["model Net:", "    input_shape = (8,)", KeyboardInterrupt, "width = 4", "(", EOFError]
    )
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        step = next(steps)
        if isinstance(step, str):
            return step
        raise step

    out, err = io.StringIO(), io.StringIO()
    state = Session(out, err)
    assert repl(read, state) == 0
    assert prompts == [PROMPT, MORE, MORE, PROMPT, PROMPT, MORE]
    assert "(entry discarded)" in out.getvalue()
    assert state.program == "width = 4\n"  # the '(' pending at EOF was submitted and refused
    assert "entry not added" in err.getvalue()


# ---------------------------------------------------------------- a real terminal

needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminals")


class Terminal:
    def __init__(self) -> None:
        import pty

        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aurane", "interactive"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env(TERM="dumb"),
            close_fds=True,
            preexec_fn=default_sigint,  # Ctrl+C reaches it, however the suite was started
        )
        os.close(slave)
        self.master = master
        self.buffer = ""

    def expect(self, text: str, timeout: float = 60.0) -> str:  # a hang guard, not a speed limit
        deadline = time.monotonic() + timeout
        while text not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} in {self.buffer!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
                self.buffer += chunk
        assert text in self.buffer, self.buffer
        index = self.buffer.index(text) + len(text)
        seen, self.buffer = self.buffer[:index], self.buffer[index:]
        return seen

    def interrupt(self) -> None:
        """Ctrl+C at a prompt. CPython's readline misses a SIGINT that lands between writing
        the prompt and waiting for a key (it notices at the next key), so, as a user would,
        press it again when nothing happens."""
        time.sleep(0.1)  # let it reach the wait: a retry is then rare
        for _ in range(3):
            self.proc.send_signal(signal.SIGINT)
            try:
                self.expect("(entry discarded)", timeout=5.0)
                return
            except AssertionError:
                continue
        raise AssertionError(f"Ctrl+C went unanswered: {self.buffer!r}")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)


@needs_pty
def test_session_through_a_pty() -> None:
    term = Terminal()
    term.expect(">>> ")
    for line in MODEL[:-1]:
        term.send(line)
        term.expect("... ")  # the continuation prompt
    term.send("")
    term.expect("ok (Net: 46 parameters)")
    term.send(".show")
    shown = term.expect("-> dense(2)")
    assert "          -> dense(2)" in shown  # typed indentation kept
    term.send("sizes = [1,")
    term.expect("... ")
    term.interrupt()  # Ctrl+C: the entry is dropped, the session goes on
    term.expect(">>> ")
    term.send(".show")
    assert "sizes" not in term.expect(">>> ")
    os.write(term.master, b"\x04")  # Ctrl+D on an empty line leaves with status 0
    assert term.close() == 0


@needs_pty
def test_readline_history_recalls_the_previous_line() -> None:
    pytest.importorskip("readline")
    term = Terminal()
    term.expect(">>> ")
    term.send("width = 4")
    term.expect("ok")
    os.write(term.master, b"\x1b[A\n")  # up arrow: the previous line again
    term.expect("replaced constant width")  # entered again, it replaces the first
    term.expect("ok")
    term.send(".show")
    shown = term.expect("width = 4\r\n>>> ")  # the terminal turns \n into \r\n
    assert shown.count("width = 4") == 1, shown
    term.send(".exit")
    assert term.close() == 0
