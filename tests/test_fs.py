"""Atomic publication keeps an existing file's mode and gives new files the umask's mode."""

from __future__ import annotations

import os
from pathlib import Path

from aurane.fs import atomic_write


def test_new_file_follows_umask_and_existing_mode_is_kept(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        target = tmp_path / "new.py"
        atomic_write(target, "x = 1\n")
        assert target.stat().st_mode & 0o777 == 0o644
        target.chmod(0o600)
        atomic_write(target, "x = 2\n")
        assert target.stat().st_mode & 0o777 == 0o600 and target.read_text() == "x = 2\n"
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir()] == ["new.py"]  # no temp file left
