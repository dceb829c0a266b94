"""``use`` lines: what a program may import, and under which name (S019).

A ``use`` line becomes ``import module`` (or ``import module as alias``) at the top of the
generated program, so the name it binds lives among the names the generated code relies
on. ``check`` refuses, at the line's span, every ``use`` that ``compile`` could not emit
safely, so a program ``check`` accepts always compiles:

- a module path with a part Python cannot import: a keyword or a dunder (``use a.class``);
- an alias that would replace a keyword, builtin or name of the generated template or
  training runtime (``use os as rt``, ``use os as random``, ``use os as super``);
- an unaliased module called like a name the template binds to something else
  (``use nn`` would hide ``from torch import nn``) or like a builtin;
- in a program with datasets or training jobs, a module or alias called like a name the
  generated training code binds (``use seed`` + ``from seed.Data``: the loader factory's
  parameter ``seed`` would hide the module where the dataset is built; ``use os as
  train_net``: the job function would replace it).

Names are compared as Python reads them, after NFKC normalisation: ``use ｉmport`` is
``import import`` to Python, and refused. A module path must be ASCII once normalised
(``use ｏｓ`` is ``use os``; ``use оs`` with a Cyrillic ``о`` is refused: a look-alike).
"""

from __future__ import annotations

import builtins
import unicodedata

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.semantics.pynames import (
    BUILTINS,
    KEYWORDS,
    RUNTIME_NAMES,
    SOFT_KEYWORDS,
    TEMPLATE,
    TEMPLATE_ALIASES,
    TRAINING_NAMES,
)
from aurane.semantics.sources import non_ascii
from aurane.syntax import ast

# Names an alias may not take: everything a generated module binds or calls at its top.
_ALIAS_RESERVED = KEYWORDS | SOFT_KEYWORDS | BUILTINS | TEMPLATE | RUNTIME_NAMES
# The interpreter's own builtins as well as the fixed table ("type" is both).
_BUILTINS = BUILTINS | frozenset(dir(builtins)) | {"type"}


def nfkc(name: str) -> str:
    """``name`` as Python reads it: identifiers are NFKC-normalised (PEP 3131)."""
    return unicodedata.normalize("NFKC", name)


def shown(name: str) -> str:
    """``'ｉmport' (Python reads 'import')`` when normalising changes the name."""
    read = nfkc(name)
    return f"'{name}'" if read == name else f"'{name}' (Python reads '{read}')"


def importable_path(module: str) -> bool:
    """Every part (normalised) is an identifier that is neither a keyword nor a dunder."""
    return all(
        part.isidentifier() and part not in KEYWORDS and not part.startswith("__")
        for part in nfkc(module).split(".")
    )


def training_function_names(program: ast.AuraneProgram) -> set[str]:
    """Module-level functions the training code defines: ``train_<model>``, loaders."""
    names = {f"_make_{nfkc(s.name)}_loader" for s in program.datasets}
    seen: dict[str, int] = {}
    for stmt in program.statements:
        if isinstance(stmt, ast.Train):
            base = nfkc(f"train_{stmt.model.id.lower()}")
        elif isinstance(stmt, ast.TrainGan):
            base = nfkc(f"train_gan_{stmt.generator.id.lower()}")
        else:
            continue
        seen[base] = seen.get(base, 0) + 1
        names.add(base if seen[base] == 1 else f"{base}_{seen[base]}")
    return names


def has_training_code(program: ast.AuraneProgram) -> bool:
    return any(isinstance(s, ast.Dataset | ast.Train | ast.TrainGan) for s in program.statements)


def check_uses(program: ast.AuraneProgram) -> list[Diagnostic]:
    """S019 for every ``use`` line the generated program could not import as written."""
    found: list[Diagnostic] = []
    hidden: set[str] = set()
    if has_training_code(program):
        hidden = {*TRAINING_NAMES, "_", *training_function_names(program)}
    for stmt in program.statements:
        if isinstance(stmt, ast.Use):
            problem = _use_problem(stmt, hidden)
            if problem is not None:
                found.append(problem)
    return found


def _use_problem(stmt: ast.Use, hidden: set[str]) -> Diagnostic | None:
    if not importable_path(stmt.module):
        return diag(
            "S019",
            f"{shown(stmt.module)} is not an importable module path",
            stmt.module_span,
            hint="a module path is dotted identifiers, none a Python keyword or a dunder",
        )
    foreign = non_ascii(nfkc(stmt.module))
    if foreign is not None:
        # `use оs` (Cyrillic о) would import a file that looks like os to a reader
        return diag(
            "S019",
            f"module path {shown(stmt.module)} has the non-ASCII letter {foreign}",
            stmt.module_span,
            hint="module names are ASCII; retype the name if it was pasted",
        )
    if stmt.alias is not None and stmt.alias_span is not None:
        alias = nfkc(stmt.alias)
        if alias.startswith("__") or not alias.isidentifier() or alias in _ALIAS_RESERVED:
            return diag(
                "S019",
                f"alias {shown(stmt.alias)} would replace a name the generated program uses",
                stmt.alias_span,
                hint="choose another alias",
            )
        if alias in hidden:
            # `def train_net` would replace the module, a parameter `model` hide it
            return diag(
                "S019",
                f"alias {shown(stmt.alias)} is a name the generated training code binds",
                stmt.alias_span,
                hint="choose another alias",
            )
        return None
    root = nfkc(stmt.module).split(".")[0]
    if root in TEMPLATE_ALIASES or root in _BUILTINS:
        return diag(
            "S019",
            f"module '{root}' would replace a name the generated program uses",
            stmt.module_span,
            hint=f"import it under another name: use {stmt.module} as ...",
        )
    if root in hidden:
        return diag(
            "S019",
            f"module '{root}' would be hidden by a name the generated training code binds",
            stmt.module_span,
            hint=f"import it under another name: use {stmt.module} as ...",
        )
    return None
