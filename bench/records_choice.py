"""``aurane check`` start-up with the records of ``aurane.records`` against the libraries that
could replace them: ``dataclasses`` (``slots=True`` where asked) and ``msgspec.Struct``.

    .venv/bin/python bench/records_choice.py [--runs 61] [--msgspec DIR] [--base SRC]

Each variant is a copy of ``src`` whose ``aurane/records.py`` is a thin shim over the library
(for msgspec also the two ``object.__setattr__`` calls in ``__post_init__`` become
``msgspec.structs.force_setattr``, which frozen structs need). ``--msgspec DIR``: a folder
where ``msgspec`` is importable (``pip install --target DIR msgspec``; it is no dependency
of Aurane, so the variant is skipped without it). ``--base SRC``: the ``src`` folder of
another commit (``git archive main | tar -x -C /tmp/base``), timed in the same run.

Before any time is shown, every variant must give the same ``aurane check --json`` output on
the examples, the zoo and the valid corpus. Then ``aurane check examples/quickstart.aur``
runs as a fresh process through the installed console script, variants interleaved, with
bytecode compiled first (a private ``PYTHONPYCACHEPREFIX`` per variant); wall and CPU time,
median and IQR, and ``python -c pass`` under the same settings. docs/architecture.md
("Records instead of dataclasses") has the last result.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUICKSTART = REPO / "examples" / "quickstart.aur"

DATACLASSES = '''"""records.py as the standard dataclasses (the measurement's variant)."""
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields, replace
from dataclasses import is_dataclass as is_record


def record(cls=None, /, *, frozen=False, eq=True, repr=True, order=False, slots=False):
    def wrap(c):
        return dataclass(c, frozen=frozen, eq=eq, repr=repr, order=order, slots=slots)

    return wrap if cls is None else wrap(cls)
'''

MSGSPEC = '''"""records.py as msgspec.Struct classes (the measurement's variant): an init=False field
becomes a defaulted one; per-field repr/compare options have no msgspec form."""
import types

import msgspec
from msgspec import structs
from msgspec.structs import fields, replace

MISSING = msgspec.NODEFAULT


class FrozenInstanceError(AttributeError):
    pass


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, compare=True):
    if default_factory is not MISSING:
        return msgspec.field(default_factory=default_factory)
    if default is not MISSING or not init:
        return msgspec.field(default=None if default is MISSING else default)
    return msgspec.NODEFAULT


def record(cls=None, /, *, frozen=False, eq=True, repr=True, order=False, slots=False):
    def wrap(c):
        body = {k: v for k, v in vars(c).items() if k not in ("__dict__", "__weakref__")}
        bases = tuple(b for b in c.__bases__ if b is not object) or (msgspec.Struct,)
        options = {"frozen": frozen, "eq": eq, "order": order}
        return types.new_class(c.__name__, bases, options, lambda ns: ns.update(body))

    return wrap if cls is None else wrap(cls)


def is_record(obj):
    kind = obj if isinstance(obj, type) else type(obj)
    return issubclass(kind, msgspec.Struct)
'''
FORCE = '__import__("msgspec").structs.force_setattr(self, '


def variant(root: Path, name: str, records: str | None) -> Path:
    """A copy of src with ``records.py`` replaced (None: unchanged)."""
    src = root / name
    shutil.copytree(REPO / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    if records is not None:
        (src / "aurane" / "records.py").write_text(records)
    if records is MSGSPEC:
        for rel in ("aurane/ops/spec.py", "aurane/source.py"):
            path = src / rel
            path.write_text(path.read_text().replace("object.__setattr__(self, ", FORCE))
    return src


def environment(path: str, name: str, root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = path
    env["PYTHONPYCACHEPREFIX"] = str(root / f"pyc-{name}")
    return env


def check_output(path: str, name: str, root: Path) -> str:
    files = [QUICKSTART, *sorted((REPO / "examples").rglob("*.aur"))]
    files += sorted((REPO / "tests" / "corpus" / "valid").glob("*.aur"))
    out = []
    for file in dict.fromkeys(files):
        done = subprocess.run(
            [aurane(), "check", "--json", str(file)],
            env=environment(path, name, root),
            capture_output=True,
            text=True,
        )
        out.append(f"{done.returncode}\n{done.stdout}")
    return "\n".join(out)


def aurane() -> str:
    found = shutil.which("aurane", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("the aurane console script is not installed (pip install -e .)")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=61)
    parser.add_argument("--msgspec", type=Path, help="a folder where msgspec is importable")
    parser.add_argument("--base", type=Path, help="the src folder of another commit")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths: dict[str, str] = {}
        if args.base is not None:
            paths["base"] = str(args.base.resolve())
        paths["records"] = str(variant(root, "records", None))
        paths["dataclasses"] = str(variant(root, "dataclasses", DATACLASSES))
        if args.msgspec is not None:
            paths["msgspec"] = f"{variant(root, 'msgspec', MSGSPEC)}{os.pathsep}{args.msgspec}"
        expected = check_output(paths["records"], "records", root)
        for name, path in paths.items():
            if check_output(path, name, root) != expected:
                raise SystemExit(f"{name}: aurane check --json differs from the records variant")
        commands = {name: [aurane(), "check", str(QUICKSTART)] for name in paths}
        commands["python -c pass"] = [sys.executable, "-c", "pass"]
        paths["python -c pass"] = paths["records"]
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        names = list(commands)
        for index in range(args.runs + 3):
            for name in names[index % len(names) :] + names[: index % len(names)]:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run(
                    commands[name],
                    env=environment(paths[name], name, root),
                    capture_output=True,
                    check=True,
                )
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if index >= 3:  # the first rounds compile bytecode
                    wall[name].append((time.perf_counter() - started) * 1000)
                    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                    cpu[name].append(used * 1000)
    print(f"aurane check {QUICKSTART.name}, fresh processes, {args.runs} interleaved runs each")
    for name in names:
        w, c = statistics.quantiles(wall[name], n=4), statistics.quantiles(cpu[name], n=4)
        print(
            f"  {name:14s} wall {statistics.median(wall[name]):6.1f} ms "
            f"(IQR {w[0]:.1f}-{w[2]:.1f})  CPU {statistics.median(cpu[name]):6.1f} ms "
            f"(IQR {c[0]:.1f}-{c[2]:.1f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
