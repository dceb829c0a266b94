"""A parameterised block whose calls differ in loop counts as one class (issue 24 item 3).

``model Stage(width, n)`` with ``for i in range(n): x -> dense(width).relu as layers{i}``
lowers per call with the loop unrolled, so ``Stage(16, 2)`` and ``Stage(16, 3)`` are two
instance graphs of different structure, which ``param_blocks.py`` writes as ``Stage`` and
``Stage_2``. This module writes them as one class instead, with the source's loops as Python
loops in both methods:

- ``__init__`` is the network roller's (``rolled._Walk``, the same checks against each
  instance's IR), starting from the input width ``in_features``/``in_channels``;
- ``forward`` is built from each instance's own forward, one statement per IR node: the
  statements of a loop's iterations, with each templated module written ``getattr(self,
  f"layers{i}")``, must read alike, and become the loop's body (``for i in
  range(self.n):``); an ``if`` inside a loop is a Python ``if`` on the source's test, each
  branch written from an iteration that takes it. The instances must write the same class.

The block's constants (``hidden = 4 * width``) are locals of ``__init__`` (each must give
the compiler's value at every call; one forward reads is stored), an operation-valued
parameter is a module class argument (``act=nn.ReLU``, built once as ``self.act = act()``)
or, where a call gives an operation without an argument-free module class, a function
(``act=F.relu``, stored as ``self.act = act``; calls pass ``torch.exp``),
and a loop may make a second tensor from the threaded one and join it back (``h = x ->
...`` then ``x = add(x, h)``, or ``x = concat(x, h, dim=1)``, the width growing by the
second's: ``channels = channels + growth``), or keep the threaded one under a second name
and join it back (``r = x``, ``x -> ...``, then ``x = add(x, r)`` or ``x = concat(r, x,
dim=1)``: ``block_walk.py``). A later input (``def forward(x, c)``) may be joined to the
threaded tensor without a module (``x = add(x, c)``).

Anything else raises ``rolled.Unsupported`` and the instances keep today's classes.
"""

from __future__ import annotations

import ast as pyast
import builtins
import keyword
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aurane.backends.torch.block_walk import BlockWalk, _makes_module
from aurane.backends.torch.emit_common import lit
from aurane.backends.torch.modules import INDENT, attribute_namespace, wrap
from aurane.backends.torch.named import function_value
from aurane.backends.torch.param_blocks import (
    _module_of,
    input_names,
    operation_kinds,
    rolled_axis,
)
from aurane.backends.torch.pyexpr import ATOM, Printed
from aurane.backends.torch.rolled import (
    _CALLED,
    BRANCH,
    RESERVED,
    TOP,
    Translator,
    Unsupported,
    _bind,
    _fill,
    _loop_names,
    _path_text,
    _target_text,
    check_names,
    evaluate,
    syntax_items,
)
from aurane.ir.graph import Graph, Node
from aurane.semantics.config import MODEL_TABLE
from aurane.semantics.symbolic import plain
from aurane.source import Span
from aurane.syntax import ast

_STRING = re.compile(r'f?"[^"]*"')  # a string in a statement (``f"avgpool{i + 1}"``)
Frame = tuple[str, Span, int]  # a loop iteration or a branch, as a node's origin records it


def _first_difference(instances: Sequence[tuple[Graph, list[str]]]) -> str:
    """The first line two instances' classes write differently (``nn.Linear(8, w)`` against
    ``nn.Linear(5, w)``), which says what keeps them apart."""
    first = instances[0][1]
    for _, lines in instances[1:]:
        for mine, theirs in zip(first[1:], lines[1:], strict=False):  # after the class line
            if mine != theirs:
                return f"'{mine.strip()}' against '{theirs.strip()}'"
    return "different classes"


