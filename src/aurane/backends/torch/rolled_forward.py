"""The ``forward`` of a rolled block (``rolled_block.py``): one method for every call.

Each call's own class writes a forward of one statement per IR node. ``rolled_forward``
walks the source's forward body along one call's nodes (each node's ``origin`` naming its
loop iteration and branch) and writes those statements with the source's loops as Python
loops: the statements of a loop's iterations, with each templated module written
``getattr(self, f"layers{i}")``, must read alike and become the loop's body (``for i in
range(self.n):``); an ``if`` inside a loop is a Python ``if`` on the source's test, each
branch written from an iteration that takes it. ``shared_forward`` then checks that every
call wrote the same method. A parameter or block constant forward reads is read from the
module (``SelfTranslator``: ``self.n``), and a node an operation-valued parameter applies
is written ``x = self.act(x)`` (``with_applied``).

Anything else raises ``rolled.Unsupported`` and the calls keep their own classes.
"""

from __future__ import annotations

import ast as pyast
import builtins
import keyword
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from aurane.backends.torch.branches import widest_head
from aurane.backends.torch.emit import emitter
from aurane.backends.torch.emit_common import MASK, Site
from aurane.backends.torch.emit_tensor import SPLITS
from aurane.backends.torch.modules import INDENT, LINE_LIMIT
from aurane.backends.torch.named import TORCH_METHODS, function_of, module_factory
from aurane.backends.torch.pyexpr import ATOM, Printed
from aurane.backends.torch.rolled import (
    _CALLED,
    BRANCH,
    RESERVED,
    TOP,
    Counts,
    Translator,
    Unsupported,
    _bind,
    _given,
    _literal,
    _named,
    _path_text,
    _target_text,
    add_mark,
    applied_names,
    applied_target,
    count_target,
    counter_marked,
    enumerated_header,
    evaluate,
    number_splits,
    perturbed,
    total_mark,
    zero_mark,
)
from aurane.backends.torch.shown import show_named
from aurane.backends.torch.stage_index import named_stage_indexed, stage_indexed
from aurane.ir.graph import Graph, Node
from aurane.ops import lookup
from aurane.records import replace
from aurane.semantics.symbolic import plain, table_constants, table_name
from aurane.semantics.values import OpValue
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.items import syntax_items

_STRING = re.compile(r'f?"[^"]*"')  # a string in a statement (``f"avgpool{i + 1}"``)
Frame = tuple[str, Span, int]  # a loop iteration or a branch, as a node's origin records it
# in the name of an unnamed module after a loop (``dense{n + 1}``): the loop's count, which
# ``__init__`` and forward write apart (``n``, ``self.n``: ``count_text``); ``count_mark(k)``
# stands for the count of the ``k``-th nest of loops the name reads (``Counts``)
COUNT = "\x00"
_MARK = re.compile("\x00(\\d+)\x01")


def count_mark(index: int) -> str:
    """Where the name of an unnamed module reads the count of the ``index``-th nest."""
    return f"{COUNT}{index}\x01"


def counted_path(path: str, nests: Counts, tr: Translator) -> str:
    """``path`` with each count it marks written by ``tr`` (``dense{a + j + 2}`` in
    ``__init__``, ``dense{self.a + j + 2}`` in forward)."""
    return _MARK.sub(lambda found: count_text(nests[int(found.group(1))], tr), path)


def count_text(loops: tuple[ast.For, ...], tr: Translator) -> str:
    """How many times the innermost of ``loops`` (each nested in the one before) runs in
    all, as ``tr`` writes it: ``a * b`` of ``range(a)`` around ``range(b)``; of a triangle
    (``range(i + b)`` in ``range(a)``), its running count (``n``: ``rolled.Triangle``)."""
    counted = tr.triangle_of(loops[0]) if len(loops) == 2 else None
    if counted is not None and loops[1].span == counted.inner.span:
        return counted.name
    return " * ".join(_one_count(loop, tr) for loop in loops)


def _one_count(loop: ast.For, tr: Translator) -> str:
    """How many times ``loop`` runs, as ``tr`` writes it: ``n`` of ``range(n)``, else
    ``len(...)`` of its iterable (``len(widths)`` of ``widths`` or ``enumerate(widths)``,
    ``min(len(a), len(b))`` of ``zip(a, b)``); parenthesised unless one name or call."""
    text = _length(loop.iterable, tr)
    atom = isinstance(
        pyast.parse(text, mode="eval").body,
        pyast.Name | pyast.Attribute | pyast.Call | pyast.Constant,
    )
    return text if atom else f"({text})"


def fixed_count(loop: ast.For) -> int | None:
    """How many times ``loop`` runs where its iterable writes it as a number: ``range(2)``,
    a list or tuple written out (``[act, sigmoid]``), ``enumerate`` of one; else None."""
    iterable = loop.iterable
    if isinstance(iterable, ast.Call) and iterable.func == "enumerate" and iterable.args:
        iterable = iterable.args[0]
    if isinstance(iterable, ast.ListExpr | ast.TupleExpr):
        return len(iterable.items)
    if isinstance(iterable, ast.Call) and iterable.func == "range" and len(iterable.args) == 1:
        stop = iterable.args[0]
        if not iterable.keywords and isinstance(stop, ast.Number) and type(stop.value) is int:
            return max(stop.value, 0)
    return None


def _length(iterable: ast.Expr, tr: Translator) -> str:
    """The number of items of ``iterable`` as ``tr`` writes it (an ``enumerate`` or a
    ``zip`` has no ``len``: the lengths of what it iterates)."""
    call = iterable if isinstance(iterable, ast.Call) and not iterable.keywords else None
    if call is not None and call.func == "range" and len(call.args) == 1:
        return tr.text(call.args[0])
    if call is not None and call.func == "enumerate" and len(call.args) in (1, 2):
        return _length(call.args[0], tr)
    if call is not None and call.func == "zip" and len(call.args) > 1:
        return f"min({', '.join(_length(arg, tr) for arg in call.args)})"
    if isinstance(iterable, ast.ListExpr | ast.TupleExpr):  # written out: its number
        return str(len(iterable.items))
    return f"len({tr.text(iterable)})"


def with_applied(graph: Graph, lines: list[str], applied: Mapping[str, str]) -> list[str]:
    """The instance's class with each statement of a node an operation-valued parameter
    applies written ``x = self.act(x)``, whatever the instance's class wrote for it
    (``x = x.exp()``, ``x = self.act(x)`` of ``act()``, ``x = F.softmax(x, dim=1)``)."""
    if not applied:
        return lines
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward("))
    rest = lines[start + 1 :]
    comments = []
    while rest and _input_comment(rest[0]):
        comments.append(rest.pop(0))
    statements = _per_node(_statements(rest), graph.nodes)
    if len(statements) != len(graph.nodes) + 1:
        raise Unsupported("a forward that is not one statement per layer")
    for index, node in enumerate(graph.nodes):
        # a parameter taken as a module class (every call applies it) is not in ``applied``
        attr = next(
            (applied[p] for p, f in graph.block_ops.items() if p in applied and node.id in f.nodes),
            None,
        )
        if attr is None:
            continue
        statement = statements[index]
        try:
            tree = pyast.parse(_bare(_first_code(statement)).strip())
        except SyntaxError:
            raise Unsupported(f"the statement of '{node.id}' is not one line") from None
        assign = tree.body[0] if len(tree.body) == 1 else None
        value = assign.value if isinstance(assign, pyast.Assign) else None
        if len(statement) != 1 or assign is None or not isinstance(value, pyast.Call):
            raise Unsupported(f"the statement of '{node.id}' is not a call")
        func = value.func
        method = isinstance(func, pyast.Attribute) and not value.args and not value.keywords
        tensor = func.value if method and isinstance(func, pyast.Attribute) else None
        if tensor is None:
            tensor = value.args[0] if value.args else None
        if not isinstance(tensor, pyast.Name):
            raise Unsupported(f"the statement of '{node.id}' is not a call of one tensor")
        targets = pyast.unparse(assign.targets[0]) if isinstance(assign, pyast.Assign) else ""
        statements[index] = (f"{INDENT * 2}{targets} = self.{attr}({tensor.id})",)
    body = [line for s in statements for line in s]
    return [*lines[: start + 1], *comments, *_param_locals(graph, body, applied)]


def _count(node_id: str, op: str) -> str:
    """The count the IR numbered ``node_id`` with after ``op`` (``relu61``: ``1``, the first
    ``relu6``), else its trailing digits."""
    counts = [str(count) for stem, count in number_splits(node_id) if stem == op]
    return counts[0] if counts else node_id[len(node_id.rstrip("0123456789")) :]


def _param_locals(graph: Graph, body: list[str], applied: Mapping[str, str]) -> list[str]:
    """A local named after the node an operation-valued parameter applies (``exp1``,
    ``tanh1``: the operation each call gave) named after the parameter (``act1``), so the
    calls' forwards read alike."""
    names = {
        node: f"{param}{_count(node, given.op)}"
        for param, given in graph.block_ops.items()
        if param in applied
        for node in given.nodes
    }
    text = "\n".join(body)
    names = {
        old: new
        for old, new in names.items()
        if old != new and not re.search(rf"(?<![\w.]){re.escape(new)}\b", text)
    }
    if not names:
        return body
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")\b")
    return [pattern.sub(lambda m: names[m[1]], line) for line in body]


