"""One class for a block whose calls chose different ``if`` branches (issue 24 item 3).

Compile-time ``if`` is resolved per call (``semantics/unroll.py``), so two calls of
``Bottleneck`` can lower to graphs that differ in structure: one has the ``downsample``
branch, the other not. Their classes (``param_blocks.py``) are written one per instance;
this module joins them into one class whose ``__init__`` and ``forward`` hold the branch as
a Python ``if`` on the constructor's parameters (``if stride != 1 or in_channels != 4 *
planes:``), the way torchvision writes its blocks.

How: each instance records which branch of each ``if`` it took (its nodes' ``origin``
frames). The instances are split on the first ``if`` they disagree about, each side is
joined recursively, and the two sides' statements are compared (``difflib``): statements
both have stay as they are, the others go under ``if <test>:`` / ``else:``. Each side of a
split therefore runs exactly the statements of its own instances' classes. The test is the
branch's condition printed as Python from the source (block parameters by name, ``x.shape[1]``
as the input size, the block's and the program's constants by their expression); before it is used it is
evaluated for every instance and must give the branch that instance took, so a condition
the printer cannot write, a branch that made no layer, or a class that differs for another
reason (an operation-valued argument) leaves the classes apart (``Block_2``), as before.
"""

from __future__ import annotations

import ast as pyast
import difflib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aurane.backends.torch.emit_common import Call
from aurane.backends.torch.modules import LINE_LIMIT, _parse_call, nested
from aurane.backends.torch.pyexpr import (
    ATOM,
    NotPython,
    Printed,
    kind_compare,
    negation,
    python_text,
)
from aurane.ir.graph import Graph
from aurane.records import record
from aurane.semantics.symbolic import (
    PRINTED,
    InputSize,
    Leaf,
    Ref,
    plain,
    table_constants,
    table_name,
)
from aurane.semantics.symbolic import _make_divisible as make_divisible
from aurane.syntax import ast

INDENT = "    "
Naming = Callable[[Leaf], str]


@record(frozen=True)
class Test:
    """One ``if`` branch's test, as the constructor and as forward write it."""

    init: str
    forward: str


class Conditions:
    """The ``if`` statements of one block's forward body and their tests as Python."""

    def __init__(
        self,
        model: ast.Model,
        constants: Mapping[str, ast.Expr] | None = None,
        rank: int | None = None,
        mixed: frozenset[str] = frozenset(),
    ) -> None:
        """``rank``: the rank of the block's input sample where every call gives it alike,
        so a test may read any axis of it (``x.shape[-1]``); else only ``x.shape[1]``.
        ``mixed``: the parameters a boolean and a number may both reach (``kind_compare``)."""
        self.model = model
        self.rank = rank
        self.mixed = mixed
        self.params = {p.name for p in model.params}
        # the block's constants, then the program's (a parameter hides both)
        self.locals = {**(constants or {}), **{f.name: f.value for f in model.fields}}
        for name in self.params:
            self.locals.pop(name, None)
        self.ifs: list[ast.If] = []
        self.supported = model.forward is not None and self._collect(model.forward.body, False)

    def _collect(self, body: tuple[ast.ForwardStmt, ...], in_loop: bool) -> bool:
        for stmt in body:
            if isinstance(stmt, ast.If):
                if in_loop:
                    return False  # one decision per iteration: not joined
                self.ifs.append(stmt)
                for branch in stmt.branches:
                    if not self._collect(branch.body, in_loop):
                        return False
            elif isinstance(stmt, ast.For) and not self._collect(stmt.body, True):
                return False
        return True

    def decisions(self, graph: Graph) -> tuple[int, ...]:
        """Per ``if``: the index of the branch this instance took, -1 for none."""
        taken = {frame.span for node in graph.nodes for frame in node.origin}
        out = []
        for stmt in self.ifs:
            chosen = [i for i, b in enumerate(stmt.branches) if b.header_span in taken]
            out.append(chosen[0] if chosen else -1)
        return tuple(out)

    def test(self, if_index: int, branch: int, init: Naming, forward: Naming) -> Test | None:
        expr = self.ifs[if_index].branches[branch].test
        if expr is None:
            return None
        param = self.model.forward.param if self.model.forward is not None else "x"
        first = _python(expr, init, self.params, self.locals, param, self.rank, self.mixed)
        second = _python(expr, forward, self.params, self.locals, param, self.rank, self.mixed)
        if first is None or second is None:
            return None
        return Test(first, second)


