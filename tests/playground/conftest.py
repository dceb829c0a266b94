"""A playground server on a free port of 127.0.0.1, serving a temporary copy of a program."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from aurane.playground.server import EXAMPLE, PlaygroundServer, make_server

# the playground's own example, without its opening comment line
PROGRAM = EXAMPLE.split("\n", 1)[1]


@pytest.fixture
def program_file(tmp_path: Path) -> Path:
    path = tmp_path / "net.aur"
    path.write_text(PROGRAM, encoding="utf-8")
    return path


@pytest.fixture
def server(program_file: Path) -> Iterator[PlaygroundServer]:
    srv = make_server(program_file, port=0)
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)