def roll_block(
    model: ast.Model,
    instances: Sequence[tuple[Graph, list[str]]],
    *,
    name: str,
    constants: Mapping[str, ast.Expr],
    block_models: Mapping[str, ast.Model],
    class_of: Callable[[Graph], str],
    dims_of: Callable[[Graph], tuple[int, ...] | None],
    resolved: Callable[[ast.Model, Mapping[str, Any]], Mapping[str, ast.Expr]] | None = None,
) -> tuple[list[str], int]:
    """The lines of one class for every instance of ``model``, and the sample axis whose
    size its constructor takes first (``rolled_axis``); ``instances`` holds each
    call's graph and the lines of the class written for it alone. ``resolved`` gives a
    call's values of the block's constants as the compiler computed them (each constant's
    text must give them). ``Unsupported`` when the roller cannot write it (the caller
    names the block). Where no call's class takes an input size (the calls' inputs are
    alike) and the channels' walk fails, the last axis is tried (``dense`` layers of a
    sequence that grow its features: ``concat(x, h, dim=-1)``)."""

    def at(axis: int | None) -> tuple[list[str], int]:
        return _roll_block(
            model,
            instances,
            axis,
            name=name,
            constants=constants,
            block_models=block_models,
            class_of=class_of,
            dims_of=dims_of,
            resolved=resolved,
        )

    try:
        return at(None)
    except Unsupported as error:
        last = _unsized_last_axis(instances, dims_of)
        if last is None:
            raise
        try:
            return at(last)
        except Unsupported:
            raise error from None  # the channels' reason, as before the retry


def _unsized_last_axis(
    instances: Sequence[tuple[Graph, list[str]]],
    dims_of: Callable[[Graph], tuple[int, ...] | None],
) -> int | None:
    """The last axis of a sample of rank 2 or more where no call's own class takes an
    input size, which ``rolled_axis`` then leaves at the channels; else None."""
    rank = len(instances[0][0].input_value.shape or ()) - 1
    if rank < 2 or any(dims_of(g) != () for g, _ in instances):
        return None
    return rank - 1


