"""``--format dot``: a Graphviz digraph of the diagram.

Identifiers are generated (``n0``...), labels are double-quoted with backslashes and quotes
escaped, so Graphviz escape sequences (``\\N``, ``\\G``...) in names stay literal.
"""

from __future__ import annotations

from aurane.analysis.diagrams.common import FAMILIES, Diagram, DiagramEdge, DiagramNode


def quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ")
    return f'"{escaped}"'


def identifier(text: str) -> str:
    """A quoted DOT ID. IDs are not escape strings, so backslashes and quotes become '_'."""
    return '"' + text.replace("\\", "_").replace('"', "_").replace("\n", " ") + '"'


def label(lines: tuple[str, ...]) -> str:
    return quote("\0".join(lines)).replace("\0", "\\n")


def _node_line(node: DiagramNode) -> str:
    _, fill, stroke = FAMILIES[node.family]
    color = "#cc3333" if node.is_output else stroke
    attrs = [f"label={label(node.lines)}", f'fillcolor="{fill}"', f'color="{color}"']
    if node.kind == "input":
        attrs.append("shape=ellipse")
    elif node.kind == "block":
        attrs.append('style="rounded,filled,bold"')
    if node.is_output:
        attrs.append("peripheries=2")
    return f"{node.id} [{', '.join(attrs)}];"


def _edge_line(edge: DiagramEdge) -> str:
    attrs = []
    if edge.shape is not None:
        attrs.append(f"label={quote(edge.shape)}")
    if edge.kind == "residual":
        attrs.append('style=dashed, color="#c92a2a"')
    return f"  {edge.source} -> {edge.target}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";"


def _legend(diagram: Diagram) -> list[str]:
    lines = [
        "  subgraph cluster_legend {",
        '    label="legend"; style=dashed; color="#bbbbbb"; fontsize=9;',
    ]
    for fam in diagram.families:
        text, fill, stroke = FAMILIES[fam]
        lines.append(
            f'    legend_{fam} [label={quote(text)}, fillcolor="{fill}", color="{stroke}", '
            "fontsize=8];"
        )
    lines.append("  }")
    return lines


def render_dot(diagram: Diagram) -> str:
    lines = [
        f"digraph {identifier(diagram.name)} {{",
        "  // static diagram from the Aurane IR: activations and suffixes folded into the node",
        "  // producing their input; edge labels show the shape where it changes",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    children, members, labels = diagram.nesting()

    def emit(cluster: str | None, depth: int) -> None:
        pad = "  " * depth
        for node in members.get(cluster, []):
            lines.append(pad + _node_line(node))
        for child in children.get(cluster, []):
            lines.append(f"{pad}subgraph cluster_{child} {{")
            lines.append(f"{pad}  label={quote(labels[child])};")
            lines.append(f'{pad}  style=dashed; color="#888888"; fontsize=9;')
            emit(child, depth + 1)
            lines.append(pad + "}")

    emit(None, 1)
    lines += [_edge_line(edge) for edge in diagram.edges]
    lines += _legend(diagram)
    lines.append("}")
    return "\n".join(lines)
