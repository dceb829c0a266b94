"""Start-up work of ``aurane check`` (issue 14): what it imports and builds, not how long.

The time target (median < 100 ms for ``aurane check examples/quickstart.aur``) is measured by
``bench/analysis_speed.py``; these tests keep the work behind it from growing back.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from aurane import records
from aurane.cli.commands import COMMANDS
from aurane.cli.main import build_parser
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.parser import parse_program

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "examples" / "quickstart.aur"

# Never needed to check a program: code generation, profiling, caches, tooling, heavy
# third-party packages, and modules used only on error paths.
HEAVY = (
    "torch",
    "numpy",
    "aurane.analysis",
    "aurane.backends",
    "aurane.compile",
    "aurane.cache",
    "aurane.optimize",
    "aurane.lsp",
    "aurane.tools",
    "difflib",
    # the standard decorator compiles every class's methods at import (aurane.records)
    "dataclasses",
    "inspect",
    # argparse's help formatter imports shutil (and bz2, lzma) for the terminal width
    "shutil",
    # Python's own ast: only block sizes re-expressed at a call site need it
    "ast",
)

_PROBE = """
import json, sys
from aurane.cli.main import main
code = main(["check", sys.argv[1]])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_check_imports_no_heavy_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(QUICKSTART)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0
    loaded = [
        name
        for name in result["modules"]
        if any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY)
    ]
    assert loaded == []
    # the other commands' modules stay unimported too
    others = [module for name, (module, _) in COMMANDS.items() if name != "check"]
    assert [m for m in others if m in result["modules"]] == []


_GC_PROBE = """
import gc, json, sys
from aurane.cli.main import main
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info))
code = main(["check", sys.argv[1]], own_process=sys.argv[2] == "own")
gc.callbacks.clear()
print(json.dumps({"code": code, "collections": len(collections), "frozen": gc.get_freeze_count()}))
"""


def test_check_runs_no_cyclic_collection_and_freezes_only_its_own_process() -> None:
    """Start-up (the compiler's modules and tables) runs with the collector paused; a process
    of its own then freezes what it built. Before: 24 collections during one check."""
    seen = {}
    for mode in ("own", "shared"):
        done = subprocess.run(
            [sys.executable, "-c", _GC_PROBE, str(QUICKSTART), mode],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        seen[mode] = json.loads(done.stdout.splitlines()[-1])
    assert seen["own"]["code"] == seen["shared"]["code"] == 0
    assert seen["own"]["collections"] == 0
    # unfrozen, the first allocation after the pause scans what start-up built, once
    assert seen["shared"]["collections"] <= 1
    assert seen["own"]["frozen"] > 1000
    # main() called in a longer-lived process (tests, tools) leaves the collector as it was
    assert seen["shared"]["frozen"] == 0


def test_check_parser_builds_one_command_parser() -> None:
    parser = build_parser("check")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(COMMANDS)
    # the other commands share one empty parser: 2 parsers, not one per command
    assert len({id(p) for p in sub.choices.values()}) == 2
    assert sub.choices["check"].prog == "aurane check"
    assert len([a for a in sub.choices["check"]._actions if a.dest == "source"]) == 1


def test_ast_nodes_share_value_methods() -> None:
    """AST classes share ``==``/``hash``/``repr`` written once instead of compiling them per
    class, and compile ``__init__`` only when first instantiated."""
    classes = [
        cls
        for cls in vars(ast).values()
        if isinstance(cls, type) and records.is_record(cls) and cls.__module__ == ast.__name__
    ]
    assert len(classes) >= 30
    shared = (records._record_eq, records._record_hash, records._record_repr)
    for cls in classes:
        assert (cls.__eq__, cls.__hash__, cls.__repr__) == shared, cls
        assert "__slots__" in vars(cls) and cls.__record_frozen__, cls  # type: ignore[attr-defined]


def test_ast_value_semantics_are_those_of_frozen_dataclasses() -> None:
    span = Span(1, 2, 1, 5)
    one = ast.Number(1, "1", span)
    call = ast.Call("dense", span, (one,), (), (), span)
    same = ast.Call("dense", span, (ast.Number(1.0, "1", span),), (), (), span)
    assert call == same and hash(call) == hash(same)
    assert hash(one) == hash((1, "1", span)) and hash(ast.NoneLit(span)) == hash((span,))
    assert call != ast.Call("conv2d", span, (one,), (), (), span)
    assert ast.Name("x", span) != ast.String("x", span)
    assert ast.Name("x", span).__eq__(3) is NotImplemented
    assert repr(ast.Name("x", span)) == f"Name(id='x', span={span!r})"
    assert records.replace(call, func="conv2d").func == "conv2d"
    try:
        call.func = "other"  # type: ignore[misc]
    except records.FrozenInstanceError:
        pass
    else:
        raise AssertionError("AST nodes must stay frozen")
    program, _ = parse_program(QUICKSTART.read_text(encoding="utf-8"), "quickstart.aur")
    assert program is not None
    rebuilt = eval(repr(program), {**vars(ast), "Span": Span})  # repr round-trips
    assert rebuilt == program and hash(rebuilt) == hash(program)
