"""The flags that may change a size a class writes as its number (issue 24 item 3).

A size folded into a module (``nn.Linear(3, w)``, the 3 the last axis after
``avgpool(2, ceil_mode=c)`` of 7) is right at the calls' values of what changes it. A
numeric parameter shows in the size's tree; a boolean or string one does not (``c``: 3 at
``False``, 4 at ``True``). Of the flags a call before the size reads, a flag that gave
arguments of a built-in operation is tried at its other value: one that leaves the
operation's output shape as it is (``bias=b``) cannot change the size; any other is taken
as changing it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aurane.ir.graph import Graph, Node
from aurane.ops import bind_defaults, lookup
from aurane.ops.spec import InferContext, OpSpec, TensorType
from aurane.semantics.symbolic import plain


def size_flags(graph: Graph, node: Node, read: Iterable[str]) -> set[str]:
    """Of the block parameters ``read`` (those the call making ``node`` of the instance
    ``graph`` reads), the boolean and string ones that may change ``node``'s output shape."""
    given = {**graph.block_defaults, **graph.block_args}
    flags = {p for p in read if isinstance(plain(given.get(p)), bool | str)}
    spec = lookup(node.op) if node.op not in ("block", "repeat") else None
    refs = graph.block_refs.get(node.id, {})
    kept: set[str] = set()
    for param in flags:
        value = plain(given.get(param))
        args = [arg for arg, ref in refs.items() if ref == param and "." not in arg]
        if spec is None or not args or not isinstance(value, bool):
            kept.add(param)  # a string, a block's or one read in an expression: may
        elif not _same_shape(graph, node, spec, {arg: not value for arg in args}):
            kept.add(param)
    return kept


def _same_shape(graph: Graph, node: Node, spec: OpSpec, changed: dict[str, Any]) -> bool:
    """Whether ``node`` infers the same output shape with the arguments ``changed``; False
    where either cannot be inferred here."""
    values = {v.name: v for v in graph.values}
    types = []
    for name in node.inputs:
        value = values.get(name)
        if value is None or value.shape is None:
            return False
        types.append(TensorType(tuple(plain(value.shape[1:])), value.dtype))
    args = {name: plain(value) for name, value in node.args.items()}
    try:
        shapes = [
            tuple(
                spec.infer(
                    InferContext.of_node(
                        bind_defaults(spec, given), tuple(types), graph.param_dtype
                    )
                ).shape
            )
            for given in (args, {**args, **changed})
        ]
    except Exception:  # noqa: BLE001 - an argument set the rule refuses: taken as changing it
        return False
    return shapes[0] == shapes[1]
