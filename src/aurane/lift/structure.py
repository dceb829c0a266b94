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
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Iterator, Mapping
from typing import Any

from torch import nn

from aurane.lift.graph import Gap, LiftedGraph, Op, Scope
from aurane.ops import CATALOG
from aurane.ops.modules import MODULE_OPS
from aurane.records import field, record

CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)
_DIGITS_THEN_PART = re.compile(r"-\d+\.")  # ``block1-0.proj``: lexes as a malformed number
RESERVED = frozenset({"torch", "nn", "F", "self", "input", "model", "rt", "math"})


# -- the program ---------------------------------------------------------------------------------


@record
class Step:
    """One statement-sized piece of a body (before it is grouped into chains)."""

    kind: str  # "op", "call" or "chain"
    inputs: tuple[str, ...]
    output: str
    op: Op | None = None  # "op"
    ops: tuple[Op, ...] = ()  # "chain": the layers in order
    block: BlockDef | None = None  # "call"
    call: dict[str, Any] = field(default_factory=dict)  # "call": argument values
    region: Region | None = None  # "call": the instance (until blocks are defined)
    name: str | None = None  # the layer name, relative to the enclosing block
    residual: bool = False
    repeat: int = 1
    exprs: dict[tuple[int, str, int], str] = field(default_factory=dict)  # numbers as parameters


@record
class ParamDef:
    name: str
    default: Any = None
    has_default: bool = False


@record
class BlockDef:
    name: str
    params: list[ParamDef]
    steps: list[Step]
    input: str
    output: str
    cls: type | None = None
    comment: str | None = None


@record
class Program:
    blocks: list[BlockDef]  # in definition order (callees first)
    top: BlockDef
    input_shape: tuple[int, ...]
    input_dtype: str
    gaps: list[Gap] = field(default_factory=list)  # found while rebuilding blocks
    gaps_text: list[str] = field(default_factory=list)  # every gap, for the --partial header


# -- regions --------------------------------------------------------------------------------------


@record(eq=False)
class Region:
    scope: Scope | None  # None: the root
    module: nn.Module
    items: list[Any] = field(default_factory=list)  # Op | Region, in execution order
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    kind: str = ""  # "block", "chain", "container", "inline"
    steps: list[Step] = field(default_factory=list)  # block regions: the body
    height: int = 0
    definition: BlockDef | None = None  # block regions: the block it became
    arguments: dict[str, Any] = field(default_factory=dict)  # and its call's arguments
    residual: bool = False  # called with .residual (its trailing add moved to the call)

    @property
    def path(self) -> str:
        return self.scope.path if self.scope is not None else ""

    def ops(self) -> Iterator[Op]:
        for item in self.items:
            if isinstance(item, Region):
                yield from item.ops()
            else:
                yield item


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
        region.inputs = (graph.input,)
        region.outputs = (graph.output,)
        return
    inside = {op.id for op in region.ops()}
    inputs: list[str] = []
    outputs: list[str] = []
    for op in region.ops():
        for name in op.inputs:
            if name not in inside and name not in inputs:
                inputs.append(name)
        outside = [u for u in users.get(op.id, []) if u.id not in inside]
        if (outside or op.id == graph.output) and op.id not in outputs:
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
        len(region.inputs) == 1
        and len(region.outputs) == 1
        and _stateful(module)
        and not own_layer
        and all(_relative(op.layer, region.path) is not None for op in region.ops() if op.layer)
    ):
        region.kind = "block"
    else:
        region.kind = "inline"


def _relative(path: str | None, base: str) -> str | None:
    if path is None:
        return None
    if base == "":
        return path
    if path.startswith(base + "."):
        return path[len(base) + 1 :]
    return None


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
        top = build_regions(self.graph, self.root)
        classify(top, self.stateless)
        seen: set[str] = set()
        for region in _walk(top):  # a block with weights called twice shares them: a gap
            if region.kind == "block" and region.scope is not None:
                if region.path in seen:
                    from aurane.lift.lower import SHARED

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
            self.blocks, top_def, self.graph.input_shape, self.graph.input_dtype, self.gaps
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
            if relative is None or any(part.isdigit() for part in relative.split(".")):
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
        _peel_residuals(instances)
        variants: dict[Any, list[Region]] = {}
        for region in instances:
            variants.setdefault(_signature(region.steps, region.inputs[0]), []).append(region)
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
        params, exprs, values = _parameterise(numbers, ctors, cls, outputs, layered)
        first = group[0]
        steps = [_copy_step(step) for step in first.steps]
        for (index, position, arg, sub), text in exprs.items():
            steps[index].exprs[(position, arg, sub)] = text
        definition = BlockDef(name, params, steps, first.inputs[0], first.outputs[0], cls)
        self.blocks.append(definition)
        for region, call in zip(group, values, strict=True):
            region.definition, region.arguments = definition, call

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
        _find_repeats(steps)
        for block in self.blocks:
            _find_repeats(block.steps)
        return BlockDef(name, [], steps, self.graph.input, self.graph.output, type(self.root))


