"""A network block used through variants as one class with Python loops (issue 24 item 3).

``model resnet50 = ResNet(Bottleneck, [3, 4, 6, 3])`` lowers the network's forward with its
compile-time loops unrolled, so each variant's own class lists every layer. When the
network's body stays within what this module can write, the file instead gets
``class ResNet(nn.Module)`` whose ``__init__`` runs the source's loops in Python, and each
variant becomes ``class resnet50(ResNet)`` passing its arguments, as torchvision writes it.

The class is written from the source, not from the IR: loop headers, layer names
(``f"layer{i + 1}"``) and arguments are the source's expressions in Python. A running
``channels`` holds the width of the tensor the loop threads: after a block call it is read
from the block (``layer.out_channels``, which the block's class then stores) or written as
the block's output size in the call's terms. The IR checks every step: the text is built
while walking the source once per variant with that variant's values, each expression is
evaluated and must give the IR's number (argument, input width, layer path), every
iteration of a loop must write the same text, every layer of the IR must be made, and the
variants must share the forward and ``_init_weights`` text (shape comments aside).
Anything else raises ``Unsupported`` and the variants keep their own classes
(docs/codegen.md lists the fallbacks).
"""

from __future__ import annotations

import ast as pyast
import math
import re
from collections import ChainMap, Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import takewhile
from typing import Any

from aurane.backends.torch.emit import emitter
from aurane.backends.torch.emit_common import REGISTER_BUFFER, Call, Site, lit
from aurane.backends.torch.folded_sizes import (
    ARGUMENT,
    hidden_params,
    keeps_arguments,
    passes_input_sizes,
    resizing_args,
    size_flags,
    spatial_trees,
)
from aurane.backends.torch.inner_widths import CONSTANT, INPUT, InnerWidths
from aurane.backends.torch.kinds import (
    differs,
    is_number,
    refusing_text,
    without_kind_tests,
)
from aurane.backends.torch.layer_names import repeating_name
from aurane.backends.torch.modules import INDENT, LINE_LIMIT, attribute_namespace, wrap
from aurane.backends.torch.named import (
    FUNCTION_MODULES,
    module_class,
    module_factory,
    module_init,
    operation_items,
)
from aurane.backends.torch.norm_axes import axes_refusal
from aurane.backends.torch.param_blocks import (
    MAKE_DIVISIBLE,
    _module_of,
    input_names,
    loop_params,
)

# re-exported: block_walk, rolled_forward and roll_check import it from here
from aurane.backends.torch.piece_widths import piece_width
from aurane.backends.torch.pyexpr import (
    ATOM,
    NotPython,
    Printed,
    kind_compare,
    negation,
    python_text,
)
from aurane.backends.torch.refusals import refusal
from aurane.backends.torch.shown import ShownBool, ShownFloat, ShownInt, ShownStr
from aurane.backends.torch.stage_apply import children_one_by_one, whole_stages
from aurane.backends.torch.untaken import (
    deciding_params,
    kind_blind,
    numbers_after,
    refusal_lines,
    refused_reason,
)
from aurane.backends.torch.whole_numbers import boolean_refusals, number_names
from aurane.ir.blocks import first_input_terms
from aurane.ir.graph import Graph, Node
from aurane.ops import lookup
from aurane.ops.buffer import buffer_dtype
from aurane.ops.layers import channel_first
from aurane.ops.rules import FLOAT_DTYPES
from aurane.ops.shape import int_items
from aurane.ops.spec import OpSpec
from aurane.records import fields, is_record, record, replace
from aurane.semantics.config import MODEL_TABLE
from aurane.semantics.functions import make_divisible
from aurane.semantics.symbolic import (
    PRINTED,
    Expr,
    InputSize,
    Lit,
    Ref,
    is_symbolic,
    leaves,
    plain,
    symbol,
    table_constants,
    table_name,
    to_python,
    tree_of,
)
from aurane.semantics.values import OpValue
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.items import syntax_items

# per unnamed module whose name reads loop counts: each nest of loops (each nested in the
# one before) whose count of iterations it reads, in the order of its name's count marks
# (``rolled_forward.count_mark``)
Counts = tuple[tuple[ast.For, ...], ...]

# the input sizes a block class takes: the first input's axes, then later inputs' sizes
SizesOf = Callable[[Graph], "tuple[tuple[int, ...], tuple[InputSize, ...]] | None"]


# the forward written with the source's loops, and the constructor's lines storing what it
# reads (``network_forward.looped_forward``), given the network, each variant's graph,
# class text and values, the loop targets, the names forward may read from the module,
# ``__init__``'s lines, the unnamed modules' names in loops (and the inner loop whose
# count a name in nested loops reads), the module's constants and the counts of the loops
# over items that name modules (``loop_indices``), and the triangles of loops whose running
# counts name modules (``triangles``), and the running counts of the modules the branches
# taken made (``BranchCount``)
LoopedForward = Callable[
    [
        ast.Model,
        list[tuple[Graph, str, Mapping[str, Any]]],
        set[str],
        list[str],
        list[str],
        Mapping[Span, str],
        Mapping[Span, Counts],
        Mapping[str, ast.Expr],
        Mapping[Span, str],
        "tuple[Triangle, ...]",
        Container[str],
        "tuple[BranchCount, ...]",
    ],
    tuple[list[str], list[str]],
]


class Unsupported(Exception):
    """The network cannot be rolled; the message says what (the variants keep their classes)."""


class Untaken(Unsupported):
    """A loop or ``if`` branch that no variant runs: there is no IR to write its body
    from. The block roller lowers the block once more at arguments that run it
    (``rolled_block.roll_block``'s ``phantoms``) and tries again."""

    def __init__(self, what: str, key: str) -> None:
        super().__init__(f"{what} that no variant takes")
        self.key = key  # the body's marker (``BRANCH``), naming the statement's position


class InputWidthFolded(Unsupported):
    """An inner block's class written for its calls' input width (``nn.Linear(6, w)``),
    called by the rolled class at a running width on the sample axis ``axis``: the block
    roller's caller may write that class taking the width (``param_blocks``) and roll
    again."""

    def __init__(self, message: str, block: str, axis: int) -> None:
        super().__init__(message)
        self.block = block
        self.axis = axis


@record(frozen=True)
class Model:
    """A block class a model-valued argument names (``Bottleneck``), by the rolled class."""

    name: str


@record(frozen=True)
class LoopWidth:
    """A rolled block class whose output width is what a loop leaves (``channels`` after
    ``for i in range(k): x -> dense(width)``): the parameters its loops' counts read
    (``k``; none where the width is an expression of its arguments), and whether it can
    store that width for a caller (``self.out_channels = channels``: it keeps the local)."""

    counts: frozenset[str]
    stored: bool


@record(frozen=True)
class Rolled:
    network: list[str]  # the network's class
    entries: dict[str, list[str]]  # variant model -> its entry class (a subclass)
    out_sizes: dict[str, str]  # block class -> the expression it stores as out_channels
    # rolled block classes whose width it reads from the module (what their loop left)
    read_widths: frozenset[str] = frozenset()
    # why it refuses arguments that no variant gives (a body no variant runs, left out)
    refused: tuple[str, ...] = ()


_FUNCTIONS: dict[str, Any] = {
    "range": range,
    "enumerate": enumerate,
    "zip": zip,
    "len": len,
    "min": min,
    "max": max,
    "int": int,
    "round": round,
    "abs": abs,
    "list": list,
    "tuple": tuple,
    MAKE_DIVISIBLE: make_divisible,  # the function the generated file defines
    "math": math,  # math.ceil: the language's ceil as written (semantics.symbolic.PRINTED)
}


class _ModuleClasses:
    """``nn`` as the walk evaluates it: ``nn.ReLU`` is its text, as ``_module_of`` gives."""

    def __getattr__(self, name: str) -> str:
        return f"nn.{name}"


_FUNCTIONS["nn"] = _ModuleClasses()
# what a test of a parameter given booleans and numbers calls (``pyexpr.kind_compare``)
_KIND_TESTS = {"isinstance": isinstance, "bool": bool}
# the functions a translated expression calls: the language's (``ceil`` as math.ceil) and
# the iteration helpers a loop header uses
_ITERATION = ("range", "enumerate", "zip", "len", "list", "tuple")
_CALLED = {**PRINTED, **{name: name for name in _ITERATION}}
LONG_CONSTANT = 40  # a module constant written longer is a local table of __init__
SIZE = "channels"  # the running width's local
# the locals carrying the spatial sizes a loop changes, by the sample's rank
RUNNING_SIZES: Mapping[int, tuple[str, ...]] = {
    2: ("length",),
    3: ("height", "width"),
    4: ("depth", "height", "width"),
}
STAGE = "stage"  # a numbered container a loop fills
LAYER = "layer"  # the block a loop iteration made
# what a rolled class's own code reads: no parameter, loop target or constant may shadow it
RESERVED = frozenset({SIZE, STAGE, LAYER, "self", "nn", "F", "torch", "setattr", "getattr"})
RESERVED |= frozenset(_FUNCTIONS)
TOP = 2  # the indentation of __init__'s statements
BRANCH = "\x00branch "  # marks where an if branch's body goes
# the body of an if's branch that no call runs, the arguments taking it refused: a branch
# never taken, which ``without_empty_branches`` drops with its header
UNWRITTEN = "\x00unwritten"


class Translator:
    """Aurane constant expressions as Python text, names resolved by scope."""

    def __init__(
        self,
        locals_: frozenset[str],
        constants: Mapping[str, ast.Expr],
        classes: Mapping[str, str],
    ) -> None:
        self.locals = locals_
        self.constants = constants
        self.classes = classes  # model name -> its class
        self.tables: dict[str, ast.Expr] = {}  # long module constants the class names
        self.table_values: dict[str, Any] = {}
        # a local shadows a function of the same name (then the call is not written)
        self.functions = {name: python for name, python in _CALLED.items() if name not in locals_}
        # the triangles of loops whose running counts name modules (``triangles``)
        self.triangles: tuple[Triangle, ...] = ()
        # the running counts of the modules the ifs' branches taken made, one for each
        # operation whose later unnamed modules are numbered on from them (``BranchCount``)
        self.branch_counts: tuple[BranchCount, ...] = ()
        # the parameters a boolean and a number may both reach (``pyexpr.kind_compare``)
        self.mixed: frozenset[str] = frozenset()
        # a block's constants the file defines as module constants, read by their names
        # (``sizes`` as ``SIZES``, ``tables.TableNames``)
        self.aliases: dict[str, str] = {}

    def triangle_of(self, loop: ast.For) -> Triangle | None:
        """The triangle whose outer loop is ``loop`` (``triangles``), if any."""
        return next((t for t in self.triangles if t.outer.span == loop.span), None)

    def table_lines(self, depth: int) -> list[str]:
        """``stages = [`` one item a line ``]``: each long module constant the class reads."""
        pad = INDENT * depth
        lines: list[str] = []
        for name, expr in self.tables.items():
            if isinstance(expr, ast.ListExpr | ast.TupleExpr):
                lines += self.item_lines(pad, f"{name} = ", expr)
            else:
                lines.append(f"{pad}{name} = {self.text(expr)}")
        return lines

    def item_lines(
        self, pad: str, head: str, expr: ast.ListExpr | ast.TupleExpr, tail: str = ""
    ) -> list[str]:
        """``head[``, one item a line, ``]tail``: a long list or tuple as black writes it."""
        opener, closer = ("[", "]") if isinstance(expr, ast.ListExpr) else ("(", ")")
        items = [f"{pad}{INDENT}{self.text(item)}," for item in expr.items]
        return [f"{pad}{head}{opener}", *items, f"{pad}{closer}{tail}"]

    def text(self, expr: ast.Expr) -> str:
        try:
            return python_text(expr, self._leaf, self.functions)
        except NotPython as error:
            raise Unsupported(str(error)) from error

    def _leaf(self, expr: ast.Expr, text: Callable[[ast.Expr], Printed]) -> Printed | None:
        """A name by scope: a local, a module constant (inlined, or a table when long), a
        model's class, an operation's module class (``relu`` given to a block: nn.ReLU)."""
        if isinstance(expr, ast.Compare | ast.BoolOp):  # p == 0 where p may be False: kinds
            return kind_compare(expr, text, self.mixed)  # told apart (``kinds.equal_text``)
        if isinstance(expr, ast.Name):
            if expr.id in self.aliases:
                return self.aliases[expr.id], ATOM
            if expr.id in self.locals:
                return expr.id, ATOM
            if expr.id in self.constants:
                inlined = text(self.constants[expr.id])
                named = table_name(inlined[0])
                if named != inlined[0] and len(inlined[0]) <= LONG_CONSTANT:
                    return named, ATOM  # a table written once, a module constant: CFG
                if len(inlined[0]) <= LONG_CONSTANT:
                    return inlined
                self.tables.setdefault(expr.id, self.constants[expr.id])
                self.table_values.setdefault(expr.id, evaluate(inlined[0], {}))
                return expr.id, ATOM  # a table: a local of __init__, one item a line
            if expr.id in self.classes:
                return self.classes[expr.id], ATOM
            made = module_class(expr.id)
            if made is not None:  # gelu in a loop's list (for a in [act, gelu]): nn.GELU
                return made, ATOM
            factory = module_factory(expr.id)
            if factory is not None:  # softmax: nn.Softmax needs its dim, no class alone
                raise Unsupported(
                    f"the operation '{expr.id}' has no module class built without"
                    f" arguments to pass as a value ({factory})"
                )
            raise Unsupported(f"the name '{expr.id}' has no Python value here")
        if isinstance(expr, ast.OpRef):
            if expr.name in self.locals:
                return expr.name, ATOM
            if expr.name in self.classes:
                return self.classes[expr.name], ATOM
            made = module_class(expr.name)
            if made is not None:  # relu given to a block: its module class, nn.ReLU
                return made, ATOM
            raise Unsupported(f"the operation '{expr.name}' as a value")
        return None


def evaluate(text: str, env: Mapping[str, Any]) -> Any:
    """The value of a translated expression: only names of ``env`` and ``_FUNCTIONS``."""
    try:
        constants = {**_FUNCTIONS, **_KIND_TESTS, **table_constants()}  # SIZES[k]
        return eval(text, {"__builtins__": {}, **constants}, dict(env))  # noqa: S307
    except Exception as error:  # an expression the variant's values cannot evaluate
        raise Unsupported(f"'{text}' does not evaluate: {error}") from error


def _bind(target: ast.LoopTarget, value: Any, env: dict[str, Any]) -> None:
    if target.name is not None:
        env[target.name] = value
        return
    items = list(value)
    if len(items) != len(target.items):
        raise Unsupported("a loop target does not unpack its item")
    for item, sub in zip(items, target.items, strict=True):
        _bind(sub, item, env)


def _sets_size(body: list[str]) -> bool:
    return any(line.strip().startswith(f"{SIZE} = ") for line in body)


def _steady(body: list[str], text: str) -> list[str]:
    """A loop body without its ``channels = text`` lines where ``channels`` held ``text``
    before the loop and the body sets it to nothing else (nor rebinds a name ``text``
    reads): a layer whose own width argument keeps the width writes no line then."""
    assigned = [line.strip() for line in body if line.strip().startswith(f"{SIZE} = ")]
    if not assigned or any(a != f"{SIZE} = {text}" for a in assigned):
        return body
    names = set(re.findall(r"[A-Za-z_]\w*", text))
    for line in body:
        bound = re.match(r"\s*(?:for\s+)?([\w, ()]+?)\s*(?:=|\bin\b)", line)
        if bound and names & set(re.findall(r"\w+", bound[1])) and SIZE not in bound[1]:
            return body
    return [line for line in body if line.strip() != f"{SIZE} = {text}"]


def _target_text(target: ast.LoopTarget, top: bool = True) -> str:
    if target.name is not None:
        return target.name
    inner = ", ".join(_target_text(t, False) for t in target.items)
    if len(target.items) == 1:
        inner += ","  # a one-item tuple (``for a0, in cfg``) unpacks; ``(a0)`` would not
    return inner if top else f"({inner})"


# ends the header of a loop over items (``for w in widths``) whose count names its unnamed
# modules: ``for i, w in enumerate(widths):`` until the filled class shows whether its body
# reads ``w`` (``enumerated``), else ``for i in range(len(widths)):``
ENUMERATED = "\x00enumerated"
_ENUMERATED = re.compile(rf"( *)for (\w+), (.+?) in enumerate\((.+)\):{ENUMERATED}")
_INDICES = ("i", "j", "k", "index")


def count_target(loop: ast.For) -> str | None:
    """The name of ``loop``'s target that counts its iterations (``i`` of ``for i in
    range(n)`` or ``for i, w in enumerate(widths)``); None for a loop over items (``for
    w in widths``, ``for w, k in cfg``), whose count ``loop_indices`` names."""
    iterable, target = loop.iterable, loop.target
    if isinstance(iterable, ast.Call) and iterable.func == "range":
        return target.name
    if isinstance(iterable, ast.Call) and iterable.func == "enumerate" and target.items:
        return target.items[0].name
    return None


