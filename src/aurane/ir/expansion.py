"""How big a model is once every ``repeat`` and block call is expanded (docs/limits.md).

The IR keeps a repeat compact: one node holding its block's graph once and a count, so
lowering ``repeat(Block, 1000000)`` is cheap. Whatever expands it (``visualize
--expand``, ``verify``, ``profile``'s per-layer tables, the playground's expanded
diagram, the generated module's layers) does work and holds memory per expanded
operation. ``check`` therefore refuses, before anything expands, a repeat count above
``MAX_REPEAT`` and a model whose expanded operation count is above
``MAX_EXPANDED_OPERATIONS``; every consumer runs only on programs ``check`` accepts.

Counting is arithmetic on the compact graphs, memoised per block graph, so a program of
nested blocks that would expand to 2**30 operations is counted in a few steps.
"""

from __future__ import annotations

from collections.abc import Mapping

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.ir.graph import Graph, Node

__all__ = ["MAX_EXPANDED_OPERATIONS", "MAX_REPEAT", "expanded_operations", "limit_expansion"]

# The largest count one ``repeat`` may give: deep real models repeat a block at most a few
# hundred times (GPT-3: 96 layers, ResNet-152: 36 bottlenecks in one stage).
MAX_REPEAT = 10_000
# Operations of one model with every repeat and block expanded. The zoo's largest expands
# to 531 (Llama); an 80-layer Llama to about 2,000, a 1,000-layer DeepNet to about 15,000.
MAX_EXPANDED_OPERATIONS = 20_000


class _Counter:
    """Expanded operation counts of graphs, memoised by identity (blocks are shared).

    Iterative, not recursive: a program may nest thousands of blocks (each calling the
    next), deeper than Python's recursion limit.
    """

    def __init__(self) -> None:
        self.memo: dict[int, int] = {}

    def graph(self, graph: Graph) -> int:
        stack = [graph]
        while stack:
            top = stack[-1]
            if id(top) in self.memo:
                stack.pop()
                continue
            pending = [
                n.subgraph
                for n in top.nodes
                if n.subgraph is not None and id(n.subgraph) not in self.memo
            ]
            if pending:
                stack.extend(pending)
            else:
                self.memo[id(top)] = sum(self.node(node) for node in top.nodes)
                stack.pop()
        return self.memo[id(graph)]

    def node(self, node: Node) -> int:
        """A node's count; a block's graph must be counted already (``graph`` sees to it)."""
        if node.subgraph is None:
            return 1
        return max(node.repeat, 0) * self.memo[id(node.subgraph)]


def expanded_operations(graph: Graph) -> int:
    """Operations of ``graph`` with every repeat and block call expanded."""
    return _Counter().graph(graph)


def limit_expansion(graphs: Mapping[str, Graph]) -> tuple[dict[str, Graph], list[Diagnostic]]:
    """The graphs within the limits, and T116/T117 for the others.

    A model over a limit keeps its diagnostics but loses its graph, so no consumer that
    draws or profiles the graphs of a program with errors (the playground, the language
    server) can expand it.
    """
    kept: dict[str, Graph] = {}
    found: list[Diagnostic] = []
    counter = _Counter()
    reported: set[tuple[int, int]] = set()
    for name, graph in graphs.items():
        repeats = _repeats_over_limit(graph)
        for node in repeats:
            if (node.span.line, node.span.column) not in reported:
                reported.add((node.span.line, node.span.column))
                found.append(
                    diag(
                        "T116",
                        f"repeat count {node.repeat:,} is over the limit of {MAX_REPEAT:,}",
                        node.span,
                        hint=f"repeat a block at most {MAX_REPEAT:,} times (docs/limits.md)",
                    )
                )
        total = counter.graph(graph)
        if not repeats and total > MAX_EXPANDED_OPERATIONS:
            node = _culprit(graph, counter)
            if (node.span.line, node.span.column) not in reported:
                reported.add((node.span.line, node.span.column))
                found.append(
                    diag(
                        "T117",
                        f"model '{name}' expands to {total:,} operations, over the limit of "
                        f"{MAX_EXPANDED_OPERATIONS:,}",
                        node.span,
                        hint="repeat fewer times or nest fewer blocks (docs/limits.md)",
                    )
                )
        if not repeats and total <= MAX_EXPANDED_OPERATIONS:
            kept[name] = graph
    return kept, found


def _repeats_over_limit(graph: Graph) -> list[Node]:
    """Repeat nodes over ``MAX_REPEAT`` in ``graph`` and its blocks, each graph visited once."""
    found: list[Node] = []
    seen = {id(graph)}
    todo = [graph]
    while todo:
        for node in todo.pop().nodes:
            if node.op == "repeat" and node.repeat > MAX_REPEAT:
                found.append(node)
            if node.subgraph is not None and id(node.subgraph) not in seen:
                seen.add(id(node.subgraph))
                todo.append(node.subgraph)
    return found


def _culprit(graph: Graph, counter: _Counter) -> Node:
    """The operation or call at which ``graph``'s running count first passes the limit,
    followed into a block while the block alone is over the limit."""
    while True:
        running = 0
        for node in graph.nodes:
            running += counter.node(node)
            if running > MAX_EXPANDED_OPERATIONS:
                break
        sub = node.subgraph
        if sub is None or counter.graph(sub) <= MAX_EXPANDED_OPERATIONS:
            return node
        graph = sub
