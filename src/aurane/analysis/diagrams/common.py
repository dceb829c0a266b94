"""The one node/edge list every diagram format renders, built from the IR.

Nodes are the model input and the IR's nodes, with two simplifications a reader expects:

- an activation or suffix (``.relu``, ``.residual``, a ``-> relu()`` step whose input feeds
  nothing else) is folded into the node that produces its input: ``conv2d + relu`` is one
  box; every diagram node lists the IR nodes it stands for (``members``), so nothing is lost;
- a composed block (``block``/``repeat`` node) is one node, labelled with its call
  (``BasicBlock(128, stride=2) x2``), unless it is expanded (all blocks with
  ``expand=True``, or the block paths given): its layers then replace it inside a cluster
  (every copy of a repeat, chained), and their edges connect to the caller's values.

Edges are the IR's data dependencies between diagram nodes (a folded residual suffix keeps
its skip edge, marked ``residual``); an edge carries the shape of its value as a label where
the producing node changed the shape. Nodes carry an operation family (colour), the user's
name for the value or layer (``h``, ``as conv1``), the output shape, and parameters only
when there are some. The returned value's node is marked.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from aurane import ops
from aurane.analysis.naming import op_text
from aurane.ir.graph import Graph, Node, Value
from aurane.ops.rules import CONVOLUTION
from aurane.ops.rules import fmt_shape as shape_text
from aurane.records import field, record, replace
from aurane.source import Span
from aurane.syntax import ast

# family -> (legend text, fill, stroke): shared by every format
FAMILIES: dict[str, tuple[str, str, str]] = {
    "input": ("input", "#f1f3f5", "#868e96"),
    "conv": ("convolution", "#dbe4ff", "#4263eb"),
    "linear": ("linear", "#d3f9d8", "#2f9e44"),
    "embedding": ("embedding", "#e5dbff", "#6741d9"),
    "norm": ("normalization", "#fff3bf", "#e67700"),
    "activation": ("activation", "#ffe8cc", "#e8590c"),
    "pool": ("pooling", "#c5f6fa", "#0c8599"),
    "attention": ("attention", "#f3d9fa", "#9c36b5"),
    "recurrent": ("recurrent", "#ffdeeb", "#c2255c"),
    "merge": ("merge", "#ffe3e3", "#c92a2a"),
    "reshape": ("reshape", "#e9ecef", "#495057"),
    "regularization": ("regularization", "#e6fcf5", "#099268"),
    "block": ("block", "#edf2ff", "#364fc7"),
    "other": ("other", "#ffffff", "#868e96"),
}


def family(op: str) -> str:
    """The colour family of a catalog op (``block``/``repeat`` are blocks)."""
    if op in ("block", "repeat", "input"):
        return "block" if op != "input" else "input"
    spec = ops.lookup(op)
    if spec is not None and spec.family == CONVOLUTION:
        return "conv"
    if op in ("embedding", "positional_encoding", "rotary_embedding", "parameter"):
        return "embedding"
    if op == "dense":
        return "linear"
    kinds = spec.kinds if spec is not None else frozenset()
    for kind, name in (
        ("normalization", "norm"),
        ("activation", "activation"),
        ("pooling", "pool"),
        ("attention", "attention"),
        ("recurrent", "recurrent"),
        ("merge", "merge"),
        ("reshaping", "reshape"),
        ("stochastic", "regularization"),
    ):
        if kind in kinds:
            return name
    return "other"


@record(frozen=True)
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
    family: str = "other"  # a FAMILIES key: the node's colour
    title: str = ""  # what it does: "conv2d(8, kernel=3) + relu", "ResidualUnit() x2"
    label: str | None = None  # the user's name: bound value or ``as`` layer name
    folded: tuple[str, ...] = ()  # ops folded into it: ("relu",), ("residual",)
    members: tuple[str, ...] = ()  # paths of every IR node it stands for
    line: int | None = None  # source line of its first IR node (1-based)
    column: int | None = None
    in_shape: str | None = None  # shape of its first input (edge labels compare with it)

    @property
    def base_lines(self) -> tuple[str, ...]:
        """Title, user name, shape (and a non-float32 dtype), parameters when any."""
        lines = [self.title or self.op]
        if self.label:
            lines.append(self.label)
        shape = self.shape
        if self.dtype and self.dtype != "float32":
            shape += f" {self.dtype}"
        lines.append(shape)
        if self.parameters:
            lines.append(f"{self.parameters:,} params")
        return tuple(lines)

    @property
    def lines(self) -> tuple[str, ...]:
        """The label's lines, shared by every format."""
        return (*self.base_lines, "returned") if self.is_output else self.base_lines

    @property
    def expandable(self) -> bool:
        return self.kind == "block"