def loop_indices(body: tuple[ast.ForwardStmt, ...], taken: Iterable[str]) -> dict[Span, str]:
    """Each loop of ``body`` over items (no ``count_target``): the name of its count
    of iterations, which names its unnamed modules (``dense{i + 1}`` in ``for i, w in
    enumerate(widths)``): ``i``, ``j``, ``k``, ``index``, ``index2``, ..., the first that
    no name of ``body``, of ``taken`` nor an enclosing loop's count is."""
    used = set(taken) | {
        item for item in syntax_items(body) if isinstance(item, str) and item.isidentifier()
    }
    out: dict[Span, str] = {}

    def visit(stmts: tuple[ast.ForwardStmt, ...], enclosing: frozenset[str]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                for branch in stmt.branches:
                    visit(branch.body, enclosing)
            if not isinstance(stmt, ast.For):
                continue
            inner = enclosing
            if count_target(stmt) is None:
                more = (f"index{n}" for n in range(2, len(used) + 3))
                free = (n for n in (*_INDICES, *more) if n not in used | enclosing)
                out[stmt.span] = next(free)
                inner = enclosing | {out[stmt.span]}
            visit(stmt.body, inner)

    visit(body, frozenset())
    return out


# a triangle of loops (``triangles``): the headers of its outer loop (the counter starts
# before it) and of its inner one (each iteration counts itself), marked with the
# counter's name until the filled method shows whether a name reads it (``enumerated``)
COUNTER = "\x00counter"
_COUNTER = re.compile(rf"(.*){COUNTER} (start|step) (\w+)")
# a line of its own: a branch count's start (``zero``) or a branch's modules (``add``)
_COUNT_LINE = re.compile(rf"( *){COUNTER} (zero|add) (\w+)(?: (\d+|(?:\d+ \* )?\w+))?")


@record(frozen=True)
class Triangle:
    """A loop outside loops around one loop whose count reads its target (``for i in
    range(a): for j in range(i + b):``, ``for w, k in cfg: for j in range(k):``): no
    product of counts numbers the inner iterations, so the rolled class keeps a running
    count of them, ``name`` (``n = 0`` before the loops, ``n += 1`` ending each inner
    iteration), which names the unnamed modules in them and after them
    (``dense{2 * n + 2}``), as a hand-written class would. A triangle inside another
    loop (``for k in range(c): for i in range(a): for j in range(i + b):``) counts across
    the iterations of the loop outside loops holding it, ``top``: ``n = 0`` before that."""

    outer: ast.For
    inner: ast.For
    name: str
    top: ast.For | None = None  # the loop outside loops around a nested triangle

    @property
    def start(self) -> ast.For:
        """The loop its count starts before (``n = 0``)."""
        return self.top if self.top is not None else self.outer


def triangles(
    body: tuple[ast.ForwardStmt, ...], taken: Iterable[str], nested: bool = False
) -> tuple[Triangle, ...]:
    """Each loop of ``body`` outside loops around one loop (not under an ``if``, with no
    loop in it) whose count reads the outer loop's target, or beside which the outer
    body makes its operation (``_triangle_pair``), with its counter's name: ``n``,
    ``m``, ``count``, ``n2``, ..., the first that no name of ``body``, of ``taken`` nor of
    a triangle before is (a later triangle's names read the earlier ones' totals).
    ``nested``: such a pair inside loops outside loops too (a block's, not a network's),
    one a loop outside loops."""
    found: list[tuple[ast.For, ast.For, ast.For | None]] = []
    for stmt in _outside_loops(body):
        if not isinstance(stmt, ast.For):
            continue
        pair = _triangle_pair(stmt)
        if pair is not None:
            found.append((stmt, pair, None))
            continue
        inside = [item for item in syntax_items(stmt.body) if isinstance(item, ast.For)]
        if nested:
            pairs = [(loop, _triangle_pair(loop)) for loop in inside]
            held = [(loop, inner) for loop, inner in pairs if inner is not None]
            if len(held) == 1 and _loop_chain(stmt, held[0][0]):
                found.append((held[0][0], held[0][1], stmt))
    used = set(taken) | RESERVED
    used |= {item for item in syntax_items(body) if isinstance(item, str) and item.isidentifier()}
    out: list[Triangle] = []
    for outer, inner, top in found:
        more = (f"n{k}" for k in range(2, len(used) + 3))
        name = next(n for n in ("n", "m", "count", *more) if n not in used)
        used.add(name)
        out.append(Triangle(outer, inner, name, top))
    return tuple(out)


@record(frozen=True)
class BranchCount:
    """The modules of one operation (``op``) that the branches taken of the ifs before a
    later unnamed module of it made, where an if's branches make different numbers of
    them (``if flag: x -> dense(w) else: x -> layer_norm()``): the IR numbers the later
    ones on across the branch taken (``dense2`` or ``dense1``), so the rolled class keeps
    a running count, ``name`` (``n = 0`` before the statement outside loops that holds
    the first such branch, ``start``; ``n += 1`` ending each branch making one, ``added``
    by the branch's span), which names them (``dense{n + i + 1}``), as a hand-written
    class would (``block_walk.branch_counts``: one for each operation numbered on)."""

    op: str
    name: str
    start: Span | None  # None where no branch adds to it (every if's branches alike)
    added: tuple[tuple[Span, int], ...]
    differing: tuple[Span, ...]  # the ifs whose branches make different numbers of them
    # a triangle in a branch (``Triangle``): its outer loop, whose running count the
    # count adds after it (``n += m``, each inner iteration making ``per``), by its span
    totals: tuple[tuple[Span, Triangle, int], ...] = ()

    def made(self, part: ast.Branch | ast.For) -> int:
        """The modules of the operation ``part`` makes outside the ifs and loops in it
        (they count their own): a branch's, or an iteration's of a loop in a branch."""
        return next((k for span, k in self.added if span == part.span), 0)

    def total(self, loop: ast.For) -> tuple[Triangle, int] | None:
        """The triangle whose outer loop is ``loop`` and the modules of the operation each
        inner iteration makes, where the count adds its running count after ``loop``."""
        return next(((t, per) for span, t, per in self.totals if span == loop.span), None)

    def counts_in(self, loop: ast.For) -> bool:
        """Whether the count counts the modules of a loop in ``loop`` (``loop`` too)."""
        spans = [span for span, _ in self.added] + [span for span, _, _ in self.totals]
        return any(_within(span, loop.span) for span in spans)


def _outside_loops(body: tuple[ast.ForwardStmt, ...]) -> list[ast.ForwardStmt]:
    """The statements of ``body`` outside loops, in order, those in the branches of its
    ifs too (a loop in an if's branch is a loop outside loops: ``if deep: for i in
    range(n): ...``)."""
    out: list[ast.ForwardStmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            for branch in stmt.branches:
                out += _outside_loops(branch.body)
    return out


def zero_mark(depth: int, counts: Sequence[BranchCount], stmt: object) -> list[str]:
    """The lines setting each of ``counts``' running counts to 0 before ``stmt`` where it
    is the statement that count starts at (written by ``_counters`` where a name reads
    it)."""
    span = getattr(stmt, "span", None)
    return [f"{INDENT * depth}{COUNTER} zero {c.name}" for c in counts if span == c.start]


def add_mark(depth: int, counts: Sequence[BranchCount], part: ast.Branch | ast.For) -> list[str]:
    """The lines ending the body of ``part`` (a branch, or a loop in a branch: each
    iteration) that add the modules of each of ``counts``' operations it made (``n +=
    1``, written by ``_counters`` where a name reads the count)."""
    return [
        f"{INDENT * depth}{COUNTER} add {c.name} {c.made(part)}" for c in counts if c.made(part)
    ]


def total_mark(depth: int, counts: Sequence[BranchCount], loop: ast.For) -> list[str]:
    """The lines after a triangle's outer ``loop`` in a branch that add its running count
    to each of ``counts`` counting it (``n += m``, ``n += 2 * m``; ``_counters``)."""
    lines = []
    for counted in counts:
        found = counted.total(loop)
        if found is not None:
            triangle, per = found
            added = triangle.name if per == 1 else f"{per} * {triangle.name}"
            lines.append(f"{INDENT * depth}{COUNTER} add {counted.name} {added}")
    return lines


def _triangle_pair(loop: ast.For) -> ast.For | None:
    """The one loop in ``loop`` (not under an ``if``, with no loop in it) whose count
    reads ``loop``'s target, or whose unnamed modules' operation ``loop``'s body makes
    outside it too (``for i in range(n): x -> dense(w); for j in range(k): x ->
    dense(w)``: no one step in ``i`` numbers both, the running count does): the two a
    triangle (``triangles``)."""
    loops = [item for item in syntax_items(loop.body) if isinstance(item, ast.For)]
    if len(loops) != 1 or loops[0] not in loop.body:
        return None
    targets = {name for name, _ in loop.target.names()}
    read = {item.id for item in syntax_items(loops[0].iterable) if isinstance(item, ast.Name)}
    return loops[0] if targets & read or _made_beside(loop, loops[0]) else None


def _made_beside(outer: ast.For, inner: ast.For) -> bool:
    """Whether ``outer``'s body makes, outside ``inner``, an unnamed module of an
    operation whose unnamed modules ``inner`` makes too."""

    def unnamed_ops(stmts: Iterable[object]) -> set[str]:
        calls = (item for item in stmts if isinstance(item, ast.Call) and item.layer is None)
        specs = (lookup(call.func) for call in calls)
        return {spec.name for spec in specs if spec is not None and emitter(spec.name).init}

    beside = [stmt for stmt in outer.body if stmt is not inner]
    return bool(unnamed_ops(syntax_items(tuple(beside))) & unnamed_ops(syntax_items(inner.body)))


def _loop_chain(top: ast.For, loop: ast.For) -> bool:
    """Whether ``loop`` is in ``top``'s body through loops alone, each the only loop of
    the one around it (no ``if`` on the way, no loop beside)."""
    around = top
    while True:
        loops = [stmt for stmt in around.body if isinstance(stmt, ast.For)]
        if len(loops) != 1:
            return False
        if loops[0] is loop:
            return True
        around = loops[0]


def counter_marked(line: str, loop: ast.For, counted: tuple[Triangle, ...]) -> str:
    """The header ``line`` of ``loop``, marked where ``loop`` is a loop of ``counted``."""
    for found in counted:
        if loop.span == found.start.span:
            return f"{line}{COUNTER} start {found.name}"
        if loop.span == found.inner.span:
            return f"{line}{COUNTER} step {found.name}"
    return line


def _counters(lines: list[str]) -> list[str]:
    """``lines`` (a method, its bodies filled) with each counter mark (``counter_marked``)
    written: ``n = 0`` before the marked outer loop and ``n += 1`` ending the marked inner
    loop's body, where another line reads ``n``; else the marks only dropped. A line
    of its own (``zero_mark``, ``add_mark``: a ``BranchCount``) is ``n = 0`` or ``n +=
    1`` where another line reads ``n``, else dropped."""
    marks: dict[int, tuple[str, str, str]] = {}  # line -> (kind, counter, indentation)
    added: dict[int, tuple[str, str, str]] = {}  # a line of its own -> (kind, counter, count)
    out = list(lines)
    for at, line in enumerate(lines):
        alone = _COUNT_LINE.fullmatch(line)
        if alone is not None:
            pad, kind, name, count = alone.groups()
            out[at] = ""
            added[at] = (
                kind,
                name,
                f"{pad}{name} = 0" if kind == "zero" else f"{pad}{name} += {count}",
            )
            continue
        found = _COUNTER.fullmatch(line)
        if found is not None:
            header, kind, name = found.groups()
            out[at] = header
            marks[at] = (kind, name, header[: len(header) - len(header.lstrip())])
    if not marks and not added:
        return lines
    names = {name for _, name, _ in [*marks.values(), *added.values()]}
    read = [name for name in names if any(re.search(rf"(?<![\w.]){name}\b", line) for line in out)]
    written: list[str] = []
    ends: dict[int, list[str]] = {}  # the line an inner body ends at -> the counts after it
    for at, line in enumerate(out):
        if at in added:  # n = 0, n += 1: where a name reads the count
            kind, name, text = added[at]
            live = name in read and (kind == "zero" or _read_later(out, at, name, text))
            written += [text] if live else []
            continue
        kind, name, pad = marks.get(at, ("", "", ""))
        if name in read and kind == "start":
            written.append(f"{pad}{name} = 0")
        if name in read and kind == "step":
            end = at
            for later in range(at + 1, len(out)):
                code = out[later].partition("  # ")[0]
                if code.strip() and not code.startswith(f"{pad}{INDENT}"):
                    break
                if code.strip():
                    end = later
            ends.setdefault(end, []).append(f"{pad}{INDENT}{name} += 1")
        written.append(line)
        written += ends.pop(at, [])
    return written


def _read_later(lines: list[str], at: int, name: str, added: str) -> bool:
    """Whether a line after ``at`` (where ``added``, ``n += 1``, goes) reads the count
    ``name``, or any line of a loop around it (its next iteration reads what this one
    added): an ``n += 1`` no later module reads is dead, and a hand-written class would
    not write it."""
    start = at + 1
    pad = len(added) - len(added.lstrip())
    for before in range(at - 1, -1, -1):
        code = lines[before].partition("  # ")[0]
        indent = len(code) - len(code.lstrip())
        if not code.strip() or indent >= pad:
            continue
        pad = indent
        if code.lstrip().startswith("for "):
            start = before  # the outermost loop around it so far
        if indent == 0 or code.lstrip().startswith("def "):
            break
    read = re.compile(rf"(?<![\w.]){name}\b")
    return any(read.search(line) for i, line in enumerate(lines[start:], start) if i != at)


def applied_target(loop: ast.For) -> str | None:
    """The target of ``loop`` where its body applies it as an operation (``for a in [act,
    sigmoid]: x -> dense(4) -> a``, or ``.a``)."""
    name = loop.target.name
    return name if name is not None and name in applied_names(loop) else None


def applied_names(loop: ast.For) -> list[str]:
    """The names of ``loop``'s target that its body applies as an operation, a whole
    target (``for a in acts: -> a``) or an item of one (``for w, a in cfg: -> a``, ``.a``)."""
    names = {name for name, _ in loop.target.names()}
    found: list[str] = []
    for item in syntax_items(loop.body):
        name = None
        if isinstance(item, ast.Call) and item.func in names and not item.args:
            name = item.func
        elif isinstance(item, ast.Suffix) and item.name in names:
            name = item.name
        if name is not None and name not in found:
            found.append(name)
    return found


def starred_loops(body: tuple[ast.ForwardStmt, ...]) -> set[Span]:
    """The loops outside loops of ``body`` whose steps fill a container in order (``as
    stack.*``): forward indexes it by the loop's count (``self.stack[i + 1]``)."""
    return {
        stmt.span
        for stmt in body
        if isinstance(stmt, ast.For)
        and any(
            isinstance(item, ast.Call | ast.Chain)
            and (getattr(item, "layer", None) or "").endswith(".*")
            for item in syntax_items(stmt.body)
        )
    }


def enumerated_header(pad: str, index: str, target: ast.LoopTarget, iterable: str) -> str:
    """The header of a loop whose count ``index`` names its modules, marked until
    ``enumerated`` sees its body."""
    return f"{pad}for {index}, {_target_text(target, False)} in enumerate({iterable}):{ENUMERATED}"


def enumerated(lines: list[str]) -> list[str]:
    """``lines`` (a method, its bodies filled) with each marked header (``enumerated_header``)
    written ``for i, w in enumerate(widths):`` where its body reads a name of the target,
    else ``for i in range(len(widths)):`` (``range(2)`` over ``[act, nn.Sigmoid]``); and
    a triangle's counter written (``_counters``)."""
    lines = _counters(lines)
    out = list(lines)
    for at, line in enumerate(lines):
        found = _ENUMERATED.fullmatch(line)
        if found is None:
            continue
        pad, index, target, iterable = found.groups()
        body = _loop_body(lines, at, pad)
        after = lines[at + 1 + len(body) :]
        reads = any(_reads_name(name, pad, body, after) for name in re.findall(r"\w+", target))
        counted = _reads_name(index, pad, body, after)
        if reads and counted:
            out[at] = f"{pad}for {index}, {target} in enumerate({iterable}):"
        elif reads:  # the count names nothing here (a block called by name counts apart)
            out[at] = f"{pad}for {_unparenthesized(target)} in {iterable}:"
        elif counted and _is_zip(iterable):  # a zip has no ``len``: count its items as they come
            out[at] = f"{pad}for {index}, _ in enumerate({iterable}):"
        elif counted:
            out[at] = f"{pad}for {index} in range({_count_text(iterable)}):"
        else:  # once per item, reading neither: ``for _ in rows:``, ``for _ in range(2):``
            count = _count_text(iterable)
            over = f"range({count})" if count.isdigit() else iterable
            out[at] = f"{pad}for _ in {over}:"
    return _unread_targets(out)


def _loop_body(lines: list[str], at: int, pad: str) -> list[str]:
    """The body of the loop whose header is ``lines[at]`` (at ``pad``), comments blanked."""
    body = []
    for later in lines[at + 1 :]:
        code = later.partition("  # ")[0]
        if code.strip() and not code.startswith(f"{pad}{INDENT}"):
            break
        body.append("" if code.strip().startswith("#") else code)
    return body


def _reads_name(name: str, pad: str, body: list[str], after: list[str]) -> bool:
    """Whether a loop's target or count ``name`` is read: in its ``body`` (comments
    blanked), or after it (``after``, the method's later lines) before a loop at ``pad``
    binds it again."""
    read = re.compile(rf"(?<![\w.]){name}\b")
    if any(read.search(code) for code in body):
        return True
    rebound = re.compile(rf"{pad}for (?:.*[^\w.])?{name}\b.* in ")
    for line in after:
        code = line.partition("  # ")[0]
        if rebound.match(code):
            return False
        if read.search(code):
            return True
    return False


# a loop header unpacking items (``for c, b in rows0:``, ``for i, (c, a) in enumerate(rows):``)
_UNPACKING = re.compile(r"( *)for ([\w(), ]+?) in (.+):")


def _unread_targets(lines: list[str]) -> list[str]:
    """``lines`` (a method) with each name its loops unpack and never read written ``_``,
    as by hand (``for _, b in self.rows0:``); a loop reading none of them ``for _ in
    rows0:``."""
    out = list(lines)
    for at, line in enumerate(lines):
        found = _UNPACKING.fullmatch(line)
        if found is None or "," not in found[2]:
            continue
        pad, target, iterable = found.groups()
        body, after = _loop_body(lines, at, pad), lines[at + 1 :]
        after = after[len(body) :]
        names = re.findall(r"\w+", target)
        unread = {n for n in names if n != "_" and not _reads_name(n, pad, body, after)}
        if not unread:
            continue
        if unread == set(names) - {"_"}:
            out[at] = f"{pad}for _ in {iterable}:"
            continue
        kept = ", ".join(_blanked(part, unread) for part in target.split(", "))
        kept = re.sub(r"\(_(?:, _)+\)", "_", kept)  # ``i, _`` says ``i, (_, _)``
        out[at] = _without_enumerate(pad, kept, iterable) or f"{pad}for {kept} in {iterable}:"
    return out


def _blanked(part: str, unread: set[str]) -> str:
    """A piece of a target (``(c``, ``a)``) with an unread name ``_``."""
    name = part.strip("()")
    return part.replace(name, "_") if name in unread else part


def _without_enumerate(pad: str, target: str, iterable: str) -> str | None:
    """``for c, a in rows:`` for ``for _, (c, a) in enumerate(rows):``, whose count no
    line reads; None for another loop."""
    found = re.fullmatch(r"enumerate\(([^,]+)\)", iterable)
    if found is None or not target.startswith("_, "):
        return None
    try:
        pyast.parse(found[1], mode="eval")
    except SyntaxError:  # ``enumerate(f(a), b)``: not one argument
        return None
    return f"{pad}for {_unparenthesized(target[3:])} in {found[1]}:"


def _unparenthesized(target: str) -> str:
    """A loop target written as the header's own (``c, a``, not ``(c, a)``)."""
    if target.startswith("(") and target.endswith(")"):
        inner = target[1:-1]
        depth = 0
        for char in inner:  # ``(a, b), (c, d)`` is not one parenthesised tuple
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth < 0:
                return target
        return inner
    return target


def _is_zip(iterable: str) -> bool:
    """Whether ``iterable`` (Python) is a ``zip(...)`` call."""
    try:
        tree = pyast.parse(iterable, mode="eval").body
    except SyntaxError:
        return False
    return (
        isinstance(tree, pyast.Call) and isinstance(tree.func, pyast.Name) and tree.func.id == "zip"
    )


def _loop_names(body: tuple[ast.ForwardStmt, ...]) -> set[str]:
    """The targets of ``body``'s loops, those in an if's branch too."""
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.For):
            out |= {name for name, _ in stmt.target.names()} | _loop_names(stmt.body)
        elif isinstance(stmt, ast.If):
            for branch in stmt.branches:
                out |= _loop_names(branch.body)
    return out


def _super_call(given: list[tuple[str, ast.Expr]], tr: Translator) -> list[str]:
    """``super().__init__(...)`` of an entry class; a long list argument (a config table)
    is written one item a line, as black writes it."""
    pad = INDENT * 2
    texts = [f"{key}{tr.text(value)}" for key, value in given]
    line = f"{pad}super().__init__({', '.join(texts)})"
    if len(line) <= LINE_LIMIT:
        return [line]
    lines = [f"{pad}super().__init__("]
    for (key, value), text in zip(given, texts, strict=True):
        if len(pad + INDENT + text) > LINE_LIMIT and isinstance(value, ast.ListExpr):
            lines += tr.item_lines(pad + INDENT, key, value, ",")
        else:
            lines.append(f"{pad}{INDENT}{text},")
    return [*lines, f"{pad})"]


def _nested(depth: int, head: str, call: Call) -> list[str]:
    """``head(call)`` on one line, or black's split: the call on its own lines inside, or
    with a leading argument (``add_module("conv0", ``) the arguments on their own line."""
    pad = INDENT * depth
    line = f"{pad}{head}{call.text()})"
    if len(line) <= LINE_LIMIT:
        return [line]
    func, _, leading = head.partition("(")
    if leading:
        return wrap(depth, "", Call(func, (leading.removesuffix(", "), call.text())))
    return [f"{pad}{head}", *wrap(depth + 1, "", call), f"{pad})"]


def _added_lines(depth: int, head: str, made: Call, keep: bool) -> list[str]:
    """``head(made)`` (``stage.append(``, ``setattr(self, f"layer{i + 1}", ``); with
    ``keep`` the block is bound to ``layer`` first, so the width can be read from it. A
    buffer is registered under the name instead (``self.register_buffer(f"buffer{i +
    1}", torch.zeros(c0))``), as the class of one call registers it."""
    if made.func == REGISTER_BUFFER:
        if not head.startswith(SETATTR) or keep:
            raise Unsupported(f"a buffer added as {head.strip()}...)")
        name = head.removeprefix(SETATTR).removesuffix(", ")
        return wrap(depth, "", Call(REGISTER_BUFFER, (name, *made.args[1:])))
    if keep:
        return [*wrap(depth, f"{LAYER} = ", made), f"{INDENT * depth}{head}{LAYER})"]
    return _nested(depth, head, made)


SETATTR = "setattr(self, "
# the fills of one dtype and any shape: a buffer whose init a parameter gives at the calls
# as one of them is written for both
_FILLS = ("zeros", "ones")
_LONG_CHOICE = 60  # a longer choice of contents is written as a choice of fill function


def _fits_any(args: Mapping[str, Any], texts: Sequence[str]) -> bool:
    """Whether the language accepts ``buffer`` with ``args`` at any values of the
    parameters its shape ``texts`` read (``ops/buffer.py``'s checks): a fill any shape,
    ``"full"`` with its ``value=``, ``"arange"`` one axis, ``"causal_mask"`` a square
    one (both sizes one text), ``"sinusoid"`` an even literal width of floats; not
    ``"relative_position_index"``, whose shape its window's numbers fix."""
    init, rank = args["init"], len(texts)
    if args["window"] is not None or (init == "full") != (args["value"] is not None):
        return False
    if init in ("zeros", "ones", "full"):
        return True
    if init == "arange":
        return rank == 1
    if init == "causal_mask":
        return rank == 2 and texts[0] == texts[1]
    if init == "sinusoid":
        width = texts[-1]
        dtype = buffer_dtype(args)
        return rank == 2 and width.isdigit() and int(width) % 2 == 0 and dtype in FLOAT_DTYPES
    return False


def _literal(expr: ast.Expr) -> bool:
    """A number, string, boolean or a tuple/list of them, as written: kept as the value."""
    if isinstance(expr, ast.Number | ast.Bool | ast.String | ast.NoneLit):
        return True
    if isinstance(expr, ast.UnaryOp):
        return _literal(expr.operand)
    if isinstance(expr, ast.TupleExpr | ast.ListExpr):
        return all(_literal(item) for item in expr.items)
    return False


def _named(key: str) -> bool:
    """A child named by a word, templated or not (``conv0``, ``transition{}``), not by its
    position (``3``, ``{}``, ``*``)."""
    return key.replace("{}", "0").isidentifier()


def _flat_head(layer: str | None) -> str | None:
    """``features`` of ``features.*``, ``features.0`` and ``features.conv0``: a container
    filled in order (its named children as torchvision's DenseNet adds them)."""
    if layer is None or layer.count(".") != 1:
        return None
    head, last = layer.split(".")
    if head.isidentifier() and (last == "*" or last.isdigit() or _named(last)):
        return head
    return None


def _stage_step(stmt: ast.For) -> ast.Call | None:
    """The one named step of a loop over ``range`` whose layer is ``P.{j}`` (``j`` the
    loop's own target) or ``P.name{...}``: the loop fills the container P (``_Walk._stage``)."""
    calls = [
        step
        for s in stmt.body
        if isinstance(s, ast.ChainStmt)
        for step in s.chain.steps
        if step.layer is not None
    ]
    j = stmt.target.name
    if (
        len(calls) != 1
        or j is None
        or any(isinstance(s, ast.For) for s in stmt.body)
        or not isinstance(stmt.iterable, ast.Call)
        or stmt.iterable.func != "range"
        or len(stmt.iterable.args) != 1
    ):
        return None
    call = calls[0]
    assert call.layer is not None
    if "." not in call.layer or not call.layer_holes:
        return None
    key = call.layer.rsplit(".", 1)[1]
    last = call.layer_holes[-1]
    numbered = key == "{}" and isinstance(last, ast.Name) and last.id == j
    if not numbered and not (_named(key) and key.count("{}") == 1):
        return None
    return call


def _own_stage(stmt: ast.ForwardStmt) -> str | None:
    """``layers`` for a loop filling ``layers.l{i + 1}`` as its stage: the loop makes the
    container itself (``stage = nn.Sequential()``, ``self.layers = stage``), so nothing
    before it may (a second, dead ``self.layers``)."""
    call = _stage_step(stmt) if isinstance(stmt, ast.For) else None
    return call.layer.rsplit(".", 1)[0] if call is not None and call.layer else None


def _stages_head(layer: str | None) -> str | None:
    """``stages`` of ``stages.{}.{}``: a container of the stages a nested loop fills, each
    appended after its inner loop (``self.stages.append(stage)``)."""
    if layer is None or layer.count(".") != 2:
        return None
    head, outer, inner = layer.split(".")
    return head if head.isidentifier() and outer == inner == "{}" else None


def _stars(stmt: ast.ForwardStmt) -> list[str]:
    """The containers ``as NAME.*``, ``as NAME.0``, ``as NAME.conv0`` or ``as
    NAME.{i}.{j}`` fills anywhere in ``stmt``, in order."""
    found: list[str] = []
    for node in syntax_items(stmt):
        layer = getattr(node, "layer", None)
        head = _flat_head(layer) or _stages_head(layer)
        if isinstance(node, ast.Call | ast.Chain) and head is not None and head not in found:
            found.append(head)
    return found


def row_count(counter: str, local: str) -> str:
    """The line counting the modules of a row's block (``local``, ``b`` of ``for w, b in
    cfg``), per block: ``made[b] = made.get(b, 0) + 1``."""
    return f"{counter}[{local}] = {counter}.get({local}, 0) + 1"


def _fill(
    lines: list[str], branches: Mapping[str, list[str]], dropped: Container[str] = ()
) -> list[str]:
    """``lines`` with each branch marker replaced by the branch's body; a marker in
    ``dropped`` (a body no call runs, which the class refuses to build) by nothing, an
    if's branch by ``UNWRITTEN`` under its header (the marker's line before it)."""
    out: list[str] = []
    for line in lines:
        if line.startswith(BRANCH):
            if line in dropped and line not in branches:
                if not line.startswith(f"{BRANCH}loop ") and out:
                    header = out[-1]
                    pad = header[: len(header) - len(header.lstrip())]
                    out.append(f"{pad}{INDENT}{UNWRITTEN}")
                continue
            if line not in branches:
                what = "a loop" if line.startswith(f"{BRANCH}loop ") else "an if branch"
                raise Untaken(what, line)
            out += _fill(branches[line], branches, dropped)
        else:
            out.append(line)
    return out


def without_empty_branches(lines: list[str]) -> list[str]:
    """``__init__``'s lines without an ``if`` whose branches make nothing (``if act:``
    around an activation that has no module): it was written with no body, which does
    not compile; an empty branch beside others is ``pass``. A loop left with no body
    (its only statement such an ``if``) goes too, as a loop of bare activations does."""
    out: list[str] = []
    at = 0
    while at < len(lines):
        loop = re.fullmatch(r"( *)for .+:", lines[at])
        if loop is not None:
            end = at + 1
            while end < len(lines) and lines[end].startswith(f"{loop[1]}{INDENT}"):
                end += 1
            body = without_empty_branches(lines[at + 1 : end])
            if body:
                out += [lines[at], *body]
            at = end
            continue
        head = re.fullmatch(r"( *)if .+:", lines[at])
        if head is None:
            out.append(lines[at])
            at += 1
            continue
        pad = head[1]
        chain: list[tuple[str, list[str]]] = []
        while at < len(lines) and (
            not chain or re.fullmatch(rf"{pad}(?:elif .+|else):", lines[at]) is not None
        ):
            header = lines[at]
            end = at + 1
            while end < len(lines) and lines[end].startswith(f"{pad}{INDENT}"):
                end += 1
            chain.append((header, without_empty_branches(lines[at + 1 : end])))
            at = end
        chain, always = _taken_branches(chain, pad)
        if always is not None:  # the if's every test refused: its else's body, always
            out += always
            continue
        if chain[-1][0].strip() == "else:" and not chain[-1][1]:
            chain.pop()  # an empty ``else`` says nothing
        if len(chain) == 2 and not chain[0][1] and chain[1][0].strip() == "else:":
            # ``if up: pass`` / ``else: ...`` reads as ``if not up: ...``
            test = chain[0][0].strip()[len("if ") : -1]
            chain = [(f"{pad}if {negation(test)}:", chain[1][1])]
        if any(body for _, body in chain):
            for header, body in chain:
                out += [header, *(body or [f"{pad}{INDENT}pass"])]
    return out


def _taken_branches(
    chain: list[tuple[str, list[str]]], pad: str
) -> tuple[list[tuple[str, list[str]]], list[str] | None]:
    """The branches of an if (``pad`` indents it) without those whose body no call runs,
    the class refusing the arguments that take them (``UNWRITTEN``): never taken, such a
    branch goes rather than being written ``elif mode == 2: pass``; the first going, the
    next tests first (``if``). Where only an ``else`` is left, its body, dedented (it
    always runs); where none is, no lines."""
    unwritten = [f"{pad}{INDENT}{UNWRITTEN}"]
    taken = [branch for branch in chain if branch[1] != unwritten]
    if len(taken) == len(chain):
        return chain, None
    if not taken:
        return [], []
    if chain[0][1] == unwritten:
        header, body = taken[0]
        if header.strip() == "else:":
            return [], [line.removeprefix(INDENT) for line in body]
        taken[0] = (f"{pad}if {header.strip().removeprefix('elif ')}", body)
    return taken, None


def _path_text(layer: str, holes: tuple[ast.Expr, ...], tr: Translator) -> tuple[str, bool]:
    """The layer name as Python: ``f"layer{i + 1}"`` (templated) or ``"fc"``."""
    pieces = layer.split("{}")
    if len(pieces) == 1:
        return layer, False
    text = pieces[0]
    for hole, piece in zip(holes, pieces[1:], strict=True):
        text += "{" + tr.text(hole) + "}" + piece
    return text, True


class _Walk:
    """One variant's walk of the network's forward: lines, and checks against its IR."""

    # the axis of a value's shape the running width is: the channels (1), or the last
    # (-1) for a block whose constructor takes its input's last axis (``in_features``)
    axis = 1
    # a network's whole forward body, read for its ifs outside loops only (an unnamed
    # module after one is numbered on across the branch taken: ``BlockWalk``)
    network_statements: tuple[ast.ForwardStmt, ...] = ()

    @staticmethod
    def running_counts(
        body: tuple[ast.ForwardStmt, ...], taken: set[str], counted: tuple[Triangle, ...]
    ) -> tuple[BranchCount, ...]:
        """The running counts of the modules the branches taken made (``BranchCount``)
        that a network's walk of this kind writes: none here (``BlockWalk``'s do)."""
        return ()

    @staticmethod
    def applied_operations(
        network: ast.Model,
        variants: Sequence[tuple[ast.Model, Graph]],
        envs: Sequence[Mapping[str, Any]],
        texts: Sequence[list[str]],
        constants: Mapping[str, ast.Expr],
    ) -> tuple[list[list[str]], list[str]]:
        """The variants' class texts with each statement applying an operation-valued
        parameter of the network that they give differently written ``x = self.act(x)``,
        and the constructor's lines storing each (``self.act = act()``), which a
        network's walk of this kind writes: none here (``NetworkWalk``'s do)."""
        return list(texts), []

    def __init__(
        self,
        graph: Graph,
        env: dict[str, Any],
        tr: Translator,
        class_of: Callable[[Graph], str],
        dims_of: Callable[[Graph], tuple[int, ...] | None],
        block_models: Mapping[str, ast.Model],
        size: str | None = None,
        axis: int = 1,
    ) -> None:
        """``size``: the input width's text (a block's ``in_features``); a network's is
        the number, on ``axis`` (the channels, or -1: the last axis)."""
        self.axis = axis
        self.graph = graph
        self.env: Any = ChainMap(env, tr.table_values)  # the tables the walk meets, too
        self.tr = tr
        self.class_of = class_of
        self.dims_of = dims_of
        self.block_models = block_models
        self.values = {v.name: v for v in graph.values}
        self.pending = list(graph.nodes)  # IR nodes not yet matched, in order
        self.made: set[str] = set()  # layer paths made
        shape = graph.input_value.shape
        if shape is None or len(shape) < 2:
            raise Unsupported("a network input without a channel or feature axis")
        # the running width's text: the input's first
        self.size = size if size is not None else str(int(plain(shape[axis])))
        self.block = size is not None  # a block's class (roll_block), not a network's
        self.out_sizes: dict[str, str] = {}
        self.depth = 0
        self.loops_around = 0  # the loops around the statement walked (0: outside loops)
        self.tensor = ""
        # per step: the width texts that held at every visit so far (shared by the walks)
        self.choices: dict[Any, list[str]] = {}
        self.strict = True  # a first walk only narrows the choices
        self.stages: set[str] = set()  # the containers loops filled (layer1, ...)
        self.flat: dict[str, int] = {}  # ``as features.*`` containers: children so far
        self.branches: dict[str, list[str]] = {}  # each if branch's body (shared by walks)
        self.empty_loops: set[str] = set()  # a block's loops whose visits built nothing (shared)
        self.collect: list[tuple[str, str]] | None = None  # a named chain's modules
        self.unnamed: set[str] = set()  # attributes of unnamed modules (forward reads them)
        # the running counts of ``tr.branch_counts`` at this visit, by operation
        self.branch_made: Counter[str] = Counter()
        # an unnamed module in a loop (``block_walk.BlockWalk``): its step -> (its name's
        # prefix, the loop's count, its number, the modules of its operation the loops before
        # its own made) at every visit, and the path written; the
        # roller gives each walk the same two, so the progression holds in every variant
        self.numbers: dict[Span, set[tuple[str, int, int, int]]] = {}
        self.paths: dict[Span, str] = {}
        # one whose name reads loop counts (``block_walk``): those loops, nest by nest
        self.counted: dict[Span, Counts] = {}
        # a loop over items (``for w in widths``): the name of its count (``loop_indices``),
        # and those whose count names a module (shared by the walks: ``enumerated_header``)
        self.indices: Mapping[Span, str] = {}
        self.indexed: set[Span] = set()
        self.stage_steps: set[Any] = set()  # spans of the steps a loop's container holds
        self._stage_call: ast.Call | None = None
        # a network's walk (``_walk``): the width text of each tensor it bound outside
        # loops, by name ("": not known, the IR's number); None for a block's walk
        self.widths: dict[str, str] | None = None
        self.sizes_of: SizesOf | None = None  # a network's: block classes' later input sizes
        # what an inner block's class takes for an operation-valued parameter at a call: its
        # module class (``nn.ReLU``), or a function where a rolled block's walk says so
        self.operation_of: Callable[[Graph, str], str | None] = _module_of
        # the operations in the calls' list arguments are functions (``F.relu``), which a
        # list the walk writes (module classes, ``[(4, nn.ReLU)]``) would not be
        self.function_items = False
        # the rolled classes of inner blocks, each with the parameters its loops' counts
        # read where its output width is what a loop leaves (``for i in range(k): x ->
        # dense(width)``: ``width``, or the input's where ``k`` is 0), which no call's
        # instance shows whole (none: an expression of its arguments)
        self.loop_widths: Mapping[str, LoopWidth] = {}
        # those whose width the walk reads from the module built (``layer.out_channels``):
        # each class then stores what its loop left (``self.out_channels = channels``)
        self.read_widths: set[str] = set()
        # a rolled block's walk: the classes of the blocks given to model-valued parameters
        # and in rows (``param_blocks.BlockClasses``); None: an inner block takes none
        self.blocks: Any = None
        # a row's block built unnamed in a loop (``for w, b in cfg: x = b(x, w)``): its
        # step -> the line counting its class's modules so far (shared by the walks and
        # forward), named as the IR numbers them, after the block (``basic1``, ``wide1``,
        # ``basic2``); the counter's name, and the node ids this walk named so
        self.row_counters: dict[Span, str] = {}
        # the classes the calls' rows give each row's block (``b``), in the calls' order:
        # the class refuses another (``with_row_refusals``), whose width it cannot read
        self.row_classes: dict[str, list[str]] = {}
        self.counter = "made"
        self.row_nodes: set[str] = set()
        # the node ids of blocks called by name in a loop, counted with the rows' blocks
        # where there are any (``_numbered_beside_rows``)
        self.beside_rows: set[str] = set()
        self._row_counts: Counter[str] = Counter()
        # a list's operation the class of one call builds as a module (``for w, a in cfg:
        # x -> dense(w) -> a`` given ``layer_norm``: ``self.layer_norm1``): each such
        # operation -> the class the calls pass for it and whether it takes the width
        # (``named.module_item_class``); the steps where the calls' items built them, with
        # their operations (shared by the walks and forward); this walk's count of each
        self.module_items: Mapping[str, tuple[str, bool]] = {}
        self.item_spans: dict[Span, set[str]] = {}
        self._item_counts: Counter[str] = Counter()
        # a step applying a list's item as ``x = a()(x)`` (forward builds the module where
        # it applies it): the classes the calls' items give there, in the calls' order
        # (None: one no test can name, a ``functools.partial``); the class refuses another
        # (``block_walk._item_refusal``), built with nothing in ``__init__``
        self.item_classes: dict[Span, list[str | None]] = {}
        self.class_name = ""  # the rolled class, as its refusals name it
        # the names no boolean reaches (``whole_numbers.number_names``): a norm's
        # ``axes=p0`` refuses ``True`` where ``p0`` is none of them
        self.number_names: frozenset[str] = frozenset()
        # operation-valued parameters built as modules where applied, as those items
        # (``rolled_block.module_params``: ``norm`` given ``layer_norm``)
        self.module_params: frozenset[str] = frozenset()
        self.params_built: frozenset[str] = frozenset()  # those this instance builds so
        self.inputs: tuple[str, ...] = ()  # the width texts of a block call's tensor inputs
        self.later: tuple[str, ...] = ()  # a network's forward inputs after the first
        # the text the local ``channels`` is known to hold here (None: not known), so a
        # loop body setting it to that text again writes no line (``_steady``)
        self.held: str | None = None
        # a step in a loop whose module reads an input size the walk does not thread (a
        # dense on the last axis where it threads the channels), written as the visit's
        # number: the most visits one walk made of it (shared), and this walk's
        self.untracked: dict[tuple[Span, str], int] = {}
        # the IR's values of steps reading a boolean or string parameter (``_flags``)
        self.flagged: set[str] = set()
        # the IR's values whose sizes an integer parameter changes where no tree shows it
        # (``slice(start=k)``: ``folded_sizes.hidden_params``)
        self.hidden: set[str] = set()
        # the IR's values of steps whose source arguments (a loop's item ``k``) may
        # change a size on an axis the walk does not thread (``_resized_axes``)
        self.resized: set[str] = set()
        # the names of the input's sizes on the sample's axes the walk does not thread
        # that the class may take as constructor arguments (``in_channels`` where it
        # threads the last axis), by axis; empty: the calls' numbers are written
        self.input_sizes: dict[int, str] = {}
        # the sizes of the IR's values on the sample's spatial axes as trees over the
        # input's sizes by name, the running locals (``length``) and the arguments' texts
        # (``spatial_trees``), where the walk threads the channels: a size a loop's item
        # changes is carried by a local; a value whose tree read a local since changed is
        # dropped (the class writes its sizes as before)
        self.spatial: dict[str, dict[int, Expr]] = {}
        self._untracked_visits: Counter[tuple[Span, str]] = Counter()
        # the sizes the modules of the loop being walked were given from the source's
        # texts (``dense(g)``'s g), since its first iteration: an untracked input size
        # equal to one may be what an iteration made, not a size the loop keeps
        self._loop_sizes: set[int] = set()
        # the probes telling what the width after an inner block follows where its
        # instance shows a number (None: the first text worth it, as a network's
        # variants with no inner block to probe)
        self.inner_widths: InnerWidths | None = None

    # -- statements ---------------------------------------------------------------------

    def body(self, stmts: tuple[ast.ForwardStmt, ...], depth: int) -> list[str]:
        lines: list[str] = []
        for stmt in stmts:
            for head in _stars(stmt):  # ``as features.*``: the container, before its first use
                if head not in self.flat:
                    if depth > TOP:
                        raise Unsupported(f"the container '{head}' starts inside a loop")
                    self.flat[head] = 0
                    if head != _own_stage(stmt):  # a loop's own container: it makes it
                        lines.append(f"{INDENT * depth}self.{head} = nn.Sequential()")
            if isinstance(stmt, ast.If):
                lines += self.branch(stmt, depth)
            elif isinstance(stmt, ast.ChainStmt):
                lines += self.chain(stmt.chain, depth)
            elif isinstance(stmt, ast.Return):
                if isinstance(stmt.value, ast.Name) and (
                    stmt.value.id == self.tensor or self._returns_made_apart(stmt.value.id)
                ):
                    continue  # ``return x``: nothing to build
                if self.widths is not None and isinstance(stmt.value, ast.Call):
                    lines += self.bind(stmt.value, [], depth)  # return conv2d(u, ...) as out
                    continue
                if isinstance(stmt.value, ast.Call) and self.tensor:
                    # ``return op(x, ...)``: as ``x = op(x, ...)`` then ``return x``
                    bound = ast.Assign(self.tensor, stmt.span, stmt.value, stmt.span)
                    lines += self.assign(bound, depth)
                    continue
                if not isinstance(stmt.value, ast.Chain):
                    raise Unsupported("a return that is not a chain")
                lines += self.chain(stmt.value, depth)
            elif isinstance(stmt, ast.For):
                lines += self.loop(stmt, depth)
            elif isinstance(stmt, ast.Assign):
                lines += self.assign(stmt, depth)
            else:
                raise Unsupported(f"a {type(stmt).__name__.lower()} statement in the network")
        return lines

    def _returns_made_apart(self, name: str) -> bool:
        """Whether ``return name`` returns a tensor whose modules are all built already
        (a block's walk: ``block_walk.BlockWalk``); a network's walk knows none."""
        return False

    def assign(self, stmt: ast.Assign, depth: int) -> list[str]:
        """``x = (x -> ...) as name`` or ``x = op(x, ...)``: the tensor rebound."""
        if self.widths is not None and self._apart(stmt, depth):
            return self._chain_apart(stmt, depth)
        if self.widths is not None and not self._rebinds(stmt):
            return self.bind(stmt.value, [stmt.target, *(n for n, _ in stmt.targets[1:])], depth)
        if stmt.targets or (self.tensor and stmt.target != self.tensor):
            raise Unsupported("an assignment to another tensor")
        self.tensor = stmt.target
        value = stmt.value
        if isinstance(value, ast.Chain):
            if not (isinstance(value.source, ast.Name) and value.source.id == stmt.target):
                raise Unsupported("an assignment of a chain from another value")
            return self.chain(value, depth)
        if (
            isinstance(value, ast.Call)
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == stmt.target
            and not value.suffixes
        ):
            return self.step(replace(value, args=value.args[1:]), depth)
        raise Unsupported("an assignment the roller does not write")

    def _rebinds(self, stmt: ast.Assign) -> bool:
        """``x = (x -> ...)`` or ``x = op(x, ...)`` of the tensor the walk threads (one
        tensor input): the form ``assign`` writes for one tensor."""
        value = stmt.value
        if stmt.targets or (self.tensor and stmt.target != self.tensor):
            return False
        if isinstance(value, ast.Chain):
            return isinstance(value.source, ast.Name) and value.source.id == stmt.target
        node = next((n for n in self.pending if n.span == value.span), None)
        return (
            isinstance(value, ast.Call)
            and bool(value.args)
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == stmt.target
            and not value.suffixes
            and (node is None or len(node.inputs) == 1)
        )

    # -- a network's several tensors (outside loops) ------------------------------------

    def _apart(self, stmt: ast.Assign, depth: int) -> bool:
        """``h = x -> ...`` outside loops: a chain from a named tensor bound to another
        name, the source kept (a network's residual, ``x = add(x, h)`` after it)."""
        value = stmt.value
        return (
            depth == TOP
            and not stmt.targets
            and isinstance(value, ast.Chain)
            and isinstance(value.source, ast.Name)
            and value.source.id != stmt.target
        )

    def _chain_apart(self, stmt: ast.Assign, depth: int) -> list[str]:
        """The chain's modules from its source's width; the new name has the width it
        ends with, the source keeps its own."""
        assert self.widths is not None and isinstance(stmt.value, ast.Chain)
        assert isinstance(stmt.value.source, ast.Name)
        self.switch(stmt.value.source.id, depth)
        self.widths[self.tensor] = self.size  # kept for a later use of the source
        lines = self.chain(stmt.value, depth)
        self._rebind([stmt.target], [self.size])
        return lines

    def switch(self, name: str, depth: int) -> None:
        """Thread the tensor ``name`` from here: a network's, outside loops, where each
        tensor's width text is kept by name."""
        if not self.tensor or name == self.tensor:
            self.tensor = name
            return
        if self.widths is None or depth != TOP:
            what = "a block" if self.block else "a network"
            raise Unsupported(f"{what} that threads more than one tensor")
        self.widths[self.tensor] = self.size
        self.tensor = name
        self.size = self.widths.get(name, "")

    def bind(self, value: ast.Expr, targets: list[str], depth: int) -> list[str]:
        """A network's ``t = op(a, b)``, ``a, b, d = Block(h, temb, ...)`` or ``return
        op(u, ...)`` outside loops: a value no module makes binds its names with widths
        not known; a layer or block call on named tensors is a step of its first input."""
        if depth != TOP:
            raise Unsupported("an assignment to another tensor in a loop")
        assert self.widths is not None
        span = value.span
        inside = [n for n in self.pending if _within(n.span, span)]
        if inside and self.pending[: len(inside)] != inside:
            raise Unsupported(f"the IR's nodes of the statement at {span} are not in order")
        if not any(_makes_module(n) for n in inside):  # t = to(unsqueeze(timestep, 1), ...)
            known = self._free_width(value, inside)
            del self.pending[: len(inside)]
            if self.tensor:  # ``s = x``: x's width kept for a later use of it
                self.widths[self.tensor] = self.size
            self._rebind(targets, [known] * len(targets))
            return []
        if not isinstance(value, ast.Call) or not value.args:
            raise Unsupported(f"an assignment the roller does not write at {span}")
        node = next((n for n in inside if n.span == span and n.suffix_of is None), None)
        if node is None:
            raise Unsupported(f"no layer of the IR matches '{value.func}' at {span}")
        if not node.inputs and isinstance(value, ast.Call):  # h = buffer(width): no tensor in
            if self.tensor:  # the tensor threaded so far keeps its width for a later use
                self.widths[self.tensor] = self.size
            lines = self.buffer(value, depth)
            self._rebind(targets, [self.size])
            return lines
        sources = value.args[: len(node.inputs)]
        if not all(isinstance(a, ast.Name) for a in sources) or len(sources) != len(node.inputs):
            raise Unsupported(f"a call on other than named tensors at {span}")
        names = [a.id for a in sources if isinstance(a, ast.Name)]
        outputs = node.outputs or (node.output,)
        if len(targets) not in (0, len(outputs)):
            raise Unsupported(f"{len(targets)} names bound to {len(outputs)} outputs at {span}")
        self.switch(names[0], depth)
        self.widths[self.tensor] = self.size  # kept for a later use of the input
        self.inputs = tuple(self._known(n) for n in names)
        lines = self.step(replace(value, args=value.args[len(names) :]), depth)
        self.inputs = ()
        widths = [self.size]
        arguments = [self.tr.text(a) for a in value.args[len(names) :]]
        for index, output in enumerate(outputs[1:], start=1):
            width = self._width(output)
            key = (span, index)  # one of the call's arguments, or the number
            widths.append(self._choose(key, [*arguments, str(width)], width, value.func))
        self._rebind(targets, widths)
        return lines

    def _free_width(self, expr: ast.Expr, nodes: list[Node]) -> str:
        """The width text of a value no module makes (``concat(cos(arg), sin(arg),
        dim=1)``: ``2 * half``), from its inputs' widths, a concat's sum of them, or an
        argument (``arange(half)``), the first that gives the IR's width in every
        variant; "" where none does (the IR's number is written where a module reads it)."""
        if isinstance(expr, ast.Name):
            return self._known(expr.id)
        if not isinstance(expr, ast.Call) or expr.suffixes:
            return ""
        node = next((n for n in nodes if n.span == expr.span and n.suffix_of is None), None)
        shape = None if node is None else self.values[node.output].shape
        if node is None or shape is None or len(shape) < 2:
            return ""
        width = int(plain(shape[1]))
        widths = [self._free_width(a, nodes) for a in expr.args[: len(node.inputs)]]
        texts = [w for w in widths if w]
        flat = None
        if expr.func == "flatten":
            flat = self._flat_text(widths[0], node.inputs[0], node.origin)
        texts += [flat] if flat is not None else []
        if expr.func == "concat" and widths and all(widths):
            terms = [w if _ATOMIC.fullmatch(w) else f"({w})" for w in widths]
            same = len(set(terms)) == 1 and len(terms) > 1
            texts.append(f"{len(terms)} * {terms[0]}" if same else " + ".join(terms))
        for arg in expr.args[len(node.inputs) :]:
            try:
                texts.append(self.tr.text(arg))
            except Unsupported:
                continue
        try:
            return self._choose(("free", expr.span), [*texts, str(width)], width, expr.func)
        except Unsupported:  # the variants' widths have no common text
            return ""

    def _known(self, name: str) -> str:
        assert self.widths is not None
        return self.size if name == self.tensor else self.widths.get(name, "")

    def _rebind(self, targets: list[str], widths: list[str]) -> None:
        """The names a statement bound, the first threaded from here."""
        assert self.widths is not None
        for target, width in zip(targets, widths, strict=False):  # return op(...): none
            self.widths[target] = width
        if targets:
            self.tensor, self.size = targets[0], widths[0]

    def branch(self, stmt: ast.If, depth: int) -> list[str]:
        """``if``/``elif``/``else`` as Python: each branch's body is written where a visit
        takes it (``BRANCH`` marks it until ``fill`` puts it in), the width the local
        whichever branch ran. Outside loops in a block's class only (``_top_branch``)."""
        pad = INDENT * depth
        lines: list[str] = []
        if not self.loops_around:
            lines += self._top_branch(stmt, depth)
        chosen: int | None = None
        for index, branch in enumerate(stmt.branches):
            key = f"{BRANCH}{stmt.span.line}:{stmt.span.column}:{index}"
            if branch.test is None:
                lines.append(f"{pad}else:")
                taken = chosen is None
            else:
                test = self.tr.text(branch.test)
                lines.append(f"{pad}{'if' if index == 0 else 'elif'} {test}:")
                taken = chosen is None and bool(evaluate(test, self.env))
            lines.append(key)
            if taken:
                chosen = index
                body = self.body(branch.body, depth + 1)
                # the branch's modules of a running count (``BranchCount``): n += 1
                body += add_mark(depth + 1, self.tr.branch_counts, branch)
                for counted in self.tr.branch_counts:
                    self.branch_made[counted.op] += counted.made(branch)
                known = self.branches.setdefault(key, body)
                if self.strict and known != body:
                    raise Unsupported("a branch writes differently at two visits")
                self.branches[key] = body
        if not self.loops_around:
            self.held = None  # the text the local holds is the branch's that ran
        return lines

    def _top_branch(self, stmt: ast.If, depth: int) -> list[str]:
        """Before an ``if`` outside loops: the local holds the width (``channels =
        in_channels``), which each branch sets as its modules change it; a network's
        other tensors whose width the local held lose it, as at a loop. A branch visited
        once per call or variant writes no width as a number (``_width_text``), so a
        class built at other arguments computes the widths the source says."""
        if self.block and self.widths is not None:
            raise Unsupported("an if outside a loop")
        widths = self.widths if self.widths is not None else {}
        for name, width in widths.items():
            if width == SIZE and name != self.tensor:
                widths[name] = ""  # the local held it; the branch changes the local
        if self.size == SIZE:
            return []
        if not self.size:  # a tensor no module made: no width text to hold
            raise Unsupported(f"an if outside loops after a width no text gives at {stmt.span}")
        self.env[SIZE] = self._concrete_size()
        self.held, self.size = self.size, SIZE
        return [f"{INDENT * depth}{SIZE} = {self.held}"]

    def loop(self, stmt: ast.For, depth: int) -> list[str]:
        pad = INDENT * depth
        lines: list[str] = []
        for name, width in (self.widths or {}).items():
            if width == SIZE and name != self.tensor and self.widths is not None:
                self.widths[name] = ""  # the local held it; the loop changes the local
        size_before, held_before = self.size, self.held
        if self.size != SIZE:  # the loop changes the width: a local holds it
            lines.append(f"{pad}{SIZE} = {self.size}")
            self.env[SIZE] = self._concrete_size()
            self.held = self.size
            self.size = SIZE
        held = self.held
        carried = self._enter_loop(stmt)  # the spatial sizes the loop's locals carry
        carried_at = len(lines)
        if not self.loops_around:  # a loop outside loops (in an if's branch too): its
            # modules' sizes are collected afresh
            self._loop_sizes = set()
        stage = self._stage(stmt)
        stage_call = self._stage_call
        if stage is not None:
            lines.append(f"{pad}{STAGE} = nn.Sequential()")
        index = self.indices.get(stmt.span)
        items: list[Any]
        if applied_target(stmt) is not None and isinstance(
            stmt.iterable, ast.ListExpr | ast.TupleExpr
        ):  # for a in [act, exp]: -> a makes no module here; only the count is written
            items = [None] * len(stmt.iterable.items)
            counted = index if index is not None and stmt.span in self.indexed else "_"
            lines.append(f"{pad}for {counted} in range({len(items)}):")
        else:
            iterable = self.tr.text(stmt.iterable)
            items = list(evaluate(iterable, self.env))
            if index is not None and stmt.span in self.indexed:
                lines.append(enumerated_header(pad, index, stmt.target, iterable))
            else:
                lines.append(f"{pad}for {_target_text(stmt.target)} in {iterable}:")
        body: list[str] | None = None
        for count, item in enumerate(items):
            if item is not None:
                _bind(stmt.target, item, self.env)
            if index is not None:
                self.env[index] = count
            self.held = None  # a later iteration starts from what the one before left
            self.loops_around += 1
            try:
                found = self.body(stmt.body, depth + 1)
            finally:
                self.loops_around -= 1
            # a loop in a branch: each iteration adds its modules to a running count
            found += add_mark(depth + 1, self.tr.branch_counts, stmt)
            for running in self.tr.branch_counts:
                self.branch_made[running.op] += running.made(stmt)
            if held is not None:
                found = _steady(found, held)
            if self.strict and body is not None and found != body:
                raise Unsupported(f"the iterations of '{_target_text(stmt.target)}' differ")
            body = found
        if body is None and not self.block:
            raise Unsupported("a loop that runs no iteration in a variant")
        if carried is not None:
            lines[carried_at:carried_at] = self._leave_loop(carried, body or [], pad)
        # after the loop the local holds what it held before only where no line sets it
        self.held = held if body is not None and not _sets_size(body) else None
        key = f"{BRANCH}loop {stmt.span.line}:{stmt.span.column}"
        if body is not None and not body and stage is None:  # builds nothing: no loop here
            self.size, self.held = size_before, held_before
            self.empty_loops.add(key)
            return []
        if body is None and key in self.empty_loops and stage is None:  # nor another call's
            self.size, self.held = size_before, held_before
            return []
        if self.block:
            # a block's loop body is marked (like a branch's) until ``_fill`` puts it in:
            # a call that runs no iteration writes the body another call's visit wrote
            # (a numbered container it fills is then an empty ``nn.Sequential``)
            if body is not None:
                known = self.branches.setdefault(key, body)
                if self.strict and known != body:
                    raise Unsupported(f"the iterations of '{_target_text(stmt.target)}' differ")
                self.branches[key] = body
            lines.append(key)
            if stage is None:
                return lines
        else:
            assert body is not None
            lines += body
        if stage is not None:
            path, templated = stage
            self.stages.add(evaluate(f'f"{path}"', self.env) if templated else path)
            call = stage_call
            assert call is not None and call.layer is not None
            parent = call.layer.rsplit(".", 1)[0]
            added = self._added(parent, call.layer_holes[: parent.count("{}")])
            if added is not None:
                lines.append(f"{pad}{added[0]}{STAGE})")
            else:
                if templated:
                    lines.append(f'{pad}setattr(self, f"{path}", {STAGE})')
                elif path.isidentifier():
                    lines.append(f"{pad}self.{path} = {STAGE}")
                else:
                    lines.append(f'{pad}setattr(self, "{path}", {STAGE})')
        return lines

    def _enter_loop(self, stmt: ast.For) -> tuple[dict[int, Expr], dict[int, str]] | None:
        """Where the loop starts from a tensor whose spatial sizes are tracked (``spatial``),
        those sizes are carried by locals through it (``length``, which a step changing it
        updates): the trees before and the locals, by axis; None where it does not, or
        the locals are names of the block already."""
        first = next(
            (
                node
                for node in self.pending
                if any(
                    frame.kind == "loop"
                    and (frame.span.line, frame.span.column) == (stmt.span.line, stmt.span.column)
                    for frame in node.origin
                )
            ),
            None,
        )
        if first is None or not first.inputs:
            return None
        value = first.inputs[0]
        trees = self._spatial_in(value)
        shape = self.values[value].shape or ()
        names = RUNNING_SIZES.get(len(shape) - 1)
        if trees is None or names is None:
            return None
        carried = {
            axis: names[axis - 1] for axis, tree in trees.items() if tree != Ref(names[axis - 1])
        }
        taken = (*self.tr.locals, *RESERVED, *self.tr.constants)
        if not carried or any(local in taken for local in carried.values()):
            return None
        self.spatial[value] = {**trees, **{axis: Ref(local) for axis, local in carried.items()}}
        for axis, local in carried.items():
            self.env[local] = int(plain(shape[axis + 1]))
        return trees, carried

    def _leave_loop(
        self, running: tuple[dict[int, Expr], dict[int, str]], body: list[str], pad: str
    ) -> list[str]:
        """The lines starting the locals ``_enter_loop`` made the loop's (``length =
        in_length``) where its body reads one; where it reads none, the trees naming them
        are the sizes before the loop again (no line for a local nothing reads)."""
        before, carried = running
        lines = []
        for axis, name in carried.items():
            if any(re.search(rf"\b{name}\b", line) for line in body):
                lines.append(f"{pad}{name} = {self._tree_text(before[axis])}")
                continue
            local = Ref(name)
            for other, trees in list(self.spatial.items()):
                if trees.get(axis) == local:
                    self.spatial[other] = {**trees, axis: before[axis]}
                elif any(local in leaves(t) for t in trees.values()):
                    del self.spatial[other]
        return lines

    def _stage(self, stmt: ast.For) -> tuple[str, bool] | None:
        """A loop whose one layer is named ``P.{j}`` by its own ``range`` target, or
        ``P.name{...}`` (DenseNet's ``denseblock{i + 1}.denselayer{j + 1}``), fills the
        container P: (P as Python, whether it is templated)."""
        call = _stage_step(stmt)
        if call is None:
            return None
        self._stage_call = call
        assert call.layer is not None
        head = call.layer.rsplit(".", 1)[0]
        if "." in head and _flat_head(head.replace("{}", "0")) not in self.flat:
            raise Unsupported("a container below another in a loop")
        self.stage_steps.add(call.span)
        return _path_text(head, call.layer_holes[:-1], self.tr)

    def chain(self, chain: ast.Chain, depth: int) -> list[str]:
        if chain.layer is not None:
            if not isinstance(chain.source, ast.Name):
                raise Unsupported("a chain that does not start at a tensor name")
            self.collect = []
            after: list[str] = []  # the width's updates, after the container is made
            for step in chain.steps:
                after += self.step(step, depth)
            made, self.collect = self.collect, None
            added = self._added(chain.layer, chain.layer_holes)  # the container's next child
            if added is not None:
                name = added[1]
            else:
                path = _path_text(chain.layer, chain.layer_holes, self.tr)[0]
                name = evaluate(f'f"{path}"', self.env)
            for index, (path, _) in enumerate(made):
                if path != f"{name}.{index}":
                    raise Unsupported(f"the layer '{path}' is not the chain's child {index}")
            call = Call("nn.Sequential", tuple(text for _, text in made))
            if added is not None:
                return _nested(depth, added[0], call) + after
            path, templated = _path_text(chain.layer, chain.layer_holes, self.tr)
            if "." in path:
                raise Unsupported("a chain named below a container")
            if templated:
                return _nested(depth, f'setattr(self, f"{path}", ', call) + after
            return wrap(depth, f"self.{path} = ", call) + after
        if not isinstance(chain.source, ast.Name):
            raise Unsupported("a chain that does not start at a tensor name")
        self.switch(chain.source.id, depth)
        lines: list[str] = []
        for step in chain.steps:
            lines += self.step(step, depth)
        return lines

    # -- steps --------------------------------------------------------------------------

    def _node(self, step: ast.Call) -> Node:
        for index, node in enumerate(self.pending):
            if node.span == step.span and node.suffix_of is None:
                del self.pending[: index + 1]
                return node
        raise Unsupported(f"no layer of the IR matches '{step.func}' at {step.span}")

    def _suffixes(self, node: Node) -> None:
        """Suffix nodes (``.relu``) the step made: a module only in a named chain."""
        while self.pending and self.pending[0].suffix_of is not None:
            suffix = self.pending.pop(0)
            if suffix.layer is None and emitter(suffix.op).init is None:
                continue
            make = FUNCTION_MODULES.get(suffix.op)
            if self.collect is None or suffix.layer is None or make is None:
                raise Unsupported(f"the suffix '{suffix.op}' makes a module")
            value = self.values[suffix.inputs[0]]
            shape = tuple(plain((value.shape or ())[1:]))
            made = make(Site(suffix, ("x",), (shape,), shape, suffix.id))
            self.collect.append((suffix.layer, made.text()))

    def _concrete_size(self) -> int:
        return int(evaluate(self.size, self.env))

    def _width(self, name: str) -> int:
        """The channel or feature size of the IR's value ``name`` (``axis``)."""
        shape = self.values[name].shape
        if shape is None or len(shape) < 2:
            raise Unsupported(f"the value '{name}' has no channel or feature axis")
        return int(plain(shape[self.axis]))

    def step(self, step: ast.Call, depth: int) -> list[str]:
        self.depth = depth
        node = self._node(step)
        self._flags(step, node)
        if not self.size:  # a tensor no module made: its width as the IR's number
            self.size = str(self._width(node.inputs[0]))
        if self._concrete_size() != self._width(node.inputs[0]):
            raise Unsupported(f"'{self.size}' is not the input width of '{node.id}'")
        is_block = node.op == "block"
        made, out = self._block(step, node) if is_block else self._layer(step, node)
        lines: list[str] = [] if is_block else self._axes_refusal(step, node, depth)
        item = None if is_block else self._module_item(step, node, made, depth)
        if item is not None:  # a list's item that may build a module: built by its class
            lines += item
        elif made is not None:
            lines += self._place(step, node, made, depth, bool(is_block and out == LAYER))
        elif step.layer is not None:
            raise Unsupported(f"the named '{step.func}' makes no module")
        if not is_block:  # a running spatial size the step changes, after its module
            lines += self._running_sizes(node, depth)
        self._suffixes(node)  # after the step's own module: a named chain lists it first
        width = self._width(node.output)
        if out == LAYER:
            text = f"{LAYER}.out_channels"
            self.env[LAYER] = _Width(width)
        elif is_block and out is None and self.inner_widths is not None:
            text = self._followed_text(step, node, width)
        else:
            flat = self._flattened(node) or self._piece(step, node) or self._reshaped(step, node)
            sub = node.subgraph if is_block else None
            # a width a parameter changes is never the calls' number (hunt109 F4)
            folds = not _reads_parameter((self.values[node.output].shape or ())[self.axis])
            text = self._width_text(step, width, out, flat, self._sets(step, node), sub, folds)
        return lines + self._advance(text, width, depth)

    def _axes_refusal(self, step: ast.Call, node: Node, depth: int) -> list[str]:
        """The lines refusing a norm's ``axes`` that the source's expression gives and the
        language rejects: none, or more axes than the sample has. The class cuts the
        normalised shape as ``(channels, 8, 8)[-p0:]``, which at ``p0 = 0`` is all three
        axes and at ``p0 = 4`` too, so it raises instead (``1 <= p0 <= 3``; on a sample of
        one axis, or a ``layer_norm(dim=1)``, ``p0 == 1``); a boolean where one may reach
        the name (``number_names``), which Python's slice takes for 1."""
        if node.op not in ("rms_norm", "layer_norm"):
            return []
        spec = lookup(node.op)
        expr = _given(spec, step).get("axes") if spec is not None else None
        if expr is None or _literal(expr):
            return []
        text = self.tr.text(expr)
        rank = len(self.values[node.inputs[0]].shape or ()) - 1
        channel = node.op == "layer_norm" and channel_first(plain(node.args.get("dim", -1)), rank)
        flags = text.isidentifier() and text not in self.number_names
        return axes_refusal(self.class_name, text, 1 if channel else rank, flags, depth)

    def _module_item(
        self, step: ast.Call, node: Node, made: Call | None, depth: int
    ) -> list[str] | None:
        """The lines building the module of a list's item the step applies (``block_walk``
        writes them); None where the step applies none."""
        return None

    def buffer(self, step: ast.Call, depth: int) -> list[str]:
        """``h = buffer(c0, persistent=true).tanh``: a tensor made from no tensor, state
        the class registers where the class of one call does (in a loop, per iteration:
        ``self.register_buffer(f"buffer{i + 1}", torch.zeros(c0))``), its shape written
        as the source's and its other arguments as written (literals: the contents are
        computed where the class is written). The running width is the buffer's on the
        walk's axis, a text of the shape (no line: the text holds in the loop)."""
        self.depth = depth
        node = self._node(step)
        spec = lookup(node.op)
        if node.op != "buffer" or spec is None or node.inputs:
            raise Unsupported(f"'{step.func}' at {step.span} makes no buffer")
        if step.layer is not None:
            raise Unsupported(f"the named buffer at {step.span}")
        given = _given(spec, step)
        for name, expr in given.items():
            if name not in ("shape", "init") and not _literal(expr):
                raise Unsupported(
                    f"the {name} '{self.tr.text(expr)}' of the buffer at {step.span} is no literal"
                )
        init = given.get("init")
        init_param = None if init is None or _literal(init) else self.tr.text(init)
        shape = given.get("shape")
        items = shape.items if isinstance(shape, ast.TupleExpr) else ()
        if len(items) == 1 and isinstance(items[0], ast.TupleExpr):
            items = items[0].items  # buffer((c0, 8)) as buffer(c0, 8)
        values = tuple(plain(v) for v in int_items(node.args["shape"]))
        if len(items) != len(values):
            raise Unsupported(f"the shape of the buffer at {step.span}")
        texts = [self.tr.text(expr) for expr in items]
        for text, value in zip(texts, values, strict=True):
            if evaluate(text, self.env) != value:
                raise Unsupported(f"'{text}' is not the IR's size of '{node.id}'")
        args = dict(node.args)
        args["shape"] = tuple(_shown(v, t) for v, t in zip(values, texts, strict=True))
        site = Site(replace(node, args=args), (), (), values, node.id, self.graph.param_dtype)
        made = module_init(site)
        if made is None or made.func != REGISTER_BUFFER:
            raise Unsupported(f"the buffer at {step.span}")
        refused: list[str] = []
        if init_param is not None:
            made, refused = self._filled_by(init_param, site, made, step.span, depth)
        lines = refused + self._place(step, node, made, depth, False)
        self._suffixes(node)
        width = self._width(node.output)
        at = self.axis - 1 if self.axis > 0 else len(values) + self.axis
        if not 0 <= at < len(texts) or evaluate(texts[at], self.env) != width:
            raise Unsupported(f"the buffer at {step.span} has no size on the walk's axis")
        self.size = texts[at]
        return lines

    def _filled_by(
        self, param: str, site: Site, made: Call, span: Span, depth: int
    ) -> tuple[Call, list[str]]:
        """A buffer whose ``init`` a parameter gives (``buffer(p0, init=p1)``): its
        contents chosen by the parameter among the inits the calls give, both fills where
        they give fills (``torch.zeros(p0) if p1 == "zeros" else torch.ones(p0)``), and
        the lines refusing any other init by name, which a class of one call would build
        otherwise. Each init written must fit the buffer's shape texts at any values of
        the parameters (``"arange"`` one axis, ``"causal_mask"`` a square, ``"sinusoid"``
        an even literal width) and make the calls' dtype; ``Unsupported`` where one does
        not, or where the calls give more than two (the first walks collect them)."""
        value = site.node.args["init"]
        if not param.isidentifier() or evaluate(param, self.env) != value:
            raise Unsupported(f"the init '{param}' of the buffer at {span} is no parameter")
        seen = self.choices.setdefault(("inits", span), [])
        if value not in seen:
            seen.append(value)
        written = list(_FILLS) if set(seen) <= set(_FILLS) else seen
        if len(written) > 2:
            raise Unsupported(f"the init '{param}' of the buffer at {span} gives {len(seen)} inits")
        texts = [str(size) for size in site.node.args["shape"]]
        dtype = buffer_dtype(site.node.args, site.param_dtype)
        contents: list[str] = []
        for init in written:
            args = {**site.node.args, "init": init}
            if buffer_dtype(args, site.param_dtype) != dtype:
                raise Unsupported(
                    f"the init '{param}' of the buffer at {span} gives"
                    f" {' and '.join(map(lit, seen))}, of different dtypes"
                )
            if not _fits_any(args, texts):
                raise Unsupported(
                    f"the init '{param}' of the buffer at {span} gives {lit(init)}, which"
                    " other values of the parameters may not fit"
                )
            other = module_init(replace(site, node=replace(site.node, args=args)))
            if other is None or other.args[2:] != made.args[2:]:
                raise Unsupported(f"the buffer at {span} filled with {lit(init)}")
            contents.append(other.args[1])
        chosen = contents[0]
        if len(written) == 2:  # the first init's contents, else the other's
            first, second = written
            chosen = f"{contents[0]} if {param} == {lit(first)} else {contents[1]}"
            rest = contents[0].removeprefix(f"torch.{first}")
            if len(chosen) > _LONG_CHOICE and contents[1] == f"torch.{second}{rest}":
                # too long for one line: the fill function chosen, its arguments once
                chosen = f"(torch.{first} if {param} == {lit(first)} else torch.{second}){rest}"
        if len(written) == 1:
            test, said = f"{param} != {lit(written[0])}", f"for {param} == {lit(written[0])}"
            why = "the buffer's contents are written for this init"
        else:
            shown = f"({', '.join(map(lit, written))})"
            test, said = f"{param} not in {shown}", f"for {param} in {shown}"
            why = "the buffer's contents are written for these inits"
        refused = refusal(self.class_name, test, said, why, param, depth)
        return Call(made.func, (made.args[0], chosen, *made.args[2:])), refused

    def _follows_input(self, sub: Graph | None, width: int) -> bool:
        """Whether the width after the inner block ``sub`` is its input's (the probes';
        without them, wherever the numbers agree)."""
        try:
            if not self.size or evaluate(self.size, self.env) != width:
                return False
        except Unsupported:
            return False
        if self.inner_widths is None or sub is None:
            return True
        return self.inner_widths.follows_input(sub, self._sample_axis(sub), self.axis)

    def _followed_text(self, step: ast.Call, node: Node, width: int) -> str:
        """The width after an inner block whose instance shows it as a number: the text
        of what the block's probes say it follows (``inner_widths``), its input's
        (unchanged), an argument's, or the number itself (inside loops too: ``dense(6)``
        gives 6 whatever the call). Where several texts are worth the number and a probe
        could not be lowered to tell them apart, ``Unsupported``: a class built at other
        arguments could compute another width. Texts the block only lowers with equal
        (``Follows.tied``: a residual block's ``dim`` and its input) are one: the first,
        the input's (no line), is taken."""
        sub = node.subgraph
        assert sub is not None and self.inner_widths is not None
        follows = self.inner_widths.follows(sub, self._sample_axis(sub), self.axis)
        model = self.block_models[sub.name]
        given = [(p.name, a) for p, a in zip(model.params, step.args, strict=False)]
        given += [(k.name, k.value) for k in step.keywords]
        found: list[tuple[str, str]] = [(INPUT, self.size)] if self.size else []
        found += [(param, self.tr.text(arg)) for param, arg in given]
        found.append((CONSTANT, str(width)))
        texts: list[str] = []
        kinds: set[str] = set()
        for kind, text in found:
            if kind not in follows.kinds:
                continue
            try:
                if evaluate(text, self.env) != width:
                    continue
            except Unsupported:
                continue
            texts.append(text)
            kinds.add(kind)
        # what no probe changed, and a class built at other arguments may change: the
        # input, or an argument whose text reads the class's names
        varying = [
            param
            for param, arg in given
            if param in follows.unknown
            and set(re.findall(r"[A-Za-z_]\w*", self.tr.text(arg))) & self.tr.locals
        ]
        unsure = INPUT in follows.unknown or varying
        if unsure and not follows.tied and (len(kinds) > 1 or kinds == {CONSTANT}):
            shown = ", ".join(f"'{t}'" for t in texts)
            untold = ["its input width"] if INPUT in follows.unknown else []
            untold += [f"'{param}'" for param in varying]
            raise Unsupported(
                f"the width after '{step.func}' at {step.span} is {width} ({shown}), and"
                f" '{sub.name}' could not be lowered again with another"
                f" {' or '.join(untold)} to tell what it follows"
            )
        return self._choose(step.span, texts, width, step.func)

    def _sets(self, step: ast.Call, node: Node) -> str | None:
        """The text of the argument that is the output width on the walk's axis (a conv's
        ``channels``, a dense's ``features`` on the last axis), which the running width
        must not stand for even where every call's sizes agree: ``Stack(4, 2)`` by hand
        would then build a wrong second layer."""
        spec = lookup(node.op)
        value = self.values[node.inputs[0]] if node.inputs else None
        if spec is None or not spec.params or value is None or value.shape is None:
            return None
        rank = len(value.shape)
        own = {"channels": 1, "features": rank - 1}.get(spec.params[0].name)
        if own is None or own != (self.axis if self.axis > 0 else rank + self.axis):
            return None
        name = spec.params[0].name
        given = [k.value for k in step.keywords if k.name == name] or list(step.args[:1])
        return self.tr.text(given[0]) if given else None

    def _advance(self, text: str, width: int, depth: int) -> list[str]:
        """The running width is ``text`` (worth ``width``) from here: inside a loop the
        local carries it to the next iteration, outside it is the text itself."""
        if text == self.size:
            return []
        if depth > TOP:
            self.env[SIZE] = width
            self.held = text
            return [f"{INDENT * depth}{SIZE} = {text}"]
        self.size = text
        return []

    def _width_text(
        self,
        step: ast.Call,
        width: int,
        inline: str | None,
        flat: str | None = None,
        sets: str | None = None,
        block: Graph | None = None,
        folds: bool = True,
    ) -> str:
        """The output width (``block``: the inner block's instance): the block's own expression, the input's, one of the step's
        arguments, a flatten's (``channels * 7 * 7``), or (outside loops, where no
        parameter changes it: ``folds``) a number; the first that gives the IR's width at
        every visit of the step in every variant (``choices``, narrowed by a first walk)."""
        texts = [sets] if sets is not None else []  # the layer's own width argument
        if inline is not None:  # the block's own expression: what it computes at any call
            # or the input's where that is worth as much (unchanged: no line) and the block
            # follows its input: a residual block's ``dim`` is built only equal to it
            if inline != self.size and self._follows_input(block, width):
                texts.append(self.size)
            return self._choose(step.span, [*texts, inline], width, step.func)
        texts += [self.size, *(self.tr.text(a) for a in step.args)]
        texts += [flat] if flat is not None else []
        if self.depth == TOP and folds:
            texts.append(str(width))
        return self._choose(step.span, texts, width, step.func)

    def _reshaped(self, step: ast.Call, node: Node) -> str | None:
        """The width after a step that changes it with no module, as the running width and
        the step's own arguments give it: ``channels // 2`` after ``glu`` of the threaded
        axis, ``channels + k + 1`` after ``pad((k, 1))`` of it, ``channels // (r * r)``
        after ``pixel_shuffle(r)`` of the channels; None for another step, or one that
        leaves the threaded axis alone (its width stays the input's)."""
        spec = lookup(node.op) if node.op in ("glu", "pad", "pixel_shuffle") else None
        shape = self.values[node.inputs[0]].shape if node.inputs else None
        if spec is None or not self.size or shape is None:
            return None
        rank = len(shape)  # the batch axis counted, as glu's ``dim`` counts it
        threaded = self.axis % rank
        size = self.size if _ATOMIC.fullmatch(self.size) else f"({self.size})"
        given = _given(spec, step)
        if node.op == "glu":
            dim = plain(node.args.get("dim", -1))
            if not isinstance(dim, int) or dim % rank != threaded:
                return None
            return _undoubled(self.size, "2") or f"{size} // 2"  # ``w`` after ``2 * w``
        if node.op == "pixel_shuffle":
            factor = given.get("upscale_factor")
            if threaded != rank - 3 or factor is None:
                return None
            if _literal(factor):
                return f"{size} // {int(plain(node.args['upscale_factor'])) ** 2}"
            r = self.tr.text(factor)
            r = r if _ATOMIC.fullmatch(r) else f"({r})"
            return _undoubled(self.size, f"{r} * {r}") or f"{size} // ({r} * {r})"
        padding = given.get("padding")  # pairs from the last axis backwards, as F.pad
        pair = rank - 1 - threaded
        if not isinstance(padding, ast.TupleExpr) or 2 * pair + 1 >= len(padding.items):
            return None
        pads = [self.tr.text(padding.items[2 * pair + side]) for side in (0, 1)]
        shown = [f"({pad})" if not _ATOMIC.fullmatch(pad) else pad for pad in pads if pad != "0"]
        return " + ".join([self.size, *shown])

    def _flattened(self, node: Node) -> str | None:
        """A flatten's width as the running width times its input's spatial sizes
        (``channels * 7 * 7`` after ``adaptive_avg_pool((7, 7))``, as torchvision writes
        VGG's classifier); None for another layer."""
        if node.op != "flatten" or not node.inputs:
            return None
        return self._flat_text(self.size, node.inputs[0], node.origin)

    def _piece(self, step: ast.Call, node: Node) -> str | None:
        """The width after a ``chunk``, ``split`` or ``reshape`` of the threaded axis, as
        the source's arguments give it (``piece_widths.piece_width``); None for another
        step."""
        if not node.inputs or not self.size:
            return None
        rank = len(self.values[node.inputs[0]].shape or ())
        return piece_width(step, node, self.size, self.axis, rank, self.tr.text)

    def _flat_text(self, size: str, value: str, origin: tuple[ast.Origin, ...]) -> str | None:
        """``size`` times the spatial sizes of the IR's value ``value`` (a walk of the
        channels only: the last axis has no spatial sizes after it), read by a flatten
        made at ``origin``. ``Unsupported`` where a parameter or a loop's count changes
        those sizes: the class writes them as the calls' numbers."""
        shape = self.values[value].shape
        if shape is None or len(shape) < 3 or not size or self.axis != 1:
            return None
        tracked = self._tracked(value)
        if tracked is None and self._resized_axes(value):
            raise Unsupported(
                f"the spatial sizes '{value}' flattens may change with an argument a step"
                " before it is given (a parameter or a loop's item), which the class does"
                " not track"
            )
        if tracked is None and (
            any(_reads_parameter(d) for d in shape[2:]) or self._loop_changed(value, origin)
        ):
            raise Unsupported(
                f"the spatial sizes '{value}' flattens change with a parameter or a loop's"
                " count, which the class does not track"
            )
        size = size if _ATOMIC.fullmatch(size) else f"({size})"
        named = self._named_sizes(value, 0)  # the input's own sizes, where taken by name
        spatial = [named.get(axis, str(int(plain(d)))) for axis, d in enumerate(shape[2:], 1)]
        spatial = [text if _ATOMIC.fullmatch(text) else f"({text})" for text in spatial]
        return " * ".join([size, *spatial])

    def _choose(self, key: Any, texts: list[str], width: int, func: str) -> str:
        valid = []
        for candidate in texts:
            try:
                if evaluate(candidate, self.env) == width:
                    valid.append(candidate)
            except Unsupported:
                continue
        known = self.choices.get(key)
        kept = [c for c in (valid if known is None else known) if c in valid]
        if not kept and not self.strict and self.widths is not None:
            # a network's step narrowed before an earlier step's text was settled: a
            # further first walk narrows again (``roll``)
            kept = valid
            self.choices[_UNSETTLED] = []
        self.choices[key] = kept
        if not kept:
            raise Unsupported(f"the width after '{func}' is no expression of the source")
        return kept[0]

    def _added(self, layer: str, holes: tuple[ast.Expr, ...]) -> tuple[str, str] | None:
        """How ``layer`` joins a container filled in order, and the child's layer path:
        ``self.features.append(`` for ``features.3`` / ``features.{2 * i}`` (the index must
        be its next child's), ``self.features.add_module("conv0", `` for a named child
        (``features.conv0``, ``features.transition{i + 1}``); None for another layer."""
        if layer.count(".") != 1 or (holes and len(holes) != 1):
            return None
        head, last = layer.split(".")
        if head not in self.flat:
            return None
        index = self.flat[head]
        if _named(last):
            key, templated = _path_text(last, holes, self.tr)
            self.flat[head] = index + 1
            child = evaluate(f'f"{key}"', self.env) if templated else key
            quoted = f'f"{key}"' if templated else f'"{key}"'
            return f"self.{head}.add_module({quoted}, ", f"{head}.{child}"
        if not (last in ("*", "{}") or last.isdigit()):
            return None
        if last == "{}":
            last = str(evaluate(self.tr.text(holes[0]), self.env))
        if last != "*" and last != str(index):
            raise Unsupported(f"'{layer}' is not the next child of '{head}'")
        self.flat[head] = index + 1
        return f"self.{head}.append(", f"{head}.{index}"

    def _place(self, step: ast.Call, node: Node, made: Call, depth: int, keep: bool) -> list[str]:
        """``self.conv1 = ...``, ``stage.append(...)`` or ``setattr(self, f"...", ...)``."""
        pad = INDENT * depth
        if self.collect is not None:
            if node.layer is None:
                raise Unsupported("a module of a named chain without a layer in the IR")
            self.collect.append((node.layer, made.text()))
            return []
        if step.layer is None:
            if self.loops_around:
                raise Unsupported(f"an unnamed '{step.func}' module in a loop at {step.span}")
            if depth == TOP:  # one in an if: the calls taking other branches make others
                self.unnamed.add(node.id)
            if made.func == REGISTER_BUFFER:  # registered under its name, as node.id
                return wrap(depth, "", made)
            if keep:  # the next width is read from it: bound to ``layer`` first
                return [*wrap(depth, f"{LAYER} = ", made), f"{pad}self.{node.id} = {LAYER}"]
            return wrap(depth, f"self.{node.id} = ", made)
        if step.span not in self.stage_steps:
            added = self._added(step.layer, step.layer_holes)
            if added is not None:
                if node.layer != added[1]:
                    raise Unsupported(f"the layer '{node.layer}' is not '{added[1]}'")
                self.made.add(node.layer)
                return _added_lines(depth, added[0], made, keep)
        path, templated = _path_text(step.layer, step.layer_holes, self.tr)
        if node.layer is None:
            raise Unsupported("a named step without a layer in the IR")
        self.made.add(node.layer)
        key = step.layer.rsplit(".", 1)[-1]
        if step.span in self.stage_steps and _named(key):  # stage.add_module(f"...", ...)
            if evaluate(f'f"{path}"', self.env) != node.layer:
                raise Unsupported("a layer path differs from the IR's")
            quoted = f'f"{path.rsplit(".", 1)[1]}"'
            return _added_lines(depth, f"{STAGE}.add_module({quoted}, ", made, keep)
        if step.layer.endswith(".{}") and step.layer_holes:
            if step.span not in self.stage_steps:  # no ``stage`` made for it: two containers
                raise Unsupported(
                    f"a numbered container in a loop that fills several at {step.span}"
                )
            hole = self.tr.text(step.layer_holes[-1])
            if evaluate(hole, self.env) != int(node.layer.rsplit(".", 1)[1]):
                raise Unsupported("a container index is not the loop's count")
            head = evaluate(f'f"{path.rsplit(".", 1)[0]}"', self.env)
            if f"{head}.{node.layer.rsplit('.', 1)[1]}" != node.layer:
                raise Unsupported("a layer path differs from the IR's")
            return _added_lines(depth, f"{STAGE}.append(", made, keep)
        if "." in path:
            raise Unsupported("a dotted layer name outside a loop's container")
        if evaluate(f'f"{path}"', self.env) != node.layer:
            raise Unsupported("a layer path differs from the IR's")
        if templated:
            return _added_lines(depth, f'setattr(self, f"{path}", ', made, keep)
        if keep:
            return [*wrap(depth, f"{LAYER} = ", made), f"{pad}self.{path} = {LAYER}"]
        return wrap(depth, f"self.{path} = ", made)

    def _layer(self, step: ast.Call, node: Node) -> tuple[Call | None, str | None]:
        """A built-in operation's module, its arguments written as the source's."""
        spec = lookup(node.op)
        if spec is None:
            raise Unsupported(f"the operation '{node.op}'")
        given = _given(spec, step)
        args = dict(node.args)
        written: dict[str, tuple[Any, str]] = {}  # the arguments written as the source's
        sourced = [name for name, expr in given.items() if name in args and not _literal(expr)]
        threaded = self.axis - 1 if self.axis > 0 else self.axis  # of the sample's axes
        if resizing_args(self.graph, node, sourced, threaded):
            self.resized.add(node.output)
        self._spatial_out(node, given, sourced)
        tracked = self._tracked(node.inputs[0]) is not None  # its sizes by running texts
        for name, expr in given.items():
            if name not in args or _literal(expr):
                continue
            text = self.tr.text(expr)
            value = evaluate(text, self.env)
            if value != plain(args[name]):
                raise Unsupported(f"'{text}' is not the IR's {name} of '{node.id}'")
            if isinstance(value, tuple) and emitter(node.op).init is None:
                continue  # permute(p - 1, 2, 1): forward writes the numbers, no module
            args[name] = _shown_items(value, expr, self.tr)
            written[name] = (value, text)
        # a norm's ``axes`` counts axes, no size: ``rms_norm(axes=a0)`` at ``a0 = 1`` on a
        # ``(6, 1)`` sample gives no 1 the loop's later modules could read (seed 85000136)
        sizes = (value for name, (value, _) in written.items() if name != "axes")
        sizes_given = set(_sizes_in(sizes)) if self.depth > TOP else set()
        value = self.values[node.inputs[0]]
        assert value.shape is not None
        in_shape = tuple(plain(value.shape[1:]))
        at = self.axis - 1 if self.axis > 0 else len(in_shape) + self.axis
        in_shape = (*in_shape[:at], _shown(in_shape[at], self.size), *in_shape[at + 1 :])
        named = self._named_sizes(node.inputs[0], at)  # the input's own sizes, by name
        in_shape = tuple(_shown(s, named[a]) if a in named else s for a, s in enumerate(in_shape))
        out = self.values[node.output].shape
        site = Site(
            replace(node, args=args),
            ("x",),
            (in_shape,),
            tuple(plain(out[1:])) if out else (),
            node.id,
            param_dtype=self.graph.param_dtype,
        )
        if node.layer is None and emitter(node.op).init is None:
            self._loop_sizes |= sizes_given
            return None, None
        named_function = node.layer is not None and emitter(node.op).init is None
        if named_function and node.op not in FUNCTION_MODULES:
            raise Unsupported(f"the named '{node.op}'")
        made = module_init(site)
        if made is None:
            self._loop_sizes |= sizes_given
            return None, None
        _written_as_given(site, made, written)
        shape = tuple(value.shape[1:])
        reads_other = made != module_init(_other_sizes(site, at))  # an axis not threaded
        if self.depth == TOP:
            _no_parameter_sizes(site, made, shape, at)
        if reads_other and not tracked and self._loop_changed(node.inputs[0], node.origin):
            raise Unsupported(
                f"the module of '{node.id}' reads an input size that a loop before it changes"
                " on an axis the class does not track"
            )
        hidden = any(made.output in self.hidden for made in self.graph.ancestors(node.inputs))
        # any size it reads, but the walked axis's where the walk writes an expression
        # for it (``channels // 2`` after ``chunk(x, 2, index=1)``, ``piece_widths``)
        threaded_folded = self.size.isdigit()
        if hidden and made != module_init(_other_sizes(site, -1 if threaded_folded else at)):
            raise Unsupported(
                f"the module of '{node.id}' reads a size that an integer a call before it"
                " reads changes where no expression shows it"
            )
        resized = {axis - 1 for axis in self._resized_axes(node.inputs[0])}
        resized -= set(named)  # carried by the running sizes' texts
        if resized and made != module_init(_other_sizes(site, at, resized)):
            raise Unsupported(
                f"the module of '{node.id}' reads an input size a parameter changes on an"
                " axis the class does not track"
            )
        if reads_other and self._flagged_before(node.inputs[0]):
            raise Unsupported(
                f"the module of '{node.id}' reads an input size that a flag a call before it"
                " reads may change, on an axis the class does not track"
            )
        numbered = [axis for axis in range(len(in_shape)) if axis != at and axis not in named]
        if named and reads_other:  # of the sizes written as numbers, not by name
            reads_other = made != module_init(_other_sizes(site, at, numbered))
        if self.depth > TOP and reads_other:
            key = (step.span, step.func)  # checked by ``untracked_sizes``
            untracked = {in_shape[axis] for axis in numbered}
            # a size the loop's modules were given (``nn.Linear(4, g)`` at g = 4, whose
            # second iteration reads the 4 the first made) shows no size the loop keeps
            if not untracked & self._loop_sizes:
                self._untracked_visits[key] += 1
                # kept by the loop, yet a parameter may change it (``untracked_sizes``
                # says why for one that shows nothing)
                _no_parameter_sizes(site, made, shape, at)
            self.untracked[key] = max(self.untracked.get(key, 0), self._untracked_visits[key])
        self._loop_sizes |= sizes_given
        return made, None

    def _spatial_in(self, value: str) -> dict[int, Expr] | None:
        """The spatial sizes of the IR's value ``value`` as trees (``spatial``): the block's
        input's by the names the class takes them as; None where not tracked."""
        if value in self.spatial:
            return self.spatial[value]
        if self.axis != 1 or value != self.graph.input_value.name or not self.input_sizes:
            return None
        shape = self.values[value].shape or ()
        named = self._named_sizes(value, 0)
        if len(named) != len(shape) - 2:
            return None
        return {axis: Ref(name) for axis, name in named.items()}

    def _spatial_out(self, node: Node, given: Mapping[str, ast.Expr], sourced: list[str]) -> None:
        """Records ``node``'s output's spatial sizes as trees (``spatial``): its input's
        through the catalog's shape rule, each argument the source writes as an expression
        a leaf of its text. Not recorded where a tree is not the IR's size at this visit,
        or where a step in an if's branch changes one (the calls taking the other branch
        would leave another local)."""
        before = self._spatial_in(node.inputs[0]) if len(node.inputs) == 1 else None
        if before is None:
            return
        args: dict[str, Any] = {}
        for name in sourced:
            leafed = _leafed(plain(node.args[name]), given[name], self.tr)
            if leafed is None:
                return  # a flag or a whole tuple a parameter gives: not a tree's leaf
            args[name] = leafed
        after = spatial_trees(self.graph, node, before, args)
        if after is None:
            return
        shape = self.values[node.output].shape or ()
        for axis, tree in after.items():
            if any(isinstance(leaf, InputSize) for leaf in leaves(tree)):
                return
            read = set(leaves(tree))
            if read and not read & set(leaves(before[axis])):
                # a size the step's arguments set (a dense's features on the last axis):
                # a width, which the walk threading that axis writes better
                return
            try:
                size = evaluate(self._tree_text(tree), self.env)
            except Exception:  # noqa: BLE001 - a text the walk cannot evaluate here
                return
            if size != plain(shape[axis + 1]):
                return
        if not keeps_arguments(self.graph, node, after, args, self._leaf_value):
            return  # the rule lost an argument's tree: right at this visit only
        if after != before and self.depth != TOP + self.loops_around:
            return
        self.spatial[node.output] = after

    def _leaf_value(self, leaf: Ref) -> Any:
        """A spatial tree's leaf at this visit: an argument's text or a name's value."""
        if leaf.name.startswith(ARGUMENT):
            return evaluate(leaf.name[len(ARGUMENT) :], self.env)
        return self.env[leaf.name]

    def _running_sizes(self, node: Node, depth: int) -> list[str]:
        """In a loop, the lines updating the locals that carry the spatial sizes ``node``
        changes (``length = length + 2 * (k // 2) - k + 1``); outside loops the tree is
        the size's text and no line is written."""
        after = self.spatial.get(node.output)
        before = self._spatial_in(node.inputs[0]) if after is not None else None
        if after is None or before is None or after == before or depth == TOP:
            return []
        changed = {
            axis: tree
            for axis, tree in after.items()
            if before.get(axis) != tree and not isinstance(tree, Lit)
        }
        locals_ = {axis: self._running_local(node.output, axis) for axis in changed}
        if any(local is None or before.get(axis) != Ref(local) for axis, local in locals_.items()):
            # a size the loop does not carry (a tensor it did not start from): a line
            # here would restart it at each iteration, so it is not tracked
            del self.spatial[node.output]
            return []
        lines = []
        for axis, tree in changed.items():
            local = locals_[axis]
            assert local is not None
            lines.append(f"{INDENT * depth}{local} = {self._tree_text(tree)}")
            self.env[local] = int(plain((self.values[node.output].shape or ())[axis + 1]))
            # a value whose size the local held before holds it no more
            for value, trees in list(self.spatial.items()):
                if value != node.output and any(Ref(local) in leaves(t) for t in trees.values()):
                    del self.spatial[value]
            after[axis] = Ref(local)
        return lines

    def _running_local(self, value: str, axis: int) -> str | None:
        """The local carrying the spatial size on ``axis`` of the IR's value ``value``
        (``length`` of a ``(channels, length)`` sample); None where the block has no
        such local (a sample of more axes) or takes its name already."""
        names = RUNNING_SIZES.get(len(self.values[value].shape or ()) - 1)
        if names is None:
            return None
        local = names[axis - 1]
        if local in self.tr.locals or local in RESERVED or local in self.tr.constants:
            return None
        return local

    def _tree_text(self, tree: Expr) -> str:
        """A spatial size's tree as the class writes it (``spatial``)."""

        def name(leaf: Any) -> str:
            if not isinstance(leaf, Ref):
                raise Unsupported("an input size the class does not name")
            if leaf.name.startswith(ARGUMENT):
                text = leaf.name[len(ARGUMENT) :]
                return text if _ATOMIC.fullmatch(text) else f"({text})"
            return leaf.name

        return to_python(tree, name)

    def _tracked(self, value: str) -> dict[int, Expr] | None:
        """The spatial sizes of ``value`` as trees where one reads a running local or an
        argument's text (the sizes a step before changed with its source arguments), None
        where the class writes them as before (by name or as the calls' numbers)."""
        trees = self._spatial_in(value)
        own = {Ref(name) for name in self.input_sizes.values()}
        if trees is None or all(tree in own or isinstance(tree, Lit) for tree in trees.values()):
            return None
        return trees

    def _named_sizes(self, value: str, threaded: int) -> dict[int, str]:
        """The sample axes of the IR's value ``value`` other than ``threaded`` whose sizes
        are the block's input's there (``InputSize``), by the name the class takes each as
        (``in_channels`` of a walk threading the last axis; ``input_sizes``): a module
        reading one writes the name, right for any input. None where the walk takes no
        such sizes (the calls' numbers are written instead)."""
        if not self.input_sizes:
            return {}
        if value in self.spatial and (tracked := self._tracked(value)) is not None:
            return {
                axis: self._tree_text(tree) for axis, tree in tracked.items() if axis != threaded
            }
        shape = self.values[value].shape or ()
        return {
            axis: self.input_sizes[axis]
            for axis, size in enumerate(shape[1:])
            if axis != threaded
            and axis in self.input_sizes
            and is_symbolic(size)
            and tree_of(size) == InputSize(axis)
        }

    def _resized_axes(self, value: str) -> set[int]:
        """The axes of the IR's value ``value``, other than the batch's and the threaded
        one, whose sizes come from the block's input sizes through a step whose source
        arguments may change them (``resizing_args``): the class writes those sizes as the
        calls' numbers, right only where the arguments keep them (``conv1d(c, k,
        padding=k // 2)`` at an odd ``k``). None where no such step comes before."""
        if not self._resized_before(value):
            return set()
        shape = self.values[value].shape or ()
        threaded = self.axis if self.axis > 0 else len(shape) + self.axis
        # in a block, a size no input size reaches (a pool's ``(7, 7)``) is the class's
        # own number; a network's sizes are all plain (``_resized_before`` stops there)
        in_block = self.graph.block_params is not None
        return {
            axis
            for axis, size in enumerate(shape)
            if axis not in (0, threaded)
            and (
                not in_block
                or is_symbolic(size)
                and any(isinstance(leaf, InputSize) for leaf in leaves(tree_of(size)))
            )
        }

    def _resized_before(self, value: str) -> bool:
        """Whether a step in ``resized`` comes before the IR's value ``value`` through
        steps whose sizes follow their inputs' (``passes_input_sizes``: not through an
        ``adaptive_avg_pool((7, 7))``)."""
        made_by = {node.output: node for node in self.graph.nodes}
        threaded = self.axis - 1 if self.axis > 0 else self.axis
        pending, seen = [value], set()
        while pending:
            node = made_by.get(pending.pop())
            if node is None or node.output in seen:
                continue
            seen.add(node.output)
            if node.output in self.resized:
                return True
            if passes_input_sizes(self.graph, node, threaded):
                pending.extend(node.inputs)
        return False

    def _flagged_before(self, value: str) -> bool:
        """Whether a step the IR's value ``value`` is computed from reads a boolean or
        string parameter (``avgpool(2, ceil_mode=c)``): it may change sizes where no
        tree shows it."""
        return any(made.output in self.flagged for made in self.graph.ancestors((value,)))

    def _flags(self, step: ast.Call, node: Node) -> None:
        """Marks ``node``'s output where ``step``'s arguments read a boolean or string
        parameter that may change its shape (``_flagged_before``; not ``bias=b``)."""
        names = {
            item.id
            for item in syntax_items((step.args, tuple(k.value for k in step.keywords)))
            if isinstance(item, ast.Name)
        }
        if size_flags(self.graph, node, names & set(self.graph.block_params or ())):
            self.flagged.add(node.output)
        if hidden_params(self.graph, node):
            self.hidden.add(node.output)  # slice(start=k): a plain size k changes

    def _loop_changed(self, value: str, origin: tuple[ast.Origin, ...]) -> bool:
        """Whether a node made in a loop other than those of ``origin`` (where the node
        reading it was made) changed a size of the IR's value ``value`` on an axis the
        class does not thread (or its rank): the number the class would write for it is
        right at the calls' counts only (``nn.Linear(5, w)`` after ``for i in range(n):
        x -> conv2d(8, kernel=3)``). Only where those sizes read the block's input sizes
        (a size ``adaptive_avg_pool((7, 7))`` gives reads none: no loop before it counts)."""
        shape = self.values[value].shape or ()
        threaded = self.axis if self.axis > 0 else len(shape) + self.axis
        if not any(
            is_symbolic(size) and any(isinstance(leaf, InputSize) for leaf in leaves(tree_of(size)))
            for axis, size in enumerate(shape)
            if axis not in (0, threaded)
        ):
            return False
        own = {frame.span for frame in origin if frame.kind == "loop"}
        for made in self.graph.ancestors((value,)):
            loops = {frame.span for frame in made.origin if frame.kind == "loop"}
            if not loops or loops <= own or not made.inputs:
                continue
            before = self.values[made.inputs[0]].shape
            after = self.values[made.output].shape
            if before is None or after is None or len(before) != len(after):
                return True
            pairs = enumerate(zip(before, after, strict=True))
            if any(a != b for axis, (a, b) in pairs if axis not in (0, threaded)):
                return True
        return False

    def _block(self, step: ast.Call, node: Node) -> tuple[Call, str | None]:
        sub = node.subgraph
        if sub is None or sub.block_params is None:
            raise Unsupported(f"the block '{step.func}' takes no parameters")
        model = self.block_models.get(sub.name)
        if model is None:
            raise Unsupported(f"the block '{sub.name}'")
        if self.function_items and any(operation_items(v) for v in sub.block_args.values()):
            raise Unsupported(f"the operations passed to the block '{sub.name}' as functions")
        for param in sub.block_ops:  # act=nn.ReLU: the class must take it as a module class
            if self.operation_of(sub, param) is None:  # (or a function: operation_of)
                raise Unsupported(f"the block '{sub.name}' folds the operation '{param}'")
        own = self._sample_axis(sub)
        if self.axis != 1 and step.func in self.tr.locals:  # its class stores out_channels
            raise Unsupported(
                f"the block '{sub.name}' given as '{step.func}' in a block threading its last axis"
            )
        dims = self.dims_of(sub)
        more = self._later_sizes(sub, node) if self.axis == 1 else []
        if more:
            dims = (0,)
        if dims is None:
            raise Unsupported(f"the block '{sub.name}' takes sizes other than its width")
        # the class takes the walk's axis as the running width, any other as the number
        # the IR gives (``Inner(channels, 8, p0)``, a norm's ``axes=p0`` reading them all)
        others = self._other_block_sizes(step, node, [d for d in dims if d != own])
        if not dims and not self.size.isdigit() and _builds_modules(sub):
            # its class writes its calls' input width as a number (``nn.Linear(6, w)``),
            # which the running width here need not be at other arguments
            raise InputWidthFolded(
                f"the class of '{sub.name}' at {step.span} is written for its calls' input"
                f" width, which '{self.size}' may change",
                sub.name,
                own,
            )
        bound = self.env.get(step.func) if step.func in self.tr.locals else None
        if step.func in self.tr.locals:
            if isinstance(bound, OpValue) and bound.is_model and self._row_block(step, node):
                pass
            elif isinstance(bound, OpValue) and bound.is_model:
                # a row's block (``for w, b in cfg: x = b(x, w)``): the IR names each call
                # after the block it gives (``basic1``, ``wide1``), not after ``b``, so the
                # state-dict keys follow the rows' blocks and their order
                raise Unsupported(
                    f"'{step.func}' gives the block '{bound.name}' of a list the calls pass:"
                    f" its modules are named after that block ('{node.id}'), which one class"
                    " cannot write for other rows"
                )
            elif not isinstance(bound, Model) or bound.name != self.class_of(sub):
                raise Unsupported(f"'{step.func}' does not name the IR's block class")
            callee = step.func
        else:
            callee = self.class_of(sub)
            self._numbered_beside_rows(step, node, callee)
        names = [p.name for p in model.params]
        given = dict(plain(sub.block_args))
        given.update({param: self.operation_of(sub, param) for param in sub.block_ops})
        if self.blocks is not None:  # block=Basic: the inner class takes the block's class
            given.update({p: Model(cls) for p, cls in self.blocks.taken(sub).items()})
        args = [self.size if d == own else others[d] for d in dims] + more
        passed: dict[str, str] = {}  # the block's arguments' texts, by its parameter
        for index, arg in enumerate(step.args):
            passed[names[index]] = self._checked(arg, given.get(names[index]), names[index])
            args.append(passed[names[index]])
        for keyword in step.keywords:
            value = self._checked(keyword.value, given.get(keyword.name), keyword.name)
            passed[keyword.name] = value
            args.append(f"{keyword.name}={value}")
        made = Call(callee, tuple(args))
        if step.func in self.tr.locals and self.inputs and self.depth == TOP:
            return made, None  # a network's call outside loops: the width from its arguments
        if step.func in self.tr.locals:  # a block parameter: the class stores its width
            found = self.loop_widths.get(self.class_of(sub))
            if found is not None and found.counts:  # what its loop leaves, at any count
                if not found.stored:
                    raise Unsupported(
                        f"the width after '{step.func}' is what the loop of"
                        f" '{self.class_of(sub)}' leaves, which its class does not track"
                    )
                self.read_widths.add(self.class_of(sub))
                return made, LAYER
            self._out_size(sub)
            return made, LAYER
        if self._loop_width_fixed(step, sub, model, passed):
            return made, LAYER  # channels = layer.out_channels
        return made, self._inline_width(sub, model, step)

    def _other_block_sizes(self, step: ast.Call, node: Node, axes: Sequence[int]) -> dict[int, str]:
        """The numbers the inner block's class takes for its input's sample ``axes`` the
        walk does not thread, by axis: the IR's sizes, checked as a module's reading them
        (``_layer``) is: no parameter, flag or loop before the call changes them, and in
        a loop some call visits the step twice (``untracked_sizes``), so the class built
        at other arguments passes the sizes its calls' classes were given."""
        if not axes:
            return {}
        value = self.values[node.inputs[0]]
        shape = tuple(value.shape[1:]) if value.shape is not None else ()
        name = node.subgraph.name if node.subgraph is not None else step.func
        if any(axis >= len(shape) for axis in axes):
            raise Unsupported(f"the block '{name}' takes sizes its input lacks")
        sizes = {axis: plain(shape[axis]) for axis in axes}
        named = self._named_sizes(node.inputs[0], 0 if self.axis == 1 else len(shape) - 1)
        # sizes the walk carries as trees (``spatial``): passed as their texts, right at
        # any arguments, where a parameter, a loop or a step's argument changes them
        tracked = self._tracked(node.inputs[0]) is not None
        if any(
            type(size) is not int or (not tracked and _reads_parameter(shape[a]))
            for a, size in sizes.items()
        ):
            raise Unsupported(
                f"the block '{name}' takes an input size a parameter changes on an axis the"
                " class does not track"
            )
        if (
            not tracked and self._loop_changed(node.inputs[0], node.origin)
        ) or self._flagged_before(node.inputs[0]):
            raise Unsupported(
                f"the block '{name}' takes an input size that a step before it may change on"
                " an axis the class does not track"
            )
        if not tracked and {axis + 1 for axis in axes} & self._resized_axes(node.inputs[0]):
            raise Unsupported(
                f"the block '{name}' takes an input size that an argument a step before it is"
                " given (a parameter or a loop's item) may change, on an axis the class does"
                " not track"
            )
        if any(made.output in self.hidden for made in self.graph.ancestors(node.inputs)):
            raise Unsupported(
                f"the block '{name}' takes an input size that an integer a call before it"
                " reads changes where no expression shows it"
            )
        numbers = {axis: size for axis, size in sizes.items() if axis not in named}
        if self.depth > TOP and numbers:  # this visit's numbers: ``untracked_sizes`` checks
            key = (step.span, step.func)
            if not set(numbers.values()) & self._loop_sizes:
                self._untracked_visits[key] += 1
            self.untracked[key] = max(self.untracked.get(key, 0), self._untracked_visits[key])
        return {axis: named.get(axis, str(size)) for axis, size in sizes.items()}

    def _row_block(self, step: ast.Call, node: Node) -> bool:
        """Whether the row's block ``step`` calls (``b`` of ``for w, b in cfg``) is built
        by the rolled class as ``b(...)``, named as the IR names it: after the block,
        numbered per block over the instance (``basic1``, ``wide1``, ``basic2``), which
        the class counts (``made[b] = made.get(b, 0) + 1``, the module
        ``f"{b.__name__.lower()}{made[b]}"``). Only an unnamed call in one loop of a
        rolled block's walk, whose block's one class has the block's name; the ids are
        checked here, and that no other name of the instance takes a block's numbering
        by the caller (``rolled_block``)."""
        sub = node.subgraph
        bound = self.env.get(step.func)
        if self.blocks is None or self.loops_around != 1 or step.layer is not None:
            return False
        if sub is None or self.blocks.named(bound.name) != bound.name:
            return False
        if self.class_of(sub) != bound.name:
            return False
        stem = bound.name.lower()
        self._row_counts[stem] += 1
        if node.id != f"{stem}{self._row_counts[stem]}":
            raise Unsupported(
                f"'{step.func}' gives the block '{bound.name}' named '{node.id}', not"
                f" '{stem}{self._row_counts[stem]}': its numbering is not the rows' alone"
            )
        self.row_nodes.add(node.id)
        self.row_counters[step.span] = row_count(self.counter, step.func)
        classes = self.row_classes.setdefault(step.func, [])
        if bound.name not in classes:
            classes.append(bound.name)
        return True

    def _numbered_beside_rows(self, step: ast.Call, node: Node, callee: str) -> None:
        """Where the block has rows of blocks (``_row_block``), an unnamed call of a block
        by name in one loop (``for w, a in cfg: x -> Inner(w, a)``) counted with them
        (``made[Inner] = made.get(Inner, 0) + 1``, the module ``f"inner{made[Inner]}"``):
        the IR numbers each block's modules over the instance, so rows giving ``Inner``
        number these on, which the count alone writes for any rows."""
        if self.blocks is None or self.loops_around != 1 or step.layer is not None:
            return
        if step.func != callee or node.subgraph is None:
            return
        if self.blocks.named(node.subgraph.name) != callee:
            return
        stem = callee.lower()
        self._row_counts[stem] += 1  # also before a rows' loop the first walk finds
        if node.id != f"{stem}{self._row_counts[stem]}":
            # the IR numbers the block's modules over the whole instance: a call outside
            # the loop (before it, or in another loop) took the numbers the loop starts at
            where = "beside the rows' blocks" if self.row_counters else "outside the loop"
            raise Unsupported(
                f"'{step.func}' in the loop builds '{node.id}', not"
                f" '{stem}{self._row_counts[stem]}': the block is also called {where}, which"
                " numbers its modules on"
            )
        self.beside_rows.add(node.id)
        if not self.row_counters:  # no rows (yet: the last walk knows): i + 1 names it
            return
        self.row_counters[step.span] = (
            f"{self.counter}[{callee}] = {self.counter}.get({callee}, 0) + 1"
        )

    def _loop_width_fixed(
        self, step: ast.Call, sub: Graph, model: ast.Model, passed: Mapping[str, str]
    ) -> bool:
        """Whether the width after the inner block is read from the module built, where
        the call passes a loop count of the inner block a value the rolled class computes
        (``Inner(channels, w, k)`` for rows ``(w, k)``) and the inner block's rolled class
        leaves the width its loop makes: at ``k = 0`` it passes its input on, which no
        instance's width says (``w``). ``Unsupported`` where the inner block's class is
        written for its calls' counts (it does not loop). A count written as a number
        builds the instance the call shows."""
        cls = self.class_of(sub)
        rolled = cls in self.loop_widths
        counts = self.loop_widths[cls].counts if rolled else loop_params(model)
        for param in sorted(counts & passed.keys()):
            if not set(re.findall(r"[A-Za-z_]\w*", passed[param])) & self.tr.locals:
                continue
            given = plain(dict(sub.block_args).get(param))
            if isinstance(given, OpValue):
                continue  # an operation-valued parameter: no count
            if not rolled:
                raise Unsupported(
                    f"the class '{cls}' is written for the count {param} = {given} its"
                    f" calls give, not for '{passed[param]}'"
                )
            if not self.loop_widths[cls].stored:  # its class keeps no local of the width
                raise Unsupported(
                    f"the width after '{step.func}' is what its loop over '{param}' leaves"
                    f" ('{passed[param]}' here), which its class does not track"
                )
            self.read_widths.add(cls)
            return True
        return False

    def _sample_axis(self, sub: Graph) -> int:
        """The axis of a sample of ``sub``'s input the walk threads: the channels (0), or
        the last (``in_features`` of a block threading its last axis)."""
        rank = len(sub.input_value.shape or ()) - 1
        return 0 if self.axis == 1 else rank - 1

    def _later_sizes(self, sub: Graph, node: Node) -> list[str]:
        """The width texts of the later inputs whose sizes the block's class takes
        (``AttnUpBlock2D(u_width, s0_width, ...)``), each checked against the IR's."""
        found = self.sizes_of(sub) if self.sizes_of is not None else None
        if found is None or not found[1]:
            return []
        dims, more = found
        if dims != (0,) or any(leaf.axis != 0 for leaf in more):
            raise Unsupported(f"the block '{sub.name}' takes sizes other than its inputs' widths")
        texts = []
        for leaf in more:
            if leaf.input >= len(self.inputs):
                raise Unsupported(f"the block '{sub.name}' takes the size of an unnamed input")
            width = self._width(node.inputs[leaf.input])
            text = self.inputs[leaf.input] or str(width)
            if evaluate(text, self.env) != width:
                raise Unsupported(f"'{text}' is not the IR's width of '{node.inputs[leaf.input]}'")
            texts.append(text)
        return texts

    def _checked(self, arg: ast.Expr, expected: Any, name: str) -> str:
        text = self.tr.text(arg)
        value = plain(evaluate(text, self.env))
        if isinstance(value, OpValue) and not value.is_model:
            # a row's operation (``for w, a in cfg: Inner(w, a)``): the call passes its
            # module class or factory (``_value_text``), which the inner class must take
            passed = module_factory(value.name)
            if passed != expected:  # its class takes a function (torch.exp), or folds it
                raise Unsupported(
                    f"'{text}' gives the operation '{value.name}' for {name}: the call passes"
                    f" {passed or lit(value.name)}, the inner class takes {expected}"
                )
            return text
        if isinstance(value, OpValue) and self.blocks is not None:
            # a row's block (``for w, b in cfg: x -> Inner(w, b)``): the call passes its
            # one class (``Basic``), which the inner class must take as a class
            named = self.blocks.named(value.name)
            if named is None or Model(named) != expected:
                raise Unsupported(
                    f"'{text}' gives the block '{value.name}' for {name}: the inner class"
                    f" takes {expected.name if isinstance(expected, Model) else 'no class'}"
                    f" there, not {named or 'one class'}"
                )
            return text
        if value != expected:
            raise Unsupported(f"'{text}' is not the IR's argument {name}")
        return text

    def _out_size(self, sub: Graph) -> None:
        """``self.out_channels = 4 * planes``: the block's output width, as its class writes
        it, the same for every instance of the class."""
        shape = sub.output_value.shape
        if shape is None or len(shape) < 2:
            raise Unsupported(f"the block '{sub.name}' has no output width")
        width = first_input_terms(sub, shape[1])  # later inputs' sizes: numbers
        text = str(int(width))
        if is_symbolic(width):
            rank = len(sub.input_value.shape or ()) - 1
            inputs = input_names(rank, sub.block_params or ())
            text = to_python(tree_of(width), lambda leaf: _constructor_name(leaf, inputs))
        found = self.out_sizes.setdefault(self.class_of(sub), text)
        if found != text:
            raise Unsupported(f"the instances of '{sub.name}' write their width differently")

    def _inline_width(self, sub: Graph, model: ast.Model, step: ast.Call) -> str | None:
        """A block the network names: its output width in the call's terms
        (``channels + growth``), or None to try the input's width and the arguments."""
        shape = sub.output_value.shape
        if shape is None or len(shape) < 2:
            return None
        width = first_input_terms(sub, shape[self.axis])  # later inputs' sizes: numbers
        if not is_symbolic(width):
            return None
        own = self._sample_axis(sub)
        texts = {p.name: self.tr.text(a) for p, a in zip(model.params, step.args, strict=False)}
        texts.update({k.name: self.tr.text(k.value) for k in step.keywords})

        def name(leaf: Any) -> str:
            if isinstance(leaf, InputSize):
                if leaf.axis != own or leaf.input != 0:
                    raise Unsupported("a width of another input axis")
                return self.size
            if isinstance(leaf, Ref) and leaf.name in texts:
                text = texts[leaf.name]
                return text if _ATOMIC.fullmatch(text) else f"({text})"
            raise Unsupported(f"the width reads '{leaf}'")

        tree = tree_of(width)
        if isinstance(tree, Ref) and tree.name in texts:  # one argument: not an operand
            return texts[tree.name]
        return to_python(tree, name)


def _within(inner: Any, outer: Any) -> bool:
    """Whether the span ``inner`` lies inside ``outer``."""
    start = (inner.line, inner.column) >= (outer.line, outer.column)
    return start and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)


