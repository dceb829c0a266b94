"""``aurane lint``: style, dead-code and training-mistake rules; ``--auto-fix`` for the fixable."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    print_diagnostics,
    print_json,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "lint",
        help=command_help("lint"),
        description="Rules W001 trailing whitespace (fixable), W002 missing block colon "
        "(fixable), W003 line over 100 characters, E001 does not parse, L1xx dead code and "
        "L2xx training mistakes; 'aurane explain CODE' describes each. Like 'check', at most "
        "100 diagnostics a file are shown (a note gives the total). Exit 1 on errors only.",
    )
    parser.add_argument("paths", metavar="SRC", nargs="+", help=".aur files or folders")
    parser.add_argument(
        "--auto-fix",
        action="store_true",
        help="fix W001/W002 in place; written only if the result parses and keeps the IR",
    )
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes to report")
    parser.add_argument("--json", action="store_true", help="print diagnostics as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from aurane.tools.format import discover

    select = [c.strip().upper() for c in args.select.split(",")] if args.select else None
    args.configs = {}  # aurane.toml path -> its settings
    failed = False
    payload: list[dict[str, object]] = []
    for given in args.paths:
        path = Path(given)
        if not path.exists():
            raise CommandError(f"cannot lint '{given}': no such file or folder")
        for file in discover(path):
            failed |= _one(file, args, select, payload)
    if args.json:
        print_json({"files": payload})
    return EXIT_INPUT if failed else EXIT_OK


def _ignored(file: Path, configs: dict[Path, object]) -> frozenset[str]:
    """The codes ``aurane.toml`` silences in ``file`` (none without one)."""
    from aurane.tools.lint_config import ConfigError, LintConfig, find_config, load_config

    path = find_config(file.parent)
    if path is None:
        return frozenset()
    config = configs.get(path)
    if config is None:
        try:
            config = load_config(path)
        except ConfigError as error:
            raise CommandError(str(error), EXIT_USAGE) from None
        configs[path] = config
        if config.warning is not None:
            print(f"warning: {config.warning}", file=sys.stderr)
    assert isinstance(config, LintConfig)
    return config.ignored(file)


def _one(
    file: Path, args: argparse.Namespace, select: list[str] | None, payload: list[dict[str, object]]
) -> bool:
    from aurane.cli.common import load_text, os_reason, read_source
    from aurane.fs import atomic_write
    from aurane.syntax.parser import MAX_DIAGNOSTICS
    from aurane.tools.lint import FIXABLE, fix_source, lint_source

    if args.json:
        text, bad = read_source(str(file))
        if text is None:
            assert bad is not None
            payload.append({"file": str(file), "diagnostics": [bad.to_json()]})
            return True
    else:
        text = load_text(str(file))
    if text is None:
        return True
    ignore = _ignored(file, args.configs)
    found = lint_source(text, str(file), ignore=ignore)
    if args.auto_fix and any(d.code in FIXABLE for d in found):
        fixed = fix_source(text, str(file), found)
        if fixed.error is not None:
            print(f"error: {fixed.error}", file=sys.stderr)
        elif fixed.changed and fixed.output is not None:
            try:
                atomic_write(os.path.realpath(file), fixed.output)
            except OSError as error:  # a read-only file (the output rule), a full disk
                print(f"error: cannot write '{file}': {os_reason(error)}", file=sys.stderr)
                return True
            print(f"fixed {len(fixed.fixed)} problem(s) in {file}", file=sys.stderr)
            text = fixed.output
            found = lint_source(text, str(file), ignore=ignore)
    if select is not None:
        chosen = set(select)
        found = [d for d in found if d.code in chosen]
    shown = found[:MAX_DIAGNOSTICS]  # the cap 'check' has (a flood of them helps no one)
    if args.json:
        entry: dict[str, object] = {"file": str(file), "diagnostics": [d.to_json() for d in shown]}
        if len(found) > len(shown):
            entry["truncated"] = {"shown": len(shown), "total": len(found)}
        payload.append(entry)
    else:
        print_diagnostics(shown, text, str(file))
        if len(found) > len(shown):
            print(
                f"note: {file}: too many problems; showing the first {len(shown)} of "
                f"{len(found)} (fix these, or narrow with --select, and lint again)",
                file=sys.stderr,
            )
    return any(d.is_error for d in found)
