"""Files the commands read and write are what they claim to be (issue 21, RELIABILITY K-OUT
and K-LIM): output only to a regular file or a new path (``-``: stdout), sources only from
regular files, the size limit checked before reading, ``aurane plot``'s hostile
metrics.jsonl files a located error. Never a hang, never an internal error (exit 123).

Every command runs in this process (``cli.main.main``) under a hang guard: a thread that
does not finish in time is released by opening the FIFOs it may block on, and fails.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from aurane.cli.main import main
from tests.conftest import env

HANG_GUARD = 60.0
PROGRAM = """\
model Net:
    input_shape = (4,)
    def forward(x):
        x -> dense(3)
"""
ROWS = '{"epoch": 1, "loss": 1.0, "val_loss": 1.2}\n{"epoch": 2, "loss": 0.5, "val_loss": 0.9}\n'


def run_guarded(
    argv: list[str], capsys: pytest.CaptureFixture[str], fifos: tuple[Path, ...] = ()
) -> tuple[int, str, str]:
    """``aurane ARGV`` in this process: (exit status, stdout, stderr)."""
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    if thread.is_alive():
        for fifo in fifos:  # release an open() waiting for the other end
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, flags))
        thread.join(5)
        pytest.fail(f"aurane {' '.join(argv)} hung (over {HANG_GUARD} s)")
    out, err = capsys.readouterr()
    return result[0], out, err


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "net.aur").write_text(PROGRAM, encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text(ROWS, encoding="utf-8")
    return tmp_path


# -- case 3 / K-OUT: what an output path may name -------------------------------------------

WRITERS: dict[str, Callable[[Path, str], list[str]]] = {
    "compile": lambda w, out: ["compile", str(w / "net.aur"), "-o", out, "--no-cache"],
    "compile OUT": lambda w, out: ["compile", str(w / "net.aur"), out, "--no-cache"],
    "visualize": lambda w, out: ["visualize", "--format", "dot", str(w / "net.aur"), "-o", out],
    "inspect": lambda w, out: ["inspect", str(w / "net.aur"), "--export", out],
    "plot": lambda w, out: ["plot", str(w / "run"), "-o", out],
    "export": lambda w, out: ["export", str(w / "net.aur"), "--format", "onnx", "-o", out],
    "watch": lambda w, out: ["watch", str(w / "net.aur"), out],
}


class Node:
    """A special file made in the test's folder, and a fingerprint to see it unchanged."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind = kind
        self.path = folder / "out.node"
        self.outside = folder.parent / f"{folder.name}-outside.txt"
        self._server: socket.socket | None = None
        make = getattr(self, "_" + kind.replace(" ", "_").replace("-", "_"))
        make()
        self.before = self.fingerprint()

    def _fifo(self) -> None:
        os.mkfifo(self.path)

    def _device(self) -> None:  # a /dev/null-like node (needs CAP_MKNOD: root in CI)
        try:
            os.mknod(self.path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device node needs CAP_MKNOD")

    def _socket(self) -> None:
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))

    def _directory(self) -> None:
        self.path.mkdir()

    def _read_only(self) -> None:
        self.path.write_text("keep me\n")
        self.path.chmod(0o444)

    def _link_to_stdout(self) -> None:  # the issue's /proc/self/fd/1
        self.path.symlink_to("/proc/self/fd/1")

    def _link_out_of_folder(self) -> None:
        self.outside.write_text("keep me\n")
        self.path.symlink_to(self.outside)

    def _link_to_fifo(self) -> None:
        fifo = self.path.with_name("fifo.node")
        os.mkfifo(fifo)
        self.path.symlink_to(fifo.name)

    def fingerprint(self) -> tuple[object, ...]:
        info = os.lstat(self.path)
        link = os.readlink(self.path) if stat.S_ISLNK(info.st_mode) else None
        text = self.path.read_text() if self.kind == "read-only" else None
        outside = self.outside.read_text() if self.outside.exists() else None
        return (stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev, link, text, outside)

    def fifos(self) -> tuple[Path, ...]:
        return tuple(p for p in self.path.parent.iterdir() if stat.S_ISFIFO(os.lstat(p).st_mode))

    def close(self) -> None:
        if self._server is not None:
            self._server.close()


