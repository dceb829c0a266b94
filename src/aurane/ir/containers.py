"""Numbered containers (issue 24): ``as features.*``, repeats that continue a container, and
blocks spliced into one.

- ``as P.*`` names the layer ``P.k``, k the next index of the container ``P``: one past the
  largest number among the layers named under ``P`` so far (0 for a new container). A
  ``repeat(...) as P`` already there is expanded into its copies ``P.0``..``P.(n-1)`` first,
  so appending continues it.
- ``repeat(B, n, start=k) as P`` names its copies ``P.k``..``P.(k+n-1)``; ``repeat(B, n) as
  P`` where ``P`` already holds numbered layers continues at the next index. Either way the
  repeat becomes ``n`` block nodes (one per copy), so the container holds every child.
- ``-> *Block(...) as P`` (splicing) inlines the block's nodes into the caller: each node
  with a layer object takes the next index of ``P`` (a layer the block named ``conv``
  becomes ``P.conv``), functions stay functions. ``features.0.weight`` instead of
  ``features.0.conv2d1.weight``, as torchvision's flat ``nn.Sequential``s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.blocks import rebase
from aurane.ir.builder import GraphBuilder
from aurane.ir.graph import Graph, Node, Value
from aurane.ops.modules import nameable
from aurane.records import replace
from aurane.semantics.symbolic import is_symbolic, plain
from aurane.source import Span

STAR = "*"


def children(b: GraphBuilder, container: str) -> list[str]:
    """The first parts below ``container`` of the layers named so far, in order."""
    prefix = container + "."
    found: list[str] = []
    for node in b.nodes:
        if node.layer is not None and node.layer.startswith(prefix):
            part = node.layer[len(prefix) :].split(".")[0]
            if part not in found:
                found.append(part)
    return found


def next_index(b: GraphBuilder, container: str) -> int:
    numbers = [int(part) for part in children(b, container) if part.isdigit()]
    return max(numbers, default=-1) + 1


def resolve_star(b: GraphBuilder, path: str, span: Span, out: list[Diagnostic]) -> str | None:
    """``P.*`` as ``P.k`` (the next index); other paths unchanged. None after an error."""
    if not path.endswith("." + STAR):
        return path
    container = path[: -len(STAR) - 1]
    whole = next((i for i, n in enumerate(b.nodes) if n.layer == container), None)
    if whole is not None:
        if b.nodes[whole].op != "repeat":
            out.append(
                diag(
                    "S045",
                    f"'{container}' names a {b.nodes[whole].op} layer, not a container, so "
                    "'.*' cannot append to it",
                    span,
                    labels=(Label(b.layer_spans.get(b.nodes[whole].id, span), "named here"),),
                    hint=f"name the first layer {container}.0 (or {container}.*)",
                )
            )
            return None
        expand_repeat(b, whole, container, 0)
    words = [part for part in children(b, container) if not part.isdigit()]
    if words:
        out.append(
            diag(
                "S045",
                f"'{container}' holds named layers ({', '.join(words[:3])}), so it has no next "
                "index to append at",
                span,
                hint=f"name this layer {container}.<word>, or use a numbered container",
            )
        )
        return None
    return f"{container}.{next_index(b, container)}"


def expand_repeat(b: GraphBuilder, index: int, container: str, start: int) -> None:
    """Replace the repeat node at ``index`` by one block node per copy, named
    ``container.start``.. (the last copy keeps the repeat's output value)."""
    node = b.nodes[index]
    assert node.subgraph is not None
    source = node.inputs[0]
    copies: list[Node] = []
    value = b.values[node.output]
    for copy in range(node.repeat):
        last = copy == node.repeat - 1
        node_id = node.id if last else b.fresh(f"{node.id}_")
        per_copy = node.parameters // max(node.repeat, 1)
        made = Node(
            id=node_id,
            op="block",
            args={"block": node.block, **_arguments(node)},
            inputs=(source,),
            output=node_id,
            parameters=per_copy,
            span=node.span,
            block=node.block,
            subgraph=node.subgraph,
            layer=f"{container}.{start + copy}",
            origin=node.origin,
        )
        if not last:
            b.values[node_id] = Value(node_id, value.shape, value.dtype, value.span)
            b.uses[node_id] += 1
            b.layer_spans[node_id] = b.layer_spans.get(node.id, node.span)
        copies.append(made)
        source = node_id
    # the copies' values come right before the repeat's own value (the IR's value order)
    if len(copies) > 1:
        names = [c.output for c in copies[:-1]]
        ordered = {k: v for k, v in b.values.items() if k not in names}
        rebuilt: dict[str, Value] = {}
        for name, kept in ordered.items():
            if name == node.output:
                for extra in names:
                    rebuilt[extra] = b.values[extra]
            rebuilt[name] = kept
        b.values.clear()
        b.values.update(rebuilt)
    b.nodes[index : index + 1] = copies
    for made in copies:
        b.producers[made.output] = made


def _arguments(node: Node) -> dict[str, Any]:
    given = node.args.get("arguments")
    return {"arguments": dict(given)} if isinstance(given, Mapping) else {}


def splice(
    b: GraphBuilder,
    sub: Graph,
    input_name: str,
    container: str,
    span: Span,
    in_shape: tuple[Any, ...],
    out: list[Diagnostic],
) -> str | None:
    """Inline ``sub``'s nodes after ``input_name``; their layers go into ``container``."""
    if container.endswith("." + STAR):
        resolved = resolve_star(b, container, span, out)
        if resolved is None:
            return None
        container = resolved
    env = _rebase_env(sub, in_shape)
    names: dict[str, str] = {sub.input: input_name}
    index = next_index(b, container)
    result = input_name
    for node in sub.nodes:
        stem = node.id.rstrip("0123456789") or node.op
        node_id = b.fresh(stem)
        layer = None
        if node.layer is not None:
            layer = f"{container}.{node.layer}"
        elif nameable(node.op):
            layer = f"{container}.{index}"
            index += 1
        inputs = tuple(names[name] for name in node.inputs)
        for name in inputs:
            b.uses[name] += 1
        made = replace(
            node,
            id=node_id,
            output=node_id,
            inputs=inputs,
            args=_rebase(dict(node.args), env),
            layer=layer,
            suffix_of=names.get(node.suffix_of) if node.suffix_of else None,
        )
        names[node.id] = node_id
        value = sub.value(node.output)
        shape = None if value.shape is None else _rebase(value.shape, env)
        b.add_node(made)
        b.add_value(Value(node_id, shape, value.dtype, span))
        if layer is not None:
            b.layer_spans[node_id] = span
        result = node_id
    for tied, path in sub.tied.items():
        b.ties[names[tied]] = (f"{container}.{path}", span)
    b.uses[input_name] -= 1 if sub.nodes else 0
    return names.get(sub.output, result)


def _rebase_env(sub: Graph, in_shape: tuple[Any, ...]) -> dict[str, Any]:
    """The block's parameters and input sizes in the caller's terms (``blocks.rebase``)."""
    env: dict[str, Any] = dict(sub.block_args)
    for index in range(2):
        if index + 1 < len(in_shape):
            env[f"__in{index}"] = in_shape[index + 1]
    return env


def _rebase(value: Any, env: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {k: _rebase(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebase(v, env) for v in value]
    if isinstance(value, tuple):
        return tuple(_rebase(v, env) for v in value)
    if is_symbolic(value):
        return rebase(value, env) if env else plain(value)
    return value
