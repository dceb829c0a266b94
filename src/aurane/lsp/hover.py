"""Hover: shapes, dtypes, parameters and MACs of what is under the cursor."""

from __future__ import annotations

from lsprotocol import types as lsp

from aurane import ops
from aurane.analysis.profile import LayerProfile, profile_layers
from aurane.ir.graph import Graph, Node, Value
from aurane.lsp.document import LOCAL, Document, Occurrence, walk_graphs
from aurane.lsp.positions import contains, size
from aurane.lsp.text import (
    model_signature,
    op_signature,
    option_spec,
    shape_text,
    span_text,
    word_at,
)
from aurane.source import Span
from aurane.syntax import ast


def _profiles(graphs: dict[str, Graph]) -> dict[tuple[str, str], LayerProfile]:
    """(graph name, node id) -> the node's profile, blocks' layers included."""
    out: dict[tuple[str, str], LayerProfile] = {}

    def visit(graph: Graph) -> None:
        try:
            layers = profile_layers(graph)
        except Exception:  # a partial graph may not profile; hover still shows shapes
            return
        by_id = {layer.node: layer for layer in layers}
        for node in graph.nodes:
            if node.id in by_id:
                out[(graph.name, node.id)] = by_id[node.id]
            if node.subgraph is not None:
                visit(node.subgraph)

    for graph in graphs.values():
        visit(graph)
    return out


def node_at(doc: Document, line: int, column: int) -> tuple[Graph, Node] | None:
    best: tuple[Graph, Node] | None = None
    for graph, node in walk_graphs(doc.graphs):
        if contains(node.span, line, column) and (
            best is None or size(node.span) < size(best[1].span)
        ):
            best = (graph, node)
    return best


def value_of(graph: Graph, name: str) -> Value | None:
    return next((v for v in graph.values if v.name == name), None)


def hover(doc: Document, line: int, column: int) -> lsp.Hover | None:
    word = word_at(doc.lines, line, column)
    occurrence = doc.index.at(line, column)
    parts: list[str] = []
    found = node_at(doc, line, column)
    on_call = (
        found is not None
        and word is not None
        # the call's own name, or the block inside ``repeat(Block(64), 2)``
        and (_on_node_name(found[1], word[1]) or found[1].block == word[0])
    )
    if occurrence is not None and not on_call:
        parts += _symbol_hover(doc, occurrence)
    elif found is not None and word is not None:
        parts += _node_hover(doc, *found)
    if not parts and word is not None:
        spec = ops.lookup(word[0])
        if spec is not None:
            parts += [f"```aurane\n{op_signature(spec.name, spec.params)}\n```", spec.doc]
        option = option_spec(word[0])
        if option is not None:
            parts += [f"```aurane\n{op_signature(option.name, option.params)}\n```", option.doc]
    if not parts:
        return None
    span = word[1] if word is not None else Span(line, column, line, column)
    return lsp.Hover(
        contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n".join(parts)),
        range=doc.lines.range(span),
    )


def _iteration(node: Node) -> str:
    """``iteration i = 2`` (nested loops joined by ', '), or ``''`` outside any loop."""
    return ", ".join(f"iteration {bound}" for bound in node.iterations)


def _on_node_name(node: Node, word: Span) -> bool:
    """Whether ``word`` is the call's own name (a node's span starts at its operation or
    block name), not an argument inside it such as ``h`` in ``add(h, x)``."""
    return (word.line, word.column) == (node.span.line, node.span.column)


def _node_hover(doc: Document, graph: Graph, node: Node) -> list[str]:
    output = value_of(graph, node.output)
    shape = shape_text(output.shape if output else None)
    dtype = output.dtype if output and output.dtype else "?"
    title = node.block if node.block else node.op
    lines = [f"**{title}** → `{shape}` {dtype}"]
    profile = _profiles({graph.name: graph}).get((graph.name, node.id))
    parameters = profile.parameters if profile else node.parameters
    facts = [f"parameters: {parameters:,}"]
    if profile is not None:
        facts.append(f"MACs: {profile.macs:,}")
    lines.append(" · ".join(facts))
    twins = [n for n in graph.nodes if n.span == node.span and n.op == node.op and n.origin]
    if len(twins) > 1:  # an unrolled statement: one node per iteration
        lines.append("per iteration:")
        for twin in twins:
            value = value_of(graph, twin.output)
            shown = shape_text(value.shape if value else None)
            lines.append(f"- {_iteration(twin)}: `{shown}`")
    if node.block is not None:
        model = doc.index.statements.get(node.block)
        if isinstance(model, ast.Model):
            lines.append(f"```aurane\n{model_signature(model, doc.lines)}\n```")
        if node.repeat > 1:
            lines.append(f"repeated {node.repeat} times")
    else:
        spec = ops.lookup(node.op)
        if spec is not None:
            lines.append(f"```aurane\n{op_signature(spec.name, spec.params)}\n```")
            lines.append(spec.doc)
    return lines


