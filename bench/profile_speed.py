"""Profiling speed: a 10,000-operation model profiled (and drawn) from its IR.

Builds the model twice: by hand as an IR graph (5,000 dense + 5,000 relu nodes), and from
``.aur`` source through the front end (reported separately: that is parse/check/lower
time, not profiling). Prints seconds and the ratio against the one-second budget.

    .venv/bin/python bench/profile_speed.py [--ops 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

from aurane.analysis.diagrams import build_diagram, render_dot, render_mermaid, render_text
from aurane.analysis.profile import profile
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.source import Span

SPAN = Span(1, 1, 1, 2)
WIDTH = 16


def chain_graph(ops: int, width: int = WIDTH) -> Graph:
    """``x -> dense(width).relu -> ...``: ``ops`` IR nodes alternating dense and relu."""
    values = [Value("x", (BATCH, width), "float32", SPAN, "x")]
    nodes: list[Node] = []
    current = "x"
    for index in range(ops):
        if index % 2 == 0:
            name = f"dense{index // 2 + 1}"
            node = Node(
                name,
                "dense",
                {"features": width, "bias": True},
                (current,),
                name,
                width * width + width,
                SPAN,
            )
        else:
            name = f"relu{index // 2 + 1}"
            node = Node(name, "relu", {}, (current,), name, 0, SPAN)
        nodes.append(node)
        values.append(Value(name, (BATCH, width), "float32", SPAN))
        current = name
    return Graph("Deep", "x", current, tuple(values), tuple(nodes), SPAN, "float32")


def chain_source(ops: int, width: int = WIDTH) -> str:
    lines = ["model Deep:", f"    input_shape = ({width},)", "    def forward(x):"]
    lines += [f"        x -> dense({width}).relu" for _ in range(ops // 2)]
    return "\n".join(lines) + "\n"


def best_of(repeat: int, fn: object) -> float:
    assert callable(fn)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--front-end",
        action="store_true",
        help="also time the front end on the same model written as source",
    )
    args = parser.parse_args()
    graph = chain_graph(args.ops)
    seconds = best_of(args.repeat, lambda: profile(graph, 32))
    result = profile(graph, 32)
    print(
        f"profile of a {len(graph.nodes):,}-operation model: {seconds:.3f} s "
        f"(budget 1 s, {1 / seconds:.1f}x under) -> {result.flops:,} FLOPs per sample, "
        f"{result.parameters:,} parameters"
    )
    diagram_s = best_of(args.repeat, lambda: render_dot(build_diagram(graph)))
    mermaid_s = best_of(args.repeat, lambda: render_mermaid(build_diagram(graph)))
    text_s = best_of(args.repeat, lambda: render_text(build_diagram(graph)))
    print(
        f"diagram (node/edge list + DOT): {diagram_s:.3f} s; + Mermaid: {mermaid_s:.3f} s; "
        f"+ text tree: {text_s:.3f} s"
    )
    if args.front_end:
        from aurane.compiler import run_front_end

        text = chain_source(args.ops)
        start = time.perf_counter()
        front = run_front_end(text, "deep.aur")
        front_s = time.perf_counter() - start
        lowered = front.graphs["Deep"]
        start = time.perf_counter()
        profile(lowered, 32)
        print(
            f"front end on the same model as source: {front_s:.3f} s (parse, check, lower); "
            f"profile of the lowered IR: {time.perf_counter() - start:.3f} s"
        )


if __name__ == "__main__":
    main()
