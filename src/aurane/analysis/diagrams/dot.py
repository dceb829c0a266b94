"""``--format dot``: a Graphviz digraph of the diagram.

Identifiers are generated (``n0``...), labels are double-quoted with backslashes and quotes
escaped, so Graphviz escape sequences (``\\N``, ``\\G``...) in names stay literal.
"""

from __future__ import annotations

from aurane.analysis.diagrams.common import Diagram, DiagramNode


def quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ")
    return f'"{escaped}"'


def identifier(text: str) -> str:
    """A quoted DOT ID. IDs are not escape strings, so backslashes and quotes become '_'."""
    return '"' + text.replace("\\", "_").replace('"', "_").replace("\n", " ") + '"'


def label(lines: tuple[str, ...]) -> str:
    return quote("\0".join(lines)).replace("\0", "\\n")


def _node_line(node: DiagramNode) -> str:
    attrs = [f"label={label(node.lines)}"]
    if node.kind == "input":
        attrs.append("shape=ellipse")
    elif node.kind == "block":
        attrs.append('style="rounded,filled"')
        attrs.append('fillcolor="#eef3ff"')
    if node.is_output:
        attrs.append("peripheries=2")
        attrs.append('color="#cc3333"')
    return f"{node.id} [{', '.join(attrs)}];"


def render_dot(diagram: Diagram) -> str:
    lines = [
        f"digraph {identifier(diagram.name)} {{",
        "  // static diagram from the Aurane IR: one node per IR node, one edge per input",
        "  rankdir=TB;",
        '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];',
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
            lines.append(f'{pad}  style=dashed; color="#888888";')
            emit(child, depth + 1)
            lines.append(pad + "}")

    emit(None, 1)
    lines += [f"  {edge.source} -> {edge.target};" for edge in diagram.edges]
    lines.append("}")
    return "\n".join(lines)
