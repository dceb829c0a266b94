"""``aurane interactive``: a REPL that shows the generated Python without running it."""

from __future__ import annotations

import argparse

from aurane.cli.commands import command_help


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "interactive",
        help=command_help("interactive"),
        description="A REPL: type statements (a header ending in ':' continues until an empty "
        "line), then .compile to see the Python. Commands: .help .show .compile .clear .exit. "
        "Errors do not end the session; nothing is executed.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.tools.repl import repl

    return repl()
