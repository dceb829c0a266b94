"""``aurane lsp`` through a real client over stdio (one server process for the module).

Every feature is asked over JSON-RPC as an editor would; any handler failure the server logs
(window/logMessage of type Error, or its stderr mark) fails the test that caused it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pygls") is None, reason="pygls is not installed (the lsp extra)"
)

from tests.lsp.client import LspClient  # noqa: E402

BLOCKS = """# a program with a parameterised block
width = 16

model Unit(w, scale=2):
    def forward(x):
        h = dense(x, w * scale).relu
        h = dense(h, w)
        return add(x, h)

model Net:
    input_shape = (width,)
    def forward(x):
        x -> dense(width).relu
          -> Unit(width)
          -> dense(4)

dataset data:
    from aurane.data.SyntheticRegression
    size = 64
    features = 16
    targets = 4
    batch = 8

train Net on data:
    epochs = 1
    loss = mse
    optimizer = adam(lr=0.01)
"""

ERRORS = """model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> conv2d(4, kernel=3).relu
          -> flaten()
          -> dense(10)

model Other:
    input_shape = (8,)
    def forward(x):
        x -> dense(4)
          -> dense(classes)

model Third:
    input_shape = (8,)
    def forward(x):
        h = dense(x, 4)
        return add(x, h)
"""


def pos(text: str, needle: str, offset: int = 0, nth: int = 0) -> tuple[int, int]:
    """0-based (line, character) of ``needle`` (its ``nth`` occurrence) plus ``offset``."""
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    index += offset
    line = text.count("\n", 0, index)
    return line, index - (text.rfind("\n", 0, index) + 1)


@pytest.fixture(scope="module")
def client() -> Iterator[LspClient]:
    c = LspClient(initialization_options={"inlayHints": True})
    yield c
    c.close()


@pytest.fixture(autouse=True)
def no_handler_failures(client: LspClient) -> Iterator[None]:
    before = len(client.failures())
    yield
    assert client.failures()[before:] == []


def at(client: LspClient, uri: str, text: str, needle: str, offset: int = 0) -> dict[str, Any]:
    line, character = pos(text, needle, offset)
    return client.at(uri, line, character)


def hover_text(client: LspClient, uri: str, text: str, needle: str, offset: int = 1) -> str:
    result = client.request("textDocument/hover", at(client, uri, text, needle, offset))
    assert result is not None, needle
    value: str = result["contents"]["value"]
    return value


def test_capabilities(client: LspClient) -> None:
    caps = client.initialize_result["capabilities"]
    for name in (
        "hoverProvider",
        "inlayHintProvider",
        "definitionProvider",
        "referencesProvider",
        "renameProvider",
        "completionProvider",
        "signatureHelpProvider",
        "documentSymbolProvider",
        "foldingRangeProvider",
        "documentFormattingProvider",
        "codeActionProvider",
    ):
        assert caps.get(name), name


def test_several_errors_then_an_edit_fixes_one(client: LspClient) -> None:
    uri = "file:///errors.aur"
    found = client.open(uri, ERRORS)
    codes = sorted(d["code"] for d in found)
    assert "S001" in codes and "R001" in codes and "T001" in codes
    unknown = next(d for d in found if d["code"] == "S001")
    assert "help: did you mean 'flatten'?" in unknown["message"]
    assert unknown["source"] == "aurane" and unknown["severity"] == 1
    assert unknown["range"]["start"] == dict(
        zip(("line", "character"), pos(ERRORS, "flaten"), strict=True)
    )
    mismatch = next(d for d in found if d["code"] == "T001")
    related = mismatch["relatedInformation"]
    assert related and all(r["location"]["uri"] == uri for r in related)
    assert any("from" in r["message"] for r in related)
    # a quick fix for the "did you mean"
    line, character = pos(ERRORS, "flaten")
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {
                "start": {"line": line, "character": character},
                "end": {"line": line, "character": character + 6},
            },
            "context": {"diagnostics": [unknown]},
        },
    )
    fix = next(a for a in actions if a["title"] == "Replace with 'flatten'")
    (edit,) = fix["edit"]["changes"][uri]
    assert edit["newText"] == "flatten"
    assert edit["range"]["start"] == {"line": line, "character": character}
    assert edit["range"]["end"] == {"line": line, "character": character + 6}
    # the user applies it: one error fewer, the others stay
    after = client.change(uri, [{"range": edit["range"], "text": "flatten"}])
    assert sorted(d["code"] for d in after) == sorted(c for c in codes if c != "S001")
    # and breaks the syntax: only the parse error is left (the pipeline stops at parsing)
    line, character = pos(ERRORS, "dense(10)", 5)
    broken = client.change(
        uri,
        [
            {
                "range": {
                    "start": {"line": line, "character": character},
                    "end": {"line": line, "character": character + 1},
                },
                "text": "",
            }
        ],
    )
    assert broken and all(d["code"].startswith("P") for d in broken)


def test_hover_values_ops_and_blocks(client: LspClient) -> None:
    uri = "file:///blocks.aur"
    assert client.open(uri, BLOCKS) == []
    op = hover_text(client, uri, BLOCKS, "dense(width)")
    assert "(B, 16)" in op and "parameters: 272" in op and "MACs: 256" in op
    assert "dense(" in op  # the catalog signature
    block = hover_text(client, uri, BLOCKS, "Unit(width)")
    assert "model Unit(w, scale = 2)" in block and "parameters:" in block
    assert "MACs:" in block
    value = hover_text(client, uri, BLOCKS, "h = dense(h", 0)
    assert "shape `(B, 16)`" in value  # what this statement binds, not the previous h
    earlier = hover_text(client, uri, BLOCKS, "dense(h, w)", 6)
    assert "shape `(B, 32)`" in earlier  # the argument reads the previous binding
    constant = hover_text(client, uri, BLOCKS, "width = 16", 0)
    assert "width = 16" in constant
    model = hover_text(client, uri, BLOCKS, "model Net", 7)
    assert "input `(B, 16)` → output `(B, 4)`" in model


GRAPH = """model Res(w):
    def forward(x):
        h = dense(x, w).relu
        return add(x, h)