def _fields(op: Op) -> dict[str, Any]:
    from aurane.records import fields

    return {f.name: getattr(op, f.name) for f in fields(op)}


def _walk(region: Region) -> Iterator[Region]:
    for item in region.items:
        if isinstance(item, Region):
            yield from _walk(item)
    yield region


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
        exprs=dict(step.exprs),
    )


def _resolve_calls(steps: list[Step]) -> None:
    for step in steps:
        if step.kind == "call" and step.region is not None and step.block is None:
            assert step.region.definition is not None
            step.block, step.call = step.region.definition, dict(step.region.arguments)
            step.residual = step.region.residual


def _callee(step: Step) -> tuple[BlockDef, dict[str, Any], bool]:
    if step.block is not None:
        return step.block, step.call, step.residual
    region = step.region
    assert region is not None and region.definition is not None
    return region.definition, region.arguments, region.residual


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


def _signature(steps: list[Step], block_input: str) -> Any:
    local: dict[str, int] = {block_input: 0}
    parts: list[Any] = []
    for index, step in enumerate(steps):
        wiring = tuple(local.get(name, -1) for name in step.inputs)
        if step.kind == "call":
            block, _, residual = _callee(step)
            head: Any = ("call", block.name, residual, step.repeat)
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
    return tuple(parts)


def _layer_names(steps: list[Step]) -> list[str]:
    return [step.name for step in steps if step.name]


# -- residuals -----------------------------------------------------------------------------------


def _peel_residuals(instances: list[Region]) -> None:
    """Instances whose body ends in ``add(x, rest)`` while others of the class are ``rest``:
    the add moves to the call (``.residual``)."""
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


# -- parameters -----------------------------------------------------------------------------------

_ARG_NAMES = {"channels": "channels", "features": "features", "p": "p", "dim": "dim"}


def _defaults(cls: type) -> dict[str, Any]:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return {}
    return {
        name: p.default
        for name, p in signature.parameters.items()
        if p.default is not inspect.Parameter.empty
    }


_INPUTISH = re.compile(r"^in|(^|_)(in|inp|input)(_|$)")


def _rank_name(name: str) -> tuple[int, int]:
    """Constructor arguments that size the input rank last: Aurane infers input sizes."""
    return (1 if _INPUTISH.search(name) else 0, 0)


def _parameterise(
    numbers: list[dict[tuple[int, int, str, int], Any]],
    ctors: list[dict[str, Any]],
    cls: type,
    outputs: set[tuple[int, ...]] | frozenset[tuple[int, ...]] = frozenset(),
    layered: set[Any] | frozenset[Any] = frozenset(),
) -> tuple[list[ParamDef], dict[tuple[int, int, str, int], str], list[dict[str, Any]]]:
    slots = sorted(set().union(*[set(n) for n in numbers]))
    count = len(numbers)
    params: list[tuple[str, tuple[Any, ...]]] = []  # name, values per instance
    exprs: dict[tuple[int, int, str, int], str] = {}
    ctor_names = [
        name
        for name in (ctors[0] if ctors else {})
        if all(name in c and _is_number(c[name]) for c in ctors)
    ]
    ctor_names.sort(key=_rank_name)
    used: set[str] = set()

    def add(name: str, values: tuple[Any, ...]) -> None:
        if name not in used:
            used.add(name)
            params.append((name, values))

    for slot in slots:
        vector = tuple(n.get(slot) for n in numbers)
        if any(v is None for v in vector):
            continue
        varying = len(set(vector)) > 1
        if not varying and slot not in layered:
            continue  # a constant of a shape operation (a shuffle's 2 groups) stays a number
        text: str | None = None
        if varying:  # the same numbers as a parameter already found: that parameter
            text = next((name for name, values in params if values == vector), None)
        # a constructor argument of these values, then a multiple of a parameter found,
        # then one sizing the input (Aurane infers input sizes: in_channels is a last resort)
        sizing_output = [name for name in ctor_names if _rank_name(name)[0] == 0]
        sizing_input = [name for name in ctor_names if _rank_name(name)[0] == 1]
        match = _from_constructor(vector, ctors, sizing_output, varying, exact=True)
        if text is None and match is not None:
            add(match[0], tuple(c[match[0]] for c in ctors))
            text = match[0]
        if text is None and varying:
            text = _existing(vector, params)
        match = _from_constructor(vector, ctors, sizing_input, varying, exact=True)
        if text is None and match is not None:
            add(match[0], tuple(c[match[0]] for c in ctors))
            text = match[0]
        match = _from_constructor(vector, ctors, ctor_names, varying, exact=False)
        if text is None and match is not None:
            add(match[0], tuple(c[match[0]] for c in ctors))
            text = f"{match[1]} * {match[0]}"
        if text is None and varying:
            sizes_output = slot[2] in ("channels", "features") and vector in outputs
            name = _fresh_param("out" if sizes_output else slot[2], used)
            add(name, vector)
            text = name
        if text is not None:
            exprs[slot] = text
    defaults = _defaults(cls)
    order = list(ctors[0]) if ctors else []
    params.sort(key=lambda item: (0, order.index(item[0])) if item[0] in order else (1, 0))
    definitions: list[ParamDef] = []
    for name, values in params:
        default = defaults.get(name, inspect.Parameter.empty)
        usable = _is_number(default) and default in values
        definitions.append(ParamDef(name, default if usable else None, usable))
    definitions.sort(key=lambda p: p.has_default)
    calls = [{name: values[i] for name, values in params} for i in range(count)]
    return definitions, exprs, calls


