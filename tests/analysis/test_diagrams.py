"""Diagrams: one node per IR node (plus the input), one edge per data dependency, in every
format; Graphviz parses the DOT and renders the SVG when installed; labels are escaped."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from typing import Any

import pytest

from aurane.analysis.diagrams import build_diagram, render_dot, render_mermaid, render_text
from aurane.analysis.diagrams import svg as svg_module
from aurane.analysis.diagrams.common import Diagram
from aurane.analysis.diagrams.mermaid import escape
from aurane.analysis.diagrams.text import rich_tree
from aurane.compiler import run_front_end
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.source import Span
from tests.conftest import CORPUS, corpus_files

SPAN = Span(1, 1, 1, 2)
HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="graphviz 'dot' is not installed")


def dot_json(diagram: Diagram) -> dict[str, Any]:
    """Graphviz's own reading of the diagram's DOT (``dot -Tjson0``)."""
    done = subprocess.run(
        ["dot", "-Tjson0"],
        input=render_dot(diagram),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def corpus_graphs() -> list[tuple[str, Graph]]:
    found = []
    for name in corpus_files("valid"):
        path = CORPUS / "valid" / name
        result = run_front_end(path.read_text(), str(path))
        found += [(f"{name}:{g.name}", g) for g in result.graphs.values()]
    return found


GRAPHS = corpus_graphs()
IDS = [key for key, _ in GRAPHS]


def ir_counts(graph: Graph, expand: bool) -> tuple[int, int]:
    """(nodes, data dependencies) of the graph, blocks inlined when ``expand``."""
    nodes = edges = 0
    for node in graph.nodes:
        if expand and node.subgraph is not None:
            inner_nodes, inner_edges = ir_counts(node.subgraph, expand)
            nodes += node.repeat * inner_nodes
            edges += node.repeat * inner_edges
        else:
            nodes += 1
            edges += len(node.inputs)
    return nodes, edges


def ir_edges(graph: Graph) -> list[tuple[str, str]]:
    return [(source, node.id) for node in graph.nodes for source in node.inputs]


def dot_structure(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Node statements and edges of our DOT output (a small structural parser)."""
    nodes = re.findall(r"^\s*(n\d+) \[label=", text, flags=re.M)
    edges = re.findall(r"^\s*(n\d+) -> (n\d+);$", text, flags=re.M)
    assert text.count("{") == text.count("}")
    return nodes, edges


