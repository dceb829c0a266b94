"""One ``nn.Module`` class per model graph and per distinct block signature.

A class reads like nanoGPT's ``model.py``: layers in ``__init__`` in source order,
a straight-line ``forward`` with one statement per IR node, the program's own names for
the values it bound, and a shape comment wherever the shape changes.

Local names: a value the program named keeps that name; an unnamed value consumed only
by the very next node borrows that node's name (so a chain reads ``x = ...`` line after
line); anything else is called after its node id. A name is only reused when the value
that held it is dead, which a liveness check over the node order guarantees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aurane.backends.torch.emit import MASK, Call, Site, Step, emitter
from aurane.backends.torch.names import MODULE_ATTRIBUTES, RESERVED, Namespace
from aurane.ir.graph import Graph, Node, Value
from aurane.ops.rules import fmt_shape as shape_text

LINE_LIMIT = 100
INDENT = "    "


@dataclass(frozen=True)
class ClassPlan:
    name: str  # generated class name
    graph: Graph
    check_dtype: bool  # the model declared input_dtype: forward rejects other dtypes

    @property
    def attention(self) -> bool:
        return self.graph.has_attention


# -- layout helpers (black-compatible) ----------------------------------------------------


def wrap(depth: int, head: str, expr: Call | str, comment: str = "", tail: str = "") -> list[str]:
    """``head + expr + tail`` at ``depth`` indents, split the way black splits a long call."""
    pad = INDENT * depth
    text = expr if isinstance(expr, str) else expr.text()
    line = f"{pad}{head}{text}{tail}"
    if comment:
        if len(line) + 2 + len(comment) <= LINE_LIMIT:
            return [f"{line}  {comment}"]
        return [f"{pad}{comment}", *wrap(depth, head, expr, tail=tail)]
    if len(line) <= LINE_LIMIT or isinstance(expr, str) or not expr.args:
        return [line]
    inner = INDENT * (depth + 1)
    joined = inner + ", ".join(expr.args)
    if len(joined) <= LINE_LIMIT:
        return [f"{pad}{head}{expr.func}(", joined, f"{pad}){tail}"]
    args = [f"{inner}{arg}," for arg in expr.args]
    return [f"{pad}{head}{expr.func}(", *args, f"{pad}){tail}"]


# -- values and local names ---------------------------------------------------------------


def node_values(graph: Graph) -> list[Value]:
    """The input value, then each node's output value, in node order."""
    by_name = graph.value_map
    if len(by_name) != len(graph.nodes) + 1 or any(n.output not in by_name for n in graph.nodes):
        # e.g. a forward parameter named like a generated node id (dense1): the IR then has
        # one value for two definitions and shapes cannot be trusted; refuse, never guess
        raise ValueError(f"graph {graph.name!r} does not give each value a unique name")
    return [by_name[graph.input], *(by_name[n.output] for n in graph.nodes)]


@dataclass(frozen=True)
class Locals:
    names: tuple[str, ...]  # variable per slot: 0 = input, i + 1 = output of node i
    inputs: tuple[tuple[int, ...], ...]  # slots read by each node
    output: int  # slot returned


def _slots(graph: Graph) -> tuple[tuple[tuple[int, ...], ...], int]:
    env = {graph.input: 0}
    reads = []
    for index, node in enumerate(graph.nodes):
        reads.append(tuple(env[name] for name in node.inputs))
        env[node.output] = index + 1
    return tuple(reads), env[graph.output]


def plan_locals(graph: Graph, values: list[Value], ns: Namespace) -> Locals:
    nodes = graph.nodes
    reads, output = _slots(graph)
    uses: list[list[int]] = [[] for _ in values]
    for index, slots in enumerate(reads):
        for slot in slots:
            uses[slot].append(index)
    uses[output].append(len(nodes))  # the return statement
    last_use = [max(u, default=slot - 1) for slot, u in enumerate(uses)]
    preferred = [graph.input] * len(values)
    for slot in range(len(values) - 1, 0, -1):
        source = values[slot].source_name
        if source is not None:
            preferred[slot] = source
        elif slot < len(nodes) and uses[slot] == [slot]:  # read once, by the next node
            preferred[slot] = preferred[slot + 1]
        else:
            preferred[slot] = nodes[slot - 1].id
    ns.allocate_all([*preferred, *(n.id for n in nodes)])
    names = [ns.allocate(graph.input)]
    busy = {names[0]: last_use[0]}  # name -> the last step that reads a value it has held
    for slot in range(1, len(values)):
        index = slot - 1
        choices = (ns.allocate(preferred[slot]), ns.allocate(nodes[index].id))
        name = next((c for c in choices if busy.get(c, -1) <= index), None)
        name = name or ns.fresh(nodes[index].id)
        names.append(name)
        busy[name] = max(busy.get(name, -1), last_use[slot])
    return Locals(tuple(names), reads, output)


