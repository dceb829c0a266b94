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

from collections.abc import Callable, Mapping

from aurane.backends.torch.data_emit import quote
from aurane.backends.torch.emit import emitter
from aurane.backends.torch.emit_common import MASK, REGISTER_BUFFER, Call, Site, Step
from aurane.backends.torch.emit_tensor import pieces_call, split_group
from aurane.backends.torch.inits import init_method
from aurane.backends.torch.named import (
    Container,
    access,
    module_dicts,
    module_init,
    stored_function,
    tree,
)
from aurane.backends.torch.names import MODULE_ATTRIBUTES, RESERVED, Namespace
from aurane.backends.torch.sequential import applied_whole, sequential_run
from aurane.ir.graph import Graph, Node, Value
from aurane.ops.rules import fmt_shape as shape_text
from aurane.records import record, replace
from aurane.semantics.symbolic import InputSize, Leaf, leaves, to_python

LINE_LIMIT = 100
INDENT = "    "


@record(frozen=True)
class ClassPlan:
    name: str  # generated class name
    graph: Graph
    check_dtype: bool  # the model declared input_dtype: forward rejects other dtypes
    init_params: tuple[str, ...] = ()  # constructor parameters (a parameterised block)
    # a parameterised block: ``graph`` is shown as the constructor writes its values
    # (``width``), ``forward_graph`` as forward statements do (``self.width``)
    forward_graph: Graph | None = None
    stored: tuple[tuple[str, str], ...] = ()  # (attribute, constructor parameter) for forward
    claimed: tuple[str, ...] = ()  # attribute names kept for the constructor's parameters
    # (node id, constructor parameter, attribute) for each node whose operation an
    # operation-valued parameter gives (act=nn.ReLU): ``act()``, applied as ``self.act(x)``
    op_params: tuple[tuple[str, str, str], ...] = ()
    # the operation-valued constructor parameters among those taken as functions
    # (``act=F.relu``: stored as ``self.act = act``, no module built)
    functions: tuple[str, ...] = ()
    function_defaults: tuple[tuple[str, str], ...] = ()  # (parameter, its default function)
    # (node id, constructor parameter) for each block call whose block a model-valued
    # parameter gives (block=Basic): built as ``block(...)``
    class_params: tuple[tuple[str, str], ...] = ()
    # (axis, local) of each spatial size of the input forward reads: its first line reads
    # them (``height, width = x.shape[2:]``), so one class serves every resolution
    input_sizes: tuple[tuple[int, str], ...] = ()
    # (leaf, constructor name) of each size the constructor takes (``Ref("w")``: ``w``,
    # the input's last axis: ``in_features``): a shape comment writes a size computed from
    # them by these names, since the class is built at other values of them too
    size_names: tuple[tuple[Leaf, str], ...] = ()

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
    """The input value, then each node's output value, in node order; then (a graph with
    several inputs or a block with several outputs) the other inputs and the other outputs
    of each such node, in that order: their slots come after every node's."""
    by_name = graph.value_map
    extra = [*graph.input_names[1:], *(o for n in graph.nodes for o in n.outputs[1:])]
    if len(by_name) != len(graph.nodes) + 1 + len(extra) or any(
        n.output not in by_name for n in graph.nodes
    ):
        # e.g. a forward parameter named like a generated node id (dense1): the IR then has
        # one value for two definitions and shapes cannot be trusted; refuse, never guess
        raise ValueError(f"graph {graph.name!r} does not give each value a unique name")
    main = [by_name[graph.input], *(by_name[n.output] for n in graph.nodes)]
    return main + [by_name[name] for name in extra]


@record(frozen=True)
class Locals:
    names: tuple[str, ...]  # variable per slot: 0 = input, i + 1 = output of node i, extras
    inputs: tuple[tuple[int, ...], ...]  # slots read by each node
    output: int  # slot returned (the first, when several are)
    params: tuple[int, ...] = ()  # slots of every input, in order (several inputs)
    outputs: tuple[int, ...] = ()  # slots of every output, in order (several outputs)
    node_outputs: tuple[tuple[int, ...], ...] = ()  # per node: its slots (several: a block)


