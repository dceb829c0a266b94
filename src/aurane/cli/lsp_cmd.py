"""``aurane lsp``: the Language Server over stdio (needs the ``lsp`` extra: pygls)."""

from __future__ import annotations

import argparse

from aurane.cli.commands import command_help
from aurane.cli.common import CommandError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "lsp",
        help=command_help("lsp"),
        description="Run the Aurane language server on stdin/stdout (the Language Server "
        "Protocol): diagnostics as you type, hover shapes, inlay hints, navigation, rename, "
        "completion, signature help, outline, folding, formatting and quick fixes. Editors "
        "start it; see docs/editors.md.",
    )
    parser.add_argument(
        "--stdio", action="store_true", help="accepted for editors that pass it (the default)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        from aurane.lsp.server import main
    except ImportError as error:
        raise CommandError(
            f"aurane lsp needs pygls ({error}); install it with: pip install 'aurane[lsp]'"
        ) from error
    return main()
