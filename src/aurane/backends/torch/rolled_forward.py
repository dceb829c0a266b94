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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aurane.backends.torch.emit_tensor import SPLITS
from aurane.backends.torch.modules import INDENT
from aurane.backends.torch.pyexpr import ATOM, Printed
from aurane.backends.torch.rolled import (
    _CALLED,
    BRANCH,
    RESERVED,
    TOP,
    Translator,
    Unsupported,
    _bind,
    _named,
    _path_text,
    _target_text,
    evaluate,
    syntax_items,
)
from aurane.backends.torch.stage_index import stage_indexed
from aurane.ir.graph import Graph, Node
from aurane.source import Span
from aurane.syntax import ast

_STRING = re.compile(r'f?"[^"]*"')  # a string in a statement (``f"avgpool{i + 1}"``)
Frame = tuple[str, Span, int]  # a loop iteration or a branch, as a node's origin records it
# in the name of an unnamed module after a loop (``dense{n + 1}``): the loop's count, which
# ``__init__`` and forward write apart (``n``, ``self.n``: ``count_text``)
COUNT = "\x00"


def count_text(loop: ast.For, tr: Translator) -> str:
    """How many times ``loop`` runs, as ``tr`` writes it: ``n`` of ``range(n)``, else
    ``len(...)`` of its iterable; parenthesised unless one name or call."""
    iterable = loop.iterable
    one = isinstance(iterable, ast.Call) and iterable.func == "range" and len(iterable.args) == 1
    if isinstance(iterable, ast.Call) and one and not iterable.keywords:
        text = tr.text(iterable.args[0])
    else:
        text = f"len({tr.text(iterable)})"
    atom = isinstance(
        pyast.parse(text, mode="eval").body, pyast.Name | pyast.Attribute | pyast.Call
    )
    return text if atom else f"({text})"


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
        attr = next((applied[p] for p, f in graph.block_ops.items() if node.id in f.nodes), None)
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


