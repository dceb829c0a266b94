"""``aurane interactive``: a REPL that builds a program entry by entry; it never runs Python.

An entry is one top-level statement. A line ending in ':' opens a block that continues until
an empty line; an open bracket continues until it closes. Lines are kept exactly as typed.

The program is a list of definitions analysed by the incremental front end (the one the
language server uses), so an entry costs about the analysis of what it touches. Entering a
model, block, dataset, constant, experiment, ``use`` or ``train`` that already exists
REPLACES the old definition in place. An entry is accepted only when the whole program
with it has no errors (syntax, names, shapes); otherwise its diagnostics are printed and
the program stays exactly as it was, so the fixed entry can simply be typed again.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from aurane.cli.commands import command_help
from aurane.records import record

if TYPE_CHECKING:
    from aurane.diagnostics import Diagnostic
    from aurane.frontend import FrontEnd
    from aurane.incremental import IncrementalFrontEnd
    from aurane.syntax import ast

FILENAME = "<interactive>"
PROMPT, MORE = ">>> ", "... "
HELP = """\
Type Aurane statements; a header ending in ':' continues until an empty line.
Entering a model, block, dataset or constant that exists replaces it; an entry with
errors is reported and not added (the program stays as it was).
  .help          this text
  .show          the program entered so far
  .compile       compile the program and show the generated Python (nothing is run)
  .ir [MODEL]    the lowered graph: every value's shape and dtype, parameters per node
  .clear         forget the program
  .exit, .quit   leave (also Ctrl+D)
Ctrl+C discards the entry being typed."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "interactive",
        help=command_help("interactive"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "A REPL: type statements (a header ending in ':' continues until an empty "
            "line), then .compile to see the Python. Redefining a model, block, dataset or "
            "constant replaces it; an entry with errors is reported and leaves the program "
            "unchanged. Errors do not end the session; nothing is executed.",
            88,
        )
        + "\n\ncommands:\n"
        + "\n".join(HELP.splitlines()[3:]),
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return repl()


# ---------------------------------------------------------------- the program


@record(frozen=True)
class Entry:
    """One top-level statement as typed (comments that follow it included)."""

    key: tuple[str, ...] | None  # what it defines; None for a comment
    label: str  # "model Net", "constant width", ...
    text: str


def _describe(stmt: ast.Statement) -> tuple[tuple[str, ...], str]:
    from aurane.syntax import ast

    match stmt:
        case ast.Model():
            shaped = any(f.name == "input_shape" for f in stmt.fields)
            kind = "model" if shaped and not stmt.params else "block"
            return ("name", stmt.name), f"{kind} {stmt.name}"
        case ast.Dataset():
            return ("name", stmt.name), f"dataset {stmt.name}"
        case ast.Constant():
            return ("name", stmt.name), f"constant {stmt.name}"
        case ast.Experiment():
            return ("experiment",), f"experiment {stmt.name}"  # only one is allowed
        case ast.Use():
            return ("use", stmt.module, stmt.alias or ""), f"use {stmt.module}"
        case ast.Train():
            return ("train", stmt.model.id), f"train {stmt.model.id}"
        case ast.TrainGan():
            names = (stmt.generator.id, stmt.discriminator.id)
            return ("train_gan", *names), f"train_gan {', '.join(names)}"
    raise AssertionError(f"unknown statement {stmt!r}")


def split_entry(text: str, statements: tuple[ast.Statement, ...]) -> list[Entry]:
    """The entry cut at its top-level statements (usually exactly one)."""
    from aurane.incremental import split_blocks

    out: list[Entry] = []
    for start, body in split_blocks(text):
        end = start + body.count("\n")
        inside = [s for s in statements if start <= s.span.line <= end]
        if not inside:
            if out:  # a comment after a statement stays with it
                last = out[-1]
                out[-1] = Entry(last.key, last.label, last.text + body)
            else:
                out.append(Entry(None, "comment", body))
            continue
        key, label = _describe(inside[0])
        out.append(Entry(key, label, body))
    return out


# ---------------------------------------------------------------- the session


