"""Tensor operations of issue 10: broadcasting, axis ops, multi-output binding, parameter.

Catalog samples run through tests/ops/test_catalog.py and tests/backends/torch/test_ops.py
(twins in tests/ops/twins_tensor.py); this file covers error paths, the grouped
``a, b = x.chunk(...)`` statement, learned parameters against the batch, and formatting.
"""

from __future__ import annotations

from typing import Any

import pytest

from aurane.codes import CODES
from aurane.ops import CATALOG, argument_errors, context
from aurane.ops.spec import OpError
from tests.helpers import front, only_error, where

ERRORS = [
    # (op, args, shapes, code, blame, words)
    ("multiply", {}, [(64, 8, 8), (32, 1, 1)], "T060", None, "dim=1 has sizes 64 and 32"),
    ("subtract", {}, [(8,), (8, 1)], "T002", None, "equal rank"),
    ("divide", {}, [(4,)], "S005", None, "second tensor or a constant"),
    ("multiply", {"constant": 2.0}, [(4,), (4,)], "S004", "constant", "not both"),
    ("add", {"broadcast": True}, [(3, 4), (2, 1)], "T060", None, "cannot broadcast"),
    ("add", {}, [(3, 4), (1, 4)], "T001", None, "equal shapes"),
    ("matmul", {}, [(3, 4), (5, 6)], "T001", None, "inner sizes"),
    ("matmul", {}, [(2, 3, 4), (4, 6)], "T002", None, "equal rank"),
    ("matmul", {}, [(2, 3, 4), (3, 4, 6)], "T060", None, "dim=1"),
    ("permute", {"dims": (1, 2)}, [(3, 4, 5)], "T004", "dims", "2 dims"),
    ("permute", {"dims": (1, 1)}, [(3, 4)], "T004", "dims", "twice"),
    ("permute", {"dims": (0, 1)}, [(3, 4)], "T004", "dims", "batch"),
    ("transpose", {"dim0": 0, "dim1": 1}, [(3, 4)], "T004", "dim0", "batch"),
    ("transpose", {"dim0": 1, "dim1": 3}, [(3, 4)], "T004", "dim1", "out of range"),
    ("unsqueeze", {"dim": 0}, [(3,)], "T004", "dim", "batch"),
    ("squeeze", {"dim": 1}, [(3, 1)], "T062", "dim", "not 1"),
    ("select", {"dim": 1, "index": 5}, [(5, 8)], "T063", "index", "out of range"),
    ("slice", {"dim": 1, "start": 4, "end": 2}, [(5, 8)], "T005", "start", "nothing"),
    ("expand", {"sizes": (4, 8)}, [(2, 8)], "T060", "sizes", "cannot stretch"),
    ("expand", {"sizes": (4,)}, [(1, 8)], "T002", "sizes", "sizes for a sample"),
    ("split", {"size": (2, 3)}, [(3, 8)], "T006", "size", "add up"),
    ("split", {"size": 4}, [(3, 8)], "T064", None, "bind each"),
    ("chunk", {"chunks": 4, "index": 0}, [(3,)], "T007", "chunks", "gives 3 pieces"),
    ("chunk", {"chunks": 2, "index": 2}, [(3, 8)], "T063", "index", "out of range"),
    ("pad", {"padding": (1, 1, 1, 1, 1, 1)}, [(3, 4)], "T004", "padding", "batch"),
    ("pad", {"padding": (3, 3), "mode": "reflect"}, [(2, 3)], "T005", "padding", "reflect"),
    ("pad", {"padding": (1, 1), "mode": "reflect"}, [(2, 3, 3)], "T002", "padding", "spatial"),
    (
        "pad",
        {"padding": (1, 1), "mode": "replicate", "value": 1.0},
        [(2, 3)],
        "S004",
        "value",
        "value",
    ),
    ("pixel_shuffle", {"upscale_factor": 2}, [(6, 3, 3)], "T007", "upscale_factor", "divisible"),
    ("pixel_shuffle", {"upscale_factor": 2}, [(8, 3)], "T002", None, "(channels, height, width)"),
    ("mean", {"dim": 0}, [(3, 4)], "T004", "dim", "batch"),
    ("sum", {"dim": (1, -2)}, [(3, 4)], "T004", "dim", "twice"),
    ("parameter", {"shape": (4,)}, [(4,)], "T065", None, "no input"),
    ("parameter", {"shape": (4,), "init": "full"}, [], "S005", "init", "needs a value"),
    ("parameter", {"shape": (4,), "value": 1.0}, [], "S004", "value", "full"),
]


