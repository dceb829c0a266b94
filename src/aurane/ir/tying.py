"""Weight tying: ``dense(vocab, bias=false, tie=transformer.wte) as lm_head``.

``tie=PATH`` is not an argument of the operation (the catalog never sees it): the semantic
pass checks its form (``dense`` only, a layer path), lowering records it per node and, once
the whole graph is built, resolves the path to a named ``embedding`` or ``dense`` of the
same model, or to one inside a named block call (``encoder.wte``: layer ``wte`` of the call
``as encoder``; a numbered path into a named ``repeat`` is resolved too, though ``tie=``
cannot spell one yet: ``layers.0`` reads as a number). It checks that
the two weights have the same shape and removes the shared weight from the tied node's
parameter count (a shared tensor is counted once, as ``nn.Module.parameters()`` does).
Codegen writes ``self.lm_head.weight = self.transformer.wte.weight``. A layer inside a
block cannot tie to a layer of its caller (the block's class is built before it): S047.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.graph import Node
from aurane.records import replace
from aurane.semantics.sizes import Size, is_symbolic
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.tying import TIED_OPS, split_tie
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.layer_names import layer_parts

if TYPE_CHECKING:
    from aurane.ir.builder import GraphBuilder

TARGET_OPS = TIED_OPS  # the layers whose weight can be shared


def tie_target(keywords: tuple[ast.Keyword, ...]) -> tuple[str, Span] | None:
    """The layer path a call's ``tie=`` names (quoted parts unquoted: ``"block1-0"``)."""
    _, tie = split_tie(keywords)
    if tie is None or not isinstance(tie.value, ast.Name):
        return None
    path = ".".join(part.strip("\"'") for part in layer_parts(tie.value.id))
    return path, tie.value.span


def weight_shape(node: Node, in_shape: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """The ``weight`` tensor's shape of a layer (None: unknown, or it has none).

    ``in_shape`` is the layer input's per-sample shape (channels first for a convolution).
    """
    args = node.args
    if node.op == "embedding":
        return (int(args["vocabulary"]), int(args["width"]))
    if in_shape is None or not in_shape:
        return None
    if node.op == "dense":
        if args.get("transposed"):  # stored (in, out), HF's Conv1D
            return (int(in_shape[-1]), int(args["features"]))
        return (int(args["features"]), int(in_shape[-1]))
    if node.op in TIED_OPS and "conv" in node.op:
        dims = int(node.op[-2])
        kernel = args["kernel"]
        sizes = tuple(kernel) if isinstance(kernel, tuple | list) else (kernel,) * dims
        groups = int(args.get("groups", 1))
        out, inputs = int(args["channels"]), int(in_shape[0])
        if node.op.startswith("conv_transpose"):
            return (inputs, out // groups, *map(int, sizes))
        return (out, inputs // groups, *map(int, sizes))
    return None


def resolve_ties(builder: GraphBuilder, diagnostics: list[Diagnostic]) -> dict[str, str]:
    """Check every recorded ``tie=`` of a built graph; the tied node ids and their targets.

    Each tied node's parameter count loses the shared weight.
    """
    by_path = {node.layer: node for node in builder.nodes if node.layer is not None}
    tied: dict[str, str] = {}
    for node_id, (path, span) in builder.ties.items():
        index = next(i for i, n in enumerate(builder.nodes) if n.id == node_id)
        node = builder.nodes[index]
        target = by_path.get(path)
        inside = None if target is not None else _in_block(builder.nodes, path)
        if inside is not None:
            target, target_input = inside
        elif target is not None:
            target_input = _in_shape(builder, target)
        if target is None or target.op not in TARGET_OPS or target.id == node_id:
            diagnostics.append(_bad_target(path, span, target, node_id, by_path))
            continue
        shape = weight_shape(node, _in_shape(builder, node))
        shared = weight_shape(target, target_input)
        if shape is None or shared is None:
            continue  # an upstream shape failed and was reported
        if shape != shared:
            where = builder.layer_spans.get(target.id, target.span)
            diagnostics.append(
                diag(
                    "T041",
                    f"cannot tie: this {node.op} weight is {_shape(shape)} but "
                    f"'{path}' ({target.op}) has weight {_shape(shared)}",
                    span,
                    labels=(Label(where, f"'{path}' is named here"),),
                    hint="make the two layers' weight shapes agree, or drop tie=",
                )
            )
            continue
        tied[node_id] = path
        builder.nodes[index] = replace(node, parameters=node.parameters - math.prod(shape))
        builder.producers[node.output] = builder.nodes[index]
    return tied


def _bad_target(
    path: str, span: Span, target: Node | None, node_id: str, by_path: dict[str, Node]
) -> Diagnostic:
    if target is None:
        candidates = [p for p, n in by_path.items() if n.op in TARGET_OPS and n.id != node_id]
        return diag(
            "S047",
            f"tie={path}: no layer of this model, nor of the blocks it calls, is named '{path}'",
            span,
            hint=did_you_mean(path, candidates)
            or "tie= reaches the layers of this model and, through a named call, of its blocks "
            "(encoder.wte); not a layer of the model that calls this one",
        )
    if target.id == node_id:
        return diag("S047", "a layer cannot tie its weight to itself", span)
    return diag(
        "S047",
        f"tie={path}: '{path}' is a {target.op} layer, which has no weight to share",
        span,
        hint="tie to a dense, embedding or convolution layer",
    )


def _in_block(nodes: Sequence[Node], path: str) -> tuple[Node, tuple[int, ...] | None] | None:
    """A layer inside a named block call: ``encoder.wte`` is layer ``wte`` of the block
    named ``encoder``; ``layers.0.wte`` that of the first copy of ``repeat(...) as layers``.
    Returns the layer's node and its input's per-sample shape."""
    for node in nodes:
        sub = node.subgraph
        if sub is None or node.layer is None or not path.startswith(node.layer + "."):
            continue
        rest = path[len(node.layer) + 1 :]
        if node.op == "repeat":
            index, _, rest = rest.partition(".")
            if not index.isdigit() or int(index) >= node.repeat or not rest:
                continue
        for inner in sub.nodes:
            if inner.layer == rest:
                shape = sub.value(inner.inputs[0]).sample_shape if inner.inputs else None
                return inner, _concrete(shape)
        found = _in_block(sub.nodes, rest)
        if found is not None:
            return found
    return None


def _in_shape(builder: GraphBuilder, node: Node) -> tuple[int, ...] | None:
    if not node.inputs:
        return None
    return _concrete(builder.values[node.inputs[0]].sample_shape)


def _concrete(shape: Sequence[Size] | None) -> tuple[int, ...] | None:
    """The shape as ints, a symbolic axis as -1: a weight never depends on one (a dense
    over a symbolic axis is T114), but an embedding of ``(seq,)`` token ids may be tied."""
    if not shape:
        return None
    return tuple(-1 if is_symbolic(size) else int(size) for size in shape)


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"
