"""The named-tensor IR: one uniform Node type and typed Values, frozen.

Shapes include the batch axis as the string ``"batch"`` first. A shape of ``None`` means
inference failed upstream (a diagnostic was already reported); consumers skip such values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from typing import Any, cast

from aurane.ops.spec import TensorArg
from aurane.records import field, record
from aurane.semantics.inits import InitSpec, Rule
from aurane.semantics.sizes import symbol
from aurane.semantics.values import OpValue
from aurane.source import Span
from aurane.syntax import ast

BATCH = "batch"
# the batch size where it is a sample axis: the rows of cross_batch_matmul (CLIP's logits)
BATCH_SIZE = symbol(BATCH)

Dim = int | str
Shape = tuple[Dim, ...]


@record(frozen=True, slots=True)
class Value:
    name: str
    shape: Shape | None
    dtype: str | None
    span: Span
    source_name: str | None = None  # the name the program bound it to, when it did

    @property
    def sample_shape(self) -> tuple[int, ...] | None:
        """The shape without the batch axis (every remaining dim is an int)."""
        if self.shape is None:
            return None
        return cast(tuple[int, ...], self.shape[1:])  # only the batch axis is symbolic


@record(frozen=True, slots=True)
class Node:
    id: str  # unique within the graph, derived from the op: conv2d1, dense2, relu1
    op: str  # catalog name (aliases resolved), "block" for a model call, "repeat"
    args: Mapping[str, Any]  # resolved arguments, defaults included
    inputs: tuple[str, ...]
    output: str
    parameters: int
    span: Span
    arg_spans: Mapping[str, Span] = field(default_factory=dict)
    block: str | None = None  # called model name for "block" and "repeat"
    subgraph: Graph | None = None  # the block lowered at this call's input type
    repeat: int = 1
    suffix_of: str | None = None  # node id this suffix node (activation/residual) follows
    layer: str | None = None  # ``as conv1`` / ``as layer1.0``: attribute path in the module
    # the loop iterations and branches of the statement that made it (issue 24's unrolling)
    origin: tuple[ast.Origin, ...] = ()
    init: tuple[tuple[str, InitSpec], ...] = ()  # init=normal(0.02): parameter -> initialiser
    # a block that returns several tensors: every output value (``output`` is the first)
    outputs: tuple[str, ...] = ()

    @property
    def iterations(self) -> tuple[str, ...]:
        """The unrolled loops' bindings this node was made in, outermost first (``('i = 2',
        'j = 0')``), read from the origin frames ``semantics/unroll.py`` writes."""
        return tuple(
            frame.text.removeprefix("in iteration ").split(" of the loop at ")[0]
            for frame in self.origin
            if frame.kind == "loop"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "op": self.op,
            "inputs": list(self.inputs),
            "output": self.output,
            "args": {k: _jsonable(v) for k, v in self.args.items()},
            "parameters": self.parameters,
            "span": self.span.to_json(),
            **({"block": self.block, "repeat": self.repeat} if self.block else {}),
            **({"layer": self.layer} if self.layer else {}),
            **({"origin": [_origin_json(frame) for frame in self.origin]} if self.origin else {}),
            **({"init": {k: spec.text() for k, spec in self.init}} if self.init else {}),
            **({"outputs": list(self.outputs)} if self.outputs else {}),
        }


@record(frozen=True)
class OperationParam:
    """An operation-valued block parameter in one instance (``act = relu``): the operation
    it gave, the nodes that apply it (a suffix ``.act``, a step ``-> act``, a call
    ``act(h)``), and its default operation, if it has one."""

    op: str
    nodes: tuple[str, ...]
    default: str | None = None
    # the block calls it is given to (``Inner(8, act)``): (call node id, inner parameter)
    passed: tuple[tuple[str, str], ...] = ()
    # whether the block's source applies it with no argument wherever it names it (``.act``,
    # ``-> act()``) and gives it to no call, so its default computes at its own defaults
    bare: bool = False


@record(frozen=True)
class Graph:
    name: str
    input: str
    output: str
    values: tuple[Value, ...]
    nodes: tuple[Node, ...]
    span: Span
    input_dtype: str | None
    param_dtype: str = "float32"
    padding_idx: int | None = None  # input_padding_idx for attention models
    # a parameterised block's instance: its parameter names and this call's values
    block_params: tuple[str, ...] | None = None
    block_args: Mapping[str, Any] = field(default_factory=dict)
    block_defaults: Mapping[str, Any] = field(default_factory=dict)  # evaluated defaults
    # node id -> {argument: block parameter} for boolean/string arguments a parameter gave
    block_refs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # operation-valued parameters (act = relu) of the instance: name -> what it gave
    block_ops: Mapping[str, OperationParam] = field(default_factory=dict)
    # model-valued parameters (block = Basic) of the instance: name -> the model it gave
    # (``op``), the block calls it makes and its default model
    block_models: Mapping[str, OperationParam] = field(default_factory=dict)
    tied: Mapping[str, str] = field(default_factory=dict)  # node id -> layer path it shares
    init_rules: tuple[Rule, ...] = ()  # the model's ``init TARGET: SPEC`` lines, in order
    # several inputs/outputs (issue 23): every input's value name, in the forward's order
    # (empty: the one ``input``), every output's (empty: the one ``output``), the names the
    # return statement wrote for them, and each optional input's default (ones, zeros,
    # none or a number)
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    output_labels: tuple[str, ...] = ()
    input_defaults: Mapping[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> Value:
        for value in self.values:
            if value.name == name:
                return value
        raise KeyError(name)

    @cached_property
    def node_by_id(self) -> Mapping[str, Node]:
        """Each node by its id; built once, as the graph is frozen."""
        return {node.id: node for node in self.nodes}

    @cached_property
    def producer_of(self) -> Mapping[str, Node]:
        """The node computing each value (a node with several outputs under each)."""
        return {out: node for node in self.nodes for out in node.outputs or (node.output,)}

    def ancestors(self, values: Iterable[str]) -> Iterator[Node]:
        """The nodes ``values`` are computed from, each once, nearest first."""
        seen: set[str] = set()
        pending = list(values)
        while pending:
            name = pending.pop()
            node = self.producer_of.get(name)
            if name in seen or node is None:
                continue
            seen.add(name)
            pending += node.inputs
            yield node

    @property
    def value_map(self) -> dict[str, Value]:
        return {v.name: v for v in self.values}

    @property
    def input_value(self) -> Value:
        return self.value(self.input)

    @property
    def output_value(self) -> Value:
        return self.value(self.output)

    @property
    def inputs(self) -> tuple[Value, ...]:
        """Every input value, in the forward's order (one for a one-input model)."""
        return tuple(self.value(name) for name in (self.input_names or (self.input,)))

    @property
    def outputs(self) -> tuple[Value, ...]:
        """Every output value, in the return's order (one for a one-output model)."""
        return tuple(self.value(name) for name in (self.output_names or (self.output,)))

    @property
    def several(self) -> bool:
        """Whether the model takes or returns more than one tensor."""
        return len(self.input_names) > 1 or len(self.output_names) > 1

    def output_label(self, index: int) -> str:
        """The name the return statement gave output ``index`` (its value's name else)."""
        if index < len(self.output_labels):
            return self.output_labels[index]
        value = self.outputs[index]
        return value.source_name or value.name

    @property
    def parameters(self) -> int:
        return sum(node.parameters for node in self.nodes)

    @property
    def has_attention(self) -> bool:
        return any(
            # self-attention reads padding_mask; cross-attention (a memory input) and a
            # self-attention given attn_mask= / key_padding_mask= (more inputs) do not
            (node.op == "multihead_attention" and len(node.inputs) == 1)
            or (node.subgraph and node.subgraph.has_attention)
            for node in self.nodes
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input": self.input,
            "output": self.output,
            "parameters": self.parameters,
            "values": [
                {
                    "name": v.name,
                    "shape": [_dim_json(d) for d in v.shape] if v.shape is not None else None,
                    "dtype": v.dtype,
                    "span": v.span.to_json(),
                }
                for v in self.values
            ],
            "nodes": [node.to_json() for node in self.nodes],
            **(
                {
                    "inputs": [
                        {
                            "name": v.name,
                            "shape": _shape_json(v.shape),
                            "dtype": v.dtype,
                            **(
                                {"default": self.input_defaults[v.name]}
                                if v.name in self.input_defaults
                                else {}
                            ),
                        }
                        for v in self.inputs
                    ],
                    "outputs": [
                        {
                            "name": self.output_label(i),
                            "value": v.name,
                            "shape": _shape_json(v.shape),
                            "dtype": v.dtype,
                        }
                        for i, v in enumerate(self.outputs)
                    ],
                }
                if self.several
                else {}
            ),
            **({"tied": dict(self.tied)} if self.tied else {}),  # node id -> layer it shares
            **(
                {"init_rules": [{"target": r.text, "init": r.spec.text()} for r in self.init_rules]}
                if self.init_rules
                else {}
            ),
            **({"symbols": self.symbols_json()} if self.symbols_json() else {}),
        }

    def symbols_json(self) -> dict[str, dict[str, int | None]]:
        """The symbolic sizes (``seq = dim(1, 2048)``) of the input: name -> min, max."""
        from aurane.semantics.sizes import free_symbols

        found = set()
        for value in self.inputs:  # symbols are shared across inputs by name
            found |= free_symbols(value.shape or ())
        return {s.name: {"min": s.low, "max": s.high} for s in sorted(found)}


def _origin_json(frame: ast.Origin) -> dict[str, Any]:
    """A loop iteration (``index``) or chosen branch, with its header's span."""
    return {
        "kind": frame.kind,
        "index": frame.index,
        "text": frame.text,
        "span": frame.span.to_json(),
    }


def _shape_json(shape: Shape | None) -> Any:
    return [_dim_json(d) for d in shape] if shape is not None else None


def _dim_json(dim: Any) -> Any:
    """A shape entry in JSON: an int, "batch", or a symbolic size's formula ("2*seq")."""
    return dim if isinstance(dim, int | str) else str(dim)


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, OpValue):  # act=gelu given to a block: the operation's name
        return value.name
    if isinstance(value, TensorArg):  # attn_mask=pad: the node input it names
        return {"input": value.index}
    return value
