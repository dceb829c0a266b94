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
    """``func(args, key=value).suffix...``; ``func`` may be dotted; span covers suffixes."""

    func: str
    func_span: Span
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]
    suffixes: tuple[Suffix, ...]
    span: Span
    layer: str | None = None  # ``... as conv1`` / ``as layer1.0.conv1``: the attribute path
    layer_span: Span | None = None


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


Expr: TypeAlias = (
    Number | String | Bool | NoneLit | Name | TupleExpr | ListExpr | Call | BinOp | UnaryOp | Chain
)

# ---------------------------------------------------------------- statements


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


@record(frozen=True, slots=True)
class ChainStmt:
    """A bare chain in a forward body: ``x -> a -> b`` rebinds ``x`` (when the source is a name)."""

    chain: Chain
    span: Span


@record(frozen=True, slots=True)
class Return:
    value: Expr
    span: Span


ForwardStmt: TypeAlias = Assign | ChainStmt | Return


@record(frozen=True, slots=True)
class Forward:
    param: str
    param_span: Span
    body: tuple[ForwardStmt, ...]
    span: Span


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
class Model:
    """``model Name:``; ``fields`` holds input_shape/input_dtype/... and model constants alike.

    ``params`` are the parameters of a parameterised block (``model Block(width):``).
    """

    name: str
    name_span: Span
    fields: tuple[Field, ...]
    forward: Forward | None
    span: Span
    params: tuple[ModelParam, ...] = ()
    budgets: tuple[Budget, ...] = ()  # ``budget ...`` lines (docs/trust.md)


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