def _slots(graph: Graph) -> tuple[dict[str, int], tuple[tuple[int, ...], ...]]:
    env = {graph.input: 0}
    slot = len(graph.nodes) + 1
    for name in graph.input_names[1:]:
        env[name] = slot
        slot += 1
    reads = []
    for index, node in enumerate(graph.nodes):
        reads.append(tuple(env[name] for name in node.inputs))
        env[node.output] = index + 1
        for name in node.outputs[1:]:
            env[name] = slot
            slot += 1
    return env, tuple(reads)


def plan_locals(graph: Graph, values: list[Value], ns: Namespace) -> Locals:
    nodes = graph.nodes
    env, reads = _slots(graph)
    output = env[graph.output]
    returned = tuple(env[name] for name in graph.output_names) or (output,)
    params = tuple(env[name] for name in graph.input_names) or (0,)
    node_outputs = tuple(
        (index + 1, *(env[o] for o in n.outputs[1:])) for index, n in enumerate(nodes)
    )
    uses: list[list[int]] = [[] for _ in values]
    for index, slots in enumerate(reads):
        for slot in slots:
            uses[slot].append(index)
    for slot in returned:
        uses[slot].append(len(nodes))  # the return statement
    # when each slot is defined: inputs before every node, a node's outputs at the node
    defined = [-1] * len(values)
    for index, slots in enumerate(node_outputs):
        for slot in slots:
            defined[slot] = index
    last_use = [max(u, default=defined[slot]) for slot, u in enumerate(uses)]
    preferred = [graph.input] * len(values)
    for name in graph.input_names[1:]:
        preferred[env[name]] = name
    for node in nodes:
        for k, name in enumerate(node.outputs[1:], start=1):
            preferred[env[name]] = values[env[name]].source_name or f"{node.id}_{k}"
    for slot in range(len(nodes), 0, -1):
        source = values[slot].source_name
        if source is not None:
            preferred[slot] = source
        elif slot < len(nodes) and uses[slot] == [slot] and len(node_outputs[slot - 1]) == 1:
            preferred[slot] = preferred[slot + 1]  # read once, by the next node
        else:
            preferred[slot] = nodes[slot - 1].id
    ns.allocate_all([*preferred, *(n.id for n in nodes)])
    names = [""] * len(values)
    names[0] = ns.allocate(graph.input)
    busy = {names[0]: last_use[0]}  # name -> the last step that reads a value it has held
    for slot in params[1:]:
        names[slot] = ns.allocate(preferred[slot])
        busy[names[slot]] = last_use[slot]
    for index in range(len(nodes)):
        for slot in node_outputs[index]:
            choices = (ns.allocate(preferred[slot]), ns.allocate(nodes[index].id))
            taken = set(names[s] for s in node_outputs[index] if s != slot and names[s])
            free = (c for c in choices if busy.get(c, -1) <= index and c not in taken)
            name = next(free, None) or ns.fresh(nodes[index].id)
            names[slot] = name
            busy[name] = max(busy.get(name, -1), last_use[slot])
    several = len(params) > 1 or len(returned) > 1 or any(len(o) > 1 for o in node_outputs)
    return Locals(
        tuple(names),
        reads,
        output,
        params if several else (),
        returned if several else (),
        node_outputs if several else (),
    )


def _shape(shape: tuple[int | str, ...] | None, names: Mapping[Leaf, str]) -> str | None:
    """A shape comment, or None where it has none. In a parameterised block's class a
    size the constructor's arguments change is written by their names (``(batch, 3,
    w)``): its number holds at the calls only; one read from something the constructor
    does not take leaves the comment out. A number whose tree the class fixes (a folded
    size, a loop count every call gives alike) stays a number."""
    if shape is None:
        return shape_text(shape)
    dims: list[int | str] = []
    for d in shape:
        tree = getattr(d, "tree", None)
        read = set(leaves(tree)) if tree is not None else set()
        # an input size the constructor does not take is its calls' (they give it alike)
        taken = {leaf for leaf in read if leaf in names or not isinstance(leaf, InputSize)}
        if not taken:
            dims.append(int(d) if isinstance(d, int) else d)
        elif read <= names.keys():
            assert tree is not None  # it reads the names
            text = to_python(tree, names.__getitem__)
            if "-(-" in text:  # a ceiling division written out: reads as no size
                return None
            dims.append(text)
        else:
            return None
    return shape_text(tuple(dims))


