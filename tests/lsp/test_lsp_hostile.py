"""Hostile input to ``aurane lsp`` through a real stdio client (issue 21 item 9, K-LSP).

Deterministic generated messages: malformed params, out-of-range positions, wrong types,
unknown documents, huge documents, bad headers, wrong ``Content-Length``. Every request with
a readable id gets a response with that id (a result or a JSON-RPC error), input with no
readable id gets an error whose id is null, the server never dies, logs no handler failure,
and a normal hover works afterwards.
"""

from __future__ import annotations

import importlib.util
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygls") is None, reason="pygls is not installed (the lsp extra)"
)

from tests.lsp.client import LspClient  # noqa: E402

URI = "file:///hostile.aur"
SCRATCH = "file:///scratch.aur"
TEXT = """width = 16

model Net:
    input_shape = (width,)
    def forward(x):
        x -> dense(width).relu
          -> dense(4)
"""
DENSE = (5, 14)  # 0-based line and character of ``dense`` in TEXT
INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR = -32602, -32600, -32700


def frame(message: Any, *, length_delta: int = 0, header: bytes | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    if header is None:
        header = b"Content-Length: %d\r\n\r\n" % (len(body) + length_delta)
    return header + body


def request(ident: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


def at(uri: Any, line: Any, character: Any) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


@pytest.fixture(scope="module")
def client() -> Iterator[LspClient]:
    c = LspClient()
    c.open(URI, TEXT)
    c.open(SCRATCH, TEXT)
    yield c
    c.close()


def next_id(client: LspClient) -> int:
    client.next_id += 1
    return client.next_id


def ask(client: LspClient, method: str, params: Any) -> dict[str, Any]:
    """The whole response (result or error) to one request."""
    ident = next_id(client)
    client.send_bytes(frame(request(ident, method, params)))
    return client.collect({ident})[ident]


def assert_healthy(client: LspClient) -> None:
    assert client.process.poll() is None, "the server died"
    hover = client.request("textDocument/hover", at(URI, *DENSE))
    assert hover is not None and "dense" in hover["contents"]["value"]


@pytest.fixture(autouse=True)
def healthy_after(client: LspClient) -> Iterator[None]:
    before = len(client.failures())
    yield
    assert_healthy(client)
    assert client.failures()[before:] == []


# ---------------------------------------------------------------- the cases of issue 21 item 9


def test_issue21_9_hover_with_line_minus_one_is_answered(client: LspClient) -> None:
    response = ask(client, "textDocument/hover", at(URI, -1, 0))
    assert response["error"]["code"] == INVALID_PARAMS
    assert "position" in response["error"]["message"]


def test_issue21_9_hover_with_line_two_to_the_forty_is_answered(client: LspClient) -> None:
    response = ask(client, "textDocument/hover", at(URI, 2**40, 0))
    assert response["error"]["code"] == INVALID_PARAMS
    # the largest line LSP allows is valid: past the end of the text, nothing to show
    assert ask(client, "textDocument/hover", at(URI, 2**31 - 1, 2**31 - 1))["result"] is None


def test_issue21_9_hover_with_null_params_is_answered(client: LspClient) -> None:
    response = ask(client, "textDocument/hover", None)
    assert response["error"]["code"] == INVALID_PARAMS


def test_issue21_9_hover_without_position_is_answered(client: LspClient) -> None:
    response = ask(client, "textDocument/hover", {"textDocument": {"uri": URI}})
    assert response["error"]["code"] == INVALID_PARAMS
    assert "position" in response["error"]["message"]


@pytest.mark.parametrize("delta", [10, 1, -1, -10, 400, -60])
def test_issue21_9_wrong_content_length_then_requests_are_answered(
    client: LspClient, delta: int
) -> None:
    bad, good = next_id(client), next_id(client)
    nulls = len(client.null_errors)
    client.send_bytes(
        frame(request(bad, "textDocument/hover", at(URI, *DENSE)), length_delta=delta)
        + frame(request(good, "textDocument/hover", at(URI, *DENSE)))
    )
    response = client.collect({good})[good]
    assert "dense" in response["result"]["contents"]["value"]
    # the mis-framed request: answered when its body was whole (a length too large, cut at
    # the next header), else one parse error with a null id
    if bad not in client.responses:
        assert len(client.null_errors) > nulls
    # and the server keeps answering (pygls's reader never found a header again)
    for _ in range(3):
        assert ask(client, "textDocument/hover", at(URI, *DENSE))["result"] is not None


# ---------------------------------------------------------------- documents


def test_unknown_documents_are_answered_empty_and_never_read(client: LspClient) -> None:
    for uri in ("file:///dev/zero", "file:///etc/passwd", "file:///nope.aur", "untitled:x"):
        assert ask(client, "textDocument/hover", at(uri, 0, 0))["result"] is None
        symbols = ask(client, "textDocument/documentSymbol", {"textDocument": {"uri": uri}})
        assert symbols["result"] == []


def test_huge_document_is_a_located_error(client: LspClient) -> None:
    uri = "file:///huge.aur"
    text = "".join(f"c{i} = {i}\n" for i in range(100_000))  # 1.4 MB: past the 1 MiB limit
    found = client.open(uri, text)
    assert [d["code"] for d in found] == ["P011"]
    assert found[0]["range"]["start"] == {"line": 0, "character": 0}
    assert ask(client, "textDocument/hover", at(uri, 3, 0))["result"] is None
    # an edit that brings it under the limit is analysed again
    end = {"line": 100_000, "character": 0}
    edit = {"range": {"start": {"line": 10, "character": 0}, "end": end}, "text": ""}
    assert client.change(uri, [edit]) == []
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_message_over_the_size_limit_is_refused_and_skipped(client: LspClient) -> None:
    from aurane.lsp.transport import MAX_MESSAGE_BYTES

    nulls = len(client.null_errors)
    text = "y = 2\n" * (MAX_MESSAGE_BYTES // 6 + 1)
    big = {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {
            "textDocument": {
                "uri": "file:///big.aur",
                "languageId": "aurane",
                "version": 1,
                "text": text,
            }
        },
    }
    client.send_bytes(frame(big))
    assert ask(client, "textDocument/hover", at(URI, *DENSE))["result"] is not None
    assert any("limit" in e["error"]["message"] for e in client.null_errors[nulls:])
    # a header that only claims a huge body: skipped up to the next header
    client.send_bytes(b"Content-Length: 999999999999\r\n\r\n{}")
    assert ask(client, "textDocument/hover", at(URI, *DENSE))["result"] is not None


# ---------------------------------------------------------------- generated hostile requests

POSITION_METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/signatureHelp",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/prepareRename",
    "textDocument/rename",
]
DOCUMENT_METHODS = [
    "textDocument/documentSymbol",
    "textDocument/foldingRange",
    "textDocument/formatting",
    "textDocument/codeAction",
    "textDocument/inlayHint",
]
NUMBERS = [0, 1, 5, -1, 2**31 - 1, 2**31, 2**40, 2**70, 1.5, "0", None, True, [], {}]
URIS = [
    URI,
    URI,
    "file:///nope.aur",
    "file:///dev/zero",
    "",
    "not a uri",
    "file:///" + "a" * 5000 + ".aur",
    "file:///%ZZ",
    5,
    None,
    {"uri": URI},
]
JUNK = [None, [], [1, 2], "x", 5, {}, {"textDocument": None}, {"position": {}}]


def _range(rng: random.Random) -> Any:
    if rng.random() < 0.5:
        return {
            "start": {"line": 0, "character": 0},
            "end": {"line": rng.choice([0, 3, 7, 2**31 - 1]), "character": 0},
        }
    return rng.choice(
        [
            None,
            {},
            {"start": {"line": 5, "character": 0}, "end": {"line": 1, "character": 0}},
            {"start": {"line": -1, "character": 0}, "end": {"line": 1, "character": 0}},
            {"start": {"line": 0, "character": 0}, "end": {"line": "x", "character": 0}},
        ]
    )


def _base(method: str, rng: random.Random) -> dict[str, Any]:
    """Valid parameters for ``method`` on the open document."""
    line, character = rng.choice([DENSE, (0, 0), (3, 6), (6, 20), (7, 0)])
    params: dict[str, Any]
    if method in POSITION_METHODS:
        params = at(URI, line, character)
    else:
        params = {"textDocument": {"uri": URI}}
    if method == "textDocument/references":
        params["context"] = {"includeDeclaration": True}
    if method == "textDocument/rename":
        params["newName"] = rng.choice(["w", "", "1abc", "é" * 3, "x" * 5000, "a b"])
    if method == "textDocument/formatting":
        params["options"] = {"tabSize": 4, "insertSpaces": True}
    if method in ("textDocument/codeAction", "textDocument/inlayHint"):
        params["range"] = _range(rng)
    if method == "textDocument/codeAction":
        params["context"] = {"diagnostics": []}
    return params


def _deep(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _hostile_params(method: str, rng: random.Random) -> Any:
    params = _base(method, rng)
    kind = rng.randrange(8)
    if kind == 0:
        return params  # valid
    if kind == 1 and "position" in params:
        params["position"] = {"line": rng.choice(NUMBERS), "character": rng.choice(NUMBERS)}
    elif kind == 2:
        params["textDocument"] = {"uri": rng.choice(URIS)}
    elif kind == 3:
        params.pop(rng.choice(sorted(params)))
    elif kind == 4:
        return rng.choice(JUNK)
    elif kind == 5:
        params["extra"] = _deep(rng.choice([10, 500]))
    elif kind == 6 and "position" in params:
        params["position"] = rng.choice([None, "0:0", [0, 0], {"line": 0}, _deep(200)])
    else:
        params["textDocument"] = rng.choice([None, "x", {}, {"uri": URI, "version": "v"}])
    return params


def _scratch_notification(rng: random.Random) -> dict[str, Any]:
    """Notifications with broken parameters, on a document the checks do not read."""
    kind = rng.randrange(6)
    if kind == 0:
        start = {"line": rng.choice(NUMBERS[:8]), "character": rng.choice(NUMBERS[:8])}
        change = {"range": {"start": start, "end": start}, "text": rng.choice(["x", "\n", ""])}
        params: Any = {"textDocument": {"uri": SCRATCH, "version": 2}, "contentChanges": [change]}
        return {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}
    if kind == 1:
        params = {
            "textDocument": {"uri": "file:///never-opened.aur", "version": 2},
            "contentChanges": [{"text": "x = 1\n"}],
        }
        return {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}
    if kind == 2:
        return {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": rng.choice(JUNK)}
    if kind == 3:
        params = {"textDocument": {"uri": "file:///never-opened.aur"}}
        return {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": params}
    if kind == 4:
        return {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": rng.choice(JUNK)}
    return {"jsonrpc": "2.0", "method": "aurane/unknownNotification", "params": {}}


def _malformed(rng: random.Random, ident: int) -> tuple[bytes, bool]:
    """Bytes that are no well-formed request, and whether an id-null error must follow."""
    hover = request(ident, "textDocument/hover", at(URI, *DENSE))
    kind = rng.randrange(12)
    if kind == 0:
        return frame(b'{"jsonrpc": "2.0", "id": '), True  # not JSON
    if kind == 1:
        return frame(rng.choice([b"[]", b"1", b'"x"', b"null", b"[1, 2]"])), True
    if kind == 2:
        return frame(b"\xff\xfe{}"), True  # not UTF-8
    if kind == 3:
        return frame(b"[" * 100_000), True  # deeper than the decoder goes
    if kind == 4:
        bad_id = rng.choice([1.5, True, None, {"a": 1}, [1]])
        return frame(request(bad_id, "textDocument/hover", at(URI, *DENSE))), True
    if kind == 5:
        return frame({"id": ident, "method": "textDocument/hover", "params": {}}), False
    if kind == 6:
        return frame({"jsonrpc": "2.0", "id": ident, "method": 5, "params": {}}), False
    if kind == 7:
        return frame(hover, length_delta=rng.choice([-7, -1, 1, 3, 50])), False
    if kind == 8:
        return b"Content-Length: 12\r\n" + json.dumps(hover).encode(), False  # no blank line
    if kind == 9:
        return b"garbage\r\n" + frame(hover), False
    if kind == 10:
        return b"Content-Length: x\r\n\r\n" + json.dumps(hover).encode(), False
    header = (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n\r\n"
    )
    return frame(hover, header=header % len(json.dumps(hover))), False


def test_a_thousand_hostile_requests_are_all_answered(client: LspClient) -> None:
    rng = random.Random(21)
    methods = POSITION_METHODS + DOCUMENT_METHODS + ["aurane/unknown", "workspace/symbol"]
    expected: set[Any] = set()
    null_expected = 0
    hostile = 0
    nulls = len(client.null_errors)
    for _batch in range(24):
        chunk = bytearray()
        for _ in range(50):
            roll = rng.random()
            ident: Any = next_id(client)
            if roll < 0.08:
                data, must_error = _malformed(rng, ident)
                chunk += data
                null_expected += must_error
                # a mis-framed request may be answered or lost: a valid request follows
                ident = next_id(client)
                chunk += frame(request(ident, "textDocument/hover", at(URI, *DENSE)))
                expected.add(ident)
            elif roll < 0.18:
                chunk += frame(_scratch_notification(rng))
                continue
            else:
                method = rng.choice(methods)
                if rng.random() < 0.1:
                    ident = f"s{ident}"  # string ids are ids too
                chunk += frame(request(ident, method, _hostile_params(method, rng)))
                expected.add(ident)
            hostile += 1
        client.send_bytes(bytes(chunk))
        client.collect(set(expected), timeout=60)
    assert hostile >= 1000
    responses = client.collect(expected)
    for ident, response in responses.items():
        assert ("result" in response) != ("error" in response), response
        if "error" in response:
            assert response["error"]["code"] in (INVALID_PARAMS, INVALID_REQUEST, -32601), (
                ident,
                response,
            )
    assert len(client.null_errors) - nulls >= null_expected


def test_requests_after_shutdown_are_refused_then_exit_ends_the_server() -> None:
    own = LspClient()
    try:
        assert own.request("shutdown", None) is None
        ident = next_id(own)
        own.send_bytes(frame(request(ident, "textDocument/hover", at(URI, 0, 0))))
        assert own.collect({ident})[ident]["error"]["code"] == INVALID_REQUEST
        own.notify("exit", None)
        assert own.process.wait(timeout=20) == 0
    finally:
        if own.process.poll() is None:
            own.process.kill()
            own.process.wait()
