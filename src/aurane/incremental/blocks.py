"""One block: its text parsed alone at line 1, with the names it defines and mentions."""

from __future__ import annotations

from typing import Any

from aurane import ops, records
from aurane.diagnostics import Diagnostic
from aurane.incremental.pieces import open_at_end
from aurane.incremental.spans import init_fields
from aurane.records import record
from aurane.semantics import config
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.parser import parse_program

_KNOWN_WORDS = frozenset(
    {
        *ops.CATALOG,
        *ops.ALIASES,
        *config.LOSS_TABLE,
        *config.OPTIMIZER_TABLE,
        *config.SCHEDULER_TABLE,
        *config.CALLBACK_TABLE,
        *config.METRICS,
        *config.TRANSFORMS,
        *config.DTYPES,
        "true",
        "false",
        "none",
        "True",
        "False",
        "None",
    }
)


@record(frozen=True)
class Parsed:
    """A block parsed alone at line 1, with the names it defines and mentions."""

    statements: tuple[ast.Statement, ...]
    comments: tuple[ast.Comment, ...]
    diagnostics: tuple[Diagnostic, ...]
    defines: frozenset[str]
    mentions: frozenset[str]
    unknown: frozenset[str]  # mentions that are neither local nor a catalog word
    is_global: bool
    is_model: str | None
    open_end: bool  # the last line leaves a bracket open: see ``open_at_end``


@record(frozen=True)
class Block:
    start: int  # first line (1-based)
    text: str
    parsed: Parsed
    statements: tuple[ast.Statement, ...]  # at their place in the document
    comments: tuple[ast.Comment, ...]
    diagnostics: tuple[Diagnostic, ...]


def parse_block(text: str) -> Parsed:
    program, found = parse_program(text)
    statements = program.statements if program is not None else ()
    comments = program.comments if program is not None else ()
    defines: set[str] = set()
    mentions: set[str] = set()
    local: set[str] = set()
    is_global = False
    model: str | None = None
    for stmt in statements:
        match stmt:
            case ast.Constant() | ast.Dataset():
                defines.add(stmt.name)
            case ast.Model():
                defines.add(stmt.name)
                model = stmt.name
            case ast.Use() | ast.Experiment():
                is_global = True
        _names(stmt, mentions, local)
    unknown = frozenset(
        n for n in mentions - local - defines if n not in _KNOWN_WORDS and "." not in n
    )
    return Parsed(
        statements,
        comments,
        tuple(found),
        frozenset(defines),
        frozenset(mentions),
        unknown,
        is_global,
        model,
        # an open bracket at the end is always a syntax error: error-free blocks skip this
        bool(found) and open_at_end(text),
    )


def _names(node: Any, mentions: set[str], local: set[str]) -> None:
    """Every name ``node`` refers to (``mentions``) and binds locally (``local``)."""
    kind = type(node)
    if kind is tuple:
        for item in node:
            _names(item, mentions, local)
        return
    if kind is ast.Name:
        mentions.add(node.id)
        mentions.add(node.id.split(".", 1)[0])
        return
    if kind is ast.Call:
        mentions.add(node.func)
        mentions.add(node.func.split(".", 1)[0])
    elif kind is ast.Suffix:
        mentions.add(node.name)
    elif kind is ast.Assign:
        local.add(node.target)
        local.update(name for name, _ in node.targets)
    elif kind is ast.Field or kind is ast.ModelParam:
        local.add(node.name)
    elif kind is ast.Forward:
        local.add(node.param)
    elif kind is ast.ForwardParam:  # every input of def forward(ids, mask=ones)
        local.add(node.name)
    elif kind in (ast.Number, ast.String, ast.Bool, ast.NoneLit) or kind is Span:
        return
    for name in init_fields(node):
        value = getattr(node, name)
        if isinstance(value, tuple) or records.is_record(value):
            _names(value, mentions, local)
