"""The shared conformance corpus: valid programs check clean with the expected IR facts;
invalid ones fail at the expected stage, line, column, with the expected words."""

from __future__ import annotations

import pytest

from aurane.compiler import run_front_end
from aurane.ir.verify import verify
from tests.conftest import CORPUS, corpus_dir, corpus_expected, corpus_files


@pytest.mark.parametrize("name", corpus_files("valid") or ["<absent>"])
def test_valid_program_checks_clean(name: str) -> None:
    path = corpus_dir("valid") / name
    result = run_front_end(path.read_text(), str(path))
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors == [], errors
    for graph in result.graphs.values():
        verify(graph)


@pytest.mark.parametrize("name", corpus_files("valid") or ["<absent>"])
def test_valid_program_ir_matches_expected(name: str) -> None:
    expected = corpus_expected("valid").get(name)
    if expected is None:
        pytest.skip(f"{name} has no expected facts")
    path = CORPUS / "valid" / name
    graphs = run_front_end(path.read_text(), str(path)).graphs
    for model, facts in expected.items():
        graph = graphs[model]
        assert list(graph.input_value.sample_shape) == facts["input_shape"]
        assert list(graph.output_value.sample_shape) == facts["output_shape"]
        assert graph.parameters == facts["parameters"], model


@pytest.mark.parametrize("name", corpus_files("invalid") or ["<absent>"])
def test_invalid_program_is_located(name: str) -> None:
    expected = corpus_expected("invalid")[name]
    path = CORPUS / "invalid" / name
    result = run_front_end(path.read_text(), str(path))
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors, f"{name} was accepted"
    first = errors[0]
    assert first.stage == expected["stage"], (first, expected)
    assert first.span is not None
    assert first.span.line in expected["line"], (first, expected)
    assert first.span.column in expected["column"], (first, expected)
    text = first.message.lower()
    assert any(word.lower() in text for word in expected["contains"]), (first.message, expected)
