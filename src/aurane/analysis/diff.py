"""``aurane diff``: what an edit changed in each model, read from the two IRs.

Models match by name; layers match by node id (the generated attribute name) and op, so a
layer whose id now names another operation counts as removed plus added. A matched layer
is *changed* when its resolved arguments, output shape, dtype, parameters or MACs differ.
Every count comes from ``aurane.analysis.profile``; shapes come from the IR values.

``flat=True`` compares the layers as the network runs them, whatever blocks group them (a
refactoring into blocks, or a program ``aurane import`` gave back): layers with weights
match by their module path (the state-dict prefix, ``layer1.0.conv1``), the others by
operation, arguments and output shape, each occurrence in order; block calls themselves
(their names and arguments) are not compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from aurane import ops
from aurane.analysis.profile import LayerProfile, profile, profile_layers
from aurane.ir.graph import Graph, Node
from aurane.ops.rules import fmt_shape
from aurane.records import field, record
from aurane.semantics.sizes import Size

Status = Literal["added", "removed", "changed", "unchanged"]
MARK = {"added": "+", "removed": "-", "changed": "~", "unchanged": " "}
COLOUR = {"added": "#c8f7c5", "removed": "#f7c5c5", "changed": "#fde8a6", "unchanged": "#ffffff"}


@record(frozen=True)
class Facts:
    op: str
    args: Mapping[str, Any]
    inputs: tuple[str, ...]
    output_shape: tuple[int, ...] | None
    dtype: str | None
    parameters: int
    macs: Size  # symbolic where a layer's work grows with the batch (cross_batch_matmul)

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "args": _jsonable(dict(self.args)),
            "output_shape": [_size_json(n) for n in self.output_shape]
            if self.output_shape is not None
            else None,
            "dtype": self.dtype,
            "parameters": self.parameters,
            "macs": _size_json(self.macs),
        }


@record(frozen=True)
class LayerDiff:
    node: str
    status: Status
    before: Facts | None
    after: Facts | None
    changes: tuple[str, ...] = ()

    @property
    def op(self) -> str:
        facts = self.after or self.before
        assert facts is not None
        return facts.op

    def delta(self, key: str) -> Size:
        return _delta(self.before, self.after, key)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op": self.op,
            "status": self.status,
            "changes": list(self.changes),
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "delta": {
                "parameters": self.delta("parameters"),
                "macs": _size_json(self.delta("macs")),
            },
        }


@record(frozen=True)
class Totals:
    parameters: int
    macs: Size

    def to_json(self) -> dict[str, Any]:
        return {
            "parameters": self.parameters,
            "macs": _size_json(self.macs),
            "flops": _size_json(2 * self.macs),
        }


@record
class ModelDiff:
    name: str
    status: Status
    before: Totals | None
    after: Totals | None
    layers: list[LayerDiff] = field(default_factory=list)
    before_graph: Graph | None = None
    after_graph: Graph | None = None

    def delta(self, key: str) -> Size:
        return _delta(self.before, self.after, key)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None,
            "delta": {
                "parameters": self.delta("parameters"),
                "macs": _size_json(self.delta("macs")),
                "flops": _size_json(2 * self.delta("macs")),
            },
            "layers": [layer.to_json() for layer in self.layers],
        }


def _delta(before: Any, after: Any, key: str) -> Size:
    """``after.key - before.key`` (0 where a side is missing); symbolic MACs subtract alike."""
    old: Size = getattr(before, key, 0) or 0
    new: Size = getattr(after, key, 0) or 0
    return new - old


def _size_json(value: Size) -> int | str:
    """A count as JSON: a number, or the formula (``1024*batch``), as ``aurane profile``."""
    return value if isinstance(value, int) else str(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


# -- comparing ------------------------------------------------------------------------------


def _fact(
    node: Node,
    graph: Graph,
    layer: LayerProfile,
    op: str,
    args: Mapping[str, Any],
    inputs: tuple[str, ...],
) -> Facts:
    """A layer's facts: what it computes (``op``, ``args``, ``inputs`` as the caller reads
    them) and its output, parameters and MACs."""
    value = graph.value_map[node.output]
    return Facts(
        op=op,
        args=args,
        inputs=inputs,
        output_shape=value.sample_shape,
        dtype=value.dtype,
        parameters=layer.parameters,
        macs=layer.macs,
    )


def _facts(graph: Graph) -> dict[str, Facts]:
    producer = {n.output: n.id for n in graph.nodes}
    layers: dict[str, LayerProfile] = {p.node: p for p in profile_layers(graph)}
    return {
        node.id: _fact(
            node,
            graph,
            layers[node.id],
            _op_label(node),
            node.args,
            tuple(producer.get(name, "input") for name in node.inputs),
        )
        for node in graph.nodes
    }


def _leaves(graph: Graph, prefix: str = "") -> Iterator[tuple[str, Node, Graph]]:
    """Every operation inside ``graph``'s block calls and repeats, with its module path."""
    for node in graph.nodes:
        path = f"{prefix}{node.layer or node.id}"
        if node.subgraph is None:
            yield path, node, graph
        elif node.repeat > 1:
            for copy in range(node.repeat):
                yield from _leaves(node.subgraph, f"{path}.{copy}.")
        else:
            yield from _leaves(node.subgraph, f"{path}.")


