"""IR as text and JSON (the ``aurane ir`` outputs)."""

from __future__ import annotations

import json

from aurane.ir.graph import Graph
from aurane.ir.inits import effective_inits, layer_path
from aurane.ops.rules import fmt_shape
from aurane.ops.spec import split_inputs
from aurane.semantics.inits import InitSpec


def graphs_to_json(graphs: list[Graph]) -> str:
    return json.dumps({"models": [g.to_json() for g in graphs]}, indent=2)


def graph_to_text(
    graph: Graph,
    indent: str = "",
    inits: dict[str, dict[str, InitSpec]] | None = None,
    prefix: str = "",
) -> str:
    """``inits``: every layer's initialisers by path (of the top graph; a repeat's block shows
    its first copy's), ``prefix`` this graph's path in it."""
    values = graph.value_map
    if inits is None:
        inits = effective_inits(graph)
    params = ", ".join(
        f"{v.name}: {fmt_shape(v.shape)} {v.dtype or '?'}" + _default(graph, v.name)
        for v in graph.inputs
    )
    returned = ", ".join(v.name for v in graph.outputs)
    lines = [
        f"{indent}graph {graph.name}({params}) -> {returned}   # {graph.parameters:,} parameters"
    ]
    for node in graph.nodes:
        out = values[node.output]
        target = node.output
        if node.outputs:  # a block with several outputs: each one's shape
            target = ", ".join(node.outputs)
            shapes = ", ".join(
                f"{fmt_shape(values[o].shape)} {values[o].dtype or '?'}" for o in node.outputs
            )
            lines.append(
                f"{indent}  {target}: ({shapes}) = {node.op}[{node.block}]"
                f"({', '.join(node.inputs)})   # {node.parameters:,} params @ {node.span}"
                + _init_note(inits.get(prefix + layer_path(node)))
            )
            if node.subgraph is not None:
                inner = f"{prefix}{layer_path(node)}."
                lines.append(graph_to_text(node.subgraph, indent + "    ", inits, inner))
            continue
        positional, tensors = split_inputs(node.args, node.inputs)
        args = ", ".join(
            f"{k}={tensors[k] if k in tensors else repr(v)}"
            for k, v in node.args.items()
            if k != "block"
        )
        call = f"{node.op}[{node.block}]" if node.block else node.op
        times = f" x{node.repeat}" if node.op == "repeat" else ""
        lines.append(
            f"{indent}  {node.output}: {fmt_shape(out.shape)} {out.dtype or '?'} = "
            f"{call}{times}({', '.join(positional)}{', ' if args and positional else ''}{args})"
            f"   # {node.parameters:,} params @ {node.span}"
            + _init_note(inits.get(prefix + layer_path(node)))
        )
        if node.subgraph is not None:
            inner = f"{prefix}{layer_path(node)}." + ("0." if node.op == "repeat" else "")
            lines.append(graph_to_text(node.subgraph, indent + "    ", inits, inner))
    lines.append(f"{indent}  return {returned}")
    return "\n".join(lines)


def _default(graph: Graph, name: str) -> str:
    """`` = ones`` after an optional input."""
    if name not in graph.input_defaults:
        return ""
    return f" = {graph.input_defaults[name]}"


def _init_note(specs: dict[str, InitSpec] | None) -> str:
    if not specs:
        return ""
    return "  init " + ", ".join(f"{param}={spec.text()}" for param, spec in specs.items())
