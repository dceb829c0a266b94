"""Compile .aur sources to Python for the training tests and run the result."""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from aurane.backends.torch import generate_torch
from aurane.backends.torch.runtime import standalone as make_standalone
from tests.conftest import env, run_python
from tests.helpers import front

__all__ = [
    "compile_text",
    "env",
    "job_here",
    "main_here",
    "run_here",
    "python_here",
    "run_python",
    "write_program",
]


def compile_text(source: str, filename: str = "job.aur", *, standalone: bool = False) -> str:
    """The generated program; ``standalone`` copies the runtime in (``--standalone``)."""
    result = front(source, filename)
    errors = [d for d in result.diagnostics if d.is_error]
    assert not errors, errors
    assert result.resolved is not None
    code = generate_torch(result.resolved, result.graphs, filename=filename)
    return make_standalone(code) if standalone else code


def job_here(source: str, name: str = "job", *, standalone: bool = False) -> dict[str, Any]:
    """The compiled program's namespace, executed in this process under module name ``name``
    (its jobs called here: no interpreter start and torch import of a child)."""
    code = compile_text(source, f"{name}.aur", standalone=standalone)
    namespace: dict[str, Any] = {"__name__": name}
    exec(compile(code, f"{name}.py", "exec"), namespace)
    return namespace


def main_here(
    source: str, *argv: str, job: str = "train_net", name: str = "job", standalone: bool = False
) -> None:
    """The compiled program's ``rt.main(job)`` with ``argv``, in this process and its
    working directory: the program's command line (``--resume``, ``--epochs``,
    ``--max-steps``) without an interpreter start. The options ``rt.main`` keeps at module
    level are reset afterwards. ``standalone``: the --standalone program, whose own
    ``_main`` keeps them in its namespace."""
    from aurane.runtime import run as run_module
    from aurane.runtime.schedule import OVERRIDES

    namespace = job_here(source, name, standalone=standalone)
    main = namespace["_main"] if standalone else run_module.main
    try:
        main(namespace[job], argv=list(argv))
    finally:
        OVERRIDES.clear()
        run_module._FOLDER_OPTIONS.clear()


def write_program(
    folder: Path, source: str, name: str = "job", *, standalone: bool = False
) -> Path:
    path = folder / f"{name}.py"
    path.write_text(compile_text(source, f"{name}.aur", standalone=standalone))
    return path


def python_here(code: str, folder: Path) -> None:
    """``code`` run in this process as ``run_python`` runs it in a child: ``folder`` its
    working directory and first import folder, its module ``__main__``; no interpreter start
    or torch import. An exception it raises fails the test (a child's non-zero exit); the
    modules it imported from ``folder`` are forgotten afterwards."""
    shadowed = [p.stem for p in folder.glob("*.py") if p.stem in sys.modules]
    assert not shadowed, f"modules of these names are imported already: {shadowed}"
    where, before = os.getcwd(), set(sys.modules)
    sys.path.insert(0, str(folder))
    os.chdir(folder)
    try:
        exec(compile(textwrap.dedent(code), "<python_here>", "exec"), {"__name__": "__main__"})
    finally:
        os.chdir(where)
        sys.path.remove(str(folder))
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(folder)):
                del sys.modules[name]


def run_here(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``aurane run ARGS`` in this process, as ``run_cli("run", *args, cwd=cwd)`` runs it in
    a child: the command's own work (its options, ``--set``, the compile, the options it
    hands the program) is ``aurane.cli.main``'s, and the program it would start runs here
    too, with the environment ``aurane run`` gives it (AURANE_RUN_COMMAND, _OVERRIDES), its
    command line and the source's folder first on the import path; its exit status is
    the command's. No interpreter start and torch import for either process; the child
    itself (signals forwarded, the end reported) keeps its own tests, which start it.
    An error the program leaves uncaught is printed as the child prints it (its traceback,
    with the ``.aur`` lines: ``aurane.sourcemap``) and exits 1, so a test's ``"Traceback"
    not in stderr`` sees it. stdout and stderr come back as text; the modules imported
    from ``cwd`` are forgotten and the options ``rt.main`` keeps at module level reset
    afterwards."""
    from aurane import sourcemap
    from aurane.cli import run_cmd
    from aurane.cli.main import main
    from aurane.runtime import run as run_module
    from aurane.runtime.schedule import OVERRIDES

    def execute(
        program: Path, folder: Path, extra: list[str], command: str, overrides: list[str]
    ) -> int:
        given = {"AURANE_RUN_COMMAND": command, "AURANE_RUN_OVERRIDES": json.dumps(overrides)}
        saved = {name: os.environ.get(name) for name in given}
        argv, before = sys.argv, set(sys.modules)
        os.environ.update(given)
        sys.argv = [str(program), *extra]
        sys.path.insert(0, str(folder))
        try:
            runpy.run_path(str(program), run_name="__main__")
            return 0
        except SystemExit as stop:  # as the interpreter turns it into a status
            if stop.code is None or isinstance(stop.code, int):
                return stop.code or 0
            print(stop.code, file=sys.stderr)
            return 1
        except Exception as error:  # uncaught: as the child's hook prints it, and exit 1
            # (left to ``aurane.cli.main``, it would be the command's own "internal error",
            # exit 123, which `aurane run` never shows for its program's error)
            print(sourcemap.format_exception(error), end="", file=sys.stderr)
            return 1
        finally:
            sys.argv = argv
            sys.path.remove(str(folder))
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            for name in set(sys.modules) - before:
                if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(folder)):
                    del sys.modules[name]
            OVERRIDES.clear()
            run_module._FOLDER_OPTIONS.clear()

    out, err = io.StringIO(), io.StringIO()
    where, real = os.getcwd(), run_cmd._execute
    run_cmd._execute = execute  # type: ignore[assignment]
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["run", *args])
    finally:
        os.chdir(where)
        run_cmd._execute = real  # type: ignore[assignment]
    return subprocess.CompletedProcess(
        ["aurane", "run", *args], status, out.getvalue(), err.getvalue()
    )
