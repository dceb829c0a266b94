"""``aurane format``: rewrite files in canonical layout (safe: same AST and IR, or untouched)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, print_diagnostics

if TYPE_CHECKING:
    from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "format",
        help=command_help("format"),
        description="Format files and folders (every .aur file below, skipping VCS folders, "
        "caches and virtual environments). The result must parse to the same program and "
        "lower to the same IR, or the file is left untouched. A file that does not parse is "
        "never modified. Use '-' to read stdin and write stdout.",
    )
    parser.add_argument("paths", metavar="PATH", nargs="+", help="files or folders ('-': stdin)")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    parser.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    parser.add_argument("--quiet", "-q", action="store_true", help="report only problems")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.cli.common import CommandError
    from aurane.tools.format import discover

    if "-" in args.paths:
        if len(args.paths) > 1:
            raise CommandError("'-' (stdin) cannot be combined with other paths", EXIT_USAGE)
        return _stdin(args)
    worst = EXIT_OK
    counts = {"changed": 0, "same": 0, "failed": 0}
    for given in args.paths:
        from pathlib import Path

        path = Path(given)
        if not path.exists():
            print(f"error: cannot format '{given}': no such file or folder", file=sys.stderr)
            worst, counts["failed"] = max(worst, EXIT_INPUT), counts["failed"] + 1
            continue
        for file in discover(path):
            status = _one(file, args)
            counts[_KIND[status]] += 1
            worst = max(worst, _EXIT[status])
    if not args.quiet:
        _summary(counts, args.check or args.diff)
    return worst


# Outcome of one file -> (summary bucket, exit status). "would": changes found by --check.
_KIND = {
    "same": "same",
    "changed": "changed",
    "would": "changed",
    "bad": "failed",
    "unsafe": "failed",
}
_EXIT = {
    "same": EXIT_OK,
    "changed": EXIT_OK,
    "would": EXIT_INPUT,
    "bad": EXIT_INPUT,
    "unsafe": EXIT_INTERNAL,
}


def _one(file: Path, args: argparse.Namespace) -> str:
    from aurane.cli.common import CommandError, load_text, os_reason
    from aurane.fs import atomic_write
    from aurane.tools.format import format_source, unified_diff

    try:
        text = load_text(str(file))
    except CommandError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return "bad"
    if text is None:  # bad UTF-8: load_text printed the located diagnostic
        return "bad"
    result = format_source(text, str(file))
    if result.error is not None:
        print(f"error: {result.error}", file=sys.stderr)
        return "unsafe"
    if result.output is None:
        print_diagnostics(result.diagnostics, text, str(file))
        print(f"error: cannot format {file}: it does not parse", file=sys.stderr)
        return "bad"
    if not result.changed:
        return "same"
    if args.diff:
        sys.stdout.write(unified_diff(text, result.output, str(file)))
    if args.check or args.diff:
        if not args.quiet:
            print(f"would reformat {file}", file=sys.stderr)
        return "changed" if not args.check else "would"
    # Write through a symlink to its target, so the link itself stays a link.
    try:
        atomic_write(os.path.realpath(file), result.output)
    except OSError as error:  # a read-only file (the output rule), a full disk
        print(f"error: cannot write '{file}': {os_reason(error)}", file=sys.stderr)
        return "bad"
    if not args.quiet:
        print(f"reformatted {file}", file=sys.stderr)
    return "changed"


def _summary(counts: dict[str, int], dry: bool) -> None:
    verb = "would be reformatted" if dry else "reformatted"
    parts = [f"{counts['changed']} file(s) {verb}", f"{counts['same']} unchanged"]
    if counts["failed"]:
        parts.append(f"{counts['failed']} failed")
    print(", ".join(parts), file=sys.stderr)


def _stdin(args: argparse.Namespace) -> int:
    from aurane.cli.common import read_stdin_source
    from aurane.tools.format import format_source, unified_diff

    text, bad = read_stdin_source()
    if text is None:  # past the size limit (read no further) or bad UTF-8
        assert bad is not None
        print_diagnostics([bad], "", "<stdin>")
        return EXIT_INPUT
    result = format_source(text, "<stdin>")
    if result.error is not None:
        print(f"error: {result.error}", file=sys.stderr)
        sys.stdout.write(text)
        return EXIT_INTERNAL
    if result.output is None:
        print_diagnostics(result.diagnostics, text, "<stdin>")
        sys.stdout.write(text)
        return EXIT_INPUT
    if args.diff:
        sys.stdout.write(unified_diff(text, result.output, "<stdin>"))
    elif not args.check:
        sys.stdout.write(result.output)
    return EXIT_INPUT if args.check and result.changed else EXIT_OK
