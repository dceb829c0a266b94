"""``aurane clean [DIR]``: remove compiler caches and bytecode only."""

from __future__ import annotations

import argparse
import sys

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, CommandError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "clean",
        help=command_help("clean"),
        description="Remove .aurane_cache and __pycache__ folders and *.pyc files below DIR "
        "(default: the current folder). Never touches sources, generated files, virtual "
        "environments, .git/.hg/.svn or anything behind a symlink.",
    )
    parser.add_argument("directory", metavar="DIR", nargs="?", default=".", help="folder to clean")
    parser.add_argument("--dry-run", action="store_true", help="list what would be removed")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aurane.tools.clean import clean

    root = Path(args.directory)
    if not root.is_dir():
        raise CommandError(f"cannot clean '{args.directory}': not a folder")
    report = clean(root, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for path in report.removed:
        print(f"{verb} {path}")
    for error in report.errors:
        print(f"error: {error}", file=sys.stderr)
    print(f"{verb} {len(report.removed)} item(s)", file=sys.stderr)
    return EXIT_INPUT if report.errors else EXIT_OK
