"""Budgets (issue 13 item 5): ``budget params <= 25M, ... at batch 32`` checked statically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aurane.analysis.profile import profile
from aurane.frontend import run_front_end
from aurane.syntax.parser import parse_program
from aurane.syntax.tokens import amount_value
from aurane.tools.format import format_text

NET = """\
model Net:
    budget params <= {params}, macs <= 4.1G, activations <= 2GiB at batch 32
    input_shape = (3, 16, 16)
    def forward(x):
        x -> conv2d(8, kernel=3).relu
          -> flatten()
          -> dense(64).relu
          -> dense(10)
"""


def _errors(text: str) -> list:  # type: ignore[type-arg]
    return [d for d in run_front_end(text, "b.aur").diagnostics if d.is_error]


def test_amounts() -> None:
    assert amount_value("25M") == 25_000_000 and amount_value("4.1G") == 4_100_000_000
    assert amount_value("2GiB") == 2 * 2**30 and amount_value("1_000K") == 1_000_000
    assert amount_value("512B") == 512 and amount_value("42") is None


def test_parse_and_format_round_trip() -> None:
    program, diagnostics = parse_program(NET.format(params="25M"), "b.aur")
    assert not diagnostics and program is not None
    (budget,) = program.models[0].budgets
    assert [(lim.metric, lim.amount) for lim in budget.limits] == [
        ("params", 25_000_000),
        ("macs", 4_100_000_000),
        ("activations", 2 * 2**30),
    ]
    assert budget.at == (("batch", 32),)
    messy = NET.format(params="25M").replace("params <= 25M,", "params<=25M ,")
    assert format_text(messy) == NET.format(params="25M")


def test_within_budget_is_silent() -> None:
    assert _errors(NET.format(params="25M")) == []


def test_exceeded_budget_is_located_with_the_largest_layers() -> None:
    text = NET.format(params="10K")
    (error,) = _errors(text)
    graph = run_front_end(NET.format(params="25M"), "b.aur").graphs["Net"]
    actual = profile(graph).parameters
    assert error.code == "T115" and f"{actual:,} parameters > 10K" in error.message
    assert "largest: dense1" in error.message  # flatten -> dense(64) holds most weights
    line = text.splitlines()[1]
    assert (error.span.line, error.span.column) == (2, line.index("params") + 1)
    assert error.span.end_column == line.index(",") + 1
    assert error.labels and error.labels[0].span.line == 7  # the dense layer


def test_activations_at_the_batch_size() -> None:
    text = NET.format(params="25M").replace("activations <= 2GiB", "activations <= 512KiB")
    (error,) = _errors(text)
    graph = run_front_end(NET.format(params="25M"), "b.aur").graphs["Net"]
    assert "activations budget at batch 32" in error.message
    assert f"{profile(graph, 32).activation_bytes:,}" not in error.message  # shown in MiB
    assert "KiB > 512KiB" in error.message


SYMBOLIC = """\
seq = dim(1, {high})

model Tok:
    budget macs <= 2M{at}
    input_shape = (seq,)
    input_dtype = int64
    def forward(tokens):
        tokens -> embedding(100, 16) -> dense(64).relu -> dense(100)
"""


def test_symbolic_budget_at_the_declared_maximum_or_at() -> None:
    # MACs per token: 16*64 + 64*100 = 7424; 2M allows up to 269 tokens
    assert _errors(SYMBOLIC.format(high=256, at="")) == []
    (error,) = _errors(SYMBOLIC.format(high=512, at=""))
    assert error.code == "T115" and "at seq = 512" in error.message
    assert f"{7424 * 512:,} MACs" in error.message
    assert _errors(SYMBOLIC.format(high=512, at=" at seq 256")) == []
    (unbounded,) = _errors(SYMBOLIC.format(high="None", at=""))
    assert unbounded.code == "S112" and "no maximum" in unbounded.message


def test_malformed_budgets() -> None:
    bad_metric = NET.format(params="25M").replace("macs <= 4.1G", "memory <= 4G")
    assert [d.code for d in _errors(bad_metric)] == ["S112"]
    bad_amount = NET.format(params="lots")
    assert [d.code for d in _errors(bad_amount)] == ["S112"]
    unit_elsewhere = NET.format(params="25M").replace("dense(64)", "dense(64K)")
    assert [d.code for d in _errors(unit_elsewhere)] == ["P008"]


def test_profile_shows_budget_against_actual(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aurane.cli.main import main

    path = tmp_path / "b.aur"
    path.write_text(NET.format(params="10K"), encoding="utf-8")
    assert main(["profile", str(path)]) == 0  # an exceeded budget is shown, not fatal here
    out = capsys.readouterr().out
    assert "budget params:" in out and "EXCEEDED" in out and "budget macs:" in out
    assert main(["profile", str(path), "--json"]) == 0
    (model,) = json.loads(capsys.readouterr().out)["models"]
    params = next(b for b in model["budgets"] if b["metric"] == "params")
    assert params["limit"] == 10_000 and not params["ok"] and params["largest"]
    assert main(["check", str(path)]) == 1  # check and compile refuse it
    assert "T115" in capsys.readouterr().err
