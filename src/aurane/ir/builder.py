"""Per-model lowering state and the model fields lowering reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from aurane.ir.graph import Node, Value
from aurane.records import field, record
from aurane.semantics.dims import has_symbols, shape_value
from aurane.semantics.sizes import ConcreteSizeNeeded, Symbol
from aurane.semantics.values import literal_value
from aurane.source import Span
from aurane.syntax import ast


@record(frozen=True)
class ModelInfo:
    input_shape: tuple[int, ...] | None
    input_shape_span: Span | None
    input_dtype: str | None
    padding_idx: int | None
    padding_span: Span | None


def model_info(
    model: ast.Model,
    dims: Mapping[str, Symbol] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> ModelInfo:
    """The fields lowering reads; ``dims`` are the declared size symbols (``seq =
    dim(...)``) an ``input_shape`` may use, ``sizes`` binds some of them to numbers."""
    values = {f.name: f for f in model.fields}
    shape_field = values.get("input_shape")
    dtype_field = values.get("input_dtype")
    pad_field = values.get("input_padding_idx")
    shape = None
    if shape_field is not None and has_symbols(shape_field.value):
        try:
            shape = shape_value(shape_field.value, dims or {}, sizes)
        except (KeyError, ConcreteSizeNeeded, ZeroDivisionError):
            shape = None  # reported by constant resolution; lowered as a block without one
    elif shape_field is not None:
        shape = literal_value(shape_field.value)
    dtype = None
    if dtype_field is not None:
        expr = dtype_field.value
        dtype = expr.id if isinstance(expr, ast.Name) else literal_value(expr)
    return ModelInfo(
        tuple(shape) if shape is not None else None,
        shape_field.value.span if shape_field else None,
        dtype,
        literal_value(pad_field.value) if pad_field else None,
        pad_field.value.span if pad_field else None,
    )


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

    def fresh(self, stem: str) -> str:
        """A new node id; skips names already taken (a forward parameter called dense1)."""
        while True:
            self.counters[stem] += 1
            name = f"{stem}{self.counters[stem]}"
            if name not in self.values:
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
