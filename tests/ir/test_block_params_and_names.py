"""Issue 10 items 1 and 2: located diagnostics for block parameters, layer names and tie=,
the classes generated per call, and the IR JSON of named layers and block arguments."""

from __future__ import annotations

import pytest

from tests.backends.torch.util import generate
from tests.helpers import front, only_error, where

BLOCK = """
model Block(width, stride: int = 1):
    def forward(x):
        x -> dense(width * stride) as fc
"""


def _net(body: str, extra: str = "") -> str:
    return (
        BLOCK
        + extra
        + "\nmodel Net:\n    input_shape = (8,)\n    def forward(x):\n"
        + "".join(f"        {line}\n" for line in body.splitlines())
    )


@pytest.mark.parametrize(
    ("body", "code", "at", "words"),
    [
        ("x -> Block(4, strid=2)", "S041", (8, 23), "did you mean 'stride'"),
        ("x -> Block(stride=2)", "S042", (8, 14), "needs argument 'width'"),
        ("x -> Block(4, 2, 3)", "S043", (8, 26), "takes 2 arguments"),
        ("x -> Block(4, width=3)", "S043", (8, 23), "given twice"),
        ("x -> Block(4, stride=1.5)", "T040", (8, 30), "must be an integer"),
        ("x -> dense(4) as fc -> dense(4) as fc", "S044", (8, 44), "used twice"),
        ("x -> dense(4) as class", "S045", (8, 26), "keyword"),
        ("x -> dense(4) as _hidden", "S045", (8, 26), "private"),
        ("x -> dense(4) as parameters", "S045", (8, 26), "attribute of nn.Module"),
        ("x -> dense(4) as a -> dense(4) as a.b", "S045", (8, 43), "cannot also hold"),
        ("h = add(x, x) as total\nreturn h", "S046", (8, 26), "no layer object"),
        ("x -> dense(4, tie=nowhere)", "S047", (8, 27), "no layer of this model"),
        ("x -> layer_norm(tie=fc) as fc", "S047", (8, 25), "tie= is for dense"),
        ("x -> dense(4) as fc -> dense(5, tie=fc)", "T041", (8, 45), "cannot tie"),
    ],
)
def test_located_errors(body: str, code: str, at: tuple[int, int], words: str) -> None:
    error = only_error(_net(body))
    assert error.code == code, error
    assert where(error) == at, error
    assert words in error.message + (error.hint or ""), error


@pytest.mark.parametrize(
    ("header", "words"),
    [
        ("model Bad(width, width):", "declared twice"),
        ("model Bad(width: tensor):", "unknown parameter type"),
        ("model Bad(width=1, depth):", "without a default follows"),
    ],
)
def test_bad_parameter_lists_are_s040(header: str, words: str) -> None:
    source = f"{header}\n    def forward(x):\n        x -> dense(4)\n"
    found = [d for d in front(source).diagnostics if d.is_error]
    assert [d.code for d in found] == ["S040"], found
    assert words in found[0].message


def test_error_inside_a_block_names_the_call_site() -> None:
    source = """
    model Block(width, groups=1):
        def forward(x):
            x -> conv2d(width, kernel=3, groups=groups)

    model Net:
        input_shape = (8, 6, 6)
        def forward(x):
            x -> Block(6, groups=4)
    """
    error = only_error(source)
    assert error.code == "T007" and where(error) == (3, 38)  # at groups=groups in the body
    assert any("in the call Block(6, groups=4)" in label.message for label in error.labels)


def test_same_arguments_share_a_class_and_different_ones_share_it_too() -> None:
    _, _, code = generate(_net("x -> Block(4) as a -> Block(4, stride=2) as b -> Block(8) as c"))
    assert code.count("class Block(nn.Module)") == 1
    assert "def __init__(self, in_features, width, stride=1):" in code
    assert "self.fc = nn.Linear(in_features, width * stride)" in code
    assert "self.b = Block(4, 4, stride=2)" in code


def test_ir_json_carries_layer_names_and_block_arguments() -> None:
    fe = front(_net("x -> Block(4, stride=2) as layer1.0 -> dense(3) as head"))
    nodes = fe.graphs["Net"].to_json()["nodes"]
    block, head = nodes[0], nodes[1]
    assert block["layer"] == "layer1.0" and head["layer"] == "head"
    assert block["block"] == "Block"
    assert block["args"]["arguments"] == {"width": 4, "stride": 2}
    inner = fe.graphs["Net"].nodes[0].subgraph
    assert inner is not None
    dense = inner.to_json()["nodes"][0]
    assert dense["layer"] == "fc" and dense["args"]["features"] == 8