def _roll_block(
    model: ast.Model,
    instances: Sequence[tuple[Graph, list[str]]],
    axis: int | None,
    *,
    name: str,
    constants: Mapping[str, ast.Expr],
    block_models: Mapping[str, ast.Model],
    class_of: Callable[[Graph], str],
    dims_of: Callable[[Graph], tuple[int, ...] | None],
    resolved: Callable[[ast.Model, Mapping[str, Any]], Mapping[str, ast.Expr]] | None,
) -> tuple[list[str], int]:
    """``roll_block`` threading the sample axis ``axis`` (None: ``rolled_axis``'s)."""
    forward = model.forward
    if forward is None or len(instances) < 2:
        raise Unsupported("a block with one instance")
    if not _loops(forward.body):
        raise Unsupported(f"a block without loops whose calls write {_first_difference(instances)}")
    first = instances[0][0]
    # a block's class never checks its input's dtype (only a top-level model's does), so a
    # program's declared input_dtype reaching the block's graph does not stop it
    if any(g.tied for g, _ in instances):
        raise Unsupported("tied weights")
    ops, functions = operation_params([g for g, _ in instances])
    fields = [f.name for f in model.fields]  # the block's constants: locals of __init__
    if any(field in MODEL_TABLE for field in fields):
        raise Unsupported("a block with its own input_shape or input_dtype")
    shape = first.input_value.shape or ()
    params = tuple(p.name for p in model.params)
    rank = len(shape) - 1
    if any(len(g.input_value.shape or ()) != len(shape) for g, _ in instances):
        raise Unsupported("calls at inputs of different ranks")
    if axis is None:
        axis = rolled_axis((dims_of(g) for g, _ in instances), rank)
    width = input_names(rank, params)[axis]
    loops = _loop_names(forward.body)
    names = [*params, *loops, *fields, width]
    check_names(names, [*constants, *block_models])
    tr = Translator(frozenset(names), constants, {})
    local_lines = [f"{INDENT * 2}{f.name} = {tr.text(f.value)}" for f in model.fields]
    envs = [_environment(model, graph, width, axis, tr, resolved) for graph, _ in instances]
    choices: dict[Any, list[str]] = {}
    branches: dict[str, list[str]] = {}
    numbers: dict[Span, set[tuple[str, int, int]]] = {}  # unnamed modules in loops
    paths: dict[Span, str] = {}
    empty_loops: set[str] = set()  # loops that build nothing at a call that runs them
    for strict in (False, True):  # the first walks only narrow the width texts
        inits = None
        unnamed: set[str] | None = None  # the unnamed modules outside loops, by the IR's name
        for (graph, _), env in zip(instances, envs, strict=True):
            walk = BlockWalk(graph, dict(env), tr, class_of, dims_of, block_models, size=width)
            walk.axis = axis + 1 if axis == 0 else -1
            walk.tensor = forward.param
            walk.inputs_ = frozenset(forward.input_names[1:])
            walk.choices, walk.strict = choices, strict
            walk.numbers, walk.paths = numbers, paths
            walk.statements = forward.body
            walk.empty_loops = empty_loops
            if strict:
                walk.branches = branches
            found = walk.body(forward.body, TOP)
            if walk.second is not None:
                raise Unsupported(f"the tensor '{walk.second}' is not joined back")
            left = [n for n in walk.pending if n.layer or _makes_module(n)]
            if left:
                raise Unsupported(f"the layer '{left[0].id}' is not made by the rolled class")
            if walk.out_sizes:
                raise Unsupported("a block given as a parameter")
            if unnamed is not None and walk.unnamed != unnamed:
                raise Unsupported(
                    f"an unnamed module after a loop, numbered by the calls' counts "
                    f"('{min(walk.unnamed ^ unnamed)}'): name it with 'as'"
                )
            unnamed = walk.unnamed
            if strict and inits is not None and found != inits:
                raise Unsupported(f"the calls of '{model.name}' build differently")
            inits = found
    assert inits is not None
    inits = _fill(inits, branches)
    heads = {line.split("=")[0].strip() for line in inits if " = " in line}
    attrs = attribute_namespace()
    attrs.claim(n.layer.split(".")[0] for g, _ in instances for n in g.nodes if n.layer)
    attrs.claim(n.id for g, _ in instances for n in g.nodes if n.span in paths)
    attrs.claim(h.removeprefix("self.").split(".")[0] for h in heads if h.startswith("self."))
    stored, op_modules = _stored(instances, {width, *params}, set(ops), set(functions))
    attrs.claim(stored)
    attrs.claim(line.split("=")[0].strip().removeprefix("self.") for line in op_modules)
    applied = {param: attrs.allocate(param) for param in functions}  # self.act = act
    forward_tr = _SelfTranslator(frozenset(loops), constants, {*params, *fields}, attrs, stored)
    branches_forward: dict[str, list[str]] = {}  # each branch's body, from any instance
    methods = [
        _forward(model, g, _applied(g, lines, applied), forward_tr, env, branches_forward, paths)
        for (g, lines), env in zip(instances, envs, strict=True)
    ]
    body = _fill(_shared(methods), branches_forward)
    signature = [width]
    defaults = dict(first.block_defaults)
    for param in params:
        if param in defaults:
            signature.append(f"{param}={lit(plain(defaults[param]))}")
        elif ops.get(param) is not None:  # act=nn.ReLU, as a class of one call writes it
            signature.append(f"{param}={ops[param]}")
        elif functions.get(param) is not None:  # act=F.relu: a function, applied as is
            signature.append(f"{param}={functions[param]}")
        else:
            signature.append(param)
    stores = {**stored, **forward_tr.read}
    lines = [
        f"class {name}(nn.Module):",
        *wrap(1, "", f"def __init__(self, {', '.join(signature)})", tail=":"),
        f"{INDENT * 2}super().__init__()",
        *local_lines,
        *(f"{INDENT * 2}self.{attr} = {param}" for attr, param in sorted(stores.items())),
        *op_modules,
        *(f"{INDENT * 2}self.{attr} = {param}" for param, attr in applied.items()),
        *inits,
        "",
        *body,
    ]
    return lines, axis


