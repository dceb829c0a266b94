"""``--format svg``: the diagram drawn by Aurane's own layered layout (no Graphviz needed).

One renderer serves ``aurane visualize --format svg`` and the playground. The layout is a
small Sugiyama-style pass: nodes are ranked by their longest path from the input (top to
bottom), each rank is ordered by the mean position of the nodes it reads from, and
overlaps are pushed apart; an edge between adjacent ranks is a curve, a longer one (a skip
connection) is routed beside the ranks it jumps over. Expanded blocks are dashed boxes around
their layers. Every text is XML-escaped; nodes and clusters carry ``data-`` attributes
(path, source line, block path) that the playground uses to link and to expand or collapse.

``render_graphviz_svg`` keeps the Graphviz rendering of the DOT text for those who want it.
"""

from __future__ import annotations

import shutil
import subprocess
from html import escape

from aurane.analysis.diagrams.common import FAMILIES, Diagram, DiagramNode
from aurane.analysis.diagrams.dot import render_dot
from aurane.records import record

MISSING_DOT = (
    "this rendering needs the Graphviz 'dot' program, which is not installed; install Graphviz "
    "(e.g. 'apt-get install graphviz' or 'brew install graphviz'), or use --format svg"
)

FONT = "Helvetica, Arial, sans-serif"
FONT_SIZE = 11
CHAR_W = 6.4  # estimated advance of one character at FONT_SIZE
LINE_H = 14
PAD_X = 10
PAD_Y = 7
MIN_W = 64
GAP_X = 28
GAP_Y = 44
CLUSTER_PAD = 10
CLUSTER_LABEL = 16
MARGIN = 16
TITLE_H = 24


class RenderError(Exception):
    """Graphviz is missing or failed (``render_graphviz_svg`` only)."""


@record
class _Box:
    node: DiagramNode
    rank: int
    w: float
    h: float
    x: float = 0.0  # centre
    y: float = 0.0  # top

    @property
    def left(self) -> float:
        return self.x - self.w / 2

    @property
    def right(self) -> float:
        return self.x + self.w / 2

    @property
    def bottom(self) -> float:
        return self.y + self.h


def _text_width(text: str) -> float:
    return len(text) * CHAR_W


def _ranks(diagram: Diagram) -> dict[str, int]:
    """Longest-path rank of each node (the edges form a DAG in node order)."""
    preds: dict[str, list[str]] = {n.id: [] for n in diagram.nodes}
    for edge in diagram.edges:
        preds[edge.target].append(edge.source)
    order = _topological(diagram, preds)
    rank: dict[str, int] = {}
    for node_id in order:
        rank[node_id] = max((rank[p] + 1 for p in preds[node_id] if p in rank), default=0)
    return rank


def _topological(diagram: Diagram, preds: dict[str, list[str]]) -> list[str]:
    indegree = {n: len(set(p)) for n, p in preds.items()}
    succs: dict[str, set[str]] = {n.id: set() for n in diagram.nodes}
    for target, sources in preds.items():
        for source in set(sources):
            succs[source].add(target)
    position = {n.id: i for i, n in enumerate(diagram.nodes)}
    ready = [n.id for n in diagram.nodes if indegree[n.id] == 0]
    order: list[str] = []
    while ready:
        ready.sort(key=position.__getitem__)
        current = ready.pop(0)
        order.append(current)
        for nxt in succs[current]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    order += [n.id for n in diagram.nodes if n.id not in set(order)]  # never on a DAG
    return order


def _cluster_depths(diagram: Diagram) -> dict[str, int]:
    parents = {c.id: c.parent for c in diagram.clusters}
    depth: dict[str, int] = {}
    for cluster in diagram.clusters:
        d, current = 0, cluster.parent
        while current is not None:
            d += 1
            current = parents[current]
        depth[cluster.id] = d
    return depth


def _ancestors(cluster: str | None, parents: dict[str, str | None]) -> list[str]:
    found = []
    while cluster is not None:
        found.append(cluster)
        cluster = parents[cluster]
    return found