@record(frozen=True)
class DiagramEdge:
    source: str
    target: str
    value: str  # IR value name carried
    shape: str | None = None  # shown where the source changed the shape
    kind: str = "data"  # "data" or "residual" (a folded residual suffix's skip input)


@record(frozen=True)
class Cluster:
    id: str
    label: str
    parent: str | None
    path: str = ""  # the block node's path: collapse it again with this


@record(frozen=True)
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

    @property
    def families(self) -> tuple[str, ...]:
        """The families drawn, in legend order."""
        present = {n.family for n in self.nodes}
        return tuple(f for f in FAMILIES if f in present)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parameters": self.parameters,
            "output": self.output,
            "nodes": [
                {
                    "id": n.id,
                    "path": n.path,
                    "op": n.op,
                    "title": n.title,
                    "label": n.label,
                    "shape": n.shape,
                    "dtype": n.dtype,
                    "parameters": n.parameters,
                    "kind": n.kind,
                    "family": n.family,
                    "cluster": n.cluster,
                    "members": list(n.members),
                    "line": n.line,
                    "column": n.column,
                    "returned": n.is_output,
                }
                for n in self.nodes
            ],
            "edges": [
                {"source": e.source, "target": e.target, "shape": e.shape, "kind": e.kind}
                for e in self.edges
            ],
            "clusters": [
                {"id": c.id, "label": c.label, "parent": c.parent, "path": c.path}
                for c in self.clusters
            ],
            "legend": [
                {"family": f, "text": FAMILIES[f][0], "fill": FAMILIES[f][1]} for f in self.families
            ],
        }


@record
class _Builder:
    expand: bool | frozenset[str]
    nodes: list[DiagramNode] = field(default_factory=list)
    edges: list[DiagramEdge] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)  # node id -> position in nodes
    input_name: str = ""  # a chain rebinding the input's name is not a name worth showing

    def new_id(self) -> str:
        return f"n{len(self.nodes)}"

    def add(self, node: DiagramNode) -> None:
        self.index[node.id] = len(self.nodes)
        self.nodes.append(node)

    def get(self, node_id: str) -> DiagramNode:
        return self.nodes[self.index[node_id]]

    def put(self, node: DiagramNode) -> None:
        self.nodes[self.index[node.id]] = node

    def expands(self, path: str) -> bool:
        return self.expand if isinstance(self.expand, bool) else path in self.expand


def build_diagram(graph: Graph, *, expand: bool | Collection[str] = False) -> Diagram:
    """The diagram of ``graph``: blocks collapsed, all expanded with ``expand=True``, or
    those whose paths (``residualunit1``, ``layer1[2]/block1``) are in ``expand``."""
    b = _Builder(expand if isinstance(expand, bool) else frozenset(expand))
    env: dict[str, str] = {}
    for inp in graph.inputs:  # one entry node per input (issue 23: several)
        entry = DiagramNode(
            b.new_id(),
            inp.name,
            inp.source_name or inp.name,
            "input",
            shape_text(inp.sample_shape),
            inp.dtype,
            0,
            "input",
            family="input",
            title="input",
            label=inp.source_name or inp.name,
            line=inp.span.line,
            column=inp.span.column,
        )
        b.add(entry)
        env[inp.name] = entry.id
    b.input_name = graph.input_value.source_name or graph.input
    _add_graph(b, graph, env, "", None)
    output = env[graph.output]
    returned = {env[v.name] for v in graph.outputs}  # several exit nodes when it returns several
    nodes = tuple(replace(n, is_output=True) if n.id in returned else n for n in b.nodes)
    by_id = {n.id: n for n in nodes}
    edges = tuple(_with_shape(e, by_id[e.source]) for e in b.edges)
    return Diagram(graph.name, nodes, edges, tuple(b.clusters), output, graph.parameters)


def _with_shape(edge: DiagramEdge, source: DiagramNode) -> DiagramEdge:
    if edge.shape is not None and (source.kind == "input" or source.in_shape != edge.shape):
        return edge
    return replace(edge, shape=None)


def _consumers(graph: Graph) -> dict[str, int]:
    count: dict[str, int] = {v.name: 1 for v in graph.outputs}
    for node in graph.nodes:
        for name in node.inputs:
            count[name] = count.get(name, 0) + 1
    return count


def _foldable(
    b: _Builder, node: Node, env: Mapping[str, str], owner: Mapping[str, str], uses: dict[str, int]
) -> str | None:
    """The diagram node ``node`` folds into, or None."""
    if not node.inputs or node.subgraph is not None:
        return None
    head = node.inputs[-1] if node.suffix_of is not None else node.inputs[0]
    target = env.get(head)
    if target is None or owner.get(head) is None:  # the input or an expanded block's value
        return None
    if b.get(target).kind == "input":
        return None
    if node.suffix_of is not None and owner[head] == node.suffix_of:
        return target
    spec = ops.lookup(node.op)
    if spec is not None and spec.is_activation and len(node.inputs) == 1 and uses[head] == 1:
        return target
    return None


