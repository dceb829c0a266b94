"""Architecture diagrams from the IR: one node/edge list (common), four renderers.

``svg`` is Aurane's own layered renderer (no Graphviz), shared with the playground.
"""

from __future__ import annotations

from collections.abc import Callable

from aurane.analysis.diagrams.common import FAMILIES, Diagram, build_diagram
from aurane.analysis.diagrams.dot import render_dot
from aurane.analysis.diagrams.mermaid import render_mermaid
from aurane.analysis.diagrams.svg import RenderError, render_graphviz_svg, render_svg
from aurane.analysis.diagrams.text import render_text

RENDERERS: dict[str, Callable[[Diagram], str]] = {
    "rich": render_text,
    "mermaid": render_mermaid,
    "dot": render_dot,
    "svg": render_svg,
}

__all__ = [
    "FAMILIES",
    "RENDERERS",
    "Diagram",
    "RenderError",
    "build_diagram",
    "render_dot",
    "render_graphviz_svg",
    "render_mermaid",
    "render_svg",
    "render_text",
]