def _python(
    expr: ast.Expr,
    name: Naming,
    params: set[str],
    local: dict[str, ast.Expr],
    x: str,
    rank: int | None = None,
    mixed: frozenset[str] = frozenset(),
) -> str | None:
    """``expr`` as Python, or None where it reads something this printer cannot write.
    ``x.shape[k]`` is an axis of the input (``InputSize(k - 1)``; a negative ``k`` counts
    from the end of a sample of ``rank`` axes); ``mixed``: parameters compared by kind too
    (``pyexpr.kind_compare``)."""
    expanding: set[str] = set()  # the constants being written: a cycle is not written

    def leaf(e: ast.Expr, text: Callable[[ast.Expr], Printed]) -> Printed | None:
        match e:
            case ast.Compare() | ast.BoolOp() if kinded := kind_compare(e, text, mixed):
                return kinded
            case ast.Name(id=ident) if ident in params:
                return name(Ref(ident)), ATOM
            case ast.Name(id=ident) if ident in local and ident not in expanding:
                expanding.add(ident)
                found = text(local[ident])
                expanding.discard(ident)
                named = table_name(found[0])  # a table written once, a module constant
                return (named, ATOM) if named != found[0] else found
            case ast.Subscript(value=ast.Name(id=ident), index=index) if ident == f"{x}.shape":
                axis = _input_axis(index, rank)
                return (name(InputSize(axis)), ATOM) if axis is not None else None
        return None

    try:
        return python_text(expr, leaf, PRINTED)
    except NotPython:
        return None


def _input_axis(index: ast.Expr, rank: int | None) -> int | None:
    """The sample axis ``x.shape[index]`` reads (axis 0 of the sample is ``x.shape[1]``),
    None for the batch axis or an index this printer cannot place."""
    match index:
        case ast.Number(value=int(position)):
            pass
        case ast.UnaryOp(op="-", operand=ast.Number(value=int(position))):
            position = -position
        case _:
            return None
    if rank is None:
        return 0 if position == 1 else None
    if not -(rank + 1) <= position <= rank or position % (rank + 1) == 0:
        return None
    return position % (rank + 1) - 1


def holds(test: str, graph: Graph, input_names: Sequence[str]) -> bool | None:
    """The value of the constructor's ``test`` for this instance (None: not computable)."""
    env: dict[str, Any] = {**plain(dict(graph.block_defaults)), **plain(dict(graph.block_args))}
    shape = graph.input_value.sample_shape or ()
    for axis, input_name in enumerate(input_names):
        if axis < len(shape):
            env[input_name] = shape[axis]
    functions = {"make_divisible": make_divisible, "math": math, **table_constants()}
    try:
        value = eval(test, {"__builtins__": {}, **_BUILTINS, **functions}, env)  # noqa: S307
    except Exception:  # a name the instance does not give, an unsupported value
        return None
    return bool(value)


# (isinstance and bool: a test of a parameter given booleans and numbers, kind_compare)
_BUILTINS = {"min": min, "max": max, "abs": abs, "int": int, "round": round}
_BUILTINS |= {"isinstance": isinstance, "bool": bool}


@record(frozen=True)
class Untaken:
    """A way through one ``if`` that no call of a joined class takes: the constructor's
    test for arguments that would take it, and where it is."""

    test: str
    what: str  # "the branch at 6:9", "the way past every branch of the if at 3:9"
    together: bool = False  # branches of ifs outside one another, each taken apart


def if_parents(conditions: Conditions) -> dict[int, tuple[int, int] | None]:
    """Per ``if`` (its index in ``conditions.ifs``): the ``if`` and branch it is written
    in, None for one outside every ``if``."""
    parents: dict[int, tuple[int, int] | None] = {}
    index = {id(stmt): i for i, stmt in enumerate(conditions.ifs)}

    def walk(body: tuple[ast.ForwardStmt, ...], parent: tuple[int, int] | None) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                parents[index[id(stmt)]] = parent
                for number, branch in enumerate(stmt.branches):
                    walk(branch.body, (index[id(stmt)], number))
            elif isinstance(stmt, ast.For):
                walk(stmt.body, parent)

    walk(conditions.model.forward.body if conditions.model.forward is not None else (), None)
    return parents