def _makes_module(node: Node) -> bool:
    """A node the rolled class must make (a layer, a block, a named operation)."""
    return emitter(node.op).init is not None or node.layer is not None


# a name, attribute, number or one subscript of them: needs no parentheses as an operand
_ATOMIC = re.compile(r"[\w.]+(\[[\w.]+\])?")


class _Width(int):
    """A block made in a loop, as the walk sees it: only its width (``layer.out_channels``)."""

    @property
    def out_channels(self) -> int:
        return int(self)


def _builds_modules(graph: Graph) -> bool:
    """Whether the instance ``graph`` builds a module (a built-in operation's, or an inner
    block's) that may read its input width."""
    return any(
        node.op in ("block", "repeat") or emitter(node.op).init is not None for node in graph.nodes
    )


def _constructor_name(leaf: Any, inputs: tuple[str, ...]) -> str:
    if isinstance(leaf, InputSize):
        if leaf.axis != 0 or leaf.input != 0:
            raise Unsupported("an output width of another input axis")
        return inputs[0]
    return str(leaf.name)


def _given(spec: OpSpec, step: ast.Call) -> dict[str, ast.Expr]:
    """The step's arguments by parameter, as the compiler binds them: a variadic last
    positional parameter takes every remaining one as a tuple (``permute(2, 1, 3)``)."""
    positional = [p for p in spec.params if not p.keyword_only]
    args = list(step.args)
    given: dict[str, ast.Expr] = {}
    if positional and positional[-1].variadic and len(args) >= len(positional):
        head = len(positional) - 1
        rest = args[head:]
        packed = rest[0]
        if len(rest) > 1 or not isinstance(packed, ast.TupleExpr):
            packed = ast.TupleExpr(tuple(rest), rest[0].span.merge(rest[-1].span))
        given[positional[-1].name] = packed
        args = args[:head]
    for index, arg in enumerate(args):
        if index >= len(positional):
            raise Unsupported(f"'{step.func}' with more arguments than parameters")
        given[positional[index].name] = arg
    given.update({k.name: k.value for k in step.keywords})
    return given


