"""Hostile requests to the playground over real sockets (RELIABILITY K-WEB, issue 21).

A hostile page in the user's own browser can send "simple" cross-origin requests (no
preflight: text/plain, form bodies), rebind its DNS name to 127.0.0.1, and a hostile
client can send malformed, slow, huge or deeply nested requests. Whatever arrives: the
file is never changed, every request is answered (4xx/5xx) or closed, no handler raises,
and a legitimate request is served afterwards.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from aurane.playground import server as playground
from aurane.playground.server import PlaygroundServer, make_server
from tests.playground.conftest import PROGRAM

TOKEN_HEADER = "X-Aurane-Token"  # what the page sends; test_token_header_is_the_pages

HANG_GUARD = 30.0  # seconds a client waits for any byte before calling it a hang
FAST_BODY = 64 * 1024


def fast_limits(**changes: Any) -> Any:
    """The campaign's limits: real sizes scaled down and times short, so slow requests are
    cut in a fraction of a second; the default limits are tested on their own below."""
    values = {
        "body_bytes": FAST_BODY,
        "json_depth": 8,
        "request_seconds": 1.0,
        "idle_seconds": 0.5,
        "workers": 8,
        "connections": 64,
        **changes,
    }
    return playground.Limits(**values)


OVERWRITE = b'{"source": "# overwritten\\n"}'


@pytest.fixture
def fast_server(program_file: Path) -> Iterator[PlaygroundServer]:
    yield from _serve(make_server(program_file, port=0, limits=fast_limits()))


def _serve(srv: PlaygroundServer) -> Iterator[PlaygroundServer]:
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


# -- a raw HTTP client: bytes out (with pauses), bytes in until the server closes ------------

Part = bytes | float  # bytes to send, or seconds to wait before the next part


def exchange(port: int, parts: list[Part]) -> bytes:
    """Send ``parts`` on a new connection, then read until the server closes it. A server
    that neither answers nor closes within ``HANG_GUARD`` fails the test."""
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD) as conn:
        for part in parts:
            if isinstance(part, float):
                time.sleep(part)
                continue
            try:
                conn.sendall(part)
            except OSError:  # closed on us mid-request: what we have is the answer
                break
        received = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except ConnectionResetError:
                break
            except TimeoutError:
                raise AssertionError(f"no answer and no close within {HANG_GUARD} s") from None
            if not chunk:
                return received
            received += chunk
        return received


def status_of(answer: bytes) -> int | None:
    """The status code of an HTTP answer; None when the connection closed without one."""
    if not answer:
        return None
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    assert match is not None, f"not an HTTP answer: {answer[:80]!r}"
    return int(match.group(1))


def raw_request(
    port: int,
    token: str,
    *,
    method: str = "POST",
    path: str = "/api/save",
    headers: list[tuple[str, str]] | None = None,
    body: bytes = OVERWRITE,
    length: str | None = None,
) -> bytes:
    """A well-formed save request of the page (token, JSON) unless told otherwise."""
    sent = headers if headers is not None else legit_headers(port, token)
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in sent)]
    if length != "":
        lines.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def legit_headers(port: int, token: str) -> list[tuple[str, str]]:
    return [
        ("Host", f"127.0.0.1:{port}"),
        ("Origin", f"http://127.0.0.1:{port}"),
        ("Content-Type", "application/json"),
        (TOKEN_HEADER, token),
    ]


def page_token(port: int, required: bool = True) -> str:
    """The token as a browser tab gets it: from the served page ("" if it has none and
    not ``required``)."""
    answer = exchange(port, [f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()])
    found = re.search(rb'name="aurane-token" content="([A-Za-z0-9_-]+)"', answer)
    assert status_of(answer) == 200 and (found is not None or not required)
    return found.group(1).decode() if found else ""


def legit_save(port: int, text: str) -> int | None:
    body = json.dumps({"source": text}).encode()
    return status_of(exchange(port, [raw_request(port, page_token(port), body=body)]))


# -- the numbered cases of issue 21 ---------------------------------------------------------


def test_case1_cross_origin_simple_request_cannot_overwrite_the_file(
    server: PlaygroundServer, program_file: Path
) -> None:
    """The issue's curl: a page's simple request (no preflight: text/plain with
    ``charset=application/json``, another Origin, no token) answered ``{"saved": ...}``."""
    port = server.server_address[1]
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Origin", "http://evil.example"),
        ("Content-Type", "text/plain; charset=application/json"),
    ]
    answer = exchange(port, [raw_request(port, "", headers=headers)])
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert status_of(answer) == 403 and b"saved" not in answer
    token = page_token(port)
    # each defence holds on its own: right Origin, still no token; token, wrong type
    own = [("Host", f"127.0.0.1:{port}"), ("Origin", f"http://127.0.0.1:{port}")]
    alone = [
        [*own, ("Content-Type", "text/plain; charset=application/json")],
        [*own, ("Content-Type", "application/json")],
        [*own, ("Content-Type", "text/plain; charset=application/json"), (TOKEN_HEADER, "x")],
        [
            *own,
            ("Content-Type", "text/plain; charset=application/json"),
            (TOKEN_HEADER, token),
        ],
        [
            ("Host", f"127.0.0.1:{port}"),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
            (TOKEN_HEADER, token),
        ],
    ]
    statuses = [status_of(exchange(port, [raw_request(port, "", headers=h)])) for h in alone]
    assert statuses == [403, 403, 403, 415, 403]
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert legit_save(port, "# mine\n") == 200  # the page itself still saves
    assert program_file.read_text(encoding="utf-8") == "# mine\n"
    assert server.errors == []


@pytest.mark.parametrize("length", ["abc", "1e3", "0x10", "-1", "", " 1 2", "99999999999999999"])
def test_case9_malformed_content_length_is_answered_not_a_traceback(
    server: PlaygroundServer, program_file: Path, length: str
) -> None:
    """``Content-Length: abc/1e3/0x10`` dropped the connection with a traceback, ``-1`` held
    a thread forever; now each is a 4xx answer at once (the client keeps its socket open)."""
    port = server.server_address[1]
    token = page_token(port, required=False)
    line = [("Content-Length", length)] if length else []
    headers = [*legit_headers(port, token), *line]
    answer = exchange(port, [raw_request(port, token, headers=headers, length="")])
    expected = {"": 411, "99999999999999999": 400}.get(length, 400)
    assert status_of(answer) == expected, answer[:200]
    assert b'"error"' in answer
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert server.errors == []


def test_case9_deep_json_body_is_refused_without_recursion(
    server: PlaygroundServer, program_file: Path
) -> None:
    port = server.server_address[1]
    token = page_token(port, required=False)
    for body in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000):
        answer = exchange(port, [raw_request(port, token, body=body)])
        assert status_of(answer) == 400 and b"nested deeper than 8" in answer
    unbalanced = exchange(port, [raw_request(port, token, body=b"[" * 100_000)])
    assert status_of(unbalanced) == 400 and b"unbalanced" in unbalanced
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert server.errors == []


def test_token_header_is_the_pages() -> None:
    assert playground.TOKEN_HEADER == TOKEN_HEADER
    page_source = Path(__file__).parents[2] / "web" / "playground" / "src" / "main.js"
    assert f'"{TOKEN_HEADER}": TOKEN' in page_source.read_text(encoding="utf-8")


def test_nesting_is_measured_outside_strings() -> None:
    nesting_error = playground.nesting_error
    assert nesting_error('{"source": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 2) is None
    assert nesting_error('{"source": "\\"[[[[", "expand": ["a"]}', 2) is None
    assert nesting_error('{"expand": [["a"]]}', 3) is None
    assert nesting_error('{"expand": [[["a"]]]}', 3) == "JSON nested deeper than 3 levels"
    assert nesting_error('{"expand": [}', 3) == "invalid JSON: unbalanced brackets"


# -- K-WEB: time, size and workers --------------------------------------------------------


def test_slow_body_and_slow_headers_are_cut_at_the_request_deadline(
    fast_server: PlaygroundServer, program_file: Path
) -> None:
    """Bytes dripped just under the idle timeout still meet the deadline of the whole
    request; a body that stops is cut at the idle timeout. Answered 408 or closed."""
    port = fast_server.server_address[1]
    token = fast_server.state.token
    whole = raw_request(port, token)
    head, body = whole.split(b"\r\n\r\n", 1)
    drip: list[Part] = []
    for byte in body:
        drip += [0.2, bytes([byte])]  # 0.2 s < idle 0.5 s; 30 bytes > 1 s deadline
    slow_body = exchange(port, [head + b"\r\n\r\n", *drip])
    assert status_of(slow_body) in (408, None)
    slow_head: list[Part] = [b"POST /api/save HTTP/1.1\r\n"]
    for _ in range(8):  # 1.6 s of headers > the 1 s deadline
        slow_head += [0.2, b"X-Pad: 1\r\n"]
    assert status_of(exchange(port, slow_head)) in (408, None)
    stalled = exchange(port, [whole[:-5]])  # the last bytes never come
    assert status_of(stalled) in (408, None)
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert fast_server.errors == []
    assert fast_server.counts.get("timed out", 0) >= 3


def test_huge_body_is_refused_before_it_is_read(
    server: PlaygroundServer, program_file: Path
) -> None:
    """Default limits: a body over 4 MiB is answered 413 from its Content-Length alone."""
    port = server.server_address[1]
    token = page_token(port)
    huge = b'{"source": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    answer = exchange(port, [raw_request(port, token, body=huge)])
    assert status_of(answer) in (413, None)  # answered; a reset may beat the client's read
    claimed = raw_request(port, token, body=b"", length=str(5 * 1024 * 1024))
    assert status_of(exchange(port, [claimed])) == 413
    assert program_file.read_text(encoding="utf-8") == PROGRAM


def test_one_slow_client_per_worker_does_not_starve_a_legitimate_request(
    program_file: Path,
) -> None:
    """Every worker held by a client that sends nothing: the next request is served once
    the idle timeout frees them; past the connection limit, new ones get 503 at once."""
    limits = fast_limits(request_seconds=2.0, idle_seconds=1.0, workers=2, connections=4)
    for srv in _serve(make_server(program_file, port=0, limits=limits)):
        port = srv.server_address[1]
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        try:
            waited = time.monotonic() + HANG_GUARD
            while srv.open_connections < 4:  # accepted: two served, two waiting
                assert time.monotonic() < waited, "the server never accepted them"
                time.sleep(0.01)
            busy = exchange(port, [b"GET / HTTP/1.1\r\n"])
            assert status_of(busy) == 503  # 4 open connections: the limit
            for conn in idle:  # the server closes each idle one after 1 s
                conn.settimeout(HANG_GUARD)
                assert conn.recv(100) == b""
        finally:
            for conn in idle:
                conn.close()
        assert legit_save(port, "# after\n") == 200
        assert program_file.read_text(encoding="utf-8") == "# after\n"
        assert srv.errors == []


# -- K-WEB: 1,000+ generated hostile requests --------------------------------------------


Request = dict[str, Any]
Flaw = Callable[[Request, int, str], None]


def _set(request: Request, name: str, value: str | None) -> None:
    request["headers"] = [(k, v) for k, v in request["headers"] if k.lower() != name.lower()]
    if value is not None:
        request["headers"].append((name, value))


def _add(request: Request, name: str, value: str) -> None:
    request["headers"].append((name, value))


def _header(name: str, value: str | None) -> Flaw:
    return lambda r, port, token: _set(r, name, value.format(port=port) if value else value)


def _twice(name: str, good: str, bad: str) -> Flaw:
    def apply(r: Request, port: int, token: str) -> None:
        _set(r, name, good.format(port=port, token=token))
        _add(r, name, bad.format(port=port, token=token))

    return apply


def _body(data: bytes) -> Flaw:
    def apply(r: Request, port: int, token: str) -> None:
        r["body"] = data

    return apply


def _field(key: str, value: str) -> Flaw:
    def apply(r: Request, port: int, token: str) -> None:
        r[key] = value

    return apply


def _token(make: Callable[[str], str | None]) -> Flaw:
    return lambda r, port, token: _set(r, TOKEN_HEADER, make(token))


def _length(make: Callable[[int], str]) -> Flaw:
    return lambda r, port, token: r.__setitem__("length", make(len(r["body"])))


# Each flaw alone makes a save request one the server must refuse; flaws of the same
# category replace each other, so any combination still holds at least one.
FLAWS: dict[str, list[tuple[str, Flaw]]] = {
    "body": [
        ("deep array", _body(b"[" * 100_000 + b"]" * 100_000)),
        ("deep object", _body(b'{"a":' * 20_000 + b"0" + b"}" * 20_000)),
        ("nine deep", _body(b'{"source": "x", "expand": ' + b"[" * 8 + b"]" * 8 + b"}")),
        ("unbalanced", _body(b'{"source": "x"' + b"[" * 50_000)),
        ("top-level array", _body(b'["# overwritten"]')),
        ("top-level string", _body(b'"# overwritten"')),
        ("source number", _body(b'{"source": 123}')),
        ("source null", _body(b'{"source": null}')),
        ("source list", _body(b'{"source": ["# overwritten"]}')),
        ("no source", _body(b'{"text": "# overwritten"}')),
        ("invalid json", _body(b'{"source": "# overwritten"')),
        ("invalid utf-8", _body(b'{"source": "\xff\xfe"}')),
        ("form", _body(b"source=%23+overwritten%0A")),
        (
            "multipart",
            _body(b'--x\r\nContent-Disposition: form-data; name="source"\r\n\r\n#\r\n--x--'),
        ),
        ("empty", _body(b"")),
        ("huge", _body(b'{"source": "' + b"x" * (FAST_BODY + 1) + b'"}')),
        ("huge number", _body(b'{"source": "x", "model": ' + b"9" * 5000 + b"}")),
    ],
    "route": [
        ("PUT", _field("method", "PUT")),
        ("DELETE", _field("method", "DELETE")),
        ("PATCH", _field("method", "PATCH")),
        ("OPTIONS", _field("method", "OPTIONS")),
        ("GET save", _field("method", "GET")),
        ("trailing slash", _field("path", "/api/save/")),
        ("upper case", _field("path", "/API/SAVE")),
        ("absolute form", _field("path", "http://evil.example/api/save")),
        ("dot segment", _field("path", "/static/../api/save")),
        ("encoded", _field("path", "/api/%73ave")),
    ],
    "host": [
        ("evil host", _header("Host", "evil.example")),
        ("rebound name", _header("Host", "evil.example:{port}")),
        ("no port", _header("Host", "127.0.0.1")),
        ("localhost no port", _header("Host", "localhost")),
        ("other port", lambda r, port, token: _set(r, "Host", f"127.0.0.1:{port + 1}")),
        ("suffix", _header("Host", "127.0.0.1:{port}.evil.example")),
        ("prefix", _header("Host", "evil.127.0.0.1:{port}")),
        ("ipv6", _header("Host", "[::1]:{port}")),
        ("zeros", _header("Host", "0.0.0.0:{port}")),
        ("empty host", _header("Host", "")),
        ("no host", _header("Host", None)),
        ("two hosts", _twice("Host", "127.0.0.1:{port}", "evil.example:{port}")),
    ],
    "origin": [
        ("evil origin", _header("Origin", "http://evil.example")),
        ("null origin", _header("Origin", "null")),
        ("suffix origin", _header("Origin", "http://127.0.0.1:{port}.evil.example")),
        ("https origin", _header("Origin", "https://127.0.0.1:{port}")),
        ("rebound origin", _header("Origin", "http://evil.example:{port}")),
        ("origin path", _header("Origin", "http://127.0.0.1:{port}/x")),
        ("two origins", _twice("Origin", "http://127.0.0.1:{port}", "http://evil.example")),
        ("cross-site fetch", _header("Sec-Fetch-Site", "cross-site")),
        ("same-site fetch", _header("Sec-Fetch-Site", "same-site")),
    ],
    "token": [
        ("no token", _token(lambda t: None)),
        ("empty token", _token(lambda t: "")),
        ("wrong token", _token(lambda t: "A" * len(t))),
        ("longer token", _token(lambda t: t + "x")),
        ("shorter token", _token(lambda t: t[:-1])),
        ("swapped case", _token(lambda t: t.swapcase() if t.swapcase() != t else "x" + t)),
        (
            "token as cookie",
            lambda r, port, token: (
                _set(r, TOKEN_HEADER, None),
                _add(r, "Cookie", f"aurane-token={token}"),
            )[-1],
        ),
        (
            "token in query",
            lambda r, port, token: (
                _set(r, TOKEN_HEADER, None),
                r.__setitem__("path", f"{r['path']}?token={token}"),
            )[-1],
        ),
        ("two tokens", _twice(TOKEN_HEADER, "{token}", "wrong")),
    ],
    "type": [
        ("no type", _header("Content-Type", None)),
        ("text/plain", _header("Content-Type", "text/plain")),
        ("charset trick", _header("Content-Type", "text/plain; charset=application/json")),
        ("form type", _header("Content-Type", "application/x-www-form-urlencoded")),
        ("multipart type", _header("Content-Type", "multipart/form-data; boundary=x")),
        ("json-seq", _header("Content-Type", "application/json-seq")),
        ("jsonp", _header("Content-Type", "application/jsonp")),
        ("text/json", _header("Content-Type", "text/json")),
        ("ld+json", _header("Content-Type", "application/ld+json")),
        ("latin-1 json", _header("Content-Type", "application/json; charset=latin-1")),
        ("json list", _header("Content-Type", "application/json, text/plain")),
        ("two types", _twice("Content-Type", "application/json", "text/plain")),
    ],
    "length": [
        ("length abc", _length(lambda n: "abc")),
        ("length 1e3", _length(lambda n: "1e3")),
        ("length hex", _length(lambda n: "0x10")),
        ("length -1", _length(lambda n: "-1")),
        ("length plus", _length(lambda n: f"+{n}")),
        ("length spaced", _length(lambda n: f"{n} 1")),
        ("length underscore", _length(lambda n: f"{n}_0")),
        ("length huge", _length(lambda n: "9" * 30)),
        ("length zero", _length(lambda n: "0")),
        ("length short", _length(lambda n: str(max(n - 5, 0)))),
        ("length long", _length(lambda n: str(n + 10))),
        ("no length", _length(lambda n: "")),
        (
            "chunked",
            lambda r, port, token: (
                _add(r, "Transfer-Encoding", "chunked"),
                r.__setitem__("length", ""),
                r.__setitem__("body", b"%x\r\n%s\r\n0\r\n\r\n" % (len(r["body"]), r["body"])),
            )[-1],
        ),
        (
            "two lengths",
            lambda r, port, token: (
                r.__setitem__("length", ""),
                _add(r, "Content-Length", str(len(r["body"]))),
                _add(r, "Content-Length", str(len(r["body"]) + 1)),
            )[-1],
        ),
    ],
}
ORDER = ["body", "route", "host", "origin", "token", "type", "length"]

# Requests that are broken before any route sees them, sent as raw bytes.
RAW: list[tuple[str, Callable[[int, str], list[Part]]]] = [
    ("garbage line", lambda port, token: [b"GARBAGE\r\n\r\n"]),
    ("binary", lambda port, token: [bytes(range(256)) * 4]),
    ("http 0.9", lambda port, token: [b"GET /\r\n"]),
    ("http 2", lambda port, token: [b"POST /api/save HTTP/2.0\r\nHost: x\r\n\r\n"]),
    ("http 9", lambda port, token: [b"POST /api/save HTTP/9.9\r\n\r\n"]),
    ("long line", lambda port, token: [b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n"]),
    (
        "long header",
        lambda port, token: [b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n"],
    ),
    (
        "many headers",
        lambda port, token: [b"GET / HTTP/1.1\r\n" + b"X-A: 1\r\n" * 150 + b"\r\n"],
    ),
    ("nul in header", lambda port, token: [b"GET / HTTP/1.1\r\nHost: \x00\r\n\r\n"]),
    ("bare newlines", lambda port, token: [b"POST /api/save HTTP/1.1\nHost: x\n\n"]),
    ("closed at once", lambda port, token: []),
    ("half a line", lambda port, token: [b"POST /api/sa"]),
    (
        "pipelined",
        lambda port, token: [
            raw_request(port, "wrong") + raw_request(port, "wrong") + raw_request(port, "")
        ],
    ),
    (
        "slow body",
        lambda port, token: _drip(raw_request(port, "wrong"), 0.2),
    ),
    (
        "slow body with token, wrong type",
        lambda port, token: _drip(
            raw_request(
                port,
                token,
                headers=[
                    ("Host", f"127.0.0.1:{port}"),
                    ("Content-Type", "text/plain"),
                    (TOKEN_HEADER, token),
                ],
            ),
            0.2,
        ),
    ),
    (
        "slow headers",
        lambda port, token: [b"POST /api/save HTTP/1.1\r\n", *[0.2, b"X-Pad: 1\r\n"] * 8],
    ),
    ("stalled body", lambda port, token: [raw_request(port, token, length="500")]),
]


def _drip(data: bytes, pause: float) -> list[Part]:
    """Headers at once, then the body a few bytes at a time."""
    head, body = data.split(b"\r\n\r\n", 1)
    parts: list[Part] = [head + b"\r\n\r\n"]
    for start in range(0, len(body), 8):
        parts += [pause, body[start : start + 8]]
    return parts


def hostile_requests(port: int, token: str, count: int = 1000) -> list[tuple[str, list[Part]]]:
    """``count`` or more requests, the same ones for the same port and token: every raw
    case, every single flaw, then combinations of two or three flaws of different
    categories drawn with a fixed seed."""
    cases: list[tuple[str, list[Part]]] = [(name, make(port, token)) for name, make in RAW]
    singles = [(category, flaw) for category in ORDER for flaw in FLAWS[category]]
    for category, flaw in singles:
        cases.append((flaw[0], [_build(port, token, [(category, flaw)])]))
    draw = random.Random(21)
    while len(cases) < count:
        size = draw.choice((2, 2, 3))
        categories = draw.sample(ORDER, size)
        chosen = [(c, draw.choice(FLAWS[c])) for c in categories]
        name = " + ".join(flaw[0] for _, flaw in chosen)
        cases.append((name, [_build(port, token, chosen)]))
    return cases


def _build(port: int, token: str, flaws: list[tuple[str, tuple[str, Flaw]]]) -> bytes:
    request: Request = {
        "method": "POST",
        "path": "/api/save",
        "headers": legit_headers(port, token),
        "body": OVERWRITE,
        "length": None,
    }
    for _, (_, flaw) in sorted(flaws, key=lambda item: ORDER.index(item[0])):
        flaw(request, port, token)
    return raw_request(
        port,
        token,
        method=request["method"],
        path=request["path"],
        headers=request["headers"],
        body=request["body"],
        length=request["length"],
    )


def test_thousand_hostile_requests_change_nothing(
    fast_server: PlaygroundServer, program_file: Path
) -> None:
    port = fast_server.server_address[1]
    token = page_token(port)
    cases = hostile_requests(port, token)
    assert len(cases) >= 1000 and len({name for name, _ in cases}) > 900
    assert cases == hostile_requests(port, token)  # deterministic
    with ThreadPoolExecutor(16) as clients:
        answers = list(clients.map(lambda case: exchange(port, case[1]), cases))
    statuses: dict[int | None, int] = {}
    for (name, _), answer in zip(cases, answers, strict=True):
        status = status_of(answer)
        assert status is None or status >= 400, f"{name}: answered {status}"
        assert b'"saved"' not in answer, name
        statuses[status] = statuses.get(status, 0) + 1
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert fast_server.errors == []
    # the refusals came from every defence, not one catch-all
    assert {400, 403, 404, 411, 413, 415} <= set(statuses), statuses
    assert statuses.get(None, 0) < len(cases) // 10, statuses  # most get an answer
    print(f"{len(cases)} hostile requests: {sorted(statuses.items(), key=str)}")
    # and the server still serves the page
    assert legit_save(port, "# still mine\n") == 200
    assert program_file.read_text(encoding="utf-8") == "# still mine\n"


def test_every_single_flaw_is_refused_with_the_page_token(
    fast_server: PlaygroundServer, program_file: Path
) -> None:
    """The flaws one by one, each with a status from the defence it breaks."""
    port = fast_server.server_address[1]
    token = page_token(port)
    expected = {"host": {403}, "origin": {403}, "token": {403}, "type": {415}}
    for category in ORDER:
        for flaw in FLAWS[category]:
            status = status_of(exchange(port, [_build(port, token, [(category, flaw)])]))
            assert status is None or status >= 400, flaw[0]
            if category in expected:
                assert status in expected[category], (flaw[0], status)
    assert program_file.read_text(encoding="utf-8") == PROGRAM
    assert fast_server.errors == []


def test_the_generated_requests_are_refused_only_for_their_flaws(
    fast_server: PlaygroundServer, program_file: Path
) -> None:
    """The campaign's base request, with no flaw, is a save that works: the refusals above
    are the flaws' doing, not a request the server could never accept."""
    port = fast_server.server_address[1]
    token = page_token(port)
    assert status_of(exchange(port, [_build(port, token, [])])) == 200
    assert program_file.read_text(encoding="utf-8") == "# overwritten\n"


def test_combinations_cover_every_pair_of_categories() -> None:
    cases = hostile_requests(8765, "t" * 43)
    names = {name for name, _ in cases}
    flaw_category = {flaw[0]: c for c in ORDER for flaw in FLAWS[c]}
    pairs = set()
    for name in names:
        parts = name.split(" + ")
        if all(part in flaw_category for part in parts):
            pairs |= {
                frozenset((flaw_category[a], flaw_category[b]))
                for a, b in itertools.combinations(parts, 2)
            }
    assert len(pairs) == len(ORDER) * (len(ORDER) - 1) // 2
