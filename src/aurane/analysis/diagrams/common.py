"""The one node/edge list every diagram format renders, built from the IR.

Nodes are the model input and one per IR node; edges are the IR's data dependencies (one per
input of each node, so branches and merges appear as they are). The returned value's node
is marked. A composed block (``block``/``repeat`` node) is one node by default; expanded, its
layers replace it inside a cluster (every copy of a repeat, chained), and their edges connect
to the caller's values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from aurane.analysis.naming import op_text
from aurane.ir.graph import Graph, Node
from aurane.ops.rules import fmt_shape as shape_text


@dataclass(frozen=True)
class DiagramNode:
    id: str  # a safe identifier in every format: n0, n1, ...
    path: str  # the IR name, qualified inside expanded blocks: residualunit1/conv2d1
    name: str  # the IR node id (or the input's name)
    op: str  # "input", a catalog op, "block Name" or "repeat Name x3"
    shape: str  # per-sample output shape, batch excluded
    dtype: str | None
    parameters: int
    kind: str  # "input", "op" or "block"
    cluster: str | None = None  # id of the expanded block containing it
    is_output: bool = False

    @property
    def base_lines(self) -> tuple[str, ...]:
        """Name, operation, shape (and dtype) and parameters: the label without the marker."""
        details = f"{self.shape} {self.dtype}" if self.dtype else self.shape
        if self.kind == "input":
            return (self.name, self.op, details)
        return (self.name, self.op, details, f"{self.parameters:,} params")

    @property
    def lines(self) -> tuple[str, ...]:
        """The label's lines, shared by every format."""
        return (*self.base_lines, "returned") if self.is_output else self.base_lines


@dataclass(frozen=True)
class DiagramEdge:
    source: str
    target: str
    value: str  # IR value name carried


@dataclass(frozen=True)
class Cluster:
    id: str
    label: str
    parent: str | None


@dataclass(frozen=True)
class Diagram:
    name: str
    nodes: tuple[DiagramNode, ...]
    edges: tuple[DiagramEdge, ...]
    clusters: tuple[Cluster, ...]
    output: str  # id of the node producing the returned value
    parameters: int

    def nesting(
        self,
    ) -> tuple[dict[str | None, list[str]], dict[str | None, list[DiagramNode]], dict[str, str]]:
        """Child clusters and member nodes per cluster (None = top level), and cluster labels."""
        children: dict[str | None, list[str]] = {}
        for cluster in self.clusters:
            children.setdefault(cluster.parent, []).append(cluster.id)
        members: dict[str | None, list[DiagramNode]] = {}
        for node in self.nodes:
            members.setdefault(node.cluster, []).append(node)
        return children, members, {c.id: c.label for c in self.clusters}


@dataclass
class _Builder:
    expand: bool
    nodes: list[DiagramNode] = field(default_factory=list)
    edges: list[DiagramEdge] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)

    def new_id(self) -> str:
        return f"n{len(self.nodes)}"


def build_diagram(graph: Graph, *, expand: bool = False) -> Diagram:
    """The diagram of ``graph``: blocks collapsed unless ``expand``."""
    b = _Builder(expand)
    inp = graph.input_value
    first = DiagramNode(
        b.new_id(),
        inp.name,
        inp.source_name or inp.name,
        "input",
        shape_text(inp.sample_shape),
        inp.dtype,
        0,
        "input",
    )
    b.nodes.append(first)
    env = {graph.input: first.id}
    _add_graph(b, graph, env, "", None)
    output = env[graph.output]
    nodes = tuple(_marked(n) if n.id == output else n for n in b.nodes)
    return Diagram(graph.name, nodes, tuple(b.edges), tuple(b.clusters), output, graph.parameters)


def _marked(node: DiagramNode) -> DiagramNode:
    return replace(node, is_output=True)


def _add_graph(
    b: _Builder, graph: Graph, env: dict[str, str], prefix: str, cluster: str | None
) -> None:
    values = graph.value_map
    for node in graph.nodes:
        if node.subgraph is not None and b.expand:
            _expand(b, node, env, prefix, cluster)
            continue
        out = values[node.output]
        diagram_node = DiagramNode(
            b.new_id(),
            prefix + node.id,
            node.id,
            op_text(node),
            shape_text(out.sample_shape),
            out.dtype,
            node.parameters,
            "block" if node.subgraph is not None else "op",
            cluster,
        )
        b.nodes.append(diagram_node)
        for name in node.inputs:
            b.edges.append(DiagramEdge(env[name], diagram_node.id, name))
        env[node.output] = diagram_node.id


def _expand(b: _Builder, node: Node, env: dict[str, str], prefix: str, cluster: str | None) -> None:
    sub = node.subgraph
    assert sub is not None
    current = env[node.inputs[0]]
    for copy in range(node.repeat):
        suffix = f"[{copy + 1}]" if node.repeat > 1 else ""
        inner_id = f"c{len(b.clusters)}"
        label = f"{node.id}{suffix}: {sub.name}"
        if node.repeat > 1:
            label += f" (copy {copy + 1} of {node.repeat})"
        b.clusters.append(Cluster(inner_id, label, cluster))
        inner_env = {sub.input: current}
        _add_graph(b, sub, inner_env, f"{prefix}{node.id}{suffix}/", inner_id)
        current = inner_env[sub.output]
    env[node.output] = current
