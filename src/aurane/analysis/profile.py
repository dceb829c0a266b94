"""Static cost profile of a lowered model, read only from the IR and the op catalog.

Every count is an estimate of work and memory, not a latency measurement:

- parameters come from each node's catalog ``parameters`` rule (the IR stores them too);
- FLOPs per sample are 2 per multiply-accumulate, where MACs come from the catalog ``macs``
  rule (dense, convolution, attention projections and score/value products, recurrent
  matrix products), the ``torch.utils.flop_counter`` convention;
- other FLOPs (bias adds, elementwise, normalization, pooling) come from ``other_flops``;
- activation memory is the size of every IR value (the input included) at the value's
  dtype; a value of unknown dtype is guessed at 4 bytes per element (float32).

Composed blocks are profiled at their call's input type and rolled up into one layer, with
the block's own layers kept as children (one copy; ``repeat`` multiplies).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from aurane import ops
from aurane.analysis.formulas import macs_formula, pretty
from aurane.analysis.naming import op_text
from aurane.ir.blocks import call_text
from aurane.ir.graph import BATCH_SIZE, Graph, Node, Value
from aurane.ir.inits import effective_inits
from aurane.ops.rules import numel
from aurane.ops.spec import ArgValue, BoundArgs, InferContext, TensorType
from aurane.records import record, replace

DTYPE_BYTES: dict[str, int] = {
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "int32": 4,
    "int64": 8,
    "bool": 1,
}
UNKNOWN_DTYPE_BYTES = 4  # a stated guess: float32


def dtype_bytes(dtype: str | None) -> int:
    """Bytes per element of ``dtype``; unknown dtypes are guessed at 4 (float32)."""
    if dtype is None:
        return UNKNOWN_DTYPE_BYTES
    return DTYPE_BYTES.get(dtype, UNKNOWN_DTYPE_BYTES)


@record(frozen=True)
class LayerProfile:
    """One IR node's cost per sample. For a block, totals over all its copies."""

    node: str
    op: str
    output_shape: tuple[int, ...] | None
    dtype: str | None
    parameters: int
    macs: int
    other_flops: int
    activation_bytes: int  # per sample: the values this layer produces
    unknown_dtypes: int  # how many of those values had no dtype (4-byte guess)
    formula: str | None = None
    block: str | None = None
    repeat: int = 1
    children: tuple[LayerProfile, ...] = ()  # one copy of the block's layers
    name: str | None = None  # the user's layer name (``as layer1.0``), when given
    call: str | None = None  # a parameterised block's call: ``BasicBlock(128, stride=2)``

    @property
    def shown(self) -> str:
        """The row's name: the user's layer name where given, else the IR node id."""
        return self.name or self.node

    @property
    def flops(self) -> int:
        return 2 * self.macs


@record(frozen=True)
class ModelProfile:
    name: str
    input_shape: tuple[int, ...] | None
    input_dtype: str | None
    output_shape: tuple[int, ...] | None
    param_dtype: str
    layers: tuple[LayerProfile, ...]
    batch_size: int
    input_bytes: int  # per sample
    input_unknown: int  # 1 when the input dtype is unknown
    # parameters an init= or init rule reaches: (layer path, "weight=normal(std=0.02), ...")
    inits: tuple[tuple[str, str], ...] = ()
    # a model with several inputs or outputs (issue 23): each input as (name, per-sample
    # shape, dtype, bytes per sample) and each output as (name, shape, dtype); the
    # ``input_*`` fields above are the first input's, ``input_bytes`` all inputs' total
    inputs: tuple[tuple[str, tuple[int, ...] | None, str | None, int], ...] = ()
    outputs: tuple[tuple[str, tuple[int, ...] | None, str | None], ...] = ()

    @property
    def parameters(self) -> int:
        return sum(layer.parameters for layer in self.layers)

    @property
    def trainable_parameters(self) -> int:
        # every parameter the IR creates requires grad (no freezing in the language)
        return self.parameters

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    @property
    def flops(self) -> int:
        return 2 * self.macs

    @property
    def other_flops(self) -> int:
        return sum(layer.other_flops for layer in self.layers)

    @property
    def activation_bytes_per_sample(self) -> int:
        return self.input_bytes + sum(layer.activation_bytes for layer in self.layers)

    @property
    def activation_bytes(self) -> int:
        return self.batch_size * self.activation_bytes_per_sample

    @property
    def parameter_bytes(self) -> int:
        return self.parameters * dtype_bytes(self.param_dtype)

    @property
    def unknown_dtypes(self) -> int:
        return self.input_unknown + sum(layer.unknown_dtypes for layer in self.layers)


def profile(graph: Graph, batch_size: int = 1) -> ModelProfile:
    """The cost profile of ``graph`` (a model lowered at its input type)."""
    if batch_size < 1:
        raise ValueError("batch size must be positive")
    values = graph.value_map
    inp = values[graph.input]
    out = values[graph.output]
    several = graph.several
    inputs = tuple((v.name, v.sample_shape, v.dtype, _value_bytes(v)) for v in graph.inputs)
    outputs = tuple(
        (graph.output_label(i), v.sample_shape, v.dtype) for i, v in enumerate(graph.outputs)
    )
    return ModelProfile(
        name=graph.name,
        input_shape=inp.sample_shape,
        input_dtype=inp.dtype,
        output_shape=out.sample_shape,
        param_dtype=graph.param_dtype,
        layers=profile_layers(graph),
        batch_size=batch_size,
        input_bytes=sum(item[3] for item in inputs),
        input_unknown=sum(int(v.dtype is None) for v in graph.inputs),
        inits=tuple(
            (path, ", ".join(f"{param}={spec.text()}" for param, spec in specs.items()))
            for path, specs in effective_inits(graph).items()
        ),
        inputs=inputs if several else (),
        outputs=outputs if several else (),
    )


