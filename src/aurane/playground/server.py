"""The playground's local HTTP server (standard library only), bound to 127.0.0.1.

Routes:

- ``GET /``: the page, with this launch's secret token in a ``<meta>`` tag;
  ``GET /static/NAME``: its bundled assets (only files that exist in the package's
  ``static`` folder; no path is joined from the request);
- ``GET /api/file``: the file given on the command line (or the built-in example);
- ``POST /api/analyze`` ``{"source", "model"?, "expand"?}``: ``analyze.analyze`` as JSON;
- ``POST /api/save`` ``{"source"}``: writes the file given on the command line (refused
  when none was given).

The defences (RELIABILITY K-WEB; the threat model is in docs/security.md): every request
names this server in ``Host`` (DNS rebinding), carries no foreign ``Origin`` or
``Sec-Fetch-Site``; every ``/api/`` request carries the per-launch token in
``X-Aurane-Token`` (only the served page knows it: no cookie another page could ride on);
a POST body is ``application/json`` exactly, with a well-formed ``Content-Length`` of at
most ``Limits.body_bytes``, nested at most ``Limits.json_depth`` deep. A request must
arrive whole within ``Limits.request_seconds`` and no socket waits more than
``Limits.idle_seconds`` for a byte; each connection serves one request, on a pool of
``Limits.workers`` threads, and past ``Limits.connections`` open connections a new one is
answered 503 at once.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import json
import re
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from aurane.playground.analyze import analyze
from aurane.records import record

MAX_BODY = 4 * 1024 * 1024  # a 1 MiB source, JSON-escaped, fits
MAX_JSON_DEPTH = 8  # the requests nest 2 deep ({"expand": [...]})
TOKEN_HEADER = "X-Aurane-Token"
TOKEN_META = b'<meta name="aurane-token" content="">'
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
}
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    # nothing from elsewhere, and no other page may frame this one (a framed save button
    # could be clicked through a decoy)
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Referrer-Policy": "no-referrer",
}

EXAMPLE = """\
# The Aurane playground: edit the program, everything below updates as you type.
model ResidualUnit:
    def forward(x):
        h = conv2d(x, 16, kernel=3, padding=1).relu
        h = conv2d(h, 16, kernel=3, padding=1)
        return add(x, h).relu

model SmallResNet:
    input_shape = (3, 32, 32)
    def forward(x):
        x -> conv2d(16, kernel=3, padding=1).relu
          -> ResidualUnit()
          -> maxpool(2)
          -> ResidualUnit()
          -> global_avg_pool()
          -> dense(10)
"""


@record(frozen=True)
class Limits:
    """How much one request may take (docs/limits.md); tests shrink the times."""

    body_bytes: int = MAX_BODY
    json_depth: int = MAX_JSON_DEPTH
    request_seconds: float = 10.0  # request line, headers and body, all of it
    idle_seconds: float = 5.0  # the longest wait for one byte, read or written
    workers: int = 8  # threads serving connections
    connections: int = 64  # open connections (served or waiting); past it, 503 at once


def static_files() -> dict[str, bytes]:
    """The bundled assets by file name."""
    folder = resources.files("aurane.playground").joinpath("static")
    found: dict[str, bytes] = {}
    if folder.is_dir():
        for entry in folder.iterdir():
            if entry.is_file() and not entry.name.startswith("."):
                found[entry.name] = entry.read_bytes()
    return found


@record
class State:
    path: Path | None  # the FILE given, or None: the example, no saving
    text: str
    lock: threading.Lock
    assets: dict[str, bytes]
    token: str = ""  # this launch's secret: in the served page, required on /api/


class RequestRejected(Exception):
    """A request refused before its body was read: status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


# -- JSON nesting, measured before json.loads recurses into anything ------------------------

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


