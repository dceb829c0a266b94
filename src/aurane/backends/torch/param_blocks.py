"""One generated class per parameterised block, taking the block's parameters.

``model BasicBlock(width, stride=1):`` becomes ``class BasicBlock(nn.Module)`` with
``def __init__(self, in_channels, width, stride=1)``: each call's instance graph is written
with its symbolic numbers shown as expressions of the parameters (``nn.Linear(width,
4 * width)``), plus the block input's channel or feature size (``in_channels``,
``in_features``) when a constructor needs it. Instances whose classes read the same (shape
comments aside) share one class; a call whose graph differs in structure gets its own
class (``BasicBlock_2``). Shape comments that differ between the calls are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aurane.backends.torch.emit_common import lit
from aurane.backends.torch.modules import ClassPlan, emit_class
from aurane.backends.torch.names import Namespace
from aurane.ir.blocks import INPUT_DIMS
from aurane.ir.graph import Graph, Node
from aurane.records import field, record, replace
from aurane.semantics.symbolic import ShownBool, ShownStr, plain, shown


@record
class _Class:
    name: str
    plan: ClassPlan
    dims: tuple[int, ...]  # input axes passed to the constructor (0, or 1 of a rank-2 input)
    params: tuple[str, ...]
    defaults: dict[str, Any]
    members: list[list[str]] = field(default_factory=list)  # each instance's lines


def _shown_args(
    node: Node, graph: Graph, rename: dict[str, str] | None, init: frozenset[str] | None
) -> dict[str, Any]:
    """``node``'s arguments as the class writes them: symbolic numbers as expressions,
    boolean/string parameters by name (``self.name`` outside the ``init`` nodes)."""
    args: dict[str, Any] = shown(dict(node.args), rename)
    for arg, param in graph.block_refs.get(node.id, {}).items():
        text = param if init is None or node.id in init else f"self.{param}"
        holder, key = args, arg
        if arg.startswith("arguments."):  # a nested block call's argument
            holder = args["arguments"] = dict(args["arguments"])
            key = arg.removeprefix("arguments.")
        value = holder[key]
        holder[key] = ShownStr(value, text) if isinstance(value, str) else ShownBool(value, text)
    return args


def _shown_graph(
    graph: Graph, rename: dict[str, str] | None = None, init: frozenset[str] | None = None
) -> Graph:
    """``graph`` as the class shows it; ``init``: the nodes whose boolean/string arguments
    the constructor reads (None: all); the others read them from ``self``."""
    nodes = tuple(replace(n, args=_shown_args(n, graph, rename, init)) for n in graph.nodes)
    values = tuple(replace(v, shape=shown(v.shape, rename)) for v in graph.values)
    return replace(graph, nodes=nodes, values=values)


def _strip(line: str) -> str:
    if line.lstrip().startswith("# "):
        return ""
    code, _, _ = line.partition("  # ")
    return code


class ParamClasses:
    def __init__(
        self,
        instances: dict[str, list[Graph]],
        globals_: Namespace,
        class_of: Callable[[Graph], str],
    ) -> None:
        self.globals = globals_
        self.outer = class_of
        self.by_graph: dict[int, _Class] = {}
        self.classes: dict[str, dict[tuple[str, ...], _Class]] = {}
        order: list[Graph] = []
        seen: set[int] = set()

        def visit(graph: Graph) -> None:
            if id(graph) in seen:
                return
            seen.add(id(graph))
            for node in graph.nodes:
                if node.subgraph is not None and node.subgraph.block_params is not None:
                    visit(node.subgraph)
            order.append(graph)

        for graphs in instances.values():
            for graph in graphs:
                visit(graph)
        self.globals.allocate_all(instances)
        for graph in order:
            self._assign(graph)

    def class_of(self, sub: Graph) -> str:
        found = self.by_graph.get(id(sub))
        return found.name if found is not None else self.outer(sub)

    def _sub_class(self, sub: Graph) -> str:
        return self.class_of(sub) if sub.block_params is not None else self.outer(sub)

    def _assign(self, graph: Graph) -> None:
        assert graph.block_params is not None
        params = graph.block_params
        defaults = dict(graph.block_defaults)
        display = _shown_graph(graph)
        probe = ClassPlan(graph.name, display, False)
        lines = emit_class(probe, self._sub_class, frozenset(self.globals.used), self.call_args)
        text = "\n".join(lines)
        dims = tuple(i for i, mark in enumerate(INPUT_DIMS) if mark in text)
        names = _input_names(dims, len(graph.input_value.shape or ()) - 1, params)
        rename = {INPUT_DIMS[d]: n for d, n in zip(dims, names, strict=True)}
        display = _shown_graph(graph, rename)
        lines = self._emit(display, names)
        stored: tuple[str, ...] = ()
        if graph.block_refs:
            display, stored = self._constructor_refs(graph, rename, names, lines)
            lines = self._emit(display, names, stored)
        signature = [*names]
        for param in params:
            if param in defaults:
                signature.append(f"{param}={lit(plain(defaults[param]))}")
            else:
                signature.append(param)
        key = tuple(_strip(line) for line in lines[1:])
        by_key = self.classes.setdefault(graph.name, {})
        found = by_key.get(key)
        if found is None:
            name = (
                self.globals.allocate(graph.name) if not by_key else self.globals.fresh(graph.name)
            )
            plan = ClassPlan(name, display, False, tuple(signature), stored=stored)
            found = by_key[key] = _Class(name, plan, dims, params, defaults)
        found.members.append(lines)
        self.by_graph[id(graph)] = found

    def _emit(self, graph: Graph, names: list[str], stored: tuple[str, ...] = ()) -> list[str]:
        probe = ClassPlan(graph.name, graph, False, tuple(names), stored=stored)
        return emit_class(probe, self._sub_class, frozenset(self.globals.used), self.call_args)

    def _constructor_refs(
        self, graph: Graph, rename: dict[str, str], names: list[str], lines: list[str]
    ) -> tuple[Graph, tuple[str, ...]]:
        """Where each boolean/string parameter is read: by the constructor (the nodes whose
        forward statement does not change when it is written by name), or by a forward
        statement, which cannot see a constructor argument: the constructor then stores it
        (``self.mode = mode``) and the statement reads ``self.mode``."""

        def only(nodes: frozenset[str]) -> Graph:
            refs = {k: v for k, v in graph.block_refs.items() if k in nodes}
            return replace(graph, block_refs=refs)

        expected = _forward_part(self._emit(_shown_graph(only(frozenset()), rename), names))
        if _forward_part(lines) == expected:
            return _shown_graph(graph, rename), ()
        init = frozenset(
            node
            for node in graph.block_refs
            if _forward_part(self._emit(_shown_graph(only(frozenset({node})), rename), names))
            == expected
        )
        stored = sorted(
            {p for n, refs in graph.block_refs.items() if n not in init for p in refs.values()}
        )
        used = {n.layer.split(".")[0] for n in graph.nodes if n.layer} | set(names) | _MODULE
        if used & set(stored):  # the attribute is a layer's: write the values instead
            return _shown_graph(only(init), rename), ()
        return _shown_graph(graph, rename, init), tuple(stored)

    def plans(self, model: str) -> list[ClassPlan]:
        out = []
        for cls in self.classes.get(model, {}).values():
            out.append(cls.plan)
        return out

    def merge_comments(self, plan: ClassPlan, lines: list[str]) -> list[str]:
        """Keep a shape comment only where every call of the class has the same one."""
        cls = next((c for c in self._all() if c.plan is plan), None)
        if cls is None or len(cls.members) < 2:
            return lines
        first = cls.members[0]
        out = []
        for index, line in enumerate(lines):
            same = (
                all(len(m) == len(first) and m[index] == first[index] for m in cls.members)
                if index < len(first)
                else True
            )
            if same:
                out.append(line)
            elif _strip(line):
                out.append(_strip(line))
        return out

    def _all(self) -> list[_Class]:
        return [c for by_key in self.classes.values() for c in by_key.values()]

    def call_args(self, node: Node, in_shape: tuple[int, ...]) -> tuple[str, ...]:
        """The constructor arguments of a call: input sizes, then the block's arguments."""
        sub = node.subgraph
        cls = self.by_graph.get(id(sub)) if sub is not None else None
        if cls is None:
            return ()
        args = [lit(in_shape[d]) for d in cls.dims]
        given = node.args.get("arguments", {})
        for param in cls.params:
            value = given.get(param)
            if param not in cls.defaults:
                args.append(lit(value))
                continue
            default = plain(cls.defaults[param])
            symbolic = type(value) not in (int, float, bool, str, type(None), tuple)
            if symbolic or plain(value) != default or type(plain(value)) is not type(default):
                args.append(f"{param}={lit(value)}")
        return tuple(args)


# nn.Module attributes a stored parameter must not replace
_MODULE = frozenset(
    {
        "training",
        "forward",
        "train",
        "eval",
        "to",
        "cpu",
        "cuda",
        "float",
        "double",
        "half",
        "type",
        "apply",
        "children",
        "modules",
        "parameters",
        "buffers",
        "state_dict",
        "load_state_dict",
        "zero_grad",
        "requires_grad_",
        "named_modules",
        "named_parameters",
        "named_buffers",
        "named_children",
        "register_buffer",
        "register_parameter",
        "add_module",
        "get_submodule",
        "extra_repr",
        "dump_patches",
        "call_super_init",
    }
)


def _forward_part(lines: list[str]) -> list[str]:
    starts = [i for i, line in enumerate(lines) if line.lstrip().startswith("def forward(")]
    return lines[starts[0] :] if starts else []


def _input_names(dims: tuple[int, ...], rank: int, params: tuple[str, ...]) -> list[str]:
    names = []
    for dim in dims:
        name = "in_channels" if dim == 0 and rank >= 2 else "in_features"
        while name in params or name in names:
            name += "_"
        names.append(name)
    return names