class SelfTranslator(Translator):
    """The source's expressions as forward writes them: a parameter or a block constant is
    read from the module (``range(self.n)``), which the constructor then stores."""

    def __init__(
        self,
        locals_: frozenset[str],
        constants: Mapping[str, ast.Expr],
        params: set[str],
        attrs: Any,
        stored: Mapping[str, str],
    ) -> None:
        super().__init__(locals_, constants, {})
        self.params = params
        self.attrs = attrs
        self.known = {param: attr for attr, param in stored.items()}
        self.read: dict[str, str] = {}  # attribute -> parameter forward reads
        self.functions = {n: p for n, p in _CALLED.items() if n not in locals_ | params}
        self.listed: dict[str, Any] = {}  # a module constant's list forward reads -> value

    def _leaf(self, expr: ast.Expr, text: Callable[[ast.Expr], Printed]) -> Printed | None:
        if isinstance(expr, ast.Name) and expr.id in self.aliases and expr.id not in self.locals:
            return self.aliases[expr.id], ATOM  # a module constant: no attribute
        if isinstance(expr, ast.Name) and expr.id in self.params and expr.id not in self.locals:
            attr = self.known.get(expr.id)
            if attr is None:
                attr = self.known[expr.id] = self.attrs.allocate(expr.id)
            self.read[attr] = expr.id
            return f"self.{attr}", ATOM
        if isinstance(expr, ast.Name) and expr.id not in self.locals | self.params:
            listed = self._listed(expr.id, text)
            if listed is not None:
                return listed
        return super()._leaf(expr, text)

    def _listed(self, name: str, text: Callable[[ast.Expr], Printed]) -> Printed | None:
        """A module constant's list or tuple (``scales = [0.5, 1.0]``) as an attribute
        the constructor sets (``self.scales = [0.5, 1.0]``), read as ``self.scales[i]``
        rather than the list written out at each use; one too long for its line is not."""
        value = self.constants.get(name)
        if not isinstance(value, ast.ListExpr | ast.TupleExpr):
            return None
        written = text(value)[0]
        named = table_name(written)
        if named != written:  # a table the file defines once: forward reads it too
            return named, ATOM
        if len(f"{INDENT * 2}self.{name}_ = {written}") > LINE_LIMIT:
            return None
        attr = self.known.get(name) or self.attrs.allocate(name)
        self.known[name] = attr
        self.read[attr] = written
        self.listed[name] = evaluate(written, {})
        return f"self.{attr}", ATOM


