"""Shape facts for level-2 rewrites, read from the IR (the only source of shapes).

A step's call span identifies its IR node. One AST call can lower several times
(a block called at different input shapes, or also lowered on its own), so a fact
holds for a span only if it holds in *every* lowering that contains it; a span
never lowered (an unused block) has no facts. Any diagnostic error means no facts
at all: rewrites never reason about a program the front end rejects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aurane.diagnostics import has_errors
from aurane.ir.graph import Graph, Node, Value
from aurane.ir.lower import lower_program
from aurane.optimize.chains import drop_steps, map_program, plain_call
from aurane.semantics.check import analyze
from aurane.semantics.constants import resolve_program
from aurane.source import Span
from aurane.syntax import ast

NodeFact = Callable[[Node, tuple[Value, ...], Value], bool]


def lower_quietly(program: ast.AuraneProgram) -> dict[str, Graph] | None:
    """The program's graphs, or None if any stage reports an error."""
    resolved, found = resolve_program(program)
    if has_errors(found):
        return None
    semantic = analyze(resolved)
    if has_errors(semantic.diagnostics):
        return None
    graphs, found = lower_program(resolved, semantic)
    return None if has_errors(found) else graphs


def iter_nodes(graphs: dict[str, Graph]) -> Iterator[tuple[Graph, Node]]:
    pending = list(graphs.values())
    while pending:
        graph = pending.pop()
        for node in graph.nodes:
            yield graph, node
            if node.subgraph is not None:
                pending.append(node.subgraph)


def spans_where(program: ast.AuraneProgram, op: str, fact: NodeFact) -> frozenset[Span]:
    """Spans of main (non-suffix) ``op`` nodes for which ``fact`` holds in every lowering."""
    graphs = lower_quietly(program)
    if graphs is None:
        return frozenset()
    holds: dict[Span, bool] = {}
    for graph, node in iter_nodes(graphs):
        if node.op != op or node.suffix_of is not None:
            continue
        values = graph.value_map
        inputs = tuple(values[name] for name in node.inputs)
        ok = fact(node, inputs, values[node.output])
        holds[node.span] = holds.get(node.span, True) and ok
    return frozenset(span for span, ok in holds.items() if ok)


def drop_where(program: ast.AuraneProgram, op: str, fact: NodeFact) -> ast.AuraneProgram:
    """Drop the plain ``op`` chain steps for which ``fact`` holds at every lowering."""
    spans = spans_where(program, op, fact)
    if not spans:
        return program

    def identity(previous: ast.Call | None, step: ast.Call) -> bool:
        return plain_call(step, op) and step.span in spans

    return map_program(program, steps=lambda steps: drop_steps(steps, identity))


def same_type(node: Node, inputs: tuple[Value, ...], output: Value) -> bool:
    """One input whose shape (batch included) and dtype equal the output's."""
    return (
        len(inputs) == 1
        and inputs[0].shape is not None
        and inputs[0].shape == output.shape
        and inputs[0].dtype == output.dtype
    )
