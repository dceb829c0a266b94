"""Helpers shared by commands: reading sources, printing diagnostics, exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: `aurane --help` needs neither
    from aurane.diagnostics import Diagnostic

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 123


class CommandError(Exception):
    """An input problem that is not a located diagnostic (missing file, unknown model).

    ``diagnostics``: the located ones behind it (a file with errors), for JSON output.
    """

    def __init__(
        self, message: str, code: int = EXIT_INPUT, diagnostics: list[Diagnostic] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.diagnostics = diagnostics or []


def wants_json(args: Any) -> bool:
    """Whether the command line asked for JSON on stdout (``--json``, ``--format json``)."""
    return bool(getattr(args, "json", False)) or getattr(args, "format", None) == "json"


def json_failure(args: Any, message: str, diagnostics: Iterable[Diagnostic] = ()) -> None:
    """One JSON object on stdout for a failed ``--json`` command: check --json's shape."""
    items = list(diagnostics)
    print_json(
        {
            "ok": False,
            "file": getattr(args, "source", None),
            "diagnostics": [d.to_json() for d in items],
            "error": message,
        }
    )


def positive_int(text: str) -> int:
    """argparse ``type=``: an integer of at least 1 (the error says "positive integer")."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def os_reason(error: OSError) -> str:
    """The OS's reason in the lowercase style of every other message ('no such file ...')."""
    reason = str(error.strerror or error)
    return reason[:1].lower() + reason[1:]


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file: the same path once resolved (``./a``, ``b/../a``,
    symlinks), or one existing file (hard links too). Neither needs to exist."""
    from pathlib import Path

    if Path(first).resolve() == Path(second).resolve():
        return True
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):  # missing, unreadable, or not a valid path
        return False


def read_source(path: str) -> tuple[str | None, Diagnostic | None]:
    """The file's text, or a P015 diagnostic for bad UTF-8; raises CommandError if unreadable."""
    from aurane.frontend import decode_source

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise CommandError(f"cannot read '{path}': no such file") from None
    except IsADirectoryError:
        raise CommandError(f"cannot read '{path}': it is a directory") from None
    except OSError as error:
        raise CommandError(f"cannot read '{path}': {os_reason(error)}") from None
    return decode_source(data, path)


def use_colour(stream: Any) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


def print_diagnostics(diagnostics: Iterable[Diagnostic], text: str, filename: str) -> None:
    from aurane.render import render_all
    from aurane.source import Source

    items = list(diagnostics)
    if items:
        print(render_all(items, Source(text, filename), use_colour(sys.stderr)), file=sys.stderr)


def print_json(payload: Any, stream: Any = None) -> None:
    import json

    print(json.dumps(payload, indent=2, ensure_ascii=False), file=stream or sys.stdout)


def shown_text(path: str) -> str:
    """A file that is not valid UTF-8, decoded as well as it goes, for showing its lines."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")


def source_text(path: str, *, json: bool = False) -> str:
    """The file's text; a CommandError carrying the P015 diagnostic on bad UTF-8 (rendered on
    stderr first unless ``json``, where the caller prints it as JSON)."""
    text, bad = read_source(path)
    if text is None:
        assert bad is not None
        if not json:
            print_diagnostics([bad], shown_text(path), path)
        raise CommandError("the file is not valid UTF-8", EXIT_INPUT, [bad])
    return text


def load_text(path: str) -> str | None:
    """The file's text; on bad UTF-8, print the located diagnostic and return None."""
    text, bad = read_source(path)
    if text is None:
        assert bad is not None
        print_diagnostics([bad], shown_text(path), path)
    return text