def rolled_forward(
    model: ast.Model,
    graph: Graph,
    lines: list[str],
    tr: SelfTranslator,
    values: Mapping[str, Any],
    branches: dict[str, list[str]],
    paths: Mapping[Span, str],
    counted: Mapping[Span, Counts] | None = None,
    indices: Mapping[Span, str] | None = None,
    function_items: bool = False,
    row_counters: Mapping[Span, str] | None = None,
    module_items: Mapping[Span, Sequence[tuple[str, str]]] | None = None,
    module_params: Mapping[str, tuple[str, str, tuple[str, ...]]] | None = None,
) -> list[str]:
    """One instance's forward with the source's loops rolled; an ``if`` branch's body is
    marked (``BRANCH``) and kept in ``branches``, shared by the instances; ``paths``: the
    name of each unnamed module in a loop (``rms_norm{i + 1}``), or after one (``counted``:
    the loop whose count numbers it, ``dense{self.n + 1}``); ``indices``: the count of each
    loop over items that names such a module (``for i, w in enumerate(self.widths):``,
    marked: ``rolled.enumerated``); ``function_items``: the operations in the calls' lists
    are functions (``named.function_items``); ``row_counters``: the line counting each
    row's block's modules (``rolled._Walk._row_block``), written before it;
    ``module_items``: per step applying a list's item, the operations the calls' items
    built there as modules, each with the class they pass (``block_walk._module_item``);
    ``module_params``: the operation-valued parameters built as modules where applied
    (``rolled_block.module_params``), each with its module's attribute, the attribute
    keeping its class and the classes built where applied (``rolled_block._built_params``)."""
    assert model.forward is not None
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward("))
    head = lines[start]
    inputs = ", ".join(
        p.name + ("=None" if p.default is not None else "") for p in model.forward.inputs
    )
    # attention's mask (``padding_mask=None``) follows the source's inputs
    if head not in (
        f"{INDENT}def forward(self, {inputs}):",
        f"{INDENT}def forward(self, {inputs}, {MASK}=None):",
    ):
        raise Unsupported(f"a forward whose inputs are written '{head.strip()}'")
    rest = lines[start + 1 :]
    comments = []
    while rest and _input_comment(rest[0]):
        comments.append(rest.pop(0))
    defaults = _default_inputs(
        rest, [p.name for p in model.forward.inputs if p.default is not None]
    )
    rest = rest[len(defaults) :]
    statements = _per_node(_statements(rest), graph.nodes)
    if len(statements) != len(graph.nodes) + 1 or not _first_code(
        statements[-1]
    ).strip().startswith("return "):
        raise Unsupported("a forward that is not one statement per layer")
    text = "\n".join(rest)
    counters = [counted.name for counted in tr.triangles]
    counters += [counted.name for counted in tr.branch_counts]
    for loop_name in [*tr.locals, *counters]:
        if re.search(rf"\b{re.escape(loop_name)}\b", text):
            raise Unsupported(f"the loop's name '{loop_name}' is a local of forward")
    env: dict[str, Any] = {"self": _Module(tr, values)}
    writer = _ForwardWriter(graph, statements[:-1], tr, env, branches)
    writer.paths = paths
    writer.row_counters = row_counters or {}
    writer.module_items = module_items or {}
    writer.module_params = module_params or {}
    writer.counted = counted or {}
    writer.indices = indices or {}
    writer.function_items = function_items
    writer.code = [_bare(line) for line in rest if _code(line)]
    writer.source_body = model.forward.body
    body = writer.body(model.forward.body, TOP, ())
    if writer.pos != len(graph.nodes):
        raise Unsupported(f"the layer '{graph.nodes[writer.pos].id}' is not in the rolled forward")
    ret = writer.skip.statement(list(statements[-1])) if writer.skip else list(statements[-1])
    return [head, *comments, *defaults, *_returned(body, ret)]


def _returned(body: list[str], ret: list[str]) -> list[str]:
    """``y = expr`` then ``return y`` as ``return expr`` where ``y`` is the last layer's
    own local: its name is the IR's number, which the calls' loop counts make differ."""
    last = _bare(body[-1]) if body else ""
    match = re.fullmatch(rf"{INDENT * 2}(\w+) = (.+)", last)
    if match is None or ret != [f"{INDENT * 2}return {match[1]}"] or _names(body[:-1], match[1]):
        return [*body, *ret]
    return [*body[:-1], f"{INDENT * 2}return {match[2]}"]


def _names(lines: list[str], name: str) -> bool:
    return any(re.search(rf"\b{re.escape(name)}\b", line) for line in lines)


def _default_inputs(lines: list[str], names: list[str]) -> list[str]:
    """The lines that build the defaulted inputs left out by a caller (``if mask is None:``
    and its body), which come before the first layer and read no loop."""
    taken = 0
    for name in names:
        if taken >= len(lines) or lines[taken] != f"{INDENT * 2}if {name} is None:":
            raise Unsupported(f"the default of the input '{name}' is not built first")
        taken += 1
        while taken < len(lines) and lines[taken].startswith(INDENT * 3):
            taken += 1
    return lines[:taken]


class _Module:
    """``self`` as the walk evaluates forward's expressions: each attribute the translator
    gave a parameter or constant reads its value in this instance."""

    def __init__(self, tr: SelfTranslator, params: Mapping[str, Any]) -> None:
        self._tr = tr
        self._params = params

    def __getattr__(self, attr: str) -> Any:
        for param, known in self._tr.known.items():
            if known == attr:
                return self._params[param] if param in self._params else self._tr.listed[param]
        raise AttributeError(attr)


# a statement's shape comment: after its code (``  # (batch, 4)``) or on a line of its own
_SHAPE_AFTER = re.compile(r"  # \(batch\b.*\)(?: each)?$")
_SHAPE_LINE = re.compile(r"\s*# \(batch\b.*\)(?: each)?$")


def without_statement_shapes(lines: list[str]) -> list[str]:
    """A rolled network's class with forward's statement shape comments left out (its
    input comments kept): each is one variant's number, equal in all variants, which
    the class's parameters may change (``x = F.glu(x)  # (batch, 4)`` for ``glu`` after
    ``dense(2 * w)``, ``w`` a parameter every variant gives 4); the variants' graphs
    have no tree to name the size by."""
    out: list[str] = []
    in_forward = False
    for line in lines:
        if line.startswith(f"{INDENT}def "):
            in_forward = line.startswith(f"{INDENT}def forward(")
        if in_forward and _SHAPE_LINE.fullmatch(line):
            continue
        out.append(_SHAPE_AFTER.sub("", line) if in_forward else line)
    return out


def _input_comment(line: str) -> bool:
    """``# x: (batch, 3, 4)`` at the top of forward, not a statement's shape comment on a
    line of its own (``# (batch, 1)`` above a long statement)."""
    return line.startswith(f"{INDENT * 2}# ") and not line.startswith(f"{INDENT * 2}# (")


def _statements(lines: list[str]) -> list[tuple[str, ...]]:
    """Each statement's lines; a shape comment on a line of its own goes with the statement
    after it, and the statement's code comes first (``_code`` drops the comment in a
    loop's body; outside loops it stays above the statement, as written)."""
    out: list[list[str]] = []
    above: list[str] = []  # comment lines waiting for their statement
    for line in lines:
        top = line.startswith(INDENT * 2) and not line.startswith(INDENT * 3)
        if top and line.strip().startswith("#"):
            above.append(line)
        elif top and line.strip()[:1] not in (")", "]", "}"):
            out.append([line])
            if above:
                out[-1] = [*above, line]
                above = []
        elif out:
            out[-1].append(line)
        else:
            raise Unsupported("a forward that starts with a comment between statements")
    if above:
        raise Unsupported("a forward that ends with a comment")
    return [tuple(s) for s in out]


def _first_code(statement: tuple[str, ...]) -> str:
    """The statement's first line of code, after any comment above it."""
    return next((line for line in statement if not line.strip().startswith("#")), "")


def _per_node(statements: list[tuple[str, ...]], nodes: Sequence[Node]) -> list[tuple[str, ...]]:
    """``statements`` one per node: the pieces of a split bound by one statement (``h1, h2
    = x.chunk(2, dim=-1)``, the nodes ``chunk1`` and ``chunk2``) give it to the first
    piece and none (an empty statement) to the others."""
    out: list[tuple[str, ...]] = []
    for statement in statements:
        out.append(statement)
        node = nodes[len(out) - 1] if len(out) <= len(nodes) else None
        if node is None or node.op not in SPLITS or node.args.get("index") != 0:
            continue
        targets = _first_code(statement).split(" = ", 1)[0].strip()
        out += [()] * targets.count(",")  # a, b = ...: the pieces after the first
    return out


class _ForwardWriter:
    """Walks the source's forward body along one instance's nodes (in order, each node's
    ``origin`` naming its loop iteration and branch) and writes its statements."""

    def __init__(
        self,
        graph: Graph,
        statements: list[tuple[str, ...]],
        tr: SelfTranslator,
        env: dict[str, Any],
        branches: dict[str, list[str]],
    ) -> None:
        self.graph = graph
        self.nodes = list(graph.nodes)
        self.statements = statements
        self.tr = tr
        self.env = env
        self.pos = 0
        self.branches = branches
        self.code: list[str] = []  # the instance's forward, comments left out
        self.paths: Mapping[Span, str] = {}  # unnamed modules in loops: their names
        # a row's block's module (``rolled._Walk._row_block``): the line counting it
        self.row_counters: Mapping[Span, str] = {}
        # per step applying a list's item: the operations built there as modules, with
        # the class the calls pass for each (``block_walk._module_item``)
        self.module_items: Mapping[Span, Sequence[tuple[str, str]]] = {}
        # and after one: the loop numbering them (nested: the loops whose counts multiply)
        self.counted: Mapping[Span, Counts] = {}
        self.indices: Mapping[Span, str] = {}  # a loop over items: its count's name
        # a loop applying its target (``for a in [act, sigmoid]: ... -> a``): by the target,
        # the function each iteration applied (``self.act``, ``torch.sigmoid``), and the
        # iteration being written
        self.applied: dict[str, list[Any]] = {}
        self.applying: dict[str, int] = {}
        # a loop over items the calls give applying a name of its target (``for w, a in
        # cfg: -> a``): those names, each item a module class built where it is applied;
        # True where the items are values ``__init__`` stored (``_stored_items``)
        self.given: dict[str, bool] = {}
        self.function_items = False  # those items are functions: ``named.function_items``
        # operation-valued parameters built as modules where applied: ``rolled_forward``
        self.module_params: Mapping[str, tuple[str, str, tuple[str, ...]]] = {}
        self.targets: list[str | None] = []  # the loops' counts around the statement
        self.loops: list[ast.For] = []  # the loops around the statement
        self.aliases: set[Span] = set()  # ``s = x`` opening a loop's body: written there
        self.source_body: tuple[ast.ForwardStmt, ...] = ()  # the source's forward body
        self.skip: _Skip | None = None  # the names after such a loop (``_last_iteration``)

    def body(
        self, stmts: tuple[ast.ForwardStmt, ...], depth: int, frames: tuple[Frame, ...]
    ) -> list[str]:
        lines: list[str] = []
        for stmt in stmts:
            lines += zero_mark(depth, self.tr.branch_counts, stmt)  # n = 0: a running count
            if isinstance(stmt, ast.For):
                lines += self.loop(stmt, depth, frames)
            elif isinstance(stmt, ast.If):
                lines += self.branch(stmt, depth, frames)
            elif isinstance(stmt, ast.Assign) and stmt.span in self.aliases:
                assert isinstance(stmt.value, ast.Name)
                lines.append(f"{INDENT * depth}{stmt.target} = {stmt.value.id}")
            elif isinstance(stmt, ast.ChainStmt | ast.Assign | ast.Return):
                if isinstance(stmt, ast.Return) and depth != TOP:
                    raise Unsupported("a return inside a loop")
                lines += self.simple(stmt, depth, frames)
            else:
                raise Unsupported(f"a {type(stmt).__name__.lower()} statement in the block")
        return lines

    def simple(self, stmt: Any, depth: int, frames: tuple[Frame, ...]) -> list[str]:
        """The statements of the nodes ``stmt`` made at this iteration."""
        calls = _calls(stmt)
        lines: list[str] = []
        while self.pos < len(self.nodes):
            node = self.nodes[self.pos]
            if _frames(node) != frames or not _within(node.span, stmt.span):
                break
            statement = self.statements[self.pos]
            self.pos += 1
            step = calls.get(node.span)
            outside = not self.loops  # at the top, or in an if there (``branch``)
            if outside:
                self._not_folded(node, step, statement)
            applier = _applier(stmt, node, set(self.module_params)) if outside else None
            if applier is not None:  # norm given layer_norm outside loops: tested as in one
                mine = [_indent(_bare(line), depth - TOP) for line in statement if _code(line)]
                lines += self._module_param(mine, node, applier)
                continue
            if outside and node.span not in self.counted:
                written = self.skip.statement(list(statement)) if self.skip else list(statement)
                if step is not None and step.layer_holes:  # fc{n}: as __init__ names it
                    written = self._templated(written, node, calls)
                if depth == TOP:
                    lines += self._after_loops(written, stmt, step)
                else:  # in a branch: no child of a container filled in order (block_walk)
                    lines += [_indent(_bare(line), depth - TOP) for line in written if _code(line)]
                continue
            if outside:  # dense3 = self.dense3(x) after a loop: its name counts it
                mine = [_indent(_bare(line), depth - TOP) for line in statement if _code(line)]
                mine = self.skip.statement(mine) if self.skip else mine
                lines += self._templated(mine, node, calls)
                continue
            mine = [_indent(_bare(line), depth - TOP) for line in statement if _code(line)]
            mine, expressed = self._loop_arguments(mine, step)
            # checked as written: an argument a loop's target gives is its expression now
            self._not_folded(node, step, tuple(mine), expressed)
            applier = _applier(stmt, node, {*self.applied, *self.given, *self.module_params})
            if applier is not None and applier in self.module_params:  # norm: layer_norm
                mine = self._module_param(mine, node, applier)
            elif applier in self.given:  # x = F.relu(x) as x = a()(x), a = nn.ReLU
                mine = self._given(mine, node, applier)
            elif applier is not None:  # x = torch.sigmoid(x) as x = a(x)
                mine = self._applied(mine, node, applier)
            lines += self._templated(mine, node, calls)
        return lines

    def _applied(self, lines: list[str], node: Node, target: str) -> list[str]:
        """``x = torch.sigmoid(x)`` of a node the loop's target ``a`` applies as ``x =
        a(x)``, keeping its function (``torch.sigmoid``; ``self.act`` of an operation-valued
        parameter) as the loop's item at this iteration: a call of one tensor alone, of a
        function of ``F`` or ``torch`` (``x.exp()``: ``torch.exp``; with constant keyword
        arguments, ``functools.partial(F.softmax, dim=-1)``) or of the class's parameter's
        module or function."""
        own = any(node.id in found.nodes for found in self.graph.block_ops.values())
        parsed = _one_tensor_call(lines)
        if node.layer is not None or parsed is None:
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        bound, func, tensor, keywords = parsed
        if not re.fullmatch(r"self\.\w+" if own else r"(F|torch)\.\w+", func):
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        if keywords and own:
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        if keywords:  # F.softmax(x, dim=-1): as a block's function argument is passed
            func = f"functools.partial({func}, {keywords})"
        items, index = self.applied[target], self.applying[target]
        if items[index] not in (None, func):
            raise Unsupported(f"an iteration that applies '{target}' differently")
        items[index] = func
        pad = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
        return [f"{pad}{bound} = {target}({tensor})"]

    def _given(self, lines: list[str], node: Node, target: str) -> list[str]:
        """``x = F.relu(x)`` of a node the loop's target ``a`` applies, ``a`` an item of a
        list the calls give (``cfg = ((8, nn.ReLU), (6, nn.GELU))``): ``x = a()(x)``, the
        item's module built and applied, as ``F.relu`` computes. Only an operation whose
        module has no weights and is no module of the class of one call (``layer_norm``,
        ``identity`` build one there) and whose module class or factory the call passes
        (``functools.partial(nn.Softmax, dim=-1)``, ``_value_text``). A row of a block
        constant naming the class's operation-valued parameter (``table = [(8, act), (6,
        gelu)]``) is applied as ``self.act(x)`` there: built alike (``act`` has no
        weights), and the class keeps ``self.act = act()`` for the same modules."""
        items = self.module_items.get(node.span)
        if items and self.given[target]:
            return self._module_item(lines, node, target, items)
        parsed = _one_tensor_call(lines)
        value = self.env.get(target)
        if node.layer is not None or node.parameters or parsed is None:
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        made = module_factory(node.op, dict(node.args))
        if not self.given[target]:  # a list naming the parameter's module (self.act)
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        if self.function_items:  # cfg = ((8, F.relu), (4, torch.exp)): x = a(x)
            return self._given_function(lines, node, target, value)
        if isinstance(value, OpValue) and not value.is_model:  # what the call passes
            spec = lookup(value.name)
            if module_factory(value.name) is None or spec is None or spec.name != node.op:
                raise Unsupported(f"the operation '{value.name}' that '{target}' applies")
            value = module_factory(value.name)
        # else a constant's item as __init__ computes it: nn.ReLU, or act's class or function
        if made is None or value != made:  # applied with other arguments, or no class
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        bound, _, tensor, _ = parsed
        pad = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
        return [f"{pad}{bound} = {target}()({tensor})"]

    def _module_item(
        self, lines: list[str], node: Node, target: str, items: Sequence[tuple[str, str]]
    ) -> list[str]:
        """``_given`` at a step where some call's item builds a module (``__init__``'s
        ``block_walk._module_item``): the class tests the item, applies the module it
        counted (``x = self.layer_norm1(x)`` of the class of one call), or else builds
        the item's module where it applies it, as ``_given`` writes it::

            if a is nn.LayerNorm:
                layer_norm_count += 1
                x = getattr(self, f"layer_norm{layer_norm_count}")(x)
            else:
                x = a()(x)
        """
        parsed = _one_tensor_call(lines)
        value = self.env.get(target)
        if node.layer is not None or parsed is None or not isinstance(value, OpValue):
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        bound, func, tensor, keywords = parsed
        spec = lookup(value.name)
        pad = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
        # an item building no module: applied as the function it is (``torch.exp``), or
        # its module built where applied (``nn.ReLU``)
        built_here = f"{bound} = {target}{'' if self.function_items else '()'}({tensor})"
        if node.op in dict(items):  # this iteration's module, numbered as __init__ counts
            if func != f"self.{node.id}" or keywords or spec is None or spec.name != node.op:
                raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        else:  # an item building none: checked as ``_given`` writes it
            plain_items, self.module_items = self.module_items, {}
            try:
                written = self._given(lines, node, target)
            finally:
                self.module_items = plain_items
            if written != [f"{pad}{built_here}"]:
                raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        return _counted_modules(pad, target, items, bound, tensor, built_here)

    def _module_param(self, lines: list[str], node: Node, param: str) -> list[str]:
        """A step applying an operation-valued parameter that some call gives an operation
        built as a module where applied (``rolled_block.module_params``): the class tests
        the class it kept, applies the module ``__init__`` counted (``self.layer_norm1`` of
        the class of one call), or else the one module it built (``self.norm``)::

            if self.norm_class is nn.LayerNorm:
                layer_norm_count += 1
                x = getattr(self, f"layer_norm{layer_norm_count}")(x)
            else:
                x = self.norm(x)
        """
        module, kept, _ = self.module_params[param]
        items = self.module_items.get(node.span, [])
        parsed = _one_tensor_call(lines)
        if node.layer is not None or parsed is None or parsed[3]:
            raise Unsupported(f"the statement of '{node.id}' that '{param}' applies")
        bound, func, tensor, _ = parsed
        if func != (f"self.{node.id}" if node.op in dict(items) else f"self.{module}"):
            raise Unsupported(f"the statement of '{node.id}' that '{param}' applies")
        pad = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
        built = f"{bound} = self.{module}({tensor})"
        return _counted_modules(pad, f"self.{kept}", items, bound, tensor, built)

    def _given_function(self, lines: list[str], node: Node, target: str, value: Any) -> list[str]:
        """``_given`` where the calls pass the items as functions (``named.function_items``:
        one of them has no module factory, ``exp``): ``x = a(x)``, the item the call gave
        being the function the statement applies (``torch.exp`` of ``x = x.exp()``)."""
        if not isinstance(value, OpValue) or value.is_model:  # a constant's: a module class
            raise Unsupported(f"the statement of '{node.id}' that '{target}' applies")
        made = function_of(node.op, dict(node.args))
        if made is None or made != function_of(value.name) or not _function_text(made):
            raise Unsupported(f"the operation '{value.name}' that '{target}' applies")
        parsed = _one_tensor_call(lines)
        assert parsed is not None  # checked by _given
        bound, _, tensor, _ = parsed
        pad = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
        return [f"{pad}{bound} = {target}({tensor})"]

    def _stored_items(self, iterable: str) -> bool:
        """Whether forward's ``iterable`` reads only values ``__init__`` stored from its
        arguments and constants (``self.cfg``, ``enumerate(self.table)``), whose items are
        what the walk evaluated; not a list it writes (``[self.act, nn.GELU]``: a module)
        nor an operation- or model-valued parameter."""
        names = re.findall(r"(?<![\w.])self\.(\w+)", iterable)
        held = {*self.graph.block_ops, *self.graph.block_models}
        if not names and iterable in table_constants():  # a module constant: CFG
            return True
        return bool(names) and "[" not in iterable and not held & set(names)

    def _not_folded(
        self,
        node: Node,
        step: ast.Call | None,
        statement: tuple[str, ...],
        expressed: frozenset[Span] = frozenset(),
    ) -> None:
        if step is not None and node.suffix_of is None:
            _no_folded_argument(
                self.graph, node, self._options(step), statement, self._written, expressed
            )

    def _loop_arguments(
        self, lines: list[str], call: ast.Call | None
    ) -> tuple[list[str], frozenset[Span]]:
        """An argument that reads a loop's target (``multiply(scales[i])``, written ``x =
        x * 0.5`` at one iteration) as the source's expression (``x * self.scales[i]``):
        the number is replaced where it is written once in the statement and is the
        expression's value at this iteration, so every iteration computes what it wrote.
        Also the spans of the arguments so written."""
        expressed: set[Span] = set()
        if call is None:
            return lines, frozenset()
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if not any(
                isinstance(n, ast.Name) and n.id in self.tr.locals for n in syntax_items(arg)
            ):
                continue
            read, known = dict(self.tr.read), dict(self.tr.known)
            try:
                text = self.tr.text(arg)
                value = evaluate(text, self.env)
            except Unsupported:
                value = None
            written = _literal_text(value)
            found = [] if written is None else _occurrences(lines, written)
            if len(found) != 1:  # not written, or not one place: the statement as it was
                self.tr.read, self.tr.known = read, known
                continue
            at, match = found[0]
            lines = [*lines]
            lines[at] = f"{lines[at][: match.start()]}{_operand(text)}{lines[at][match.end() :]}"
            expressed.add(arg.span)
        return lines, frozenset(expressed)

    def _written(self, expr: ast.Expr) -> str | None:
        """How forward writes ``expr`` (None where it cannot), reading nothing new."""
        read, known = dict(self.tr.read), dict(self.tr.known)
        try:
            return self.tr.text(expr)
        except Unsupported:
            return None
        finally:
            self.tr.read, self.tr.known = read, known

    def _options(self, step: ast.Call) -> ast.Call:
        """``step`` without the tensors it is called on (``chunk(x, 2)`` as ``chunk(2)``),
        as a chain's step writes it: its leading arguments that read a name other than a
        parameter, constant or loop target."""
        known = self.tr.params | self.tr.locals | set(self.tr.constants)
        args = list(step.args)
        while args and not _literal(args[0]) and _read_names(args[0]) - known:
            args.pop(0)
        return replace(step, args=tuple(args))

    def _templated(self, lines: list[str], node: Node, calls: Mapping[Span, ast.Call]) -> list[str]:
        """``self.layers0`` as ``getattr(self, f"layers{i}")``: the iteration's module."""
        if node.layer is None and node.span in self.paths:  # self.dense3: an unnamed one
            # a parameter is indexed (``self.positional_encoding1[:, : x.shape[1]]``)
            pattern = re.compile(rf"\bself\.{re.escape(node.id)}(?![\w.])")
            if node.op == "buffer":  # self.buffer1.expand(x.shape[0], -1)
                pattern = re.compile(rf"\bself\.{re.escape(node.id)}(?!\w)")
            path = self.paths[node.span]
            nests = self.counted.get(node.span)
            if nests is not None:
                path = counted_path(path, nests, self.tr)
            made = f'getattr(self, f"{path}")'
            written = [pattern.sub(made, line) for line in lines]
            counting = self.row_counters.get(node.span)
            if counting is not None and written:  # a row's block: its class's count first
                pad = written[0][: len(written[0]) - len(written[0].lstrip())]
                written.insert(0, f"{pad}{counting}")
            return written
        if node.layer is None:
            return lines
        call = calls.get(node.span)
        if call is None or call.layer is None or node.suffix_of:
            raise Unsupported(f"the layer '{node.layer}' in a loop is not one named module")
        if "." in call.layer:
            return self._indexed(lines, node.layer, call)
        path, templated = _path_text(call.layer, call.layer_holes, self.tr)
        if not templated or evaluate(f'f"{path}"', self.env) != node.layer:
            raise Unsupported(f"the layer '{node.layer}' is not named by its loop")
        # a parameter is indexed (``self.pes0[:, : x.shape[1]]``): a ``[`` after it too
        pattern = re.compile(rf"\bself\.{re.escape(node.layer)}(?![\w.])")
        made = f'getattr(self, f"{path}")'
        return [pattern.sub(made, line) for line in lines]

    def _indexed(self, lines: list[str], layer: str, call: ast.Call) -> list[str]:
        """``self.layers[1]`` as ``self.layers[i]``: a numbered container ``layers.{i}``."""
        staged = stage_indexed(lines, layer, call, self.tr, self.env)
        if staged is None:  # ``getattr(self, f"downs{i}")[j]``
            staged = named_stage_indexed(lines, layer, call, self.tr, self.env)
        if staged is not None:  # ``self.stages[i][j]``
            return staged
        head, _, key = call.layer.rpartition(".") if call.layer else ("", "", "")
        index = layer.rpartition(".")[2]
        if key == "*" and head.isidentifier() and not call.layer_holes:
            hole = self._next_child(layer)
        elif key != "{}" and _named(key) and head.isidentifier() and len(call.layer_holes) == 1:
            return self._keyed(lines, layer, call)
        elif key != "{}" or not head.isidentifier() or len(call.layer_holes) != 1:
            raise Unsupported(f"the layer '{layer}' in a loop is not a numbered child")
        else:
            hole = self.tr.text(call.layer_holes[0])
        if f"{head}.{evaluate(hole, self.env)}" != layer:
            raise Unsupported(f"the layer '{layer}' is not numbered by its loop")
        pattern = re.compile(rf"\bself\.{head}\[{index}\](?![\w.\[])")
        return [pattern.sub(f"self.{head}[{hole}]", line) for line in lines]

    def _keyed(self, lines: list[str], layer: str, call: ast.Call) -> list[str]:
        """``self.layers.l1_2`` as ``self.layers[f"l1_{i + 1}"]``: a child named by its loop
        (``as layers.l1_{i + 1}``), the loop's container an ``nn.ModuleDict``
        (``rolled.keyed_stages``)."""
        assert call.layer is not None
        head, _, key = call.layer.rpartition(".")
        path = _path_text(key, call.layer_holes, self.tr)[0]
        owner, _, child = layer.rpartition(".")
        if owner != head or evaluate(f'f"{path}"', self.env) != child:
            raise Unsupported(f"the layer '{layer}' is not named by its loop")
        pattern = re.compile(rf"\bself\.{head}\.{re.escape(child)}(?![\w.\[])")
        return [pattern.sub(f'self.{head}[f"{path}"]', line) for line in lines]

    def _next_child(self, layer: str) -> str:
        """``stack.*`` (the container's next child) in a loop: its index as the loop's
        count plus the children made before the loop (``i``, ``i + 2``); the iterations and
        calls must then write one text (checked where their statements are compared)."""
        target = self.targets[-1] if len(self.targets) == 1 else None
        count = self.env.get(target) if target is not None else None
        index = layer.rpartition(".")[2]
        if target is None or not isinstance(count, int) or not index.isdigit():
            raise Unsupported(f"the layer '{layer}' in a loop is not a numbered child")
        offset = int(index) - count
        if offset == 0:
            return target
        if offset < 0:
            return f"{target} - {-offset}"
        before = self._children_before(layer.rpartition(".")[0], self.loops[0])
        if before is None or evaluate(before, self.env) != offset:
            raise Unsupported(f"the children of '{layer}' made before its loop")
        return f"{target} + {_operand(before)}"

    def _after_loops(self, lines: list[str], stmt: Any, step: ast.Call | None) -> list[str]:
        """``self.features[2]`` of ``as features.*`` outside loops, after a loop that
        filled it too, as ``self.features[self.n]``: the number held for the variants'
        count only."""
        if step is None or step.layer is None or not step.layer.endswith(".*"):
            return lines
        head = step.layer[:-2]
        before = self._children_before(head, stmt, step)
        if before is None:
            raise Unsupported(f"the children of '{head}' made before '{step.layer}'")
        if before.isdigit():  # every count before is a number: as written
            return lines
        index = evaluate(before, self.env)
        pattern = re.compile(rf"\bself\.{re.escape(head)}\[{index}\](?![\w.\[])")
        if not any(pattern.search(line) for line in lines):
            raise Unsupported(f"the child '{head}.{index}' made after a loop")
        return [pattern.sub(f"self.{head}[{before}]", line) for line in lines]

    def _children_before(self, head: str, until: Any, step: ast.Call | None = None) -> str | None:
        """How many children of ``head`` (``as stack.*``) the statements before ``until``
        (a statement of forward's body) make, and ``until`` itself before ``step``, as
        forward reads it: ``2``, or ``self.n`` after a loop of ``n`` (a number there held
        for the variants' count only, ``self.features[j + 2]``); None where an earlier
        statement makes them in a nested loop or a branch."""

        def children(items: Iterable[object]) -> int:
            return sum(
                isinstance(item, ast.Call | ast.Chain) and item.layer == f"{head}.*"
                for item in items
            )

        made, counts = 0, dict[str, int]()  # each loop's count: how many children it makes
        if step is not None:  # the steps of ``until`` before this one
            items = list(syntax_items(until))
            made = children(items[: next(i for i, item in enumerate(items) if item is step)])
        for stmt in self.source_body[: self.source_body.index(until)]:
            each_time = children(syntax_items(stmt))
            if not each_time:
                continue
            if isinstance(stmt, ast.If) or (
                isinstance(stmt, ast.For)
                and any(isinstance(s, ast.For | ast.If) for s in syntax_items(stmt.body))
            ):
                return None
            if not isinstance(stmt, ast.For):
                made += each_time
                continue
            each = _length(stmt.iterable, self.tr)
            counts[each] = counts.get(each, 0) + each_time
        terms = [each if k == 1 else f"{k} * {_operand(each)}" for each, k in counts.items()]
        return " + ".join([*terms, *([str(made)] if made or not terms else [])])

    def loop(self, stmt: ast.For, depth: int, frames: tuple[Frame, ...]) -> list[str]:
        if self.skip is not None and self.skip.open:  # its statements keep the own names
            raise Unsupported(f"a loop after the skip '{self.skip.skip}' before it is joined")
        self.targets.append(self.indices.get(stmt.span) or count_target(stmt))
        self.loops.append(stmt)
        try:
            lines = self._loop(stmt, depth, frames)
        finally:
            self.targets.pop()
            self.loops.pop()
        return lines + total_mark(depth, self.tr.branch_counts, stmt)  # n += m: a triangle

    def _loop(self, stmt: ast.For, depth: int, frames: tuple[Frame, ...]) -> list[str]:
        written = isinstance(stmt.iterable, ast.ListExpr | ast.TupleExpr)
        applies = applied_target(stmt) if written else None
        given = [] if written else applied_names(stmt)
        listed = None if written else _applied_list(stmt, given)
        items: list[Any]
        if applies is not None:  # for a in [act, sigmoid]: x -> dense(4) -> a
            assert isinstance(stmt.iterable, ast.ListExpr | ast.TupleExpr)
            items = [None] * len(stmt.iterable.items)
            self.applied[applies] = items
            iterable = ""  # the functions the iterations apply, once they are written
        else:
            read = dict(self.tr.read)
            iterable = self.tr.text(stmt.iterable)
            items = list(evaluate(iterable, self.env))
            if listed is not None:  # the list's items are read as the functions applied
                self.tr.read = read
        if listed is not None:  # for w, a in zip(widths, [act, gelu]): x -> dense(w) -> a
            applies, written_list = listed
            given.remove(applies)
            self.applied[applies] = [None] * len(written_list.items)
        if self.given.keys() & set(given):
            raise Unsupported(f"a loop target '{given[0]}' of a loop with the same target")
        self.given |= dict.fromkeys(given, self._stored_items(iterable))
        try:
            if listed is None:
                return self._loop_items(stmt, depth, frames, applies, items, iterable)
            return self._zipped_items(stmt, depth, frames, listed, items, iterable)
        finally:
            for name in given:
                del self.given[name]

    def _zipped_items(
        self,
        stmt: ast.For,
        depth: int,
        frames: tuple[Frame, ...],
        listed: tuple[str, ast.ListExpr | ast.TupleExpr],
        items: list[Any],
        iterable: str,
    ) -> list[str]:
        """``_loop_items`` of a loop over ``zip`` or ``enumerate`` of a written list whose
        item the body applies (``listed``): each iteration binds its items and applies the
        list's as ``a(x)``, and the list is written as the functions the iterations
        applied (``zip(self.widths, [self.act, F.gelu])``), as ``_applied`` collects them
        for a loop over the list itself."""
        applies, written_list = listed
        functions = self.applied[applies]
        assert isinstance(stmt.iterable, ast.Call)
        args = [_APPLIED if a is written_list else self.tr.text(a) for a in stmt.iterable.args]
        with_functions = f"{stmt.iterable.func}({', '.join(args)})"
        lines = self._loop_items(stmt, depth, frames, applies, items, with_functions)
        # _loop_items dropped the functions (as for a loop over the list) and wrote the
        # marker where they go; an item past a shorter list of this call (zip stops there)
        # is written as another iteration applied the same name, or as its operation's
        for index, item in enumerate(written_list.items):
            if functions[index] is None and isinstance(item, ast.Name):
                alike = [
                    functions[other]
                    for other, same in enumerate(written_list.items)
                    if isinstance(same, ast.Name) and same.id == item.id and functions[other]
                ]
                made = alike[0] if alike else function_of(item.id)
                if item.id in self.graph.block_ops or made is None or not _function_text(made):
                    made = alike[0] if alike else None
                functions[index] = made
        if any(item is None for item in functions):
            raise Unsupported(f"an iteration that does not apply '{applies}'")
        return [line.replace(_APPLIED, f"[{', '.join(functions)}]") for line in lines]

    def _loop_items(
        self,
        stmt: ast.For,
        depth: int,
        frames: tuple[Frame, ...],
        applies: str | None,
        items: list[Any],
        iterable: str,
    ) -> list[str]:
        count = self.indices.get(stmt.span)
        body: list[str] | None = None
        alias = self._opening_alias(stmt) if depth == TOP else None
        zipped = _APPLIED in iterable  # a zip or enumerate of the applied list: both
        for index, item in enumerate(items):
            if applies is None or zipped:
                _bind(stmt.target, item, self.env)
            if applies is not None:
                self.applying[applies] = index
            if count is not None:
                self.env[count] = index
            start = self.pos
            found = self.body(stmt.body, depth + 1, (*frames, ("loop", stmt.header_span, index)))
            found = self._temporaries(found, self.nodes[start : self.pos])
            if alias is not None and index == len(items) - 1:
                found = self._last_iteration(found, alias)
            found += add_mark(depth + 1, self.tr.branch_counts, stmt)  # a branch's loop: n += 1
            if body is not None and found != body:
                raise Unsupported(f"the iterations of '{_target_text(stmt.target)}' differ")
            body = found
        if applies is not None:  # the functions each iteration applied, in the calls' terms
            functions = self.applied.pop(applies)
            del self.applying[applies]
            if not zipped and any(item is None for item in functions):
                raise Unsupported(f"an iteration that does not apply '{applies}'")
            if not zipped:
                iterable = f"[{', '.join(functions)}]"
        lines = [f"{INDENT * depth}for {_target_text(stmt.target)} in {iterable}:"]
        if count is not None:  # its count names a module: for i, w in enumerate(self.widths)
            lines = [enumerated_header(INDENT * depth, count, stmt.target, iterable)]
        lines = [counter_marked(lines[0], stmt, self.tr.triangles)]
        if body is not None and not body:
            raise Unsupported("a loop that makes no statement")
        # the body is marked (``BRANCH``) and kept in ``branches``: a call that runs no
        # iteration writes the body another call's iterations wrote
        key = f"{BRANCH}loop {stmt.span.line}:{stmt.span.column}"
        if body is not None and self.branches.setdefault(key, body) != body:
            raise Unsupported(f"the iterations of '{_target_text(stmt.target)}' differ")
        return [*lines, key]

    def _opening_alias(self, stmt: ast.For) -> ast.Assign | None:
        """``s = x`` opening the body of a loop outside loops, ``s`` read nowhere else in
        it and read after it (a skip saved at each iteration's start): forward writes the
        alias there, under the source's names, which no forward of its own names."""
        first = stmt.body[0] if stmt.body else None
        if (
            not isinstance(first, ast.Assign)
            or first.targets
            or not isinstance(first.value, ast.Name)
            or first.target in RESERVED | self.tr.locals | self.tr.params
        ):
            return None
        rest = [n for s in stmt.body[1:] for n in syntax_items(s) if isinstance(n, ast.Name)]
        after = self.source_body[self.source_body.index(stmt) + 1 :]
        later = [n for s in after for n in syntax_items(s) if isinstance(n, ast.Name)]
        taken = self._taken_before(first.target)
        if any(n.id == first.target for n in rest) or taken or self.skip is not None:
            return None
        if not any(n.id == first.target for n in later):
            return None  # read by nothing: no line (``test_alias_that_nothing_reads``)
        self.aliases.add(first.span)
        return first

    def _taken_before(self, name: str) -> bool:
        """Whether forward's own statements name ``name`` other than by binding it after
        the loop first (``s = self.lateral(x)`` of ``s -> conv2d(width, 1) as lateral``
        after it, where ``s`` is the skip): the statements before the loop name it, or the
        first that names it after them reads it (or binds several names)."""
        before = [line for st in self.statements[: self.pos] for line in st if _code(line)]
        if _reads(before, name):
            return True
        first = next((line for line in self.code if _reads([line], name)), None)
        if first is None:
            return False
        if _bound_name(first) != name:
            return True
        return _reads([_bare(first).split(" = ", 1)[1]], name)

    def _last_iteration(self, lines: list[str], alias: ast.Assign) -> list[str]:
        """The last iteration after an opening ``s = x``: its own forward keeps ``x``
        (the skip, read after the loop) and threads the tensor under locals of its own
        (``dense3 = self.fc1(x)``, ``relu2 = F.relu(dense3)``), which are ``x`` again
        here; after the loop ``x`` is ``s`` and the last of them ``x`` (``_Skip``)."""
        assert isinstance(alias.value, ast.Name)
        tensor = alias.value.id
        bound = [_bound_name(line) for line in lines]
        if tensor in bound:
            return lines  # the tensor's own local threads on: nothing renamed
        if bound.count(alias.target) != 1:  # a local the writer named alike
            raise Unsupported(f"the skip '{alias.target}' is bound again in the loop")
        chain = _threaded(lines, bound, tensor, alias.target)
        if not chain:
            return lines
        self.skip = _Skip(chain, tensor, alias.target)
        return [_renamed(line, dict.fromkeys(chain, tensor)) for line in lines]

    def _temporaries(self, lines: list[str], nodes: list[Node]) -> list[str]:
        """An iteration's locals that forward numbers per node (``dense1 = self.fc0(x)``
        of ``.residual``) under one name for every iteration (``dense``), where the
        local is read only in the iteration and the name is free. Two such locals that
        shorten to one name (``dense1`` and ``dense2`` of two ``dense`` steps) share it
        where the second is made after every read of the first, with no loop or branch
        between them."""
        shared: dict[str, int] = {}  # a name given here -> the line that first made it
        for node in nodes:
            name = node.output
            local = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
            # ``gru1, _ = self.gru1(x)`` too: a recurrent layer's output, its state dropped
            bound = re.compile(rf"{re.escape(name)}(?:, _)? = ")
            made = next((i for i, s in enumerate(lines) if bound.match(s.lstrip())), -1)
            if made < 0:
                continue
            inside = sum(len(local.findall(line)) for line in lines)
            if inside != sum(len(local.findall(line)) for line in self.code):
                continue  # read after the iteration: the statements keep their names
            bare = _shared_name(name)
            taken = re.compile(rf"(?<![\w.]){re.escape(bare)}\b")
            if (
                bare == name
                or not bare.isidentifier()
                or bare in RESERVED | self.tr.locals | self.tr.params
                or any(taken.search(line) for line in self.code)
            ):
                continue
            if any(taken.search(_STRING.sub('""', line)) for line in lines):
                start = shared.get(bare)
                if start is None or start > made or any(taken.search(s) for s in lines[made + 1 :]):
                    continue  # another local's, or read after this one is made
                if any(_control(s) for s in lines[start : made + 1]):
                    continue
            shared.setdefault(bare, made)
            lines = [local.sub(bare, line) for line in lines]
        return lines

    def branch(self, stmt: ast.If, depth: int, frames: tuple[Frame, ...]) -> list[str]:
        """``if``/``elif``/``else``: each branch's body written where an instance takes
        it (``BRANCH`` marks it; ``branches`` keeps it), in loops or outside them."""
        pad = INDENT * depth
        lines: list[str] = []
        chosen = False
        for index, branch in enumerate(stmt.branches):
            key = f"{BRANCH}{stmt.span.line}:{stmt.span.column}:{index}"
            if branch.test is None:
                lines.append(f"{pad}else:")
                taken = not chosen
            else:
                test = self.tr.text(branch.test)
                lines.append(f"{pad}{'if' if index == 0 else 'elif'} {test}:")
                taken = not chosen and bool(evaluate(test, self.env))
            lines.append(key)
            if taken:
                chosen = True
                inner = (*frames, ("branch", branch.header_span, 0))
                found = self.body(branch.body, depth + 1, inner)
                found += add_mark(depth + 1, self.tr.branch_counts, branch)  # n += 1
                if self.branches.setdefault(key, found) != found:
                    raise Unsupported("a branch writes differently at two visits")
        return lines


# a number is one token (``0.5``, not ``0`` and ``5``); punctuation is none (``-self.p0``
# holds the ``-`` of ``-1``, fuzz seed 1000089)
_TOKEN = re.compile(r"\d+\.\d*(?:e[-+]?\d+)?|\w+")


def _no_folded_argument(
    graph: Graph,
    node: Node,
    step: ast.Call,
    statement: tuple[str, ...],
    written: Callable[[ast.Expr], str | None],
    expressed: frozenset[Span] = frozenset(),
) -> None:
    """``Unsupported`` where the statement of ``node`` writes the value of an argument the
    source gives as an expression (``multihead_attention(..., causal=p1)`` written
    ``causal=True``): the calls agree on it, but a class built with another ``p1`` would
    compute what they compute (fuzz seed 68000233). The node's statement is emitted again
    with another value of each such argument; a token only the call's value writes that
    the statement holds is the value folded in. A token of an argument's expression as
    forward writes it is not (the ``2`` of ``(self.p0 + 1) // 2``, fuzz seed 76000229)."""
    spec = lookup(node.op)
    if spec is None or node.op == "block":
        return
    try:
        given = _given(spec, step)
    except Unsupported:
        return
    site = _site(graph, node)
    if site is None:
        return
    try:
        base = _emitted(site)
    except Exception:  # noqa: BLE001 - no statement to compare against: nothing known
        return
    shown = [written(expr) for expr in given.values() if not _literal(expr)]
    code = {t for line in statement if _code(line) for t in _TOKEN.findall(_unshown(line, shown))}
    for name, expr in given.items():
        if (
            name not in node.args
            or _literal(expr)
            or expr.span in expressed
            or _written_by_name(graph, site, name)
        ):
            continue
        other = perturbed(plain(node.args[name]))
        if other is None:
            continue
        args = {**site.node.args, name: other}
        try:
            again = _emitted(replace(site, node=replace(site.node, args=args)))
        except Exception:  # noqa: BLE001 - the other value is refused: the value is read
            again = frozenset()
        folded = sorted((base - again) & code)
        if folded:
            raise Unsupported(
                f"the {name} of '{node.id}' is written as its value at these calls"
                f" ('{' '.join(folded)}'), not as the source's expression"
            )


def _written_by_name(graph: Graph, site: Site, name: str) -> bool:
    """Whether the calls' classes write the flag a parameter gives (``causal=p1``) as the
    parameter (``causal=self.p1``) whatever its value: its emitter writes the shown
    parameter alike for either value (``flag``)."""
    param = graph.block_refs.get(site.node.id, {}).get(name)
    value = site.node.args[name]
    if param is None or not isinstance(value, bool):
        return False
    texts = set()
    for either in (value, not value):
        shown = show_named(either, param, lambda _: param)
        try:
            texts.add(
                _emitted(
                    replace(site, node=replace(site.node, args={**site.node.args, name: shown}))
                )
            )
        except Exception:  # noqa: BLE001 - refused: the value is read
            return False
    return len(texts) == 1


def _unshown(line: str, shown: list[str | None]) -> str:
    """``line`` without the arguments' expressions it writes as the source gives them."""
    line = _bare(line)
    for text in sorted(filter(None, shown), key=len, reverse=True):
        line = line.replace(text, " ")
    return line


def _read_names(expr: ast.Expr) -> set[str]:
    return {item.id for item in syntax_items(expr) if isinstance(item, ast.Name)}


def _site(graph: Graph, node: Node) -> Site | None:
    """``node`` at a site of its own (the IR's shapes, its inputs by their names)."""
    found = graph.value_map
    shapes = [found[name].shape if name in found else None for name in node.inputs]
    out = found[node.output].shape if node.output in found else None
    if out is None or any(shape is None for shape in shapes):
        return None
    return Site(
        replace(node, args={name: plain(value) for name, value in node.args.items()}),
        tuple(node.inputs),
        tuple(tuple(plain(shape[1:])) for shape in shapes if shape is not None),
        tuple(plain(out[1:])),
        node.id,
        param_dtype=graph.param_dtype,
    )


def _emitted(site: Site) -> frozenset[str]:
    """The tokens of the statement the node's emitter writes at ``site``."""
    step = emitter(site.node.op).forward(site)
    expr = step.expr.text() if not isinstance(step.expr, str) else step.expr
    return frozenset(_TOKEN.findall(expr))


def _literal_text(value: Any) -> str | None:
    """How a statement writes a number an argument gives (``0.5``, ``-2``); None for
    anything else."""
    if type(value) not in (int, float):
        return None
    return repr(value)


def _operand(text: str) -> str:
    """``text`` where a number stood: parenthesised unless one name, attribute, index,
    call or number (``x * (i + 1)``, not ``x * i + 1``)."""
    atoms = pyast.Name | pyast.Attribute | pyast.Subscript | pyast.Call | pyast.Constant
    return text if isinstance(pyast.parse(text, mode="eval").body, atoms) else f"({text})"


def _occurrences(lines: list[str], written: str) -> list[tuple[int, re.Match[str]]]:
    """Each place ``written`` stands as a whole number in ``lines`` (not a piece of a
    name, of another number or of an exponent), outside strings."""
    pattern = re.compile(rf"(?<![\w.])(?<![eE][-+]){re.escape(written)}(?![\w.])")
    found = []
    for index, line in enumerate(lines):
        strings = [(m.start(), m.end()) for m in _STRING.finditer(line)]
        for match in pattern.finditer(line):
            if not any(a <= match.start() < b for a, b in strings):
                found.append((index, match))
    return found


class _Skip:
    """The statements after a loop whose body opens with ``s = x``, written with the
    loop's names: the per-call forward keeps the skip in ``x`` and the threaded tensor
    in locals of its own, the last holding it at the loop's end (``x = add3 + x``); here
    ``x`` is ``s`` and that local ``x`` (``x = x + s``), until a statement binds ``x``
    again (then that local may not be read, nor the ones before it ever)."""

    def __init__(self, chain: list[str], tensor: str, skip: str) -> None:
        self.local = chain[-1]
        self.dead = chain[:-1]  # ``x`` holds the last: the ones before it are gone
        self.tensor = tensor
        self.skip = skip
        self.open = True  # ``x`` still the skip in the per-call forward
        self.rebound = False  # a statement after the loop bound ``s`` (no longer the skip)

    def statement(self, lines: list[str]) -> list[str]:
        code = [i for i, line in enumerate(lines) if _code(line)]
        if not code:
            return lines
        bare = [_bare(lines[i]) for i in code]
        gone = [name for name in self.dead if _reads(bare, name)]
        if gone or (not self.open and _reads(bare, self.local)):
            name = gone[0] if gone else self.local
            raise Unsupported(f"'{name}' is read after the loop's skip where 'x' holds another")
        if not self.open:
            return lines
        first = lines[code[0]]
        bound = _bound_name(first)
        read = [_bare(first).split(" = ", 1)[1], *bare[1:]] if bound else bare
        if self.rebound and _reads(read, self.tensor):  # ``s`` holds another: no skip
            raise Unsupported(f"the skip '{self.skip}' is read after it is bound again")
        if bound is None and re.match(r"\s*[\w, ()]+ = ", _bare(first)):
            raise Unsupported("an assignment of several names after a loop's skip")
        names = {self.tensor: self.skip, self.local: self.tensor}
        out = list(lines)
        for index in code:
            line = lines[index]
            head = ""
            if index == code[0] and bound is not None:
                head, line = line.split(" = ", 1)
                head = _renamed(head, {self.local: self.tensor}) + " = "
            out[index] = head + _renamed(line, names)
        if bound == self.tensor:
            self.open = False
        if any(_bound_name(line) == self.skip for line in bare):
            self.rebound = True  # ``s = self.lateral(x)``: ``s`` is no longer the skip
        return out


def _threaded(lines: list[str], bound: list[str | None], tensor: str, skip: str) -> list[str]:
    """The locals that hold the threaded tensor in turn from ``tensor`` on (in the order
    they are first bound): each is read by nothing after the next is first bound, so one
    name can hold them all (``x``) and every statement reads what it read. A local read
    together with the one before it (``h`` of ``add3 = x + h``) is not one of them."""
    chain: list[str] = []
    holder = tensor
    for at, name in enumerate(bound):
        if name is None or name == skip or name in (holder, *chain) or bound.index(name) < at:
            continue
        later = lines[_statement_end(lines, at) :]
        if _reads(later, holder) or holder in bound[at + 1 :] or _reads(lines[:at], name):
            continue  # the holder is still read or bound, or the name read before it is bound
        chain.append(name)
        holder = name
    return chain


def _bound_name(line: str) -> str | None:
    """The one name a statement's first line binds (``add3`` of ``add3 = x + h``)."""
    found = _BOUND.match(_bare(line))
    return found[1] if found else None


def _statement_end(lines: list[str], at: int) -> int:
    """The index after the statement starting at ``at`` (its continuation lines indented
    deeper)."""
    pad = len(lines[at]) - len(lines[at].lstrip())
    end = at + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > pad:
        end += 1
    return end


def _reads(lines: list[str], name: str) -> bool:
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    return any(pattern.search(_STRING.sub('""', line)) for line in lines)


def _renamed(line: str, names: Mapping[str, str]) -> str:
    """``line`` with each whole name of ``names`` replaced at once, strings aside."""
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")\b")
    code, comment = line.partition("  # ")[::2]
    pieces = re.split(r'(f?"[^"]*")', code)
    for index in range(0, len(pieces), 2):  # outside strings
        pieces[index] = pattern.sub(lambda m: names[m[1]], pieces[index])
    return "".join(pieces) + (f"  # {comment}" if comment else "")