def layout(diagram: Diagram) -> tuple[dict[str, _Box], float, float]:
    """Box of each node, and the drawing's width and height (legend excluded)."""
    rank = _ranks(diagram)
    boxes: dict[str, _Box] = {}
    for node in diagram.nodes:
        lines = node.lines
        width = max(MIN_W, max(_text_width(line) for line in lines) + 2 * PAD_X)
        boxes[node.id] = _Box(node, rank[node.id], width, len(lines) * LINE_H + 2 * PAD_Y)
    preds: dict[str, list[str]] = {n.id: [] for n in diagram.nodes}
    for edge in diagram.edges:
        preds[edge.target].append(edge.source)
    by_rank: dict[int, list[_Box]] = {}
    for node in diagram.nodes:
        by_rank.setdefault(rank[node.id], []).append(boxes[node.id])

    # vertical: rank rows, with room for the labels of the clusters that open or close there
    parents = {c.id: c.parent for c in diagram.clusters}
    opens: dict[int, int] = {}
    closes: dict[int, int] = {}
    for cluster in diagram.clusters:
        inside = [b for b in boxes.values() if cluster.id in _ancestors(b.node.cluster, parents)]
        if inside:
            first = min(b.rank for b in inside)
            last = max(b.rank for b in inside)
            opens[first] = opens.get(first, 0) + 1
            closes[last] = closes.get(last, 0) + 1
    y = float(TITLE_H + MARGIN)
    for r in sorted(by_rank):
        y += opens.get(r, 0) * (CLUSTER_PAD + CLUSTER_LABEL)
        height = max(b.h for b in by_rank[r])
        for box in by_rank[r]:
            box.y = y + (height - box.h) / 2
        y += height + GAP_Y + closes.get(r, 0) * CLUSTER_PAD

    # horizontal: each node under the mean of what it reads, overlaps pushed apart
    index = {n.id: i for i, n in enumerate(diagram.nodes)}
    for r in sorted(by_rank):
        row = by_rank[r]
        desired: dict[str, float] = {}
        for box in row:
            placed = [boxes[p].x for p in preds[box.node.id] if boxes[p].rank < r]
            desired[box.node.id] = sum(placed) / len(placed) if placed else 0.0
        row.sort(key=lambda b: (desired[b.node.id], index[b.node.id]))
        cursor = -1e18
        for box in row:
            box.x = max(desired[box.node.id], cursor + box.w / 2)
            cursor = box.right + GAP_X
        shift = sum(desired[b.node.id] - b.x for b in row) / len(row)
        for box in row:
            box.x += shift
    left = min(b.left for b in boxes.values()) - MARGIN - _max_depth_pad(diagram)
    for box in boxes.values():
        box.x -= left
    width = max(b.right for b in boxes.values()) + MARGIN + _max_depth_pad(diagram)
    return boxes, width, y


def _max_depth_pad(diagram: Diagram) -> float:
    if not diagram.clusters:
        return 0.0
    return (max(_cluster_depths(diagram).values()) + 1) * CLUSTER_PAD


