"""Per-model lowering state and the model fields lowering reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from aurane.ir.graph import Node, Value
from aurane.records import field, fields, is_record, record
from aurane.semantics.dims import has_symbols, shape_value
from aurane.semantics.sizes import ConcreteSizeNeeded, Symbol
from aurane.semantics.values import NotLiteral, literal_value
from aurane.source import Span
from aurane.syntax import ast


@record(frozen=True)
class InputInfo:
    """One input of a model with several: its declared shape (None when missing or
    unresolved), dtype, the span that declared the shape, and its default (``ones``,
    ``zeros``, ``none``, a number; None when required)."""

    name: str
    shape: tuple[Any, ...] | None
    dtype: str | None
    span: Span
    default: Any = None


@record(frozen=True)
class ModelInfo:
    input_shape: tuple[int, ...] | None
    input_shape_span: Span | None
    input_dtype: str | None
    padding_idx: int | None
    padding_span: Span | None
    # a forward with several inputs: each one (the first is input_shape/input_dtype above)
    inputs: tuple[InputInfo, ...] = ()


def model_info(
    model: ast.Model,
    dims: Mapping[str, Symbol] | None = None,
    sizes: Mapping[str, int] | None = None,
    forward: ast.Forward | None = None,
) -> ModelInfo:
    """The fields lowering reads; ``dims`` are the declared size symbols (``seq =
    dim(...)``) an ``input_shape`` may use, ``sizes`` binds some of them to numbers.
    ``forward``: the one whose inputs the fields key (a variant's: its base block's)."""
    values = {f.name: f for f in model.fields}
    shape_field = values.get("input_shape")
    dtype_field = values.get("input_dtype")
    pad_field = values.get("input_padding_idx")
    padding = (
        literal_value(pad_field.value) if pad_field else None,
        pad_field.value.span if pad_field else None,
    )
    forward = forward or model.forward
    if forward is not None and forward.params:
        return _several(forward, shape_field, dtype_field, dims, sizes, padding)
    shape = None
    if shape_field is not None and not isinstance(shape_field.value, ast.DictExpr):
        shape = _shape(shape_field.value, dims, sizes)
    dtype = None
    if dtype_field is not None and not isinstance(dtype_field.value, ast.DictExpr):
        dtype = _dtype(dtype_field.value)
    return ModelInfo(
        tuple(shape) if shape is not None else None,
        shape_field.value.span if shape_field else None,
        dtype,
        *padding,
    )


def _shape(
    expr: ast.Expr, dims: Mapping[str, Symbol] | None, sizes: Mapping[str, int] | None
) -> Any:
    if has_symbols(expr):
        try:
            return shape_value(expr, dims or {}, sizes)
        except (KeyError, ConcreteSizeNeeded, ZeroDivisionError):
            return None  # reported by constant resolution; lowered as a block without one
    try:
        return literal_value(expr)
    except NotLiteral:
        return None  # reported by the field check


def _dtype(expr: ast.Expr) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else literal_value(expr)


def _several(
    forward: ast.Forward,
    shape_field: ast.Field | None,
    dtype_field: ast.Field | None,
    dims: Mapping[str, Symbol] | None,
    sizes: Mapping[str, int] | None,
    padding: tuple[int | None, Span | None],
) -> ModelInfo:
    """``input_shape = {ids: (seq,), mask: (seq,)}``: one ``InputInfo`` per forward input."""
    shapes: dict[str, tuple[Any, Span]] = {}
    if shape_field is not None and isinstance(shape_field.value, ast.DictExpr):
        for key, value in zip(shape_field.value.keys, shape_field.value.values, strict=True):
            shapes[key.id] = (_shape(value, dims, sizes), value.span)
    elif shape_field is not None and len(forward.inputs) == 1:
        shapes[forward.param] = (_shape(shape_field.value, dims, sizes), shape_field.value.span)
    dtypes: dict[str, str | None] = {}
    if dtype_field is not None and isinstance(dtype_field.value, ast.DictExpr):
        for key, value in zip(dtype_field.value.keys, dtype_field.value.values, strict=True):
            dtypes[key.id] = _dtype(value)
    elif dtype_field is not None and len(forward.inputs) == 1:
        dtypes[forward.param] = _dtype(dtype_field.value)
    inputs = []
    for param in forward.inputs:
        shape, span = shapes.get(param.name, (None, param.name_span))
        default = None if param.default is None else input_default(param.default)
        inputs.append(
            InputInfo(
                param.name,
                tuple(shape) if shape is not None else None,
                dtypes.get(param.name, "float32" if dtype_field is not None else None),
                span,
                default,
            )
        )
    first = inputs[0]
    declared = shape_field is not None and all(i.shape is not None for i in inputs)
    return ModelInfo(
        first.shape if declared else None,
        first.span if shape_field is not None else None,
        first.dtype if dtype_field is not None else None,
        *padding,
        inputs=tuple(inputs),
    )


def input_default(expr: ast.Expr) -> Any:
    """An input's default as the IR keeps it: ``"ones"``, ``"zeros"``, ``"none"`` or a number."""
    match expr:
        case ast.Name(id=name):
            return name
        case ast.NoneLit():
            return "none"
        case ast.UnaryOp(op="-", operand=ast.Number(value=value)):
            return -value
        case ast.Number(value=value) | ast.Bool(value=value):
            return value
    return None


