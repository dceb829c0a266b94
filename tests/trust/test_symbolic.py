"""Symbolic sizes (issue 13 item 5): ``seq = dim(...)`` through inference, printing, torch.

The shape formulas are checked against torch at several concrete sizes: the generated
module runs (``aurane.verify``) at seq = 5, 17 and 64 and every IR value's run-time shape
must equal its formula evaluated there, and lowering with the size bound
(``profile --at``) must give the same shapes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from aurane.frontend import run_front_end
from aurane.semantics.sizes import (
    ConcreteSizeNeeded,
    SizeExpr,
    UndecidedSize,
    bounds,
    evaluate,
    example_sizes,
    symbol,
)

PROGRAM = """\
seq = dim(5, 256)

model Conv:
    input_shape = (4, seq)
    def forward(x):
        a = conv1d(x, 8, kernel=3, stride=2, padding=1).relu
        b = conv1d(a, 8, kernel=3, padding=1)
        c = concat(a, b, dim=-1)
        d = maxpool(c, 2)
        e = global_avg_pool(d)
        return dense(e, 3)

model Seq:
    input_shape = (seq, 16)
    def forward(x):
        x -> dense(16).relu
          -> multihead_attention(heads=2, dim=16, causal=true)
          -> layer_norm()
          -> lstm(8)
          -> dense(4)

model Stem:
    input_shape = (4, seq)
    def forward(x):
        x -> conv1d(8, kernel=3, stride=2, padding=1).relu
          -> global_avg_pool()
          -> dense(3)

model Img:
    side = dim(8, 64)
    input_shape = (3, side, 2 * side)
    def forward(x):
        x -> conv2d(4, kernel=3, stride=2, padding=1).relu
          -> maxpool(2)
          -> global_avg_pool()
          -> dense(2)
"""


def _codes(text: str) -> list[str]:
    return [d.code for d in run_front_end(text, "sym.aur").diagnostics if d.is_error]


# -- the expression type ------------------------------------------------------------


def test_arithmetic_simplifies_and_prints() -> None:
    s = symbol("seq", 1, 2048)
    assert str(2 * s) == "2*seq" and str(s - 3 + 1) == "seq - 2"
    assert (s + 2 * 1 - 3) // 1 + 1 == s  # a 'same' convolution keeps the size
    assert (s * 512) // 512 == s and str((s * 512) // 4) == "128*seq"
    assert s - s == 0 and isinstance(s - s, int)  # constants come back as plain ints
    assert str((s - 3) // 2 + 1) == "(seq + 1) // 2 - 1"
    assert evaluate((s - 3) // 2 + 1, {"seq": 17}) == (17 - 3) // 2 + 1
    assert bounds(s * 2 + 1) == (3, 4097)


def test_formulas_agree_with_integer_arithmetic() -> None:
    """Random +, -, *, //, % chains evaluate exactly like Python ints at every size."""
    rng = random.Random(13)
    s = symbol("n", 1, 300)
    for _ in range(200):
        expr: object = s
        steps = []
        for _ in range(rng.randint(1, 5)):
            op, k = rng.choice("+-*/%"), rng.randint(1, 7)
            steps.append((op, k))
        for op, k in steps:
            expr = _apply(expr, op, k)
        for n in (1, 2, 3, 7, 64, 299):
            value: object = n
            for op, k in steps:
                value = _apply(value, op, k)
            assert evaluate(expr, {"n": n}) == value, (steps, n)


def _apply(value: object, op: str, k: int) -> object:
    v: int = value  # type: ignore[assignment]
    if op == "+":
        return v + k
    if op == "-":
        return v - k
    if op == "*":
        return v * k
    if op == "/":
        return v // k
    return v % k


def test_comparisons_decide_over_the_range_or_refuse() -> None:
    s = symbol("seq", 4, 100)
    assert s + 2 >= 3 and not s < 4 and s <= 100
    with pytest.raises(UndecidedSize, match="false up to seq = 9, true from 10"):
        _ = s >= 10
    with pytest.raises(ConcreteSizeNeeded):
        int(s)
    with pytest.raises(ConcreteSizeNeeded):
        _ = 8 // s
    assert isinstance(s, SizeExpr) and hash(s) == hash(symbol("seq", 4, 100))


# -- inference against torch --------------------------------------------------------


@pytest.fixture(scope="module")
def generated() -> object:
    from aurane.verify import load_generated

    return load_generated(PROGRAM, "sym.aur")


@pytest.mark.parametrize(
    ("model", "sizes"),
    [
        ("Conv", {"seq": 5}),
        ("Conv", {"seq": 17}),
        ("Conv", {"seq": 64}),
        ("Seq", {"seq": 5}),
        ("Seq", {"seq": 64}),
        ("Img", {"side": 8}),
        ("Img", {"side": 17}),
    ],
)
def test_formulas_equal_torch_shapes(generated: object, model: str, sizes: dict[str, int]) -> None:
    from aurane.verify import verify_model

    report = verify_model(generated, model, sizes)  # type: ignore[arg-type]
    assert report.ok, [d.message for d in report.diagnostics]
    assert report.values_checked == report.values_expected


def test_bound_lowering_equals_evaluated_formulas() -> None:
    from aurane.analysis.bind import bind_sizes

    front = run_front_end(PROGRAM, "sym.aur")
    assert front.resolved is not None
    graphs = list(front.graphs.values())
    for n in (5, 17, 64):
        bound, diagnostics = bind_sizes(front.resolved, graphs[:2], {"seq": n})
        assert not diagnostics
        for symbolic, concrete in zip(graphs, bound, strict=False):
            for value, other in zip(symbolic.values, concrete.values, strict=True):
                assert evaluate(value.shape, {"seq": n}) == other.shape
                assert all(isinstance(d, int | str) for d in other.shape or ())


