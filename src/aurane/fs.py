"""Files in and out: bounded reading of regular files, and the output rule (RELIABILITY
K-OUT) with atomic publication (temp file in the same folder, write, fsync, os.replace).

Reading (:func:`read_limited`) opens without blocking and checks the kind before the first
byte: a FIFO, device, socket or directory is refused, never waited on, and at most
``limit + 1`` bytes are read, so ``/dev/zero`` or a growing file cannot exhaust memory.

Writing (:func:`output_target`, :func:`atomic_write`): output goes only to a regular file or
a new path. A device, FIFO, socket or directory is refused (``os.replace`` would swap the
node itself out: as root, ``-o /dev/null`` turned the device into a file); a read-only file
is refused; a symbolic link is followed only to a regular file (or a new name) inside the
link's own folder, and then the target is rewritten and the link kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

# Opening a FIFO for reading would wait for a writer; O_NONBLOCK returns at once (then the
# kind check refuses it). O_NOCTTY: a terminal device never becomes our controlling tty.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_CHUNK = 1 << 16


def kind_of(mode: int) -> str:
    """What a ``st_mode`` names, for messages: "a directory", "a FIFO", ..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


class NotAFile(OSError):
    """A path naming a directory, FIFO, device or socket where a regular file is needed."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        self.kind = kind_of(mode)
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        super().__init__(code, f"it is {self.kind}, not a regular file", os.fspath(path))


class TooLarge(OSError):
    """A file over the size limit; ``size`` is exact when ``exact``, else a lower bound."""

    def __init__(self, path: str | os.PathLike[str], size: int, limit: int, exact: bool) -> None:
        self.size, self.limit, self.exact = size, limit, exact
        shown = f"{size} bytes" if exact else f"more than {limit} bytes"
        super().__init__(errno.EFBIG, f"it is {shown}; the limit is {limit}", os.fspath(path))


class RefusedOutput(OSError):
    """An output path the output rule (K-OUT) does not write: see the module docstring."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(errno.EPERM, reason, os.fspath(path))


def read_limited(path: str | os.PathLike[str], limit: int, *, truncate: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises :class:`NotAFile` for anything but a regular file (without waiting on it),
    :class:`TooLarge` past ``limit`` (from its size, or after reading ``limit + 1`` bytes
    when the size understates the content; with ``truncate``, the first ``limit`` bytes are
    returned instead), and ``OSError`` as ``open`` does.
    """
    before = os.stat(path)  # a device is refused before it is even opened
    if not stat.S_ISREG(before.st_mode):
        raise NotAFile(path, before.st_mode)
    fd = os.open(path, _READ_FLAGS)
    try:
        opened = os.fstat(fd)  # what was opened, whatever the path names now
        if not stat.S_ISREG(opened.st_mode):
            raise NotAFile(path, opened.st_mode)
        if opened.st_size > limit and not truncate:
            raise TooLarge(path, opened.st_size, limit, exact=True)
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if total > limit:
            if truncate:
                return data[:limit]
            raise TooLarge(path, total, limit, exact=False)
        return data
    finally:
        os.close(fd)


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def output_target(path: str | os.PathLike[str]) -> Path:
    """Where writing ``path`` publishes under the output rule: ``path`` itself (a regular,
    writable file or a new name), or a symbolic link's target inside the link's folder.

    Raises :class:`NotAFile` (directory, FIFO, device, socket), :class:`RefusedOutput` (a
    read-only file, a link leading out of its folder or to a special file).
    """
    named = Path(path)
    try:
        info = os.lstat(named)
    except FileNotFoundError:
        return named  # a new path (a missing folder fails when the file is created)
    target = named
    if stat.S_ISLNK(info.st_mode):
        folder = os.path.realpath(os.path.dirname(os.path.abspath(named)))
        resolved = os.path.realpath(named)
        if not _inside(resolved, folder):
            raise RefusedOutput(
                named,
                f"it is a symbolic link to '{resolved}', outside its folder; name the file itself",
            )
        target = Path(resolved)
        try:
            info = os.stat(target)
        except FileNotFoundError:
            return target  # a dangling link inside its folder: the file is created
    if not stat.S_ISREG(info.st_mode):
        if target is named:
            raise NotAFile(named, info.st_mode)
        raise RefusedOutput(named, f"it is a symbolic link to {kind_of(info.st_mode)}")
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise RefusedOutput(named, "it is read-only")
    return target


def atomic_write(
    path: str | os.PathLike[str], data: str | bytes, *, keep_mode: bool = True
) -> None:
    """Publish ``data`` at ``path`` under the output rule (:func:`output_target`): the
    complete new content or, on any failure, the old file untouched."""
    target = output_target(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if keep_mode and target.exists():
        mode = target.stat().st_mode & 0o7777
    else:
        # mkstemp creates 0600; a new file gets the permissions open() would give it
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    import tempfile  # imported on first write: `aurane check` reads but never writes

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


def publish_file(temporary: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """Move the finished file ``temporary`` to ``path`` under the output rule; returns where
    it went (a link's target)."""
    target = output_target(path)
    os.replace(temporary, target)
    return target