def _symbol_hover(doc: Document, occurrence: Occurrence) -> list[str]:
    if occurrence.key[0] == LOCAL:
        model, name = occurrence.key[1], occurrence.key[2]
        head = f"**{name}** ({occurrence.kind} in `{model}`)"
        found = _bound_values(doc, model, name, occurrence)
        facts = sorted(
            {(shape_text(value.shape), value.dtype or "?") for value, _ in found},
            key=str,
        )
        if not facts:
            return [head]
        if len(facts) == 1:
            shape, dtype = facts[0]
            return [head, f"shape `{shape}` · dtype {dtype}"]
        lines = [head]  # a block called with different inputs, or unrolled: one line each
        producers = {n.output: n for _, n in walk_graphs(doc.graphs)}
        for value, call in found:
            where = f" (the call at {call.span.line}:{call.span.column})" if call else ""
            node = producers.get(value.name)
            step = _iteration(node) if node is not None else ""
            lead = f"{step}: " if step else ""
            lines.append(
                f"{lead}shape `{shape_text(value.shape)}` · dtype {value.dtype or '?'}{where}"
            )
        return lines
    stmt = doc.index.statements.get(occurrence.name)
    if isinstance(stmt, ast.Constant):
        return [f"```aurane\n{stmt.name} = {span_text(doc.lines, stmt.value.span)}\n```"]
    if isinstance(stmt, ast.Dataset):
        source = f" from {stmt.source.id}" if stmt.source else ""
        return [f"**dataset {stmt.name}**{source}"]
    if isinstance(stmt, ast.Model):
        parts = [f"```aurane\n{model_signature(stmt, doc.lines)}\n```"]
        graph = doc.graphs.get(stmt.name)
        if graph is not None and graph.several:  # each input and output by name
            ins = ", ".join(f"{v.name} `{shape_text(v.shape)}`" for v in graph.inputs)
            outs = ", ".join(
                f"{graph.output_label(i)} `{shape_text(v.shape)}`"
                for i, v in enumerate(graph.outputs)
            )
            parts.append(f"inputs {ins} → outputs {outs} · parameters: {graph.parameters:,}")
        elif graph is not None:
            parts.append(
                f"input `{shape_text(graph.input_value.shape)}` → output "
                f"`{shape_text(graph.output_value.shape)}` · parameters: {graph.parameters:,}"
            )
            try:
                macs = sum(layer.macs for layer in profile_layers(graph))
                parts.append(f"MACs per sample: {macs:,}")
            except Exception:
                pass
        return parts
    return []


def _bindings(model: ast.Model) -> list[tuple[str, Span, Span]]:
    """(name, name span, statement span) of every tensor binding in the forward body."""
    if model.forward is None:
        return []
    forward = model.forward
    out = [(p.name, p.name_span, p.name_span) for p in forward.inputs]
    for stmt in ast.simple_statements(forward.body):
        if isinstance(stmt, ast.Assign):
            for name, span in stmt.targets or ((stmt.target, stmt.target_span),):
                out.append((name, span, stmt.span))
    return out


def _bound_values(
    doc: Document, model: str, name: str, occurrence: Occurrence
) -> list[tuple[Value, Node | None]]:
    """The value ``occurrence`` denotes in each graph of ``model`` (with the block call).

    A definition denotes what its statement binds; a use denotes the latest binding whose
    statement ends before it (``h = dense(h, 4)`` reads the previous ``h``).
    """
    stmt = doc.index.statements.get(model)
    if not isinstance(stmt, ast.Model):
        return []
    at = occurrence.span
    bindings = [b for b in _bindings(stmt) if b[0] == name]
    if occurrence.definition:
        chosen = next((b for b in bindings if b[1] == at), None)
    else:
        before = [b for b in bindings if (b[2].end_line, b[2].end_column) <= (at.line, at.column)]
        chosen = before[-1] if before else None
    if chosen is None:
        return []
    out: list[tuple[Value, Node | None]] = []
    for graph, call in _graphs_of(doc, model):
        if chosen[1] == chosen[2]:  # a forward parameter: that input of the graph
            found = [v for v in graph.inputs if v.name == name]
            out += [(found[0] if found else graph.input_value, call)]
            continue
        inside = [
            v
            for v in graph.values
            if (v.source_name or v.name) == name and _within(v.span, chosen[2])
        ]
        if not inside:
            continue
        last = max(inside, key=lambda v: (v.span.line, v.span.column))
        # an unrolled statement binds the name once per iteration: every iteration's value
        out += [(v, call) for v in inside if v.span == last.span]
    return out


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _graphs_of(doc: Document, model: str) -> list[tuple[Graph, Node | None]]:
    out: list[tuple[Graph, Node | None]] = [
        (g, None) for g in doc.graphs.values() if g.name == model
    ]
    out += [(n.subgraph, n) for _, n in walk_graphs(doc.graphs) if n.subgraph and n.block == model]
    return out