def runs_if(
    parents: Mapping[int, tuple[int, int] | None], decisions: tuple[int, ...], at: int
) -> bool:
    """Whether an instance deciding ``decisions`` runs the ``if`` ``at`` (``if_parents``)."""
    parent = parents.get(at)
    return parent is None or (
        decisions[parent[0]] == parent[1] and runs_if(parents, decisions, parent[0])
    )


def untaken_ways(
    conditions: Conditions,
    decided: Sequence[tuple[int, ...]],
    test: Callable[[int, int], Test | None],
) -> list[Untaken] | None:
    """Each branch of each ``if`` that no instance takes (with ``decided``, their
    ``Conditions.decisions``), and running none where an ``if`` without ``else`` runs one
    at every instance: a class joined over the branches taken writes such a way as one of
    theirs (``else:`` holds whatever the first branch's test leaves), so it must refuse
    the arguments that take it. An ``if`` inside a branch counts the instances that reach
    it and is tested with the tests that lead there. None where a test cannot be written."""
    ifs = conditions.ifs
    parents = if_parents(conditions)

    def reaches(decisions: tuple[int, ...], at: int) -> bool:
        return runs_if(parents, decisions, at)

    def way(at: int, number: int) -> list[str] | None:
        """The tests under which ``ifs[at]`` runs its branch ``number`` (none: past the last)."""
        parts = []
        for before in range(min(number, len(ifs[at].branches))):
            found = test(at, before)
            if found is None:
                return None
            parts.append(_operand(negation(found.init)))
        if number < len(ifs[at].branches) and ifs[at].branches[number].test is not None:
            found = test(at, number)
            if found is None:
                return None
            parts.append(_operand(found.init))
        return parts

    def path(at: int) -> list[str] | None:
        parent = parents.get(at)
        if parent is None:
            return []
        above, own = path(parent[0]), way(*parent)
        return None if above is None or own is None else above + own

    out: list[Untaken] = []
    for at, stmt in enumerate(ifs):
        reached = {d[at] for d in decided if reaches(d, at)}
        if not reached:
            continue  # no instance gets here: the ways above refuse what would
        count = len(stmt.branches)
        numbers = list(range(count)) + ([] if stmt.branches[-1].test is None else [count])
        for number in numbers:
            if (-1 if number == count else number) in reached:
                continue
            above, own = path(at), way(at, number)
            if above is None or own is None:
                return None
            if number == count:
                span = stmt.span
                what = f"the way past every branch of the if at {span.line}:{span.column}"
            else:
                span = stmt.branches[number].header_span
                what = f"the branch at {span.line}:{span.column}"
            out.append(Untaken(" and ".join([*above, *own]) or "True", what))
    together = _untaken_together(conditions, decided, parents, way)
    return None if together is None else out + together


_MOST_COMBINATIONS = 64  # ways through the ifs outside one another a guard lists at most


def _untaken_together(
    conditions: Conditions,
    decided: Sequence[tuple[int, ...]],
    parents: Mapping[int, tuple[int, int] | None],
    way: Callable[[int, int], list[str] | None],
) -> list[Untaken] | None:
    """The combinations of branches of the ``if`` statements outside one another that no
    instance takes together, though each branch is taken by some (``if a: ... if b:`` at
    ``(true, false)``, ``(false, false)`` and ``(true, true)``: the join tests ``b`` only
    under ``a``, so ``(false, true)`` would run ``(false, false)``'s statements). None
    where they cannot be written (an ``if`` inside another among them, or too many)."""
    tops = [at for at, parent in parents.items() if parent is None]
    if len(tops) < 2:
        return []
    taken = {tuple(d[at] for at in tops) for d in decided}
    options = [sorted({d[at] for d in decided}) for at in tops]
    every: list[tuple[int, ...]] = [()]
    for choices in options:
        every = [(*combo, choice) for combo in every for choice in choices]
    # ifs testing the same (``if grid:`` twice) decide alike: no way takes them apart
    tests = [
        tuple(tuple(way(at, k) or ()) for k in range(len(conditions.ifs[at].branches) + 1))
        for at in tops
    ]
    tied = [(i, j) for i in range(len(tops)) for j in range(i) if tests[i] == tests[j]]
    missing = [
        combo
        for combo in every
        if combo not in taken and all(combo[i] == combo[j] for i, j in tied)
    ]
    if not missing:
        return []
    if len(tops) < len(parents) or len(every) > _MOST_COMBINATIONS:
        return None
    out = []
    for combo in missing:
        parts: list[str] = []
        spans = []
        for at, chosen in zip(tops, combo, strict=True):
            stmt = conditions.ifs[at]
            number = len(stmt.branches) if chosen == -1 else chosen
            own = way(at, number)
            if own is None:
                return None
            parts += own
            span = stmt.span if chosen == -1 else stmt.branches[chosen].header_span
            spans.append(f"{span.line}:{span.column}")
        what = f"the ways at {', '.join(spans)} together"  # no call takes them
        out.append(Untaken(" and ".join(parts), what, together=True))
    return out