def _param_locals(graph: Graph, body: list[str], applied: Mapping[str, str]) -> list[str]:
    """A local named after the node an operation-valued parameter applies (``exp1``,
    ``tanh1``: the operation each call gave) named after the parameter (``act1``), so the
    calls' forwards read alike."""
    names = {
        node: f"{param}{node[len(node.rstrip('0123456789')) :]}"
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

    def _leaf(self, expr: ast.Expr, text: Callable[[ast.Expr], Printed]) -> Printed | None:
        if isinstance(expr, ast.Name) and expr.id in self.params and expr.id not in self.locals:
            attr = self.known.get(expr.id)
            if attr is None:
                attr = self.known[expr.id] = self.attrs.allocate(expr.id)
            self.read[attr] = expr.id
            return f"self.{attr}", ATOM
        return super()._leaf(expr, text)


def rolled_forward(
    model: ast.Model,
    graph: Graph,
    lines: list[str],
    tr: SelfTranslator,
    values: Mapping[str, Any],
    branches: dict[str, list[str]],
    paths: Mapping[Span, str],
    counted: Mapping[Span, ast.For] | None = None,
) -> list[str]:
    """One instance's forward with the source's loops rolled; an ``if`` branch's body is
    marked (``BRANCH``) and kept in ``branches``, shared by the instances; ``paths``: the
    name of each unnamed module in a loop (``rms_norm{i + 1}``), or after one (``counted``:
    the loop whose count numbers it, ``dense{self.n + 1}``)."""
    assert model.forward is not None
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward("))
    head = lines[start]
    inputs = ", ".join(
        p.name + ("=None" if p.default is not None else "") for p in model.forward.inputs
    )
    if head != f"{INDENT}def forward(self, {inputs}):":
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
    for loop_name in tr.locals:
        if re.search(rf"\b{re.escape(loop_name)}\b", text):
            raise Unsupported(f"the loop's name '{loop_name}' is a local of forward")
    env: dict[str, Any] = {"self": _Module(tr, values)}
    writer = _ForwardWriter(graph, statements[:-1], tr, env, branches)
    writer.paths = paths
    writer.counted = counted or {}
    writer.code = [_bare(line) for line in rest if _code(line)]
    body = writer.body(model.forward.body, TOP, ())
    if writer.pos != len(graph.nodes):
        raise Unsupported(f"the layer '{graph.nodes[writer.pos].id}' is not in the rolled forward")
    return [head, *comments, *defaults, *_returned(body, list(statements[-1]))]


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
                return self._params[param]
        raise AttributeError(attr)


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
        self.nodes = list(graph.nodes)
        self.statements = statements
        self.tr = tr
        self.env = env
        self.pos = 0
        self.branches = branches
        self.code: list[str] = []  # the instance's forward, comments left out
        self.paths: Mapping[Span, str] = {}  # unnamed modules in loops: their names
        self.counted: Mapping[Span, ast.For] = {}  # and after one: the loop numbering them
        self.targets: list[str | None] = []  # the loops' targets around the statement

    def body(
        self, stmts: tuple[ast.ForwardStmt, ...], depth: int, frames: tuple[Frame, ...]
    ) -> list[str]:
        lines: list[str] = []
        for stmt in stmts:
            if isinstance(stmt, ast.For):
                lines += self.loop(stmt, depth, frames)
            elif isinstance(stmt, ast.If):
                lines += self.branch(stmt, depth, frames)
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
            if depth == TOP and node.span not in self.counted:
                lines += statement
                continue
            if depth == TOP:  # dense3 = self.dense3(x) after a loop: its name counts it
                lines += self._templated(
                    [_bare(line) for line in statement if _code(line)], node, calls
                )
                continue
            mine = [_indent(_bare(line), depth - TOP) for line in statement if _code(line)]
            lines += self._templated(mine, node, calls)
        return lines

    def _templated(self, lines: list[str], node: Node, calls: Mapping[Span, ast.Call]) -> list[str]:
        """``self.layers0`` as ``getattr(self, f"layers{i}")``: the iteration's module."""
        if node.layer is None and node.span in self.paths:  # self.dense3: an unnamed one
            # a parameter is indexed (``self.positional_encoding1[:, : x.shape[1]]``)
            pattern = re.compile(rf"\bself\.{re.escape(node.id)}(?![\w.])")
            path = self.paths[node.span]
            loop = self.counted.get(node.span)
            if loop is not None:
                path = path.replace(COUNT, count_text(loop, self.tr))
            made = f'getattr(self, f"{path}")'
            return [pattern.sub(made, line) for line in lines]
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
        (``rolled_block._keyed_stages``)."""
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
        return f"{target} + {offset}" if offset > 0 else f"{target} - {-offset}"

    def loop(self, stmt: ast.For, depth: int, frames: tuple[Frame, ...]) -> list[str]:
        self.targets.append(stmt.target.name)
        try:
            return self._loop(stmt, depth, frames)
        finally:
            self.targets.pop()

    def _loop(self, stmt: ast.For, depth: int, frames: tuple[Frame, ...]) -> list[str]:
        iterable = self.tr.text(stmt.iterable)
        lines = [f"{INDENT * depth}for {_target_text(stmt.target)} in {iterable}:"]
        body: list[str] | None = None
        for index, item in enumerate(evaluate(iterable, self.env)):
            _bind(stmt.target, item, self.env)
            start = self.pos
            found = self.body(stmt.body, depth + 1, (*frames, ("loop", stmt.header_span, index)))
            found = self._temporaries(found, self.nodes[start : self.pos])
            if body is not None and found != body:
                raise Unsupported(f"the iterations of '{_target_text(stmt.target)}' differ")
            body = found
        if body is not None and not body:
            raise Unsupported("a loop that makes no statement")
        # the body is marked (``BRANCH``) and kept in ``branches``: a call that runs no
        # iteration writes the body another call's iterations wrote
        key = f"{BRANCH}loop {stmt.span.line}:{stmt.span.column}"
        if body is not None and self.branches.setdefault(key, body) != body:
            raise Unsupported(f"the iterations of '{_target_text(stmt.target)}' differ")
        return [*lines, key]

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
            made = next((i for i, s in enumerate(lines) if s.lstrip().startswith(f"{name} = ")), -1)
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
        if depth == TOP:
            raise Unsupported("an if outside a loop")
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
                if self.branches.setdefault(key, found) != found:
                    raise Unsupported("a branch writes differently at two visits")
        return lines


def _shared_name(local: str) -> str:
    """The one name of an iteration's numbered local (``dense1`` -> ``dense``); one that
    would shadow a builtin or be a keyword takes an underscore (``abs1`` -> ``abs_``,
    fuzz seed 39000190: ``abs1``/``abs2`` made the iterations differ)."""
    bare = local.rstrip("0123456789")
    if keyword.iskeyword(bare) or hasattr(builtins, bare):
        return f"{bare}_"
    return bare


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
