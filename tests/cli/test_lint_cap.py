"""``aurane lint`` caps its output like ``check`` (issue 12): at most 100 diagnostics a
file are shown, a note gives the total, and the exit status still counts them all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aurane.cli.main import main
from aurane.syntax.parser import MAX_DIAGNOSTICS


def test_lint_shows_the_first_diagnostics_and_says_how_many_there_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "noisy.aur"
    source.write_text("x = 1   \n" * (MAX_DIAGNOSTICS + 30))  # one W001 a line
    assert main(["lint", str(source)]) == 0  # warnings only
    err = capsys.readouterr().err
    assert err.count("W001") == MAX_DIAGNOSTICS
    total = int(err.split(f"showing the first {MAX_DIAGNOSTICS} of ")[1].split()[0])
    assert total >= MAX_DIAGNOSTICS + 30  # every line's W001, and rules about the program
    assert main(["lint", str(source), "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)["files"][0]
    assert len(entry["diagnostics"]) == MAX_DIAGNOSTICS
    assert entry["truncated"] == {"shown": MAX_DIAGNOSTICS, "total": total}


def test_an_error_past_the_cap_still_fails_the_lint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "late.aur"
    source.write_text("x = 1   \n" * (MAX_DIAGNOSTICS + 5) + "model M(\n")
    assert main(["lint", str(source)]) == 1
    assert "E001" not in capsys.readouterr().err  # not shown, but counted


def test_a_short_report_has_no_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "quiet.aur"
    source.write_text("x = 1   \n")
    main(["lint", str(source)])
    assert "too many" not in capsys.readouterr().err
