"""Subprocess tests of format, lint, clean, benchmark and interactive (exit codes, files)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import run_cli

MESSY = "w=4  \nmodel Net :\n  input_shape=(8,)\n  def forward( x ):\n      x->dense(w)\n"
CLEAN = "w = 4\nmodel Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(w)\n"
BROKEN = "model Net:\n    def forward(x):\n        x -> dense(4\n"


@pytest.fixture
def messy(tmp_path: Path) -> Path:
    path = tmp_path / "messy.aur"
    path.write_text(MESSY)
    path.chmod(0o640)
    return path


# ---------------------------------------------------------------- format


def test_format_check_writes_nothing_and_exits_1(messy: Path) -> None:
    result = run_cli("format", "--check", str(messy))
    assert result.returncode == 1 and "would reformat" in result.stderr
    assert messy.read_text() == MESSY


def test_format_diff_writes_nothing(messy: Path) -> None:
    result = run_cli("format", "--diff", str(messy))
    assert result.returncode == 0 and "+model Net:" in result.stdout
    assert messy.read_text() == MESSY


def test_format_rewrites_atomically_keeping_the_mode(messy: Path) -> None:
    result = run_cli("format", str(messy))
    assert result.returncode == 0, result.stderr
    assert messy.read_text() == CLEAN
    assert stat.S_IMODE(messy.stat().st_mode) == 0o640
    assert not [p for p in messy.parent.iterdir() if p.name.endswith(".tmp")]
    assert run_cli("format", "--check", str(messy)).returncode == 0


def test_format_folder_skips_venvs_and_follows_no_links(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.aur").write_text(MESSY)
    venv = tmp_path / ".venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("")
    (venv / "b.aur").write_text(MESSY)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.aur"
    outside.write_text(MESSY)
    (tmp_path / "link.aur").symlink_to(outside)
    result = run_cli("format", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "src" / "a.aur").read_text() == CLEAN
    assert (venv / "b.aur").read_text() == MESSY and outside.read_text() == MESSY


def test_format_never_modifies_an_unparseable_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.aur"
    path.write_text(BROKEN)
    before = path.stat().st_mtime_ns
    result = run_cli("format", str(path))
    assert result.returncode == 1 and "does not parse" in result.stderr
    assert path.read_text() == BROKEN and path.stat().st_mtime_ns == before


def test_format_stdin_to_stdout() -> None:
    result = run_cli("format", "-", input_text=MESSY)
    assert result.returncode == 0 and result.stdout == CLEAN


def test_format_missing_path_is_an_input_error(tmp_path: Path) -> None:
    assert run_cli("format", str(tmp_path / "nope.aur")).returncode == 1


# ---------------------------------------------------------------- lint


def test_lint_warnings_exit_0_errors_exit_1(tmp_path: Path, messy: Path) -> None:
    result = run_cli("lint", str(messy))
    assert result.returncode == 0 and "W001" in result.stderr and "help:" in result.stderr
    broken = tmp_path / "broken.aur"
    broken.write_text(BROKEN)
    assert run_cli("lint", str(broken)).returncode == 1


def test_lint_auto_fix_and_json(tmp_path: Path) -> None:
    path = tmp_path / "fix.aur"
    path.write_text(
        "w = 4   \nmodel Net\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(w)\n"
    )
    result = run_cli("lint", "--auto-fix", str(path))
    assert result.returncode == 0 and "fixed 2 problem(s)" in result.stderr
    assert path.read_text().startswith("w = 4\nmodel Net:\n")
    payload = json.loads(run_cli("lint", "--json", str(path)).stdout)
    assert payload["files"][0]["diagnostics"] == []


def test_lint_auto_fix_leaves_an_unparseable_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.aur"
    path.write_text("w = 4   \n" + BROKEN)
    result = run_cli("lint", "--auto-fix", str(path))
    assert result.returncode == 1 and "not fixed" in result.stderr
    assert path.read_text() == "w = 4   \n" + BROKEN


def test_lint_select(messy: Path) -> None:
    result = run_cli("lint", "--select", "W003", "--json", str(messy))
    assert json.loads(result.stdout)["files"][0]["diagnostics"] == []


def test_lint_auto_fix_then_select_reports_the_fixed_text(tmp_path: Path) -> None:
    path = tmp_path / "fix.aur"
    path.write_text("w = 4   \n" + CLEAN.split("\n", 1)[1])
    result = run_cli("lint", "--auto-fix", "--select", "W001", "--json", str(path))
    assert result.returncode == 0 and "fixed 1 problem(s)" in result.stderr
    assert path.read_text() == CLEAN
    assert json.loads(result.stdout)["files"][0]["diagnostics"] == []
    again = run_cli("lint", "--auto-fix", "--select", "W001", str(path))
    assert again.returncode == 0 and "fixed" not in again.stderr
    assert path.read_text() == CLEAN


def test_lint_auto_fix_nothing_fixable_leaves_the_file(messy: Path) -> None:
    messy.write_text(CLEAN + "x" * 101 + " = 1\n")
    before = messy.stat().st_mtime_ns
    result = run_cli("lint", "--auto-fix", "--select", "W003", "--json", str(messy))
    assert result.returncode == 0 and "fixed" not in result.stderr
    codes = [d["code"] for d in json.loads(result.stdout)["files"][0]["diagnostics"]]
    assert codes == ["W003"] and messy.stat().st_mtime_ns == before


def test_explain_a_lint_code() -> None:
    result = run_cli("explain", "L201")
    assert result.returncode == 0 and "bias" in result.stdout


# ---------------------------------------------------------------- clean


def test_clean_cli_dry_run_then_clean(tmp_path: Path) -> None:
    cache = tmp_path / ".aurane_cache"
    cache.mkdir()
    (cache / "x.json").write_text("{}")
    (tmp_path / "net.aur").write_text(CLEAN)
    dry = run_cli("clean", "--dry-run", str(tmp_path))
    assert dry.returncode == 0 and "would remove" in dry.stdout and cache.exists()
    done = run_cli("clean", str(tmp_path))
    assert done.returncode == 0 and not cache.exists() and (tmp_path / "net.aur").exists()
    assert run_cli("clean", str(tmp_path / "missing")).returncode == 1


# ---------------------------------------------------------------- benchmark


def test_benchmark_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "net.aur"
    path.write_text(CLEAN)
    text = run_cli("benchmark", str(path), "--iterations", "2", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    for word in ("parse", "cold_compile", "warm_compile", "mean", "median", "stdev"):
        assert word in text.stdout
    result = run_cli("benchmark", str(path), "--iterations", "3", "--json", cwd=tmp_path)
    payload = json.loads(result.stdout)
    assert set(payload) == {"parse", "cold_compile", "warm_compile"}
    assert all(len(v) == 3 and all(t > 0 for t in v) for v in payload.values())
    assert not (tmp_path / ".aurane_cache").exists()  # benchmark caches live in a temp folder


@pytest.mark.parametrize("bad", ["0", "-1", "x"])
def test_benchmark_iterations_must_be_positive(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "net.aur"
    path.write_text(CLEAN)
    assert run_cli("benchmark", str(path), "--iterations", bad).returncode == 2


def test_benchmark_iterations_error_names_a_positive_integer(tmp_path: Path) -> None:
    path = tmp_path / "net.aur"
    path.write_text(CLEAN)
    for bad in ("0", "x"):
        result = run_cli("benchmark", str(path), "--iterations", bad)
        assert result.returncode == 2 and "positive integer" in result.stderr


def test_benchmark_invalid_source(tmp_path: Path) -> None:
    path = tmp_path / "broken.aur"
    path.write_text(BROKEN)
    assert run_cli("benchmark", str(path)).returncode == 1


# ---------------------------------------------------------------- watch (refusals)


@pytest.mark.parametrize("kind", ["same", "symlink", "hard link", "dotted"])
def test_watch_refuses_an_output_that_is_the_source(tmp_path: Path, kind: str) -> None:
    source = tmp_path / "net.aur"
    source.write_text(CLEAN)
    out = tmp_path / "alias.aur"
    if kind == "same":
        out = source
    elif kind == "symlink":
        out.symlink_to(source)
    elif kind == "hard link":
        os.link(source, out)
    else:
        (tmp_path / "sub").mkdir()
        out = tmp_path / "sub" / ".." / "net.aur"
    result = run_cli("watch", str(source), str(out))
    assert result.returncode == 2 and "OUT must differ from SRC" in result.stderr
    assert source.read_text() == CLEAN


# ---------------------------------------------------------------- interactive (piped)


def test_interactive_piped_input() -> None:
    lines = [*CLEAN.splitlines(), "", ".compile", "oops(", ")", ".exit"]
    result = run_cli("interactive", input_text="\n".join(lines) + "\n")
    assert result.returncode == 0
    assert "nn.Linear" in result.stdout and "entry not added" in result.stderr


def test_every_tool_command_has_help() -> None:
    for command in ("format", "lint", "watch", "interactive", "clean", "benchmark"):
        result = run_cli(command, "--help")
        assert result.returncode == 0 and command in result.stdout
