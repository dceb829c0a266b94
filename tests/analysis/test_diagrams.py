"""Diagrams: every IR node drawn once (activations and suffixes folded into the node they
follow), one edge per data dependency between drawn nodes, in every format; Aurane's own
SVG renderer draws them all without overlaps; Graphviz parses the DOT when installed;
labels are escaped."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from typing import Any
from xml.etree import ElementTree

import pytest

from aurane.analysis.diagrams import build_diagram, render_dot, render_mermaid, render_text
from aurane.analysis.diagrams import svg as svg_module
from aurane.analysis.diagrams.common import FAMILIES, Diagram
from aurane.analysis.diagrams.mermaid import escape
from aurane.analysis.diagrams.text import rich_tree
from aurane.frontend import run_front_end
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.source import Span
from tests.conftest import VALID, corpus_files

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
        path = VALID / name
        result = run_front_end(path.read_text(), str(path))
        found += [(f"{name}:{g.name}", g) for g in result.graphs.values()]
    return found


GRAPHS = corpus_graphs()
IDS = [key for key, _ in GRAPHS]


def ir_counts(graph: Graph, expand: bool) -> tuple[int, int]:
    """(IR nodes, data dependencies) of the graph, blocks inlined when ``expand``."""
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
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)(?: \[[^\n]*\])?;$", text, flags=re.M)
    assert text.count("{") == text.count("}")
    return nodes, edges


def mermaid_structure(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    lines = text.splitlines()
    assert lines[0] == "flowchart TB"
    nodes = [m.group(1) for line in lines if (m := re.match(r'^\s*(n\d+)[\[(]+"', line))]
    edges = [
        (m.group(1), m.group(2))
        for line in lines
        if (m := re.match(r'^\s*(n\d+) -(?:->|\.->)(?:\|"[^"]*"\|)? (n\d+)$', line))
    ]
    opened = sum(1 for line in lines if line.strip().startswith("subgraph "))
    assert opened == sum(1 for line in lines if line.strip() == "end")
    for line in lines:  # every label is one quoted string with no raw quote inside
        if re.match(r"^\s*(n\d+|subgraph c\d+|legend_\w+)[\[(]", line):
            assert line.count('"') == 2, line
    return nodes, edges


def check_structure(
    diagram: Diagram, graph: Graph, expand: bool, nodes: list[str], edges: list[tuple[str, str]]
) -> None:
    """Every IR node is drawn exactly once (alone or folded into the node it follows), every
    data dependency between two diagram nodes is an edge, and nothing else is."""
    want_nodes, want_edges = ir_counts(graph, expand)
    members = [m for n in diagram.nodes[1:] for m in n.members]
    assert len(members) == len(set(members)) == want_nodes
    assert len(nodes) == len(set(nodes)) == len(diagram.nodes) <= want_nodes + 1
    assert set(nodes) == {n.id for n in diagram.nodes}
    assert all(a in set(nodes) and b in set(nodes) for a, b in edges)
    assert sorted(edges) == sorted((e.source, e.target) for e in diagram.edges)
    assert len(edges) <= want_edges
    folded = sum(len(n.members) - 1 for n in diagram.nodes[1:])
    assert len(diagram.nodes) == want_nodes + 1 - folded


@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize(("key", "graph"), GRAPHS, ids=IDS)
def test_dot_and_mermaid_match_the_ir(key: str, graph: Graph, expand: bool) -> None:
    diagram = build_diagram(graph, expand=expand)
    check_structure(diagram, graph, expand, *dot_structure(render_dot(diagram)))
    check_structure(diagram, graph, expand, *mermaid_structure(render_mermaid(diagram)))
    assert sum(n.is_output for n in diagram.nodes) == 1
    if not expand:  # collapsed: the edges are the IR's between the nodes that stay
        owner = {
            m: n.name if n.kind == "input" else n.members[0]
            for n in diagram.nodes
            for m in (n.members or (n.name,))
        }
        owner[graph.input] = diagram.nodes[0].name
        want = {
            (owner[source_node(graph, s)], owner[t])
            for s, t in ir_edges(graph)
            if owner[source_node(graph, s)] != owner[t]
        }
        by_id = {n.id: n.name for n in diagram.nodes}
        assert {(by_id[e.source], by_id[e.target]) for e in diagram.edges} == want
        output = next(n for n in diagram.nodes if n.is_output)
        assert source_node(graph, graph.output) in (output.members or (output.name,))


def source_node(graph: Graph, value: str) -> str:
    """The IR node producing ``value`` (the input's name for the input)."""
    return next((n.id for n in graph.nodes if n.output == value), graph.input)


@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize(("key", "graph"), GRAPHS, ids=IDS)
def test_own_svg_renderer_draws_every_node_and_edge(key: str, graph: Graph, expand: bool) -> None:
    diagram = build_diagram(graph, expand=expand)
    svg = svg_module.render_svg(diagram)
    root = ElementTree.fromstring(svg.split("?>", 1)[1])  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    groups = list(root.iter(f"{ns}g"))
    drawn = [g.get("data-id") for g in groups if (g.get("class") or "").startswith("node")]
    assert drawn == [n.id for n in diagram.nodes]
    edges = [
        (g.get("data-source"), g.get("data-target")) for g in groups if g.get("class") == "edge"
    ]
    assert edges == [(e.source, e.target) for e in diagram.edges]
    clusters = [g for g in groups if g.get("class") == "cluster"]
    assert len(clusters) == len(diagram.clusters)
    legend = next(g for g in groups if g.get("class") == "legend")
    legend_text = [t.text for t in legend.iter(f"{ns}text")][1:]
    assert legend_text == [FAMILIES[f][0] for f in diagram.families]


@pytest.mark.parametrize(("key", "graph"), GRAPHS, ids=IDS)
def test_svg_layout_has_no_overlapping_nodes(key: str, graph: Graph) -> None:
    boxes, width, height = svg_module.layout(build_diagram(graph, expand=True))
    placed = list(boxes.values())
    for i, a in enumerate(placed):
        assert a.left >= 0 and a.right <= width and a.bottom <= height
        for b in placed[i + 1 :]:
            apart = a.right <= b.left or b.right <= a.left or a.bottom <= b.y or b.bottom <= a.y
            assert apart, (a.node.path, b.node.path)
    for edge in build_diagram(graph, expand=True).edges:  # data flows downwards
        assert boxes[edge.source].rank < boxes[edge.target].rank


@needs_dot
@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize(("key", "graph"), GRAPHS, ids=IDS)
def test_graphviz_parses_dot_and_renders_svg(key: str, graph: Graph, expand: bool) -> None:
    diagram = build_diagram(graph, expand=expand)
    parsed = dot_json(diagram)
    objects = parsed.get("objects", [])
    nodes = [o for o in objects if "nodes" not in o and not o["name"].startswith("legend_")]
    clusters = [o for o in objects if "nodes" in o and o["name"] != "cluster_legend"]
    assert len(nodes) == len(diagram.nodes)
    assert len(parsed.get("edges", [])) == len(diagram.edges)
    assert len(clusters) == len(diagram.clusters)
    svg = svg_module.render_graphviz_svg(diagram)
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "</svg>" in svg


def test_blocks_collapse_and_expand() -> None:
    graph = dict(GRAPHS)["composition.aur:Encoder"]
    collapsed = build_diagram(graph)
    assert [n.title for n in collapsed.nodes] == ["input", "EncoderBlock x3", "dense(10)"]
    assert [n.family for n in collapsed.nodes] == ["input", "block", "linear"]
    assert collapsed.clusters == ()
    expanded = build_diagram(graph, expand=True)
    # 7 IR nodes per copy; the residual suffix and the gelu fold: 5 diagram nodes per copy
    assert len(expanded.clusters) == 3 and len(expanded.nodes) == 1 + 3 * 5 + 1
    assert [c.label for c in expanded.clusters][1] == "EncoderBlock (copy 2 of 3)"
    assert {c.path for c in expanded.clusters} == {"repeat1"}
    attention = next(n for n in expanded.nodes if n.path == "repeat1[2]/multihead_attention1")
    assert attention.members == (
        "repeat1[2]/multihead_attention1",
        "repeat1[2]/residual1",
    )
    assert attention.title == "multihead_attention(4, dim=48) + residual"
    assert attention.family == "attention"
    # copy 2 reads copy 1's output: the chain is real data flow
    first_out = next(n for n in expanded.nodes if n.path == "repeat1[1]/layer_norm2")
    assert any(e.source == first_out.id and e.target == attention.id for e in expanded.edges)


def test_one_block_expands_on_request() -> None:
    graph = dict(GRAPHS)["composition.aur:SmallResNet"]
    diagram = build_diagram(graph, expand=["residualunit2"])
    assert [c.path for c in diagram.clusters] == ["residualunit2"]
    blocks = [n for n in diagram.nodes if n.kind == "block"]
    assert [n.path for n in blocks] == ["residualunit1"] and blocks[0].expandable
    inner = [n.title for n in diagram.nodes if n.cluster is not None]
    assert inner == [
        "conv2d(8, kernel=3, padding=1) + relu",
        "conv2d(8, kernel=3, padding=1)",
        "add + relu",
    ]
    assert [n.label for n in diagram.nodes if n.cluster is not None] == ["h", "h", None]


def test_branches_merges_names_and_shape_labels() -> None:
    diagram = build_diagram(dict(GRAPHS)["branched.aur:Branched"])
    names = {n.id: n.name for n in diagram.nodes}
    edges = {(names[e.source], names[e.target]) for e in diagram.edges}
    assert {
        ("x", "dense1"),
        ("x", "dense2"),
        ("dense1", "concat1"),
        ("dense2", "concat1"),
        ("concat1", "dense3"),
        ("x", "add1"),
        ("dense3", "add1"),
    } == edges
    labels = "\n".join(" | ".join(n.lines) for n in diagram.nodes)
    # the user's names, the call as written, no "0 params", no "dense1 / dense"
    assert "dense(4) | left | (4,) | 36 params" in labels
    assert "concat(dim=1) | joined | (6,)\n" in labels
    assert "add + relu | result | (8,) | returned" in labels
    assert "0 params" not in labels and "dense1" not in labels
    shapes = {(names[e.source], names[e.target]): e.shape for e in diagram.edges}
    assert shapes[("x", "dense1")] == "(8,)"  # from the input: always labelled
    assert shapes[("dense1", "concat1")] == "(4,)"  # dense changed (8,) to (4,)
    assert shapes[("dense3", "add1")] == "(8,)"  # dense3 changed (6,) to (8,)
    families = {n.name: n.family for n in diagram.nodes}
    assert families == {
        "x": "input",
        "dense1": "linear",
        "dense2": "linear",
        "concat1": "merge",
        "dense3": "linear",
        "add1": "merge",
    }
    assert diagram.families == ("input", "linear", "merge")


def test_shape_label_only_where_the_shape_changes() -> None:
    diagram = build_diagram(dict(GRAPHS)["composition.aur:SmallResNet"])
    by_title = {n.id: n.title for n in diagram.nodes}
    labels = [(by_title[e.source], by_title[e.target], e.shape) for e in diagram.edges]
    assert labels == [
        ("input", "conv2d(8, kernel=3, padding=1) + relu", "(3, 16, 16)"),
        ("conv2d(8, kernel=3, padding=1) + relu", "ResidualUnit", "(8, 16, 16)"),
        ("ResidualUnit", "ResidualUnit", None),  # (8, 16, 16) in, (8, 16, 16) out
        ("ResidualUnit", "global_avg_pool", None),
        ("global_avg_pool", "dense(4)", "(8,)"),
    ]
    dot = render_dot(diagram)
    assert 'n1 -> n2 [label="(8, 16, 16)"];' in dot and "n2 -> n3;" in dot
    assert "legend_conv" in dot and "legend_block" in dot
    mermaid = render_mermaid(diagram)
    assert 'n4 -->|"(8,)"| n5' in mermaid and "classDef fam_conv" in mermaid


def test_a_residual_suffix_keeps_its_skip_edge() -> None:
    values = (
        Value("x", (BATCH, 8), None, SPAN, "x"),
        Value("h", (BATCH, 8), None, SPAN, "h"),
        Value("d", (BATCH, 8), None, SPAN),
        Value("r", (BATCH, 8), None, SPAN),
    )
    nodes = (
        Node("dense1", "dense", {"features": 8}, ("x",), "h", 72, SPAN),
        Node("dense2", "dense", {"features": 8}, ("h",), "d", 72, SPAN),
        Node("residual1", "add", {}, ("h", "d"), "r", 0, SPAN, suffix_of="dense2"),
    )
    diagram = build_diagram(Graph("Res", "x", "r", values, nodes, SPAN, None))
    assert [n.title for n in diagram.nodes] == ["input", "dense", "dense + residual"]
    skip = [e for e in diagram.edges if e.kind == "residual"]
    assert [(e.source, e.target) for e in skip] == [("n1", "n2")]
    assert "style=dashed" in render_dot(diagram)
    assert "n1 -.-> n2" in render_mermaid(diagram)
    assert 'stroke-dasharray="5 3"' in svg_module.render_svg(diagram)


NASTY = 'we"ird\\N <b>&#x</b> `code` |pipe|'


def nasty_graph() -> Graph:
    values = (Value("x", (BATCH, 4), None, SPAN, "x"), Value(NASTY, (BATCH, 4), None, SPAN, NASTY))
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
    svg = svg_module.render_graphviz_svg(diagram)
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    assert any(NASTY in t for t in texts)  # Graphviz drew the name literally


def test_own_svg_escapes_every_text() -> None:
    diagram = build_diagram(nasty_graph())
    svg = svg_module.render_svg(diagram)
    root = ElementTree.fromstring(svg.split("?>", 1)[1])  # still well-formed XML
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(NASTY in t for t in texts) and "<b>" not in svg
    assert root.get("data-model") == NASTY


def test_svg_needs_no_graphviz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(svg_module, "dot_program", lambda: None)
    svg = svg_module.render_svg(build_diagram(nasty_graph()))
    assert "</svg>" in svg
    with pytest.raises(svg_module.RenderError, match="Graphviz 'dot' program"):
        svg_module.render_graphviz_svg(build_diagram(nasty_graph()))


def test_text_tree_lists_every_node_with_its_inputs() -> None:
    graph = dict(GRAPHS)["composition.aur:SmallResNet"]
    text = render_text(build_diagram(graph, expand=True))
    assert text.splitlines()[0] == "model SmallResNet  (2,596 params)"
    assert "ResidualUnit" in text.splitlines()[3]
    assert "add + relu  (8, 16, 16)  <- conv2d1, residualunit1/conv2d2" in text
    assert text.rstrip().endswith("-> returned")
    tree = rich_tree(build_diagram(graph))
    try:
        import rich  # noqa: F401
    except ImportError:
        assert tree is None
    else:
        assert tree is not None


def test_every_catalog_op_has_a_colour_family() -> None:
    from aurane import ops
    from aurane.analysis.diagrams.common import family

    families = {name: family(name) for name in ops.CATALOG}
    assert set(families.values()) <= set(FAMILIES)
    assert families["conv_transpose2d"] == "conv" and families["dense"] == "linear"
    assert families["batchnorm"] == families["rms_norm"] == "norm"
    assert families["gelu"] == families["softmax"] == "activation"
    assert families["maxpool"] == families["global_avg_pool"] == "pool"
    assert families["multihead_attention"] == "attention" and families["lstm"] == "recurrent"
    assert families["concat"] == families["add"] == "merge"
    assert families["flatten"] == "reshape" and families["dropout"] == "regularization"
    assert families["embedding"] == "embedding"
    assert family("block") == family("repeat") == "block"
    # every family has its own colour
    assert len({fill for _, fill, _ in FAMILIES.values()}) == len(FAMILIES)


LOOP = """model Stage(c):
    def forward(x):
        return x -> conv2d(c, kernel=3, padding=1).relu

model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        x -> conv2d(8, kernel=1) as stem
        for i, c in enumerate([8, 16, 32]):
            x -> Stage(c) as layer{i + 1}
        return x -> global_avg_pool() -> dense(4)
"""


def test_a_loop_is_one_collapsible_group() -> None:
    front = run_front_end(LOOP, "loop.aur")
    assert front.ok
    graph = front.graphs["Net"]
    collapsed = build_diagram(graph)
    loop = next(n for n in collapsed.nodes if n.op == "loop")
    assert loop.path == "for@9:9" and loop.expandable and loop.family == "block"
    assert loop.title == "for i, c in enumerate([8, 16, 32]) x3"
    assert loop.members == ("stage1", "stage2", "stage3") and loop.shape == "(32, 16, 16)"
    assert loop.parameters == sum(n.parameters for n in graph.nodes[1:4])
    assert [n.title for n in collapsed.nodes].count("Stage(8)") == 0
    svg = svg_module.render_svg(collapsed)
    assert 'data-block="for@9:9"' in svg
    expanded = build_diagram(graph, expand=["for@9:9"])
    (cluster,) = expanded.clusters
    assert (cluster.path, cluster.label) == (
        "for@9:9",
        "for i, c in enumerate([8, 16, 32]) (3 iterations)",
    )
    inside = [n.title for n in expanded.nodes if n.cluster == cluster.id]
    assert inside == ["Stage(8)", "Stage(16)", "Stage(32)"]
    everything = build_diagram(graph, expand=True)  # the loop and the blocks inside it
    assert len(everything.clusters) == 4
    assert "subgraph cluster_" in render_dot(expanded)
    assert "subgraph c0" in render_mermaid(expanded)
