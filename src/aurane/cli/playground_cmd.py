"""``aurane playground [FILE]``: a local web page that analyses a program as you type."""

from __future__ import annotations

import argparse

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_OK, EXIT_USAGE, CommandError, os_reason

DEFAULT_PORT = 8765


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "playground",
        help=command_help("playground"),
        description="Serve the playground on http://127.0.0.1:PORT/ (this machine only, "
        "works offline): an editor with live diagnostics and hover shapes, the generated "
        "PyTorch, a table of layers (shapes, parameters, FLOPs) and the architecture diagram, "
        "linked both ways. With FILE the page edits that file (the save button writes it); "
        "without, a built-in example. Ctrl+C stops (exit 0).",
    )
    parser.add_argument("file", metavar="FILE", nargs="?", help="the .aur file to open")
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="print the address, do not open a browser"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from aurane.playground.server import make_server

    if not 0 <= args.port <= 65535:
        raise CommandError("--port must be between 0 and 65535", EXIT_USAGE)
    path = Path(args.file) if args.file else None
    try:
        server = make_server(path, args.port)
    except UnicodeDecodeError:
        raise CommandError(f"cannot open '{path}': it is not UTF-8 text") from None
    except OSError as error:  # the file's errors name it; binding the port's do not
        what = f"cannot open '{path}'" if error.filename else "cannot start the server"
        raise CommandError(f"{what}: {os_reason(error)}") from None
    print(f"Aurane playground on {server.url} (Ctrl+C stops)", flush=True)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(file=sys.stderr)
    finally:
        server.server_close()
    return EXIT_OK
