"""The playground's HTTP server and its analysis, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aurane.playground.analyze import analyze
from aurane.playground.server import (
    EXAMPLE,
    TOKEN_HEADER,
    PlaygroundServer,
    make_server,
    static_files,
)
from tests.playground.conftest import PROGRAM


def request(
    server: PlaygroundServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request as the page sends it: JSON, with the launch's token (override either)."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port, timeout=30)
    sent = {"Content-Type": "application/json"} if body is not None else {}
    sent[TOKEN_HEADER] = server.state.token
    sent.update(headers or {})
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    conn.request(method, path, body=data, headers=sent)
    response = conn.getresponse()
    out = response.status, dict(response.getheaders()), response.read()
    conn.close()
    return out


def post(server: PlaygroundServer, path: str, body: Any) -> tuple[int, Any]:
    status, _, data = request(server, "POST", path, body)
    return status, json.loads(data)


def test_page_and_bundled_assets_are_served(server: PlaygroundServer) -> None:
    status, headers, body = request(server, "GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b'<script src="/static/playground.js">' in body
    token = server.state.token
    assert len(token) >= 40 and f'<meta name="aurane-token" content="{token}">'.encode() in body
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cross-Origin-Resource-Policy"] == "same-origin"
    assert headers["Connection"] == "close"  # one request per connection
    assert "default-src 'self'" in headers["Content-Security-Policy"]  # nothing from a CDN
    status, headers, body = request(server, "GET", "/static/playground.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"cm-editor" in body  # CodeMirror is bundled, not fetched
    assert TOKEN_HEADER.encode() in body and b"aurane-token" in body  # sent on /api/
    assert b"http://" not in body.replace(b"http://www.w3.org", b"")
    assert {"index.html", "playground.js", "playground.css"} <= set(static_files())
    status, _, body = request(server, "GET", "/static/THIRD_PARTY_LICENSES.txt")
    assert status == 200 and b"@codemirror/view" in body and b"MIT" in body


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/missing.js",
        "/etc",
        "/static/index.html",  # the page is served only at /, with its token
    ],
)
def test_nothing_outside_the_assets_is_served(server: PlaygroundServer, path: str) -> None:
    assert request(server, "GET", path)[0] == 404


def test_other_hosts_and_non_json_posts_are_refused(server: PlaygroundServer) -> None:
    assert request(server, "GET", "/", headers={"Host": "evil.example:80"})[0] == 403
    status, _, _ = request(
        server, "POST", "/api/analyze", b"source=x", {"Content-Type": "text/plain"}
    )
    assert status == 415
    assert post(server, "/api/analyze", {"text": "x"})[0] == 400
    assert post(server, "/api/analyze", {"source": "", "expand": "all"})[0] == 400


def test_file_endpoint_returns_the_file(server: PlaygroundServer, program_file: Path) -> None:
    status, _, body = request(server, "GET", "/api/file")
    data = json.loads(body)
    assert status == 200
    assert data == {
        "path": str(program_file),
        "name": "net.aur",
        "text": PROGRAM,
        "can_save": True,
    }


def test_analyze_an_error_then_the_fix(server: PlaygroundServer) -> None:
    broken = PROGRAM.replace("dense(10)", "dense(10, foo=1)")
    status, data = post(server, "/api/analyze", {"source": broken})
    assert status == 200 and data["ok"] is False
    (problem,) = data["diagnostics"]
    assert problem["severity"] == "error" and "unknown argument 'foo'" in problem["message"]
    line = broken.splitlines()[problem["span"]["line"] - 1]
    start, end = problem["span"]["column"] - 1, problem["span"]["end_column"] - 1
    assert line[start:end] == "foo"
    assert data["python"] is None and data["models"] == []

    status, data = post(
        server, "/api/analyze", {"source": PROGRAM.replace("dense(10)", "dense(7)")}
    )
    assert status == 200 and data["ok"] is True and data["diagnostics"] == []
    (model,) = data["models"]
    assert model["name"] == "SmallResNet" and model["output_shape"] == "(7,)"
    assert "dense(7)" in data["diagram"]["svg"]
    assert "class SmallResNet(nn.Module)" in data["python"]


def test_analysis_table_matches_the_profile() -> None:
    from aurane.analysis.profile import profile, walk
    from aurane.frontend import run_front_end

    data = analyze(PROGRAM)
    graph = run_front_end(PROGRAM).graphs["SmallResNet"]
    prof = profile(graph)
    rows = data["models"][0]["layers"]
    assert [r["path"] for r in rows] == [path for path, _, _ in walk(prof.layers)]
    assert sum(r["parameters"] for r in rows if r["depth"] == 0) == prof.parameters == 9898
    first = rows[0]
    assert first["call"] == "conv2d(16, kernel=3, padding=1)"
    assert first["shape"] == "(16, 32, 32)" and first["span"]["line"] == 10
    assert first["flops"] == 2 * 16 * 3 * 9 * 32 * 32 + 16 * 32 * 32  # MACs x2 + bias adds


def test_mapping_points_at_the_generated_lines_of_each_layer() -> None:
    data = analyze(PROGRAM)
    lines = data["python"].splitlines()
    by_line: dict[int, list[str]] = {}
    for entry in data["mapping"]:
        generated = "\n".join(lines[entry["first"] - 1 : entry["last"]])
        by_line.setdefault(entry["span"]["line"], []).append(generated)
    # .aur line 15: dense(10) -> its constructor and its forward call
    assert any("nn.Linear(16, 10)" in text for text in by_line[15])
    assert any("self.dense1(" in text for text in by_line[15])
    # the block's own lines map into the block class (one class for its calls at two
    # input shapes, taking in_channels: issue 24 item 3)
    assert any("nn.Conv2d(in_channels, 16" in text for text in by_line[3])


def test_hovers_give_shapes_and_parameters() -> None:
    data = analyze(PROGRAM)
    texts = {(h["span"]["line"], h["span"]["column"]): h["text"] for h in data["hovers"]}
    assert (
        texts[(10, 14)] == "conv2d(16, kernel=3, padding=1) \u2192 (16, 32, 32) \u00b7 448 params"
    )
    assert any(t.startswith("x: input (3, 32, 32)") for t in texts.values())


LOOP_BODY = """model Stage(c):
    def forward(x):
        for k in range(2):
            x -> conv2d(c, kernel=1).relu
        return x

