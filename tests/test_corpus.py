"""The conformance corpus: valid programs check clean with the expected IR facts;
invalid ones fail at the expected stage, line, column, with the expected words.

The valid programs are read from the project's copy (tests/corpus/valid), which must equal
``../shared/corpus/valid`` when that is present; the invalid ones only from ``../shared``.
"""

from __future__ import annotations

import pytest

from aurane.frontend import run_front_end
from aurane.ir.verify import verify
from tests.conftest import (
    CORPUS,
    VALID,
    corpus_dir,
    corpus_expected,
    corpus_files,
    corpus_params,
    requires_shared,
)


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
    path = VALID / name
    graphs = run_front_end(path.read_text(), str(path)).graphs
    for model, facts in expected.items():
        graph = graphs[model]
        assert list(graph.input_value.sample_shape) == facts["input_shape"]
        assert list(graph.output_value.sample_shape) == facts["output_shape"]
        assert graph.parameters == facts["parameters"], model


@pytest.mark.parametrize("name", corpus_params("invalid"))
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


@requires_shared
def test_project_copy_of_the_valid_corpus_equals_the_shared_one() -> None:
    shared = CORPUS / "valid"
    names = sorted(p.name for p in shared.iterdir() if p.is_file())
    assert sorted(p.name for p in VALID.iterdir() if p.is_file()) == names, (
        "tests/corpus/valid differs from ../shared/corpus/valid: cp ../shared/corpus/valid/* "
        "tests/corpus/valid/ (tests/corpus/README.md)"
    )
    for name in names:
        assert (VALID / name).read_bytes() == (shared / name).read_bytes(), (
            f"tests/corpus/valid/{name} is stale: copy it from ../shared/corpus/valid"
        )