model Plain:
    def forward(x):
        x -> dense(8)

model G:
    input_shape = (8,)
    input_dtype = float16
    def forward(x):
        h = dense(x, 16)
        h = dense(h, 8)
        r = repeat(h, Res(8), 2)
        y = Plain(r)
        a, b = chunk(y, 2, dim=-1)
        z = add(a, b)
        return concat(z, x)
"""


def test_hover_on_later_references_and_block_calls(client: LspClient) -> None:
    uri = "file:///graph.aur"
    assert client.open(uri, GRAPH) == []

    def value(needle: str, offset: int = 0) -> str:
        text = hover_text(client, uri, GRAPH, needle, offset)
        assert text.startswith("**"), text  # the value, not the call around it
        return text

    # a use shows the value it reads: h in dense(h, 8) is the first h, (B, 16)
    assert "shape `(B, 16)` · dtype float16" in value("h, 8)")
    assert "**h** (value in `G`)" in value("h, 8)")
    assert "shape `(B, 8)`" in value("h, Res")  # the second h
    assert "shape `(B, 8)` · dtype float16" in value("r)")
    assert "shape `(B, 4)`" in value("a, b)") and "shape `(B, 4)`" in value("b)")
    assert "shape `(B, 4)`" in value("z, x)") and "shape `(B, 8)`" in value("x)")
    assert "shape `(B, 8)`" in value("y, 2")
    # inside a block: the value in the block's graph for its call
    assert "**h** (value in `Res`)" in value("h)") and "shape `(B, 8)`" in value("h)")
    # block calls: graph form, chain form and inside repeat show the call's facts
    plain = hover_text(client, uri, GRAPH, "Plain(r)", 1)
    assert plain.startswith("**Plain** → `(B, 8)` float16") and "parameters: 72" in plain
    assert "model Plain" in plain
    repeated = hover_text(client, uri, GRAPH, "Res(8), 2", 1)
    assert repeated.startswith("**Res** → `(B, 8)`") and "repeated 2 times" in repeated
    assert "model Res(w)" in repeated and "parameters: 144" in repeated
    # the operation's own name still shows the operation
    add = hover_text(client, uri, GRAPH, "add(a", 1)
    assert add.startswith("**add** → `(B, 4)`") and "elementwise" in add


def test_inlay_hints_and_toggle(client: LspClient) -> None:
    uri = "file:///inlay.aur"
    client.open(uri, BLOCKS)
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}
    hints = client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole})
    labels = {(h["position"]["line"], h["label"]) for h in hints}
    line, _ = pos(BLOCKS, "dense(width).relu")
    assert (line, ": (B, 16)") in labels
    line, _ = pos(BLOCKS, "-> dense(4)")
    assert (line, ": (B, 4)") in labels
    line, _ = pos(BLOCKS, "h = dense(x, w * scale)")
    assert (line, ": (B, 32)") in labels  # a graph statement inside the block
    client.notify(
        "workspace/didChangeConfiguration", {"settings": {"aurane": {"inlayHints": False}}}
    )
    off = client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole})
    assert off == []
    client.notify(
        "workspace/didChangeConfiguration", {"settings": {"aurane": {"inlayHints": True}}}
    )


def test_definition_references_rename(client: LspClient) -> None:
    uri = "file:///nav.aur"
    client.open(uri, BLOCKS)

    def definition(needle: str, offset: int = 1) -> tuple[int, int]:
        (loc,) = client.request("textDocument/definition", at(client, uri, BLOCKS, needle, offset))
        return loc["range"]["start"]["line"], loc["range"]["start"]["character"]

    assert definition("Unit(width)") == pos(BLOCKS, "Unit(w,")  # block
    assert definition("(width,)") == pos(BLOCKS, "width = 16")  # constant
    assert definition("Net on") == pos(BLOCKS, "Net:")  # model
    assert definition("data:\n    epochs", 0) == pos(BLOCKS, "data:")  # dataset, from train
    # graph values: the latest binding before the use
    assert definition("h, w)") == pos(BLOCKS, "h = dense(x")
    assert definition("add(x, h)", 7) == pos(BLOCKS, "h = dense(h")
    refs = client.request(
        "textDocument/references",
        {**at(client, uri, BLOCKS, "width = 16", 1), "context": {"includeDeclaration": True}},
    )
    assert len(refs) == 4  # the definition and three uses

    def references(needle: str, offset: int = 1, declaration: bool = True) -> int:
        found = client.request(
            "textDocument/references",
            {
                **at(client, uri, BLOCKS, needle, offset),
                "context": {"includeDeclaration": declaration},
            },
        )
        return len(found)

    assert references("add(x, h)", 7) == 4  # a graph value: both bindings and both uses
    assert references("add(x, h)", 7, declaration=False) == 2
    assert references("data:", 0) == 2 and references("Net on", 0) == 2  # dataset, model
    assert references("Unit(w,", 0, declaration=False) == 1  # a block: its one call
    values = client.request(
        "textDocument/rename", {**at(client, uri, BLOCKS, "add(x, h)", 7), "newName": "y"}
    )
    assert len(values["changes"][uri]) == 4
    edit = client.request(
        "textDocument/rename", {**at(client, uri, BLOCKS, "Unit(width)", 1), "newName": "Cell"}
    )
    changes = edit["changes"][uri]
    assert len(changes) == 2 and {c["newText"] for c in changes} == {"Cell"}
    prepared = client.request("textDocument/prepareRename", at(client, uri, BLOCKS, "Net on", 1))
    assert prepared["start"] == dict(zip(("line", "character"), pos(BLOCKS, "Net on"), strict=True))


def test_completion(client: LspClient) -> None:
    text = BLOCKS.replace("          -> dense(4)\n", "          -> dense(4)\n          -> \n")
    text = text.replace("    optimizer = adam(lr=0.01)\n", "    optimizer = adam(lr=0.01)\n    \n")
    uri = "file:///complete.aur"
    client.open(uri, text)

    def labels(needle: str, offset: int) -> dict[str, dict[str, Any]]:
        result = client.request("textDocument/completion", at(client, uri, text, needle, offset))
        return {item["label"]: item for item in result["items"]}

    ops = labels("-> \n", 3)
    assert "conv2d" in ops and "Unit" in ops and "dense" in ops
    assert ops["dense"]["insertTextFormat"] == 2 and "${1:" in ops["dense"]["insertText"]
    assert "kernel=" in ops["conv2d"]["detail"]  # arguments with defaults
    assert "Unit(${1:w})" in ops["Unit"]["insertText"]
    fields = labels("lr=0.01)\n    \n", 13)
    assert {"epochs", "loss", "optimizer", "scheduler", "metrics"} <= set(fields)
    losses = labels("loss = ", 7)
    assert {"mse", "cross_entropy"} <= set(losses)
    optimizers = labels("optimizer = ", 12)
    assert "adam" in optimizers and "lr=" in optimizers["adam"]["detail"]
    sources = labels("from aurane", 5)
    assert "aurane.data.SyntheticImages" in sources
    block_fields = labels("    input_shape", 4)
    assert "input_shape" in block_fields
    top = labels("model Net", 0)
    assert "model" in top and "dataset" in top


def test_completion_values_of_metrics_and_schedulers(client: LspClient) -> None:
    text = BLOCKS + "    metrics = [\n    scheduler = \n"
    uri = "file:///complete2.aur"
    client.open(uri, text)
    for needle, offset, expected in (
        ("metrics = [", 11, "accuracy"),
        ("scheduler = ", 12, "step_lr"),
    ):
        result = client.request("textDocument/completion", at(client, uri, text, needle, offset))
        assert expected in {item["label"] for item in result["items"]}


def test_signature_help(client: LspClient) -> None:
    uri = "file:///sig.aur"
    client.open(uri, BLOCKS)
    help_ = client.request("textDocument/signatureHelp", at(client, uri, BLOCKS, "w * scale", 0))
    (signature,) = help_["signatures"]
    assert signature["label"].startswith("dense(input, ")
    assert help_["activeParameter"] == 1
    help_ = client.request("textDocument/signatureHelp", at(client, uri, BLOCKS, "lr=0.01", 3))
    assert help_["signatures"][0]["label"].startswith("adam(")
    assert signature_active_name(help_) == "lr"
    help_ = client.request("textDocument/signatureHelp", at(client, uri, BLOCKS, "Unit(width)", 5))
    assert help_["signatures"][0]["label"] == "Unit(w, scale=…)"


def signature_active_name(help_: dict[str, Any]) -> str:
    params = help_["signatures"][0]["parameters"]
    label: str = params[help_["activeParameter"]]["label"]
    return label.split("=")[0]


def test_symbols_and_folding(client: LspClient) -> None:
    uri = "file:///outline.aur"
    client.open(uri, BLOCKS)
    symbols = client.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    names = [s["name"] for s in symbols]
    assert names == ["width", "Unit", "Net", "data", "train Net on data"]
    unit = symbols[1]
    assert unit["detail"] == "block" and [c["name"] for c in unit["children"]] == ["h", "h"]
    folds = client.request("textDocument/foldingRange", {"textDocument": {"uri": uri}})
    assert {"startLine": 3, "endLine": 7, "kind": "region"} in folds


def test_formatting(client: LspClient) -> None:
    uri = "file:///format.aur"
    messy = "width   =   16\nmodel Net:\n    input_shape = (width,)\n    def forward(x):\n        x -> dense(  4 )\n"
    client.open(uri, messy)
    edits = client.request(
        "textDocument/formatting",
        {"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": True}},
    )
    (edit,) = edits
    assert "width = 16" in edit["newText"] and "dense(4)" in edit["newText"]


def test_lint_fixes(client: LspClient) -> None:
    uri = "file:///lint.aur"
    text = "width = 16   \nmodel Net\n    input_shape = (width,)\n    def forward(x):\n        x -> dense(4)\n"
    found = client.open(uri, text)
    assert "W001" in {d["code"] for d in found}
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}},
            "context": {"diagnostics": []},
        },
    )
    titles = [a["title"] for a in actions]
    trailing = next(a for a in actions if a["title"].startswith("Fix W001"))
    (edit,) = trailing["edit"]["changes"][uri]
    assert edit["newText"] == "" and edit["range"]["start"] == {"line": 0, "character": 10}
    colon = next(a for a in actions if a["title"].startswith("Fix W002"))
    (edit,) = colon["edit"]["changes"][uri]
    assert edit["newText"] == ":" and edit["range"]["start"] == {"line": 1, "character": 9}
    assert "Fix all auto-fixable lint problems" in titles
    fix_all = next(a for a in actions if a["kind"] == "source.fixAll")
    assert fix_all["edit"]["changes"][uri][0]["newText"].startswith("width = 16\nmodel Net:\n")


def test_garbage_never_crashes(client: LspClient) -> None:
    uri = "file:///garbage.aur"
    text = 'model (\n  -> ]]\ndataset :\n\x00 é 𝔸 "unterminated\n'
    client.open(uri, text)
    for line in range(5):
        for character in (0, 3, 40):
            position = client.at(uri, line, character)
            client.request("textDocument/hover", position)
            client.request("textDocument/completion", position)
            client.request("textDocument/signatureHelp", position)
            client.request("textDocument/definition", position)
    client.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    client.request(
        "textDocument/formatting",
        {"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": True}},
    )


LOOPS = """model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        for i, c in enumerate([8, 16, 32]):
            h = conv2d(x, c, kernel=3, stride=2, padding=1) as layer{i + 1}
            x = relu(h)
        return x
