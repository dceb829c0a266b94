"""The Aurane AST: one frozen, slotted record per construct, tuples for children, span last.

Expressions are shared by every context (constants, operation arguments, configuration
fields). Forward bodies use ``Call`` for operation applications, with suffixes attached
(``conv2d(16).relu`` is ``Call("conv2d", ..., suffixes=(Suffix("relu"),))``).
"""

from __future__ import annotations

from typing import TypeAlias

from aurane.records import record
from aurane.source import Span

# ---------------------------------------------------------------- expressions


@record(frozen=True, slots=True)
class Number:
    value: int | float
    text: str  # as written, for the formatter
    span: Span


@record(frozen=True, slots=True)
class String:
    value: str
    span: Span


@record(frozen=True, slots=True)
class Bool:
    value: bool
    span: Span


@record(frozen=True, slots=True)
class NoneLit:
    span: Span


@record(frozen=True, slots=True)
class Name:
    """A bare or dotted name; ``id`` is the full dotted text (``torchvision.datasets.FakeData``)."""

    id: str
    span: Span


@record(frozen=True, slots=True)
class TupleExpr:
    items: tuple[Expr, ...]
    span: Span


@record(frozen=True, slots=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span


@record(frozen=True, slots=True)
class DictExpr:
    """``{input_ids: (seq,), attention_mask: (seq,)}``: keys are names (``input_shape`` and
    ``input_dtype`` of a model with several inputs, keyed by its forward's parameters)."""

    keys: tuple[Name, ...]
    values: tuple[Expr, ...]
    span: Span


@record(frozen=True, slots=True)
class Keyword:
    name: str
    name_span: Span
    value: Expr
    span: Span


@record(frozen=True, slots=True)
class Suffix:
    """``.relu``, ``.leaky_relu(0.2)``, ``.softmax(dim=-1)``, ``.residual``."""

    name: str
    name_span: Span
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]
    has_parens: bool
    span: Span


@record(frozen=True, slots=True)
class Call:
    """``func(args, key=value).suffix...``; ``func`` may be dotted; span covers suffixes.

    ``layer`` is the path after ``as`` as written, with each template hole ``{expr}`` shown
    as ``{}`` (its expression in ``layer_holes``, in order) and quoted segments kept quoted:
    ``as layer{i + 1}."block-0".*`` is ``layer{}."block-0".*``. Constant resolution fills
    the holes and drops the quotes. ``splice``: ``-> *Block(...)``, the block's layers go
    into the enclosing container instead of one child holding them.
    """

    func: str
    func_span: Span
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]
    suffixes: tuple[Suffix, ...]
    span: Span
    layer: str | None = None  # ``... as conv1`` / ``as layer1.0.conv1``: the attribute path
    layer_span: Span | None = None
    layer_holes: tuple[Expr, ...] = ()
    splice: bool = False


@record(frozen=True, slots=True)
class BinOp:
    op: str  # one of + - * / // % **
    left: Expr
    right: Expr
    span: Span


@record(frozen=True, slots=True)
class UnaryOp:
    op: str  # "-" or "+"
    operand: Expr
    span: Span


@record(frozen=True, slots=True)
class Chain:
    """``source -> step -> step``: each step is a Call whose input is the previous value."""

    source: Expr
    steps: tuple[Call, ...]
    span: Span
    layer: str | None = None  # ``(x -> a -> b) as downsample``: one nn.Sequential
    layer_span: Span | None = None
    layer_holes: tuple[Expr, ...] = ()  # as in ``Call``


@record(frozen=True, slots=True)
class Compare:
    """``a == b``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in`` (not chained)."""

    op: str
    left: Expr
    right: Expr
    span: Span


@record(frozen=True, slots=True)
class BoolOp:
    """``a and b`` / ``a or b`` (Python's short-circuit and result)."""

    op: str
    left: Expr
    right: Expr
    span: Span


@record(frozen=True, slots=True)
class Not:
    operand: Expr
    span: Span


@record(frozen=True, slots=True)
class IfExp:
    """``body if test else orelse``."""

    body: Expr
    test: Expr
    orelse: Expr
    span: Span


@record(frozen=True, slots=True)
class Subscript:
    """``cfg[i]``, ``cfg[i][0]``, ``x.shape[1]``: an item of a constant (compile time)."""

    value: Expr
    index: Expr
    span: Span


@record(frozen=True, slots=True)
class OpRef:
    """An operation or model used as a value (``act = relu``, ``ResNet(Bottleneck, ...)``).

    Only constant resolution makes it (the parser reads ``relu`` as a ``Name``).
    """

    name: str
    span: Span
    is_model: bool = False


Expr: TypeAlias = (
    Number
    | String
    | Bool
    | NoneLit
    | Name
    | TupleExpr
    | ListExpr
    | DictExpr
    | Call
    | BinOp
    | UnaryOp
    | Chain
    | Compare
    | BoolOp
    | Not
    | IfExp
    | Subscript
    | OpRef
)

