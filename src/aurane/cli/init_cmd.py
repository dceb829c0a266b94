"""``aurane init DIR``: write an offline starter project; refuses a non-empty DIR."""

from __future__ import annotations

import argparse

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_OK, CommandError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "init",
        help=command_help("init"),
        description="Create DIR with a starter program that checks, compiles and trains "
        "offline (synthetic data, no download). DIR must be new or empty.",
    )
    parser.add_argument("directory", metavar="DIR", help="the project folder to create")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aurane.tools.init import PROGRAM_NAME, InitError, create_project

    folder = Path(args.directory)
    try:
        written = create_project(folder)
    except InitError as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"cannot create '{folder}': {error.strerror or error}") from None
    for path in written:
        print(f"created {path}")
    print(f"next: cd {folder} && aurane run {PROGRAM_NAME}")
    return EXIT_OK
