"""Golden files: the rendered diagnostics of each tests/golden/diagnostics/*.aur program.

Set AURANE_UPDATE_GOLDEN=1 to rewrite the expected .txt files after an intended change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aurane.compiler import run_front_end
from aurane.render import render_all
from tests.conftest import UPDATE_GOLDEN

GOLDEN = Path(__file__).parent / "golden" / "diagnostics"


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.aur")), ids=lambda p: p.stem)
def test_rendered_diagnostics(path: Path) -> None:
    text = path.read_text()
    result = run_front_end(text, path.name)
    rendered = render_all(result.diagnostics, result.source, colour=False) + "\n"
    expected = path.with_suffix(".txt")
    if UPDATE_GOLDEN or not expected.exists():
        expected.write_text(rendered)
    assert rendered == expected.read_text()