# ---------------------------------------------------------------- statements


@record(frozen=True, slots=True)
class Origin:
    """Where an unrolled statement came from: one loop iteration or one chosen branch.

    ``text`` reads ``in iteration i = 2 of the loop at 12:9`` or ``in the branch 'elif
    width > 64' at 14:9``; ``span`` is the loop's or branch's header.
    """

    kind: str  # "loop" or "branch"
    text: str
    span: Span
    index: int = 0  # the iteration (0 for a branch)
    header: str = ""  # the loop's header as written, shortened: ``for i in range(4)``
    count: int = 1  # how many iterations the loop has


@record(frozen=True, slots=True)
class Assign:
    """``name = value``: a constant or field in blocks, a tensor binding in forward bodies.

    ``a, b = chunk(x, 2)`` (forward bodies only) binds several names: ``targets`` lists
    every (name, span) then, and ``target`` is the first; it is empty for one name.
    """

    target: str
    target_span: Span
    value: Expr
    span: Span
    targets: tuple[tuple[str, Span], ...] = ()
    origin: tuple[Origin, ...] = ()  # set by unrolling: the loops and branches it came from


@record(frozen=True, slots=True)
class ChainStmt:
    """A bare chain in a forward body: ``x -> a -> b`` rebinds ``x`` (when the source is a name)."""

    chain: Chain
    span: Span
    origin: tuple[Origin, ...] = ()


@record(frozen=True, slots=True)
class Return:
    """``return y``; ``return a, b`` (several outputs) holds a ``TupleExpr`` of the values."""

    value: Expr
    span: Span
    origin: tuple[Origin, ...] = ()


@record(frozen=True, slots=True)
class Branch:
    """One arm of an ``if``: ``if TEST:``, ``elif TEST:`` or ``else:`` (``test`` None)."""

    keyword: str
    test: Expr | None
    body: tuple[ForwardStmt, ...]
    header_span: Span  # the header line
    span: Span


@record(frozen=True, slots=True)
class If:
    """``if``/``elif``/``else`` in a forward body, decided at compile time."""

    branches: tuple[Branch, ...]
    span: Span


@record(frozen=True, slots=True)
class LoopTarget:
    """``i``, ``a, b`` or ``i, (c, k, s)``: a name, or a tuple of targets (``name`` None)."""

    name: str | None
    items: tuple[LoopTarget, ...]
    span: Span

    def names(self) -> list[tuple[str, Span]]:
        """Every name the target binds, in order, with its span."""
        if self.name is not None:
            return [(self.name, self.span)]
        return [found for item in self.items for found in item.names()]


@record(frozen=True, slots=True)
class For:
    """``for TARGET in ITERABLE:`` in a forward body, unrolled at compile time."""

    target: LoopTarget
    iterable: Expr
    body: tuple[ForwardStmt, ...]
    header_span: Span
    span: Span


ForwardStmt: TypeAlias = Assign | ChainStmt | Return | If | For
SimpleStmt: TypeAlias = Assign | ChainStmt | Return


def statement_value(stmt: SimpleStmt) -> Expr:
    """What an assignment, chain or return computes."""
    return stmt.chain if isinstance(stmt, ChainStmt) else stmt.value


def body_expressions(body: tuple[ForwardStmt, ...]) -> list[Expr]:
    """Every expression a forward body reads as written: statements' values, ``if``
    conditions and ``for`` iterables (loop variables are not expressions)."""
    out: list[Expr] = []
    pending: list[ForwardStmt] = list(reversed(body))
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, If):
            out += [branch.test for branch in stmt.branches if branch.test is not None]
            for branch in reversed(stmt.branches):
                pending.extend(reversed(branch.body))
        elif isinstance(stmt, For):
            out.append(stmt.iterable)
            pending.extend(reversed(stmt.body))
        else:
            out.append(statement_value(stmt))
    return out


def simple_statements(body: tuple[ForwardStmt, ...]) -> list[SimpleStmt]:
    """Every assignment, chain and return of ``body``, those inside ``if`` and ``for`` too,
    in source order (each once, as written: nothing is unrolled)."""
    out: list[SimpleStmt] = []
    pending: list[ForwardStmt] = list(reversed(body))
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, If):
            for branch in reversed(stmt.branches):
                pending.extend(reversed(branch.body))
        elif isinstance(stmt, For):
            pending.extend(reversed(stmt.body))
        else:
            out.append(stmt)
    return out


@record(frozen=True, slots=True)
class ForwardParam:
    """One input of ``def forward(input_ids, attention_mask=ones):``; ``default`` is
    ``ones``/``zeros``/``none`` (a ``Name`` or ``NoneLit``) or a number, None when required."""

    name: str
    name_span: Span
    default: Expr | None
    span: Span