def _shared_name(local: str) -> str:
    """The one name of an iteration's numbered local (``dense1`` -> ``dense``); one that
    would shadow a builtin or be a keyword takes an underscore (``abs1`` -> ``abs_``,
    fuzz seed 39000190: ``abs1``/``abs2`` made the iterations differ)."""
    bare = local.rstrip("0123456789")
    if keyword.iskeyword(bare) or hasattr(builtins, bare):
        return f"{bare}_"
    return bare


_BOUND = re.compile(r"^\s*(\w+) = ")


def _alike_locals(methods: list[list[str]]) -> list[list[str]]:
    """``methods`` with the locals they bind, in the same order, under one name where the
    names differ only in their number: ``dense3`` in one, ``dense4`` in another, the head
    after a loop whose layers the calls count differently. Unchanged where they differ
    otherwise, or where the one name is taken (the comparison then says they differ)."""
    orders = [
        list(dict.fromkeys(m[1] for line in method if (m := _BOUND.match(line))))
        for method in methods
    ]
    if len({len(order) for order in orders}) != 1:
        return methods
    renames: list[dict[str, str]] = [{} for _ in methods]
    for names in zip(*orders, strict=True):
        if len(set(names)) == 1:
            continue
        if len({n.rstrip("0123456789") for n in names}) != 1:
            return methods
        threaded = _threaded_input(methods, names)
        if threaded is not None and all(threaded not in r.values() for r in renames):
            # dense3 = self.layer_norm1(x) / dense4 = ...: x = self.layer_norm1(x), not
            # a local named after a module it is not
            for rename, name in zip(renames, names, strict=True):
                rename[name] = threaded
            continue
        shared = _shared_name(names[0])
        if any(
            _reads(method, shared) or shared in rename.values()
            for method, rename in zip(methods, renames, strict=True)
        ):
            return methods
        for rename, name in zip(renames, names, strict=True):
            rename[name] = shared
    return [
        [_renamed(line, rename) for line in method] if rename else method
        for method, rename in zip(methods, renames, strict=True)
    ]


