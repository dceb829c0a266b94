"""The module calls of the trace as a tree of regions, each classified by what it becomes
in its parent's body (``aurane.lift.structure``): a block call, a named chain, a container
of numbered children, or operations inline.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

from torch import nn

from aurane.lift.graph import LiftedGraph, Op
from aurane.lift.inputs import forward_signature
from aurane.lift.program import Region

CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)


def build_regions(graph: LiftedGraph, root: nn.Module) -> Region:
    top = Region(None, root)
    stack: list[Region] = [top]
    modules = dict(root.named_modules(remove_duplicate=False))
    for op in graph.ops:
        scopes = op.scope
        depth = 0
        while (
            depth < len(scopes)
            and depth + 1 < len(stack)
            and stack[depth + 1].scope is not None
            and stack[depth + 1].scope.key == scopes[depth].key  # type: ignore[union-attr]
        ):
            depth += 1
        del stack[depth + 1 :]
        for scope in scopes[depth:]:
            region = Region(scope, modules.get(scope.path, root))
            stack[-1].items.append(region)
            stack.append(region)
        stack[-1].items.append(op)
    _connect(top, graph)
    return top


def _connect(region: Region, graph: LiftedGraph, users: dict[str, list[Op]] | None = None) -> None:
    """Each region's external inputs and outputs (values crossing its boundary)."""
    users = graph.uses() if users is None else users
    for child in region.items:
        if isinstance(child, Region):
            _connect(child, graph, users)
    if region.scope is None:
        region.inputs = graph.inputs or (graph.input,)
        region.outputs = graph.outputs or (graph.output,)
        return
    inside = {op.id for op in region.ops()}
    inputs: list[str] = []
    outputs: list[str] = []
    for op in region.ops():
        for name in op.inputs:
            if name not in inside and name not in inputs:
                inputs.append(name)
        outside = [u for u in users.get(op.id, []) if u.id not in inside]
        returned = op.id == graph.output or op.id in graph.outputs
        if (outside or returned) and op.id not in outputs:
            outputs.append(op.id)
    region.inputs = tuple(inputs)
    region.outputs = tuple(outputs)


def _stateful(module: nn.Module) -> bool:
    return any(True for _ in module.parameters()) or any(True for _ in module.buffers())


def _keeps_sequential_forward(module: nn.Module) -> bool:
    return isinstance(module, nn.Sequential) and type(module).forward is nn.Sequential.forward


def _is_chain(region: Region, stateless: set[str]) -> bool:
    if not _keeps_sequential_forward(region.module):
        return False
    if any(isinstance(item, Region) for item in region.items):
        return False
    ops = [item for item in region.items if isinstance(item, Op)]
    names = [name for name, _ in region.module.named_children()]
    if not ops or [op.layer for op in ops] != [f"{region.path}.{name}" for name in names]:
        return False
    if names != [str(i) for i in range(len(names))]:
        return False
    previous = region.inputs[0] if len(region.inputs) == 1 else None
    for op in ops:
        if op.inputs != (previous,) or op.group is not None:
            return False
        previous = op.id
    return region.outputs == (previous,)


def classify(region: Region, stateless: set[str]) -> None:
    for child in region.items:
        if isinstance(child, Region):
            classify(child, stateless)
    heights = [c.height for c in region.items if isinstance(c, Region)]
    region.height = 1 + max(heights, default=0)
    if region.scope is None:
        region.kind = "block"
        return
    module = region.module
    own_layer = any(op.layer == region.path for op in region.ops())
    if _is_chain(region, stateless):
        region.kind = "chain"
    elif type(module) in CONTAINERS or _keeps_sequential_forward(module):
        region.kind = "container"
    elif (
        _takes(module, region)
        and _stateful(module)
        and not own_layer
        and all(_relative(op.layer, region.path) is not None for op in region.ops() if op.layer)
    ):
        region.kind = "block"
    else:
        region.kind = "inline"


def _takes(module: nn.Module, region: Region) -> bool:
    """Whether a call can be a block call: one tensor in and one out, or several tensors
    each a parameter of the module's forward (not a list of them: DenseNet's layers) and
    outputs it returns."""
    if len(region.inputs) == 1 and len(region.outputs) == 1:
        return True
    if not region.inputs or not region.outputs:
        return False
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return len(region.inputs) <= sum(1 for p in forward_signature(module) if p.kind in kinds)


def _relative(path: str | None, base: str) -> str | None:
    if path is None:
        return None
    if base == "":
        return path
    if path.startswith(base + "."):
        return path[len(base) + 1 :]
    return None


def _walk(region: Region) -> Iterator[Region]:
    for item in region.items:
        if isinstance(item, Region):
            yield from _walk(item)
    yield region


__all__ = ["CONTAINERS", "build_regions", "classify"]