def nests_tests(lines: Sequence[str]) -> bool:
    """Whether the joined class ``lines`` test an ``if`` inside another's branch: a
    class whose tests all stand apart decides each as the source does, whatever the
    others decide, so only a nested one can take branches together that no call did."""
    return any(re.match(rf"{INDENT * 3}\s*(?:if|elif) ", line) for line in lines)


def _operand(text: str) -> str:
    """``text`` as an operand of ``and``: in parentheses where it is an ``or`` (a negated
    ``not (a or b)`` reads ``a or b``) or looser; an ``and`` joins the others as it is."""
    tree = pyast.parse(text, mode="eval").body
    loose = isinstance(tree, pyast.IfExp | pyast.Lambda | pyast.NamedExpr) or (
        isinstance(tree, pyast.BoolOp) and isinstance(tree.op, pyast.Or)
    )
    return f"({text})" if loose else text


# -- joining class texts ------------------------------------------------------------------


@record(frozen=True)
class Parts:
    """A generated class cut where instances may differ: the constructor's statements and
    forward's, between lines that must be equal."""

    head: tuple[str, ...]  # class line, def __init__, super().__init__()
    init: tuple[tuple[str, ...], ...]  # statements (each one or more lines)
    middle: tuple[str, ...]  # blank line, _init_weights, def forward(...)
    forward: tuple[tuple[str, ...], ...]


