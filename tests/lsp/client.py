"""A small synchronous LSP client over stdio: JSON-RPC with Content-Length framing.

It starts ``python -m aurane lsp`` as a subprocess, answers the server's own requests with
null, and collects notifications (diagnostics, log messages) for the tests to read.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

FAILURE_MARK = "aurane-lsp handler failed"


class LspClient:
    def __init__(self, *, initialization_options: dict[str, Any] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "aurane", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self.responses: dict[Any, dict[str, Any]] = {}  # by id, kept by ``collect``
        self.null_errors: list[dict[str, Any]] = []  # error replies whose id is null
        self.stderr: list[str] = []
        self.next_id = 0
        self.versions: dict[str, int] = {}
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.initialize_result = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {
                    "textDocument": {
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                        "completion": {"completionItem": {"snippetSupport": True}},
                        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                        "rename": {"prepareSupport": True},
                        "publishDiagnostics": {"relatedInformation": True},
                    }
                },
                "initializationOptions": initialization_options or {},
            },
        )
        self.notify("initialized", {})

    # ---- transport

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = stream.read(length)
            self.messages.put(json.loads(body))

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        for line in stream:
            self.stderr.append(line.decode("utf-8", "replace"))

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send_bytes(self, data: bytes) -> None:
        """Write raw bytes to the server (framing of the caller's choice)."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def _dispatch(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Handle one incoming message; return it when it is a response."""
        if "method" in message and "id" in message:  # a request from the server
            self._send({"id": message["id"], "result": None})
            return None
        if "method" in message:
            self.notifications.append(message)
            return None
        if message.get("id") is None and "error" in message:
            self.null_errors.append(message)
        return message

    def request(self, method: str, params: Any, timeout: float = 20.0) -> Any:
        self.next_id += 1
        ident = self.next_id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            response = self._dispatch(message)
            if response is not None and response.get("id") is not None:
                self.responses[response["id"]] = response
            if response is not None and response.get("id") == ident:
                if "error" in response:
                    raise AssertionError(f"{method} failed: {response['error']}")
                return response.get("result")

    def collect(self, ids: set[Any], timeout: float = 30.0) -> dict[Any, dict[str, Any]]:
        """The responses (result or error) to the requests ``ids``, waiting for all of them."""
        deadline = time.monotonic() + timeout
        while not ids <= self.responses.keys():
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            response = self._dispatch(message)
            if response is not None and response.get("id") is not None:
                self.responses[response["id"]] = response
        return {ident: self.responses[ident] for ident in ids}

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def wait_for(self, method: str, predicate: Any = None, timeout: float = 20.0) -> Any:
        """The next notification ``method`` (after those already read) matching ``predicate``."""
        deadline = time.monotonic() + timeout
        start = len(self.notifications)
        while True:
            for note in self.notifications[start:]:
                if note["method"] == method and (predicate is None or predicate(note["params"])):
                    return note["params"]
            start = len(self.notifications)
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            self._dispatch(message)

    # ---- documents

    def open(self, uri: str, text: str) -> list[dict[str, Any]]:
        self.versions[uri] = 1
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "aurane", "version": 1, "text": text}},
        )
        return self.diagnostics(uri, 1)

    def change(self, uri: str, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.versions[uri] += 1
        version = self.versions[uri]
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes},
        )
        return self.diagnostics(uri, version)

    def diagnostics(self, uri: str, version: int) -> list[dict[str, Any]]:
        params = self.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and p.get("version") == version,
        )
        result: list[dict[str, Any]] = params["diagnostics"]
        return result

    def at(self, uri: str, line: int, character: int) -> dict[str, Any]:
        return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}

    # ---- checks and shutdown

    def failures(self) -> list[str]:
        logged = [
            n["params"]["message"]
            for n in self.notifications
            if n["method"] == "window/logMessage" and n["params"]["type"] == 1
        ]
        return logged + [line for line in self.stderr if FAILURE_MARK in line]

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=5)
            self.notify("exit", None)
            self.process.wait(timeout=5)
        except Exception:
            self.process.kill()
            self.process.wait()


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()