KINDS = [
    "fifo",
    "device",
    "socket",
    "directory",
    "read-only",
    "link to stdout",
    "link out of folder",
    "link to fifo",
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_case3_output_never_replaces_a_special_file(
    work: Path, capsys: pytest.CaptureFixture[str], writer: str, kind: str
) -> None:
    if writer == "plot":
        pytest.importorskip("matplotlib")
    if writer == "export":
        pytest.importorskip("onnx")
    node = Node(kind, work)
    try:
        status, _, err = run_guarded(WRITERS[writer](work, str(node.path)), capsys, node.fifos())
    finally:
        node.close()
    assert status == 2, err
    assert f"cannot write '{node.path}'" in err and "Traceback" not in err
    assert node.fingerprint() == node.before
    leftovers = [p.name for p in work.iterdir() if p.name.startswith((".out", "out.node."))]
    assert leftovers == []


@pytest.mark.parametrize("writer", ["compile", "visualize", "inspect", "plot"])
def test_output_through_a_link_inside_its_folder_keeps_the_link(
    work: Path, capsys: pytest.CaptureFixture[str], writer: str
) -> None:
    if writer == "plot":
        pytest.importorskip("matplotlib")
    (work / "real.out").write_text("# Generated by Aurane\n")
    link = work / "link.out"
    link.symlink_to("real.out")
    status, _, err = run_guarded(WRITERS[writer](work, str(link)), capsys)
    assert status == 0, err
    assert link.is_symlink() and os.readlink(link) == "real.out"
    assert (work / "real.out").read_bytes() != b"# Generated by Aurane\n"


@pytest.mark.parametrize("writer", ["compile", "visualize", "inspect", "plot"])
def test_dash_is_stdout(
    work: Path, capsysbinary: pytest.CaptureFixture[bytes], writer: str
) -> None:
    if writer == "plot":
        pytest.importorskip("matplotlib")
    assert main(WRITERS[writer](work, "-")) == 0
    data = capsysbinary.readouterr().out
    assert not (work / "-").exists()
    expected = {
        "compile": b"class Net(nn.Module)",
        "visualize": b'digraph "Net"',
        "inspect": b'"statements"',
        "plot": b"\x89PNG",
    }[writer]
    assert data.startswith(expected) if writer == "plot" else expected in data


def test_case3_dev_null_stays_a_device(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's ``-o /dev/null`` as root: refused, and /dev/null is untouched."""
    from aurane.fs import NotAFile, output_target

    with pytest.raises(NotAFile):  # the rule is in place before /dev/null is ever named
        output_target("/dev/null")
    before = os.stat("/dev/null")
    assert stat.S_ISCHR(before.st_mode)
    status, _, err = run_guarded(WRITERS["compile"](work, "/dev/null"), capsys)
    after = os.stat("/dev/null")
    assert status == 2 and "character device" in err
    assert (after.st_ino, after.st_rdev, after.st_mode) == (
        before.st_ino,
        before.st_rdev,
        before.st_mode,
    )


def test_output_rule_unit(tmp_path: Path) -> None:
    from aurane.fs import NotAFile, RefusedOutput, atomic_write, output_target

    new = tmp_path / "new.txt"
    assert output_target(new) == new
    atomic_write(new, "one\n")
    assert output_target(new) == new
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "deep.txt").write_text("x")
    down = tmp_path / "down.txt"
    down.symlink_to("sub/deep.txt")  # into a subfolder: still inside the named folder
    atomic_write(down, "two\n")
    assert down.is_symlink() and (sub / "deep.txt").read_text() == "two\n"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to("made.txt")
    atomic_write(dangling, "three\n")
    assert (tmp_path / "made.txt").read_text() == "three\n" and dangling.is_symlink()
    up = sub / "up.txt"
    up.symlink_to("../new.txt")  # out of the link's own folder
    with pytest.raises(RefusedOutput, match="outside its folder"):
        atomic_write(up, "no\n")
    with pytest.raises(NotAFile) as refused:
        output_target(tmp_path)
    assert refused.value.errno == errno.EISDIR
    assert new.read_text() == "one\n"


# -- case 5 / K-LIM: what a source path may name ------------------------------------------


READERS: dict[str, Callable[[Path, str], list[str]]] = {
    "check": lambda w, src: ["check", src],
    "check --json": lambda w, src: ["check", "--json", src],
    "compile": lambda w, src: ["compile", src, "--no-cache"],
    "diff first": lambda w, src: ["diff", src, str(w / "net.aur")],
    "diff second": lambda w, src: ["diff", str(w / "net.aur"), src],
    "format": lambda w, src: ["format", "--check", src],
    "lint": lambda w, src: ["lint", src],
    "ir": lambda w, src: ["ir", src],
    "visualize": lambda w, src: ["visualize", "--format", "dot", src],
    "profile": lambda w, src: ["profile", src],
    "inspect": lambda w, src: ["inspect", src],
    "verify": lambda w, src: ["verify", src],
    "export": lambda w, src: ["export", src, "--format", "onnx", "-o", str(w / "x.onnx")],
    "run": lambda w, src: ["run", src],
    "benchmark": lambda w, src: ["benchmark", src],
    "watch": lambda w, src: ["watch", src, str(w / "out.py")],
    "playground": lambda w, src: ["playground", src, "--port", "0", "--no-browser"],
}


@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("reader", list(READERS))
def test_case5_source_that_is_not_a_regular_file_is_refused_at_once(
    work: Path, capsys: pytest.CaptureFixture[str], reader: str, source: str
) -> None:
    """``aurane check /dev/zero`` read until MemoryError, ``aurane diff /dev/zero x.aur``
    hung; every command that reads a source refuses a FIFO or a device without waiting."""
    if reader == "export":
        pytest.importorskip("onnx")
    fifo = work / "prog.aur"
    if source == "fifo":
        os.mkfifo(fifo)
        source = str(fifo)
    status, out, err = run_guarded(READERS[reader](work, source), capsys, (fifo,))
    assert status == 1, (out, err)
    assert "not a regular file" in out + err and "Traceback" not in err


def test_case5_oversized_source_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A sparse 4 GiB file under a 1 GiB address-space limit: read whole, it would be a
    MemoryError (exit 123); the size is checked first, so it is the located P011."""
    big = tmp_path / "big.aur"
    with open(big, "wb") as handle:
        handle.truncate(4 << 30)
    for command in (["check"], ["diff", str(big)]):
        done = subprocess.run(
            [sys.executable, "-m", "aurane", *command, str(big)],
            capture_output=True,
            text=True,
            env=env(),
            timeout=120,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
        )
        assert done.returncode == 1, done.stderr
        assert f"file is {4 << 30} bytes; the limit is 1048576 bytes" in done.stderr


def test_source_limit_reads_at_most_one_byte_past_it(tmp_path: Path) -> None:
    from aurane.cli.common import read_source
    from aurane.fs import TooLarge, read_limited
    from aurane.syntax.tokens import MAX_FILE_BYTES

    exact = tmp_path / "exact.aur"
    exact.write_bytes(b"#" * MAX_FILE_BYTES)
    assert len(read_limited(exact, MAX_FILE_BYTES)) == MAX_FILE_BYTES
    over = tmp_path / "over.aur"
    over.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(TooLarge):
        read_limited(over, MAX_FILE_BYTES)
    assert len(read_limited(over, MAX_FILE_BYTES, truncate=True)) == MAX_FILE_BYTES
    text, problem = read_source(str(over))
    assert text is None and problem is not None and problem.code == "P011"
    assert (problem.span.line, problem.span.column) == (1, 1)


def test_format_stdin_reads_at_most_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """``aurane format -`` with /dev/zero on stdin: P011 after limit + 1 bytes."""
    done = subprocess.run(
        [sys.executable, "-m", "aurane", "format", "-"],
        stdin=open("/dev/zero", "rb"),  # noqa: SIM115
        capture_output=True,
        env=env(),
        timeout=120,
    )
    assert done.returncode == 1 and b"P011" in done.stderr and b"more than 1048576" in done.stderr


# -- case 9 / K-LIM: hostile metrics.jsonl files for `aurane plot` --------------------------

PLOT_CASES: dict[str, tuple[str | None, str]] = {
    "empty": ("", "no rows yet"),
    "list": ("[1,2,3]\n", ":1: expected a flat JSON object"),
    "string": ('"abc"\n', ":1: expected a flat JSON object"),
    "null": ("null\n", ":1: expected a flat JSON object"),
    "no epoch or step": ('{"loss": 1.0}\n', ":1: the row has no 'epoch' or 'step' number"),
    "no quantity": ('{"epoch": 1}\n{"epoch": 2, "lr": 0.1}\n', "nothing to plot"),
    "text value": ('{"epoch": 1, "loss": "abc"}\n', ":1: 'loss' is \"abc\", not a number"),
    "nested value": ('{"epoch": 1, "loss": {"a": 1}}\n', ":1: expected a flat JSON object"),
    "deep": ("[" * 100_000 + "]" * 100_000 + "\n", ":1: expected a flat JSON object"),
    "deep object": ('{"a":' * 100_000 + "1" + "}" * 100_000, ":1: expected a flat JSON"),
    "bad json on line 2": ('{"epoch": 1, "loss": 1}\n{"epoch": 2,\n', ":2: "),
    "huge integer": ('{"epoch": 1, "loss": ' + "9" * 5000 + "}\n", ":1: invalid JSON"),
    "not utf-8": ('{"epoch": 1, "loss": 1}\n{"epoch": "\xff"}\n', ":2: not UTF-8"),
    "wide": (
        json.dumps({"epoch": 1, **{f"m{i}": 0.5 for i in range(2000)}}) + "\n",
        ":1: 'm32' is quantity number 33; one figure draws at most 32",
    ),
    "directory": (None, "it is a directory, not a regular file"),
    "fifo": (None, "it is a FIFO, not a regular file"),
}


@pytest.mark.parametrize("case", list(PLOT_CASES))
def test_case9_plot_hostile_metrics_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    pytest.importorskip("matplotlib")
    content, message = PLOT_CASES[case]
    run = tmp_path / "run"
    run.mkdir()
    metrics = run / "metrics.jsonl"
    if case == "directory":
        metrics.mkdir()
    elif case == "fifo":
        os.mkfifo(metrics)
    elif case == "not utf-8":
        assert content is not None
        metrics.write_bytes(content.encode("latin-1"))
    else:
        assert content is not None
        metrics.write_text(content, encoding="utf-8")
    status, _, err = run_guarded(["plot", str(run), "-o", str(tmp_path / "p.png")], capsys)
    assert status == 1, err
    assert message in err and "Traceback" not in err
    assert str(metrics) in err or "nothing to plot" in err
    assert not (tmp_path / "p.png").exists()


def test_plot_draws_what_it_can_of_rows_with_gaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    run.mkdir()
    rows = [
        {"epoch": 1, "loss": 1.0, "accuracy": None},
        {"step": 8, "kind": "step", "loss": 0.9},
        {"epoch": 2, "loss": 0.5, "accuracy": 0.7, "val_loss": 0.6},
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    status, _, err = run_guarded(["plot", str(run)], capsys)
    assert status == 0, err
    assert (run / "metrics.png").read_bytes().startswith(b"\x89PNG")


def test_compile_diff_reads_a_bounded_out(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``compile --diff`` reads the existing OUT: a FIFO is refused, a huge OUT is cut off
    at ``MAX_COMPARED_BYTES`` (a sparse file: never read)."""
    from aurane.cli.compile_cmd import MAX_COMPARED_BYTES

    fifo = work / "fifo.py"
    os.mkfifo(fifo)
    argv = ["compile", str(work / "net.aur"), str(fifo), "--diff", "--no-cache"]
    status, _, err = run_guarded(argv, capsys, (fifo,))
    assert status == 2 and "FIFO" in err
    huge = work / "huge.py"
    with open(huge, "wb") as handle:
        handle.truncate(MAX_COMPARED_BYTES + 1)
    argv = ["compile", str(work / "net.aur"), str(huge), "--diff", "--no-cache"]
    status, _, err = run_guarded(argv, capsys)
    assert status == 1 and f"the limit is {MAX_COMPARED_BYTES}" in err


def test_diff_rev_refuses_a_revision_over_the_source_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aurane.syntax.tokens import MAX_FILE_BYTES

    program = tmp_path / "big.aur"
    program.write_text("#" * (MAX_FILE_BYTES + 1) + "\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    for command in (["init", "-q"], ["add", "big.aur"], ["commit", "-qm", "big"]):
        subprocess.run([*git, *command], check=True, capture_output=True, timeout=60)
    program.write_text(PROGRAM)
    status, _, err = run_guarded(["diff", str(program), "--rev", "HEAD"], capsys)
    assert status == 1 and f"the limit is {MAX_FILE_BYTES} bytes" in err


def test_format_leaves_a_read_only_file_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rewriting a source in place follows the output rule too: exit 1, not a traceback."""
    source = tmp_path / "ugly.aur"
    ugly = PROGRAM.replace("input_shape = (4,)", "input_shape=(4,)")
    source.write_text(ugly)
    source.chmod(0o444)
    status, _, err = run_guarded(["format", str(source)], capsys)
    assert status == 1 and "it is read-only" in err and "Traceback" not in err
    assert source.read_text() == ugly
