"""``aurane.tools.sweep``: the constants override (no re-parsing), the grid, budgets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aurane.analysis.profile import profile
from aurane.frontend import run_front_end
from aurane.syntax import ast
from aurane.tools.sweep import (
    Figures,
    Row,
    Sweep,
    SweepError,
    grid,
    largest_under,
    parse_assignment,
    parse_limit,
    with_constants,
)

GPT2 = Path(__file__).resolve().parents[2] / "examples" / "zoo" / "gpt2.aur"
WIDTHS = [192, 288, 384, 480, 576, 672, 768, 864, 960, 1056]
DEPTHS = list(range(1, 11))


def test_hundred_configurations_parse_once_and_analyse_each_once() -> None:
    """The work behind `aurane sweep` over 100 GPT-2 configurations (bench/sweep_speed.py
    times it): one parse, one analysis (resolve, check, lower) per configuration."""
    sweep = Sweep(GPT2.read_text(encoding="utf-8"), str(GPT2))
    configurations = grid([("n_embd", WIDTHS), ("n_layer", DEPTHS)])
    assert len(configurations) == 100
    found = [sweep.evaluate(values, "GPT") for values in configurations]
    assert (sweep.parses, sweep.analyses) == (1, 100)
    assert all(row.ok for row in found)
    by_values = {row.values: row for row in found}
    for width, depth in ((192, 1), (768, 12 if 12 in DEPTHS else 10), (1056, 10)):
        text = GPT2.read_text(encoding="utf-8")
        text = re.sub(r"^n_embd = .*$", f"n_embd = {width}", text, flags=re.M)
        text = re.sub(r"^n_layer = .*$", f"n_layer = {depth}", text, flags=re.M)
        fresh = profile(run_front_end(text, "fresh.aur").graphs["GPT"])
        figures = by_values[(("n_embd", width), ("n_layer", depth))].figures
        assert figures is not None
        assert (figures.parameters, figures.macs) == (fresh.parameters, fresh.macs)
    # deeper and wider cost more of everything
    rows = {(dict(r.values)["n_embd"], dict(r.values)["n_layer"]): r.figures for r in found}
    assert rows[(768, 10)].memory > rows[(768, 2)].memory > 0  # type: ignore[union-attr,operator]
    assert rows[(1056, 5)].parameters > rows[(192, 5)].parameters  # type: ignore[union-attr]


def test_with_constants_replaces_values_in_place() -> None:
    sweep = Sweep(GPT2.read_text(encoding="utf-8"), str(GPT2))
    assert sweep.program is not None
    changed = with_constants(sweep.program, {"n_layer": 3, "n_head": 6})
    before = {s.name: s for s in sweep.program.statements if isinstance(s, ast.Constant)}
    after = {s.name: s for s in changed.statements if isinstance(s, ast.Constant)}
    assert isinstance(after["n_layer"].value, ast.Number) and after["n_layer"].value.value == 3
    assert after["n_layer"].value.span == before["n_layer"].value.span
    assert after["vocab"] == before["vocab"]
    assert len(changed.statements) == len(sweep.program.statements)


def test_unknown_constant_suggests_the_right_one() -> None:
    sweep = Sweep(GPT2.read_text(encoding="utf-8"), str(GPT2))
    with pytest.raises(SweepError, match="no top-level constant 'n_layers'.*n_layer"):
        sweep.check_names(["n_layers"])


def test_a_configuration_that_does_not_check_keeps_its_diagnostics() -> None:
    sweep = Sweep(GPT2.read_text(encoding="utf-8"), str(GPT2))
    row = sweep.evaluate((("n_head", 5),), "GPT")
    assert not row.ok and row.diagnostics[0].code == "T006"
    # the first head reshape of the attention (gpt2.aur's line, found rather than counted)
    lines = GPT2.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "reshape(q, block" in text)
    assert row.diagnostics[0].span is not None and row.diagnostics[0].span.line == line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("width=256,512,1024", ("width", [256, 512, 1024])),
        ("lr=0.1,1e-3", ("lr", [0.1, 0.001])),
        ("flag=true,false", ("flag", [True, False])),
        ("n=1_000,1000", ("n", [1000])),
    ],
)
def test_parse_assignment(text: str, expected: tuple[str, list[object]]) -> None:
    assert parse_assignment(text) == expected


@pytest.mark.parametrize("text", ["width", "=3", "w=", "w=1,,2", "w=nan", "w=inf", "w=abc"])
def test_parse_assignment_refuses(text: str) -> None:
    with pytest.raises(SweepError):
        parse_assignment(text)


def test_parse_limit() -> None:
    assert parse_limit("params=125M") == ("params", 125_000_000)
    assert parse_limit("macs=4.1G") == ("macs", 4_100_000_000)
    assert parse_limit("memory=24GiB") == ("memory", 24 * 2**30)
    assert parse_limit("flops=1000") == ("flops", 1000)
    for bad in ("params", "speed=3", "params=-1", "memory=3G", "params=lots"):
        with pytest.raises(SweepError):
            parse_limit(bad)


def test_largest_under_every_budget() -> None:
    def row(width: int, params: int, memory: int | None) -> Row:
        return Row((("w", width),), Figures(params, 10 * params, memory))

    rows = [row(1, 100, 50), row(2, 200, 400), row(3, 300, 90), Row((("w", 4),), None)]
    assert largest_under(rows, [("params", 250)]) == rows[1]
    assert largest_under(rows, [("params", 350), ("memory", 100)]) == rows[2]
    assert largest_under(rows, [("params", 50)]) is None
    assert largest_under([row(5, 10, None)], [("memory", 10)]) is None  # no job: no memory