def _fitted(head: str, expr: Call | str, comment: str, sizes: Mapping[Leaf, str]) -> list[str]:
    """``head + expr`` with its shape comment; in a class taking sizes, the comment left
    out where it does not fit the statement's line (``_forward``)."""
    written = wrap(2, head, expr, comment)
    if _named(comment, sizes) and written[0].lstrip().startswith("# "):
        return wrap(2, head, expr)
    return written


def _named(comment: str, sizes: Mapping[Leaf, str]) -> bool:
    """Whether the shape ``comment`` of a class taking ``sizes`` names one of them."""
    shown = comment.replace("batch", "").removesuffix(" each")
    return bool(sizes) and any(c.isalpha() or c == "_" for c in shown)


def _comment(shape: tuple[int | str, ...] | None, names: Mapping[Leaf, str]) -> str:
    """``# (batch, 3, w)``, or nothing where the shape has no comment (``_shape``)."""
    shown = _shape(shape, names)
    return "" if shown is None else f"# {shown}"


# -- class emission -----------------------------------------------------------------------


def local_namespace(module_names: frozenset[str]) -> Namespace:
    return Namespace(RESERVED | module_names)


def attribute_namespace() -> Namespace:
    return Namespace(RESERVED | MODULE_ATTRIBUTES, private_ok=False)


# a block call's constructor arguments, from its node and each input's per-sample shape
BlockCall = Callable[[Node, tuple[tuple[int, ...], ...]], tuple[str, ...]]


def emit_class(
    plan: ClassPlan,
    block_class: Callable[[Graph], str],
    module_names: frozenset[str],
    block_call: BlockCall | None = None,
) -> list[str]:
    graph = plan.graph
    values = node_values(graph)
    sizes = frozenset(name for _, name in plan.input_sizes)
    names = plan_locals(graph, values, local_namespace(module_names | sizes))
    attrs = attribute_namespace()
    attrs.claim(n.layer.split(".")[0] for n in graph.nodes if n.layer)  # the user's names
    attrs.claim(plan.claimed)
    attrs.allocate_all(n.id for n in graph.nodes if emitter(n.op).init is not None and not n.layer)
    dicts = _module_dicts(graph)
    op_params = {node: (param, attr) for node, param, attr in plan.op_params}
    class_params = dict(plan.class_params)

    def class_of(node: Node) -> Callable[[Graph], str]:
        param = class_params.get(node.id)
        return block_class if param is None else lambda _: param

    sites = [
        _site(graph, node, i, values, names, attrs, class_of(node), block_call, dicts, op_params)
        for i, node in enumerate(graph.nodes)
    ]
    init_head = Call("def __init__", ("self", *plan.init_params))
    lines = [
        f"class {plan.name}(nn.Module):",
        *wrap(1, "", init_head, tail=":"),
        f"{INDENT * 2}super().__init__()",
        *(f"{INDENT * 2}self.{attr} = {param}" for attr, param in plan.stored),
        *_op_modules(sites, frozenset(plan.functions), dict(plan.function_defaults)),
    ]
    whole = applied_whole(graph, sites, names.inputs, names.output)
    lines += _inits(sites, whole)
    initialise = init_method(graph, sites)  # before tying: the shared weight keeps its init
    if initialise:
        lines.append(f"{INDENT * 2}self._init_weights()")
    for node_id, path in graph.tied.items():
        site = next(s for s in sites if s.node.id == node_id)
        lines.append(f"{INDENT * 2}{site.layer}.weight = self.{access(path, dicts)}.weight")
    if initialise:
        lines += ["", f"{INDENT}def _init_weights(self):", *initialise]
    if plan.forward_graph is not None:  # the same nodes, values as forward writes them
        sites = _forward_sites(sites, plan.forward_graph, names)
        values = node_values(plan.forward_graph)
    lines += ["", *_forward(plan, names, sites, values, whole)]
    return lines