def _written_as_given(site: Site, made: Call, written: Mapping[str, tuple[Any, str]]) -> None:
    """``Unsupported`` where an argument the source writes as an expression of the
    parameters reaches the constructor other than as that text, folded to the calls'
    values: a class built with another value would build another module than the
    source's (``rms_norm(axes=2 * p0)`` was ``nn.RMSNorm((8, 8))``, fuzz seed 36000088,
    until the normalised shape was cut from the input's sizes: ``[-(2 * p0):]``).
    The argument is given another value shown as the same text: a constructor that only
    writes the text reads alike."""
    for name, (value, text) in written.items():
        shown = site.node.args[name]
        # a tuple's items one at a time (``(None, min(p, 8))``), each as its own text
        others = [
            (*shown[:at], _shown(other, str(item)), *shown[at + 1 :])
            for at, item in enumerate(shown if isinstance(shown, tuple) else ())
            if isinstance(item, ShownInt | ShownFloat)
            and (other := perturbed(plain(item))) is not None
        ]
        other = perturbed(value)
        if other is not None:
            others.append(_shown(other, text))
        for changed in others:
            args = {**site.node.args, name: changed}
            try:
                again = module_init(replace(site, node=replace(site.node, args=args)))
            except Exception:  # noqa: BLE001 - the other value is no valid argument: it is read
                again = None
            if again is None or again.text() != made.text():
                raise Unsupported(
                    f"the {name} '{text}' of '{site.node.id}' sets its module other than as "
                    "written (the calls' values folded in)"
                )