@record(frozen=True, slots=True)
class Forward:
    """``def forward(x):``; ``param`` is the first input. ``params`` lists every input when
    the forward takes several or gives one a default (empty for the one-input form)."""

    param: str
    param_span: Span
    body: tuple[ForwardStmt, ...]
    span: Span
    params: tuple[ForwardParam, ...] = ()

    @property
    def inputs(self) -> tuple[ForwardParam, ...]:
        """Every input, the one-input form as one parameter without a default."""
        if self.params:
            return self.params
        return (ForwardParam(self.param, self.param_span, None, self.param_span),)

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.inputs)


@record(frozen=True, slots=True)
class Field:
    """``name = value`` inside experiment/dataset/train/train_gan blocks."""

    name: str
    name_span: Span
    value: Expr
    span: Span


@record(frozen=True, slots=True)
class Use:
    module: str
    module_span: Span
    alias: str | None
    alias_span: Span | None
    span: Span


@record(frozen=True, slots=True)
class Constant:
    name: str
    name_span: Span
    value: Expr
    span: Span


@record(frozen=True, slots=True)
class Experiment:
    name: str
    name_span: Span
    fields: tuple[Field, ...]
    span: Span


@record(frozen=True, slots=True)
class Dataset:
    name: str
    name_span: Span
    source: Name | None  # the ``from`` line
    fields: tuple[Field, ...]
    span: Span


@record(frozen=True, slots=True)
class ModelParam:
    """One parameter of ``model Block(width, stride: int = 1):``."""

    name: str
    name_span: Span
    annotation: str | None  # int, float, bool or str
    default: Expr | None
    span: Span


@record(frozen=True, slots=True)
class BudgetLimit:
    """``params <= 25M`` in a budget line: the metric, the amount and its spelling."""

    metric: str  # params, macs, flops or activations
    metric_span: Span
    amount: int
    text: str  # as written: 25M, 4.1G, 2GiB, 1_000
    span: Span


@record(frozen=True, slots=True)
class Budget:
    """``budget params <= 25M, activations <= 2GiB at batch 32`` in a model block.

    ``at`` binds the batch size (activations) and symbolic sizes (``at batch 32, seq 512``).
    """

    limits: tuple[BudgetLimit, ...]
    at: tuple[tuple[str, int], ...]
    span: Span

    def text(self) -> str:
        """The canonical spelling (``aurane format``)."""
        body = ", ".join(f"{lim.metric} <= {lim.text}" for lim in self.limits)
        where = ", ".join(f"{name} {value}" for name, value in self.at)
        return f"budget {body}" + (f" at {where}" if where else "")


@record(frozen=True, slots=True)
class InitRule:
    """``init dense: normal(0.02)`` or ``init *.c_proj.weight: normal(0.02)`` in a model.

    ``target`` is an operation name (its layers' weights; ``dense.bias`` names the bias) or
    a pattern over parameter names (``*`` matches any text, dots included).
    """

    target: str
    target_span: Span
    spec: Expr  # normal(0.02), zeros, kaiming_normal(mode="fan_out")
    span: Span


@record(frozen=True, slots=True)
class Model:
    """``model Name:``; ``fields`` holds input_shape/input_dtype/... and model constants alike.

    ``params`` are the parameters of a parameterised block (``model Block(width):``).
    ``base`` is the block call of a variant (``model resnet50 = ResNet(Bottleneck, [3, 4, 6,
    3]):``): its layers are exactly the block's, and it has no forward of its own.
    """

    name: str
    name_span: Span
    fields: tuple[Field, ...]
    forward: Forward | None
    span: Span
    params: tuple[ModelParam, ...] = ()
    budgets: tuple[Budget, ...] = ()  # ``budget ...`` lines (docs/trust.md)
    base: Call | None = None
    inits: tuple[InitRule, ...] = ()


@record(frozen=True, slots=True)
class Train:
    model: Name
    dataset: Name
    fields: tuple[Field, ...]
    span: Span


@record(frozen=True, slots=True)
class TrainGan:
    generator: Name
    discriminator: Name
    dataset: Name
    fields: tuple[Field, ...]
    span: Span


Statement: TypeAlias = Use | Constant | Experiment | Dataset | Model | Train | TrainGan


@record(frozen=True, slots=True)
class Comment:
    text: str  # including the leading '#'
    span: Span
    own_line: bool  # False for a trailing comment after code


@record(frozen=True, slots=True)
class AuraneProgram:
    statements: tuple[Statement, ...]
    comments: tuple[Comment, ...]
    filename: str | None
    span: Span

    @property
    def models(self) -> tuple[Model, ...]:
        return tuple(s for s in self.statements if isinstance(s, Model))

    @property
    def datasets(self) -> tuple[Dataset, ...]:
        return tuple(s for s in self.statements if isinstance(s, Dataset))

    @property
    def constants(self) -> tuple[Constant, ...]:
        return tuple(s for s in self.statements if isinstance(s, Constant))

    def model(self, name: str) -> Model | None:
        return next((m for m in self.models if m.name == name), None)
