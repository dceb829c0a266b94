"""The Aurane AST: one frozen, slotted dataclass per construct, tuples for children, span last.

Expressions are shared by every context (constants, operation arguments, configuration
fields). Forward bodies use ``Call`` for operation applications, with suffixes attached
(``conv2d(16).relu`` is ``Call("conv2d", ..., suffixes=(Suffix("relu"),))``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, TypeAlias

from aurane.source import Span


class _Node:
    """What ``@dataclass`` would generate per node class, written once: ``==`` field by field
    between nodes of the same class, ``hash`` of the field tuple, ``Name(field=value, ...)``
    repr. Each class's decorator says ``repr=False, eq=False`` so that importing the AST does
    not compile ninety such methods (``aurane check`` start-up, issue 14)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return _field_values(self) == _field_values(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(_field_values(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))  # type: ignore[arg-type]
        return f"{self.__class__.__qualname__}({shown})"


_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _field_values(node: _Node) -> tuple[Any, ...]:
    """The node's field values in declaration order (what dataclass compares and hashes)."""
    cls = node.__class__
    getter = _GETTERS.get(cls)
    if getter is None:
        names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
        if len(names) == 1:  # attrgetter of one name returns the value, not a 1-tuple
            getter = lambda item, name=names[0]: (getattr(item, name),)  # noqa: E731
        else:
            getter = attrgetter(*names)
        _GETTERS[cls] = getter
    return getter(node)


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Number(_Node):
    value: int | float
    text: str  # as written, for the formatter
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class String(_Node):
    value: str
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Bool(_Node):
    value: bool
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class NoneLit(_Node):
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Name(_Node):
    """A bare or dotted name; ``id`` is the full dotted text (``torchvision.datasets.FakeData``)."""

    id: str
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class TupleExpr(_Node):
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ListExpr(_Node):
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Keyword(_Node):
    name: str
    name_span: Span
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Suffix(_Node):
    """``.relu``, ``.leaky_relu(0.2)``, ``.softmax(dim=-1)``, ``.residual``."""

    name: str
    name_span: Span
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]
    has_parens: bool
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Call(_Node):
    """``func(args, key=value).suffix...``; ``func`` may be dotted; span covers suffixes."""

    func: str
    func_span: Span
    args: tuple[Expr, ...]
    keywords: tuple[Keyword, ...]
    suffixes: tuple[Suffix, ...]
    span: Span
    layer: str | None = None  # ``... as conv1`` / ``as layer1.0.conv1``: the attribute path
    layer_span: Span | None = None


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class BinOp(_Node):
    op: str  # one of + - * / // % **
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class UnaryOp(_Node):
    op: str  # "-" or "+"
    operand: Expr
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Chain(_Node):
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


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Assign(_Node):
    """``name = value``: a constant or field in blocks, a tensor binding in forward bodies.

    ``a, b = chunk(x, 2)`` (forward bodies only) binds several names: ``targets`` lists
    every (name, span) then, and ``target`` is the first; it is empty for one name.
    """

    target: str
    target_span: Span
    value: Expr
    span: Span
    targets: tuple[tuple[str, Span], ...] = ()


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ChainStmt(_Node):
    """A bare chain in a forward body: ``x -> a -> b`` rebinds ``x`` (when the source is a name)."""

    chain: Chain
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Return(_Node):
    value: Expr
    span: Span


ForwardStmt: TypeAlias = Assign | ChainStmt | Return


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Forward(_Node):
    param: str
    param_span: Span
    body: tuple[ForwardStmt, ...]
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Field(_Node):
    """``name = value`` inside experiment/dataset/train/train_gan blocks."""

    name: str
    name_span: Span
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Use(_Node):
    module: str
    module_span: Span
    alias: str | None
    alias_span: Span | None
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Constant(_Node):
    name: str
    name_span: Span
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Experiment(_Node):
    name: str
    name_span: Span
    fields: tuple[Field, ...]
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Dataset(_Node):
    name: str
    name_span: Span
    source: Name | None  # the ``from`` line
    fields: tuple[Field, ...]
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ModelParam(_Node):
    """One parameter of ``model Block(width, stride: int = 1):``."""

    name: str
    name_span: Span
    annotation: str | None  # int, float, bool or str
    default: Expr | None
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class BudgetLimit(_Node):
    """``params <= 25M`` in a budget line: the metric, the amount and its spelling."""

    metric: str  # params, macs, flops or activations
    metric_span: Span
    amount: int
    text: str  # as written: 25M, 4.1G, 2GiB, 1_000
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Budget(_Node):
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


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Model(_Node):
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


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Train(_Node):
    model: Name
    dataset: Name
    fields: tuple[Field, ...]
    span: Span


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class TrainGan(_Node):
    generator: Name
    discriminator: Name
    dataset: Name
    fields: tuple[Field, ...]
    span: Span


Statement: TypeAlias = Use | Constant | Experiment | Dataset | Model | Train | TrainGan


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Comment(_Node):
    text: str  # including the leading '#'
    span: Span
    own_line: bool  # False for a trailing comment after code


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class AuraneProgram(_Node):
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
