"""One run per checkpoint folder: ``.aurane-run.lock``, an OS lock that names its holder.

How it holds (K-LOCK):
- The lock file is created whole: the pid and host are written to a private temporary file,
  which is ``flock``-ed and then hard-linked to ``.aurane-run.lock``. ``os.link`` fails if
  the name exists, so exactly one of two runs starting in the same instant creates it, and
  nobody can read the file before it names its holder.
- The ``flock`` decides who holds the folder, not the file's text: the kernel drops it when
  the holder exits, even by SIGKILL, so a lock file whose ``flock`` is free is stale. The
  next run takes it over (with a message naming the gone pid) by renaming a new, already
  locked file over it; one that finds the ``flock`` taken is refused, naming the holder.
- After winning an ``flock`` on an existing file a run checks that the name still points
  to that file (a run ending, or another one taking over, may have replaced it) and starts
  again if not.
- Forked children (DataLoader workers) share the parent's open file, and with it the
  ``flock``; they close their copy right after the fork, so an orphaned worker of a killed
  run never keeps the folder locked.
- Without ``flock`` (Windows, or a file system that refuses it) the pid decides: the lock
  is stale when its pid no longer runs on this host.

A lock held by this very process (a notebook re-running a job after an interrupt) is reused.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from typing import Any

from aurane.runtime.faults import fault_point, pid_runs

fcntl: Any
try:
    import fcntl
except ImportError:  # Windows: no flock; the pid in the lock file decides
    fcntl = None

LOCK_NAME = ".aurane-run.lock"
LOCK_TRIES = 50  # a lock that keeps changing under us this often is refused
TAKE_OVER_WAITS = 40  # 20 ms apart: a held lock whose pid is gone is being taken over
# realpath of a lock this process holds -> (descriptor of the locked file, pid that opened it)
_HELD_LOCKS: dict[str, tuple[int, int]] = {}
_FORK_HOOK: list[bool] = []  # set once the after-fork clean-up is registered


class RunLockedError(RuntimeError):
    """Another live run writes the same checkpoint folder."""


def acquire_lock(folder: str) -> str:
    """Take ``folder``/.aurane-run.lock for this process, or raise RunLockedError."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, LOCK_NAME)
    key = os.path.realpath(path)
    held = _HELD_LOCKS.get(key)
    if held is not None and held[1] == os.getpid():
        return path
    _register_fork_hook()
    me = f"{os.getpid()} {socket.gethostname()}\n"
    for attempt in range(LOCK_TRIES):
        descriptor, temporary = _new_lock_file(path, me)
        taken = False
        try:
            fault_point("lock:created")
            try:
                os.link(temporary, path)
                taken = True
            except FileExistsError:
                taken = _take_over(path, temporary, attempt)  # renames temporary over path
            except FileNotFoundError:  # our temporary file was removed as a leftover
                pass
            if taken:
                _HELD_LOCKS[key] = (descriptor, os.getpid())
                fault_point("lock:linked")
        except BaseException:  # an error or an interrupt: hold nothing, leave nothing
            if taken:
                release_lock(path)
            else:
                os.close(descriptor)
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
            raise
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)  # its other name (or, after a take-over, no name at all)
        if taken:
            _remove_dead_lock_files(folder)
            return path
        os.close(descriptor)
    raise RunLockedError(f"cannot lock checkpoint folder {folder!r}: another run keeps taking it")


def release_lock(path: str) -> None:
    """Remove the lock if this process holds it (the name first, then the OS lock)."""
    held = _HELD_LOCKS.pop(os.path.realpath(path), None)
    if held is None or held[1] != os.getpid():
        return
    descriptor = held[0]
    try:
        with contextlib.suppress(FileNotFoundError):
            if _same_file(descriptor, path):
                os.remove(path)
    finally:
        os.close(descriptor)


def _remove_dead_lock_files(folder: str) -> None:
    """The temporary lock files of runs killed while taking the lock (their pid is gone)."""
    for name in os.listdir(folder):
        pid = name.removeprefix(LOCK_NAME + ".").split(".")[0]
        if name.startswith(LOCK_NAME + ".") and pid.isdigit() and not pid_runs(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, name))


def _new_lock_file(path: str, me: str) -> tuple[int, str]:
    """A private file already naming this process and already locked: (descriptor, name)."""
    temporary = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    descriptor = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
    try:
        os.write(descriptor, me.encode())
        _try_flock(descriptor)  # nobody else can know this file yet: it cannot be taken
    except BaseException:
        os.close(descriptor)
        os.remove(temporary)
        raise
    return descriptor, temporary


def _take_over(path: str, temporary: str, attempt: int) -> bool:
    """``path`` exists: refuse if its holder lives, else put ``temporary`` (locked, naming
    this process) in its place. False: it changed meanwhile, look again."""
    try:
        existing = os.open(path, os.O_RDONLY)  # flock needs no write access
    except FileNotFoundError:  # released meanwhile
        return False
    try:
        owner = _read_owner(existing)
        locked = _try_flock(existing)
        if locked is None:  # no OS locks here: the pid decides
            locked = owner is None or not _lock_alive(owner)
        if not locked:
            if owner is not None and not _lock_alive(owner) and attempt < TAKE_OVER_WAITS:
                time.sleep(0.02)  # its holder is gone: another run is taking it over now
                return False
            pid, host = owner.split() if owner is not None else ("unknown", "unknown")
            holder = f"pid {pid} on {host}"
            if owner is not None and not _lock_alive(owner):
                holder += " has ended, but a process it started still holds the lock"
            raise RunLockedError(
                f"checkpoint folder {os.path.dirname(path)!r} is in use by another run "
                f"({holder}); wait for it to finish or choose another checkpoint_dir"
            )
        if not _same_file(existing, path):  # replaced while we locked it: look again
            return False
        fault_point("lock:stale")
        try:
            os.replace(temporary, path)  # our locked file, whole, over the stale one
        except FileNotFoundError:  # our temporary file was removed as a leftover
            return False
    finally:
        os.close(existing)
    gone = "pid {} on {}".format(*owner.split()) if owner is not None else "no pid written"
    print(f"note: took over the lock {path!r} of a run that is gone ({gone})", file=sys.stderr)
    return True


def _try_flock(descriptor: int) -> bool | None:
    """True: locked; False: another process holds it; None: no OS locks here."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # a file system without flock
        return None
    return True


def _same_file(descriptor: int, path: str) -> bool:
    """Whether ``path`` still names the open file ``descriptor``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _read_owner(descriptor: int) -> str | None:
    """The ``"pid host"`` a lock file names, or None if it names none."""
    os.lseek(descriptor, 0, os.SEEK_SET)
    parts = os.read(descriptor, 4096).decode("utf-8", "replace").split()
    return f"{parts[0]} {parts[1]}" if len(parts) == 2 and parts[0].isdigit() else None


def _lock_alive(owner: str) -> bool:
    pid, host = owner.split()
    # another machine's process cannot be checked from here
    return host != socket.gethostname() or pid_runs(int(pid))


def _register_fork_hook() -> None:
    if not _FORK_HOOK and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forget_locks_after_fork)
        _FORK_HOOK.append(True)


def _forget_locks_after_fork() -> None:
    """In a forked child: close the copies of the parent's locked files (the parent keeps
    its lock; only the last copy's close would release it)."""
    for descriptor, _ in _HELD_LOCKS.values():
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _HELD_LOCKS.clear()
