"""IR invariants: defined before use, unique names, known ops, arity, types and spans present."""

from __future__ import annotations

from aurane import ops
from aurane.ir.graph import BATCH, Graph
from aurane.ops.spec import split_inputs
from aurane.semantics.sizes import SizeExpr, bounds


class IRVerificationError(AssertionError):
    pass


def verify(graph: Graph) -> None:
    """Raise IRVerificationError on the first broken invariant (a compiler bug, not a user error)."""
    names = [v.name for v in graph.values]
    if len(names) != len(set(names)):
        raise IRVerificationError(f"{graph.name}: duplicate value names")
    ids = [n.id for n in graph.nodes]
    if len(ids) != len(set(ids)):
        raise IRVerificationError(f"{graph.name}: duplicate node ids")
    defined = {v.name for v in graph.inputs} if graph.input_names else {graph.input}
    if graph.input_names and graph.input_names[0] != graph.input:
        raise IRVerificationError(f"{graph.name}: input {graph.input} is not its first input")
    values = graph.value_map
    for value in graph.values:
        if value.shape is None or value.shape[0] != BATCH:
            raise IRVerificationError(f"{graph.name}: value {value.name} lacks a batch-first shape")
        if not all(_positive_size(d) for d in value.shape[1:]):
            raise IRVerificationError(
                f"{graph.name}: value {value.name} has a bad shape {value.shape}"
            )
        if value.span is None:
            raise IRVerificationError(f"{graph.name}: value {value.name} has no span")
    for node in graph.nodes:
        for name in node.inputs:
            if name not in defined:
                raise IRVerificationError(f"{graph.name}: {node.id} uses {name} before definition")
        if node.output in defined:
            raise IRVerificationError(f"{graph.name}: {node.output} defined twice")
        if node.output not in values:
            raise IRVerificationError(f"{graph.name}: {node.id} output has no value")
        if node.outputs and (
            node.outputs[0] != node.output
            or any(name not in values or name in defined for name in node.outputs)
        ):
            raise IRVerificationError(f"{graph.name}: {node.id} has bad outputs {node.outputs}")
        if node.op in ("block", "repeat"):
            if node.subgraph is None:
                raise IRVerificationError(f"{graph.name}: {node.id} lacks its subgraph")
            verify(node.subgraph)
        else:
            spec = ops.CATALOG.get(node.op)
            if spec is None:
                raise IRVerificationError(f"{graph.name}: {node.id} has unknown op {node.op}")
            # tensor keywords (index=, attn_mask=) are inputs too, outside the positional arity
            positional, _ = split_inputs(node.args, node.inputs)
            if len(positional) < spec.min_inputs or (
                spec.max_inputs is not None and len(positional) > spec.max_inputs
            ):
                raise IRVerificationError(f"{graph.name}: {node.id} has wrong arity")
        if node.parameters < 0:
            raise IRVerificationError(f"{graph.name}: {node.id} has negative parameters")
        defined.update(node.outputs or (node.output,))
    for name in graph.output_names or (graph.output,):
        if name not in defined:
            raise IRVerificationError(f"{graph.name}: output {name} undefined")


def _positive_size(dim: object) -> bool:
    """A positive int, or a symbolic size (``seq``, ``(seq + 1) // 2``) that can be positive
    over its symbols' declared ranges (lowering checked the rules that need more)."""
    if isinstance(dim, SizeExpr):
        return bounds(dim)[1] > 0
    return isinstance(dim, int) and not isinstance(dim, bool) and dim > 0
