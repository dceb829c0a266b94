"""``--format mermaid``: a Mermaid flowchart of the diagram.

Labels are quoted and escaped with Mermaid entity codes, so no text of a node can end the
label or open markup; lines are joined with ``<br/>``.
"""

from __future__ import annotations

from aurane.analysis.diagrams.common import FAMILIES, Diagram, DiagramEdge, DiagramNode

_ENTITIES = (
    ("#", "#35;"),  # first: the entity marker itself
    ('"', "#quot;"),
    ("<", "#lt;"),
    (">", "#gt;"),
    ("&", "#amp;"),
    ("`", "#96;"),
    ("|", "#124;"),
    ("\n", " "),
)


def escape(text: str) -> str:
    for raw, entity in _ENTITIES:
        text = text.replace(raw, entity)
    return text


def label(lines: tuple[str, ...]) -> str:
    return '"' + "<br/>".join(escape(line) for line in lines) + '"'


def _node_line(node: DiagramNode) -> str:
    text = label(node.lines)
    if node.kind == "input":
        return f"{node.id}([{text}])"
    if node.kind == "block":
        return f"{node.id}[[{text}]]"
    return f"{node.id}[{text}]"


def _edge_line(edge: DiagramEdge) -> str:
    arrow = "-.->" if edge.kind == "residual" else "-->"
    if edge.shape is not None:
        return f'  {edge.source} {arrow}|"{escape(edge.shape)}"| {edge.target}'
    return f"  {edge.source} {arrow} {edge.target}"


def render_mermaid(diagram: Diagram) -> str:
    lines = ["flowchart TB", f"  %% model {escape(diagram.name)}: static diagram from the IR"]
    children, members, labels = diagram.nesting()

    def emit(cluster: str | None, depth: int) -> None:
        pad = "  " * depth
        for node in members.get(cluster, []):
            lines.append(pad + _node_line(node))
        for child in children.get(cluster, []):
            lines.append(f"{pad}subgraph {child}[{label((labels[child],))}]")
            emit(child, depth + 1)
            lines.append(pad + "end")

    emit(None, 1)
    lines += [_edge_line(edge) for edge in diagram.edges]
    lines.append('  subgraph legend["legend"]')
    for fam in diagram.families:
        lines.append(f"    legend_{fam}[{label((FAMILIES[fam][0],))}]")
    lines.append("  end")
    for fam in diagram.families:
        _, fill, stroke = FAMILIES[fam]
        ids = [n.id for n in diagram.nodes if n.family == fam] + [f"legend_{fam}"]
        lines.append(f"  classDef fam_{fam} fill:{fill},stroke:{stroke}")
        lines.append(f"  class {','.join(ids)} fam_{fam}")
    lines.append("  classDef returned stroke-width:3px,stroke:#d33")
    lines.append(f"  class {diagram.output} returned")
    return "\n".join(lines)
