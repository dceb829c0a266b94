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
    """The file's text, or a located diagnostic: P015 for bad UTF-8, P011 past the size
    limit (checked before reading: at most the limit and one byte are read). Raises
    CommandError when the path is missing, unreadable, or not a regular file (a FIFO or a
    device is refused at once, never waited on)."""
    from aurane.frontend import read_source_text

    try:
        return read_source_text(path)
    except FileNotFoundError:
        raise CommandError(f"cannot read '{path}': no such file") from None
    except OSError as error:
        raise CommandError(f"cannot read '{path}': {os_reason(error)}") from None


def read_stdin_source(name: str = "<stdin>") -> tuple[str | None, Diagnostic | None]:
    """Standard input as a source (``-``): at most the size limit and one byte are read."""
    from aurane.frontend import decode_source, oversized_source
    from aurane.syntax.tokens import MAX_FILE_BYTES

    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        data: bytes = stream.read(MAX_FILE_BYTES + 1)
    else:  # a text stream put in place of stdin (tests): its characters as UTF-8
        data = sys.stdin.read(MAX_FILE_BYTES + 1).encode("utf-8", "surrogatepass")
    if len(data) > MAX_FILE_BYTES:
        return None, oversized_source(len(data), exact=False)
    return decode_source(data, name)


STDOUT = "-"


def refused_output(path: str, error: OSError) -> CommandError:
    """The error for an output path that could not be written: exit 2 when the output rule
    (RELIABILITY K-OUT) refuses what the path names, else 1 (the OS's reason)."""
    from aurane.fs import NotAFile, RefusedOutput

    code = EXIT_USAGE if isinstance(error, NotAFile | RefusedOutput) else EXIT_INPUT
    return CommandError(f"cannot write '{path}': {os_reason(error)}", code)


def check_output(path: str, source: str | None = None) -> None:
    """Refuse, before any work, an output ``path`` the output rule would not write (a
    device, FIFO, socket, directory, read-only file, a link out of its folder) or the
    ``source`` itself; ``-`` (stdout) passes. Writing checks again (:func:`write_output`)."""
    from aurane.fs import output_target

    if path == STDOUT:
        return
    if source is not None and same_file(path, source):
        raise CommandError(
            f"refusing to overwrite the source '{source}' with its output", EXIT_USAGE
        )
    try:
        output_target(path)
    except OSError as error:
        raise refused_output(path, error) from None


def write_output(path: str, data: str | bytes) -> None:
    """``data`` to ``path`` under the output rule, atomically; ``-``: stdout (text as UTF-8
    bytes, whatever the terminal's encoding)."""
    from aurane.fs import atomic_write

    if path == STDOUT:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        buffer = getattr(sys.stdout, "buffer", None)
        sys.stdout.flush()
        if buffer is not None:
            buffer.write(payload)
            buffer.flush()
        else:  # a text stream put in place of stdout
            sys.stdout.write(payload.decode("utf-8", "replace"))
        return
    try:
        atomic_write(path, data)
    except OSError as error:
        raise refused_output(path, error) from None


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
    """A file that could not be read as a source (bad UTF-8, too large), decoded as well as
    it goes, for showing its lines: at most the size limit is read."""
    from aurane.fs import read_limited
    from aurane.syntax.tokens import MAX_FILE_BYTES

    try:
        data = read_limited(path, MAX_FILE_BYTES, truncate=True)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def source_text(path: str, *, json: bool = False) -> str:
    """The file's text; a CommandError carrying the P015/P011 diagnostic (rendered on
    stderr first unless ``json``, where the caller prints it as JSON)."""
    text, bad = read_source(path)
    if text is None:
        assert bad is not None
        if not json:
            print_diagnostics([bad], shown_text(path), path)
        raise CommandError(bad.message, EXIT_INPUT, [bad])
    return text


def load_text(path: str) -> str | None:
    """The file's text; on bad UTF-8 or past the size limit, print the located diagnostic
    and return None."""
    text, bad = read_source(path)
    if text is None:
        assert bad is not None
        print_diagnostics([bad], shown_text(path), path)
    return text