def _sizes_in(values: Iterable[Any]) -> Iterator[int]:
    """The whole numbers among ``values`` and the tuples among them (a kernel's)."""
    for value in values:
        if isinstance(value, tuple):
            yield from _sizes_in(value)
        elif type(value) is int:
            yield value


def untracked_sizes(untracked: Mapping[tuple[Span, str], int]) -> None:
    """``Unsupported`` where a loop's module reads an input size the walk does not thread
    (``_Walk.untracked``) and no walk visited it twice: its number is right at the first
    iteration only, as far as the calls show (``Grow(2, 1)``'s ``nn.Linear(4, g)``, which
    ``Grow(2, 2)`` builds again where it needs ``nn.Linear(g, g)``). A walk that saw a
    second iteration read the same number (or it wrote the lines differently) shows the
    loop keeps that size, unless the number is one the loop's modules were given
    (``nn.Linear(4, g)`` at g = 4: the 4 the first iteration made), which shows nothing."""
    for (span, func), visits in untracked.items():
        if visits < 2:
            raise Unsupported(
                f"the '{func}' at {span} in a loop reads an input size the class does not"
                " track, and no call shows the loop keeps it"
            )


def _other_sizes(site: Site, threaded: int, changed: Container[int] | None = None) -> Site:
    """``site`` with its input's sizes other than the ``threaded`` axis changed (only
    those of the axes ``changed``, where given)."""
    shape = site.in_shapes[0]
    other = tuple(
        size
        if axis == threaded
        or not isinstance(size, int)
        or (changed is not None and axis not in changed)
        else size + 1
        for axis, size in enumerate(shape)
    )
    return replace(site, in_shapes=(other, *site.in_shapes[1:]))