def _stated(node: Node) -> dict[str, Any]:
    """The arguments that differ from the catalog's defaults (a ``.residual`` suffix binds
    none, ``add(h, x)`` binds ``broadcast=false``: the same operation), each ``None`` that
    stands for another argument read as it (``maxpool(2)`` is ``maxpool(2, stride=2)``)."""
    spec = ops.lookup(node.op)
    defaults = {p.name: p.default for p in spec.params} if spec is not None else {}
    args = spec.effective(node.args) if spec is not None else dict(node.args)
    return {
        key: value
        for key, value in args.items()
        if value is not None and not (key in defaults and defaults[key] == value)
    }


def _flat_facts(graph: Graph) -> dict[str, Facts]:
    """Facts of every leaf operation: keyed by module path when it holds weights, else by
    operation, arguments and shape numbered by occurrence (``relu (64, 8, 8) #2``). What
    computes nothing is left out: a reshape to its input's shape, and ``broadcast=true``
    where every input has the output's shape."""
    out: dict[str, Facts] = {}
    seen: dict[str, int] = {}
    profiles: dict[int, dict[str, LayerProfile]] = {}
    for path, node, owner in _leaves(graph):
        if id(owner) not in profiles:
            profiles[id(owner)] = {p.node: p for p in profile_layers(owner)}
        layer = profiles[id(owner)][node.id]
        shapes = [owner.value_map[v].shape for v in (*node.inputs, node.output)]
        same = all(shape == shapes[-1] for shape in shapes)
        if same and node.op == "reshape":
            continue  # to the shape it has: no step (the optimizer's identity_reshape)
        args = _stated(node)
        if same:
            args.pop("broadcast", None)  # nothing to stretch: add(a, b) of equal shapes
        facts = _fact(node, owner, layer, node.op, args, ())
        if node.parameters or layer.parameters:
            out[path] = facts
            continue
        label = f"{node.op} {fmt_shape(facts.output_shape)}"
        seen[label] = seen.get(label, 0) + 1
        out[f"{label} #{seen[label]}" if seen[label] > 1 else label] = facts
    return out


def _op_label(node: Node) -> str:
    if node.block is None:
        return node.op
    return f"{node.op} {node.block}" + (f" x{node.repeat}" if node.repeat > 1 else "")


def _changes(before: Facts, after: Facts) -> tuple[str, ...]:
    found = []
    for key in sorted(set(before.args) | set(after.args)):
        old, new = before.args.get(key), after.args.get(key)
        if old != new:
            found.append(f"{key}: {old!r} -> {new!r}")
    if before.inputs != after.inputs:
        found.append(f"inputs: {', '.join(before.inputs)} -> {', '.join(after.inputs)}")
    if before.output_shape != after.output_shape:
        found.append(f"shape: {fmt_shape(before.output_shape)} -> {fmt_shape(after.output_shape)}")
    if before.dtype != after.dtype:
        found.append(f"dtype: {before.dtype} -> {after.dtype}")
    if before.parameters != after.parameters:
        found.append(f"parameters: {before.parameters:,} -> {after.parameters:,}")
    if before.macs != after.macs:
        found.append(f"MACs: {_grouped(before.macs)} -> {_grouped(after.macs)}")
    return tuple(found)


def diff_graph(
    name: str, before: Graph | None, after: Graph | None, flat: bool = False
) -> ModelDiff:
    facts_of = _flat_facts if flat else _facts
    old = facts_of(before) if before is not None else {}
    new = facts_of(after) if after is not None else {}
    layers: list[LayerDiff] = []
    for node_id, facts in new.items():
        prior = old.get(node_id)
        if prior is None or prior.op != facts.op:
            layers.append(LayerDiff(node_id, "added", None, facts))
            continue
        changes = _changes(prior, facts)
        layers.append(
            LayerDiff(node_id, "changed" if changes else "unchanged", prior, facts, changes)
        )
    for node_id, facts in old.items():
        if node_id not in new or new[node_id].op != facts.op:
            layers.append(LayerDiff(node_id, "removed", facts, None))
    status: Status
    if before is None:
        status = "added"
    elif after is None:
        status = "removed"
    else:
        status = "changed" if any(d.status != "unchanged" for d in layers) else "unchanged"
    return ModelDiff(name, status, _totals(before), _totals(after), layers, before, after)