@pytest.mark.parametrize(
    ("op", "args", "shapes", "code", "blame", "words"),
    [e for e in ERRORS if e[3] is not None],
    ids=[f"{e[0]}-{e[3]}-{i}" for i, e in enumerate(ERRORS) if e[3] is not None],
)
def test_error_paths(
    op: str,
    args: dict[str, Any],
    shapes: list[tuple[int, ...]],
    code: str,
    blame: str | None,
    words: str,
) -> None:
    spec = CATALOG[op]
    assert argument_errors(spec, args) == []
    with pytest.raises(OpError) as info:
        spec.infer(context(spec, args, shapes, "float32"))
    error = info.value
    assert (error.code, error.blame) == (code, blame), error.message
    assert code in CODES
    assert words in error.message and error.message == error.message.lower()
    assert error.hint


def test_mean_needs_float_but_sum_promotes_integers() -> None:
    with pytest.raises(OpError) as info:
        CATALOG["mean"].infer(context(CATALOG["mean"], {}, [(4,)], "int64"))
    assert info.value.code == "T003"
    out = CATALOG["sum"].infer(context(CATALOG["sum"], {"dim": 1}, [(4, 2)], "int32"))
    assert out.shape == (2,) and out.dtype == "int64"


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("divide", {"constant": 0}),
        ("multiply", {"constant": float("inf")}),
        ("permute", {"dims": ()}),
        ("split", {"size": 0}),
        ("split", {"size": (2, 0)}),
        ("chunk", {"chunks": 0}),
        ("slice", {"dim": 1, "step": 0}),
        ("expand", {"sizes": (0, 2)}),
        ("pad", {"padding": (1, 2, 3)}),
        ("pad", {"padding": (1, 1), "mode": "edge"}),
        ("pixel_shuffle", {"upscale_factor": 0}),
        ("mean", {"dim": (1, "a")}),
        ("parameter", {"shape": (0, 4)}),
        ("parameter", {"shape": (4,), "init": "uniform"}),
        ("parameter", {"shape": (4,), "std": 0}),
    ],
)
def test_argument_checks(op: str, args: dict[str, Any]) -> None:
    errors = argument_errors(CATALOG[op], args)
    assert len(errors) == 1 and errors[0][0] in args


torch = pytest.importorskip("torch")
from tests.backends.torch.util import generate, load  # noqa: E402  (needs torch)

SWIGLU = """
model M:
    input_shape = (5, 8)
    def forward(x):
        gate, up = chunk(dense(x, 32, bias=false), 2, dim=-1)
        h = multiply(silu(gate), up)
        q, k, v = split(dense(h, 12), (4, 4, 4), dim=-1)
        scores = softmax(multiply(matmul(q, transpose(k, -2, -1)), 0.5), dim=-1)
        return matmul(scores, v)
"""


def test_multi_output_groups_into_one_statement_and_matches_torch() -> None:
    fe, _, code = generate(SWIGLU)
    assert "gate, up = dense1.chunk(2, dim=-1)  # (batch, 5, 16) each" in code
    assert "q, k, v = dense2.split((4, 4, 4), dim=-1)  # (batch, 5, 4) each" in code
    graph = fe.graphs["M"]
    chunks = [n for n in graph.nodes if n.op == "chunk"]
    assert [n.args["index"] for n in chunks] == [0, 1]  # the IR stays single-output
    model = load(code).M()
    x = torch.randn(3, 5, 8, requires_grad=True)
    gate, up = model.dense1(x).chunk(2, dim=-1)
    h = torch.nn.functional.silu(gate) * up
    q, k, v = model.dense2(h).split(4, dim=-1)
    expected = torch.softmax(q @ k.transpose(-2, -1) * 0.5, dim=-1) @ v
    out = model(x)
    torch.testing.assert_close(out, expected)
    out.sum().backward()
    assert x.grad is not None and model.dense1.weight.grad is not None


