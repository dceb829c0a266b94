"""``aurane interactive`` through a pseudo-terminal, plus the session logic directly."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import time

import pytest

from aurane.tools.repl import Session
from tests.conftest import env

pty = pytest.importorskip("pty")

MODEL = [
    "model Net:",
    "    input_shape = (8,)",
    "    def forward(x):",
    "        x -> dense(4).relu",
    "          -> dense(2)",
    "",
]


class Terminal:
    def __init__(self) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aurane", "interactive"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env(TERM="dumb"),
            close_fds=True,
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

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)


def test_session_through_a_pty() -> None:
    term = Terminal()
    term.expect(">>> ")
    for line in MODEL:
        term.send(line)
    term.expect("ok (Net: 46 parameters)")
    term.send(".show")
    shown = term.expect("-> dense(2)")
    assert "          -> dense(2)" in shown  # typed indentation kept
    term.send(".compile")
    term.expect("nn.Linear")
    term.send("x -> oops(")  # an error: reported, the session goes on
    term.send(")")
    term.expect("entry not added")
    term.send("width = 4")
    term.expect("ok")
    term.send(".compile")
    term.expect("nn.Linear")
    term.send(".exit")
    assert term.close() == 0


def session(*lines: str) -> tuple[Session, str, str]:
    out, err = io.StringIO(), io.StringIO()
    state = Session(out, err)
    for line in lines:
        if not state.feed(line):
            break
    return state, out.getvalue(), err.getvalue()


def test_block_entry_ends_at_an_empty_line() -> None:
    state, out, _ = session(*MODEL[:-1])
    assert state.pending and not state.entries
    state.feed("")
    assert state.entries == ["\n".join(MODEL[:-1]) + "\n"]


def test_bracket_continues_a_statement() -> None:
    state, _, _ = session("sizes = [1,", "  2]")
    assert state.entries == ["sizes = [1,\n  2]\n"]


def test_errors_do_not_lose_the_program() -> None:
    state, out, err = session(*MODEL, "model Bad", "    x = 1", "", ".show")
    assert "entry not added" in err and len(state.entries) == 1
    assert "model Net:" in out


def test_commands() -> None:
    state, out, err = session("a = 1", ".clear", ".show", ".nope", ".help")
    assert "program cleared" in out and "(empty program)" in out and ".compile" in out
    assert "unknown command" in err and not state.entries
    assert not session(".exit")[0].feed(".exit")


def test_compile_error_is_reported() -> None:
    _, out, err = session(
        "model Net:",
        "    input_shape = (8,)",
        "    def forward(x):",
        "        x -> nothing(3)",
        "",
        ".compile",
    )
    assert "compile failed" in err and "S001" in err


def test_readline_history_recalls_the_previous_line() -> None:
    pytest.importorskip("readline")
    term = Terminal()
    term.expect(">>> ")
    term.send("width = 4")
    term.expect("ok")
    os.write(term.master, b"\x1b[A\n")  # up arrow: the previous line again
    term.expect("ok")
    term.send(".show")
    term.expect("width = 4\r\nwidth = 4")  # the terminal turns \n into \r\n
    term.send(".exit")
    assert term.close() == 0