def test_ir_text_and_json_carry_the_formula() -> None:
    front = run_front_end(PROGRAM, "sym.aur")
    graph = front.graphs["Img"]
    data = graph.to_json()
    assert data["symbols"] == {"side": {"min": 8, "max": 64}}
    shapes = {v["name"]: v["shape"] for v in data["values"]}
    assert shapes["x"] == ["batch", 3, "side", "2*side"]
    assert shapes["maxpool1"] == ["batch", 4, "(side + 1) // 2 // 2", "side // 2"]
    json.dumps(data)
    from aurane.ir.printer import graph_to_text

    assert "(batch, 4, (side + 1) // 2, side)" in graph_to_text(graph)


# -- located errors -----------------------------------------------------------------


def test_rules_needing_a_number_are_located_errors() -> None:
    front = run_front_end(
        "seq = dim(1, 64)\nmodel M:\n    input_shape = (8, seq)\n"
        "    def forward(x):\n        x -> dense(4)\n",
        "m.aur",
    )
    (error,) = [d for d in front.diagnostics if d.is_error]
    assert error.code == "T114" and "4*seq + 4" in error.message
    assert error.span is not None
    assert (error.span.line, error.span.column) == (5, 14)
    narrow = run_front_end(
        "n = dim(1, 64)\nmodel M:\n    input_shape = (2, n)\n"
        "    def forward(x):\n        x -> conv1d(2, kernel=5)\n",
        "m.aur",
    )
    (error,) = [d for d in narrow.diagnostics if d.is_error]
    assert error.code == "T114" and "true up to n = 4, false from 5" in error.message
    reshape = "seq = dim(1, 64)\nmodel M:\n    input_shape = (seq, 8)\n    def forward(x):\n"
    front = run_front_end(reshape + "        x -> reshape(4, -1)\n", "m.aur")
    assert front.graphs["M"].output_value.shape == ("batch", 4, 2 * symbol("seq", 1, 64))
    (error,) = _codes(reshape + "        x -> reshape(3, -1)\n")
    assert error == "T006"  # the count 8*seq cannot be proven divisible by 3


def test_declarations_and_misuse_are_reported() -> None:
    assert _codes("seq = dim(0, 8)\n") == ["S110"]
    assert _codes("seq = dim(9, 8)\n") == ["S110"]
    use_in_argument = (
        "seq = dim(1, 64)\nmodel M:\n    input_shape = (seq, 8)\n"
        "    def forward(x):\n        x -> positional_encoding(max_len=seq)\n"
    )
    assert _codes(use_in_argument) == ["S111"]


def test_profile_prints_formulas_and_evaluates_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aurane.cli.main import main

    source = tmp_path / "sym.aur"
    source.write_text(PROGRAM, encoding="utf-8")
    path = str(source)
    assert main(["profile", path, "--model", "Conv"]) == 0
    out = capsys.readouterr().out
    assert "(8, 2*((seq + 1) // 2))" in out and "MACs = " in out
    assert main(["profile", path, "--model", "Conv", "--at", "seq=17", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (model,) = data["models"]
    assert model["layers"][0]["output_shape"] == [8, 9]
    assert main(["profile", path, "--model", "Conv", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["models"][0]["symbols"] == {"seq": {"min": 5, "max": 256}}
    assert isinstance(data["models"][0]["flops_per_sample"], str)
    assert main(["profile", path, "--at", "seq=4"]) == 2  # outside 5..256
    assert "outside its declared range" in capsys.readouterr().err


def test_export_marks_symbolic_axes_dynamic() -> None:
    from aurane.export import _specialized, axis_names, dynamic_axes

    assert _specialized(AssertionError("Guard failed: 2 * ((x.size()[2] - 1) // 2) == 18"))

    front = run_front_end(PROGRAM, "sym.aur")
    shape = front.graphs["Img"].input_value.shape
    assert shape is not None
    axes = dynamic_axes(shape)
    assert set(axes) == {2, 3}
    assert axis_names(front.graphs["Img"]) == {2: "side", 3: "2*side"}
    assert example_sizes(shape) == {"side": 17} and example_sizes(shape, 1) == {"side": 29}


def test_pt2_export_runs_at_another_size(tmp_path: object) -> None:
    import torch

    from aurane.export import export_model
    from aurane.verify import load_generated

    gen = load_generated(PROGRAM, "sym.aur")
    path = str(tmp_path) + "/seq.pt2"
    result = export_model(gen, "Stem", "pt2", path)
    assert result.dynamic == ("batch", "seq") and result.to_json()["dynamic"] == ["batch", "seq"]
    program = torch.export.load(path).module()
    for n in (9, 40):
        assert tuple(program(torch.randn(2, 4, n)).shape) == (2, 3)


def test_diff_and_playground_take_symbolic_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aurane.cli.main import main
    from aurane.playground.analyze import analyze

    before, after = tmp_path / "a.aur", tmp_path / "b.aur"
    before.write_text(PROGRAM, encoding="utf-8")
    after.write_text(PROGRAM.replace("return dense(e, 3)", "return dense(e, 4)"), "utf-8")
    assert main(["diff", str(before), str(after), "--model", "Conv", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["models"][0]["delta"]["parameters"] == 9
    assert "compared at seq=256" in captured.err
    shapes = [row["shape"] for row in analyze(PROGRAM)["models"][0]["layers"]]
    assert "(8, (seq + 1) // 2)" in shapes
    json.dumps(analyze(PROGRAM))
