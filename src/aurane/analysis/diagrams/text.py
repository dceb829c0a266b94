"""``--format rich``: the diagram as a tree in the terminal (rich when installed, else plain).

The tree lists nodes in execution order under the model; an expanded block is a subtree.
Each line names the node, its operation, output shape and parameters, and the nodes it
reads from (``<- a, b``), so branches and merges stay visible; the returned value is marked.
"""

from __future__ import annotations

from typing import Any

from aurane.analysis.diagrams.common import Diagram, DiagramNode
from aurane.records import field, record


@record
class Item:
    text: str
    children: list[Item] = field(default_factory=list)


def node_text(node: DiagramNode, sources: list[str]) -> str:
    """One tree line: the node's label, the paths it reads from, and the returned marker."""
    text = "  ".join(node.base_lines)
    if sources:
        text += "  <- " + ", ".join(sources)
    if node.is_output:
        text += "  -> returned"
    return text


def build_tree(diagram: Diagram) -> Item:
    names = {n.id: n.path for n in diagram.nodes}
    incoming: dict[str, list[str]] = {}
    for edge in diagram.edges:
        incoming.setdefault(edge.target, []).append(names[edge.source])
    root = Item(f"model {diagram.name}  ({diagram.parameters:,} params)")
    holders: dict[str | None, Item] = {None: root}
    parents = {c.id: c.parent for c in diagram.clusters}
    labels = {c.id: c.label for c in diagram.clusters}

    def holder(cluster: str | None) -> Item:
        if cluster not in holders:
            assert cluster is not None
            item = Item(labels[cluster])
            holder(parents[cluster]).children.append(item)
            holders[cluster] = item
        return holders[cluster]

    for node in diagram.nodes:
        holder(node.cluster).children.append(Item(node_text(node, incoming.get(node.id, []))))
    return root


def plain_tree(item: Item) -> str:
    lines = [item.text]

    def visit(children: list[Item], indent: str) -> None:
        for index, child in enumerate(children):
            last = index == len(children) - 1
            lines.append(
                indent + ("\u2514\u2500\u2500 " if last else "\u251c\u2500\u2500 ") + child.text
            )
            visit(child.children, indent + ("    " if last else "\u2502   "))

    visit(item.children, "")
    return "\n".join(lines)


def render_text(diagram: Diagram) -> str:
    """The plain tree (used for files, pipes and when rich is not installed)."""
    return plain_tree(build_tree(diagram))


def rich_tree(diagram: Diagram) -> Any | None:
    """A ``rich.tree.Tree`` of the diagram, or None when rich is not installed."""
    try:
        from rich.text import Text  # type: ignore[import-not-found, unused-ignore]
        from rich.tree import Tree  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None

    def convert(item: Item, tree: Any) -> None:
        for child in item.children:
            # Text, not markup: labels are shown literally, never interpreted
            convert(child, tree.add(Text(child.text)))

    root_item = build_tree(diagram)
    tree = Tree(Text(root_item.text, style="bold"))
    convert(root_item, tree)
    return tree