_INPUT = re.compile(rf"{INDENT}def forward\(self, (\w+)")


def _threaded_input(methods: list[list[str]], names: Sequence[str]) -> str | None:
    """The forward's first input (``x``) where each method binds its local of ``names``
    first at the top of forward and reads the input nowhere after that line: the local
    then goes on with the tensor, under the input's name, as a hand-written chain does."""
    found = {m[1] for method in methods if (m := _INPUT.match(method[0]))}
    if len(found) != 1:
        return None
    threaded = found.pop()
    for method, name in zip(methods, names, strict=True):
        bound = next(
            (i for i, line in enumerate(method) if (m := _BOUND.match(line)) and m[1] == name),
            None,
        )
        if bound is None or not method[bound].startswith(INDENT * 2):
            return None
        if method[bound].startswith(INDENT * 3) or _reads(method[1:bound], name):
            return None
        if _reads(method[bound + 1 :], threaded):
            return None
    return threaded


def _control(line: str) -> bool:
    """A line that opens a loop or branch, or marks a body still to be filled in."""
    text = line.strip()
    return text.startswith(BRANCH.strip()) or text.split(" ")[0].rstrip(":") in (
        "for",
        "if",
        "elif",
        "else",
        "while",
    )


def _applier(stmt: object, node: Node, applied: Collection[str]) -> str | None:
    """The loop target among ``applied`` that applies ``node`` (a step ``-> a`` or a suffix
    ``.a`` of ``stmt`` at its span), or None."""
    for item in syntax_items(stmt) if applied else ():
        if isinstance(item, ast.Call) and item.span == node.span and item.func in applied:
            return item.func
        if isinstance(item, ast.Suffix) and item.span == node.span and item.name in applied:
            return item.name
    return None


