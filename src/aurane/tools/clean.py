"""``aurane clean``: remove compiler caches and Python bytecode below a folder, nothing else.

Removed: folders named ``.aurane_cache`` or ``__pycache__`` and stray ``*.pyc`` / ``*.pyo``
files. Never entered: symlinks (neither followed nor removed, so a link's target is safe),
version-control folders and virtual environments (any folder holding ``pyvenv.cfg``). Sources,
generated ``.py`` files and everything else stay.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from aurane.records import field, record

CACHE_DIRS = frozenset({".aurane_cache", "__pycache__"})
BYTECODE_SUFFIXES = (".pyc", ".pyo")
NEVER_ENTER = frozenset({".git", ".hg", ".svn"})


@record
class CleanReport:
    removed: list[Path] = field(default_factory=list)  # or, on a dry run, would be removed
    errors: list[str] = field(default_factory=list)


def plan(root: Path) -> list[Path]:
    """What ``clean`` removes under ``root``, top-down, in a stable order."""
    found: list[Path] = []
    for here, dirs, files in os.walk(root, followlinks=False):
        base = Path(here)
        keep: list[str] = []
        for name in sorted(dirs):
            path = base / name
            if _is_link(path) or name in NEVER_ENTER or (path / "pyvenv.cfg").exists():
                continue
            if name in CACHE_DIRS:
                found.append(path)
            else:
                keep.append(name)
        dirs[:] = keep  # os.walk descends only into these
        found += [
            base / name
            for name in sorted(files)
            if name.endswith(BYTECODE_SUFFIXES) and _is_regular(base / name)
        ]
    return found


def clean(root: Path, *, dry_run: bool = False) -> CleanReport:
    report = CleanReport()
    if _is_link(root) or (root / "pyvenv.cfg").exists():
        report.errors.append(f"refusing to clean {root}: a symlink or a virtual environment")
        return report
    for path in plan(root):
        if dry_run:
            report.removed.append(path)
            continue
        try:
            if _is_link(path):  # replaced by a link since planning: leave it
                continue
            if path.is_dir():
                shutil.rmtree(path)  # unlinks symlinks inside, never follows them
            else:
                path.unlink()
            report.removed.append(path)
        except OSError as error:
            report.errors.append(f"cannot remove {path}: {error.strerror or error}")
    return report


def _is_link(path: Path) -> bool:
    # not Path.is_symlink: that raises on errors other than "missing" (e.g. EACCES)
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
