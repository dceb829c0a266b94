"""Calling a named ``nn.Sequential`` as one module: ``s = self.downsample(x)``.

A named chain ``(x -> conv2d(...) -> batchnorm()) as downsample`` (or layers named
``layer2.0``, ``layer2.1`` one after the other) builds an ``nn.Sequential``; its nodes are
emitted as one call when applying the container is provably the same as applying its
children in turn:

- the nodes are consecutive, named ``P.0`` .. ``P.(n-1)`` in order, or ``P.0.0``, ``P.0.1``,
  ``P.1`` ... through nested containers numbered ``0..k-1`` each, or by words in the order
  of their first use (``features.conv0``, ``features.denseblock1.denselayer1``: an
  ``nn.Sequential`` of named children, as torchvision's DenseNet), each nested container's
  layers one after the other (the outermost such ``P`` is taken), and no other layer of
  the graph lives under ``P``;
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
    """``(P, n)`` when the sites from ``index`` on apply the whole container ``P``; the
    outermost such container, so nested ``nn.Sequential`` (``block.0.1``) run as one."""
    first = sites[index].node.layer
    if first is None:
        return None
    parts = first.split(".")
    for k in range(1, len(parts)):
        found = _run(graph, sites, index, reads, output, ".".join(parts[:k]))
        if found is not None:
            return found
    return None


def applied_whole(
    graph: Graph,
    sites: Sequence[Site],
    reads: Sequence[tuple[int, ...]],
    output: int,
) -> frozenset[str]:
    """The containers ``forward`` applies whole (``sequential_run``): their constructors
    must be ``nn.Sequential``, named children included."""
    found: set[str] = set()
    index = 0
    while index < len(sites):
        run = sequential_run(graph, sites, index, reads, output)
        if run is None:
            index += 1
            continue
        found.add(run[0])
        index += run[1]
    return frozenset(found)


def _run(
    graph: Graph,
    sites: Sequence[Site],
    index: int,
    reads: Sequence[tuple[int, ...]],
    output: int,
    path: str,
) -> tuple[str, int] | None:
    children = [n.layer for n in graph.nodes if n.layer and n.layer.startswith(path + ".")]
    count = len(children)
    if count < 2 or index + count > len(sites):
        return None
    keys: list[tuple[str, ...]] = []
    for offset in range(count):
        position = index + offset
        site = sites[position]
        layer = site.node.layer
        if layer is None or not layer.startswith(path + "."):
            return None
        keys.append(tuple(layer[len(path) + 1 :].split(".")))
        if not _applies_module(site) or len(reads[position]) != 1:
            return None
        if offset and reads[position] != (position,):  # slot i + 1 is node i's output
            return None
        if offset < count - 1:  # the intermediate value: read only by the next node
            slot = position + 1
            if slot == output or any(slot in r for k, r in enumerate(reads) if k != slot):
                return None
    return (path, count) if _in_order(keys) else None


def _in_order(leaves: list[tuple[str, ...]]) -> bool:
    """Whether the leaves are every child of nested ``nn.Sequential`` in the order the
    containers apply them: each container's children numbered ``0..n-1`` in order, or all
    words (kept in first-use order), and each container's leaves one after the other."""
    if len(set(leaves)) != len(leaves):
        return False
    children: dict[tuple[str, ...], list[str]] = {}
    last: dict[tuple[str, ...], int] = {}  # each container's last leaf so far
    for position, leaf in enumerate(leaves):
        for depth in range(len(leaf)):
            parent = leaf[:depth]
            if depth and parent in last and last[parent] != position - 1:
                return False  # another container's leaf came between two of this one's
            last[parent] = position
            keys = children.setdefault(parent, [])
            if not keys or keys[-1] != leaf[depth]:
                keys.append(leaf[depth])
    if any(leaf in children for leaf in leaves):
        return False  # a layer is also a container
    for keys in children.values():
        numbered = keys == [str(i) for i in range(len(keys))]
        if not numbered and not all(key.isidentifier() for key in keys):
            return False
        if len(set(keys)) != len(keys):
            return False  # a child left and came back
    return True


def _applies_module(site: Site) -> bool:
    if site.node.op in FUNCTION_MODULES:
        return True
    step = emitter(site.node.op).forward(site)
    if step.unpack or step.loop or not isinstance(step.expr, Call):
        return False
    return step.expr.func == site.layer and step.expr.args == (site.x,)
