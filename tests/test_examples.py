"""Every shipped ``.aur`` (examples/, recursively, and the ``aurane init`` starter) is canonical
under the formatter, lint-clean and checks without errors, through the library functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from aurane.frontend import run_front_end
from aurane.tools.format import discover, format_source
from aurane.tools.init import PROGRAM, PROGRAM_NAME
from aurane.tools.lint import lint_source
from tests.conftest import EXAMPLES, REPO

SHIPPED: dict[str, str] = {
    path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8")
    for path in discover(EXAMPLES)
}
SHIPPED[f"aurane init: {PROGRAM_NAME}"] = PROGRAM


def test_examples_are_found() -> None:
    assert "examples/quickstart.aur" in SHIPPED


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_program_is_canonical_and_lint_clean(name: str) -> None:
    text = SHIPPED[name]
    result = format_source(text, name)
    assert result.error is None and not result.diagnostics, (result.error, result.diagnostics)
    assert result.output == text, f"{name} is not canonical: run `aurane format {name}`"
    problems = [f"{d.code} {d.span}: {d.message}" for d in lint_source(text, name)]
    assert problems == [], f"`aurane lint {name}` reports problems"


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_program_checks_clean(name: str) -> None:
    errors = [d for d in run_front_end(SHIPPED[name], name).diagnostics if d.is_error]
    assert errors == []


def test_discover_walks_subfolders(tmp_path: Path) -> None:
    # examples/zoo/*.aur (and any later folder) is covered without editing this test
    (tmp_path / "zoo").mkdir()
    (tmp_path / "zoo" / "net.aur").write_text("x = 1\n")
    assert [p.relative_to(tmp_path).as_posix() for p in discover(tmp_path)] == ["zoo/net.aur"]


TOP_LEVEL = sorted(path.name for path in EXAMPLES.glob("*.aur"))


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_example_compiles_to_python(name: str) -> None:
    """examples/*.aur (the zoo has its own tests) compile to valid Python; the training
    examples run under `aurane run` in tests/training/test_feed.py (the quickstart in
    tests/training/test_runtime.py)."""
    from aurane.compile import compile_source

    code = compile_source((EXAMPLES / name).read_text(encoding="utf-8"), filename=name)
    compile(code, name.replace(".aur", ".py"), "exec")
    assert 'if __name__ == "__main__":' in code


def test_the_issue_23_examples_are_shipped() -> None:
    assert {"text_classifier_masked.aur", "denoiser_timestep.aur"} <= set(TOP_LEVEL)