model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        for i, c in enumerate([8, 16, 32]):
            h = conv2d(x, c, kernel=3, stride=2, padding=1) as layer{i + 1}
            x = relu(h)
        return x -> Stage(4) -> Stage(6)
"""


def test_hover_inside_an_unrolled_loop_shows_every_iteration() -> None:
    """Issue 24: a statement of a loop is one node per iteration at one span; its hover
    lists each iteration's shape (it showed the first iteration's only, as if the line
    made one (8, 8, 8) layer)."""
    texts = {
        (h["span"]["line"], h["span"]["column"]): h["text"] for h in analyze(LOOP_BODY)["hovers"]
    }
    assert texts[(11, 17)].splitlines() == [
        "conv2d per iteration:",
        "i = 0, c = 8: conv2d(8, kernel=3, stride=2, padding=1) \u2192 (8, 8, 8) \u00b7 224 params"
        " \u00b7 self.layer1",
        "i = 1, c = 16: conv2d(16, kernel=3, stride=2, padding=1) \u2192 (16, 4, 4)"
        " \u00b7 1,168 params \u00b7 self.layer2",
        "i = 2, c = 32: conv2d(32, kernel=3, stride=2, padding=1) \u2192 (32, 2, 2)"
        " \u00b7 4,640 params \u00b7 self.layer3",
    ]
    assert texts[(12, 17)].splitlines()[1:] == [
        "i = 0, c = 8: relu \u2192 (8, 8, 8)",
        "i = 1, c = 16: relu \u2192 (16, 4, 4)",
        "i = 2, c = 32: relu \u2192 (32, 2, 2)",
    ]
    # a loop inside a block called twice: the first call's iterations, each once
    inner = texts[(4, 18)].splitlines()
    assert inner[0] == "conv2d per iteration:" and len(inner) == 3
    assert inner[1].startswith("k = 0: conv2d(4, kernel=1) \u2192 (4, 2, 2) \u00b7 132 params")
    assert inner[2].endswith("(in stage1)")
    # outside a loop the hover is one line, as before
    assert "\n" not in texts[(13, 21)]


def test_expand_is_passed_to_the_diagram(server: PlaygroundServer) -> None:
    _, collapsed = post(server, "/api/analyze", {"source": PROGRAM})
    assert collapsed["diagram"]["data"]["clusters"] == []
    _, one = post(server, "/api/analyze", {"source": PROGRAM, "expand": ["residualunit1"]})
    assert [c["path"] for c in one["diagram"]["data"]["clusters"]] == ["residualunit1"]
    _, everything = post(server, "/api/analyze", {"source": PROGRAM, "expand": True})
    assert len(everything["diagram"]["data"]["clusters"]) == 2


def test_save_writes_the_file_and_needs_one(
    server: PlaygroundServer, program_file: Path, tmp_path: Path
) -> None:
    status, data = post(server, "/api/save", {"source": "# new\n"})
    assert status == 200 and program_file.read_text(encoding="utf-8") == "# new\n"
    example = make_server(None, port=0)
    try:
        assert example.state.text == EXAMPLE and example.state.path is None
        assert analyze(EXAMPLE)["ok"] is True
    finally:
        example.server_close()


def test_save_without_a_file_is_refused() -> None:
    import threading

    srv = make_server(None, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        status, data = post(srv, "/api/save", {"source": "x"})
        assert status == 409 and "no file" in data["error"]
    finally:
        srv.shutdown()
        srv.server_close()


def test_cli_serves_the_file_until_stopped(program_file: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aurane",
            "playground",
            str(program_file),
            "--port",
            "0",
            "--no-browser",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("Aurane playground on http://127.0.0.1:")
        url = first.split()[3]
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/")
        page = conn.getresponse().read().decode()
        conn.close()
        token = re.search(r'name="aurane-token" content="([^"]+)"', page)
        assert token is not None
        for sent, status in (({}, 403), ({TOKEN_HEADER: token.group(1)}, 200)):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/api/file", headers=sent)
            response = conn.getresponse()
            assert response.status == status
            if status == 200:
                assert json.loads(response.read())["text"] == PROGRAM
            conn.close()
    finally:
        proc.terminate()
        proc.wait(30)


def test_cli_usage_errors(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "aurane", "playground", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert "--no-browser" in run("--help").stdout
    missing = run(str(tmp_path / "missing.aur"), "--no-browser", "--port", "0")
    assert missing.returncode == 1 and "cannot open" in missing.stderr
    assert run("--port", "70000", "--no-browser").returncode == 2


def test_an_unrolled_loop_expands_in_the_playground(server: PlaygroundServer) -> None:
    source = (
        "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
        "        for w in [8, 16]:\n            x -> dense(w).relu as fc{w}\n        return x\n"
    )
    _, collapsed = post(server, "/api/analyze", {"source": source})
    nodes = collapsed["diagram"]["data"]["nodes"]
    assert [n["path"] for n in nodes if n["kind"] == "block"] == ["for@4:9"]
    assert "class Net(nn.Module)" in collapsed["python"]
    _, expanded = post(server, "/api/analyze", {"source": source, "expand": ["for@4:9"]})
    assert [c["path"] for c in expanded["diagram"]["data"]["clusters"]] == ["for@4:9"]