def _op_modules(
    sites: list[Site],
    functions: frozenset[str] = frozenset(),
    defaults: Mapping[str, str] | None = None,
) -> list[str]:
    """``self.act = act()``: one module per operation-valued parameter applied unnamed; a
    parameter of ``functions`` is stored as given (``self.act = act``: a function; its
    default module built where the signature's default is None: ``stored_function``)."""
    made: dict[str, str] = {}
    for site in sites:
        if site.op_param and site.node.layer is None:
            made.setdefault(site.op_attr, site.op_param)
    return [
        f"{INDENT * 2}self.{attr} = "
        + (
            stored_function(param, (defaults or {}).get(param))
            if param in functions
            else f"{param}()"
        )
        for attr, param in made.items()
    ]


def _forward_sites(sites: list[Site], graph: Graph, names: Locals) -> list[Site]:
    values = node_values(graph)
    out = []
    for index, (site, node) in enumerate(zip(sites, graph.nodes, strict=True)):
        slots = names.inputs[index]
        out.append(
            replace(
                site,
                node=node,
                in_shapes=tuple(values[s].sample_shape or () for s in slots),
                out_shape=values[index + 1].sample_shape or (),
            )
        )
    return out


def _module_dicts(graph: Graph) -> frozenset[str]:
    return module_dicts(n.layer for n in graph.nodes if n.layer and "." in n.layer)


REGISTERED = frozenset({"buffer"})  # state that __init__ registers instead of assigning


def _inits(sites: list[Site], whole: frozenset[str]) -> list[str]:
    """``self.attr = ...`` per layer; a named container once, where its first layer is (an
    ``nn.Sequential`` of its named children where forward applies it ``whole``)."""
    named: dict[str, list[tuple[str, Call]]] = {}
    for site in sites:
        path = site.node.layer
        if path is not None and "." in path:
            init = module_init(site)
            assert init is not None  # lowering refused names for layerless operations
            named.setdefault(path.split(".")[0], []).append((path, init))
    lines: list[str] = []
    for site in sites:
        path = site.node.layer
        if site.node.op in REGISTERED and (path is None or "." not in path):
            make = emitter(site.node.op).init
            assert make is not None
            lines += wrap(2, "", make(site))  # self.register_buffer("name", ...)
        elif path is None:
            make = emitter(site.node.op).init
            if make is not None and not site.op_param:  # act's own module: self.act
                lines += wrap(2, f"self.{site.attr} = ", make(site))
        elif "." not in path:
            made = module_init(site)
            assert made is not None
            lines += wrap(2, f"self.{path} = ", made)
        else:
            top = path.split(".")[0]
            if top in named:
                container = tree(named.pop(top), whole)[top]
                assert isinstance(container, Container)
                lines += _container(f"self.{top}", container)
    return lines


def _container(target: str, container: Container) -> list[str]:
    """``self.features = nn.Sequential(...)``; a container holding a parameter is an empty
    ``nn.Module`` given its children one by one (``self.encoder.pos_embedding = ...``), also
    inside a numbered container (``self.blocks[0].gamma = ...``)."""
    if not container.holds_parameter:
        lines = nested(2, f"{target} = ", container.call())
        for reach, plain in container.plain_below(target):
            lines += _plain_children(reach, plain)
        return lines
    return [f"{INDENT * 2}{target} = nn.Module()", *_plain_children(target, container)]


def _plain_children(target: str, container: Container) -> list[str]:
    lines: list[str] = []
    for key, child in container.children.items():
        if isinstance(child, Container):
            lines += _container(f"{target}.{key}", child)
        elif child.func == REGISTER_BUFFER:  # registered on its container, under its own key
            lines += wrap(2, "", Call(f"{target}.register_buffer", (quote(key), *child.args[1:])))
        else:
            lines += wrap(2, f"{target}.{key} = ", child)
    return lines


