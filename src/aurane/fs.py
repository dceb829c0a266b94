"""Atomic file publication: temp file in the same folder, write, fsync, os.replace."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write(
    path: str | os.PathLike[str], data: str | bytes, *, keep_mode: bool = True
) -> None:
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if keep_mode and target.exists():
        mode = target.stat().st_mode & 0o7777
    else:
        # mkstemp creates 0600; a new file gets the permissions open() would give it
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