class Session:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        from aurane.incremental import IncrementalFrontEnd

        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.entries: list[Entry] = []
        self.pending: list[str] = []
        self.engine: IncrementalFrontEnd = IncrementalFrontEnd(FILENAME)
        self.front: FrontEnd | None = None  # the analysis of the accepted program

    @property
    def program(self) -> str:
        return "".join(entry.text for entry in self.entries)

    @property
    def prompt(self) -> str:
        return MORE if self.pending else PROMPT

    def feed(self, line: str) -> bool:
        """Take one typed line; returns False when the session should end."""
        from aurane.tools.repl import is_entry_complete

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
        if not is_entry_complete(self.pending):
            return True
        entry = "\n".join(self.pending).rstrip("\n") + "\n"
        self.pending = []
        self._guarded(lambda: self.submit(entry))
        return True

    def _guarded(self, action: Callable[[], object]) -> None:
        """Run ``action``; a bug in it is reported and the session (and program) go on."""
        try:
            action()
        except Exception:
            import traceback

            from aurane.version import __version__

            print(traceback.format_exc(), file=self.err)
            print(
                f"internal error in aurane {__version__} (this is a bug, not your input); "
                "the program is unchanged",
                file=self.err,
            )

    def interrupt(self) -> None:
        self.pending = []
        print("(entry discarded)", file=self.out)

    def finish(self) -> None:
        """End of input: a pending entry is submitted, as an empty line would."""
        if self.pending:
            entry = "\n".join(self.pending).rstrip("\n") + "\n"
            self.pending = []
            self._guarded(lambda: self.submit(entry))

    # ------------------------------------------------------------ entries

    def submit(self, text: str) -> bool:
        """Add (or replace) what ``text`` defines; True when it was accepted."""
        from aurane.diagnostics import has_errors
        from aurane.syntax.parser import parse_program

        program, found = parse_program(text, FILENAME)
        if has_errors(found) or program is None:
            self._print(found, text)
            print("entry not added: it does not parse; the program is unchanged", file=self.err)
            return False
        new = split_entry(text, program.statements)
        entries, replaced = _merge(self.entries, new)
        candidate = "".join(entry.text for entry in entries)
        front = self.engine.update(candidate)
        if not front.ok:
            self._print([d for d in front.diagnostics if d.is_error], candidate)
            errors = sum(d.is_error for d in front.diagnostics)
            print(
                f"entry not added: {errors} error{'s' if errors != 1 else ''}; "
                "the program is unchanged",
                file=self.err,
            )
            return False
        self._print(self._new_warnings(front), candidate)
        self.entries, self.front = entries, front
        for label in replaced:
            print(f"replaced {label}", file=self.out)
        summary = ", ".join(
            f"{name}: {g.parameters:,} parameters" for name, g in front.graphs.items()
        )
        print(f"ok{' (' + summary + ')' if summary else ''}", file=self.out)
        return True

    def _new_warnings(self, front: FrontEnd) -> list[Diagnostic]:
        """Warnings the accepted program did not already have (spans aside)."""
        seen = {(d.code, d.message) for d in self.front.diagnostics} if self.front else set()
        return [d for d in front.diagnostics if (d.code, d.message) not in seen]

    def _print(self, diagnostics: list[Diagnostic], text: str) -> None:
        from aurane.render import render_all
        from aurane.source import Source

        if diagnostics:
            print(render_all(diagnostics, Source(text, FILENAME), False), file=self.err)

    # ------------------------------------------------------------ commands

    def _command(self, line: str) -> bool:
        command, _, argument = line.partition(" ")
        argument = argument.strip()
        actions: dict[str, Callable[[], None]] = {
            ".help": lambda: print(HELP, file=self.out),
            ".show": self._show,
            ".compile": self._compile,
            ".clear": self._clear,
            ".ir": lambda: self._ir(argument or None),
        }
        if command in (".exit", ".quit"):
            return False
        action = actions.get(command)
        if action is None:
            print(f"unknown command {line}; type .help", file=self.err)
        elif argument and command != ".ir":
            print(f"{command} takes no argument; type .help", file=self.err)
        else:
            self._guarded(action)
        return True

    def _show(self) -> None:
        print(self.program.rstrip("\n") if self.entries else "(empty program)", file=self.out)

    def _clear(self) -> None:
        self.entries = []
        self.front = None
        print("program cleared", file=self.out)

    def _compile(self) -> None:
        from aurane.compile import compile_source
        from aurane.stages import CompilationError

        try:
            output = compile_source(self.program, filename=FILENAME)
        except CompilationError as error:
            self._print(list(error.diagnostics), self.program)
            print("compile failed; the program is unchanged", file=self.err)
            return
        print(output.rstrip("\n"), file=self.out)

    def _ir(self, model: str | None) -> None:
        from aurane.ir.printer import graph_to_text

        graphs = self.front.graphs if self.front is not None else {}
        if model is not None:
            if model not in graphs:
                names = ", ".join(graphs) or "none"
                print(f"no model '{model}' with an input_shape; models: {names}", file=self.err)
                return
            graphs = {model: graphs[model]}
        if not graphs:
            print("(no model with an input_shape)", file=self.out)
            return
        print("\n\n".join(graph_to_text(g) for g in graphs.values()), file=self.out)


def _merge(entries: list[Entry], new: list[Entry]) -> tuple[list[Entry], list[str]]:
    """``entries`` with ``new`` added: a definition that exists is replaced where it stands."""
    out = list(entries)
    replaced: list[str] = []
    for entry in new:
        at = next(
            (i for i, old in enumerate(out) if entry.key is not None and old.key == entry.key),
            None,
        )
        if at is None:
            out.append(entry)
        else:
            replaced.append(out[at].label)
            out[at] = entry
    return out, replaced


def repl(read: Callable[[str], str] = input, session: Session | None = None) -> int:
    from aurane.tools.repl import enable_line_editing

    enable_line_editing()
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