MAX_DIVISOR = 8  # ``k // 2`` reads as intended; ``hidden // 24`` is mostly a coincidence


def _existing(vector: tuple[Any, ...], params: list[tuple[str, tuple[Any, ...]]]) -> str | None:
    """``vector`` as a multiple (``4 * width``) or a quotient (``k // 2``) of a parameter's."""
    for name, values in params:
        pairs = list(zip(vector, values, strict=True))
        if not all(isinstance(v, int) and isinstance(w, int) and v > 0 and w > 0 for v, w in pairs):
            continue
        if all(v % w == 0 for v, w in pairs):
            factors = {v // w for v, w in pairs}
            if len(factors) == 1 and (factor := factors.pop()) > 1:
                return f"{factor} * {name}"
        for divisor in sorted({w // v for v, w in pairs if w >= v}):
            if 1 < divisor <= MAX_DIVISOR and all(w // divisor == v for v, w in pairs):
                return f"{name} // {divisor}"
    return None


def _from_constructor(
    vector: tuple[Any, ...],
    ctors: list[dict[str, Any]],
    names: list[str],
    varying: bool,
    *,
    exact: bool,
) -> tuple[str, int] | None:
    """A constructor argument with these values (``exact``), or whose values these are a
    multiple of: (its name, the factor)."""
    if not names:
        return None
    if not varying:  # the same number everywhere: named only by an unambiguous argument
        value = vector[0]
        if not exact or value in (0, 1) or not isinstance(value, int):
            return None
        matches = [
            n
            for n in names
            if _rank_name(n)[0] == 0
            and all(c[n] == value and type(c[n]) is type(value) for c in ctors)
        ]
        return (matches[0], 1) if len(matches) == 1 else None
    if exact:
        for name in names:
            if all(
                c[name] == v and type(c[name]) is type(v)
                for c, v in zip(ctors, vector, strict=True)
            ):
                return name, 1
        return None
    for name in names:
        values = [c[name] for c in ctors]
        if all(
            isinstance(v, int) and isinstance(w, int) and w > 0
            for v, w in zip(vector, values, strict=True)
        ):
            factors = {v // w for v, w in zip(vector, values, strict=True) if v % w == 0}
            if len(factors) == 1 and all(v % w == 0 for v, w in zip(vector, values, strict=True)):
                factor = factors.pop()
                if factor > 1:
                    return name, factor
    return None


def _fresh_param(arg: str, used: set[str]) -> str:
    base = {
        "features": "width",
        "channels": "width",
        "output_size": "size",
        "shape": "size",
        "sizes": "size",
        "constant": "scale",
    }.get(arg, arg)
    base = re.sub(r"[^0-9A-Za-z_]", "_", base).strip("_") or "n"
    if keyword.iskeyword(base) or base in RESERVED:
        base += "_"
    candidate, number = base, 2
    while candidate in used:
        candidate = f"{base}{number}"
        number += 1
    return candidate


# -- repeats --------------------------------------------------------------------------------------


def _find_repeats(steps: list[Step]) -> None:
    """Consecutive chained calls of one block with equal arguments, named ``P.0..P.n-1``,
    that are all of container ``P``: one ``repeat(Block(...), n) as P``."""
    index = 0
    while index < len(steps):
        step = steps[index]
        run = _repeat_run(steps, index)
        if run > 1:
            container = step.name.rsplit(".", 1)[0] if step.name else None
            steps[index] = Step(
                "call",
                step.inputs,
                steps[index + run - 1].output,
                block=step.block,
                call=step.call,
                name=container,
                repeat=run,
                exprs=dict(step.exprs),
            )
            del steps[index + 1 : index + run]
        index += 1


def _repeat_run(steps: list[Step], start: int) -> int:
    first = steps[start]
    if first.kind != "call" or first.name is None or first.residual or "." not in first.name:
        return 1
    container, number = first.name.rsplit(".", 1)
    if number != "0":
        return 1
    run = 1
    previous = first
    for step in steps[start + 1 :]:
        if (
            step.kind != "call"
            or step.block is not first.block
            or step.call != first.call
            or step.exprs != first.exprs
            or step.residual
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


__all__ = ["BlockDef", "ParamDef", "Program", "Step", "structure"]
