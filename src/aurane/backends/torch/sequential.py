"""Calling a named ``nn.Sequential`` as one module: ``s = self.downsample(x)``.

A named chain ``(x -> conv2d(...) -> batchnorm()) as downsample`` (or layers named
``layer2.0``, ``layer2.1`` one after the other) builds an ``nn.Sequential``; its nodes are
emitted as one call when applying the container is provably the same as applying its
children in turn:

- the nodes are consecutive, named ``P.0`` .. ``P.(n-1)`` in order, and no other layer of the
  graph lives under ``P`` (the container holds exactly them);
- each node after the first reads only the previous node's output, and every intermediate
  value is read by nothing else (not the return value either);
- each node's forward statement is ``self.<its layer>(<its input>)``, or the node is a
  function whose module form (``F.relu`` / ``nn.ReLU()``) is what the container holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from aurane.backends.torch.emit import emitter
from aurane.backends.torch.emit_common import Call, Site
from aurane.backends.torch.named import FUNCTION_MODULES
from aurane.ir.graph import Graph


def sequential_run(
    graph: Graph,
    sites: Sequence[Site],
    index: int,
    reads: Sequence[tuple[int, ...]],
    output: int,
) -> tuple[str, int] | None:
    """``(P, n)`` when the sites from ``index`` on apply the whole container ``P``."""
    first = sites[index].node.layer
    if first is None or not first.endswith(".0"):
        return None
    path = first[: -len(".0")]
    children = [n.layer for n in graph.nodes if n.layer and n.layer.startswith(path + ".")]
    count = len(children)
    if count < 2 or index + count > len(sites):
        return None
    for offset in range(count):
        position = index + offset
        site = sites[position]
        if site.node.layer != f"{path}.{offset}" or not _applies_module(site):
            return None
        if len(reads[position]) != 1:
            return None
        if offset and reads[position] != (position,):  # slot i + 1 is node i's output
            return None
        if offset < count - 1:  # the intermediate value: read only by the next node
            slot = position + 1
            if slot == output or any(slot in r for k, r in enumerate(reads) if k != slot):
                return None
    return path, count


def _applies_module(site: Site) -> bool:
    if site.node.op in FUNCTION_MODULES:
        return True
    step = emitter(site.node.op).forward(site)
    if step.unpack or step.loop or not isinstance(step.expr, Call):
        return False
    return step.expr.func == site.layer and step.expr.args == (site.x,)