def nested(depth: int, head: str, call: Call, tail: str = "") -> list[str]:
    """Like ``wrap``, but a long container's items go one per line, recursively."""
    flat = wrap(depth, head, call, tail=tail)
    if len(flat) == 1:
        return flat
    pad = INDENT * depth
    lines = [f"{pad}{head}{call.func}("]
    for arg in call.args:
        inner = _parse_call(arg)
        items = _dict_items(arg)
        if items is not None and len(INDENT * (depth + 1) + arg) + 1 > LINE_LIMIT:
            lines.append(f"{INDENT * (depth + 1)}{{")  # nn.ModuleDict({"0": ..., "2": ...})
            for item in items:
                key, _, value = item.partition(": ")
                parsed = _parse_call(value)
                if parsed is not None and len(INDENT * (depth + 2) + item) + 1 > LINE_LIMIT:
                    lines += nested(depth + 2, f"{key}: ", parsed[1], ",")
                else:
                    lines.append(f"{INDENT * (depth + 2)}{item},")
            lines.append(f"{INDENT * (depth + 1)}}},")
        elif inner is not None and len(INDENT * (depth + 1) + arg) + 1 > LINE_LIMIT:
            key, sub = inner
            lines += nested(depth + 1, key, sub, ",")
        else:
            lines.append(f"{INDENT * (depth + 1)}{arg},")
    lines.append(f"{pad}){tail}")
    return lines


def _dict_items(text: str) -> list[str] | None:
    """``{"0": a(1, 2), "2": b()}`` split into its items (top-level commas), else None."""
    if not (text.startswith("{") and text.endswith("}")):
        return None
    parsed = _parse_call("dict(" + text[1:-1] + ")")
    return list(parsed[1].args) if parsed is not None else None


def _parse_call(text: str) -> tuple[str, Call] | None:
    """``key=func(a, b)`` or ``func(a, b)`` split back into head and Call (top-level commas)."""
    head = ""
    eq = text.find("=")
    paren = text.find("(")
    if 0 < eq < paren and text[:eq].isidentifier():
        head, text = text[: eq + 1], text[eq + 1 :]
        paren = text.find("(")
    if paren <= 0 or not text.endswith(")"):
        return None
    args, depth, start, quote = [], 0, paren + 1, ""
    for index in range(paren + 1, len(text) - 1):
        ch = text[index]
        if quote:
            quote = "" if ch == quote and text[index - 1] != "\\" else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            args.append(text[start:index].strip())
            start = index + 1
    last = text[start:-1].strip()
    if last:
        args.append(last)
    return head, Call(text[:paren], tuple(args))


def _site(
    graph: Graph,
    node: Node,
    index: int,
    values: list[Value],
    names: Locals,
    attrs: Namespace,
    block_class: Callable[[Graph], str],
    block_call: BlockCall | None = None,
    dicts: frozenset[str] = frozenset(),
    op_params: dict[str, tuple[str, str]] | None = None,
) -> Site:
    slots = names.inputs[index]
    sub = node.subgraph
    in_shapes = tuple(values[s].sample_shape or () for s in slots)
    if node.layer is not None:
        attr = access(node.layer, dicts)
    else:
        attr = attrs.allocate(node.id) if emitter(node.op).init is not None else ""
    ctor = block_call(node, in_shapes) if block_call and sub and in_shapes else ()
    op_param, op_attr = (op_params or {}).get(node.id, ("", ""))
    return Site(
        node=node,
        inputs=tuple(names.names[s] for s in slots),
        in_shapes=in_shapes,
        out_shape=values[index + 1].sample_shape or (),
        attr=attr,
        param_dtype=graph.param_dtype,
        block_class=block_class(sub) if sub is not None else None,
        block_attention=sub is not None and sub.has_attention,
        batch=names.names[0],
        block_args=ctor,
        op_param=op_param,
        op_attr=op_attr,
    )