# -- class emission -----------------------------------------------------------------------


def local_namespace(module_names: frozenset[str]) -> Namespace:
    return Namespace(RESERVED | module_names)


def attribute_namespace() -> Namespace:
    return Namespace(RESERVED | MODULE_ATTRIBUTES, private_ok=False)


def emit_class(
    plan: ClassPlan,
    block_class: Callable[[Graph], str],
    module_names: frozenset[str],
) -> list[str]:
    graph = plan.graph
    values = node_values(graph)
    names = plan_locals(graph, values, local_namespace(module_names))
    attrs = attribute_namespace()
    attrs.allocate_all(n.id for n in graph.nodes if emitter(n.op).init is not None)
    sites = [
        _site(graph, node, i, values, names, attrs, block_class)
        for i, node in enumerate(graph.nodes)
    ]
    lines = [
        f"class {plan.name}(nn.Module):",
        f"{INDENT}def __init__(self):",
        f"{INDENT * 2}super().__init__()",
    ]
    for site in sites:
        init = emitter(site.node.op).init
        if init is not None:
            lines += wrap(2, f"self.{site.attr} = ", init(site))
    lines += ["", *_forward(plan, names, sites, values)]
    return lines


def _site(
    graph: Graph,
    node: Node,
    index: int,
    values: list[Value],
    names: Locals,
    attrs: Namespace,
    block_class: Callable[[Graph], str],
) -> Site:
    slots = names.inputs[index]
    sub = node.subgraph
    return Site(
        node=node,
        inputs=tuple(names.names[s] for s in slots),
        in_shapes=tuple(values[s].sample_shape or () for s in slots),
        out_shape=values[index + 1].sample_shape or (),
        attr=attrs.allocate(node.id) if emitter(node.op).init is not None else "",
        param_dtype=graph.param_dtype,
        block_class=block_class(sub) if sub is not None else None,
        block_attention=sub is not None and sub.has_attention,
    )


def _forward(plan: ClassPlan, names: Locals, sites: list[Site], values: list[Value]) -> list[str]:
    x = names.names[0]
    params = ("self", x, f"{MASK}=None") if plan.attention else ("self", x)
    lines = wrap(1, "def ", Call("forward", params), tail=":")
    lines.append(f"{INDENT * 2}# {x}: {shape_text(values[0].shape)}")
    lines += _prologue(plan, x)
    for index, site in enumerate(sites):
        target = names.names[index + 1]
        changed = site.out_shape != (site.in_shapes[0] if site.in_shapes else None)
        comment = f"# {shape_text(values[index + 1].shape)}" if changed else ""
        lines += _statement(emitter(site.node.op).forward(site), target, site, comment)
    lines.append(f"{INDENT * 2}return {names.names[names.output]}")
    return lines


def _prologue(plan: ClassPlan, x: str) -> list[str]:
    graph, lines = plan.graph, []
    if plan.check_dtype and graph.input_dtype is not None:
        lines.append(f"{INDENT * 2}if {x}.dtype != torch.{graph.input_dtype}:")
        lines += _raise_dtype(plan.name, graph.input_dtype, x)
    if plan.attention and graph.padding_idx is not None:
        lines += [
            f"{INDENT * 2}if {MASK} is None:",
            f"{INDENT * 3}{MASK} = {x} == {graph.padding_idx!r}",
        ]
    return lines


def _raise_dtype(name: str, dtype: str, x: str) -> list[str]:
    text = f'f"{name} expects {dtype} input, got {{{x}.dtype}}"'
    lines = wrap(3, "raise ", Call("TypeError", (text,)))
    if max(map(len, lines)) > LINE_LIMIT:  # very long names: let Python spell the class name
        pad = INDENT * 4
        lines = [
            f"{INDENT * 3}raise TypeError(",
            f'{pad}f"{{type(self).__name__}} expects {dtype} input, "',
            f'{pad}f"got {{{x}.dtype}}"',
            f"{INDENT * 3})",
        ]
    return lines


def _statement(step: Step, target: str, site: Site, comment: str) -> list[str]:
    if step.loop:
        lines = [] if target == site.x else [f"{INDENT * 2}{target} = {site.x}"]
        loop = Call("block", (target, MASK))
        return [
            *lines,
            f"{INDENT * 2}for block in {step.expr}:{'  ' + comment if comment else ''}",
            *wrap(3, f"{target} = ", loop),
        ]
    head = f"{target}, _ = " if step.unpack else f"{target} = "
    return wrap(2, head, step.expr, comment)
