"""Blocks rebuilt from the module hierarchy: the ``Program`` the emitter writes.

Each module call of the trace is a *region* (the operations that ran inside it). A region
becomes, in its parent's body:

- a **named chain** ``(x -> conv2d(...) -> batchnorm().relu) as features.0`` when it is an
  ``nn.Sequential`` (or a subclass that keeps its forward) of layers only, applied in order;
- a **container** (plain ``nn.Sequential``/``ModuleList``/``ModuleDict``, or a ``Sequential``
  of blocks): its children appear in the parent with dotted names (``as layer1.0``), and a
  run of identical children numbered ``0..n-1`` becomes ``repeat(Block(64), n) as layer1``;
- a **block call** ``Bottleneck(64) as layer1.0`` when it takes one tensor and gives one
  (and holds weights): the model block is defined once per class and structure;
- **inline** otherwise (several inputs, a stateless helper module): its operations join the
  parent's body, their layer names keeping the module path.

Instances of one class with the same structure share one parameterised block: the numbers
that differ between instances become parameters (``width``), named after the class's
constructor argument of the same values when the constructor was observed
(``aurane.lift.spec``), and written as an expression of another parameter where they are
a multiple of it (``4 * width``). A trailing ``add(x, body(x))`` that only some instances
of a class have becomes ``.residual`` at those calls (torchvision's ``use_res_connect``).

The steps: ``regions`` (the tree of module calls, classified), ``signatures`` (which
instances share a structure; residuals), ``block_params`` (the numbers that become
parameters), on the records of ``program``; this module walks them into the ``Program``.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from torch import nn

from aurane.lift.block_params import _parameterise
from aurane.lift.concats import grow_concatenations
from aurane.lift.graph import SHARED, Gap, LiftedGraph, Op
from aurane.lift.program import RESERVED, BlockDef, Program, Region, Step
from aurane.lift.regions import _relative, _stateful, _walk, build_regions, classify
from aurane.lift.signatures import _layer_names, _numbers, _peel_residuals, _signature
from aurane.ops import CATALOG

_DIGITS_THEN_PART = re.compile(r"-\d+\.")  # ``block1-0.proj``: lexes as a malformed number


# -- bodies ---------------------------------------------------------------------------------------


class Structurer:
    def __init__(
        self,
        graph: LiftedGraph,
        root: nn.Module,
        constructors: Mapping[int, Mapping[str, Any]] | None = None,
        name: str | None = None,
    ) -> None:
        self.graph = graph
        self.root = root
        self.constructors = constructors or {}
        self.top_name = name
        self.modules = dict(root.named_modules(remove_duplicate=False))
        self.stateless = {path for path, module in self.modules.items() if not _stateful(module)}
        self.blocks: list[BlockDef] = []
        self.producer = graph.producer()
        self.taken: set[str] = set()
        self.gaps: list[Gap] = []

    def run(self) -> Program:
        grow_concatenations(self.graph)  # DenseNet's layers: one call each
        top = build_regions(self.graph, self.root)
        classify(top, self.stateless)
        seen: set[str] = set()
        for region in _walk(top):  # a block with weights called twice shares them: a gap
            if region.kind == "block" and region.scope is not None:
                if region.path in seen:
                    label = type(region.module).__name__
                    self.gaps.append(Gap(region.path, label, SHARED))
                seen.add(region.path)
        regions = list(_walk(top))
        for region in regions:
            if region.kind == "block":
                region.steps = self._body(region, region.path)
        self._define(regions)
        top_def = self._top(top)
        return Program(
            self.blocks,
            top_def,
            self.graph.input_shape,
            self.graph.input_dtype,
            self.gaps,
            output_names=self.graph.output_names if top_def.outputs else (),
        )

    # a region's items as steps of the block at ``base``
    def _body(self, region: Region, base: str) -> list[Step]:
        steps: list[Step] = []
        for item in region.items:
            if isinstance(item, Op):
                steps.append(self._op_step(item, base))
                continue
            kind = item.kind
            if kind == "block":
                steps.append(
                    Step(
                        "call",
                        item.inputs,
                        item.outputs[0],
                        region=item,
                        name=_relative(item.path, base),
                        outputs=item.outputs if len(item.outputs) > 1 else (),
                    )
                )
            elif kind == "chain":
                ops = tuple(op for op in item.items if isinstance(op, Op))
                steps.append(
                    Step(
                        "chain",
                        item.inputs,
                        item.outputs[0],
                        ops=ops,
                        name=_relative(item.path, base),
                    )
                )
            else:
                steps += self._body(item, base)
        return steps

    def _op_step(self, op: Op, base: str) -> Step:
        tie = op.args.get("tie")
        if isinstance(tie, str):
            relative = _relative(tie, base)
            unreachable = relative is None or any(part.isdigit() for part in relative.split("."))
            if unreachable and op.op == "embedding":  # two tables loaded alike, as before
                op = Op(**{**_fields(op), "args": {k: v for k, v in op.args.items() if k != "tie"}})
            elif unreachable:
                self.gaps.append(
                    Gap(
                        op.layer or base,
                        "a shared weight (tie)",
                        f"it shares its weight with {tie}, which tie= cannot reach from here "
                        "(a block's layer cannot tie to its caller's, and a numbered path "
                        "cannot follow tie= yet)",
                    )
                )
            else:
                op = Op(**{**_fields(op), "args": {**op.args, "tie": relative}})
        name = _relative(op.layer, base) if op.layer is not None else None
        if op.layer is not None and op.op != "parameter" and op.layer in self.stateless:
            name = None  # a layer without weights: its name is no state dict key
        if name is not None and _DIGITS_THEN_PART.search(name):
            self.gaps.append(
                Gap(
                    op.layer or base,
                    f"the layer name {name}",
                    "a key ending in -digits must end the name (block1-0.proj reads as a "
                    "number): its module is written inline here, not as a block",
                )
            )
        return Step("op", op.inputs, op.id, op=op, name=name)

    # -- block definitions ------------------------------------------------------------------

    def _define(self, regions: list[Region]) -> None:
        by_class: dict[type, list[Region]] = {}
        for region in regions:
            if region.kind == "block" and region.scope is not None:
                by_class.setdefault(type(region.module), []).append(region)
        order = sorted(by_class.items(), key=lambda item: max(r.height for r in item[1]))
        for cls, instances in order:
            self._define_class(cls, instances)

    def _define_class(self, cls: type, instances: list[Region]) -> None:
        for region in instances:  # runs of calls first: instances that differ in a count match
            if all(_defined(step) for step in region.steps):
                _resolve_calls(region.steps)
                _find_repeats(region.steps, set(region.outputs), MIN_LOOP_IN_BLOCK)
        _peel_residuals(instances)
        variants: dict[Any, list[Region]] = {}
        for region in instances:
            variants.setdefault(_signature(region.steps, region.inputs), []).append(region)
        ranked = sorted(variants.values(), key=lambda group: -len(group))
        base = _class_name(cls)
        main_names = _layer_names(ranked[0][0].steps)
        for index, group in enumerate(ranked):
            if index == 0:
                name = self._unique(base)
            else:
                extra = [n for n in _layer_names(group[0].steps) if n not in main_names]
                suffix = _camel(extra[0].split(".")[0]) if extra else ""
                name = self._unique(base + suffix if suffix else f"{base}_{index + 1}")
            self._define_variant(name, cls, group)

    def _unique(self, name: str) -> str:
        candidate, number = name, 2
        while candidate in self.taken or candidate.lower() in CATALOG:
            candidate = f"{name}_{number}"
            number += 1
        self.taken.add(candidate)
        return candidate

    def _define_variant(self, name: str, cls: type, group: list[Region]) -> None:
        counted = [_numbers(region.steps) for region in group]
        numbers = [found for found, _ in counted]
        layered = set().union(*(slots for _, slots in counted))
        ctors = [self._constructor(region.module) for region in group]
        shapes = [self.producer[r.outputs[0]].shape for r in group if r.outputs[0] in self.producer]
        outputs = {tuple(s[0] for s in shapes), tuple(s[-1] for s in shapes)} if shapes else set()
        ins = [self._channels(region.inputs[0]) for region in group]
        in_channels = tuple(c for c in ins if c is not None) if None not in ins else ()
        params, exprs, values = _parameterise(numbers, ctors, cls, outputs, layered, in_channels)
        first = group[0]
        steps = [_copy_step(step) for step in first.steps]
        for (index, position, arg, sub), text in exprs.items():
            steps[index].exprs[(position, arg, sub)] = text
        several = len(first.inputs) > 1 or len(first.outputs) > 1
        definition = BlockDef(
            name,
            params,
            steps,
            first.inputs[0],
            first.outputs[0],
            cls,
            inputs=first.inputs if several else (),
            outputs=first.outputs if len(first.outputs) > 1 else (),
        )
        self.blocks.append(definition)
        for region, call in zip(group, values, strict=True):
            region.definition, region.arguments = definition, call

    def _channels(self, value: str) -> int | None:
        """A value's channels (axis 1 of the batched tensor) when it has spatial axes."""
        op = self.producer.get(value)
        shape = op.shape if op is not None else None
        if shape is None and value == self.graph.input:
            shape = self.graph.input_shape
        return shape[0] if shape is not None and len(shape) >= 2 else None

    def _constructor(self, module: nn.Module) -> dict[str, Any]:
        found = self.constructors.get(id(module))
        return dict(found) if found else {}

    def _top(self, top: Region) -> BlockDef:
        steps = top.steps
        _resolve_calls(steps)
        name = self.top_name or _class_name(type(self.root))
        if name in self.taken:
            name = self._unique(name + "Model")
        self.taken.add(name)
        for block in self.blocks:
            _resolve_calls(block.steps)
        _find_repeats(steps, {self.graph.output, *self.graph.outputs})
        for block in self.blocks:
            _find_repeats(block.steps, {block.output, *block.outputs}, MIN_LOOP_IN_BLOCK)
        several_in = self.graph.inputs if len(self.graph.inputs) > 1 else ()
        several_out = self.graph.outputs if len(self.graph.outputs) > 1 else ()
        return BlockDef(
            name,
            [],
            steps,
            self.graph.input,
            self.graph.output,
            type(self.root),
            inputs=several_in,
            outputs=several_out,
        )