def _one_tensor_call(lines: list[str]) -> tuple[str, str, str, str] | None:
    """``y = f(x)`` (``x.exp()`` as ``torch.exp``) on one line: ``y``, ``f`` and ``x``,
    and its keyword arguments where each is a number or string (``dim=-1``)."""
    if len(lines) != 1:
        return None
    try:
        tree = pyast.parse(lines[0].strip())
    except SyntaxError:
        return None
    assign = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(assign, pyast.Assign) or len(assign.targets) != 1:
        return None
    value = assign.value
    if not isinstance(value, pyast.Call) or any(not _constant(k) for k in value.keywords):
        return None
    keywords = ", ".join(pyast.unparse(k) for k in value.keywords)
    func = value.func
    if (
        not value.args
        and isinstance(func, pyast.Attribute)
        and isinstance(func.value, pyast.Name)
        and func.attr in TORCH_METHODS
    ):
        return pyast.unparse(assign.targets[0]), f"torch.{func.attr}", func.value.id, keywords
    if len(value.args) != 1 or not isinstance(value.args[0], pyast.Name):
        return None
    return pyast.unparse(assign.targets[0]), pyast.unparse(func), value.args[0].id, keywords


def _constant(keyword: pyast.keyword) -> bool:
    """``dim=-1``: a keyword argument whose value is a number, string or bool."""
    if keyword.arg is None:
        return False
    try:
        pyast.literal_eval(keyword.value)
    except ValueError:
        return False
    return True


