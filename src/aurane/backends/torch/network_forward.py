"""A network's forward written with the source's loops, by the block roller's writer
(``rolled_forward.py``), for variants whose own forwards differ because they run a loop
a different number of times (``Net(4, 2)`` against ``Net(6, 3)``, a loop threading a
second tensor, ``h = x -> ... as convs{i}``, ``x = add(x, h)``): each variant's unrolled
forward is rolled along its graph and all must read alike, the loop reading the
network's parameters from the module (``for i in range(self.n):``, ``h =
getattr(self, f"convs{i}")(x)``), which the constructor then stores (``self.n = n``).
``rolled.roll`` asks for it (``looped``) where the variants' own forwards differ."""

from __future__ import annotations

import re
from collections.abc import Container, Mapping
from typing import Any

from aurane.backends.torch.modules import INDENT, attribute_namespace
from aurane.backends.torch.rolled import (
    BranchCount,
    Counts,
    Triangle,
    Unsupported,
    _fill,
    enumerated,
    without_empty_branches,
)
from aurane.backends.torch.rolled_forward import (
    SelfTranslator,
    rolled_forward,
    shared_forward,
)
from aurane.backends.torch.untaken import kind_blind
from aurane.ir.graph import Graph
from aurane.source import Span
from aurane.syntax import ast


def looped_forward(
    network: ast.Model,
    variants: list[tuple[Graph, str, Mapping[str, Any]]],
    loops: set[str],
    names: list[str],
    inits: list[str],
    paths: Mapping[Span, str],
    counted: Mapping[Span, Counts],
    constants: Mapping[str, ast.Expr],
    indices: Mapping[Span, str],
    counted_loops: tuple[Triangle, ...] = (),
    dropped: Container[str] = (),
    running_counts: tuple[BranchCount, ...] = (),
) -> tuple[list[str], list[str]]:
    """The shared forward (after a blank line, as ``rolled._shared_methods`` gives it) and
    the constructor's lines storing what it reads; ``variants``: each one's graph, class
    text and values; ``names``: the network's constants and parameters; ``counted``: the
    inner loop whose count names an unnamed module in nested loops; ``constants``:
    the module's (``scales[i]`` an argument in a loop: ``[0.5, 1.0][i]``); ``indices``: the
    count of each loop over items whose count names a module (``for i, w in
    enumerate(self.widths)``); ``counted_loops``: the triangles of loops whose running
    counts name modules (``n``); ``dropped``: the bodies no variant runs, which the
    class refuses to build (``rolled._fill``); ``running_counts``: those of the modules
    the branches taken made (``rolled.BranchCount``), which name later unnamed ones."""
    attrs = attribute_namespace()  # not a module's name, nor an nn.Module attribute
    attrs.claim(n.layer.split(".")[0] for g, _, _ in variants for n in g.nodes if n.layer)
    attrs.claim(n.id for g, _, _ in variants for n in g.nodes)
    attrs.claim(re.findall(r"self\.(\w+)", "\n".join(inits)))
    tr = SelfTranslator(frozenset(loops), constants, set(names), attrs, {})
    tr.triangles = counted_loops
    tr.branch_counts = running_counts
    # the parameters a boolean and a number may both reach (``pyexpr.kind_compare``)
    tr.mixed = kind_blind(network)
    branches: dict[str, list[str]] = {}  # each branch's body, from any variant
    methods = []
    checks: set[tuple[str, ...]] = set()
    for graph, text, values in variants:
        check, lines = _dtype_checks(text.split("\n"))
        checks.add(tuple(check))
        methods.append(
            rolled_forward(network, graph, lines, tr, values, branches, paths, counted, indices)
        )
    if len(checks) != 1:
        raise Unsupported("the variants check their inputs' dtypes differently")
    body = enumerated(_fill(shared_forward(methods), branches, dropped))
    if dropped:  # a loop or else left without its body goes with it
        body = without_empty_branches(body)
    body = _checked(body, list(checks.pop()))
    # a value read only by a body no variant runs (dropped above) is stored by no one
    read = set(re.findall(r"\bself\.(\w+)", "\n".join(body)))
    stored = sorted((attr, name) for attr, name in tr.read.items() if attr in read)
    stores = [f"{INDENT * 2}self.{attr} = {name}" for attr, name in stored]
    return ["", *_shared_init_weights([text for _, text, _ in variants]), *body], stores


def _shared_init_weights(texts: list[str]) -> list[str]:
    """The variants' ``_init_weights`` with the blank line after it, none where they have
    none; its rules name module classes, not sizes, so every variant writes it alike."""
    methods = {tuple(_init_weights(text.split("\n"))) for text in texts}
    if len(methods) != 1:
        raise Unsupported("the variants' _init_weights methods differ")
    return list(methods.pop())


def _init_weights(lines: list[str]) -> list[str]:
    """A class's ``_init_weights``, up to the method after it."""
    start = next(
        (i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def _init_weights")),
        None,
    )
    if start is None:
        return []
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(f"{INDENT}def "))
    return lines[start:end]


_DTYPE_CHECK = re.compile(rf"{INDENT * 2}if \w+\.dtype != torch\.\w+:")


def _dtype_checks(lines: list[str]) -> tuple[list[str], list[str]]:
    """A class's input dtype checks at the top of forward (``if x.dtype != torch.int64:``
    and its ``raise``, naming ``type(self)``), and the lines without them: no layer's
    statement, so the loop writer does not see them."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward("))
    at = start + 1
    while at < len(lines) and lines[at].startswith(f"{INDENT * 2}#"):
        at += 1  # the inputs' shape comments
    end = at
    while end < len(lines) and _DTYPE_CHECK.fullmatch(lines[end]):
        end += 1
        while end < len(lines) and lines[end].startswith(INDENT * 3):
            end += 1  # the raise, on one line or several
    return lines[at:end], lines[:at] + lines[end:]


def _checked(body: list[str], checks: list[str]) -> list[str]:
    """The shared forward with the checks back after its head and input comments."""
    at = 1
    while at < len(body) and body[at].startswith(f"{INDENT * 2}#"):
        at += 1
    return [*body[:at], *checks, *body[at:]]