def _add_graph(
    b: _Builder, graph: Graph, env: dict[str, str], prefix: str, cluster: str | None
) -> None:
    values = graph.value_map
    uses = _consumers(graph)
    owner: dict[str, str] = {}  # value -> IR node id producing it, at this level
    loops = _loop_runs(graph.nodes)
    looped: dict[int, str] = {}  # IR node (by identity) -> the expanded loop's cluster
    skipped: set[int] = set()  # IR nodes a collapsed loop stands for
    for index, node in enumerate(graph.nodes):
        run = loops.get(index)
        if run is not None:  # the first node of an unrolled loop
            frame, members = run
            key = f"{prefix}for@{frame.span.line}:{frame.span.column}"
            if not b.expands(key):
                _loop_node(b, values, frame, members, env, prefix, cluster)
                for member in members:
                    owner[member.output] = member.id
                skipped.update(id(m) for m in members)
                continue
            inner = f"c{len(b.clusters)}"
            label = f"{frame.header} ({frame.count} iteration{'s' if frame.count != 1 else ''})"
            b.clusters.append(Cluster(inner, label, cluster, key))
            looped.update({id(m): inner for m in members})
        if id(node) in skipped:
            continue
        node_cluster = looped.get(id(node), cluster)
        path = prefix + node.id
        if node.subgraph is not None and b.expands(path):
            _expand(b, node, env, prefix, node_cluster)
            continue
        out = values[node.output]
        into = _foldable(b, node, env, owner, uses)
        if into is not None:
            _fold(b, into, node, out, env, path)
        else:
            _new_node(b, values, node, out, env, path, node_cluster)
        owner[node.output] = node.id


def _loop_runs(nodes: tuple[Node, ...]) -> dict[int, tuple[ast.Origin, list[Node]]]:
    """Index of the first node of each unrolled loop (its outermost loop frame) -> the frame
    and every node the loop made (they are consecutive: each statement's nodes are)."""
    runs: dict[int, tuple[ast.Origin, list[Node]]] = {}
    current: tuple[Span, int] | None = None
    for index, node in enumerate(nodes):
        frame = next((f for f in node.origin if f.kind == "loop"), None)
        key = None if frame is None else (frame.span, index)
        if frame is None:
            current = None
            continue
        if current is not None and current[0] == frame.span:
            runs[current[1]][1].append(node)
            continue
        assert key is not None
        current = (frame.span, index)
        runs[index] = (frame, [node])
    return runs


def _loop_node(
    b: _Builder,
    values: Mapping[str, Value],
    frame: ast.Origin,
    members: list[Node],
    env: dict[str, str],
    prefix: str,
    cluster: str | None,
) -> None:
    """A collapsed loop: one node for all its iterations (expand it with its path,
    ``for@LINE:COLUMN`` after the prefix of the graph it is in)."""
    path = f"{prefix}for@{frame.span.line}:{frame.span.column}"
    made = {m.output for m in members}
    last = values[members[-1].output]
    first_in = values[members[0].inputs[0]].sample_shape if members[0].inputs else None
    node = DiagramNode(
        b.new_id(),
        path,
        path.removeprefix(prefix),
        "loop",
        shape_text(last.sample_shape),
        last.dtype,
        sum(m.parameters for m in members),
        "block",
        cluster,
        family="block",
        title=f"{frame.header} x{frame.count}",
        members=tuple(prefix + m.id for m in members),
        line=frame.span.line,
        column=frame.span.column,
        in_shape=shape_text(first_in) if first_in is not None else None,
    )
    b.add(node)
    seen: set[str] = set()
    for member in members:
        for name in member.inputs:
            if name not in made and name not in seen:
                seen.add(name)
                b.edges.append(_edge(env[name], node.id, name, values))
    for name in made:
        env[name] = node.id


def _value_label(value: Value, node: Node, input_name: str) -> str | None:
    name = value.source_name if value.source_name != input_name else None
    if node.layer:
        return f"{name} (as {node.layer})" if name else f"as {node.layer}"
    return name