def nesting_error(text: str, limit: int) -> str | None:
    """Why ``text`` nests deeper than ``limit`` (or has unbalanced brackets), else None.

    Strings are blanked, everything but brackets dropped, then innermost pairs removed
    ``limit`` times: each round is one regular-expression pass, so a 100,000-deep body is
    refused in ``limit`` linear passes, with no recursion.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        if not brackets:
            return None
        brackets, removed = _PAIR.subn("", brackets)
        if not removed:
            return "invalid JSON: unbalanced brackets"
    if brackets:
        return f"JSON nested deeper than {limit} levels"
    return None


# -- the socket side: a deadline for the whole request, a timeout for every byte ------------


class _DeadlineReader(io.RawIOBase):
    """The connection's bytes; each wait is at most the idle time and never past the
    request's deadline (``socket.timeout``, a ``TimeoutError``, once either is spent)."""

    def __init__(self, connection: socket.socket, handler: Handler) -> None:
        self.connection, self.handler = connection, handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self.handler.deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError("the request took too long")
            self.connection.settimeout(min(self.handler.limits.idle_seconds, remaining))
            return self.connection.recv_into(buffer)
        except TimeoutError:
            self.handler.server.count("timed out")
            raise


class Handler(BaseHTTPRequestHandler):
    server: PlaygroundServer
    protocol_version = "HTTP/1.1"
    # a request line without a version is answered with a status line all the same (the
    # standard library's default, HTTP/0.9, would send a bare body)
    default_request_version = "HTTP/1.0"
    deadline = 0.0

    @property
    def limits(self) -> Limits:
        return self.server.limits

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.limits.idle_seconds)  # writes included
        self.deadline = time.monotonic() + self.limits.request_seconds
        self.rfile.close()  # the plain reader super() made: ours keeps the deadline
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self))

    def handle(self) -> None:
        """One request per connection: a worker is never held by an idle keep-alive."""
        try:
            self.handle_one_request()  # a TimeoutError ends it there: closed, no answer
        except ConnectionError:  # the client went away
            self.server.count("client gone")
        self.close_connection = True

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self._linger()

    def _linger(self) -> None:
        """Half-close, then drop what the client still sends for a moment: closing with
        unread bytes would reset the connection and could lose the answer just sent."""
        until = time.monotonic() + min(1.0, self.limits.idle_seconds)
        try:
            self.connection.shutdown(socket.SHUT_WR)
            drained = 0
            while drained < self.limits.body_bytes:
                remaining = until - time.monotonic()
                if remaining <= 0:
                    break
                self.connection.settimeout(remaining)
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            super().log_message(format, *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (bad request line, unknown method, too many
        headers) as this server's JSON answers, with the same headers as every other."""
        self.server.count(f"refused {code}")
        if code in (HTTPStatus.NOT_IMPLEMENTED, HTTPStatus.METHOD_NOT_ALLOWED):
            self.close_connection = True
        try:
            self._error(code, (message or HTTPStatus(code).phrase).lower())
        except (OSError, ValueError):
            self.close_connection = True

    # -- plumbing ------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.close_connection = True
        self.connection.settimeout(self.limits.idle_seconds)  # reading may have left less
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode("utf-8"), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _port(self) -> int:
        return int(self.server.server_address[1])

    def _hosts(self) -> set[str]:
        port = self._port()
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def _check_host(self) -> None:
        """Host names this server: a page whose DNS name was rebound to 127.0.0.1 sends its
        own name."""
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].strip().lower() not in self._hosts():
            raise RequestRejected(HTTPStatus.FORBIDDEN, "unexpected Host header")

    def _check_api(self) -> None:
        """An /api/ request: Origin and Sec-Fetch-Site, when sent, say this page (a browser
        sends them on every cross-origin request), and the launch's token is sent."""
        origins = self.headers.get_all("Origin") or []
        allowed = {f"http://{host}" for host in self._hosts()}
        if len(origins) > 1 or any(o.strip().lower() not in allowed for o in origins):
            raise RequestRejected(HTTPStatus.FORBIDDEN, "requests from other pages are refused")
        site = self.headers.get_all("Sec-Fetch-Site") or []
        if any(value.strip().lower() not in ("same-origin", "none") for value in site):
            raise RequestRejected(HTTPStatus.FORBIDDEN, "requests from other pages are refused")
        sent = self.headers.get_all(TOKEN_HEADER) or []
        token = self.server.state.token.encode()
        if len(sent) != 1 or not token:
            raise RequestRejected(HTTPStatus.FORBIDDEN, "missing or wrong playground token")
        if not hmac.compare_digest(sent[0].strip().encode("latin-1", "replace"), token):
            raise RequestRejected(HTTPStatus.FORBIDDEN, "missing or wrong playground token")

    def _body(self) -> dict[str, Any]:
        types = self.headers.get_all("Content-Type") or []
        if len(types) != 1 or not _is_json(types[0]):
            raise RequestRejected(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON (Content-Type: application/json)"
            )
        if self.headers.get_all("Transfer-Encoding"):
            raise RequestRejected(HTTPStatus.LENGTH_REQUIRED, "send a Content-Length, not chunks")
        lengths = self.headers.get_all("Content-Length") or []
        if not lengths:
            raise RequestRejected(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        if len(lengths) != 1 or not re.fullmatch(r"[0-9]{1,12}", lengths[0].strip()):
            raise RequestRejected(HTTPStatus.BAD_REQUEST, "malformed Content-Length")
        length = int(lengths[0])
        if length > self.limits.body_bytes:
            raise RequestRejected(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"request body over {self.limits.body_bytes} bytes",
            )
        try:
            data = self.rfile.read(length)
        except TimeoutError:  # counted by the reader
            raise RequestRejected(HTTPStatus.REQUEST_TIMEOUT, "the request took too long") from None
        if len(data) < length:
            raise ConnectionError("the client closed before its body was sent")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RequestRejected(HTTPStatus.BAD_REQUEST, "the body is not UTF-8") from None
        problem = nesting_error(text, self.limits.json_depth)
        if problem is not None:
            raise RequestRejected(HTTPStatus.BAD_REQUEST, problem)
        try:
            parsed = json.loads(text)
        except ValueError:
            raise RequestRejected(HTTPStatus.BAD_REQUEST, "invalid JSON") from None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("source"), str):
            raise RequestRejected(
                HTTPStatus.BAD_REQUEST, "expected an object with a 'source' string"
            )
        return parsed

    def _answer(self, work: Any) -> None:
        try:
            work()
        except RequestRejected as refused:
            self.server.count(f"refused {refused.status}")
            self._error(refused.status, refused.message)
        except (TimeoutError, ConnectionError):
            raise
        except Exception:  # a bug: recorded (tests fail on it), answered 500
            import traceback

            self.server.errors.append(traceback.format_exc())
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error in the playground")

    # -- routes --------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802
        self._answer(self._get)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._answer(self._post)

    def _get(self) -> None:
        self._check_host()
        state = self.server.state
        route = self.path.split("?", 1)[0]
        if route in ("/", "/index.html"):
            page = state.assets.get("index.html", b"")
            meta = TOKEN_META.replace(b'content=""', f'content="{state.token}"'.encode())
            self._send(HTTPStatus.OK, page.replace(TOKEN_META, meta, 1), TYPES[".html"])
        elif route == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif route.startswith("/static/"):
            self._asset(route[len("/static/") :])
        elif route == "/api/file":
            self._check_api()
            self._json(
                HTTPStatus.OK,
                {
                    "path": str(state.path) if state.path else None,
                    "name": state.path.name if state.path else "example.aur",
                    "text": state.text,
                    "can_save": state.path is not None,
                },
            )
        else:
            self._error(HTTPStatus.NOT_FOUND, "not found")

    def _asset(self, name: str) -> None:
        body = self.server.state.assets.get(name)
        if body is None or name == "index.html":  # the page only with its token, at /
            self._error(HTTPStatus.NOT_FOUND, f"no asset {name!r}")
            return
        self._send(HTTPStatus.OK, body, TYPES.get(Path(name).suffix, "application/octet-stream"))

    def _post(self) -> None:
        self._check_host()
        route = self.path.split("?", 1)[0]
        if route not in ("/api/analyze", "/api/save"):
            raise RequestRejected(HTTPStatus.NOT_FOUND, "not found")
        self._check_api()
        data = self._body()
        if route == "/api/save":
            self._save(data["source"])
            return
        model = data.get("model")
        expand = data.get("expand", [])
        if expand is True:
            chosen: list[str] | bool = True
        elif isinstance(expand, list) and all(isinstance(p, str) for p in expand):
            chosen = expand
        else:
            raise RequestRejected(
                HTTPStatus.BAD_REQUEST, "'expand' must be a list of block paths or true"
            )
        state = self.server.state
        name = state.path.name if state.path else "playground.aur"
        with state.lock:  # one analysis at a time: the passes share caches
            result = analyze(
                data["source"],
                name,
                model=model if isinstance(model, str) else None,
                expand=chosen,
            )
        self._json(HTTPStatus.OK, result)

    def _save(self, text: str) -> None:
        from aurane.fs import atomic_write

        state = self.server.state
        if state.path is None:
            raise RequestRejected(HTTPStatus.CONFLICT, "no file was given to save to")
        try:
            with state.lock:
                atomic_write(state.path, text)
                state.text = text
        except OSError as error:
            reason = str(error.strerror or error)
            raise RequestRejected(
                HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot save: {reason}"
            ) from None
        self.server.count("saved")
        self._json(HTTPStatus.OK, {"saved": str(state.path)})