def mermaid_structure(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    lines = text.splitlines()
    assert lines[0] == "flowchart TB"
    nodes = [m.group(1) for line in lines if (m := re.match(r'^\s*(n\d+)[\[(]+"', line))]
    edges = [
        (m.group(1), m.group(2))
        for line in lines
        if (m := re.match(r"^\s*(n\d+) --> (n\d+)$", line))
    ]
    opened = sum(1 for line in lines if line.strip().startswith("subgraph "))
    assert opened == sum(1 for line in lines if line.strip() == "end")
    for line in lines:  # every label is one quoted string with no raw quote inside
        if re.match(r"^\s*(n\d+|subgraph c\d+)[\[(]", line):
            assert line.count('"') == 2, line
    return nodes, edges


def check_structure(
    diagram: Diagram, graph: Graph, expand: bool, nodes: list[str], edges: list[tuple[str, str]]
) -> None:
    want_nodes, want_edges = ir_counts(graph, expand)
    assert len(nodes) == len(set(nodes)) == want_nodes + 1  # + the input
    assert len(edges) == want_edges
    assert set(nodes) == {n.id for n in diagram.nodes}
    assert all(a in set(nodes) and b in set(nodes) for a, b in edges)
    assert sorted(edges) == sorted((e.source, e.target) for e in diagram.edges)


@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize(("key", "graph"), GRAPHS, ids=IDS)
def test_dot_and_mermaid_match_the_ir(key: str, graph: Graph, expand: bool) -> None:
    diagram = build_diagram(graph, expand=expand)
    check_structure(diagram, graph, expand, *dot_structure(render_dot(diagram)))
    check_structure(diagram, graph, expand, *mermaid_structure(render_mermaid(diagram)))
    assert sum(n.is_output for n in diagram.nodes) == 1
    if not expand:  # collapsed: the edges are exactly the IR's, by node name
        by_id = {n.id: n.name for n in diagram.nodes}
        got = sorted((by_id[e.source], by_id[e.target]) for e in diagram.edges)
        assert got == sorted(ir_edges(graph))
        output = next(n for n in diagram.nodes if n.is_output)
        assert output.name == graph.output or graph.output == graph.input


@needs_dot
@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize(("key", "graph"), GRAPHS, ids=IDS)
def test_graphviz_parses_dot_and_renders_svg(key: str, graph: Graph, expand: bool) -> None:
    diagram = build_diagram(graph, expand=expand)
    parsed = dot_json(diagram)
    nodes = [o for o in parsed.get("objects", []) if "nodes" not in o]
    clusters = [o for o in parsed.get("objects", []) if "nodes" in o]
    want_nodes, want_edges = ir_counts(graph, expand)
    assert len(nodes) == want_nodes + 1
    assert len(parsed.get("edges", [])) == want_edges
    assert len(clusters) == len(diagram.clusters)
    svg = svg_module.render_svg(diagram)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "</svg>" in svg


def test_blocks_collapse_and_expand() -> None:
    graph = dict(GRAPHS)["composition.aur:Encoder"]
    collapsed = build_diagram(graph)
    assert [n.op for n in collapsed.nodes] == ["input", "repeat EncoderBlock x3", "dense"]
    assert collapsed.clusters == ()
    expanded = build_diagram(graph, expand=True)
    assert len(expanded.clusters) == 3 and len(expanded.nodes) == 1 + 3 * 7 + 1
    assert any(n.path == "repeat1[2]/dense1" for n in expanded.nodes)
    # copy 2 reads copy 1's output: the chain is real data flow
    first_out = next(n for n in expanded.nodes if n.path == "repeat1[1]/layer_norm2")
    second_in = next(n for n in expanded.nodes if n.path == "repeat1[2]/multihead_attention1")
    assert any(e.source == first_out.id and e.target == second_in.id for e in expanded.edges)


def test_branches_and_merges_are_drawn() -> None:
    diagram = build_diagram(dict(GRAPHS)["branched.aur:Branched"])
    names = {n.id: n.name for n in diagram.nodes}
    edges = {(names[e.source], names[e.target]) for e in diagram.edges}
    assert {
        ("x", "dense1"),
        ("x", "dense2"),
        ("dense1", "concat1"),
        ("dense2", "concat1"),
        ("x", "add1"),
        ("dense3", "add1"),
    } <= edges
    labels = "\n".join(" | ".join(n.lines) for n in diagram.nodes)
    assert "dense1 | dense | (4,) | 36 params" in labels
    assert "relu1 | relu | (8,) | 0 params | returned" in labels


NASTY = 'we"ird\\N <b>&#x</b> `code` |pipe|'


def nasty_graph() -> Graph:
    values = (Value("x", (BATCH, 4), None, SPAN, "x"), Value(NASTY, (BATCH, 4), None, SPAN))
    node = Node(NASTY, "relu", {}, ("x",), NASTY, 0, SPAN)
    return Graph(NASTY, "x", NASTY, values, (node,), SPAN, None)


def test_labels_are_escaped_per_format() -> None:
    diagram = build_diagram(nasty_graph())
    dot = render_dot(diagram)
    assert 'we\\"ird\\\\N' in dot
    mermaid = render_mermaid(diagram)
    mermaid_structure(mermaid)
    assert "<b>" not in mermaid and "#lt;b#gt;" in mermaid and "#quot;" in mermaid
    assert escape("a#b") == "a#35;b"
    assert NASTY in render_text(diagram)


@needs_dot
def test_graphviz_keeps_escaped_labels_literal() -> None:
    diagram = build_diagram(nasty_graph())
    assert dot_json(diagram)["name"] == NASTY.replace("\\", "_").replace('"', "_")
    svg = svg_module.render_svg(diagram)
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    assert NASTY in texts  # Graphviz drew the name literally: no escape sequence fired


def test_svg_without_graphviz_has_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(svg_module, "dot_program", lambda: None)
    with pytest.raises(svg_module.RenderError, match="Graphviz 'dot' program"):
        svg_module.render_svg(build_diagram(nasty_graph()))


def test_text_tree_lists_every_node_with_its_inputs() -> None:
    graph = dict(GRAPHS)["composition.aur:SmallResNet"]
    text = render_text(build_diagram(graph, expand=True))
    assert text.splitlines()[0] == "model SmallResNet  (2,596 params)"
    assert "residualunit1: ResidualUnit" in text
    assert "add1  add  (8, 16, 16)  0 params  <- relu1, residualunit1/conv2d2" in text
    assert text.rstrip().endswith("-> returned")
    tree = rich_tree(build_diagram(graph))
    try:
        import rich  # noqa: F401
    except ImportError:
        assert tree is None
    else:
        assert tree is not None
