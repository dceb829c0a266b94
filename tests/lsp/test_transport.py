"""``FrameReader``: LSP framing that resynchronises after malformed input, in bounded memory."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygls") is None, reason="pygls is not installed (the lsp extra)"
)

from aurane.lsp.transport import (  # noqa: E402
    INVALID_REQUEST,
    PARSE_ERROR,
    FrameReader,
    Malformed,
)

MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {"x": "é 𝔸"}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "id": "s", "method": "a", "params": {"text": "Content-Length: 5\r\n\r\n"}},
]


def frame(message: Any, delta: int = 0) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % (len(body) + delta) + body


def feed_in(data: bytes, cuts: list[int]) -> list[Any]:
    reader = FrameReader()
    out: list[Any] = []
    last = 0
    for cut in [*cuts, len(data)]:
        out += reader.feed(data[last:cut])
        last = cut
    return out


def test_valid_stream_decodes_the_same_in_any_chunks() -> None:
    data = b"".join(frame(m) for m in MESSAGES)
    assert feed_in(data, []) == MESSAGES
    assert feed_in(data, list(range(1, len(data)))) == MESSAGES  # one byte at a time
    # other header fields, any case, before or after the length
    header = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n"
    body = json.dumps(MESSAGES[0]).encode()
    assert feed_in(header % len(body) + b"\r\n" + body, []) == MESSAGES[:1]
    extra = b"Content-Length: %d\r\nX-Other: 1\r\n\r\n" % len(body)
    assert feed_in(extra + body, []) == MESSAGES[:1]


@pytest.mark.parametrize("delta", [-40, -5, -1, 1, 5, 40, 5000])
def test_a_wrong_length_loses_at_most_its_own_message(delta: int) -> None:
    data = frame(MESSAGES[0], delta) + frame(MESSAGES[1]) + frame(MESSAGES[2])
    for cut in range(0, len(data), 7):  # wherever the input is split
        out = feed_in(data, [cut])
        assert out[-2:] == MESSAGES[1:], (cut, out)
        first = out[:-2]
        # too large: cut at the next header and decoded; too small: one parse error
        assert first == [MESSAGES[0]] or (
            len(first) == 1 and isinstance(first[0], Malformed) and first[0].code == PARSE_ERROR
        ), (cut, first)


def test_garbage_is_skipped_in_bounded_memory() -> None:
    reader = FrameReader()
    out: list[Any] = []
    for _ in range(256):
        out += reader.feed(b"x" * 4096)  # 1 MiB with no header
        assert len(reader._buffer) < 64
    out += reader.feed(frame(MESSAGES[0]))
    assert len(out) == 2 and isinstance(out[0], Malformed) and out[1] == MESSAGES[0]


def test_bad_headers_are_skipped() -> None:
    body = json.dumps(MESSAGES[0]).encode()
    for bad in (
        b"Content-Length: 12\r\n" + body,  # no empty line after the header
        b"Content-Length: -5\r\n\r\n" + body,
        b"Content-Length: x\r\n\r\n" + body,
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n" + body,
        b"Content-Length: 5\r\n" + b"X: " + b"y" * 5000 + b"\r\n\r\n" + body,
        b"\x00\xff garbage\r\n\r\n",
    ):
        out = feed_in(bad + frame(MESSAGES[1]), [])
        assert out[-1] == MESSAGES[1], bad[:40]
        assert all(isinstance(o, Malformed) for o in out[:-1])


def test_bodies_that_are_not_json_are_parse_errors() -> None:
    for body in (b"", b"{", b"\xff\xfe{}", b"[" * 100_000, b'{"a": "\x01"}'):
        header = b"Content-Length: %d\r\n\r\n" % len(body)
        out = feed_in(header + body + frame(MESSAGES[1]), [])
        assert len(out) == 2 and out[1] == MESSAGES[1], body[:20]
        assert isinstance(out[0], Malformed) and out[0].code == PARSE_ERROR


def test_a_message_over_the_limit_is_refused_and_its_body_skipped() -> None:
    reader = FrameReader(max_message=1000)
    big = frame({"text": "y" * 5000})
    out = reader.feed(big[:3000]) + reader.feed(big[3000:] + frame(MESSAGES[1]))
    assert len(out) == 2 and out[1] == MESSAGES[1]
    assert isinstance(out[0], Malformed) and out[0].code == INVALID_REQUEST
    assert "limit" in out[0].message
