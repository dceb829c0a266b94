"""``aurane explain CODE``: what a diagnostic code means, an example and the fix."""

from __future__ import annotations

import argparse
import sys

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_OK, EXIT_USAGE


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "explain",
        help=command_help("explain"),
        description="Print a diagnostic code's explanation with an example and the fix. "
        "'aurane explain --list' lists every code.",
    )
    parser.add_argument("code", metavar="CODE", nargs="?", help="e.g. T001")
    parser.add_argument("--list", action="store_true", help="list all codes")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.codes import CODES, explain

    if args.list or not args.code:
        for entry in CODES.values():
            print(f"{entry.code}  {entry.stage:<8} {entry.slug:<22} {entry.summary}")
        return EXIT_OK
    text = explain(args.code)
    if text is None:
        print(
            f"error: unknown diagnostic code '{args.code}' (see 'aurane explain --list')",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(text, end="")
    return EXIT_OK
