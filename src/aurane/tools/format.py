"""``aurane format``: the canonical layout of a program, applied only when provably safe.

Like black's ``--safe``: after formatting, the new text must parse without errors to the same
AST (spans, number spellings and trailing blanks of comments aside) and lower to the same IR
with the same diagnostic codes. Otherwise the result is refused and the file left untouched.
An input that does not parse is never formatted.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aurane import records
from aurane.diagnostics import Diagnostic, has_errors
from aurane.records import field, record
from aurane.syntax import ast
from aurane.syntax.parser import parse_program
from aurane.syntax.printer import strip_spans
from aurane.tools.program_layout import layout_program

__all__ = [
    "FormatResult",
    "UnsafeFormat",
    "discover",
    "equivalence_problem",
    "format_source",
    "format_text",
    "unified_diff",
]

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".aurane_cache", "__pycache__", "node_modules"})


class UnsafeFormat(Exception):
    """The formatted text would not mean the same program: a formatter bug, never applied."""


@record
class FormatResult:
    source: str
    output: str | None = None  # None: not formatted (see diagnostics / error)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # the safety check refused the result

    @property
    def changed(self) -> bool:
        return self.output is not None and self.output != self.source


def format_text(text: str, filename: str = "<input>") -> str:
    """The formatted text, unchecked; raises ValueError when ``text`` does not parse."""
    program, diagnostics = parse_program(text, filename)
    if program is None or has_errors(diagnostics):
        raise ValueError(f"{filename} does not parse")
    return layout_program(program, text)


def format_source(text: str, filename: str = "<input>", *, safe: bool = True) -> FormatResult:
    """Format ``text``; the result carries the new text only when it passed the safety check."""
    program, diagnostics = parse_program(text, filename)
    if program is None or has_errors(diagnostics):
        return FormatResult(text, diagnostics=diagnostics)
    output = layout_program(program, text)
    if output == text or not safe:
        return FormatResult(text, output)
    problem = equivalence_problem(text, output, filename)
    if problem is not None:
        return FormatResult(text, error=f"{filename}: refusing to format: {problem}")
    return FormatResult(text, output)


def equivalence_problem(before: str, after: str, filename: str = "<input>") -> str | None:
    """Why ``after`` is not the same program as ``before``, or None when it is."""
    from aurane.frontend import run_front_end

    new = run_front_end(after, filename)
    if new.program is None or new.failed_stage == "parse":
        return "the formatted text does not parse (this is a formatter bug)"
    old = run_front_end(before, filename)
    assert old.program is not None
    if program_structure(old.program) != program_structure(new.program):
        return "the formatted text parses to a different AST (this is a formatter bug)"
    if [d.code for d in old.diagnostics] != [d.code for d in new.diagnostics]:
        return "the formatted text gives different diagnostics (this is a formatter bug)"
    if graphs_structure(old.graphs) != graphs_structure(new.graphs):
        return "the formatted text lowers to a different IR (this is a formatter bug)"
    return None


def program_structure(program: ast.AuraneProgram) -> Any:
    """Span-free AST; comments compared without trailing blanks (the formatter strips them)."""
    comments = tuple(records.replace(c, text=c.text.rstrip(" \t")) for c in program.comments)
    return strip_spans(records.replace(program, comments=comments))


def graphs_structure(graphs: dict[str, Any]) -> Any:
    return {name: _no_spans(graph.to_json()) for name, graph in graphs.items()}


def _no_spans(value: Any) -> Any:
    if isinstance(value, dict):
        # an origin's text says where its loop is: formatting may move that line
        skipped = ("span", "arg_spans", "origin")
        return {k: _no_spans(v) for k, v in value.items() if k not in skipped}
    if isinstance(value, list):
        return [_no_spans(v) for v in value]
    return value


def unified_diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{path} (original)",
        tofile=f"{path} (formatted)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def discover(path: Path) -> Iterator[Path]:
    """``.aur`` files under ``path`` in a stable order, never following symlinks and skipping
    VCS folders, caches and virtual environments."""
    if not path.is_dir():
        yield path
        return
    for root, dirs, files in os.walk(path, followlinks=False):
        here = Path(root)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIP_DIRS
            and not (here / d).is_symlink()
            and not (here / d / "pyvenv.cfg").exists()
        )
        for name in sorted(files):
            candidate = here / name
            if name.endswith(".aur") and not candidate.is_symlink():
                yield candidate