def _forward(
    plan: ClassPlan,
    names: Locals,
    sites: list[Site],
    values: list[Value],
    whole: frozenset[str],
) -> list[str]:
    """``whole``: the containers of named children ``__init__`` built as ``nn.Sequential``
    (only those are called whole; a numbered container always is one)."""
    dicts = _module_dicts(plan.graph)
    x = names.names[0]
    graph = plan.graph
    inputs = [names.names[slot] for slot in names.params] or [x]
    params = ["self"]
    for name, value in zip(inputs, graph.inputs, strict=True):
        params.append(f"{name}=None" if value.name in graph.input_defaults else name)
    if plan.attention:
        params.append(f"{MASK}=None")
    lines = wrap(1, "def ", Call("forward", tuple(params)), tail=":")
    sizes = dict(plan.size_names)
    for name, slot in zip(inputs, names.params or (0,), strict=True):
        if (shown := _shape(values[slot].shape, sizes)) is not None:
            lines.append(f"{INDENT * 2}# {name}: {shown}")
    lines += _defaults(graph, names, values)
    lines += _prologue(plan, x, inputs)
    lines += _input_sizes(plan, x)
    grouped = 0  # sites up to here were emitted by a grouped split/chunk statement
    for index, site in enumerate(sites):
        if index < grouped:
            continue
        pieces = split_group(sites, index)
        if pieces > 1:  # a, b = x.chunk(2, dim=-1)
            targets = ", ".join(names.names[index + 1 : index + 1 + pieces])
            shapes = {_shape(values[index + 1 + k].shape, sizes) for k in range(pieces)}
            comment = f"# {shapes.pop()} each" if len(shapes) == 1 and None not in shapes else ""
            lines += _fitted(f"{targets} = ", pieces_call(site), comment, sizes)
            grouped = index + pieces
            continue
        run = sequential_run(plan.graph, sites, index, names.inputs, names.output)
        if run is not None and (run[0] in whole or run[0] not in dicts):
            # a named nn.Sequential applied whole: s = self.downsample(x)
            path, count = run
            target = names.names[index + count]
            changed = sites[index + count - 1].out_shape != site.in_shapes[0]
            comment = _comment(values[index + count].shape, sizes) if changed else ""
            reach = access(path, dicts)
            lines += _fitted(f"{target} = ", Call(f"self.{reach}", (site.x,)), comment, sizes)
            grouped = index + count
            continue
        target = names.names[index + 1]
        changed = site.out_shape != (site.in_shapes[0] if site.in_shapes else None)
        comment = _comment(values[index + 1].shape, sizes) if changed else ""
        if names.node_outputs and len(names.node_outputs[index]) > 1:  # h, pooled = block
            slots = names.node_outputs[index]
            target = ", ".join(names.names[slot] for slot in slots)
            outputs = [_shape(values[slot].shape, sizes) for slot in slots]
            comment = "" if None in outputs else "# " + ", ".join(map(str, outputs))
        if site.op_param and site.node.layer is None:  # act=nn.ReLU: self.act(x)
            step = Step(Call(f"self.{site.op_attr}", (site.x,)))
        elif site.op_param:  # a named step builds act(): its module, whichever act is
            step = Step(Call(f"self.{site.attr}", (site.x,)))
        else:
            step = emitter(site.node.op).forward(site)
        written = _statement(step, target, site, comment)
        if _named(comment, sizes) and written[0].lstrip().startswith("# "):
            # a class taking sizes: a comment naming them too long for its statement's
            # line is left out, not put above it, so the calls' classes keep their lines
            # aligned where another call's number fits
            written = _statement(step, target, site, "")
        lines += written
    returned = ", ".join(names.names[slot] for slot in names.outputs or (names.output,))
    lines.append(f"{INDENT * 2}return {returned}")
    return lines