def profile_layers(graph: Graph) -> tuple[LayerProfile, ...]:
    values = graph.value_map
    layers = tuple(
        replace(_layer(node, values, graph.param_dtype), name=node.layer) for node in graph.nodes
    )
    if not graph.tied:
        return layers
    # a tied layer (dense(..., tie=wte)) shares its weight: counted once, at the embedding;
    # the IR already holds the tied node's own count without the shared weight
    nodes = graph.node_by_id
    return tuple(
        replace(layer, parameters=nodes[layer.node].parameters)
        if layer.node in graph.tied
        else layer
        for layer in layers
    )


def _value_bytes(value: Value) -> int:
    shape = value.sample_shape
    if shape is None:
        return 0
    return numel(shape) * dtype_bytes(value.dtype)


def _layer(node: Node, values: Mapping[str, Value], param_dtype: str) -> LayerProfile:
    out = values[node.output]
    if node.subgraph is not None:
        return _block_layer(node, out)
    spec = ops.lookup(node.op)
    built = catalog_context(node, values, param_dtype) if spec is not None else None
    if spec is None or built is None:  # unknown op or unknown shapes: nothing to count
        return LayerProfile(
            node.id,
            node.op,
            out.sample_shape,
            out.dtype,
            node.parameters,
            0,
            0,
            _value_bytes(out),
            int(out.dtype is None),
        )
    ctx, result = built
    macs = spec.macs(ctx, result)
    formula = macs_formula(spec.name, ctx, result)
    return LayerProfile(
        node=node.id,
        op=node.op,
        output_shape=out.sample_shape,
        dtype=out.dtype,
        parameters=spec.parameters(ctx, result),
        macs=macs,
        other_flops=spec.other_flops(ctx, result),
        activation_bytes=_value_bytes(out),
        unknown_dtypes=int(out.dtype is None),
        formula=_formula_text(formula, macs),
    )


def _formula_text(formula: tuple[str, str] | None, macs: int) -> str:
    if formula is None:
        return "no multiply-accumulates (work counted in other FLOPs)"
    meaning, expression = formula
    return f"MACs = {meaning} = {pretty(expression)} = {macs:,}; FLOPs = 2 \u00b7 MACs"


def catalog_context(
    node: Node, values: Mapping[str, Value], param_dtype: str
) -> tuple[InferContext, TensorType] | None:
    """The catalog's InferContext for ``node`` (args and input types from the IR) and its
    output type, or None when a shape is unknown."""
    inputs: list[TensorType] = []
    for name in node.inputs:
        shape = values[name].sample_shape
        if shape is None:
            return None
        inputs.append(TensorType(shape, values[name].dtype))
    out = values[node.output]
    if out.sample_shape is None:
        return None
    bound = BoundArgs(
        {key: ArgValue(value, node.arg_spans.get(key)) for key, value in node.args.items()}
    )
    ctx = InferContext.of_node(bound, tuple(inputs), param_dtype, BATCH_SIZE)
    return ctx, TensorType(out.sample_shape, out.dtype)


def _block_layer(node: Node, out: Value) -> LayerProfile:
    sub = node.subgraph
    assert sub is not None
    children = profile_layers(sub)
    times = node.repeat
    label = op_text(node)
    return LayerProfile(
        node=node.id,
        op=node.op,
        output_shape=out.sample_shape,
        dtype=out.dtype,
        parameters=times * sum(c.parameters for c in children),
        macs=times * sum(c.macs for c in children),
        other_flops=times * sum(c.other_flops for c in children),
        activation_bytes=times * sum(c.activation_bytes for c in children),
        unknown_dtypes=times * sum(c.unknown_dtypes for c in children),
        formula=f"{label}: the sum of its layers"
        + (f", times {times} copies" if times > 1 else ""),
        block=sub.name,
        repeat=times,
        children=children,
        call=call_text(sub.name, dict(sub.block_args), dict(sub.block_defaults))
        if sub.block_params is not None
        else None,
    )


def walk(
    layers: tuple[LayerProfile, ...], prefix: str = "", depth: int = 0
) -> Iterator[tuple[str, int, LayerProfile]]:
    """Every layer with its path (``layer1/conv1``, ``residualunit1/conv2d1``: the user's
    layer names where given, else node ids) and nesting depth."""
    for layer in layers:
        path = f"{prefix}{layer.shown}"
        yield path, depth, layer
        if layer.children:
            yield from walk(layer.children, path + "/", depth + 1)


@record(frozen=True)
class OpTotal:
    op: str
    count: int
    parameters: int
    macs: int
    other_flops: int


def by_operation(profile_: ModelProfile) -> tuple[OpTotal, ...]:
    """Totals per catalog operation over the whole model, blocks expanded (repeat counted)."""
    totals: dict[str, list[int]] = {}

    def visit(layers: tuple[LayerProfile, ...], times: int) -> None:
        for layer in layers:
            if layer.children:
                visit(layer.children, times * layer.repeat)
                continue
            entry = totals.setdefault(layer.op, [0, 0, 0, 0])
            entry[0] += times
            entry[1] += times * layer.parameters
            entry[2] += times * layer.macs
            entry[3] += times * layer.other_flops

    visit(profile_.layers, 1)
    rows = [OpTotal(op, *entry) for op, entry in totals.items()]
    return tuple(sorted(rows, key=lambda r: (-r.macs, -r.parameters, r.op)))
