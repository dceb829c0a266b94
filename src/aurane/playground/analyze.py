"""One analysis of the playground's editor text, as JSON for the page.

Everything comes from the same passes as the command line: the front end
(``run_front_end``) for diagnostics and IR graphs, ``analysis.profile`` for the per-layer
table, ``analysis.diagrams`` (the one SVG renderer) for the architecture, and the torch
backend with its source map (``sourcemap.class_maps``) for the generated PyTorch and which
generated lines each ``.aur`` span produced. Positions are 1-based lines and columns, as in
every diagnostic; the page converts them to editor offsets.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator
from typing import Any

from aurane.analysis.diagrams import build_diagram
from aurane.analysis.diagrams.common import call_text
from aurane.analysis.diagrams.svg import render_svg
from aurane.analysis.profile import LayerProfile, profile
from aurane.diagnostics import Diagnostic
from aurane.frontend import FrontEnd, run_front_end
from aurane.ir.graph import Graph, Node, Value
from aurane.ops.rules import fmt_shape
from aurane.source import Span

_Key = tuple[int, int, int, int]  # a span: line, column, end line, end column
MAX_SOURCE = 1_000_000  # characters; a bigger text is refused, not analysed


def _span(span: Span | None) -> dict[str, int] | None:
    return span.to_json() if span is not None else None


def _diagnostic(d: Diagnostic) -> dict[str, Any]:
    return {
        "severity": d.severity,
        "code": d.code,
        "message": d.message,
        "hint": d.hint,
        "span": _span(d.span),
        "labels": [{"span": _span(label.span), "message": label.message} for label in d.labels],
    }


def _count(n: int) -> str:
    for size, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _nodes(graph: Graph, prefix: str = "") -> Iterator[tuple[str, Node, Value]]:
    """Every IR node with its profile path (``residualunit1/conv2d1``) and output value."""
    values = graph.value_map
    for node in graph.nodes:
        yield prefix + node.id, node, values[node.output]
        if node.subgraph is not None:
            yield from _nodes(node.subgraph, f"{prefix}{node.id}/")


def _walk(layers: tuple[LayerProfile, ...], prefix: str = "", depth: int = 0) -> Iterator[Any]:
    for layer in layers:
        path = prefix + layer.node
        yield path, depth, layer
        if layer.children:
            yield from _walk(layer.children, path + "/", depth + 1)


def _model(graph: Graph) -> dict[str, Any]:
    prof = profile(graph)
    nodes = {path: (node, out) for path, node, out in _nodes(graph)}
    rows = []
    for path, depth, layer in _walk(prof.layers):
        node, out = nodes[path]
        rows.append(
            {
                "path": path,
                "depth": depth,
                "op": layer.op if layer.block is None else f"block {layer.block}",
                "call": call_text(node),
                "name": out.source_name,
                "layer": node.layer,
                "shape": fmt_shape(layer.output_shape),
                "dtype": layer.dtype,
                "parameters": layer.parameters,
                "flops": layer.flops + layer.other_flops,
                "macs": layer.macs,
                "span": _span(node.span),
                "block": node.subgraph is not None,
                "suffix": node.suffix_of is not None,
            }
        )
    return {
        "name": graph.name,
        "input_shape": fmt_shape(prof.input_shape),
        "output_shape": fmt_shape(prof.output_shape),
        **(
            {
                "inputs": [{"name": n, "shape": fmt_shape(s)} for n, s, _, _ in prof.inputs],
                "outputs": [{"name": n, "shape": fmt_shape(s)} for n, s, _ in prof.outputs],
            }
            if prof.inputs
            else {}
        ),
        "parameters": prof.parameters,
        "flops": prof.flops + prof.other_flops,
        "layers": rows,
    }


def _hovers(graphs: Collection[Graph]) -> list[dict[str, Any]]:
    """One hover text per IR node span (a block's layers once) and per named value. A
    statement unrolled from a loop makes one node per iteration at the same span: its hover
    lists every iteration (as the LSP's does), not only the first."""
    found: dict[_Key, str] = {}
    first: dict[_Key, tuple[str, str]] = {}  # the graph (block call) and operation shown
    rounds: dict[_Key, list[str]] = {}
    for graph in graphs:
        for inp in graph.inputs:  # each input of a model with several
            key = (inp.span.line, inp.span.column, inp.span.end_line, inp.span.end_column)
            text = f"{inp.source_name or inp.name}: input {fmt_shape(inp.sample_shape)}"
            found.setdefault(key, text)
        for path, node, out in _nodes(graph):
            text = f"{call_text(node)} \u2192 {fmt_shape(out.sample_shape)}"
            if out.dtype:
                text += f" {out.dtype}"
            if node.parameters:
                text += f" \u00b7 {node.parameters:,} params"
            if node.layer:
                text += f" \u00b7 self.{node.layer}"
            if "/" in path:
                text += f" (in {path.rsplit('/', 1)[0]})"
            s = node.span
            key = (s.line, s.column, s.end_line, s.end_column)
            owner = (f"{graph.name}/{path.rpartition('/')[0]}", node.op)
            if key not in found:
                found[key] = text
                first[key] = owner
            iteration = ", ".join(node.iterations)  # i = 2, c = 32
            if iteration and first.get(key) == owner:  # the same call's other iterations
                rounds.setdefault(key, []).append(f"{iteration}: {text}")
    for key, lines in rounds.items():
        if len(lines) > 1:
            found[key] = f"{first[key][1]} per iteration:\n" + "\n".join(lines)
    return [
        {"span": {"line": k[0], "column": k[1], "end_line": k[2], "end_column": k[3]}, "text": t}
        for k, t in found.items()
    ]


def _python(front: FrontEnd, filename: str) -> tuple[str | None, list[dict[str, Any]], str | None]:
    """The generated module, its line map and, when generation failed, why."""
    if not front.ok or front.resolved is None:
        return None, [], "fix the errors to see the generated PyTorch"
    try:
        from aurane.backends.torch import TorchCodeGenerator
        from aurane.compile import python_name_problems
        from aurane.sourcemap import class_maps

        unsafe = python_name_problems(front.resolved)
        if unsafe:
            return None, [], unsafe[0].message
        generator = TorchCodeGenerator(front.resolved, front.graphs, filename=filename)
        code = generator.generate()
        maps = class_maps(code, [(p.name, p.graph) for p in generator.plans()])
    except Exception as error:  # a backend bug must not take the page down
        return None, [], f"the torch backend failed: {error}"
    mapping: list[dict[str, Any]] = []
    for cmap in maps.values():
        for first, last, node in cmap.init_lines:
            mapping.append(_map_entry(first, last, node, cmap.graph.name, "init"))
        for stmt in cmap.statements:
            for node in stmt.nodes:
                mapping.append(_map_entry(stmt.first, stmt.last, node, cmap.graph.name, "forward"))
    return code, mapping, None


def _map_entry(first: int, last: int, node: Node, model: str, part: str) -> dict[str, Any]:
    return {
        "first": first,
        "last": last,
        "node": node.id,
        "model": model,
        "part": part,
        "span": _span(node.span),
    }


def analyze(
    text: str,
    filename: str = "playground.aur",
    *,
    model: str | None = None,
    expand: Collection[str] | bool = False,
) -> dict[str, Any]:
    """The page's whole state for ``text``: diagnostics, models, diagram, Python, maps."""
    started = time.perf_counter()
    if len(text) > MAX_SOURCE:
        return {
            "ok": False,
            "diagnostics": [
                {
                    "severity": "error",
                    "code": "playground",
                    "message": f"the text is longer than {MAX_SOURCE:,} characters",
                    "hint": None,
                    "span": None,
                    "labels": [],
                }
            ],
            "models": [],
            "diagram": None,
            "python": None,
            "python_error": "too long",
            "mapping": [],
            "hovers": [],
            "elapsed_ms": 0.0,
        }
    front = run_front_end(text, filename)
    graphs = front.graphs
    models = [_model(g) for g in graphs.values()]
    chosen = model if model in graphs else next(iter(graphs), None)
    diagram = None
    if chosen is not None:
        built = build_diagram(graphs[chosen], expand=expand)
        diagram = {
            "model": chosen,
            "svg": render_svg(built),
            "data": built.to_json(),
            "expanded": sorted(expand) if not isinstance(expand, bool) else expand,
        }
    python, mapping, python_error = _python(front, filename)
    from aurane.semantics.sizes import jsonable  # symbolic sizes (seq = dim(...)) as formula text

    result = {
        "ok": front.ok,
        "diagnostics": [_diagnostic(d) for d in front.diagnostics],
        "models": models,
        "diagram": diagram,
        "python": python,
        "python_error": python_error,
        "mapping": mapping,
        "hovers": _hovers(list(graphs.values())),
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return jsonable(result)  # type: ignore[no-any-return]
