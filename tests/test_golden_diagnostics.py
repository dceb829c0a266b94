"""Golden files: the rendered diagnostics of each tests/golden/diagnostics/*.aur program.

Set AURANE_UPDATE_GOLDEN=1 to rewrite the expected .txt files after an intended change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aurane.frontend import run_front_end
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


def test_very_long_source_lines_are_shown_as_a_window_around_the_span() -> None:
    from aurane.source import Source

    text = "a = 1\nb = " + "a + " * 40 + "zz\n"
    result = run_front_end(text, "long.aur")
    rendered = render_all(result.diagnostics, Source(text, "long.aur"))
    lines = rendered.splitlines()
    assert lines[0].startswith("long.aur:2:165: error[R001]")
    source_line, caret_line = lines[2], lines[3]
    assert len(source_line) < 200 and source_line.endswith("a + zz")
    assert "..." in source_line
    # the caret still sits under 'zz'
    column = caret_line.index("^")
    assert source_line[column : column + 2] == "zz" and caret_line.count("^") == 2