def _fields(op: Op) -> dict[str, Any]:
    from aurane.records import fields

    return {f.name: getattr(op, f.name) for f in fields(op)}


def _copy_step(step: Step) -> Step:
    return Step(
        step.kind,
        step.inputs,
        step.output,
        op=step.op,
        ops=step.ops,
        block=step.block,
        call=dict(step.call),
        region=step.region,
        name=step.name,
        residual=step.residual,
        repeat=step.repeat,
        loop_from=step.loop_from,
        exprs=dict(step.exprs),
        outputs=step.outputs,
    )


def _defined(step: Step) -> bool:
    if step.kind != "call" or step.block is not None:
        return True
    return step.region is not None and step.region.definition is not None


def _resolve_calls(steps: list[Step]) -> None:
    for step in steps:
        if step.kind == "call" and step.region is not None and step.block is None:
            assert step.region.definition is not None
            step.block, step.call = step.region.definition, dict(step.region.arguments)
            step.residual = step.region.residual


# -- repeats and loops ----------------------------------------------------------------------------

# two calls read as well chained as in a loop, but a block's instances (DenseNet's blocks of
# 2, 3, 6 layers) are one block with their count as a parameter only if each has its loop
MIN_LOOP, MIN_LOOP_IN_BLOCK = 3, 2