def _is_json(content_type: str) -> bool:
    """``application/json``, with at most a ``charset=utf-8`` parameter: the media type is
    compared whole (``text/plain; charset=application/json`` is not JSON)."""
    media, *parameters = (part.strip().lower() for part in content_type.split(";"))
    if media != "application/json":
        return False
    return all(p.replace(" ", "") in ("charset=utf-8", 'charset="utf-8"') for p in parameters)


class PlaygroundServer(HTTPServer):
    """An HTTP server on 127.0.0.1 with a bounded pool of workers (see the module doc)."""

    request_queue_size = 64

    def __init__(
        self, port: int, state: State, verbose: bool = False, limits: Limits | None = None
    ) -> None:
        self.state = state
        self.verbose = verbose
        self.limits = limits or Limits()
        self.counts: dict[str, int] = {}
        self.errors: list[str] = []  # unexpected exceptions in a handler: bugs
        self._open_count = 0
        self._counts_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="playground")
        self._open = threading.BoundedSemaphore(self.limits.connections)
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def count(self, what: str) -> None:
        with self._counts_lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    @property
    def open_connections(self) -> int:
        """Connections accepted and not yet closed (served or waiting for a worker)."""
        return self._open_count

    def _opened(self, change: int) -> None:
        with self._counts_lock:
            self._open_count += change

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._open.acquire(blocking=False):
            self.count("busy")
            _refuse_busy(request)
            self.shutdown_request(request)
            return
        self._opened(1)
        try:
            self._pool.submit(self._serve, request, client_address)
        except RuntimeError:  # the pool is shut down: the server is closing
            self._opened(-1)
            self._open.release()
            self.shutdown_request(request)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._opened(-1)
            self._open.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        import traceback

        self.errors.append(traceback.format_exc())
        if self.verbose:
            super().handle_error(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _refuse_busy(request: socket.socket) -> None:
    body = b'{"error": "the playground is busy; try again"}'
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
    )
    try:
        request.settimeout(0.1)
        request.sendall(head.encode("ascii") + body)
    except OSError:
        pass


def make_server(
    path: Path | None = None,
    port: int = 0,
    verbose: bool = False,
    limits: Limits | None = None,
) -> PlaygroundServer:
    """A server for ``path`` (or the example) on 127.0.0.1:``port`` (0: any free port), with
    a new secret token.

    Raises ``OSError`` when the file cannot be read (``aurane.fs.NotAFile`` for a FIFO or a
    device, refused without waiting) or the port is taken, ``ValueError`` when it is not
    UTF-8 or over the source size limit.
    """
    from aurane.fs import read_limited
    from aurane.syntax.tokens import MAX_FILE_BYTES

    if path is not None:
        path = path.resolve()  # a symlinked file is saved through to its target
        data = read_limited(path, MAX_FILE_BYTES)
        text = data.decode("utf-8")
    else:
        text = EXAMPLE
    state = State(path, text, threading.Lock(), static_files(), secrets.token_urlsafe(32))
    return PlaygroundServer(port, state, verbose, limits)
