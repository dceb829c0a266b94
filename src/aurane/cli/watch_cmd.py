"""``aurane watch SRC OUT``: compile, then recompile whenever SRC's content settles on a change."""

from __future__ import annotations

import argparse

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_USAGE,
    STDOUT,
    CommandError,
    check_output,
    print_diagnostics,
    same_file,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "watch",
        help=command_help("watch"),
        description="Compile SRC to OUT, then recompile on every change (in-place write, "
        "atomic replace, delete and re-create), debounced so the final content of a burst of "
        "saves is built once. A failed build keeps the previous OUT. Ctrl+C stops (exit 0).",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("out", metavar="OUT", help="the Python file to keep up to date")
    parser.add_argument("--analyze", action="store_true", help="warnings fail the build")
    parser.add_argument(
        "--validate", action="store_true", help="verify the IR and the generated Python"
    )
    parser.add_argument(
        "--debounce",
        type=int,
        default=75,
        metavar="MS",
        help="quiet time before a build, 50 to 100 ms (default 75)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aurane.tools.watch import WatchConfig, watch

    source, out = Path(args.source), Path(args.out)
    if not 50 <= args.debounce <= 100:
        raise CommandError("--debounce must be between 50 and 100 ms", EXIT_USAGE)
    if same_file(source, out):
        raise CommandError("OUT must differ from SRC (it would overwrite the source)", EXIT_USAGE)
    if args.out == STDOUT:
        raise CommandError("OUT must be a file to keep up to date, not '-'", EXIT_USAGE)
    check_output(args.out)  # a device, FIFO, directory or read-only file: refused now
    if source.exists() and not source.is_file():  # a FIFO or a device is never read
        from aurane.fs import kind_of

        kind = kind_of(source.stat().st_mode)
        raise CommandError(f"cannot watch '{source}': it is {kind}, not a regular file")
    config = WatchConfig(
        source, out, analyze=args.analyze, validate=args.validate, debounce=args.debounce / 1000
    )
    return watch(config, print_diagnostics)
