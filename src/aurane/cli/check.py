"""``aurane check``: semantic and type passes, human or JSON output."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    CommandError,
    print_diagnostics,
    print_json,
    read_source,
    shown_text,
)

# This module loads only when `check` is the command, during start-up (cli.main), so the
# compiler loads with it, with the collector paused.
from aurane.frontend import run_front_end
from aurane.fs import read_limited  # noqa: F401  # read_source's reader, loaded at start-up
from aurane.render import check_payload

if TYPE_CHECKING:
    from aurane.diagnostics import Diagnostic
    from aurane.syntax.ast import AuraneProgram


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "check",
        help=command_help("check"),
        description="Parse, resolve constants and run the semantic and type passes. "
        "Diagnostics go to stderr (or stdout as JSON with --json). Exit 1 on any error.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--semantic", action="store_true", help="run the semantic pass only")
    parser.add_argument(
        "--types",
        action="store_true",
        help="run the type pass (shapes and dtypes); with --semantic, both",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON payload on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    passes = []
    if args.semantic or not args.types:
        passes.append("semantic")
    if args.types or not args.semantic:
        passes.append("types")
    try:
        text, bad = read_source(args.source)
    except CommandError as error:
        if not args.json:
            raise
        payload = check_payload(args.source, [], passes)
        payload.update(ok=False, error=error.message)
        print_json(payload)
        return error.code
    if text is None:
        assert bad is not None
        diagnostics = [bad]
        text = shown_text(args.source)
    else:
        front = run_front_end(text, args.source, types="types" in passes)
        diagnostics = [*front.diagnostics, *_no_models(front.program)]
    if args.json:
        print_json(check_payload(args.source, diagnostics, passes))
    else:
        print_diagnostics(diagnostics, text, args.source)
    failed = any(d.is_error for d in diagnostics)
    if not failed and not args.json:
        print(f"{args.source}: ok ({' and '.join(passes)} passes)", file=sys.stdout)
    return EXIT_INPUT if failed else EXIT_OK


def _no_models(program: AuraneProgram | None) -> list[Diagnostic]:
    """Issue 12: S100 for an empty file or a program without models (a warning, check only)."""
    from aurane.codes import diag

    if program is None or program.models:
        return []
    message = "the file is empty" if not program.statements else "the program defines no models"
    return [diag("S100", message, program.span, hint="add a model block")]
