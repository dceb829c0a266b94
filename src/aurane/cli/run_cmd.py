"""``aurane run SRC [-- ARGS...]``: compile to a temporary file and run it (SPEC §11).

Decisions: the program runs with this interpreter (``sys.executable``) in SRC's folder,
with that folder on ``PYTHONPATH`` so modules beside the source still import. The exit
status is the program's (128 + N when a signal N ended it, 130 on Ctrl+C). The
temporary file is removed afterwards, whatever happened, unless ``--keep-temp``. The
compile cache is not used: a run should not leave cache folders beside the source.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from pathlib import Path

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    CommandError,
    load_text,
    print_diagnostics,
)

EXIT_INTERRUPTED = 130


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "run",
        help=command_help("run"),
        description="Compile SRC to a temporary Python file and run it with the current "
        "interpreter in SRC's folder. Arguments after '--' go to the program. The exit "
        "status is the program's (130 on interrupt).",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument(
        "--keep-temp", action="store_true", help="keep the generated file and print its path"
    )
    # REMAINDER: argparse cannot mix options with positionals after '--', so the
    # tokens after SRC are split by hand in ``_split`` (our options, then '--' ARGS).
    parser.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="-- ARGS", help="arguments for the program"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shutil
    import tempfile
    from pathlib import Path

    from aurane.compile import CompilationError, compile_source

    text = load_text(args.source)
    if text is None:
        return EXIT_INPUT
    try:
        code = compile_source(text, filename=args.source, cache=False)
    except CompilationError as error:
        print_diagnostics(error.diagnostics, text, args.source)
        return EXIT_INPUT
    keep_temp, extra = _split(list(args.args), args.keep_temp)
    folder = Path(args.source).resolve().parent
    temp_dir = Path(tempfile.mkdtemp(prefix="aurane-run-"))
    program = temp_dir / (_module_name(args.source) + ".py")
    try:
        program.write_text(code, encoding="utf-8")
        return _execute(program, folder, extra)
    finally:
        if keep_temp:
            print(f"kept the generated program: {program}", file=sys.stderr)
        else:
            shutil.rmtree(temp_dir, ignore_errors=True)


def _split(tokens: list[str], keep_temp: bool) -> tuple[bool, list[str]]:
    """(keep_temp, program arguments) from the tokens after SRC."""
    while tokens and tokens[0] != "--":
        option = tokens.pop(0)
        if option != "--keep-temp":
            raise CommandError(
                f"unknown option {option!r} for run; put program arguments after '--'",
                EXIT_USAGE,
            )
        keep_temp = True
    return keep_temp, tokens[1:]


def _module_name(source: str) -> str:
    from pathlib import Path

    stem = Path(source).stem
    name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stem)
    return name if name and not name[0].isdigit() else f"program_{name}"


def _execute(program: Path, folder: Path, extra: list[str]) -> int:
    import subprocess

    paths = [str(folder), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    try:
        child = subprocess.Popen([sys.executable, str(program), *extra], cwd=folder, env=env)
    except OSError as error:
        raise CommandError(f"cannot start {sys.executable}: {error.strerror or error}") from None
    restore = _forward_signals(child)
    try:
        status = child.wait()
    except KeyboardInterrupt:
        # The child got the same Ctrl+C (same process group); let it finish cleaning up.
        try:
            child.wait(timeout=10)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            child.kill()
            child.wait()
        return EXIT_INTERRUPTED
    finally:
        restore()
    if status < 0:  # ended by a signal
        return EXIT_INTERRUPTED if -status == 2 else 128 - status
    return status


def _forward_signals(child: subprocess.Popen[bytes]) -> Callable[[], None]:
    """Pass SIGTERM and SIGHUP on to the program instead of dying around it.

    Without this a ``kill`` of ``aurane run`` ends this process at once: the program keeps
    running as an orphan and the temporary folder is never removed. With it the program
    gets the signal, ``child.wait()`` returns its status and the cleanup runs. Returns a
    function restoring the previous handlers.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # signal handlers can only be set from the main thread

    def forward(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, forward)

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    return restore