def _new_node(
    b: _Builder,
    values: Mapping[str, Value],
    node: Node,
    out: Value,
    env: dict[str, str],
    path: str,
    cluster: str | None,
) -> None:
    first_in = values[node.inputs[0]].sample_shape if node.inputs else None
    diagram_node = DiagramNode(
        b.new_id(),
        path,
        node.id,
        op_text(node),
        shape_text(out.sample_shape),
        out.dtype,
        node.parameters,
        "block" if node.subgraph is not None else "op",
        cluster,
        family=family(node.op),
        title=call_text(node),
        label=_value_label(out, node, b.input_name),
        members=(path,),
        line=node.span.line,
        column=node.span.column,
        in_shape=shape_text(first_in) if node.inputs else None,
    )
    b.add(diagram_node)
    for name in node.inputs:
        b.edges.append(_edge(env[name], diagram_node.id, name, values))
    for name in node.outputs or (node.output,):  # a block with several outputs: one node
        env[name] = diagram_node.id


def _edge(source: str, target: str, name: str, values: Mapping[str, Value]) -> DiagramEdge:
    return DiagramEdge(source, target, name, shape_text(values[name].sample_shape))


def _fold(b: _Builder, into: str, node: Node, out: Value, env: dict[str, str], path: str) -> None:
    host = b.get(into)
    residual = node.suffix_of is not None and node.op == "add"
    word = "residual" if residual else node.op
    label = _value_label(out, node, b.input_name) or host.label
    b.put(
        replace(
            host,
            shape=shape_text(out.sample_shape),
            dtype=out.dtype,
            parameters=host.parameters + node.parameters,
            title=f"{host.title} + {word}",
            label=label,
            folded=(*host.folded, word),
            members=(*host.members, path),
        )
    )
    # a residual's other input becomes a skip edge into the host
    for name in node.inputs[:-1] if node.suffix_of is not None else node.inputs[1:]:
        source = env[name]
        if source != into:
            b.edges.append(DiagramEdge(source, into, name, None, "residual"))
    env[node.output] = into


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple | list):
        return "(" + ", ".join(_literal(v) for v in value) + ")"
    return str(value)


def call_text(node: Node) -> str:
    """What the user wrote, compactly: ``conv2d(8, kernel=3)``, ``BasicBlock(128) x2``."""
    if node.subgraph is not None:
        sub = node.subgraph
        defaults = sub.block_defaults  # arguments left at their default are not shown
        args = {
            k: v
            for k, v in sub.block_args.items()
            if not (k in defaults and type(defaults[k]) is type(v) and defaults[k] == v)
        }
        params = list(sub.block_params or ())
        text = f"{node.block}({_args_text(params, args, params[:1])})" if params else node.block
        text = text or "block"
        return f"{text} x{node.repeat}" if node.repeat > 1 else text
    spec = ops.lookup(node.op)
    written = {k: v for k, v in node.args.items() if k in node.arg_spans}
    if not written:
        return node.op
    if spec is None:
        return f"{node.op}({_args_text([], written, [])})"
    order = [p.name for p in spec.params]
    bare = order[:1] if spec.params and spec.params[0].required else []
    return f"{node.op}({_args_text(order, written, bare)})"


def _args_text(order: list[str], args: Mapping[str, Any], bare: list[str]) -> str:
    """``8, kernel=3``: the parameters in ``bare`` (the first, required one) by value."""
    parts: list[str] = []
    keys = [k for k in order if k in args] + [k for k in args if k not in order]
    for key in keys:
        parts.append(_literal(args[key]) if key in bare else f"{key}={_literal(args[key])}")
    text = ", ".join(parts)
    return text if len(text) <= 40 else text[:39] + "\u2026"


def _expand(b: _Builder, node: Node, env: dict[str, str], prefix: str, cluster: str | None) -> None:
    sub = node.subgraph
    assert sub is not None
    current = env[node.inputs[0]]
    title = call_text(node)
    if len(sub.inputs) > 1 or len(sub.outputs) > 1:  # several inputs/outputs: no repeat
        inner_id = f"c{len(b.clusters)}"
        b.clusters.append(Cluster(inner_id, title, cluster, prefix + node.id))
        inner_env = {v.name: env[name] for v, name in zip(sub.inputs, node.inputs, strict=False)}
        _add_graph(b, sub, inner_env, f"{prefix}{node.id}/", inner_id)
        for outer, value in zip(node.outputs or (node.output,), sub.outputs, strict=False):
            env[outer] = inner_env[value.name]
        return
    for copy in range(node.repeat):
        suffix = f"[{copy + 1}]" if node.repeat > 1 else ""
        inner_id = f"c{len(b.clusters)}"
        label = title.removesuffix(f" x{node.repeat}")
        if node.repeat > 1:
            label += f" (copy {copy + 1} of {node.repeat})"
        b.clusters.append(Cluster(inner_id, label, cluster, prefix + node.id))
        inner_env = {sub.input: current}
        _add_graph(b, sub, inner_env, f"{prefix}{node.id}{suffix}/", inner_id)
        current = inner_env[sub.output]
    env[node.output] = current
