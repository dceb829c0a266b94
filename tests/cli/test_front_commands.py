"""Subprocess tests of check, ir, inspect, explain and the root command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

GOOD = """model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(4).relu -> dense(2)
"""
BAD = """model Net:
    input_shape = (8,)
    def forward(x):
        x -> densee(4)
        y = dense(z, 2)
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.aur"
    good.write_text(GOOD)
    bad = tmp_path / "bad.aur"
    bad.write_text(BAD)
    parse_bad = tmp_path / "parse.aur"
    parse_bad.write_text("model Net:\n    input_shape = (8,\n")
    return {"good": good, "bad": bad, "parse": parse_bad}


def test_version_and_help() -> None:
    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("aurane ")
    for command in ("check", "ir", "inspect", "explain"):
        res = run_cli(command, "--help")
        assert res.returncode == 0 and "usage:" in res.stdout
    assert run_cli().returncode == 2
    assert run_cli("nonsense").returncode == 2
    assert run_cli("check").returncode == 2


def test_check_ok_and_errors(files: dict[str, Path]) -> None:
    ok = run_cli("check", str(files["good"]))
    assert ok.returncode == 0, ok.stderr
    bad = run_cli("check", str(files["bad"]))
    assert bad.returncode == 1
    assert f"{files['bad']}:4:14: error[S001]: unknown operation 'densee'" in bad.stderr
    assert "        x -> densee(4)" in bad.stderr and "^^^^^^" in bad.stderr
    assert "help: did you mean 'dense'?" in bad.stderr
    assert "error[S007]" in bad.stderr  # both errors in one run
    assert "Traceback" not in bad.stderr


def test_check_json_contract(files: dict[str, Path]) -> None:
    res = run_cli("check", "--json", str(files["bad"]))
    assert res.returncode == 1
    payload = json.loads(res.stdout)
    assert payload["ok"] is False and payload["file"] == str(files["bad"])
    assert payload["passes"] == ["semantic", "types"]
    first = payload["diagnostics"][0]
    assert set(first) >= {"severity", "code", "stage", "message", "hint", "span"}
    assert first["span"] == {"line": 4, "column": 14, "end_line": 4, "end_column": 20}
    assert first["stage"] == "semantic" and first["severity"] == "error"
    good = json.loads(run_cli("check", "--json", str(files["good"])).stdout)
    assert good == {
        "ok": True,
        "file": str(files["good"]),
        "passes": ["semantic", "types"],
        "diagnostics": [],
    }
    parse = json.loads(run_cli("check", "--json", str(files["parse"])).stdout)
    assert parse["ok"] is False and parse["diagnostics"][0]["stage"] == "parse"


def test_check_pass_selection(files: dict[str, Path]) -> None:
    payload = json.loads(run_cli("check", "--semantic", "--json", str(files["good"])).stdout)
    assert payload["passes"] == ["semantic"]
    payload = json.loads(run_cli("check", "--types", "--json", str(files["good"])).stdout)
    assert payload["passes"] == ["types"]


def test_missing_file_is_clear_with_and_without_json(tmp_path: Path) -> None:
    missing = tmp_path / "nope.aur"
    res = run_cli("check", str(missing))
    assert res.returncode == 1 and "no such file" in res.stderr and "Traceback" not in res.stderr
    res = run_cli("check", "--json", str(missing))
    payload = json.loads(res.stdout)
    assert res.returncode == 1 and payload["ok"] is False and "no such file" in payload["error"]
    for command in ("ir", "inspect"):
        res = run_cli(command, str(missing))
        assert res.returncode == 1 and "no such file" in res.stderr


def test_invalid_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "latin.aur"
    path.write_bytes(b"n = 1\nname = '\xe9'\n")
    res = run_cli("check", "--json", str(path))
    payload = json.loads(res.stdout)
    assert res.returncode == 1
    assert payload["diagnostics"][0]["code"] == "P015"
    assert payload["diagnostics"][0]["span"]["line"] == 2


