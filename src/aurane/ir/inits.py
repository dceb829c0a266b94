"""Which initialiser each layer's parameters end with, for ``aurane ir`` and ``profile``.

The order is the generated code's (``semantics/inits.py``): inside a class its rules in the
order written, then the layers' own ``init=``; the rules of a model also reach the layers
of the blocks it calls, after those blocks initialised themselves. A parameter no rule or
``init=`` reaches keeps PyTorch's default and is not listed. Names are the parameters'
state-dict names (a layer without ``as`` is named after its node id, as in the generated
class).
"""

from __future__ import annotations

from collections.abc import Iterator

from aurane.ir.graph import Graph, Node
from aurane.semantics.inits import InitSpec, Rule, parameter_names


def layer_path(node: Node) -> str:
    return node.layer or node.id


def _layers(graph: Graph, prefix: str) -> Iterator[tuple[str, Node]]:
    """Every layer of ``graph`` (blocks and repeat copies included) with its full path."""
    for node in graph.nodes:
        path = prefix + layer_path(node)
        if node.subgraph is None:
            yield path, node
            continue
        copies = range(node.repeat) if node.op == "repeat" else (None,)
        for copy in copies:
            inner = f"{path}.{copy}." if copy is not None else f"{path}."
            yield from _layers(node.subgraph, inner)


def effective_inits(graph: Graph) -> dict[str, dict[str, InitSpec]]:
    """Full parameter path (``transformer.h.0.attn.c_proj``) -> parameter -> initialiser."""
    out: dict[str, dict[str, InitSpec]] = {}
    _apply(graph, "", out)
    return out


def _apply(graph: Graph, prefix: str, out: dict[str, dict[str, InitSpec]]) -> None:
    for node in graph.nodes:  # inner classes first: they are built before this one
        if node.subgraph is not None:
            path = prefix + layer_path(node)
            copies = range(node.repeat) if node.op == "repeat" else (None,)
            for copy in copies:
                _apply(node.subgraph, f"{path}.{copy}." if copy is not None else f"{path}.", out)
    layers = list(_layers(graph, prefix))
    for rule in graph.init_rules:
        _rule(rule, layers, prefix, out)
    for node in graph.nodes:
        for param, spec in node.init:
            out.setdefault(prefix + layer_path(node), {})[param] = spec


def _rule(
    rule: Rule, layers: list[tuple[str, Node]], prefix: str, out: dict[str, dict[str, InitSpec]]
) -> None:
    for path, node in layers:
        local = path[len(prefix) :]
        for param in parameter_names(node.op, node.args):
            if rule.target.matches(node.op, f"{local}.{param}"):
                out.setdefault(path, {})[param] = rule.spec


def rule_reaches_nothing(graph: Graph, rule: Rule) -> bool:
    """Whether ``rule`` matches no parameter the compiler knows of (every layer's
    parameters known: a pattern over an attention or recurrent layer cannot be judged)."""
    layers = list(_layers(graph, ""))
    for path, node in layers:
        names = parameter_names(node.op, node.args)
        if not names and node.parameters and node.subgraph is None:
            return False  # parameters the table does not name: the rule may reach them
        if any(rule.target.matches(node.op, f"{path}.{param}") for param in names):
            return False
    return True


def init_texts(graph: Graph) -> dict[str, str]:
    """Node id -> ``weight=normal(std=0.02), bias=zeros`` for the top-level layers."""
    found = effective_inits(graph)
    out: dict[str, str] = {}
    for node in graph.nodes:
        specs = found.get(layer_path(node))
        if specs:
            out[node.id] = ", ".join(f"{param}={spec.text()}" for param, spec in specs.items())
    return out
