"""Silencing lint: ``# aurane: ignore[L201]`` on a line, and ``aurane.toml``.

A comment ``# aurane: ignore[L201, W003]`` silences those codes on its statement's lines (the
physical lines of the logical line it sits on, so one comment covers a chain broken over
several lines); a bare ``# aurane: ignore`` silences every lint code there. Codes that
report a program that does not parse (E001) are never silenced.

``aurane.toml``, found in the linted file's folder or the nearest folder above it::

    [lint]
    ignore = ["L201"]              # these codes, in every file
    [lint.per-file-ignores]
    "examples/vgg*.aur" = ["W003"] # these, in the files the pattern matches (from the toml's
                                   # folder, fnmatch rules: * also matches '/')

Python 3.11 reads it with ``tomllib``; on 3.10 the package ``tomli`` is used when it is
installed, and otherwise the file is skipped with a warning (docs/tools.md).
"""

from __future__ import annotations

import fnmatch
import importlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aurane.diagnostics import Diagnostic
from aurane.records import field, record
from aurane.syntax.tokens import tokenize

CONFIG_NAME = "aurane.toml"
MAX_CONFIG_BYTES = 256 * 1024
NEVER_SILENCED = frozenset({"E001"})
_IGNORE = re.compile(r"#\s*aurane:\s*ignore(?:\[([^\]]*)\])?(?=\s|$)")
_CODE = re.compile(r"[A-Z][0-9]{3}\Z")


class ConfigError(Exception):
    """``aurane.toml`` cannot be read or holds something lint does not know."""


@record
class LintConfig:
    ignore: frozenset[str] = frozenset()
    per_file: tuple[tuple[str, frozenset[str]], ...] = ()  # (pattern, codes)
    root: Path | None = None  # the folder of the aurane.toml
    warning: str | None = None  # why the file was skipped (3.10 without tomli)
    source: Path | None = None

    def ignored(self, file: Path) -> frozenset[str]:
        """The codes silenced in ``file``."""
        codes = set(self.ignore)
        if self.root is not None:
            try:
                relative = file.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                relative = file.as_posix()
            for pattern, more in self.per_file:
                if fnmatch.fnmatchcase(relative, pattern):
                    codes |= more
        return frozenset(codes)


@record
class Suppressions:
    """Codes silenced per physical line (None: every code)."""

    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)

    def silences(self, diagnostic: Diagnostic) -> bool:
        if diagnostic.code in NEVER_SILENCED or diagnostic.span is None:
            return False
        if diagnostic.span.line not in self.lines:
            return False
        codes = self.lines[diagnostic.span.line]
        return codes is None or diagnostic.code in codes


def suppressions(text: str) -> Suppressions:
    """Where ``# aurane: ignore[...]`` comments silence which codes."""
    tokenized = tokenize(text[1:] if text.startswith("\ufeff") else text)
    extents = [(ln.tokens[0].line, ln.tokens[-1].line) for ln in tokenized.lines]
    out = Suppressions()
    for comment in tokenized.comments:
        found = _IGNORE.search(comment.text)
        if found is None:
            continue
        codes: frozenset[str] | None = None
        if found.group(1) is not None:
            codes = frozenset(c.strip().upper() for c in found.group(1).split(",") if c.strip())
        line = comment.span.line
        first, last = next(((a, b) for a, b in extents if a <= line <= b), (line, line))
        for number in range(first, last + 1):
            previous = out.lines.get(number, frozenset())
            out.lines[number] = None if codes is None or previous is None else previous | codes
    return out


def drop_silenced(
    found: Iterable[Diagnostic], text: str, ignore: frozenset[str] = frozenset()
) -> list[Diagnostic]:
    """``found`` without what the file's comments or ``ignore`` silence."""
    marks = suppressions(text)
    return [
        d
        for d in found
        if not (d.code in ignore and d.code not in NEVER_SILENCED) and not marks.silences(d)
    ]


def find_config(start: Path) -> Path | None:
    """The ``aurane.toml`` in ``start``'s folder or the nearest folder above it."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        path = candidate / CONFIG_NAME
        if path.is_file():
            return path
    return None


def load_config(path: Path) -> LintConfig:
    """``path``'s ``[lint]`` table; raises ``ConfigError`` naming what is wrong."""
    loads = _toml_reader()
    if loads is None:
        return LintConfig(
            warning=f"{path}: skipped: reading aurane.toml on Python 3.10 needs the 'tomli' "
            "package (pip install tomli)",
            source=path,
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror or error}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
    try:
        table = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    lint = table.get("lint", {})
    if not isinstance(lint, dict):
        raise ConfigError(f"{path}: [lint] must be a table")
    unknown = sorted(set(lint) - {"ignore", "per-file-ignores"})
    if unknown:
        raise ConfigError(f"{path}: unknown [lint] key '{unknown[0]}' (ignore, per-file-ignores)")
    ignore = _codes(lint.get("ignore", []), f"{path}: lint.ignore")
    per_file: list[tuple[str, frozenset[str]]] = []
    patterns = lint.get("per-file-ignores", {})
    if not isinstance(patterns, dict):
        raise ConfigError(f"{path}: [lint.per-file-ignores] must be a table")
    for pattern, codes in patterns.items():
        per_file.append((pattern, _codes(codes, f"{path}: per-file-ignores '{pattern}'")))
    return LintConfig(ignore, tuple(per_file), path.parent, None, path)


def _codes(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ConfigError(f'{where} must be a list of codes such as ["L201"]')
    codes = frozenset(c.strip().upper() for c in value)
    bad = sorted(c for c in codes if not _CODE.match(c))
    if bad:
        raise ConfigError(f"{where}: '{bad[0]}' is not a code such as L201")
    return codes


def _toml_reader() -> Any:
    """``tomllib.loads`` (3.11+), else ``tomli``'s (3.10), else None."""
    for name in ("tomllib", "tomli"):
        try:
            return importlib.import_module(name).loads
        except ModuleNotFoundError:
            continue
    return None
