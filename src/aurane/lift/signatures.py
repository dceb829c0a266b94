"""What makes two instances of a class one block: the structure of a body with its sizes
blanked out (``_signature``), the sizes themselves (``_numbers``, which become block
parameters where instances differ) and a trailing residual ``add`` that only some
instances have, moved to the call (``.residual``).
"""

from __future__ import annotations

from typing import Any

from aurane.lift.graph import Op
from aurane.lift.program import BlockDef, Region, Step
from aurane.ops.modules import MODULE_OPS


def _callee(step: Step) -> tuple[BlockDef, dict[str, Any], bool]:
    if step.block is not None:
        return step.block, step.call, step.residual
    region = step.region
    assert region is not None and region.definition is not None
    return region.definition, region.arguments, region.residual


COUNT = "*count"  # the slot of a repeat's or a loop's count (no parameter takes the name)


# -- structure signatures ------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _op_args(step: Step) -> list[tuple[int, Op]]:
    if step.kind == "op" and step.op is not None:
        return [(0, step.op)]
    return list(enumerate(step.ops))


# arguments that are axes or positions, never sizes: they stay as written (and two
# instances that differ in one are two structures)
AXES = frozenset({"dim", "dim0", "dim1", "dims", "index", "start", "end", "step", "axes", "chunks"})


def _sizing(op: str, key: str) -> bool:
    """Whether argument ``key`` of ``op`` is a size a block parameter may stand for."""
    return key not in AXES or (op == "multihead_attention" and key == "dim")


def _numbers(steps: list[Step]) -> tuple[dict[tuple[int, int, str, int], Any], set[Any]]:
    """Every size of a body: (step, op in the step, argument, element) -> value; and the
    slots that are a layer's or a block call's (the ones a constructor argument may name
    even where every instance has the same value)."""
    found: dict[tuple[int, int, str, int], Any] = {}
    layered: set[Any] = set()
    for index, step in enumerate(steps):
        if step.kind == "call":
            _, call, _ = _callee(step)
            if step.repeat > 1:  # repeat(B, n) or a loop's range(n): a parameter where
                found[(index, 0, COUNT, -1)] = step.repeat  # instances differ, else a number
            for key, value in call.items():
                if _is_number(value):
                    found[(index, 0, key, -1)] = value
                    layered.add((index, 0, key, -1))
            continue
        for position, op in _op_args(step):
            for key, value in op.args.items():
                if not _sizing(op.op, key):
                    continue
                slots: list[tuple[tuple[int, int, str, int], Any]] = []
                if _is_number(value):
                    slots.append(((index, position, key, -1), value))
                elif isinstance(value, tuple) and all(_is_number(v) for v in value):
                    slots += [((index, position, key, sub), v) for sub, v in enumerate(value)]
                for slot, item in slots:
                    found[slot] = item
                    if op.op in MODULE_OPS:
                        layered.add(slot)
    return found, layered


def _shape_of_value(op: str, key: str, value: Any) -> Any:
    """An argument as the structure sees it: sizes blanked out, everything else as is."""
    if not _sizing(op, key):
        return value
    if _is_number(value):
        return "#"
    if isinstance(value, tuple) and all(_is_number(v) for v in value):
        return ("#",) * len(value)
    return value


def _signature(steps: list[Step], block_inputs: str | tuple[str, ...]) -> Any:
    inputs = (block_inputs,) if isinstance(block_inputs, str) else block_inputs
    local: dict[str, Any] = {name: -2 - i for i, name in enumerate(inputs)}
    if len(inputs) == 1:
        local[inputs[0]] = 0
    parts: list[Any] = []
    for index, step in enumerate(steps):
        wiring = tuple(local.get(name, -1) for name in step.inputs)
        if step.kind == "call":
            block, _, residual = _callee(step)
            # a count of copies is a size (blanked): blocks that differ in it are one block
            head: Any = ("call", block.name, residual, step.repeat > 1, step.loop_from)
        else:
            head = (
                step.kind,
                tuple(
                    (
                        op.op,
                        tuple(
                            sorted((k, _shape_of_value(op.op, k, v)) for k, v in op.args.items())
                        ),
                        op.group is not None,
                    )
                    for _, op in _op_args(step)
                ),
            )
        parts.append((head, step.name, wiring))
        local[step.output] = index + 1
        for position, value in enumerate(step.outputs[1:], start=1):
            local[value] = (index + 1, position)
    return tuple(parts)


def _layer_names(steps: list[Step]) -> list[str]:
    return [step.name for step in steps if step.name]


# -- residuals -----------------------------------------------------------------------------------


def _peel_residuals(instances: list[Region]) -> None:
    """Instances whose body ends in ``add(x, rest)`` while others of the class are ``rest``:
    the add moves to the call (``.residual``)."""
    if any(len(r.inputs) > 1 or len(r.outputs) > 1 for r in instances):
        return  # .residual adds a call's one input
    plain = {_signature(r.steps, r.inputs[0]) for r in instances if not _trailing_residual(r)}
    if not plain:
        return
    for region in instances:
        found = _trailing_residual(region)
        if found is None:
            continue
        peeled = region.steps[:-1]
        if _signature(peeled, region.inputs[0]) in plain:
            region.steps = peeled
            region.outputs = (found,)
            region.residual = True


def _trailing_residual(region: Region) -> str | None:
    if len(region.steps) < 2:
        return None
    last = region.steps[-1]
    if last.kind != "op" or last.op is None or last.op.op != "add" or last.op.args:
        return None
    x = region.inputs[0]
    a, b = last.op.inputs
    other = b if a == x else a if b == x else None
    if other is None or other != region.steps[-2].output:
        return None
    return other
