"""JSON-RPC over stdio that survives malformed input: framing, validation, error replies.

pygls's stdio loop trusts each ``Content-Length`` header: a wrong length makes it read into
(or stop short of) the next message, and it never finds a header again, so the server goes
silent for good. A message whose parameters do not fit the LSP types (``params: null``, a
negative line) fails inside its JSON decoding and is dropped without a reply. This module
replaces that loop (pygls itself is not patched):

- ``FrameReader`` cuts the byte stream into messages and *resynchronises*: a header is a
  ``Content-Length`` line followed by header lines and an empty line, and such a header
  can never occur inside a valid JSON body (JSON strings hold no raw CR or LF, and no bare
  word outside them looks like one). So a body that would run into a complete header is cut
  there, a body that does not parse is searched for the next header, and bytes between
  messages are skipped. Memory is bounded (``MAX_MESSAGE_BYTES``, ``MAX_HEADER_BYTES``).
- ``dispatch`` checks each message's shape before pygls sees it and answers every request
  it cannot run with a JSON-RPC error carrying the request's id (``null`` when the id itself
  is unreadable, as JSON-RPC 2.0 says).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from typing import Any, BinaryIO

import cattrs
from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_MESSAGE_BYTES",
    "PARSE_ERROR",
    "FrameReader",
    "Malformed",
    "dispatch",
    "serve_stdio",
]

log = logging.getLogger("aurane.lsp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# A message body may hold a whole document, JSON-escaped: a 1 MiB source (the compiler's
# limit) takes at most 6 MiB as JSON (``\u0001`` for each control byte).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
MAX_HEADER_BYTES = 4096
_CHUNK = 65536

_MARKER = re.compile(rb"content-length", re.IGNORECASE)
_LENGTH_LINE = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"[A-Za-z0-9_-]+[ \t]*:[^\r\n]*")
_HEADER_END = b"\r\n\r\n"
_BLANK = frozenset(b" \t\r\n")


class Malformed:
    """Input that is no JSON-RPC message: answered with an error whose id is null."""

    __slots__ = ("code", "message")

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"Malformed({self.code}, {self.message!r})"


_INCOMPLETE = None


class FrameReader:
    """Bytes in (``feed``), JSON values or ``Malformed`` out; never raises, never hangs.

    Work is linear in the bytes fed: each byte is searched for a header a bounded number of
    times, and a pending body is searched only where new bytes arrived.
    """

    def __init__(self, max_message: int = MAX_MESSAGE_BYTES) -> None:
        self.max_message = max_message
        self._buffer = bytearray()
        self._body: int | None = None  # the declared length of the body at the buffer's start
        self._searched = 0  # how far that body has been searched for a header
        self._quiet = False  # skipped bytes follow a reported error: do not report them again

    def feed(self, data: bytes) -> list[Any]:
        self._buffer += data
        out: list[Any] = []
        while self._step(out):
            pass
        return out

    def _step(self, out: list[Any]) -> bool:
        """Take one header or one body off the buffer; False when more input is needed."""
        if self._body is not None:
            return self._take_body(out)
        buffer = self._buffer
        found = _MARKER.search(buffer)
        if found is None:
            keep = len(_MARKER.pattern) - 1  # a header may begin at the very end
            self._skip(out, max(len(buffer) - keep, 0))
            return False
        header = _header_at(buffer, found.start())
        if header is _INCOMPLETE:
            self._skip(out, found.start())
            return False
        if isinstance(header, int):  # no header after all: look past this one
            self._skip(out, found.start() + 1)
            return True
        length, end = header
        self._skip(out, found.start(), header_lines=True)
        del buffer[: end - found.start()]
        if length > self.max_message:
            out.append(
                Malformed(
                    INVALID_REQUEST,
                    f"message of {length} bytes; the limit is {self.max_message} bytes",
                )
            )
            self._quiet = True  # its body is skipped up to the next header
            return True
        self._body = length
        self._searched = 0
        return True

    def _take_body(self, out: list[Any]) -> bool:
        buffer = self._buffer
        length = self._body or 0
        available = min(len(buffer), length)
        # a complete header inside the declared body: the length was too large, the body
        # ends where the next message begins
        at = self._searched
        while True:
            found = _MARKER.search(buffer, at, available)
            if found is None:
                self._searched = max(available - len(_MARKER.pattern), 0)
                break
            header = _header_at(buffer, found.start())
            if isinstance(header, tuple):
                self._finish_body(out, found.start(), cut=True)
                return True
            if header is _INCOMPLETE:
                self._searched = found.start()
                break
            at = found.start() + 1
        if len(buffer) < length:
            return False
        self._finish_body(out, length, cut=False)
        return True

    def _finish_body(self, out: list[Any], end: int, *, cut: bool) -> None:
        body = bytes(self._buffer[:end])
        self._body = None
        try:
            value = json.loads(body)
        except (ValueError, RecursionError) as error:
            # RecursionError: nesting deeper than the JSON decoder goes
            why = "it ends before the next header" if cut else "wrong Content-Length?"
            out.append(Malformed(PARSE_ERROR, f"message body is not JSON ({why}): {error}"))
            # a header may hide inside a body that did not parse: search it from its start
            self._quiet = True
            return
        del self._buffer[:end]
        self._quiet = False
        out.append(value)

    def _skip(self, out: list[Any], end: int, *, header_lines: bool = False) -> None:
        """Drop ``end`` bytes that belong to no message (reported once per run of them)."""
        if end <= 0:
            return
        skipped = bytes(self._buffer[:end])
        del self._buffer[:end]
        if header_lines:
            # other header fields (Content-Type) may come before Content-Length
            lines = skipped.split(b"\r\n")
            if lines[-1] == b"" and all(_HEADER_LINE.fullmatch(line) for line in lines[:-1]):
                return
        if self._quiet or all(byte in _BLANK for byte in skipped):
            return
        self._quiet = True
        preview = skipped[:40].decode("ascii", "backslashreplace")
        out.append(Malformed(PARSE_ERROR, f"{len(skipped)} bytes outside any message: {preview!r}"))


def _header_at(buffer: bytearray, start: int) -> tuple[int, int] | int | None:
    """At ``start``: (body length, header end), None (incomplete) or -1 (not a header)."""
    end = buffer.find(_HEADER_END, start, start + MAX_HEADER_BYTES)
    if end < 0:
        return _INCOMPLETE if len(buffer) - start < MAX_HEADER_BYTES else -1
    lines = bytes(buffer[start:end]).split(b"\r\n")
    length = _LENGTH_LINE.fullmatch(lines[0])
    if length is None or not all(_HEADER_LINE.fullmatch(line) for line in lines[1:]):
        return -1
    return int(length.group(1)), end + len(_HEADER_END)


# ---------------------------------------------------------------- messages


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def dispatch(server: LanguageServer, value: Any, reply: Callable[[Any, int, str], None]) -> None:
    """Hand one decoded message to pygls, or ``reply(id, code, message)`` with an error."""
    if isinstance(value, Malformed):
        reply(None, value.code, value.message)
        return
    if not isinstance(value, dict):
        reply(None, INVALID_REQUEST, f"a message is a JSON object, not {type(value).__name__}")
        return
    method = value.get("method")
    is_request = "id" in value and "method" in value
    ident = value.get("id") if _is_id(value.get("id")) else None
    if value.get("jsonrpc") != "2.0" or ("method" in value and not isinstance(method, str)):
        if "id" in value or "method" not in value:
            reply(ident, INVALID_REQUEST, 'a message needs "jsonrpc": "2.0" and a string method')
        return
    if is_request and ident is None:
        reply(None, INVALID_REQUEST, "a request id is a number or a string")
        return
    protocol = server.protocol
    if is_request and getattr(protocol, "_shutdown", False) and method != lsp.EXIT:
        reply(ident, INVALID_REQUEST, "the server is shutting down")
        return
    try:
        message = protocol.structure_message(value)
    except Exception as error:  # the parameters do not fit the method's LSP types
        if is_request:
            reply(ident, INVALID_PARAMS, f"invalid params for {method}: {_why(error)}")
        else:
            log.warning("ignored %s: %s", method or "a response", _why(error))
        return
    protocol.handle_message(message)


def _why(error: BaseException) -> str:
    """The first few validation messages ("expected int @ $.params.position.line")."""
    cause = error.__cause__ or error
    try:
        found = cattrs.transform_error(cause, path="$")  # type: ignore[arg-type]
    except Exception:
        found = [repr(cause)]
    return "; ".join(found[:3])[:500]


# ---------------------------------------------------------------- stdio


def serve_stdio(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Run ``server`` on a byte stream pair until end of input or ``exit``."""
    writer = StdoutWriter(stdout)
    server.protocol.set_writer(writer)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_unanswered_params_noise)

    def reply(ident: Any, code: int, message: str) -> None:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
        ).encode("utf-8")
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        frames = FrameReader()
        read = getattr(stdin, "read1", stdin.read)
        while True:
            data = await loop.run_in_executor(server.thread_pool, read, _CHUNK)
            if not data:
                return
            for value in frames.feed(data):
                try:
                    dispatch(server, value, reply)
                except (SystemExit, KeyboardInterrupt, BrokenPipeError):
                    raise
                except Exception:  # pygls failed on a message: log it, keep serving
                    log.exception("message not handled")

    try:
        asyncio.run(run())
    except (BrokenPipeError, KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


def _unanswered_params_noise(record: logging.LogRecord) -> bool:
    """pygls logs a traceback for parameters that do not decode; ``dispatch`` answers those
    with an error reply (and logs one line), so the traceback is noise."""
    return not str(record.msg).startswith("Unable to deserialize message")