def test_ir_text_and_json(files: dict[str, Path]) -> None:
    text = run_cli("ir", str(files["good"]))
    assert text.returncode == 0 and "graph Net" in text.stdout
    res = run_cli("ir", "--format", "json", "--model", "Net", str(files["good"]))
    payload = json.loads(res.stdout)
    model = payload["models"][0]
    assert model["name"] == "Net" and model["input"] == "x" and model["output"] == "dense2"
    assert model["values"][-1]["shape"] == ["batch", 2]
    assert [n["op"] for n in model["nodes"]] == ["dense", "relu", "dense"]
    unknown = run_cli("ir", "--model", "Nope", str(files["good"]))
    assert unknown.returncode == 1 and "models: Net" in unknown.stderr
    assert run_cli("ir", str(files["bad"])).returncode == 1
    assert run_cli("ir", "--format", "yaml", str(files["good"])).returncode == 2


def test_inspect_modes(files: dict[str, Path], tmp_path: Path) -> None:
    summary = run_cli("inspect", str(files["good"]))
    assert summary.returncode == 0 and "model Net" in summary.stdout
    stats = run_cli("inspect", "--stats", str(files["good"]))
    assert "models" in stats.stdout and "operations" in stats.stdout
    verbose = run_cli("inspect", "--verbose", str(files["good"]))
    assert json.loads(verbose.stdout)
    export = tmp_path / "ast.json"
    res = run_cli("inspect", "--export", str(export), str(files["good"]))
    assert res.returncode == 0 and json.loads(export.read_text())
    assert run_cli("inspect", str(files["parse"])).returncode == 1


def test_explain() -> None:
    res = run_cli("explain", "T001")
    assert res.returncode == 0 and "shape" in res.stdout and "fix:" in res.stdout
    assert "example:" in res.stdout
    assert run_cli("explain", "t001").returncode == 0
    assert run_cli("explain", "X999").returncode == 2
    listing = run_cli("explain", "--list")
    assert "P001" in listing.stdout and "T010" in listing.stdout


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter that sees only the source tree."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "src")},
    )


def test_check_path_never_imports_torch(files: dict[str, Path]) -> None:
    code = (
        "import sys\nfrom aurane.cli.main import main\n"
        f"rc = main(['check', {str(files['good'])!r}])\n"
        f"rc2 = main(['ir', {str(files['good'])!r}])\n"
        "assert 'torch' not in sys.modules, 'torch imported'\nsys.exit(rc or rc2)\n"
    )
    res = run_python(code)
    assert res.returncode == 0, res.stderr


def test_internal_error_exit_code(files: dict[str, Path]) -> None:
    code = (
        "import sys\nimport aurane.frontend as c\n"
        "def boom(*a, **k):\n    raise RuntimeError('boom')\n"
        "c.run_front_end = boom\nfrom aurane.cli.main import main\n"
        f"sys.exit(main(['check', {str(files['good'])!r}]))\n"
    )
    res = run_python(code)
    assert res.returncode == 123
    assert "internal error" in res.stderr and "bug" in res.stderr


def test_help_lists_every_command_from_the_table() -> None:
    from aurane.cli.commands import COMMANDS

    res = run_cli("--help")
    assert res.returncode == 0
    listing = " ".join(res.stdout.split())  # argparse wraps long summaries
    for name, (_, summary) in COMMANDS.items():
        assert f"{name} {summary}" in listing, name
    for name in COMMANDS:  # each command's own parser loads when it is the one named
        page = run_cli(name, "--help")
        assert page.returncode == 0 and f"usage: aurane {name}" in page.stdout, name


def test_each_command_registers_its_table_summary() -> None:
    import argparse
    import importlib

    from aurane.cli.commands import COMMANDS

    for name, (module, summary) in COMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        (action,) = sub._choices_actions
        assert (action.dest, action.help) == (name, summary)


def test_check_imports_no_other_command(files: dict[str, Path]) -> None:
    code = (
        "import sys\nfrom aurane.cli.main import main\n"
        f"rc = main(['check', {str(files['good'])!r}])\n"
        "from aurane.cli.commands import COMMANDS\n"
        "loaded = [m for n, (m, _) in COMMANDS.items() if n != 'check' and m in sys.modules]\n"
        "assert not loaded, loaded\nsys.exit(rc)\n"
    )
    res = run_python(code)
    assert res.returncode == 0, res.stderr
