"""Every ``--json`` command prints JSON on stdout for every outcome (issue 11 item 2):
a missing file, a folder, invalid UTF-8, a file with errors, and success."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aurane.cli.main import main

GOOD = "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return dense(x, 2)\n"
ERRORS = "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return densee(x, 2)\n"

COMMANDS = [
    ["check", "--json"],
    ["ir", "--format", "json"],
    ["profile", "--json"],
    ["lint", "--json"],
]


def inputs(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "good.aur").write_text(GOOD, encoding="utf-8")
    (tmp_path / "errors.aur").write_text(ERRORS, encoding="utf-8")
    (tmp_path / "latin1.aur").write_bytes(b"model N\xe9t:\n")
    (tmp_path / "folder.aur").mkdir()
    return {
        "good": tmp_path / "good.aur",
        "errors": tmp_path / "errors.aur",
        "invalid_utf8": tmp_path / "latin1.aur",
        "missing": tmp_path / "missing.aur",
        "folder": tmp_path / "folder.aur",
    }


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("case", ["good", "errors", "invalid_utf8", "missing", "folder"])
def test_json_for_every_outcome(
    command: list[str], case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs(tmp_path)[case]
    if command[0] == "lint" and case == "folder":
        pytest.skip("lint takes folders: an empty one is a success")
    status = main([*command, str(path)])
    out = capsys.readouterr().out
    payload = json.loads(out)  # exactly one JSON document, whatever happened
    # lint reports lint findings only; a program with compile errors is check's business
    ok = case == "good" or (command[0] == "lint" and case == "errors")
    assert status == (0 if ok else 1), out
    if case == "good":
        return
    if command[0] == "lint":
        if case == "invalid_utf8":
            assert payload["files"][0]["diagnostics"][0]["code"] == "P015"
        return
    assert payload["ok"] is False
    codes = [d["code"] for d in payload["diagnostics"]]
    if case == "errors":
        assert codes == ["S001"]
    elif case == "invalid_utf8":
        assert codes == ["P015"]
    else:
        assert codes == [] and "cannot read" in payload["error"]


def test_ir_json_on_a_missing_file_is_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's example: it printed text."""
    status = main(["ir", "--format", "json", str(tmp_path / "nope.aur")])
    captured = capsys.readouterr()
    assert status == 1
    assert json.loads(captured.out)["error"].endswith("no such file")


def test_ir_json_with_an_unknown_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = inputs(tmp_path)["good"]
    assert main(["ir", "--format", "json", "--model", "Other", str(path)]) == 1
    assert "no model 'Other'" in json.loads(capsys.readouterr().out)["error"]


def test_text_mode_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", str(tmp_path / "nope.aur")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: cannot read")
