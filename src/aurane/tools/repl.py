"""``aurane interactive``: a REPL that builds a program entry by entry; it never runs Python.

An entry is one top-level statement. A line ending in ':' opens a block that continues until
an empty line; an open bracket continues until it closes. Lines are kept exactly as typed
(indentation included). An entry that does not parse is reported and dropped; the program
entered so far is kept and the session goes on. ``.compile`` prints the generated Python.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TextIO

from aurane.syntax.tokens import Kind, tokenize

HELP = """\
Type Aurane statements; a header ending in ':' continues until an empty line.
  .help      this text
  .show      the program entered so far
  .compile   compile the program and show the generated Python (nothing is run)
  .clear     forget the program
  .exit      leave (also Ctrl+D)
Ctrl+C discards the entry being typed."""
PROMPT, MORE = ">>> ", "... "


def _enable_history() -> None:
    """Line editing and in-session history where the readline module exists."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it enables input() editing and history)


class Session:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.entries: list[str] = []
        self.pending: list[str] = []

    @property
    def program(self) -> str:
        return "".join(self.entries)

    @property
    def prompt(self) -> str:
        return MORE if self.pending else PROMPT

    def feed(self, line: str) -> bool:
        """Take one typed line; returns False when the session should end."""
        if not self.pending and line.strip().startswith("."):
            return self._command(line.strip())
        if not self.pending and not line.strip():
            return True
        if not self.pending and line[:1].isspace():
            # An entry is a top-level statement; an indented line would silently join the
            # block of the previous entry.
            print("unexpected indentation: an entry starts at column 1", file=self.err)
            return True
        self.pending.append(line)
        if not _complete(self.pending):
            return True
        entry = "\n".join(self.pending).rstrip("\n") + "\n"
        self.pending = []
        self._submit(entry)
        return True

    def interrupt(self) -> None:
        self.pending = []
        print("(entry discarded)", file=self.out)

    def finish(self) -> None:
        """End of input: a pending entry is submitted, as an empty line would."""
        if self.pending:
            entry = "\n".join(self.pending) + "\n"
            self.pending = []
            self._submit(entry)

    # ------------------------------------------------------------ entries

    def _submit(self, entry: str) -> None:
        from aurane.frontend import run_front_end

        candidate = self.program + entry
        front = run_front_end(candidate, "<interactive>")
        if front.failed_stage == "parse":
            self._diagnostics(front.diagnostics, candidate)
            print("entry not added: it does not parse", file=self.err)
            return
        self.entries.append(entry)
        if front.diagnostics:
            self._diagnostics(front.diagnostics, candidate)
        summary = ", ".join(
            f"{name}: {g.parameters:,} parameters" for name, g in front.graphs.items()
        )
        print(f"ok{' (' + summary + ')' if summary else ''}", file=self.out)

    def _diagnostics(self, diagnostics: list, text: str) -> None:  # type: ignore[type-arg]
        from aurane.render import render_all
        from aurane.source import Source

        print(render_all(diagnostics, Source(text, "<interactive>"), False), file=self.err)

    # ------------------------------------------------------------ commands

    def _command(self, command: str) -> bool:
        actions: dict[str, Callable[[], None]] = {
            ".help": lambda: print(HELP, file=self.out),
            ".show": self._show,
            ".compile": self._compile,
            ".clear": self._clear,
        }
        if command in (".exit", ".quit"):
            return False
        action = actions.get(command)
        if action is None:
            print(f"unknown command {command}; type .help", file=self.err)
        else:
            action()
        return True

    def _show(self) -> None:
        print(self.program.rstrip("\n") if self.entries else "(empty program)", file=self.out)

    def _clear(self) -> None:
        self.entries = []
        print("program cleared", file=self.out)

    def _compile(self) -> None:
        from aurane.compile import compile_source
        from aurane.stages import CompilationError

        try:
            output = compile_source(self.program, filename="<interactive>")
        except CompilationError as error:
            self._diagnostics(error.diagnostics, self.program)
            print("compile failed; the program is unchanged", file=self.err)
            return
        print(output.rstrip("\n"), file=self.out)


def _complete(lines: list[str]) -> bool:
    """Whether the typed lines form a whole entry."""
    if lines[0].rstrip().endswith(":") or _opens_block(lines[0]):
        return not lines[-1].strip() and len(lines) > 1
    return _depth("\n".join(lines)) <= 0


def _opens_block(line: str) -> bool:
    tokens = [t for logical in tokenize(line).lines for t in logical.tokens]
    return bool(tokens) and tokens[-1].is_op(":")


def _depth(text: str) -> int:
    depth = 0
    for logical in tokenize(text).lines:
        for token in logical.tokens:
            if token.kind is Kind.OP and token.text in "([{":
                depth += 1
            elif token.kind is Kind.OP and token.text in ")]}":
                depth -= 1
    return depth


def repl(read: Callable[[str], str] = input, session: Session | None = None) -> int:
    _enable_history()
    session = session or Session()
    print("Aurane interactive: type .help for commands, .exit to leave.", file=session.out)
    while True:
        try:
            line = read(session.prompt)
        except EOFError:
            session.finish()
            print(file=session.out)
            return 0
        except KeyboardInterrupt:
            print(file=session.out)
            session.interrupt()
            continue
        if not session.feed(line):
            return 0
