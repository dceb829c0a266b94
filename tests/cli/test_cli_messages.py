"""CLI regressions found while reviewing against SPEC sections 4 and 11."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

BLOCK_ONLY = """model Block:
    def forward(x):
        x -> dense(4)
model Net:
    input_shape = (8,)
    def forward(x):
        x -> Block()
"""


@pytest.mark.parametrize("command", ["ir", "profile", "visualize"])
def test_model_option_naming_a_block_without_input_shape_is_located(
    tmp_path: Path, command: str
) -> None:
    src = tmp_path / "b.aur"
    src.write_text(BLOCK_ONLY)
    out = run_cli(command, str(src), "--model", "Block")
    assert out.returncode == 1
    assert f"{src}:1:7: error[S014]:" in out.stderr
    assert "needs input_shape" in out.stderr and "help:" in out.stderr


def test_os_errors_read_in_lowercase(tmp_path: Path) -> None:
    src = tmp_path / "g.aur"
    src.write_text(BLOCK_ONLY)
    out = run_cli("compile", str(src), "-o", str(tmp_path / "missing" / "out.py"))
    assert out.returncode == 1
    assert ": no such file or directory" in out.stderr, out.stderr


def test_inspect_summary_uses_singular_counts(tmp_path: Path) -> None:
    src = tmp_path / "g.aur"
    src.write_text(
        "model Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(2)\n"
    )
    out = run_cli("inspect", str(src))
    assert out.returncode == 0
    assert "model Net (1 field, 1 forward statement)" in out.stdout, out.stdout