def _undoubled(size: str, factor: str) -> str | None:
    """``w`` for ``2 * w`` divided by ``2``, ``c`` for ``c * r * r`` by ``r * r`` (exact
    for whole numbers); None where ``size`` is no such product of one name."""
    for pattern in (rf"{re.escape(factor)} \* (.+)", rf"(.+) \* {re.escape(factor)}"):
        found = re.fullmatch(pattern, size)
        if found is not None and _ATOMIC.fullmatch(found[1]):
            return found[1]
    return None


def _reads_parameter(size: Any) -> bool:
    """Whether the IR's size ``size`` is an expression of a block parameter."""
    return is_symbolic(size) and any(isinstance(leaf, Ref) for leaf in leaves(tree_of(size)))


def _no_parameter_sizes(site: Site, made: Call, shape: tuple[Any, ...], threaded: int) -> None:
    """``Unsupported`` where the module reads a size of its input on an axis the class does
    not thread that a block parameter changes (the IR's tree reads one): the class writes
    that size as the calls' number (``nn.Linear(8, w)``, the 8 the width after
    ``conv_transpose2d(16, kernel=k)``), so built with another ``k`` it would make a module
    of the wrong size (fuzz seed 94000035)."""
    changed = {
        axis for axis, size in enumerate(shape) if axis != threaded and _reads_parameter(size)
    }
    if changed and made != module_init(_other_sizes(site, threaded, changed)):
        raise Unsupported(
            f"the module of '{site.node.id}' reads an input size a parameter changes on an"
            " axis the class does not track"
        )