@record
class GraphBuilder:
    """Accumulates one graph's values and nodes."""

    name: str
    param_dtype: str
    values: dict[str, Value] = field(default_factory=dict)  # insertion-ordered
    nodes: list[Node] = field(default_factory=list)
    producers: dict[str, Node] = field(default_factory=dict)  # value name -> node
    counters: Counter[str] = field(default_factory=Counter)
    notes: dict[str, str] = field(default_factory=dict)  # value -> how its shape came about
    uses: Counter[str] = field(default_factory=Counter)
    layer_spans: dict[str, Span] = field(default_factory=dict)  # node id -> its 'as' name
    ties: dict[str, tuple[str, Span]] = field(default_factory=dict)  # node id -> tie= path
    # where a block call names a model-valued parameter of the block being lowered
    # (``block(width)``, by the start of the name) -> that parameter: the call is numbered
    # after it (``block1``), not after the block it gave, so names follow the source
    callees: Mapping[tuple[int, int], str] = field(default_factory=dict)
    # the first part of every ``as`` name of the forward (``basic1``, ``layers1`` from
    # ``as layers{i}``): an unnamed layer's id is its path, so it never takes one
    named: frozenset[str] = frozenset()

    def fresh(self, stem: str) -> str:
        """A new node id; skips names already taken (a forward parameter called dense1) and
        the forward's ``as`` names (``dense(8) as basic1 -> Basic(16)``: ``basic2``), so
        the IR's layer paths are the generated module's attributes."""
        while True:
            self.counters[stem] += 1
            name = f"{stem}{self.counters[stem]}"
            if name not in self.values and name not in self.named:
                return name

    def value(self, name: str) -> Value:
        return self.values[name]

    def add_value(self, value: Value, note: str | None = None) -> str:
        """Add a value; ``note`` says where its shape came from when the shape alone won't."""
        self.values[value.name] = value
        if note is not None:
            self.notes[value.name] = note
        return value.name

    def add_node(self, node: Node) -> None:
        self.nodes.append(node)
        self.producers[node.output] = node


def as_names(body: object) -> frozenset[str]:
    """The first part of every ``as`` name in a forward body (a call's, a chain's), its
    holes filled where constant resolution unrolled the loops (``layers1``, ``layers2``)."""
    found: set[str] = set()
    pending: list[object] = [body]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple | list):
            pending.extend(item)
        elif isinstance(item, ast.Call | ast.Chain):
            if item.layer is not None:
                found.add(item.layer.split(".")[0])
            pending.extend(getattr(item, f.name) for f in fields(item))
        elif is_record(item) and not isinstance(item, Span | type):
            pending.extend(getattr(item, f.name) for f in fields(item))
    return frozenset(found)
