"""One run per checkpoint folder: a lock file holding the owner's pid and host.

A lock left by a killed run is stale: its pid no longer runs on this host, so the next run
takes it over. A lock held by this very process (a notebook re-running a job after an
error) is reused.
"""

from __future__ import annotations

import contextlib
import os
import socket

LOCK_NAME = ".aurane-run.lock"


class RunLockedError(RuntimeError):
    """Another live run writes the same checkpoint folder."""


def acquire_lock(folder: str) -> str:
    """Create ``folder``/.aurane-run.lock for this process, or refuse if a live run holds it."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, LOCK_NAME)
    me = f"{os.getpid()} {socket.gethostname()}\n"
    for _ in range(3):
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _lock_owner(path)
            if owner is not None and owner != me and _lock_alive(owner):
                pid, host = owner.split()
                raise RunLockedError(
                    f"checkpoint folder {folder!r} is in use by another run (pid {pid} on "
                    f"{host}); wait for it to finish, choose another checkpoint_dir, or delete "
                    f"{path!r} if that run is gone"
                ) from None
            # stale (its process is gone), unreadable, or ours: take it over
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
            continue
        with os.fdopen(descriptor, "w") as handle:
            handle.write(me)
        return path
    raise RunLockedError(f"cannot lock checkpoint folder {folder!r}: another run keeps taking it")


def release_lock(path: str) -> None:
    """Remove the lock if this process still holds it."""
    if _lock_owner(path) == f"{os.getpid()} {socket.gethostname()}\n":
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def _lock_owner(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    parts = text.split()
    return f"{parts[0]} {parts[1]}\n" if len(parts) == 2 and parts[0].isdigit() else None


def _lock_alive(owner: str) -> bool:
    pid, host = owner.split()
    if host != socket.gethostname():
        return True  # another machine's process cannot be checked from here
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by another user
    return True
