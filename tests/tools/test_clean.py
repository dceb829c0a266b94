"""``aurane clean``: only caches and bytecode go; sentinels everywhere else survive."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aurane.tools.clean import clean, plan


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    (outside / "__pycache__").mkdir(parents=True)
    files = {
        "source": root / "net.aur",
        "generated": root / "net.py",
        "nested_source": root / "pkg" / "model.aur",
        "cache_record": root / ".aurane_cache" / "ab" / ("ab" + "0" * 62 + ".json"),
        "pycache": root / "pkg" / "__pycache__" / "model.cpython-311.pyc",
        "stray_pyc": root / "old.pyc",
        "venv_pyc": root / ".venv" / "lib" / "__pycache__" / "x.cpython-311.pyc",
        "venv_cfg": root / ".venv" / "pyvenv.cfg",
        "git_pyc": root / ".git" / "hooks" / "__pycache__" / "h.pyc",
        "git_head": root / ".git" / "HEAD",
        "hg": root / ".hg" / "__pycache__" / "a.pyc",
        "svn": root / ".svn" / "b.pyc",
        "outside_pyc": outside / "__pycache__" / "keep.pyc",
        "outside_file": outside / "keep.aur",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("sentinel")
    os.symlink(outside, root / "linked")  # a symlink to a folder outside the tree
    os.symlink(outside / "__pycache__", root / "__pycache__link")
    os.symlink(outside / "__pycache__" / "keep.pyc", root / "link.pyc")
    (root / "pkg" / "__pycache__link").symlink_to(outside)
    files["root"] = root
    return files


GONE = {"cache_record", "pycache", "stray_pyc"}


def test_only_caches_and_bytecode_are_removed(tree: dict[str, Path]) -> None:
    report = clean(tree["root"])
    assert not report.errors
    for name, path in tree.items():
        if name in GONE:
            assert not path.exists(), name
        else:
            assert path.exists(), name
    assert not (tree["root"] / ".aurane_cache").exists()
    assert not (tree["root"] / "pkg" / "__pycache__").exists()
    for link in ("linked", "__pycache__link", "link.pyc"):
        assert (tree["root"] / link).is_symlink()  # links are neither followed nor removed


def test_dry_run_removes_nothing(tree: dict[str, Path]) -> None:
    report = clean(tree["root"], dry_run=True)
    assert {p.resolve() for p in report.removed} == {
        tree["root"].resolve() / ".aurane_cache",
        tree["root"].resolve() / "pkg" / "__pycache__",
        tree["stray_pyc"].resolve(),
    }
    assert all(path.exists() for path in tree.values())


def test_plan_is_stable(tree: dict[str, Path]) -> None:
    assert plan(tree["root"]) == plan(tree["root"])


def test_refuses_a_venv_or_symlink_root(tree: dict[str, Path]) -> None:
    assert clean(tree["root"] / ".venv").errors
    assert clean(tree["root"] / "linked").errors
    assert tree["outside_pyc"].exists()
