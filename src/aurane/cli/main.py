"""``aurane`` entry point: argument parsing and dispatch. Only the chosen command is imported."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

from aurane.cli.commands import COMMANDS
from aurane.cli.common import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    json_failure,
    wants_json,
)
from aurane.syntax.gc_pause import paused_gc
from aurane.version import __version__

Command = Callable[[argparse.Namespace], int]


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` reads it (COLUMNS, then the
    terminal, then 80)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Parser(argparse.ArgumentParser):
    """An argument parser whose help formatter is given the width: argparse's own formatter
    imports ``shutil`` (with bz2, lzma and zlib) for it at every ``add_argument``, a
    noticeable part of ``aurane check``'s start-up (issue 14)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser of ``command``; every other command is listed by its summary only."""
    parser = _Parser(
        prog="aurane",
        description="Compile .aur network descriptions into readable PyTorch source.",
        epilog="Run 'aurane COMMAND --help' for a command's options. Exit status: 0 ok, "
        "1 errors in the input, 2 usage errors, 123 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"aurane {__version__}")
    # The other commands are never parsed (argv names this one): they share one empty
    # parser, listed by their summaries, instead of building 20 parsers per start.
    stub = _Parser(add_help=False)
    shared: list[argparse.ArgumentParser] = []

    def make_parser(**kwargs: Any) -> argparse.ArgumentParser:
        return shared[0] if shared else _Parser(**kwargs)

    parser_class = cast("type[argparse.ArgumentParser]", make_parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    for name, (module, summary) in COMMANDS.items():
        if name == command:
            importlib.import_module(module).register(sub)
        else:
            shared.append(stub)
            sub.add_parser(name, help=summary)  # never parsed: argv names another command
            shared.clear()
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command argv names: its first word that is not an option."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command. ``own_process``: the process exists for this command alone (the
    console script, ``python -m aurane``), so what start-up built may be frozen."""
    words = sys.argv[1:] if argv is None else argv
    # Start-up imports the chosen command, which imports what it needs (the compiler for
    # `check`): modules, classes and tables that live until exit. The cyclic collector would
    # rescan them twenty times and free nothing (a fifth of `aurane check`, issue 14).
    with paused_gc():
        parser = build_parser(chosen_command(words))
        try:
            args = parser.parse_args(words)
        except SystemExit as exit_:
            return int(exit_.code or 0) if isinstance(exit_.code, int) else EXIT_USAGE
    if own_process:
        gc.freeze()  # later collections (a training run's) skip them too
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    run: Command = args.run
    try:
        return run(args)
    except CommandError as error:
        if wants_json(args):  # every outcome of a --json command is JSON on stdout
            json_failure(args, error.message, error.diagnostics)
        else:
            print(f"error: {error.message}", file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`aurane ir x.aur | head`): not an error of ours
        _silence_stdout()
        return EXIT_OK
    except Exception:  # a bug: say so, and how to report it
        import traceback

        from aurane.project import project_url

        print(traceback.format_exc(), file=sys.stderr)
        issues = project_url("Issues")  # pyproject.toml's [project.urls], when installed
        print(
            f"error: internal error in aurane {__version__} (this is a bug, not your input).\n"
            "Please report it with the traceback above and the source file"
            + (f" at {issues}" if issues else ""),
            file=sys.stderr,
        )
        if wants_json(args):
            json_failure(args, f"internal error in aurane {__version__} (this is a bug)")
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def entry() -> None:
    sys.exit(main(own_process=True))