def _node_svg(box: _Box) -> str:
    node = box.node
    _, fill, stroke = FAMILIES[node.family]
    width = 3.0 if node.is_output else (1.8 if node.kind == "block" else 1.2)
    color = "#cc3333" if node.is_output else stroke
    radius = box.h / 2 if node.kind == "input" else 6
    attrs = {
        "class": f"node fam-{node.family}" + (" block" if node.expandable else ""),
        "data-id": node.id,
        "data-path": node.path,
        "data-members": " ".join(node.members),
    }
    if node.line is not None:
        attrs["data-line"] = str(node.line)
    if node.expandable:
        attrs["data-block"] = node.path
    head = "".join(f' {k}="{escape(v)}"' for k, v in attrs.items())
    parts = [f"<g{head}>"]
    tip = [node.path, *node.lines]
    if node.line is not None:
        tip.append(f"line {node.line}")
    parts.append(f"<title>{escape(chr(10).join(tip))}</title>")
    parts.append(
        f'<rect x="{box.left:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" '
        f'rx="{radius:.1f}" fill="{fill}" stroke="{color}" stroke-width="{width}"/>'
    )
    if node.kind == "block":
        parts.append(
            f'<rect x="{box.left + 3:.1f}" y="{box.y + 3:.1f}" width="{box.w - 6:.1f}" '
            f'height="{box.h - 6:.1f}" rx="4" fill="none" stroke="{stroke}" stroke-width="0.8"/>'
        )
    for i, line in enumerate(node.lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        style = ' fill="#cc3333"' if node.is_output and line == "returned" else ""
        ty = box.y + PAD_Y + (i + 1) * LINE_H - 3
        parts.append(
            f'<text x="{box.x:.1f}" y="{ty:.1f}" text-anchor="middle"{weight}{style}>'
            f"{escape(line)}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def _edges_svg(diagram: Diagram, boxes: dict[str, _Box]) -> tuple[list[str], float]:
    """The edges, and the rightmost x a skip edge's route (and label) reaches."""
    out: list[str] = []
    reach = 0.0
    lanes: dict[int, int] = {}
    incoming: dict[str, list[str]] = {}
    for edge in diagram.edges:
        incoming.setdefault(edge.target, []).append(edge.source)
    seen: dict[str, int] = {}
    for edge in diagram.edges:
        a, b = boxes[edge.source], boxes[edge.target]
        # several inputs arrive side by side on the target's top edge
        count, slot = len(incoming[edge.target]), seen.get(edge.target, 0)
        seen[edge.target] = slot + 1
        spread = min(16.0, b.w / (count + 1))
        sx, sy, tx, ty = a.x, a.bottom, b.x + (slot - (count - 1) / 2) * spread, b.y
        span = b.rank - a.rank
        dashed = ' stroke-dasharray="5 3"' if edge.kind == "residual" else ""
        color = "#c92a2a" if edge.kind == "residual" else "#555555"
        if span <= 1 and edge.kind != "residual":
            mid = (sy + ty) / 2
            path = f"M{sx:.1f},{sy:.1f} C{sx:.1f},{mid:.1f} {tx:.1f},{mid:.1f} {tx:.1f},{ty:.1f}"
            lx, ly = (sx + tx) / 2 + 6, mid + 4
        else:  # a skip connection: routed right of the ranks it jumps over
            between = [box.right for box in boxes.values() if a.rank <= box.rank <= b.rank]
            lane = lanes.get(a.rank, 0)
            lanes[a.rank] = lane + 1
            xr = max(between) + 18 + 14 * lane
            y1, y2 = sy + GAP_Y / 3, ty - GAP_Y / 3
            path = (
                f"M{sx:.1f},{sy:.1f} C{sx:.1f},{y1:.1f} {xr:.1f},{sy:.1f} {xr:.1f},{y1:.1f} "
                f"L{xr:.1f},{y2:.1f} C{xr:.1f},{ty:.1f} {tx:.1f},{y2:.1f} {tx:.1f},{ty:.1f}"
            )
            lx, ly = xr + 4, (y1 + y2) / 2
            reach = max(reach, xr + (_text_width(edge.shape) if edge.shape else 0) + 8)
        marker = "arrow-res" if edge.kind == "residual" else "arrow"
        out.append(
            f'<g class="edge" data-source="{edge.source}" data-target="{edge.target}">'
            f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.2"{dashed} '
            f'marker-end="url(#{marker})"/>'
        )
        if edge.shape is not None:
            out.append(
                f'<text class="edge-label" x="{lx:.1f}" y="{ly:.1f}" fill="#666666" '
                f'font-size="9.5">{escape(edge.shape)}</text>'
            )
        out.append("</g>")
    return out, reach


def _clusters_svg(diagram: Diagram, boxes: dict[str, _Box]) -> list[str]:
    parents = {c.id: c.parent for c in diagram.clusters}
    depth = _cluster_depths(diagram)
    out: list[str] = []
    for cluster in sorted(diagram.clusters, key=lambda c: depth[c.id]):
        inside = [b for b in boxes.values() if cluster.id in _ancestors(b.node.cluster, parents)]
        if not inside:
            continue
        nested = max(
            (
                depth[c] - depth[cluster.id]
                for b in inside
                for c in _ancestors(b.node.cluster, parents)
            ),
            default=0,
        )
        pad = CLUSTER_PAD * (nested + 1)
        x0 = min(b.left for b in inside) - pad
        x1 = max(b.right for b in inside) + pad
        y0 = min(b.y for b in inside) - pad - CLUSTER_LABEL
        y1 = max(b.bottom for b in inside) + pad
        out.append(
            f'<g class="cluster" data-cluster="{cluster.id}" data-block="{escape(cluster.path)}">'
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
            'rx="8" fill="#fbfcff" fill-opacity="0.6" stroke="#8c8fa3" stroke-dasharray="6 3"/>'
            f'<text class="cluster-label" x="{x0 + 8:.1f}" y="{y0 + 12:.1f}" font-size="10" '
            f'fill="#4a4e69">{escape(cluster.label)}</text></g>'
        )
    return out


def _legend_svg(diagram: Diagram, x: float) -> tuple[list[str], float, float]:
    rows = diagram.families
    width = 20 + max((_text_width(FAMILIES[f][0]) for f in rows), default=40) + 26
    out = [
        f'<g class="legend" transform="translate({x:.1f},{TITLE_H + MARGIN})">',
        f'<rect x="0" y="0" width="{width:.1f}" height="{22 + 18 * len(rows)}" rx="6" '
        'fill="#ffffff" stroke="#cccccc"/>',
        '<text x="8" y="14" font-size="10" font-weight="bold" fill="#444444">legend</text>',
    ]
    for i, fam in enumerate(rows):
        text, fill, stroke = FAMILIES[fam]
        y = 22 + 18 * i
        out.append(
            f'<rect x="8" y="{y}" width="14" height="12" rx="3" fill="{fill}" stroke="{stroke}"/>'
            f'<text x="28" y="{y + 10}" font-size="10">{escape(text)}</text>'
        )
    out.append("</g>")
    return out, width, 22 + 18 * len(rows)


def render_svg(diagram: Diagram) -> str:
    """A standalone SVG document of ``diagram`` (no external program)."""
    boxes, width, height = layout(diagram)
    body = _clusters_svg(diagram, boxes)
    edges, reach = _edges_svg(diagram, boxes)
    body += edges
    body += [_node_svg(boxes[n.id]) for n in diagram.nodes]
    edge_right = max(width, reach + MARGIN)  # skip edges are routed right of the nodes
    legend, legend_w, legend_h = _legend_svg(diagram, edge_right)
    total_w = edge_right + legend_w + MARGIN
    total_h = max(height, TITLE_H + MARGIN + legend_h + MARGIN)
    title = f"{diagram.name} \u2014 {diagram.parameters:,} parameters"
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" class="aurane-diagram" '
            f'width="{total_w:.0f}" height="{total_h:.0f}" viewBox="0 0 {total_w:.0f} '
            f'{total_h:.0f}" font-family="{FONT}" font-size="{FONT_SIZE}" '
            f'data-model="{escape(diagram.name)}">',
            "<defs>"
            '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555555"/></marker>'
            '<marker id="arrow-res" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#c92a2a"/></marker>'
            "</defs>",
            f'<rect class="background" x="0" y="0" width="{total_w:.0f}" height="{total_h:.0f}" '
            'fill="#ffffff"/>',
            f'<text x="{MARGIN}" y="{MARGIN + 6}" font-size="13" font-weight="bold">'
            f"{escape(title)}</text>",
            '<g class="graph">',
            *body,
            "</g>",
            *legend,
            "</svg>",
        ]
    )


def dot_program() -> str | None:
    return shutil.which("dot")


def render_graphviz_svg(diagram: Diagram, timeout: float = 60.0) -> str:
    """The DOT text rendered by Graphviz (raises ``RenderError`` without it)."""
    program = dot_program()
    if program is None:
        raise RenderError(MISSING_DOT)
    try:
        done = subprocess.run(
            [program, "-Tsvg"],
            input=render_dot(diagram),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RenderError(f"graphviz could not render the diagram: {error}") from None
    if done.returncode != 0 or "<svg" not in done.stdout:
        raise RenderError(f"graphviz failed to render the diagram: {done.stderr.strip()}")
    return done.stdout
