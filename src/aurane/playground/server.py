"""The playground's local HTTP server (standard library only), bound to 127.0.0.1.

Routes:

- ``GET /``: the page; ``GET /static/NAME``: its bundled assets (only files that exist in
  the package's ``static`` folder; no path is joined from the request);
- ``GET /api/file``: the file given on the command line (or the built-in example);
- ``POST /api/analyze`` ``{"source", "model"?, "expand"?}``: ``analyze.analyze`` as JSON;
- ``POST /api/save`` ``{"source"}``: writes the file given on the command line (refused
  when none was given).

Requests must name this server in their ``Host`` header (a page of another site that
resolves its name to 127.0.0.1 is refused), and POST bodies must be JSON, at most
``MAX_BODY`` bytes.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from aurane.playground.analyze import analyze
from aurane.records import record

MAX_BODY = 4 * 1024 * 1024
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
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


class Handler(BaseHTTPRequestHandler):
    server: PlaygroundServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            super().log_message(format, *args)

    # -- plumbing ------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
        )
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode("utf-8"), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        port = self.server.server_address[1]
        return host in {f"127.0.0.1:{port}", f"localhost:{port}"}

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
            return None
        if "application/json" not in (self.headers.get("Content-Type") or ""):
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
            return None
        try:
            data = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            self._error(HTTPStatus.BAD_REQUEST, "invalid JSON")
            return None
        if not isinstance(data, dict) or not isinstance(data.get("source"), str):
            self._error(HTTPStatus.BAD_REQUEST, "expected an object with a 'source' string")
            return None
        return data

    # -- routes --------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "unexpected Host header")
            return
        state = self.server.state
        route = self.path.split("?", 1)[0]
        if route in ("/", "/index.html"):
            self._asset("index.html")
        elif route == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif route.startswith("/static/"):
            self._asset(route[len("/static/") :])
        elif route == "/api/file":
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
        if body is None:
            self._error(HTTPStatus.NOT_FOUND, f"no asset {name!r}")
            return
        self._send(HTTPStatus.OK, body, TYPES.get(Path(name).suffix, "application/octet-stream"))

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "unexpected Host header")
            return
        route = self.path.split("?", 1)[0]
        if route not in ("/api/analyze", "/api/save"):
            self._error(HTTPStatus.NOT_FOUND, "not found")
            return
        data = self._body()
        if data is None:
            return
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
            self._error(HTTPStatus.BAD_REQUEST, "'expand' must be a list of block paths or true")
            return
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
        state = self.server.state
        if state.path is None:
            self._error(HTTPStatus.CONFLICT, "no file was given to save to")
            return
        from aurane.fs import atomic_write

        try:
            atomic_write(state.path, text)
        except OSError as error:
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot save: {error.strerror}")
            return
        state.text = text
        self._json(HTTPStatus.OK, {"saved": str(state.path)})


class PlaygroundServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, state: State, verbose: bool = False) -> None:
        self.state = state
        self.verbose = verbose
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"


def make_server(path: Path | None = None, port: int = 0, verbose: bool = False) -> PlaygroundServer:
    """A server for ``path`` (or the example) on 127.0.0.1:``port`` (0: any free port).

    Raises ``OSError`` when the file cannot be read or the port is taken.
    """
    text = path.read_text(encoding="utf-8") if path is not None else EXAMPLE
    state = State(path, text, threading.Lock(), static_files())
    return PlaygroundServer(port, state, verbose)