def _find_repeats(steps: list[Step], returned: AbstractSet[str], shortest: int = MIN_LOOP) -> None:
    """Consecutive chained calls of one block with equal arguments, named ``P.0..P.n-1``,
    that are all of container ``P``: one ``repeat(Block(...), n) as P``. Otherwise, such
    calls named with consecutive numbers (``denselayer1..n``, ``layer1.1..3``), at least
    ``shortest`` of them: one loop, ``for i in range(n): x -> Block(...) as denselayer{i + 1}``."""
    index = 0
    while index < len(steps):
        step = steps[index]
        run = _repeat_run(steps, index, returned)
        loop_from: int | None = None
        name = step.name.rsplit(".", 1)[0] if run > 1 and step.name else None
        if run == 1:
            run, name, loop_from = _loop_run(steps, index, returned, shortest)
        if run > 1:
            steps[index] = Step(
                "call",
                step.inputs,
                steps[index + run - 1].output,
                block=step.block,
                call=step.call,
                name=name,
                residual=step.residual,
                repeat=run,
                loop_from=loop_from,
                exprs=dict(step.exprs),
            )
            del steps[index + 1 : index + run]
        index += 1


_NUMBERED = re.compile(r"^([\w.]*?(?:\.|[A-Za-z_]))(0|[1-9]\d*)$")  # denselayer12, layer1.3