def cut(lines: list[str]) -> Parts | None:
    try:
        start = lines.index(f"{INDENT * 2}super().__init__()") + 1
        blank = lines.index("", start)
        body = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward("))
    except (ValueError, StopIteration):
        return None
    forward_start = next(
        (i for i in range(body, len(lines)) if lines[i].startswith(INDENT * 2)), len(lines)
    )
    return Parts(
        tuple(lines[:start]),
        _statements(lines[start:blank]),
        tuple(lines[blank:forward_start]),
        _statements(lines[forward_start:]),
    )


def middle(parts: Sequence[Parts]) -> tuple[str, ...] | None:
    """The lines between ``__init__`` and forward's body of a class joined from ``parts``:
    theirs where they read alike, or the one ``_init_weights`` some of them have where the
    others have none (a layer with ``init=`` in one branch only; only the constructors of
    those instances call it). None where they differ otherwise."""
    methods: set[tuple[str, ...]] = set()
    rests: set[tuple[str, ...]] = set()
    for part in parts:
        head = f"{INDENT}def _init_weights(self):"
        if head in part.middle:
            start = part.middle.index(head)
            end = part.middle.index("", start)
            methods.add(part.middle[:end])
            rests.add(part.middle[end:])
        else:
            rests.add(part.middle)
    rest = _widest(rests)
    if rest is None or len(methods) > 1:
        return None
    return (*methods.pop(), *rest) if methods else rest


def _widest(rests: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The one forward head of ``rests`` (the lines up to ``def forward(...)``), or the
    widest where only their forward heads differ (``widest_head``)."""
    if len(rests) == 1:
        return next(iter(rests))
    if len({rest[:-1] for rest in rests}) != 1:
        return None
    head = widest_head({rest[-1] for rest in rests})
    return next(rest for rest in rests if rest[-1] == head) if head is not None else None


def widest_head(heads: set[str]) -> str | None:
    """The one ``def forward(...)`` line of ``heads``, or the widest where they differ
    only by trailing parameters that default to None (``padding_mask=None`` of a branch
    or loop with attention): the forwards without them never read them, and a caller
    that passes none gets the default. None where they differ otherwise."""
    found = [_forward_params(head) for head in heads]
    signatures = sorted((s for s in found if s is not None), key=len)
    if not signatures or len(signatures) != len(found):
        return None
    widest = signatures[-1]
    for signature in signatures:
        extra = widest[len(signature) :]
        if widest[: len(signature)] != signature or not all(p.endswith("=None") for p in extra):
            return None
    return max(heads, key=len)


def _forward_params(line: str) -> tuple[str, ...] | None:
    head = f"{INDENT}def forward("
    if not line.startswith(head) or not line.endswith("):"):
        return None
    return tuple(p.strip() for p in line[len(head) : -2].split(","))


def _statements(lines: list[str]) -> tuple[tuple[str, ...], ...]:
    out: list[list[str]] = []
    for line in lines:
        top = line.startswith(INDENT * 2) and not line.startswith(INDENT * 3)
        if top and line.strip()[:1] not in (")", "]", "}") and not _after_comment(out):
            out.append([line])
        else:
            out[-1].append(line)
    # a comment line of its own belongs to the statement after it
    return tuple(tuple(s) for s in out)


def _after_comment(out: list[list[str]]) -> bool:
    return bool(out) and out[-1][-1].strip().startswith("#")


def _key(statement: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(
        line.partition("  # ")[0] for line in statement if not line.strip().startswith("#")
    )


def _bare(statement: tuple[str, ...]) -> tuple[str, ...]:
    """The statement without its shape comments (they differ between the instances)."""
    return _key(statement)


uncommented = _bare  # a phantom's statement, whose shapes are no call's


Member = tuple[tuple[int, ...], tuple[tuple[str, ...], ...]]  # decisions, statements


def join(
    members: list[Member], test: Callable[[int, int], str | None], list_name: str = "layers"
) -> list[tuple[str, ...]] | None:
    """The statements of one class running each member's statements on its decisions;
    ``test(if_index, branch)`` is the branch's condition. None where it cannot."""
    keys = {tuple(_key(s) for s in stmts) for _, stmts in members}
    if len(keys) == 1:
        first = members[0][1]
        same = all(stmts == first for _, stmts in members)
        return [s if same else _bare(s) for s in first]
    relevant = _relevant(members)
    split = next((i for i in relevant if len({d[i] for d, _ in members}) > 1), None)
    if split is None:
        return None  # the same branches, different classes: something else differs
    chosen = min(d[split] for d, _ in members if d[split] >= 0)
    condition = test(split, chosen)
    if condition is None:
        return None
    taken = join([m for m in members if m[0][split] == chosen], test, list_name)
    other = join([m for m in members if m[0][split] != chosen], test, list_name)
    if taken is None or other is None:
        return None
    return _merge(taken, other, condition, list_name)


def _relevant(members: list[Member]) -> list[int]:
    """The ``if`` statements this part of the class depends on. An ``if`` is left out when
    members that decide every other ``if`` alike, and this one differently, have the same
    statements (and some such members exist): forward then does not test what only
    ``__init__`` needs. Mere correlation between two ``if`` statements never drops one."""
    keep = list(range(len(members[0][0])))
    for index in range(len(keep)):
        others = [k for k in keep if k != index]
        seen: dict[tuple[int, ...], dict[int, tuple[tuple[str, ...], ...]]] = {}
        for decisions, statements in members:
            key = tuple(decisions[k] for k in others)
            text = tuple(_key(s) for s in statements)
            seen.setdefault(key, {}).setdefault(decisions[index], text)
        pairs = [texts for texts in seen.values() if len(texts) > 1]
        if pairs and all(len(set(texts.values())) == 1 for texts in pairs):
            keep = others
    return keep


def _merge(
    taken: list[tuple[str, ...]], other: list[tuple[str, ...]], condition: str, list_name: str
) -> list[tuple[str, ...]]:
    matcher = difflib.SequenceMatcher(
        None, [_key(s) for s in taken], [_key(s) for s in other], autojunk=False
    )
    out: list[tuple[str, ...]] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out += [
                taken[a0 + k] if taken[a0 + k] == other[b0 + k] else _bare(taken[a0 + k])
                for k in range(a1 - a0)
            ]
            continue
        yes, no = taken[a0:a1], other[b0:b1]
        built = _built(yes, no, condition, list_name)
        if built is not None:
            out += built
            continue
        lines: list[str] = []
        if yes:
            lines.append(f"{INDENT * 2}if {condition}:")
            lines += _indented(yes)
            if len(no) == 1 and no[0][0].startswith(f"{INDENT * 2}if "):  # else: if -> elif
                lines += [f"{INDENT * 2}el{no[0][0].lstrip()}", *no[0][1:]]
            elif no:
                lines.append(f"{INDENT * 2}else:")
                lines += _indented(no)
        else:
            lines.append(f"{INDENT * 2}if {negation(condition)}:")
            lines += _indented(no)
        out.append(tuple(lines))
    return out


def _built(
    yes: Sequence[tuple[str, ...]], no: Sequence[tuple[str, ...]], condition: str, name: str
) -> list[tuple[str, ...]] | None:
    """``self.block = nn.Sequential(a, b, c)`` on one side and ``nn.Sequential(b, c)`` on the
    other, built as torchvision builds it: ``layers = []``, ``if <test>:
    layers.append(a)``, ..., ``self.block = nn.Sequential(*layers)`` (None: not that)."""
    if len(yes) != 1 or len(no) != 1:
        return None
    first, second = _sequential(yes[0]), _sequential(no[0])
    if first is None or second is None or first[0] != second[0]:
        return None
    target, a = first
    b = second[1]
    if not a or not b:
        return None
    pad = INDENT * 2
    out: list[tuple[str, ...]] = [(f"{pad}{name} = []",)]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out += [_append(name, item, 2) for item in a[a0:a1]]
            continue
        lines = [f"{pad}if {condition}:"] if a1 > a0 else [f"{pad}if not ({condition}):"]
        lines += [line for item in (a[a0:a1] or b[b0:b1]) for line in _append(name, item, 3)]
        if a1 > a0 and b1 > b0:
            lines.append(f"{pad}else:")
            lines += [line for item in b[b0:b1] for line in _append(name, item, 3)]
        out.append(tuple(lines))
    out.append((f"{pad}{target} = nn.Sequential(*{name})",))
    return out


def _append(name: str, item: str, depth: int) -> tuple[str, ...]:
    return tuple(nested(depth, "", Call(f"{name}.append", (item,))))


def _sequential(statement: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """``(target, items)`` of ``self.x = nn.Sequential(item, ...)``."""
    text = _joined(list(statement))
    head, eq, value = text.partition(" = ")
    if not eq or not head.startswith("self.") or not value.startswith("nn.Sequential("):
        return None
    parsed = _parse_call(value)
    if parsed is None or parsed[0] or parsed[1].func != "nn.Sequential":
        return None
    items = list(parsed[1].args)
    if any(item.startswith("*") for item in items):
        return None
    return head.strip(), items


def _joined(lines: list[str]) -> str:
    """A statement's lines as one line (black's exploded calls joined back)."""
    text = ""
    for line in (line.strip() for line in lines):
        if line.startswith("#"):
            continue
        line = line.partition("  # ")[0]
        if not text or text.endswith(("(", "[", "{")) or line.startswith((")", "]", "}")):
            text += line
        else:
            text += " " + line
    for close in (")", "]", "}"):
        text = text.replace(f",{close}", close)
    return text


def _indented(statements: Sequence[tuple[str, ...]]) -> list[str]:
    out: list[str] = []
    for statement in statements:
        lines = [INDENT + line if line else line for line in statement]
        if max(map(len, lines)) > LINE_LIMIT:
            lines = _rewrapped(lines)
        out += lines
    return out


def _rewrapped(lines: list[str]) -> list[str]:
    """A simple statement ``target = call(...)`` laid out again at its new depth."""
    first = lines[0]
    depth = (len(first) - len(first.lstrip())) // len(INDENT)
    text = _joined(lines)
    head, eq, value = text.partition(" = ")
    parsed = _parse_call(value) if eq and not head.startswith(("if ", "for ")) else None
    if parsed is None or parsed[0]:
        return lines
    return nested(depth, f"{head} = ", parsed[1])