def _totals(graph: Graph | None) -> Totals | None:
    if graph is None:
        return None
    prof = profile(graph)
    return Totals(prof.parameters, prof.macs)


def diff_programs(
    before: Mapping[str, Graph], after: Mapping[str, Graph], flat: bool = False
) -> list[ModelDiff]:
    names = list(after) + [n for n in before if n not in after]
    return [diff_graph(name, before.get(name), after.get(name), flat) for name in names]


# -- rendering ------------------------------------------------------------------------------


def _grouped(value: Size) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _count(value: Size) -> str:
    if not isinstance(value, int):
        return str(value)
    for unit, size in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if abs(value) >= size:
            return f"{value / size:.2f}{unit}"
    return str(value)


def _signed(value: Size) -> str:
    if not isinstance(value, int):
        return str(value)  # a formula: its sign depends on the batch
    return ("+" if value > 0 else "") + (_count(value) if value else "0")


def render_text(diffs: list[ModelDiff], before_name: str, after_name: str) -> str:
    lines = [f"--- {before_name}", f"+++ {after_name}"]
    for model in diffs:
        lines.append("")
        lines.append(f"{MARK[model.status]} model {model.name} ({model.status})")
        b, a = model.before, model.after
        for key, title in (("parameters", "parameters"), ("macs", "MACs")):
            old = _count(getattr(b, key)) if b else "-"
            new = _count(getattr(a, key)) if a else "-"
            lines.append(f"    {title}: {old} -> {new} ({_signed(model.delta(key))})")
        for layer in model.layers:
            if layer.status == "unchanged":
                continue
            facts = layer.after or layer.before
            assert facts is not None
            head = f"  {MARK[layer.status]} {layer.node:<20} {layer.op:<22}"
            stats = (
                f"shape {fmt_shape(facts.output_shape)}  params {_signed(layer.delta('parameters'))}"
                f"  MACs {_signed(layer.delta('macs'))}"
            )
            lines.append(f"{head} {stats}")
            lines.extend(f"        {change}" for change in layer.changes)
    return "\n".join(lines) + "\n"


def render_json(diffs: list[ModelDiff], before_name: str, after_name: str) -> str:
    payload = {
        "before": before_name,
        "after": after_name,
        "changed": any(d.status != "unchanged" for d in diffs),
        "models": [d.to_json() for d in diffs],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _diagram_rows(model: ModelDiff) -> tuple[list[tuple[str, str, Status]], list[tuple[str, str]]]:
    """(node key, label, status) rows and (from, to) edges of the union of both graphs."""
    rows: list[tuple[str, str, Status]] = [("input", "input", "unchanged")]
    edges: list[tuple[str, str]] = []
    seen_edges: set[tuple[str, str]] = set()
    for layer in model.layers:
        facts = layer.after or layer.before
        assert facts is not None
        label = f"{layer.node}: {layer.op} {fmt_shape(facts.output_shape)}"
        rows.append((layer.node, label, layer.status))
        sources = set(facts.inputs) | set(layer.before.inputs if layer.before else ())
        for src in sorted(sources):
            if (src, layer.node) not in seen_edges:
                seen_edges.add((src, layer.node))
                edges.append((src, layer.node))
    return rows, edges


def render_mermaid(diffs: list[ModelDiff]) -> str:
    from aurane.analysis.diagrams.mermaid import escape

    lines = ["flowchart TB"]
    for status, colour in COLOUR.items():
        lines.append(f"  classDef {status} fill:{colour},stroke:#555")
    for index, model in enumerate(diffs):
        rows, edges = _diagram_rows(model)
        ident = {key: f"m{index}_{i}" for i, (key, _, _) in enumerate(rows)}
        lines.append(f'  subgraph m{index}["{escape(model.name)} ({model.status})"]')
        for key, label, status in rows:
            lines.append(f'    {ident[key]}["{escape(MARK[status] + " " + label)}"]:::{status}')
        lines.extend(f"    {ident[a]} --> {ident[b]}" for a, b in edges if a in ident)
        lines.append("  end")
    return "\n".join(lines) + "\n"


def render_dot(diffs: list[ModelDiff]) -> str:
    from aurane.analysis.diagrams.dot import quote

    lines = ["digraph diff {", "  rankdir=TB;", "  node [shape=box, style=filled];"]
    for index, model in enumerate(diffs):
        rows, edges = _diagram_rows(model)
        ident = {key: f"m{index}_{i}" for i, (key, _, _) in enumerate(rows)}
        lines.append(f"  subgraph cluster_{index} {{")
        lines.append(f"    label={quote(f'{model.name} ({model.status})')};")
        for key, label, status in rows:
            text = quote(MARK[status] + " " + label)
            lines.append(f'    {ident[key]} [label={text}, fillcolor="{COLOUR[status]}"];')
        lines.extend(f"    {ident[a]} -> {ident[b]};" for a, b in edges if a in ident)
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
