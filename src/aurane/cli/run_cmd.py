"""``aurane run SRC [--set NAME=VALUE]... [--resume [PATH]] [--epochs N] [--max-steps N]
[--run NAME] [--overwrite] [-- ARGS...]``: compile and run (SPEC §11).

Decisions:
- The program runs with this interpreter (``sys.executable``) in the working directory
  the user ran ``aurane run`` from, so relative paths in the program (``checkpoint_dir``,
  dataset roots, ``save_dir``) mean the same as for ``python out.py`` run from there.
  SRC's folder is put on ``PYTHONPATH`` so modules beside the source still import.
- ``--set NAME=VALUE`` (repeatable) changes a field of the program before it is checked
  (``aurane.overrides``): a bad value is a located error at that ``--set``, exit 1, and
  nothing runs. The overrides go to the program in AURANE_RUN_OVERRIDES, for its header
  and its run's config.json.
- ``--resume [PATH]``, ``--epochs N``, ``--max-steps N``, ``--run NAME`` and
  ``--overwrite`` are passed to the program (the runtime's ``main``); arguments after
  ``--`` are passed as they are.
- The program runs in its own process group; SIGINT, SIGTERM and SIGHUP sent to this
  process (Ctrl-C at a terminal included) are passed on once, so the program stops at a
  safe point and prints how to resume. The exit status is the program's (130 after SIGINT,
  143 after SIGTERM, 128 + N when a signal N ended it: 137 for SIGKILL). A program ended by
  a signal cannot report, so ``aurane run`` says how to resume instead (its checkpoints are
  complete whatever the moment: K-CKPT).
- A program without a training job is refused (exit 1): there would be nothing to run.
- The temporary file is removed afterwards, whatever happened, unless ``--keep-temp``.
  The compile cache is not used: a run should not leave cache folders behind.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from pathlib import Path

    from aurane.diagnostics import Diagnostic

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    CommandError,
    load_text,
    print_diagnostics,
)

EXIT_INTERRUPTED = 130
MAIN_GUARD = 'if __name__ == "__main__":'


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "run",
        help=command_help("run"),
        description="Compile SRC to a temporary Python file and run its training jobs with the "
        "current interpreter. Paths: relative paths in the program (checkpoint_dir, dataset "
        "roots, save_dir) resolve against the working directory you run 'aurane run' from, "
        "exactly as for 'python out.py' run there; SRC's folder is on PYTHONPATH. Arguments "
        "after '--' go to the program. Ctrl-C or SIGTERM stop at a safe point (exit 130 or "
        "143) after writing a checkpoint of the step they are at, and print how to resume. Each "
        "run writes into a folder of its own under the job's checkpoint_dir (run_0001, ...; "
        "'latest' points at the newest); --resume continues the latest run.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument(
        "--keep-temp", action="store_true", help="keep the generated file and print its path"
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="PATH",
        help="continue from a checkpoint file or folder (default: each job's own last.pt)",
    )
    parser.add_argument(
        "--epochs", type=int, metavar="N", help="total epochs for every job (extends a run)"
    )
    parser.add_argument(
        "--max-steps", type=int, metavar="N", help="total optimizer steps for every job"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="overrides",
        help="change a field before the program is checked (repeatable): lr=3e-4, batch=64, "
        "shapes_val.batch=128, experiment.seed=1",
    )
    parser.add_argument(
        "--run",
        metavar="NAME",
        dest="run_name",
        help="name the run's folder (default: run_NNNN, the next free number)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="reuse the latest run's folder (or --run NAME's) for a new run, removing its files",
    )
    # REMAINDER: argparse cannot mix options with positionals after SRC, so the tokens
    # after SRC are split by hand in ``_split`` (our options, then '--' ARGS).
    parser.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="-- ARGS", help="arguments for the program"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shlex
    import shutil
    import tempfile
    from pathlib import Path

    from aurane.compile import CompilationError, attach_source_map, compile_source
    from aurane.overrides import OverrideError, apply_overrides

    text = load_text(args.source)
    if text is None:
        return EXIT_INPUT
    extra = _split(list(args.args), args)
    try:
        edited = apply_overrides(text, args.source, args.overrides)
    except OverrideError as error:
        _print_located(error.located)
        return EXIT_INPUT
    try:
        code = compile_source(edited.text, filename=args.source, cache=False)
        code = attach_source_map(code, edited.text, args.source)  # .aur lines in tracebacks
    except CompilationError as error:
        _print_located(edited.locate(error.diagnostics, text, args.source))
        return EXIT_INPUT
    if MAIN_GUARD not in code:
        raise CommandError(
            f"{args.source} has no training job ('train' or 'train_gan'): nothing to run; "
            "use 'aurane compile' to get its models",
            EXIT_INPUT,
        )
    if args.resume is not None:
        extra = ["--resume", *([args.resume] if args.resume else []), *extra]
    if args.epochs is not None:
        extra = ["--epochs", str(args.epochs), *extra]
    if args.max_steps is not None:
        extra = ["--max-steps", str(args.max_steps), *extra]
    if args.run_name is not None:
        extra = ["--run", args.run_name, *extra]
    if args.overwrite:
        extra = ["--overwrite", *extra]
    folder = Path(args.source).resolve().parent
    temp_dir = Path(tempfile.mkdtemp(prefix="aurane-run-"))
    program = temp_dir / (_module_name(args.source) + ".py")
    command = " ".join(
        [
            "aurane run",
            shlex.quote(args.source),
            *(f"--set {shlex.quote(o)}" for o in args.overrides),
        ]
    )
    try:
        program.write_text(code, encoding="utf-8")
        return _execute(program, folder, extra, command, args.overrides)
    finally:
        if args.keep_temp:
            print(f"kept the generated program: {program}", file=sys.stderr)
        else:
            shutil.rmtree(temp_dir, ignore_errors=True)


def _print_located(located: list[tuple[Diagnostic, str, str]]) -> None:
    """Diagnostics, each shown in the text it points into (a --set argument or the file)."""
    for diagnostic, text, filename in located:
        print_diagnostics([diagnostic], text, filename)


def _split(tokens: list[str], args: argparse.Namespace) -> list[str]:
    """Read our options from the tokens after SRC into ``args``; return the program's.

    Our options come first; '--' (which argparse may already have removed) or the first
    token that is not one of ours starts the program's arguments.
    """
    while tokens:
        token = tokens[0]
        if token == "--":
            return tokens[1:]
        if token == "--keep-temp":
            args.keep_temp = True
        elif token == "--resume":
            has_path = len(tokens) > 1 and not tokens[1].startswith("-")
            args.resume = tokens.pop(1) if has_path else ""
        elif token.startswith("--resume="):
            args.resume = token.split("=", 1)[1]
        elif token in ("--epochs", "--max-steps") and len(tokens) > 1 and tokens[1].isdigit():
            setattr(args, token[2:].replace("-", "_"), int(tokens.pop(1)))
        elif token.startswith(("--epochs=", "--max-steps=")) and token.split("=", 1)[1].isdigit():
            name, value = token[2:].split("=", 1)
            setattr(args, name.replace("-", "_"), int(value))
        elif token == "--set" and len(tokens) > 1:
            args.overrides.append(tokens.pop(1))
        elif token.startswith("--set="):
            args.overrides.append(token.split("=", 1)[1])
        elif token == "--run" and len(tokens) > 1:
            args.run_name = tokens.pop(1)
        elif token.startswith("--run="):
            args.run_name = token.split("=", 1)[1]
        elif token == "--overwrite":
            args.overwrite = True
        else:
            return tokens
        tokens.pop(0)
    return tokens


def _module_name(source: str) -> str:
    from pathlib import Path

    stem = Path(source).stem
    name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stem)
    return name if name and not name[0].isdigit() else f"program_{name}"


def _execute(
    program: Path, folder: Path, extra: list[str], command: str, overrides: list[str]
) -> int:
    import json
    import subprocess

    from aurane import sourcemap

    paths = [str(folder), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "AURANE_RUN_COMMAND": command,  # the runtime's "resume with: ..." hint
        "AURANE_RUN_OVERRIDES": json.dumps(overrides),  # the run's header and config.json
    }
    try:
        child = subprocess.Popen(
            [*sourcemap.command(str(program)), *extra],
            env=env,
            start_new_session=True,  # Ctrl-C reaches aurane run alone; it forwards it once
            preexec_fn=_end_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
        )
    except OSError as error:
        raise CommandError(f"cannot start {sys.executable}: {error.strerror or error}") from None
    restore = _forward_signals(child)
    try:
        while True:
            try:
                status = child.wait()
                break
            except KeyboardInterrupt:  # only if forwarding is off (not the main thread)
                child.send_signal(2)
    finally:
        restore()
    if status < 0:  # ended by a signal, before it could say anything
        _report_signal(-status, command)
        return EXIT_INTERRUPTED if -status == 2 else 128 - status
    return status


def _report_signal(signum: int, command: str) -> None:
    import signal

    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    print(
        f"{command}: the program was ended by {name}; every checkpoint it finished is "
        f"complete; to continue from its last.pt: {command} --resume",
        file=sys.stderr,
        flush=True,
    )


def _end_with_parent() -> None:
    """In the child (Linux): SIGTERM when ``aurane run`` dies, even by SIGKILL, so the
    program (in its own session) never trains on as an orphan."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _forward_signals(child: subprocess.Popen[bytes]) -> Callable[[], None]:
    """Pass SIGINT, SIGTERM and SIGHUP on to the program instead of dying around it.

    The program runs in its own session, so a Ctrl-C at the terminal reaches only this
    process; passing it on once lets the program stop at a safe point and report. Without
    this a ``kill`` of ``aurane run`` would orphan the program and leave the temporary folder.
    Returns a function restoring the previous handlers.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # signal handlers can only be set from the main thread

    def forward(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, forward)

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    return restore