def _frames(node: Node) -> tuple[Frame, ...]:
    return tuple((f.kind, f.span, f.index) for f in node.origin)


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _calls(stmt: object) -> dict[Span, ast.Call]:
    """Every step of ``stmt`` by its span."""
    return {node.span: node for node in syntax_items(stmt) if isinstance(node, ast.Call)}


def _code(line: str) -> bool:
    return not line.strip().startswith("#")


def _bare(line: str) -> str:
    return line.partition("  # ")[0]


def _indent(line: str, levels: int) -> str:
    return INDENT * levels + line if line else line


def shared_forward(methods: list[list[str]]) -> list[str]:
    """The instances' forwards, which must read alike; a shape comment that differs is
    left out, and so is an input comment line of its own."""
    head = widest_head({m[0] for m in methods})  # padding_mask=None where one has attention
    if head is None:
        raise Unsupported("the calls' forward methods differ")
    methods = _alike_locals([[head, *m[1:]] for m in methods])
    first = methods[0]
    if any(len(m) != len(first) for m in methods):
        raise Unsupported("the calls' forward methods differ")
    out = []
    for index, line in enumerate(first):
        seen = {m[index] for m in methods}
        if len(seen) == 1:
            out.append(line)
        elif all(not _code(s) for s in seen):
            continue
        elif len({_bare(s) for s in seen}) == 1:
            out.append(_bare(line))
        else:
            raise Unsupported("the calls' forward methods differ")
    return out