def test_piece_count_and_non_split_are_located() -> None:
    error = only_error(
        """
        model M:
            input_shape = (6, 8)
            def forward(x):
                a, b, c = chunk(x, 2, dim=-1)
                return a
        """
    )
    assert error.code == "S065" and where(error) == (4, 9) and "3 names" in error.message
    error = only_error(
        """
        model M:
            input_shape = (6, 8)
            def forward(x):
                a, b = dense(x, 2)
                return a
        """
    )
    assert error.code == "S065" and where(error) == (4, 16)
    error = only_error(
        """
        model M:
            input_shape = (6, 8)
            def forward(x):
                a, a = chunk(x, 2)
                return a
        """
    )
    assert error.code == "P040" and where(error) == (4, 12)


def test_lone_piece_is_indexed() -> None:
    _, _, code = generate(
        """
        model M:
            input_shape = (6, 8)
            def forward(x):
                return chunk(x, 2, dim=1, index=1)
        """
    )
    assert "x.chunk(2, dim=1)[1]" in code
    assert load(code).M()(torch.randn(2, 6, 8)).shape == (2, 3, 8)


VIT = """
model M:
    input_shape = (4, 8)
    def forward(x):
        cls = parameter((1, 8))
        pos = parameter((5, 8), init="normal")
        h = add(concat(cls, x, dim=1), pos)
        gamma = parameter((5, 1), init="full", value=1e-6, batch_axis=false)
        h = multiply(gamma, h)
        return select(h, dim=1, index=0)
"""


def test_parameters_match_torchvision_layout_and_concat_against_the_batch() -> None:
    fe, _, code = generate(VIT)
    assert "self.parameter1 = nn.Parameter(torch.zeros(1, 1, 8))" in code
    assert "nn.Parameter(torch.empty(1, 5, 8).normal_(std=0.02))" in code
    assert "nn.Parameter(torch.full((5, 1), 1e-06))" in code
    assert "cls = self.parameter1.expand(x.shape[0], -1, -1)" in code
    assert "h[:, 0]" in code
    model = load(code).M()
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes == {"parameter1": (1, 1, 8), "parameter2": (1, 5, 8), "parameter3": (5, 1)}
    assert fe.graphs["M"].parameters == sum(p.numel() for p in model.parameters()) == 53
    x = torch.randn(3, 4, 8)
    out = model(x)
    h = torch.cat([model.parameter1.expand(3, -1, -1), x], dim=1) + model.parameter2
    torch.testing.assert_close(out, (model.parameter3 * h)[:, 0])
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_add_broadcast_only_when_asked() -> None:
    source = """
        model M:
            input_shape = (3, 4, 4)
            def forward(x):
                s = reshape(dense(global_avg_pool(x), 3), 3, 1, 1)
                return add(x, s{})
        """
    error = only_error(source.format(""))
    assert error.code == "T001" and "broadcast=true" in (error.hint or "")
    _, _, code = generate(source.format(", broadcast=true"))
    assert "return x + s" in code or "x + s" in code


def test_formatter_keeps_several_names() -> None:
    from aurane.tools.format import format_text

    text = "model M:\n    input_shape = (6, 8)\n    def forward(x):\n"
    text += "        a,b = chunk(x, 2)\n        return add(a, b)\n"
    assert "        a, b = chunk(x, 2)\n" in format_text(text)


def test_front_end_accepts_all_new_ops() -> None:
    fe = front(SWIGLU)
    assert not [d for d in fe.diagnostics if d.is_error]
