"""``aurane watch SRC OUT``: recompile on every settled change of SRC's content.

A polling watcher on SRC's path, so every way an editor saves works the same: in-place
writes, temp file + rename (atomic replace), rename-to-backup + write, delete + create. Each
tick stats the path; a changed stat (or, every ``rehash`` seconds, nothing at all, since some
file systems keep coarse timestamps) makes it read and hash the content. A build starts once
the content has kept one hash for ``debounce`` seconds, and only when that hash differs from
the last one built: a ``touch`` builds nothing, a burst of saves builds its final content
once. Only SRC is read, so writing OUT (or anything else in the folder) never triggers a build.
A failed build keeps the previous OUT and prints the diagnostics.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from aurane.records import record

if TYPE_CHECKING:
    from aurane.diagnostics import Diagnostic

Signature = tuple[int, int, int, int] | None
# prints a failed build's diagnostics: (diagnostics, source text, file name); the command
# line passes its own printer (cli.common.print_diagnostics)
Report = Callable[[Sequence["Diagnostic"], str, str], None]


@record
class WatchConfig:
    source: Path
    out: Path
    analyze: bool = False
    validate: bool = False
    debounce: float = 0.075
    poll: float = 0.02
    rehash: float = 0.5


class Watcher:
    def __init__(self, config: WatchConfig, report: Report, stdout: TextIO | None = None) -> None:
        self.config = config
        self.report = report
        self.stdout = stdout or sys.stdout
        self.builds = 0
        self._signature: Signature = None
        self._seen: str | None = None  # hash of the content last read (None: missing)
        self._attempted: str | None = None  # hash of the content last compiled
        self._changed_at: float | None = None
        self._hashed_at = 0.0

    def say(self, message: str) -> None:
        print(f"aurane watch: {message}", file=self.stdout, flush=True)

    # ------------------------------------------------------------ loop

    def run(self, stop: threading.Event | None = None) -> int:
        """Watch until ``stop`` is set or Ctrl+C; returns the exit status (0)."""
        self.say(f"watching {self.config.source} -> {self.config.out} (Ctrl+C to stop)")
        try:
            self._start()
            while stop is None or not stop.is_set():
                time.sleep(self.config.poll)
                self.tick(time.monotonic())
        except KeyboardInterrupt:
            pass
        self.say(f"stopped after {self.builds} build(s)")
        return 0

    def _start(self) -> None:
        content = self._read()
        self._seen = _digest(content)
        self._hashed_at = time.monotonic()
        if content is None:
            self.say(f"{self.config.source} does not exist yet; waiting for it")
            return
        self._build(content)

    def tick(self, now: float) -> None:
        signature = _signature(self.config.source)
        if signature != self._signature or now - self._hashed_at >= self.config.rehash:
            self._signature = signature
            self._hashed_at = now
            digest = _digest(self._read())
            if digest != self._seen:
                self._seen, self._changed_at = digest, now
                return
        if self._changed_at is not None and now - self._changed_at >= self.config.debounce:
            self._changed_at = None
            self._settled()

    def _settled(self) -> None:
        content = self._read()
        if _digest(content) != self._seen:  # changed again since the last tick: wait more
            self._seen, self._changed_at = _digest(content), time.monotonic()
            return
        if content is None:
            self.say(f"{self.config.source} was deleted; keeping {self.config.out}")
            return
        if self._seen != self._attempted:
            self._build(content)

    def _read(self) -> bytes | None:
        from aurane.fs import read_limited
        from aurane.syntax.tokens import MAX_FILE_BYTES

        try:  # a FIFO or device is no content; past the limit, the first limit + 1 bytes
            return read_limited(self.config.source, MAX_FILE_BYTES + 1, truncate=True)
        except OSError:  # missing, a folder, unreadable: no content
            return None

    # ------------------------------------------------------------ build

    def _build(self, content: bytes) -> None:
        from aurane.compile import compile_source
        from aurane.frontend import decode_source, oversized_source
        from aurane.fs import atomic_write
        from aurane.stages import CompilationError
        from aurane.syntax.tokens import MAX_FILE_BYTES

        self._attempted = _digest(content)
        self.builds += 1
        started = time.perf_counter()
        name = str(self.config.source)
        # past the limit, _read stopped one byte after it
        too_large = len(content) > MAX_FILE_BYTES
        text, bad = (
            (None, oversized_source(len(content), exact=False))
            if too_large
            else decode_source(content, name)
        )
        try:
            if text is None:
                assert bad is not None
                raise CompilationError([bad], name)
            output = compile_source(
                text,
                analyze=self.config.analyze,
                validate=self.config.validate,
                filename=name,
            )
        except CompilationError as error:
            self._report(error, text or "")
            self.say(f"build {self.builds} failed; kept the previous {self.config.out}")
            return
        try:
            atomic_write(self.config.out, output)
        except OSError as error:  # e.g. OUT's folder vanished: report, keep watching
            reason = error.strerror or error
            self.say(f"build {self.builds}: cannot write {self.config.out}: {reason}")
            return
        elapsed = (time.perf_counter() - started) * 1000
        self.say(f"build {self.builds}: compiled {name} -> {self.config.out} ({elapsed:.0f} ms)")

    def _report(self, error: Exception, text: str) -> None:
        diagnostics = getattr(error, "diagnostics", [])
        self.report(diagnostics, text, str(self.config.source))
        sys.stderr.flush()


def _signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _digest(content: bytes | None) -> str | None:
    return None if content is None else hashlib.sha256(content).hexdigest()


def watch(config: WatchConfig, report: Report) -> int:
    return Watcher(config, report).run()