def _defaults(graph: Graph, names: Locals, values: list[Value]) -> list[str]:
    """``if mask is None: mask = torch.ones(...)`` for each optional input: its shape from
    the IR, each axis from an input passed with it (the batch axis, a shared size)."""
    if not graph.input_defaults:
        return []
    slots = names.params or (0,)
    required = [
        (names.names[slot], values[slot])
        for slot in slots
        if values[slot].name not in graph.input_defaults
    ]
    lines = []
    for slot in slots:
        value = values[slot]
        if value.name not in graph.input_defaults:
            continue
        name = names.names[slot]
        made = default_tensor(graph.input_defaults[value.name], value, required)
        lines += [f"{INDENT * 2}if {name} is None:", *wrap(3, f"{name} = ", made)]
    return lines


def default_tensor(default: object, value: Value, given: list[tuple[str, Value]]) -> Call:
    """The tensor an optional input's default stands for: ``torch.ones_like(ids,
    dtype=torch.bool)`` when an input passed with it has its shape, else ``torch.full``
    with each axis read from a passed input that has that size (or the number)."""
    dtype = f"dtype=torch.{value.dtype or 'float32'}"
    fill = {"ones": "ones", "zeros": "zeros"}.get(str(default))
    for name, other in given:
        if other.shape == value.shape:
            if fill is not None:
                return Call(f"torch.{fill}_like", (name, dtype))
            return Call("torch.full_like", (name, repr(default), dtype))
    ref = given[0][0]
    axes = [f"{ref}.shape[0]"]  # the batch axis
    for size in (value.shape or ())[1:]:
        if isinstance(size, int):
            axes.append(str(size))
            continue
        # a symbolic size: read where an input passed with it has it (lowering made sure
        # one does)
        axes.append(
            next(
                f"{name}.shape[{k}]"
                for name, other in given
                for k, dim in enumerate(other.shape or ())
                if k and dim == size
            )
        )
    shape = "(" + ", ".join(axes) + ("," if len(axes) == 1 else "") + ")"
    device = f"device={ref}.device"
    if fill is not None:
        return Call(f"torch.{fill}", (shape, dtype, device))
    return Call("torch.full", (shape, repr(default), dtype, device))


def _prologue(plan: ClassPlan, x: str, inputs: list[str] | None = None) -> list[str]:
    graph, lines = plan.graph, []
    if plan.check_dtype and len(graph.inputs) > 1:  # each input its own dtype
        for name, value in zip(inputs or (), graph.inputs, strict=False):
            if value.dtype is not None:
                lines.append(f"{INDENT * 2}if {name}.dtype != torch.{value.dtype}:")
                lines += _raise_dtype(plan.name, value.dtype, name)
    elif plan.check_dtype and graph.input_dtype is not None:
        lines.append(f"{INDENT * 2}if {x}.dtype != torch.{graph.input_dtype}:")
        lines += _raise_dtype(plan.name, graph.input_dtype, x)
    if plan.attention and graph.padding_idx is not None:
        lines += [
            f"{INDENT * 2}if {MASK} is None:",
            f"{INDENT * 3}{MASK} = {x} == {graph.padding_idx!r}",
        ]
    return lines


def _input_sizes(plan: ClassPlan, x: str) -> list[str]:
    """``height, width = x.shape[2:]`` (or ``width = x.shape[3]``): the spatial sizes of the
    input that forward statements read (``shape[0]`` is the batch, ``shape[1]`` channels)."""
    if not plan.input_sizes:
        return []
    axes = [axis for axis, _ in plan.input_sizes]
    targets = ", ".join(name for _, name in plan.input_sizes)
    if len(axes) == 1:
        return [f"{INDENT * 2}{targets} = {x}.shape[{axes[0] + 1}]"]
    rank = len(plan.graph.input_value.shape or ()) - 1  # per sample
    if axes == list(range(axes[0], axes[-1] + 1)) and axes[-1] == rank - 1:
        return [f"{INDENT * 2}{targets} = {x}.shape[{axes[0] + 1}:]"]
    return [f"{INDENT * 2}{targets} = {', '.join(f'{x}.shape[{a + 1}]' for a in axes)}"]


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