def perturbed(value: Any) -> Any:
    """Another value of ``value``'s kind (None: no other is tried): what a call with other
    arguments could give."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    return None


def _shown(value: Any, text: str) -> Any:
    """``value`` written as ``text``: a number, or a bool or string a parameter gave
    (``bias=b``), which the class takes as a constructor argument like a number."""
    if text == repr(value):
        return value
    if isinstance(value, bool | str) and text.isidentifier():
        kind = ShownStr if isinstance(value, str) else ShownBool
        return kind(value, lambda: text)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unsupported(f"'{text}' is not a number")
    kind = ShownInt if isinstance(value, int) else ShownFloat
    return kind(value, lambda: text, 0)


def _leafed(value: Any, expr: ast.Expr, tr: Translator) -> Any:
    """An argument the source writes as ``expr`` as symbolic leaves of its texts for
    ``spatial_trees`` (a tuple display item by item, a literal item as its value); None
    for a value no tree holds (a flag, a tuple a name gives)."""
    if isinstance(value, tuple) and isinstance(expr, ast.TupleExpr):
        if len(expr.items) != len(value):
            return None
        items = [_leafed(v, e, tr) for v, e in zip(value, expr.items, strict=True)]
        return None if any(item is None for item in items) else tuple(items)
    if _literal(expr):
        return value
    if type(value) is not int:
        return None
    return symbol(value, Ref(ARGUMENT + tr.text(expr)))


def _shown_items(value: Any, expr: ast.Expr, tr: Translator) -> Any:
    """``value`` written as the source writes ``expr``: a tuple display item by item
    (``nn.AdaptiveMaxPool2d((None, min(p, 8)))``), a literal item as its value."""
    if isinstance(value, tuple) and isinstance(expr, ast.TupleExpr):
        if len(expr.items) != len(value):
            raise Unsupported(f"'{tr.text(expr)}' is not a number")
        return tuple(_shown_items(v, e, tr) for v, e in zip(value, expr.items, strict=True))
    if isinstance(value, tuple) or not _literal(expr):
        return _shown(value, tr.text(expr))
    return value


def check_names(names: list[str], taken: Iterable[str]) -> None:
    """``Unsupported`` when a name the rolled class binds is bound twice, or is one its
    code reads (``RESERVED``) or one of ``taken`` (classes, constants)."""
    clash = set(names) & (RESERVED | set(taken))
    if clash or len(set(names)) != len(names):
        raise Unsupported(f"the names {sorted(clash or names)} clash")


_PASSES = 3  # first walks at most: the texts settle once each step's input text has
_UNSETTLED = "unsettled"  # a key of ``choices``: a first walk found no common text


def roll(
    network: ast.Model, variants: list[tuple[ast.Model, Graph, str]], **options: Any
) -> Rolled:
    """``_roll_at`` threading the channels (axis 1), else the last axis: a network whose
    width is its features (``(seq, features)`` in, an embedding's tokens) keeps a
    constant axis 1. The reason given is the channels' where both fail."""
    try:
        return _roll_at(network, variants, axis=1, **options)
    except Unsupported as error:
        try:
            return _roll_at(network, variants, axis=-1, **options)
        except Unsupported:
            raise error from None


def _roll_at(
    network: ast.Model,
    variants: list[tuple[ast.Model, Graph, str]],
    *,
    axis: int,
    name: str,
    constants: Mapping[str, ast.Expr],
    classes: Mapping[str, str],
    block_models: Mapping[str, ast.Model],
    class_of: Callable[[Graph], str],
    dims_of: Callable[[Graph], tuple[int, ...] | None],
    sizes_of: SizesOf | None = None,
    walk_type: type[_Walk] | None = None,
    looped: LoopedForward | None = None,
    loop_widths: Mapping[str, LoopWidth] | None = None,
    inner_widths: InnerWidths | None = None,
) -> Rolled:
    """The network's class and each variant's entry class; ``variants`` holds each
    variant's model, graph and class text as written on its own. ``walk_type``: the walk
    of ``__init__`` (``network_walk.NetworkWalk``, with the block roller's forms inside
    loops); ``_Walk`` where none is given. ``looped``: the forward written with the
    source's loops where the variants' own forwards differ (``network_forward.py``).
    ``loop_widths``: the rolled block classes whose output width is what a loop leaves
    (``_Walk.loop_widths``)."""
    forward = network.forward
    if forward is None or not network.params or not variants:
        raise Unsupported("a network without parameters")
    params = [p.name for p in network.params]
    loops = _loop_names(forward.body)
    fields = [f.name for f in network.fields]  # the network's constants: locals of __init__
    if any(name in MODEL_TABLE for name in fields):
        raise Unsupported("a network with its own input_shape or input_dtype")
    names = [*params, *loops, *fields]
    check_names(names, [*classes.values(), *constants])
    tr = Translator(frozenset(names), constants, classes)
    tr.mixed = kind_blind(network)  # True is not 1 in their tests
    local_lines = [f"{INDENT * 2}{f.name} = {tr.text(f.value)}" for f in network.fields]
    head = []
    for param in network.params:
        default = f"={tr.text(param.default)}" if param.default is not None else ""
        head.append(f"{param.name}{default}")
    text_of = {variant.name: text for variant, _, text in variants}
    choices: dict[Any, list[str]] = {}
    branches: dict[str, list[str]] = {}
    numbers: dict[Span, set[tuple[str, int, int, int]]] = {}  # unnamed modules in loops
    paths: dict[Span, str] = {}
    counted: dict[Span, Counts] = {}  # those whose names read loop counts: the loops
    # a loop over items (``for w in widths``): its count, where that names a module
    words = {w for _, _, text in variants for w in re.findall(r"\w+", text)}
    indices = loop_indices(forward.body, {*names, *classes.values(), *constants, *RESERVED, *words})
    taken = {*names, *classes.values(), *constants, *words, *indices.values()}
    tr.triangles = triangles(forward.body, taken)  # their running counts name modules
    # a running count of the modules the branches taken made (``n``), named apart too
    tr.branch_counts = (walk_type or _Walk).running_counts(
        forward.body, {*taken, *(t.name for t in tr.triangles)}, tr.triangles
    )
    numbered_after_branch_loops(forward.body, counts=tr.branch_counts)
    indexed: set[Span] = set()
    untracked: dict[tuple[Span, str], int] = {}  # modules reading sizes the walk does not thread

    def walk_variant(
        variant: ast.Model, graph: Graph, strict: bool, found: dict[str, list[str]] | None
    ) -> tuple[_Walk, list[str]]:
        walk = (walk_type or _Walk)(graph, {}, tr, class_of, dims_of, block_models, axis=axis)
        walk.choices, walk.strict = choices, strict
        walk.class_name = name  # the rolled class, as its refusals name it
        walk.number_names = number_names(network)
        walk.numbers, walk.paths = numbers, paths
        walk.counted = counted
        walk.indices, walk.indexed = indices, indexed
        walk.untracked = untracked
        if found is not None:
            walk.branches = found
        walk.sizes_of = sizes_of
        walk.loop_widths = loop_widths or {}
        walk.inner_widths = inner_widths
        return walk, _walk(network, variant, walk)

    for _ in range(_PASSES):  # the first walks: which width texts always hold
        for variant, graph, _ in variants:
            walk_variant(variant, graph, False, None)
        if choices.pop(_UNSETTLED, None) is None:  # a step's texts read earlier choices
            break
    inits: list[str] | None = None
    unnamed: set[str] = set()
    own: list[str] = []  # each variant's class, its forward for any class
    out_sizes: dict[str, str] = {}
    read_widths: set[str] = set()
    entries: dict[str, list[str]] = {}
    envs: list[Mapping[str, Any]] = []  # each variant's values of the network's names
    stages: list[set[str]] = []  # the containers each variant's loops filled
    for variant, graph, _ in variants:
        walk, found = walk_variant(variant, graph, True, branches)
        unnamed.update(walk.unnamed)
        envs.append(walk.env)
        if inits is not None and found != inits:
            raise Unsupported(f"the variant '{variant.name}' builds differently")
        inits = found
        own.append(_any_class(text_of[variant.name], classes[variant.name]))
        stages.append(walk.stages)
        for block, size in walk.out_sizes.items():
            if out_sizes.setdefault(block, size) != size:
                raise Unsupported(f"the block '{block}' writes its width differently")
        read_widths |= walk.read_widths
        base = variant.base
        assert base is not None
        given = [("", a) for a in base.args] + [(f"{k.name}=", k.value) for k in base.keywords]
        entries[variant.name] = [
            f"class {classes[variant.name]}({name}):",
            f"{INDENT}def __init__(self):",
            *_super_call(given, tr),
        ]
    assert inits is not None
    # an operation parameter the variants give differently: applied from the module
    # (``x = self.act(x)``), so their forwards read alike
    written_out, applied = (walk_type or _Walk).applied_operations(
        network,
        [(variant, graph) for variant, graph, _ in variants],
        envs,
        [text.split("\n") for text in own],
        constants,
    )
    own = ["\n".join(lines) for lines in written_out]
    # and with a container of one block applied whole
    texts = [_whole(text, filled) for text, filled in zip(own, stages, strict=True)]
    untracked_sizes(untracked)
    # a body no variant runs has no IR to write it from: the class is written without it
    # and refuses the arguments that run it, as a block's is (``untaken.py``; no phantom
    # variant is lowered)
    dropped: dict[str, list[str]] = {}
    while True:
        try:
            filled = _fill(inits, branches, dropped)
            break
        except Untaken as why:
            if why.key in dropped:
                raise
            dropped[why.key] = _refusal(network, name, why, constants, envs)
    inits = stages_in_order(enumerated(without_empty_branches(filled)))
    stored = _Stored(envs, [*fields, *params], "\n".join([*inits, *texts]))

    def with_loops(one_by_one: bool = False) -> tuple[list[str], list[str]]:
        """Forward with the source's loops; ``one_by_one``: read from the variants'
        forwards with each stage they apply whole applied a child a statement, the
        inner loop then applying it whole again (``stage_apply.py``)."""
        assert looped is not None and forward is not None and inits is not None
        each = [
            (g, children_one_by_one(t, g) if one_by_one else t, e)
            for (_, g, _), t, e in zip(variants, own, envs, strict=True)
        ]
        starred = starred_loops(forward.body)  # forward's self.stack[i]
        used = {s: name for s, name in indices.items() if s in indexed | starred}
        methods, stores = looped(
            network,
            each,
            loops,
            [*fields, *params],
            inits,
            paths,
            counted,
            constants,
            used,
            tr.triangles,
            frozenset(dropped),
            tr.branch_counts,
        )
        return (whole_stages(methods) if one_by_one else methods), stores

    def by_stages(why: Unsupported) -> tuple[list[str], list[str]]:
        """``with_loops`` reading the stages the variants apply whole child by child;
        ``why`` the source's loops could not be written where that fails too."""
        try:
            return with_loops(one_by_one=True)
        except Unsupported:
            raise why from None

    written: tuple[list[str], list[str]] | None = None
    refused: Unsupported | None = None  # why the source's loops could not be written
    if looped is not None and _loops_over(inits, {*fields, *params}):
        # The variants may agree on the count, but a class built with another (an edited
        # entry class, a new variant) must run the modules its __init__ makes.
        try:
            written = with_loops()
        except Unsupported as why:
            refused = why  # the variants' own forward, as where no loop reads a parameter
    if written is not None:
        methods, stores = written
    else:
        try:
            methods = _shared_methods(texts, stored)
            stores = stored.init_lines()
        except Unsupported as differ:  # a loop run a different number of times, perhaps
            if looped is None:
                raise
            try:
                methods, stores = by_stages(refused) if refused else with_loops()
            except Unsupported as why:
                try:
                    methods, stores = by_stages(why)
                except Unsupported as why:  # both reasons: why the loops could not be written
                    raise Unsupported(f"{differ}; with the source's loops, {why}") from None
        else:
            # Forward written out for the count the variants agree on: where it applies
            # the modules of a loop one by one, a class built with more would not apply
            # them all, so the stages are tried child by child before giving up.
            loop = _count_bound(inits, methods, [*fields, *params], envs) if refused else None
            if refused is not None and loop is not None:
                try:
                    methods, stores = by_stages(refused)
                except Unsupported:  # the class refuses another count
                    inits[loop:loop] = _count_check(inits[loop], name, envs, refused)
    missing = [attr for attr in sorted(unnamed) if not _reads("\n".join(methods), attr)]
    if missing:  # the variants' forward names the module otherwise
        raise Unsupported(f"forward does not read the module '{missing[0]}'")
    stores = [*applied, *stores]
    folded = _folded(network, forward.body, params, [*stores, *local_lines], methods, envs)
    refusals = [line for lines in dropped.values() for line in lines]
    stores = [*stores, *_value_checks(folded, name, inits, envs, refusals)]
    inits = keyed_stages(_by_name(inits, "\n".join(methods)), "\n".join(methods))
    init_call = (
        [f"{INDENT * 2}self._init_weights()"] if "_init_weights" in "\n".join(methods) else []
    )
    network_lines = [
        f"class {name}(nn.Module):",
        *wrap(1, "", f"def __init__(self, {', '.join(head)})", tail=":"),
        f"{INDENT * 2}super().__init__()",
        *dict.fromkeys(refusals),
        *boolean_refusals(network, name, envs),
        *tr.table_lines(2),
        *local_lines,
        *stores,
        *inits,
        *init_call,
        *methods,
    ]
    # a parameter refused all but the variants' numbers is no boolean in later tests
    refused_to_numbers = [
        numbers_after(deciding_params(network, key, constants), envs, network)
        for key, lines in dropped.items()
        if lines
    ]
    network_lines = without_kind_tests(network_lines, frozenset().union(*refused_to_numbers))
    said = tuple(  # one note per if, however many of its branches no variant takes
        dict.fromkeys(
            refused_reason(network, key, constants, unit="variant", phantoms=False)
            for key, lines in dropped.items()
            if lines
        )
    )
    return Rolled(network_lines, entries, out_sizes, frozenset(read_widths), said)


def _refusal(
    network: ast.Model,
    name: str,
    why: Untaken,
    constants: Mapping[str, ast.Expr],
    envs: Sequence[Mapping[str, Any]],
) -> list[str]:
    """The lines refusing the arguments that run the body ``why`` marks, which no
    variant runs (``envs``: each variant's values); ``why`` again where they cannot be
    written (the network keeps a class per variant)."""
    params = deciding_params(network, why.key, constants)
    lines = refusal_lines(name, params, envs, "variant", network) if params is not None else None
    if lines is None:
        raise why
    return lines


def _folded(
    network: ast.Model,
    body: tuple[ast.ForwardStmt, ...],
    params: list[str],
    stores: list[str],
    methods: list[str],
    envs: list[Mapping[str, Any]],
) -> dict[str, bool]:
    """The network's parameters and constants whose values forward folds: every variant
    gives the same, forward does not read them from the module (``self.n``), and the
    source's forward reads them other than as an argument of a call that makes a module
    (``dense(width)``, which ``__init__`` reads): a loop's count written out
    (``self.fc0(x)``, ``self.fc1(x)``), a number (``x * 2``), a branch taken; each with
    whether forward only applies it (an operation: ``F.relu(x)``). A constant is checked
    itself (``half = ch[0] // 2``: ``half``, not all of ``ch``), where every variant gives
    it alike; else the names it reads are."""
    forward = "\n".join(methods)
    read = set(re.findall(r"\bself\.(\w+)", forward))
    from_module: set[str] = set()  # the names forward reads as self.<attr>
    for line in stores:
        store = re.fullmatch(r" *self\.(\w+) = (.+)", line)
        if store is not None and store[1] in read:
            from_module |= set(re.findall(r"\w+", store[2]))
    called: set[str] = set()  # the names forward applies (``down0(h)``, ``-> act()``)
    found = _forward_reads(body, called)

    def folds(name: str) -> bool:
        if name in from_module:
            return False
        return name in found or (name in called and _applied_in_forward(envs[0].get(name)))

    def alike(name: str) -> bool:
        return all(name in env and _same(env[name], envs[0][name]) for env in envs)

    checked = [f.name for f in network.fields if folds(f.name) and alike(f.name)]
    for _ in network.fields:  # a constant not checked: the names it reads or applies
        for f in network.fields:
            if f.name in checked or not folds(f.name):
                continue
            if f.name in found:
                found |= _forward_reads(f.value, set())
            else:
                called |= _forward_reads(f.value, set())
    checked += [p for p in params if folds(p) and alike(p)]
    return {name: name not in found for name in checked}


def _same(a: Any, b: Any) -> bool:
    """Whether two variants' values of a parameter are the same (of the same type)."""
    return type(a) is type(b) and a == b


def _applied_in_forward(value: Any) -> bool:
    """Whether a value forward applies is folded into it: an operation (``F.relu(x)``;
    a network's values hold its module class, ``"nn.ReLU"``), not a model, whose
    instance ``__init__`` makes."""
    if isinstance(value, list | tuple):
        return any(_applied_in_forward(v) for v in value)
    return isinstance(value, str) or (isinstance(value, OpValue) and not value.is_model)


def _forward_reads(node: Any, called: set[str]) -> set[str]:
    """The names ``node`` (of a network's forward) reads where a forward written out for
    the variants folds their values: all but the arguments of a call that makes a module
    (a layer, a block), which only ``__init__`` reads. The names it applies (a call's or
    a suffix's: ``down0(h)``, ``.act``) go to ``called``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, tuple):
        return {name for item in node for name in _forward_reads(item, called)}
    if not is_record(node) or isinstance(node, Span):
        return set()
    skipped: set[str] = set()
    if isinstance(node, ast.Call | ast.Suffix):
        applied = node.func if isinstance(node, ast.Call) else node.name
        called.add(applied.partition(".")[0])
        if isinstance(node, ast.Call) and _module_call(node):
            skipped = {"args", "keywords"}
    found: set[str] = set()
    for f in fields(node):
        if f.name not in skipped:
            found |= _forward_reads(getattr(node, f.name), called)
    return found


def _module_call(call: ast.Call) -> bool:
    """Whether the source's ``call`` makes a module (its arguments are ``__init__``'s): a
    layer, or what is no operation (a block, a parameter holding one)."""
    try:
        spec = lookup(call.func)
    except Exception:  # no operation: a block or a parameter
        return True
    if spec is None:
        return True
    return emitter(spec.name).init is not None


def _value_checks(
    folded: Mapping[str, bool],
    network: str,
    inits: list[str],
    envs: list[Mapping[str, Any]],
    refusals: Sequence[str] = (),
) -> list[str]:
    """Lines of ``__init__`` that refuse a value of each ``folded`` parameter other than
    the variants', for which forward is written out (``if m != 2: raise ValueError(...)``),
    a class built by hand with another would silently compute the variants' forward.
    One the loop check already refuses is left out; an operation forward applies is
    compared with its module class (``if act is not nn.ReLU``). Unsupported where the
    value has no Python literal. A test ``refusals`` (of a body no variant runs) already
    makes is not made twice."""
    out: list[str] = []
    written = "\n".join(inits)
    refused = "\n".join(refusals)
    for name, applied in folded.items():
        if re.search(rf"^ *if (?:len\()?{name}\)? != \d+:", written, re.M):
            continue  # the loop's count check
        value = envs[0][name]
        if applied and isinstance(value, str) and re.fullmatch(r"[\w.]+", value):
            test, shown = f"{name} is not {value}", value
        elif isinstance(value, bool | ShownBool):
            test, shown = (f"not {name}" if value else name), repr(bool(value))
        elif differs(value):
            # True is not 1 in the language (``if mode == 1:`` sends it elsewhere), but
            # Python's ``True != 1`` is False: refuse that boolean too
            shown = _plain(value)
            test = refusing_text(name, [value], [shown])  # m != 1 or m is True
        elif isinstance(value, int | float | str):
            shown = _plain(value)
            test = f"{name} != {shown}"
        elif isinstance(value, list | tuple) and all(is_number(v) for v in value):
            shown = f"[{', '.join(_plain(v) for v in value)}]"
            test = f"list({name}) != {shown}"
        else:
            raise Unsupported(
                f"forward is written out for the variants' '{name}', which the class cannot check"
            )
        if re.search(rf"^ *if {re.escape(test)}:", refused, re.M):
            continue  # the refusal of an untaken body makes the same test
        out += refusal(
            network, test, f"for {name} == {shown}", "forward is written out for this value", name
        )
    return out


def _plain(value: int | float | str) -> str:
    """``value`` as a Python literal, a shown one (``ShownInt``, which ``repr`` writes by
    its name) by its value."""
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, int):
        return repr(int(value))
    if not math.isfinite(value):
        raise Unsupported(f"a value that is not finite ({value})")
    return repr(float(value))


def _loops_over(inits: list[str], names: set[str]) -> bool:
    """Whether ``__init__`` runs a loop whose count reads one of ``names`` (a network
    parameter or constant: ``for i in range(n):``, ``for i, w in enumerate(widths):``)."""
    for line in inits:
        head = line.strip()
        if head.startswith("for ") and names & set(re.findall(r"\w+", head.partition(" in ")[2])):
            return True
    return False


def _count_bound(
    inits: list[str], methods: list[str], names: list[str], envs: list[Mapping[str, Any]]
) -> int | None:
    """The index in ``__init__`` of the loop (``for i in range(n):``) whose modules a
    forward written out for the variants' count reads one by one (``self.layer0(x)``,
    ``self.downs1[0]``), where a class built with another count (an edited entry class)
    makes others: more, which that forward would silently never apply. None where every such module is
    applied through a container filled whole (``self.features(x)``, ``self.layer1(x)``),
    or where the count cannot grow (``zip(layers, [1, 2, 2, 2])``, four in every variant).
    ``names``: the network's parameters and constants; a loop reading the target of a
    loop that reads them (``for j in range(n)`` in ``for i, (n, s) in ...``) counts too."""
    forward = "\n".join(methods)
    read = set(re.findall(r"\bself\.(\w+)", forward))
    targets: set[str] = set()  # of the loops reading them: they follow from them
    for index, line in enumerate(inits):
        head = re.fullmatch(r"( *)for (.+) in (.+):", line)
        words = set(re.findall(r"\w+", head[3])) if head else set()
        if head is None or not (set(names) | targets) & words:
            continue
        targets |= set(re.findall(r"\w+", head[2]))
        counts = [(_count(head[3], env), _count(head[3], _grown(env, names))) for env in envs]
        if not targets & words and all(c is not None and c == g for c, g in counts):
            continue  # bounded by a list written out
        body = list(takewhile(partial(_under, head[1]), inits[index + 1 :]))
        made = "\n".join(body)
        kept = "\n".join(inits[index + 1 + len(body) :])  # a container filled, kept after
        own = _templates(made)  # each iteration's own module: setattr(self, f"layer{i}", ...)
        filled = re.findall(r"self\.(\w+)\.(?:append|add_module|extend)\(", made)
        for local in re.findall(r"^ *(\w+)\.(?:append|add_module|extend)\(", made, re.M):
            filled += re.findall(rf"^ *self\.(\w+) = {local}$", kept, re.M)
            filled += _templates(kept, local)
        one_by_one = (
            attr
            for attr in read
            if any(re.fullmatch(pattern, attr) for pattern in own)
            or (
                any(re.fullmatch(pattern, attr) for pattern in filled)
                and re.search(rf"\bself\.{attr}(?:\[|\.\w)", forward)
            )
        )
        if next(one_by_one, None) is not None:
            return index
    return None


def _count_check(
    header: str, network: str, envs: list[Mapping[str, Any]], why: Unsupported
) -> list[str]:
    """The lines before the loop ``header`` of ``__init__`` (``for i, n in
    enumerate(layers):``) that refuse a count other than the variants', for which forward
    is written out (the source's loops could not be written: ``why``): ``if len(layers) !=
    2: raise ValueError(...)``. Unsupported where the count is no expression of the
    network's values alone, or the variants' counts differ."""
    head = re.fullmatch(r"( *)for .+ in (.+):", header)
    assert head is not None
    iterable = head[2]
    counts = {_count(iterable, env) for env in envs}
    count = counts.pop() if len(counts) == 1 else None
    if count is None or head[1] != INDENT * 2:
        raise Unsupported(
            f"forward would apply the modules of '{header.strip()[:-1]}' at the variants'"
            f" count only; with the source's loops, {why}"
        )
    text = _count_text(iterable)
    said, comment = f"for {text} == {count}", "forward is written out for this count"
    return refusal(network, f"{text} != {count}", said, comment, text)


def _count_text(iterable: str) -> str:
    """How many items ``iterable`` (Python) gives, as Python: ``n`` of ``range(n)``,
    ``len(layers)`` of ``enumerate(layers)``."""
    try:
        tree = pyast.parse(iterable, mode="eval").body
    except SyntaxError:
        return f"len({iterable})"
    if isinstance(tree, pyast.Call) and isinstance(tree.func, pyast.Name):
        args = [pyast.unparse(arg) for arg in tree.args]
        if tree.func.id == "range" and len(args) == 1 and not tree.keywords:
            return args[0]
        if tree.func.id == "enumerate" and len(args) in (1, 2) and not tree.keywords:
            return _count_text(args[0])  # a start shifts the count, not the number of items
        if tree.func.id == "zip" and args:  # a zip has no ``len``: its shortest input
            counts = [_count_text(arg) for arg in args]
            return counts[0] if len(counts) == 1 else f"min({', '.join(counts)})"
    if isinstance(tree, pyast.List | pyast.Tuple) and not any(
        isinstance(item, pyast.Starred) for item in tree.elts
    ):
        return str(len(tree.elts))
    return f"len({iterable})"


def _under(pad: str, line: str) -> bool:
    """Whether ``line`` is in the body of a loop whose header ``pad`` indents."""
    return line.startswith(f"{pad} ")


def _templates(lines: str, value: str = "") -> list[str]:
    """Each module name ``lines`` set with a template (``setattr(self, f"layer{i + 1}",
    stage)``, of ``value`` where given) as a pattern of the names it gives
    (``layer\\d+``)."""
    given = rf", {re.escape(value)}\)$" if value else ""
    return [
        r"\d+".join(map(re.escape, re.split(r"\{[^}]*\}", template)))
        for template in re.findall(
            rf'(?:setattr\(self, |self\.add_module\()f"([^"]+)"{given}', lines, re.M
        )
    ]


def _count(iterable: str, env: Mapping[str, Any]) -> int | None:
    """How many items the loop's ``iterable`` gives with ``env``'s values; None where it
    does not evaluate with them alone."""
    try:
        return len(list(evaluate(iterable, env)))
    except (Unsupported, TypeError):
        return None


def _grown(env: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """``env`` with each of ``names`` that is a count or a list larger."""
    out = dict(env)
    for name in names:
        value = env.get(name)
        if type(value) is int:
            out[name] = value + 3
        elif isinstance(value, list | tuple):
            out[name] = type(value)([*value, *value])
    return out


def number_splits(node_id: str) -> list[tuple[str, int]]:
    """Each way the IR could have numbered ``node_id``: a stem and the count after it,
    which never starts with a zero (``unit01``: ``unit0`` and 1, a block ``Unit0``'s
    first call; ``dense11``: ``dense`` and 11 or ``dense1`` and 1), the longest count
    first."""
    return [
        (node_id[:at], int(node_id[at:]))
        for at in range(1, len(node_id))
        if node_id[at:].isdecimal() and node_id[at] != "0" and not node_id[:at].isdecimal()
    ]


def numbered_stem(node: Node, step: ast.Call) -> tuple[str, int] | None:
    """``node``'s id as the IR numbered it (``builder.fresh``): the stem, then the count.
    The stem is what ``step`` makes (the op's name, ``relu6``) or calls (a block's name
    lower-cased, ``unit0``, or the model-valued parameter that gives it), so a stem
    ending in a digit keeps it (``unit01``: ``unit0`` and 1, not ``unit`` and 1); None
    where the id is not numbered."""
    splits = number_splits(node.id)
    stems = {node.op, step.func, step.func.lower()}
    return next((s for s in splits if s[0] in stems), splits[0] if splits else None)


def _reads(forward: str, attr: str) -> bool:
    """Whether ``forward`` applies the unnamed module ``attr`` (``conv2d3``): by its
    name, or in a loop by its numbered name (``getattr(self, f"conv2d{i + 2}")``, which
    the loop's writer checked against each iteration's node; ``unit01``, a block
    ``Unit0``'s, as ``f"unit0{i + 1}"``); a buffer (``buffer1``) by reading it, not a
    call (``self.buffer1.expand(...)``)."""
    if re.search(rf"\bself\.{attr}\b(?!\s*=[^=])", forward):
        return True
    return any(f'getattr(self, f"{stem}{{' in forward for stem, _ in number_splits(attr))


def _walk(network: ast.Model, variant: ast.Model, walk: _Walk) -> list[str]:
    """One variant's walk (``walk``, made with the network's shared state): the
    ``__init__`` lines it writes."""
    base = variant.base
    assert base is not None and network.forward is not None
    if walk.graph.tied or walk.graph.block_ops:
        raise Unsupported("a variant that ties weights")
    env = _arguments(network, base, walk.tr)
    for field in network.fields:
        env[field.name] = evaluate(walk.tr.text(field.value), env)
    walk.env.maps[0].update(env)
    walk.widths = {}  # a network threads several tensors outside its loops
    if network.forward.params:  # several inputs: the first is threaded first
        walk.tensor = network.forward.param
    walk.later = tuple(p.name for p in network.forward.params[1:])
    walk.network_statements = network.forward.body
    repeating = repeating_name(network.forward.body)
    if repeating is not None:
        raise Unsupported(repeating)
    found = walk.body(network.forward.body, TOP)
    left = [n for n in walk.pending if emitter(n.op).init is not None or n.layer]
    if left:
        raise Unsupported(f"the layer '{left[0].id}' is not made by the rolled class")
    return found


def _arguments(network: ast.Model, base: ast.Call, tr: Translator) -> dict[str, Any]:
    """The variant's values of the network's parameters, as the rolled class receives them."""
    models = {cls: Model(cls) for cls in tr.classes.values()}
    env: dict[str, Any] = {}
    names = [p.name for p in network.params]
    if len(base.args) > len(names):
        raise Unsupported("a variant with more arguments than parameters")
    for name, arg in zip(names, base.args, strict=False):
        env[name] = evaluate(tr.text(arg), models)
    for keyword in base.keywords:
        env[keyword.name] = evaluate(tr.text(keyword.value), models)
    for param in network.params:
        if param.name not in env:
            if param.default is None:
                raise Unsupported(f"the parameter '{param.name}' has no value")
            env[param.name] = evaluate(tr.text(param.default), models)
    return env


def _whole(text: str, stages: set[str]) -> str:
    """A container of one block is applied as ``self.layer1[0](x)``: as the container,
    which another variant's forward applies whole, ``self.layer1(x)``. Not one whose
    children forward applies one by one (``self.downs0[1](x)`` after a ``relu``)."""
    for stage in sorted(stages):
        if re.search(rf"self\.{re.escape(stage)}\[[1-9]", text) is None:
            text = text.replace(f"self.{stage}[0](", f"self.{stage}(")
    return text


def stages_in_order(inits: list[str]) -> list[str]:
    """A loop filling a container (``stage = nn.Sequential()``, the loop, ``self.layers =
    stage``) whose body makes other modules too (``batchnorm{i + 1}``): the classes of one
    call register the container where its first child is, before the first iteration's
    other modules, so it is made before the loop (``self.layers = nn.Sequential()``, filled
    by ``self.layers.append(...)``) and keeps the state dict's order. Where the body makes
    another module before the container's first child, no one place writes that order."""
    out = list(inits)
    dropped: set[int] = set()  # the bindings after their loops, now made before them
    for index, line in enumerate(inits):
        made = re.fullmatch(rf"( *){STAGE} = nn\.Sequential\(\)", line)
        pad = made[1] if made is not None else ""
        following = inits[index + 1] if index + 1 < len(inits) else ""
        if made is None or not following.startswith(f"{pad}for "):
            continue
        end = next(
            (
                later
                for later in range(index + 2, len(inits))
                if inits[later].strip() and not inits[later].startswith(pad + INDENT)
            ),
            len(inits),
        )
        bound = inits[end] if end < len(inits) else ""
        if not bound.endswith((f" = {STAGE}", f", {STAGE})", f"({STAGE})")):
            continue
        registers = [b for b in inits[index + 2 : end] if _registers(b)]
        if all(f"{STAGE}." in b for b in registers):
            continue  # the container's children only: it may be bound after them
        if f"{STAGE}." not in registers[0]:
            named = re.search(rf'self\.(\w+) = {STAGE}|setattr\(self, f?"([^"]+)"', bound)
            container = (named[1] or named[2]) if named is not None else bound.strip()
            raise Unsupported(f"a module made in a loop before the first child of '{container}'")
        simple = re.fullmatch(rf"{pad}(self\.\w+) = {STAGE}", bound)
        if simple is not None:  # self.layers = nn.Sequential(), filled as self.layers
            out[index] = f"{pad}{simple[1]} = nn.Sequential()"
            for at in range(index + 2, end):
                out[at] = re.sub(rf"(?<![\w.]){STAGE}\.", f"{simple[1]}.", out[at])
            dropped.add(end)
        else:  # setattr(self, f"...", stage) or self.stages.append(stage): bound first
            out[index + 1 : end + 1] = [bound, *inits[index + 1 : end]]
    return [line for at, line in enumerate(out) if at not in dropped]


def _registers(line: str) -> bool:
    """Whether a line of ``__init__`` registers a module (on ``self`` or a container)."""
    text = line.strip()
    return (
        text.startswith(("self.", "setattr(self", f"{STAGE}."))
        and ("nn." in text or "(" in text)
        and not re.match(r"self\.\w+ = [\w.]+$", text)  # self.n = n: a stored value
    )


def keyed_stages(inits: list[str], forward: str) -> list[str]:
    """A container that forward indexes by a key (``self.layers[f"l1_{i + 1}"]``) is an
    ``nn.ModuleDict``, as the classes of one call write it: made before the loop
    (``self.layers = nn.Sequential()``) or by it (``stage = ...``, then ``self.layers =
    stage``), it must be filled by name (``add_module(f"l1_{i + 1}", ...)``)."""
    out = list(inits)
    for index, line in enumerate(inits):
        if not line.endswith(" = nn.Sequential()"):
            continue
        attr, uses = _container_uses(inits, index)
        if attr is None or f'self.{attr}[f"' not in forward:
            continue
        if not all(".add_module(" in use for use in uses):
            raise Unsupported(f"the container '{attr}' is filled by position and by name")
        if not _first_made(inits[index + 1 :], uses[0]):  # the state dict's order
            raise Unsupported(f"a module made before the first child of '{attr}'")
        out[index] = line.replace("nn.Sequential()", "nn.ModuleDict()")
    return out


def _first_made(lines: list[str], child: str) -> bool:
    """Whether ``child`` makes the first module after the container: the classes of one
    call make the container where its first child is, so no module may come between."""
    for line in lines:
        if line == child:
            return True
        if "nn." in line or "setattr(" in line or "self." in line:
            return False
    return False


def _container_uses(inits: list[str], index: int) -> tuple[str | None, list[str]]:
    """The attribute the container made at ``inits[index]`` becomes (``layers`` for
    ``self.layers = nn.Sequential()``, or for ``stage = nn.Sequential()`` the ``self.layers
    = stage`` after its loop), and the lines that use it."""
    made = inits[index].strip().removesuffix(" = nn.Sequential()")
    if made.startswith("self."):
        attr = made.removeprefix("self.")
        return attr, [u for u in inits if u.strip().startswith(f"self.{attr}.")]
    if made != STAGE:
        return None, []
    for later, line in enumerate(inits[index + 1 :], index + 1):
        bound = re.fullmatch(rf" *self\.(\w+) = {STAGE}", line)
        if bound is not None:
            return bound[1], [u for u in inits[index + 1 : later] if f"{STAGE}." in u]
    return None, []


def _by_name(inits: list[str], forward: str) -> list[str]:
    """A container filled only by name (``add_module("linear_1", ...)``) that forward
    never applies whole is an ``nn.ModuleDict``, as the unrolled class writes it."""
    out = list(inits)
    for index, line in enumerate(inits):
        found = re.fullmatch(r"( *)self\.(\w+) = nn\.Sequential\(\)", line)
        if found is None or f"self.{found[2]}(" in forward:
            continue
        uses = [other for other in inits if f"self.{found[2]}." in other]
        if uses and all(u.lstrip().startswith(f"self.{found[2]}.add_module(") for u in uses):
            out[index] = f"{found[1]}self.{found[2]} = nn.ModuleDict()"
    return out


def _any_class(text: str, cls: str) -> str:
    """A variant's forward as the network's: its dtype check names the instance's class
    (``f"{type(self).__name__} expects float32 input, ..."``), not the variant's."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        general = line.replace(f'f"{cls} expects ', 'f"{type(self).__name__} expects ')
        if general != line and len(general) > LINE_LIMIT:
            raise Unsupported("a dtype check too long to write for any class")
        lines[index] = general
    return "\n".join(lines)


class _Stored:
    """The network's values a shared forward reads from the module where the variants'
    forwards differ in a number (``torch.arange(self.half_, ...)``, ``freq / self.half_``:
    112 in one variant, 16 in another): a local of ``__init__`` or a parameter whose value
    is that number in every variant, stored by the constructor (``self.half_ = half``)."""

    def __init__(self, envs: list[Mapping[str, Any]], names: list[str], taken: str) -> None:
        self.envs = envs
        self.names = names  # the candidates, in the source's order: locals, then parameters
        self.attrs = attribute_namespace()  # not an nn.Module attribute (``half``)
        self.attrs.claim(re.findall(r"self\.(\w+)", taken))
        self.stored: dict[str, str] = {}  # name -> attribute, in first use

    def line(self, lines: list[str]) -> str | None:
        """``lines`` (one per variant, comments left out) as one line reading the numbers
        that differ from the module; None when they differ otherwise."""
        pieces = [_NUMBER.split(line) for line in lines]
        first = pieces[0]
        if len(self.envs) != len(lines) or any(len(p) != len(first) for p in pieces):
            return None
        out: list[str] = []
        for index, piece in enumerate(first):
            seen = [p[index] for p in pieces]
            if len(set(seen)) == 1:
                out.append(piece)
            elif index % 2 == 0:  # text around the numbers
                return None
            else:
                name = self._name([int(n) for n in seen])
                if name is None:
                    return None
                out.append(f"self.{self.stored.setdefault(name, self.attrs.allocate(name))}")
        return "".join(out)

    def _name(self, numbers: list[int]) -> str | None:
        for name in self.names:
            values = [env.get(name) for env in self.envs]
            if all(type(v) is int and v == n for v, n in zip(values, numbers, strict=True)):
                return name
        return None

    def init_lines(self) -> list[str]:
        return [f"{INDENT * 2}self.{attr} = {name}" for name, attr in self.stored.items()]


# a whole integer of a line of code (not part of a name, a float or an exponent)
_NUMBER = re.compile(r"(?<![\w.])(?<![eE][-+])(\d+)(?![\w.])")


def _shared_methods(texts: list[str], stored: _Stored | None = None) -> list[str]:
    """The variants' ``_init_weights`` and ``forward``, which must read alike; a shape
    comment that differs between them is left out, and a number that differs is read
    from the module where ``stored`` finds the value that gives it."""
    parts = []
    for text in texts:
        lines = text.split("\n")
        start = next(
            (i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def _init_weights")),
            None,
        )
        if start is None:
            start = next(
                i for i, line in enumerate(lines) if line.startswith(f"{INDENT}def forward")
            )
        parts.append(lines[start:])
    first = parts[0]
    out = [""]
    for index, line in enumerate(first):
        seen = {p[index] if index < len(p) else None for p in parts}
        if len(seen) == 1:
            out.append(line)
            continue
        if None in seen or any(len(p) != len(first) for p in parts):
            raise Unsupported("the variants' forward methods differ")
        bare = [p[index].split("  # ")[0] for p in parts]
        read = bare[0] if len(set(bare)) == 1 else None
        if read is None and stored is not None:
            read = stored.line(bare)
        if read is None:
            raise Unsupported("the variants' forward methods differ")
        out.append(read)
    return out


def numbered_after_branch_loops(
    body: tuple[ast.ForwardStmt, ...],
    whole: tuple[ast.ForwardStmt, ...] | None = None,
    counts: Sequence[BranchCount] = (),
) -> None:
    """``Unsupported`` where an unnamed module comes after a loop in an if's branch
    (outside loops) that makes modules of its operation: the IR numbers it on from the
    loop's iterations, which only the branch taken runs (``if deep: for i in range(n):
    x -> dense(w)``, then ``x -> dense(w)``: ``dense{n + 1}`` or ``dense2``), unless a
    running count adds that loop's modules (``BranchCount``, an if in the loop adding
    in its branches).
    Another branch's modules (``else: x -> dense(w)``) are numbered apart. ``whole``:
    the forward's body, searched for the later modules (``body`` itself at the top).
    ``counts``: a block's running counts, which number on from the loops whose
    iterations they count (``block_walk.branch_counts``)."""
    whole = body if whole is None else whole
    steps = [
        item
        for item in syntax_items(whole)
        if isinstance(item, ast.Call)
        and item.layer is None
        and (spec := lookup(item.func)) is not None
        and emitter(spec.name).init is not None
    ]
    for stmt in body:
        if not isinstance(stmt, ast.If):
            continue
        for branch in stmt.branches:
            numbered_after_branch_loops(branch.body, whole, counts)  # an if in the branch
            for loop in (s for s in branch.body if isinstance(s, ast.For)):
                counted = {c.op for c in counts if c.counts_in(loop)}
                later = next(
                    (
                        step
                        for step in steps
                        if _ends_before(loop.span, step.span)
                        and (_ends_before(stmt.span, step.span) or _within(step.span, branch.span))
                        and _operation_made(loop, step.func)
                        and not (counted and _operation_counted(step.func, counted))
                    ),
                    None,
                )
                if later is not None:
                    raise Unsupported(
                        f"an unnamed '{later.func}' module at {later.span} numbered on from"
                        f" the loop at {loop.span} in an if's branch: name it with 'as'"
                    )


def _operation_counted(func: str, ops: set[str]) -> bool:
    """Whether ``func`` calls one of the operations ``ops`` (a running count's)."""
    spec = lookup(func)
    return (spec.name if spec is not None else func) in ops


def _ends_before(earlier: Span, later: Span) -> bool:
    """Whether ``earlier`` ends before ``later`` starts."""
    return (earlier.end_line, earlier.end_column) <= (later.line, later.column)


def _operation_made(node: object, func: str) -> bool:
    """Whether ``node`` makes a node of ``func``'s operation: a call or a suffix
    (``.relu``), named or not (the IR numbers them all alike)."""
    spec = lookup(func)
    op = spec.name if spec is not None else func
    for item in syntax_items(node):
        if isinstance(item, ast.Call | ast.Suffix):
            name = item.func if isinstance(item, ast.Call) else item.name
            found = lookup(name)
            if (found.name if found is not None else name) == op:
                return True
    return False
