"""Feature maps grown by concatenation (DenseNet), rewritten so that each layer is one call.

torchvision's ``_DenseLayer`` takes the *list* of every earlier feature map and
concatenates it first (``cat([x, h1, ..., hk], 1)``), and ``_DenseBlock`` returns the
concatenation of them all. Traced as is, each layer after the first takes several inputs
and is written inline. Two rewrites of the lifted graph, both exact (a concatenation only
copies values):

- ``concat(x, h1, ..., hk)`` where ``concat(x, h1, ..., hk-1)`` (same axis, same order) was
  computed before reads that one: ``concat(previous, hk)``, the running value grown by the
  new features;
- such a ``concat(u, v)`` that directly follows the call that made ``v`` from ``u`` (``v``
  read by nothing else) joins that call, when it opens the next call of the same class
  (the next layer's ``cat``) or follows the last of them in their parent (the block's
  ``cat``) with ``u`` a value grown so: each layer then computes ``concat(x, body(x))``,
  as the zoo's ``DenseLayer`` does, and takes and gives one tensor.

Only the structure changes (which module call an operation is written in); the operations,
their order and the state dict keys stay.
"""

from __future__ import annotations

from aurane.lift.graph import LiftedGraph, Op


def grow_concatenations(graph: LiftedGraph) -> None:
    """Both rewrites: every prefix first (a layer's features are then read once), then the
    moves in execution order (each layer's ``cat`` after the previous one's)."""
    made: dict[tuple[tuple[str, ...], object], str] = {}  # every input, the axis -> value
    for op in graph.ops:
        if op.op == "concat" and op.inputs:
            flat, axis = op.inputs, op.args.get("dim")
            _reuse_prefix(op, made, axis)
            made[(flat, axis)] = op.id
    grown: set[str] = set()  # concatenations moved into the call before them
    users = graph.uses()
    for index, op in enumerate(graph.ops):
        previous = graph.ops[index - 1] if index > 0 else None
        if op.op != "concat" or previous is None:
            continue
        if _join_previous_call(op, previous, graph, users, grown):
            grown.add(op.id)


def _reuse_prefix(op: Op, made: dict[tuple[tuple[str, ...], object], str], axis: object) -> None:
    for cut in range(len(op.inputs) - 1, 1, -1):  # the longest prefix of two inputs or more
        found = made.get((op.inputs[:cut], axis))
        if found is not None:
            op.inputs = (found, *op.inputs[cut:])
            return


def _join_previous_call(
    op: Op, previous: Op, graph: LiftedGraph, users: dict[str, list[Op]], grown: set[str]
) -> bool:
    """Move ``op`` (``concat(u, v)``) into the module call that made ``v`` just before it."""
    if len(op.inputs) != 2 or previous.id != op.inputs[1]:
        return False
    grown_from, new = op.inputs
    if [u.id for u in users.get(new, [])] != [op.id]:
        return False
    depth = 0  # the first call ``previous`` ran in that ``op`` did not
    while (
        depth < len(op.scope)
        and depth < len(previous.scope)
        and op.scope[depth].key == previous.scope[depth].key
    ):
        depth += 1
    if depth >= len(previous.scope):
        return False
    call = previous.scope[depth]
    if depth < len(op.scope):  # the next call of the same class, which it opens
        if op.scope[depth].cls is not call.cls:
            return False
    elif grown_from not in grown:  # in the parent: only after a layer grown so
        return False
    inside = [o for o in graph.ops if len(o.scope) > depth and o.scope[depth].key == call.key]
    made_inside = {o.id for o in inside}
    if grown_from in made_inside or not any(grown_from in o.inputs for o in inside):
        return False  # ``u`` must be what the call reads from outside
    op.scope = previous.scope[: depth + 1]
    return True


__all__ = ["grow_concatenations"]
