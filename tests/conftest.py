"""Shared fixtures: the ../shared corpus (skipped with a reason when absent) and helpers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
# Runs started by tests, in process or in children, draw no metrics.png (a second or more
# each, over a hundred runs); the tests of the plot itself set AURANE_PLOT=1.
os.environ.setdefault("AURANE_PLOT", "0")
if os.environ.get("PYTEST_XDIST_WORKER") is not None:
    # Each pytest-xdist worker takes a core: one intra-op torch thread per worker (and per
    # child process it starts) instead of every worker's torch reaching for every core.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
if sys.dont_write_bytecode:
    # PYTHONDONTWRITEBYTECODE (set by some CI sandboxes) would make every interpreter of the
    # run compile this checkout's sources again: each worker its test modules (pytest's
    # rewritten ones: about 5 s of CPU a worker) and src/aurane, and each of the hundreds of
    # child `aurane` commands and generated programs the src/aurane modules it imports (about
    # half of a compile child's CPU). The first process (the controller, or `-n 0`) writes
    # src/aurane's bytecode once, which children read whatever their environment, and pytest's
    # processes keep their rewritten test modules; both are ignored by git and skipped by the
    # packaging tests. Children still write none.
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        import compileall

        compileall.compile_dir(REPO / "src" / "aurane", quiet=2)  # unchanged files: a stat
    sys.dont_write_bytecode = False
# The shared conformance corpus lives beside the checkout (``../shared/corpus``); a fresh clone
# has none. AURANE_SHARED points elsewhere (the fresh-clone check sets it to a missing folder).
SHARED = Path(os.environ.get("AURANE_SHARED") or REPO.parent / "shared")
CORPUS = SHARED / "corpus"
# The project's own copy of the valid corpus (tests/corpus/README.md): always present, checked
# against ``CORPUS / "valid"`` when that exists. Every valid-program test reads it from here.
VALID = REPO / "tests" / "corpus" / "valid"
EXAMPLES = REPO / "examples"
UPDATE_GOLDEN = os.environ.get("AURANE_UPDATE_GOLDEN") == "1"
SHARED_ABSENT = f"{CORPUS} not present: the shared-corpus tests need ../shared beside the checkout"
requires_shared = pytest.mark.skipif(not CORPUS.is_dir(), reason=SHARED_ABSENT)
"""Mark a test that reads the shared corpus itself (skipped, with the reason, on a clone)."""


def _folder(kind: str) -> Path:
    return VALID if kind == "valid" else CORPUS / kind


def corpus_dir(kind: str) -> Path:
    """``valid``: the project's copy; any other kind: the shared corpus, skipping when absent."""
    path = _folder(kind)
    if not path.is_dir():
        pytest.skip(SHARED_ABSENT)
    return path


def corpus_expected(kind: str) -> dict:  # type: ignore[type-arg]
    return json.loads((corpus_dir(kind) / "expected.json").read_text())


def corpus_files(kind: str) -> list[str]:
    path = _folder(kind)
    if not path.is_dir():
        return []
    return sorted(p.name for p in path.glob("*.aur"))


def corpus_paths() -> list[Path]:
    """Every corpus program: the valid copy, then the shared invalid ones when present."""
    invalid = CORPUS / "invalid"
    return sorted(VALID.glob("*.aur")) + (sorted(invalid.glob("*.aur")) if invalid.is_dir() else [])


def corpus_params(kind: str) -> list[Any]:
    """``corpus_files(kind)`` for ``parametrize``; one skipped case, with the reason, if absent."""
    names = corpus_files(kind)
    return names or [pytest.param("<absent>", marks=pytest.mark.skip(reason=SHARED_ABSENT))]


def env(**extra: str) -> dict[str, str]:
    """The environment for a child interpreter: this checkout's ``src`` first on the path.

    An existing ``PYTHONPATH`` is kept after it; ``extra`` overrides any variable.
    """
    paths = [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    path = os.pathsep.join(p for p in paths if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def start_session(args: list[str], cwd: Path, **extra_env: str) -> subprocess.Popen[str]:
    """A child interpreter in its own session (as a shell starts a foreground job, so a
    signal to its process group reaches it alone), text stdout and stderr piped;
    ``extra_env`` as for ``env``."""
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=env(**extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def default_sigint() -> None:
    """``preexec_fn`` for a child that must answer Ctrl+C (SIGINT) as in a terminal.

    Python turns SIGINT into KeyboardInterrupt only when it starts with the default
    disposition, and a suite launched from a non-interactive shell's background job (CI)
    inherits SIGINT ignored; the child gets the default back before it starts.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_python(
    code: str, cwd: Path, timeout: float = 120, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter in ``cwd`` (where the compiled program lives)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env(**(extra_env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


_child_env = env  # run_cli's ``env`` argument shadows the function


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    full_env = _child_env(**(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "aurane", *args],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env=full_env,
        input=input_text,
        timeout=120,
    )