def _function_text(made: str) -> bool:
    """Whether ``made`` (``function_of``) is a function of ``F`` or ``torch``, bare or
    partial (``functools.partial(F.softmax, dim=-1)``), not a module's instance."""
    return re.fullmatch(r"(functools\.partial\()?(F|torch)\.\w+(, .*\))?", made) is not None


# where a loop over ``zip`` or ``enumerate`` of a written list its body applies writes the
# functions its iterations applied (``_ForwardWriter._zipped_items``)
_APPLIED = "\x00applied"


def _applied_list(
    stmt: ast.For, applied: list[str]
) -> tuple[str, ast.ListExpr | ast.TupleExpr] | None:
    """The name of ``stmt``'s target that its body applies and the written list it draws
    from, where the loop runs over ``zip`` of lists (``for w, a in zip(widths, [act,
    gelu])``) or ``enumerate`` of one (``for i, a in enumerate([act, gelu])``); None
    otherwise."""
    iterable, target = stmt.iterable, stmt.target
    if not isinstance(iterable, ast.Call) or iterable.keywords or iterable.suffixes:
        return None
    sources: list[ast.Expr | None]
    if iterable.func == "zip":
        sources = list(iterable.args)
    elif iterable.func == "enumerate" and len(iterable.args) == 1:
        sources = [None, iterable.args[0]]  # the count, then the list's items
    else:
        return None
    if target.name is not None or len(target.items) != len(sources):
        return None
    found = [
        (sub.name, source)
        for sub, source in zip(target.items, sources, strict=True)
        if sub.name in applied and isinstance(source, ast.ListExpr | ast.TupleExpr)
    ]
    if len(found) != 1:
        return None
    name, written = found[0]
    assert name is not None
    return name, written


def _counted_modules(
    pad: str,
    subject: str,
    items: Sequence[tuple[str, str]],
    bound: str,
    tensor: str,
    otherwise: str,
) -> list[str]:
    """Forward's test of the class ``subject`` holds (a list's item, a parameter's kept
    class) against each of ``items`` (operation, module class) whose modules ``__init__``
    counted: the module of that count applied to ``tensor`` and bound to ``bound``, else
    the statement ``otherwise`` (``_module_item``, ``_module_param``)::

        if a is nn.LayerNorm:
            layer_norm_count += 1
            x = getattr(self, f"layer_norm{layer_norm_count}")(x)
        else:
            x = a()(x)
    """
    out: list[str] = []
    for index, (op, cls) in enumerate(items):
        count = f"{op}_count"
        out += [
            f"{pad}{'elif' if index else 'if'} {subject} is {cls}:",
            f"{pad}{INDENT}{count} += 1",
            f'{pad}{INDENT}{bound} = getattr(self, f"{op}{{{count}}}")({tensor})',
        ]
    return [*out, f"{pad}else:", f"{pad}{INDENT}{otherwise}"]
