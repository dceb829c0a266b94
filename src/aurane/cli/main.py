"""``aurane`` entry point: argument parsing and dispatch. Commands import heavy things lazily."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from aurane import __version__
from aurane.cli import (
    benchmark_cmd,
    check,
    clean_cmd,
    compile_cmd,
    explain,
    format_cmd,
    init_cmd,
    inspect_cmd,
    interactive_cmd,
    ir,
    lint_cmd,
    profile_cmd,
    run_cmd,
    visualize,
    watch_cmd,
)
from aurane.cli.common import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, CommandError

ISSUES_URL = "https://github.com/aurane-lang/aurane/issues"

Command = Callable[[argparse.Namespace], int]
COMMANDS: tuple[tuple[str, Callable[[argparse._SubParsersAction], None]], ...] = (  # type: ignore[type-arg]
    ("compile", compile_cmd.register),
    ("check", check.register),
    ("ir", ir.register),
    ("inspect", inspect_cmd.register),
    ("explain", explain.register),
    ("profile", profile_cmd.register),
    ("visualize", visualize.register),
    ("watch", watch_cmd.register),
    ("lint", lint_cmd.register),
    ("format", format_cmd.register),
    ("benchmark", benchmark_cmd.register),
    ("interactive", interactive_cmd.register),
    ("clean", clean_cmd.register),
    ("run", run_cmd.register),
    ("init", init_cmd.register),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aurane",
        description="Compile .aur network descriptions into readable PyTorch source.",
        epilog="Run 'aurane COMMAND --help' for a command's options. Exit status: 0 ok, "
        "1 errors in the input, 2 usage errors, 123 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"aurane {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _, register in COMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0) if isinstance(exit_.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    run: Command = args.run
    try:
        return run(args)
    except CommandError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`aurane ir x.aur | head`): not an error of ours
        _silence_stdout()
        return EXIT_OK
    except Exception:  # a bug: say so, and how to report it
        print(traceback.format_exc(), file=sys.stderr)
        print(
            f"error: internal error in aurane {__version__} (this is a bug, not your input).\n"
            f"Please report it with the traceback above and the source file at {ISSUES_URL}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def entry() -> None:
    sys.exit(main())