"""


def test_hover_inside_an_unrolled_loop_shows_every_iteration(client: LspClient) -> None:
    uri = "file:///loops.aur"
    assert client.open(uri, LOOPS) == []
    op = hover_text(client, uri, LOOPS, "conv2d(x, c")
    assert "per iteration:" in op
    assert "- iteration i = 0, c = 8: `(B, 8, 8, 8)`" in op
    assert "- iteration i = 2, c = 32: `(B, 32, 2, 2)`" in op
    value = hover_text(client, uri, LOOPS, "h = conv2d")
    assert "iteration i = 1, c = 16: shape `(B, 16, 4, 4)`" in value


SEVERAL = """seq = dim(1, 64)

model Pair:
    def forward(x, mask):
        h = dense(x, 8)
        return h, mask

model Net:
    input_shape = {ids: (seq,), mask: (seq,)}
    input_dtype = {ids: int64, mask: bool}
    def forward(ids, mask=ones):
        e = embedding(ids, 50, 16)
        h, m = Pair(e, mask)
        return h, m
"""


def test_hover_and_inlay_hints_with_several_inputs_and_outputs(client: LspClient) -> None:
    """Issue 23: each input of the forward hovers as its own value; a model lists its
    inputs and outputs; a block call with several outputs hints every output's shape."""
    uri = "file:///several.aur"
    assert client.open(uri, SEVERAL) == []
    mask = hover_text(client, uri, SEVERAL, "mask=ones", 0)
    assert "shape `(B, seq)` · dtype bool" in mask
    ids = hover_text(client, uri, SEVERAL, "ids, mask=ones", 0)
    assert "dtype int64" in ids
    model = hover_text(client, uri, SEVERAL, "model Net", 7)
    assert "inputs ids `(B, seq)`, mask `(B, seq)` → outputs h `(B, seq, 8)`" in model
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}
    hints = client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole})
    labels = {(h["position"]["line"], h["label"]) for h in hints}
    line, _ = pos(SEVERAL, "h, m = Pair")
    assert (line, ": (B, seq, 8), (B, seq)") in labels
