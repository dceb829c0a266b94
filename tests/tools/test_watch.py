"""``aurane watch`` in a subprocess, driven by real file events (K-WATCH)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from aurane.compile import compile_source
from tests.conftest import default_sigint, env

NET = "model Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense({n}).relu\n"
BROKEN = "model Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(\n"
DEBOUNCE = 0.075


def expected(n: int, path: Path) -> str:
    return compile_source(NET.format(n=n), filename=str(path))


class Watch:
    def __init__(self, source: Path, out: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aurane", "watch", str(source), str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env(PYTHONUNBUFFERED="1"),
            preexec_fn=default_sigint,  # SIGINT stops it, however the suite was started
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:  # a hang guard, not a speed limit
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no {text!r} within {timeout}s; output so far: {self.seen}")

    def quiet(self, seconds: float) -> list[str]:
        """Lines printed during the next ``seconds``."""
        got: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                got.append(self.lines.get(timeout=0.05))
            except queue.Empty:
                continue
        self.seen += got
        return got

    def builds(self) -> int:
        return sum(
            "build " in line and ("compiled" in line or "failed" in line) for line in self.seen
        )

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=60)  # a hang guard, not a speed limit
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def watched(tmp_path: Path):  # type: ignore[no-untyped-def]
    source, out = tmp_path / "net.aur", tmp_path / "net.py"
    source.write_text(NET.format(n=1))
    watch = Watch(source, out)
    watch.wait_for("build 1: compiled")
    yield watch, source, out
    watch.stop()


def test_events_rebuild_and_the_last_content_wins(watched) -> None:  # type: ignore[no-untyped-def]
    watch, source, out = watched
    assert out.read_text() == expected(1, source)

    source.write_text(NET.format(n=2))  # in-place modification
    watch.wait_for("build 2: compiled")
    assert out.read_text() == expected(2, source)

    tmp = source.with_name(".net.aur.swp")
    tmp.write_text(NET.format(n=3))
    os.replace(tmp, source)  # atomic replace (gedit, most editors)
    watch.wait_for("build 3: compiled")
    assert out.read_text() == expected(3, source)

    source.unlink()  # delete, then re-create
    watch.wait_for("was deleted")
    assert out.read_text() == expected(3, source)
    source.write_text(NET.format(n=4))
    watch.wait_for("build 4: compiled")
    assert out.read_text() == expected(4, source)

    before = watch.builds()
    os.utime(source)  # touch: new mtime, same content
    out.write_text(out.read_text())  # the watcher's own output changing
    assert not [line for line in watch.quiet(0.6) if "build" in line]
    assert watch.builds() == before


def test_a_burst_of_saves_builds_its_final_content_once(watched) -> None:  # type: ignore[no-untyped-def]
    watch, source, out = watched
    for attempt in range(3):
        start = watch.builds()
        stamps = []
        for n in range(10, 20):  # 10 saves in about 100 ms
            source.write_text(NET.format(n=n + attempt * 10))
            stamps.append(time.monotonic())
            time.sleep(0.01)
        watch.quiet(0.8)
        gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
        if max(gaps) >= DEBOUNCE and watch.builds() - start > 1:
            continue  # this machine paused the writer longer than the debounce: try again
        assert watch.builds() - start == 1, watch.seen
        assert out.read_text() == expected(19 + attempt * 10, source)
        return
    pytest.skip("the machine is too loaded to write 10 saves within the debounce window")


def test_invalid_edit_keeps_out_then_recovers(watched) -> None:  # type: ignore[no-untyped-def]
    watch, source, out = watched
    good = out.read_text()
    source.write_text(BROKEN)
    watch.wait_for("failed; kept the previous")
    assert out.read_text() == good
    assert any("error[" in line for line in watch.seen)
    source.write_text(NET.format(n=7))
    watch.wait_for("compiled")
    assert out.read_text() == expected(7, source)


def test_sigint_exits_zero(watched) -> None:  # type: ignore[no-untyped-def]
    watch, _, _ = watched
    assert watch.stop() == 0
    assert any("stopped" in line for line in watch.seen + list(watch.lines.queue))


def test_out_equal_to_src_is_refused(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    source = tmp_path / "a.aur"
    source.write_text(NET.format(n=1))
    result = run_cli("watch", str(source), str(source))
    assert result.returncode == 2 and source.read_text() == NET.format(n=1)


def test_source_created_after_start(tmp_path: Path) -> None:
    source, out = tmp_path / "late.aur", tmp_path / "late.py"
    watch = Watch(source, out)
    try:
        watch.wait_for("does not exist yet")
        source.write_text(NET.format(n=5))
        watch.wait_for("build 1: compiled")
        assert out.read_text() == expected(5, source)
    finally:
        assert watch.stop() == 0


def test_vim_style_save_and_slow_chunked_write(watched) -> None:  # type: ignore[no-untyped-def]
    watch, source, out = watched
    backup = source.with_name("net.aur~")
    os.rename(source, backup)  # vim: rename to a backup, write a new file, delete the backup
    source.write_text(NET.format(n=8))
    backup.unlink()
    watch.wait_for("build 2: compiled")
    assert out.read_text() == expected(8, source)

    text = NET.format(n=9)
    with open(source, "w") as handle:  # slow writer: chunks closer together than the debounce
        for start in range(0, len(text), 20):
            handle.write(text[start : start + 20])
            handle.flush()
            time.sleep(0.02)
    watch.quiet(0.6)
    assert out.read_text() == expected(9, source)
    assert sum("compiled" in line for line in watch.seen) >= 2
