"""``--format svg``: the DOT diagram rendered by Graphviz's ``dot`` program."""

from __future__ import annotations

import shutil
import subprocess

from aurane.analysis.diagrams.common import Diagram
from aurane.analysis.diagrams.dot import render_dot

MISSING_DOT = (
    "svg output needs the Graphviz 'dot' program, which is not installed; install Graphviz "
    "(e.g. 'apt-get install graphviz' or 'brew install graphviz'), or use --format dot"
)


class RenderError(Exception):
    """Graphviz is missing or failed."""


def dot_program() -> str | None:
    return shutil.which("dot")


def render_svg(diagram: Diagram, timeout: float = 60.0) -> str:
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