def _loop_run(
    steps: list[Step], start: int, returned: AbstractSet[str], shortest: int
) -> tuple[int, str | None, int | None]:
    """The calls from ``start`` that one loop writes: (how many, the name before the number,
    the first number); (1, None, None) when fewer than ``shortest``."""
    first = steps[start]
    found = _NUMBERED.match(first.name or "") if first.kind == "call" else None
    if found is None or first.outputs or first.repeat > 1:
        return 1, None, None
    prefix, number = found.group(1), int(found.group(2))
    run, previous = 1, first
    for step in steps[start + 1 :]:
        if not _same_call(step, first) or step.name != f"{prefix}{number + run}":
            break
        if _read_elsewhere(steps, previous, step, returned) or step.inputs != (previous.output,):
            break
        run += 1
        previous = step
    return (run, prefix, number) if run >= shortest else (1, None, None)


def _same_call(step: Step, first: Step) -> bool:
    return (
        step.kind == "call"
        and not step.outputs
        and step.repeat == 1
        and step.block is first.block
        and step.call == first.call
        and step.exprs == first.exprs
        and step.residual == first.residual
    )


def _repeat_run(steps: list[Step], start: int, returned: AbstractSet[str] = frozenset()) -> int:
    """How many calls from ``start`` one ``repeat(...) as P`` writes: ``P.0..P.n-1``, the
    whole container ``P``; 1 where none applies. (A repeat that continues a container,
    ``B(64, stride=2) as layer2.0 -> repeat(B(64), 3) as layer2``, would read better, but
    its copies are other nodes than the calls a hand-written program names: ``aurane
    diff`` would not pair them. Those runs are loops.)"""
    first = steps[start]
    if first.kind != "call" or first.name is None or first.residual or "." not in first.name:
        return 1
    if first.repeat > 1 or first.outputs:
        return 1
    container, number = first.name.rsplit(".", 1)
    if number != "0":
        return 1
    run = 1
    previous = first
    for step in steps[start + 1 :]:
        if (
            _read_elsewhere(steps, previous, step, returned)
            or not _same_call(step, first)
            or step.name != f"{container}.{run}"
            or step.inputs != (previous.output,)
        ):
            break
        run += 1
        previous = step
    # the container must hold nothing else
    for step in steps:
        if (
            step.name
            and step.name.startswith(container + ".")
            and step not in steps[start : start + run]
        ):
            return 1
    return run if run > 1 else 1


def _read_elsewhere(
    steps: list[Step], previous: Step, following: Step, returned: AbstractSet[str]
) -> bool:
    """Whether ``previous``'s result is needed beyond ``following`` (returned, a skip
    connection): then a repeat, which keeps only its last result, cannot hold both."""
    if previous.output in returned or previous.outputs:
        return True
    return any(previous.output in s.inputs for s in steps if s is not following)


# -- names ------------------------------------------------------------------------------------------


def _camel(text: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", text)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def _class_name(cls: type) -> str:
    name = re.sub(r"[^0-9A-Za-z_]", "_", cls.__name__).lstrip("_") or "Block"
    if name[0].isdigit():
        name = "M" + name
    if keyword.iskeyword(name) or name in RESERVED or name.lower() in CATALOG:
        name += "Block"
    return name


def structure(
    graph: LiftedGraph,
    root: nn.Module,
    constructors: Mapping[int, Mapping[str, Any]] | None = None,
    name: str | None = None,
) -> Program:
    return Structurer(graph, root, constructors, name).run()


__all__ = ["Structurer", "structure"]