def operation_params(
    graphs: Sequence[Graph],
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The operation-valued parameters the class takes as module classes (``act=nn.ReLU``:
    every call gives an operation with an argument-free module class), and those it takes
    as functions (``act=F.relu``, a call passing ``torch.exp`` or
    ``functools.partial(F.softmax, dim=1)``), each with its default (None: none)."""
    first = graphs[0]
    if any(set(g.block_ops) != set(first.block_ops) for g in graphs):
        raise Unsupported("an operation-valued argument without a module class")
    ops, functions = operation_kinds(graphs)
    for param, default in functions.items():
        for graph in graphs:
            given = graph.block_ops[param]
            nodes = {n.id: n for n in graph.nodes}
            if given.passed or any(nodes[n].layer for n in given.nodes):
                raise Unsupported("an operation-valued argument without a module class")
            if function_value(graph, param) is None:
                raise Unsupported(f"an operation given for '{param}' that is no function")
        if first.block_ops[param].default is not None and default is None:
            raise Unsupported(f"the default of '{param}' is no function")
    return ops, functions


def _applied(graph: Graph, lines: list[str], applied: Mapping[str, str]) -> list[str]:
    """The instance's class with each statement of a node an operation-valued parameter
    applies written ``x = self.act(x)``, whatever the instance's class wrote for it
    (``x = x.exp()``, ``x = self.act(x)`` of ``act()``, ``x = F.softmax(x, dim=1)``)."""
    if not applied:
        return lines
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward("))
    rest = lines[start + 1 :]
    comments = []
    while rest and rest[0].startswith(f"{INDENT * 2}# "):
        comments.append(rest.pop(0))
    statements = _statements(rest)
    if len(statements) != len(graph.nodes) + 1:
        raise Unsupported("a forward that is not one statement per layer")
    for index, node in enumerate(graph.nodes):
        attr = next((applied[p] for p, f in graph.block_ops.items() if node.id in f.nodes), None)
        if attr is None:
            continue
        statement = statements[index]
        try:
            tree = pyast.parse(_bare(statement[0]).strip())
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


def _loops(body: tuple[ast.ForwardStmt, ...]) -> bool:
    return any(isinstance(s, ast.For) for s in body)


def _environment(
    model: ast.Model,
    graph: Graph,
    width: str,
    axis: int,
    tr: Translator,
    resolved: Callable[[ast.Model, Mapping[str, Any]], Mapping[str, ast.Expr]] | None,
) -> dict[str, Any]:
    """The instance's parameter values (an operation-valued one as its module class,
    ``nn.ReLU``), input width and constants, as the class receives and computes them."""
    given = {**plain(dict(graph.block_defaults)), **plain(dict(graph.block_args))}
    env: dict[str, Any] = {**given, **{p: _module_of(graph, p) for p in graph.block_ops}}
    shape = graph.input_value.shape
    if shape is None or len(shape) < 2:
        raise Unsupported("a block input without a channel or feature axis")
    env[width] = int(plain(shape[axis + 1]))
    if not model.fields:
        return env
    if resolved is None:
        raise Unsupported("a block with constants")
    expected = resolved(model, given)
    literal = Translator(frozenset(), {}, {})
    for field in model.fields:
        text = tr.text(field.value)
        env[field.name] = evaluate(text, env)
        value = expected.get(field.name)
        if value is None or env[field.name] != evaluate(literal.text(value), {}):
            raise Unsupported(f"the constant '{field.name}' is not '{text}' at every call")
    return env


def _stored(
    instances: Sequence[tuple[Graph, list[str]]],
    names: set[str],
    ops: set[str],
    functions: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[dict[str, str], list[str]]:
    """``self.width = width``: what each instance's constructor stores for its forward; and
    ``self.act = act()``: the module each operation-valued parameter makes, which follow
    (a class of one call builds ``act()`` where the rolled class takes a function: left
    out, the rolled class stores the function)."""
    found: tuple[dict[str, str], list[str]] | None = None
    for _, lines in instances:
        start = lines.index(f"{INDENT * 2}super().__init__()") + 1
        mine: dict[str, str] = {}
        made: list[str] = []
        for line in lines[start:]:
            matched = re.fullmatch(rf"{INDENT * 2}self\.(\w+) = (\w+)(\(\))?", line)
            if matched is None:
                break
            if matched.group(3) is None and matched.group(2) in names and not made:
                mine[matched.group(1)] = matched.group(2)
            elif matched.group(3) is not None and matched.group(2) in ops:
                made.append(line)
            elif matched.group(3) is not None and matched.group(2) in functions:
                continue
            else:
                break
        if found is not None and made != found[1]:
            raise Unsupported("the calls' forwards read different stored values")
        found = (_merged(found[0] if found is not None else {}, mine), made)
    return found or ({}, [])


def _merged(known: Mapping[str, str], mine: Mapping[str, str]) -> dict[str, str]:
    """The values two calls' forwards read (attribute -> parameter): a call whose loop
    runs no iteration reads fewer, and the class stores what any call reads; each
    attribute must hold one parameter (forwards that read one under two names differ,
    which their comparison finds)."""
    if any(known.get(attr, param) != param for attr, param in mine.items()):
        raise Unsupported("the calls' forwards read different stored values")
    return {**known, **mine}


class _SelfTranslator(Translator):
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


def _forward(
    model: ast.Model,
    graph: Graph,
    lines: list[str],
    tr: _SelfTranslator,
    values: Mapping[str, Any],
    branches: dict[str, list[str]],
    paths: Mapping[Span, str],
) -> list[str]:
    """One instance's forward with the source's loops rolled; an ``if`` branch's body is
    marked (``BRANCH``) and kept in ``branches``, shared by the instances; ``paths``: the
    name of each unnamed module in a loop (``rms_norm{i + 1}``)."""
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
    while rest and rest[0].startswith(f"{INDENT * 2}# "):
        comments.append(rest.pop(0))
    defaults = _default_inputs(
        rest, [p.name for p in model.forward.inputs if p.default is not None]
    )
    rest = rest[len(defaults) :]
    statements = _statements(rest)
    if len(statements) != len(graph.nodes) + 1 or not statements[-1][0].strip().startswith(
        "return "
    ):
        raise Unsupported("a forward that is not one statement per layer")
    text = "\n".join(rest)
    for loop_name in tr.locals:
        if re.search(rf"\b{re.escape(loop_name)}\b", text):
            raise Unsupported(f"the loop's name '{loop_name}' is a local of forward")
    env: dict[str, Any] = {"self": _Module(tr, values)}
    writer = _ForwardWriter(graph, statements[:-1], tr, env, branches)
    writer.paths = paths
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

    def __init__(self, tr: _SelfTranslator, params: Mapping[str, Any]) -> None:
        self._tr = tr
        self._params = params

    def __getattr__(self, attr: str) -> Any:
        for param, known in self._tr.known.items():
            if known == attr:
                return self._params[param]
        raise AttributeError(attr)


def _statements(lines: list[str]) -> list[tuple[str, ...]]:
    out: list[list[str]] = []
    for line in lines:
        top = line.startswith(INDENT * 2) and not line.startswith(INDENT * 3)
        if top and line.strip()[:1] not in (")", "]", "}") and not line.strip().startswith("#"):
            out.append([line])
        elif out:
            out[-1].append(line)
        else:
            raise Unsupported("a forward that starts with a comment between statements")
    return [tuple(s) for s in out]


class _ForwardWriter:
    """Walks the source's forward body along one instance's nodes (in order, each node's
    ``origin`` naming its loop iteration and branch) and writes its statements."""

    def __init__(
        self,
        graph: Graph,
        statements: list[tuple[str, ...]],
        tr: _SelfTranslator,
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
            if depth == TOP:
                lines += statement
                continue
            mine = [_indent(_bare(line), depth - TOP) for line in statement if _code(line)]
            lines += self._templated(mine, node, calls)
        return lines

    def _templated(self, lines: list[str], node: Node, calls: Mapping[Span, ast.Call]) -> list[str]:
        """``self.layers0`` as ``getattr(self, f"layers{i}")``: the iteration's module."""
        if node.layer is None and node.span in self.paths:  # self.dense3: an unnamed one
            # a parameter is indexed (``self.positional_encoding1[:, : x.shape[1]]``)
            pattern = re.compile(rf"\bself\.{re.escape(node.id)}(?![\w.])")
            made = f'getattr(self, f"{self.paths[node.span]}")'
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
        pattern = re.compile(rf"\bself\.{re.escape(node.layer)}(?![\w.\[])")
        made = f'getattr(self, f"{path}")'
        return [pattern.sub(made, line) for line in lines]

    def _indexed(self, lines: list[str], layer: str, call: ast.Call) -> list[str]:
        """``self.layers[1]`` as ``self.layers[i]``: a numbered container ``layers.{i}``."""
        head, _, key = call.layer.rpartition(".") if call.layer else ("", "", "")
        index = layer.rpartition(".")[2]
        if key == "*" and head.isidentifier() and not call.layer_holes:
            hole = self._next_child(layer)
        elif key != "{}" or not head.isidentifier() or len(call.layer_holes) != 1:
            raise Unsupported(f"the layer '{layer}' in a loop is not a numbered child")
        else:
            hole = self.tr.text(call.layer_holes[0])
        if f"{head}.{evaluate(hole, self.env)}" != layer:
            raise Unsupported(f"the layer '{layer}' is not numbered by its loop")
        pattern = re.compile(rf"\bself\.{head}\[{index}\](?![\w.\[])")
        return [pattern.sub(f"self.{head}[{hole}]", line) for line in lines]

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
            bare = name.rstrip("0123456789")
            taken = re.compile(rf"(?<![\w.]){re.escape(bare)}\b")
            if (
                bare == name
                or not bare.isidentifier()
                or keyword.iskeyword(bare)
                or hasattr(builtins, bare)
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


def _shared(methods: list[list[str]]) -> list[str]:
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
