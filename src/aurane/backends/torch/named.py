"""Layers named with ``as``: attribute paths, containers and module forms of functions.

A dotted path builds containers: a container whose children are exactly ``0..n-1`` is an
``nn.Sequential``, and so is one of named children that forward applies whole
(``nn.Sequential(OrderedDict(conv0=..., norm0=...))``, torchvision's DenseNet); any other
is an ``nn.ModuleDict`` (``dict(wte=..., h=...)``, nanoGPT's spelling). A function such as ``relu`` that takes a name (or sits in a named chain) becomes
its module (``nn.ReLU()``), so indices match torchvision's ``Conv2dNormActivation``.
"""

from __future__ import annotations

import ast as pyast
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aurane.backends.torch.emit import emitter
from aurane.backends.torch.emit_common import REGISTER_BUFFER, Call, Site, lit, options
from aurane.ir.graph import Graph, Node
from aurane.ops import lookup, modules
from aurane.ops.spec import OpSpec
from aurane.records import field, record, replace
from aurane.semantics.values import OpValue
from aurane.source import Span

PARAMETER = "nn.Parameter"  # the constructor of the parameter operation


def _simple(name: str) -> Callable[[Site], Call]:
    return lambda site: Call(name)


def _with(name: str, defaults: dict[str, Any], rename: dict[str, str] | None = None) -> Any:
    return lambda site: Call(name, tuple(options(site.args, defaults, rename or {})))


FUNCTION_MODULES: dict[str, Callable[[Site], Call]] = {
    "relu": _simple("nn.ReLU"),
    "gelu": _with("nn.GELU", {"approximate": "none"}),
    "sigmoid": _simple("nn.Sigmoid"),
    "tanh": _simple("nn.Tanh"),
    "silu": _simple("nn.SiLU"),
    "mish": _simple("nn.Mish"),
    "selu": _simple("nn.SELU"),
    "hardswish": _simple("nn.Hardswish"),
    "relu6": _simple("nn.ReLU6"),
    "hardsigmoid": _simple("nn.Hardsigmoid"),
    "softplus": _simple("nn.Softplus"),
    "identity": _simple("nn.Identity"),
    "elu": _with("nn.ELU", {"alpha": 1.0}),
    "leaky_relu": _with("nn.LeakyReLU", {"slope": 0.01}, {"slope": "negative_slope"}),
    "softmax": lambda site: Call("nn.Softmax", (f"dim={lit(site.args['dim'])}",)),
    "log_softmax": lambda site: Call("nn.LogSoftmax", (f"dim={lit(site.args['dim'])}",)),
    "flatten": lambda site: Call("nn.Flatten"),
}


def nameable(op: str) -> bool:
    """Whether ``op`` can take a layer name (the table is ``aurane.ops.modules``)."""
    return modules.nameable(op)


def chainable(op: str) -> bool:
    return modules.chainable(op)


def module_class(op: str, args: Mapping[str, Any] | None = None) -> str | None:
    """``nn.ReLU``: the module class of function ``op`` when its module takes no arguments
    for ``args`` (default: the operation's defaults), so an operation-valued block
    parameter can be passed as the class (``act=nn.ReLU``) and built as ``act()``."""
    made = _module_call(op, args)
    return made.func if made is not None and not made.args else None


def module_factory(op: str, args: Mapping[str, Any] | None = None) -> str | None:
    """What builds the module of function ``op`` with ``args`` when called with none: its
    class (``module_class``), or the class with its keyword arguments bound
    (``functools.partial(nn.LogSoftmax, dim=-1)``, as torchvision passes
    ``norm_layer=partial(nn.BatchNorm2d, eps=0.001)``); None where it has no module form."""
    made = _module_call(op, args)
    if made is None or not made.args:
        return made.func if made is not None else None
    if not all(re.fullmatch(r"\w+=.+", arg) for arg in made.args):
        return None
    return f"functools.partial({made.func}, {', '.join(made.args)})"


def sized_module_class(op: str) -> str | None:
    """``nn.LayerNorm``: the module class of ``op`` (at its defaults) that the class of one
    call builds from the input's width alone (``nn.LayerNorm(6)``), whatever the input's
    rank, so a list of operations can carry it as torchvision passes ``norm_layer`` and a
    rolled class build it as ``a(channels)``; None where the module takes more or none,
    or its class depends on the rank (``batch_norm``: ``nn.BatchNorm1d``, ``2d``)."""
    spec = lookup(op)
    if spec is None or emitter(spec.name).init is None:
        return None
    if any(p.required for p in spec.params):
        return None
    args = {p.name: p.default for p in spec.params}
    found: set[str] = set()
    for shape in ((7,), (3, 7), (5, 3, 7)):
        node = Node("", spec.name, args, (), "", 0, Span(0, 0, 0, 0))
        try:
            made = module_init(Site(node, ("x",), (shape,), shape, "m"))
        except Exception:  # an emitter that needs more of the node than a sketch
            return None
        if made is None or made.args != ("7",):
            return None
        found.add(made.func)
    return found.pop() if len(found) == 1 else None


def module_item_class(op: str) -> tuple[str, bool] | None:
    """How a rolled class builds the module that the class of one call builds for ``op``
    given as a list's item (``self.layer_norm1 = nn.LayerNorm(6)``, ``self.identity1 =
    nn.Identity()``): the class the calls pass (``nn.LayerNorm``, ``nn.Identity``) and
    whether it takes the width (``a(channels)``, else ``a()``); None where ``op`` builds no
    module there, or one whose arguments the class cannot write."""
    spec = lookup(op)
    if spec is None or emitter(spec.name).init is None:
        return None
    plain_class = module_factory(spec.name)
    if plain_class is not None:  # a partial is a new object per call: no ``is`` test
        return (plain_class, False) if "(" not in plain_class else None
    sized = sized_module_class(spec.name)
    return (sized, True) if sized is not None else None


def _module_call(op: str, args: Mapping[str, Any] | None) -> Call | None:
    """The module form of function ``op`` (``nn.LogSoftmax(dim=-1)``) with ``args``
    (default: the operation's defaults), or None."""
    make = FUNCTION_MODULES.get(op)
    spec = lookup(op)
    if make is None or spec is None:
        return None
    if args is None:
        if any(p.required for p in spec.params):
            return None
        args = {p.name: p.default for p in spec.params}
    node = Node("", op, args, (), "", 0, Span(0, 0, 0, 0))
    return make(Site(node, (), (), (), ""))


# tensor methods a forward writes (``x.exp()``) that are torch functions of the tensor too
TORCH_METHODS = frozenset(
    {"exp", "log", "sqrt", "rsqrt", "abs", "neg", "sin", "cos", "sigmoid", "tanh", "erf"}
    | {"log1p", "expm1", "square", "reciprocal", "floor", "ceil", "round", "sign"}
)


# operations whose forward applies a module that has no state: its instance is the callable
# (identity: ``nn.Identity()``, as the tensor itself is no call)
_MODULE_FUNCTIONS = {"identity": "nn.Identity()"}


def function_of(op: str, args: Mapping[str, Any] | None = None) -> str | None:
    """A callable that applies ``op`` with ``args`` (default: the operation's defaults) to
    one tensor as its forward statement does: ``F.relu``, ``torch.exp`` (of ``x.exp()``),
    ``functools.partial(F.softmax, dim=1)``; None where that statement is not a call of
    the tensor alone with keyword arguments, or of a function outside ``F`` and ``torch``
    (a helper the file defines where it calls it); ``nn.Identity()`` for ``identity``. A
    block's class takes it as an operation-valued argument that has no argument-free module
    class (``act=F.relu``)."""
    spec = lookup(op)
    if spec is None:
        return None
    if spec.name in _MODULE_FUNCTIONS:
        return _MODULE_FUNCTIONS[spec.name]
    if args is None:
        if any(p.required for p in spec.params):
            return None
        args = {p.name: p.default for p in spec.params}
    op = spec.name  # an alias (swish) emits as its operation (silu)
    node = Node("", op, args, ("x",), "", 0, Span(0, 0, 0, 0))
    try:
        step = emitter(op).forward(Site(node, ("x",), ((),), (), ""))
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if step.unpack or step.loop:
        return None
    text = step.expr.text() if isinstance(step.expr, Call) else step.expr
    try:
        call = pyast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, pyast.Call) or any(k.arg is None for k in call.keywords):
        return None
    keywords = [f"{k.arg}={pyast.unparse(k.value)}" for k in call.keywords]
    func = call.func
    if isinstance(func, pyast.Attribute) and isinstance(func.value, pyast.Name):
        if func.value.id == "x" and not call.args and func.attr in TORCH_METHODS:
            func = pyast.Attribute(pyast.Name("torch"), func.attr)
    elif [pyast.unparse(a) for a in call.args] != ["x"]:
        return None
    if [pyast.unparse(a) for a in call.args] not in ([], ["x"]) or any(
        isinstance(n, pyast.Name) and n.id == "x"
        for part in (func, *call.keywords)
        for n in pyast.walk(part)
    ):
        return None
    name = pyast.unparse(func)
    if not name.startswith(("F.", "torch.")):  # a helper of the file (rotary_embedding)
        return None
    return f"functools.partial({name}, {', '.join(keywords)})" if keywords else name


def default_function(op: str) -> str | None:
    """``function_of`` the default operation of a parameter. A module's instance
    (``nn.Identity()``) is no signature default, which every instance of the class would
    share: the signature writes None (``signature_default``) and the constructor builds
    the module where it is None (``stored_function``)."""
    return function_of(op)


def holds_no_state(op: str) -> bool:
    """Whether the module of ``op`` holds no weights (its catalog entry counts none at any
    input: ``relu``, not ``prelu``)."""
    spec = lookup(op)
    return spec is not None and spec.parameters is OpSpec.parameters


def same_operation(one: str, other: str) -> bool:
    """Whether the operations named ``one`` and ``other`` are one (an alias, swish, is its
    operation, silu)."""
    first, second = lookup(one), lookup(other)
    return one == other or (first is not None and second is not None and first.name == second.name)


def signature_default(default: str) -> str:
    """The text of a function default in a signature: None for a module's instance."""
    return "None" if default in _MODULE_FUNCTIONS.values() else default


def stored_function(param: str, default: str | None) -> str:
    """What the constructor stores for a function-valued ``param`` with ``default``:
    ``act``, or ``act if act is not None else nn.Identity()`` where the signature's
    default is None for a module's instance (``signature_default``)."""
    if default is None or signature_default(default) == default:
        return param
    return f"{param} if {param} is not None else {default}"


def function_value(graph: Graph, param: str) -> str | None:
    """The function (``function_of``) that the operation-valued ``param`` gives every node
    it applies in the block instance ``graph`` (the operation given, where it applies
    none), or None where one has none or they differ."""
    found = graph.block_ops.get(param)
    if found is None:
        return None
    nodes = graph.node_by_id
    made = {function_of(nodes[n].op, nodes[n].args) for n in found.nodes}
    if not found.nodes:
        made.add(function_of(found.op))
    return made.pop() if len(made) == 1 and None not in made else None


def layer_factory(graph: Graph, node: Node, op: str | None = None) -> str | None:
    """What builds the layer ``node`` of ``graph`` makes from its positional arguments, the
    sizes ``module_init`` passes an operation-valued parameter (``norm(width)``): its
    ``nn`` class (``nn.LayerNorm``) or the class with the keyword arguments the source's
    step does not give bound (``functools.partial(nn.LayerNorm, bias=False)``,
    torchvision's ``norm_layer``; the step's own stay in the class: ``factory_call``); None
    for an operation without a constructor or a class of this file's own. With ``op``:
    that operation's, with its defaults, where it takes the same positional arguments at
    this input (a parameter's default: ``nn.LayerNorm`` normalising a channel axis that
    ``nn.BatchNorm2d`` takes would not build what the source's default does)."""
    own = _layer_call(graph, node)
    if own is None:
        return None
    if op is not None:
        spec = lookup(op)
        if spec is None or any(p.required for p in spec.params):
            return None
        defaults = {p.name: p.default for p in spec.params}
        other = _layer_call(graph, replace(node, op=spec.name, args=defaults))
        if other is None or _positional(other) != _positional(own):
            return None
        own = other
    if not own.func.startswith("nn.") or "." in own.func[3:]:
        return None
    keywords = [arg for arg in own.args if KEYWORD.fullmatch(arg) and not _given(arg, node)]
    return f"functools.partial({own.func}, {', '.join(keywords)})" if keywords else own.func


def factory_call(param: str, made: Call, node: Node) -> Call:
    """``norm(width, eps=e)``: the operation-valued ``param`` built as the module ``made``
    (``nn.BatchNorm2d(width, eps=e)``) is: its positional arguments (the sizes), and the
    keyword arguments the source's step gives (``norm(eps=e)``); the others are the
    operation's own, which the call binds (``layer_factory``)."""
    return Call(param, tuple(a for a in made.args if not KEYWORD.fullmatch(a) or _given(a, node)))


def _given(arg: str, node: Node) -> bool:
    return arg.partition("=")[0] in node.arg_spans


def _layer_call(graph: Graph, node: Node) -> Call | None:
    make = emitter(node.op).init
    if make is None:
        return None
    shapes = tuple(graph.value(name).sample_shape or () for name in node.inputs)
    return make(Site(node, node.inputs, shapes, (), "", graph.param_dtype))


def _positional(call: Call) -> tuple[str, ...]:
    return tuple(arg for arg in call.args if not KEYWORD.fullmatch(arg))


KEYWORD = re.compile(r"\w+=.+")  # a keyword argument's text (``eps=0.001``)


def module_init(site: Site) -> Call | None:
    """The constructor of a named node: its own, or the module form of its function; for
    an operation a parameter gave, the block's constructor parameter called with the
    constructor's sizes and the step's keywords (``act()``, ``norm(width, eps=e)``:
    ``factory_call``)."""
    if site.op_param:
        made = _own_init(site)
        return factory_call(site.op_param, made, site.node) if made else Call(site.op_param)
    return _own_init(site)


def _own_init(site: Site) -> Call | None:
    init = emitter(site.node.op).init
    if init is not None:
        return init(site)
    make = FUNCTION_MODULES.get(site.node.op)
    return make(site) if make is not None else None


def access(path: str, dicts: frozenset[str] = frozenset()) -> str:
    """``transformer.h[3].attn``: the Python text reaching a layer from ``self``.

    A number indexes an ``nn.Sequential``; in an ``nn.ModuleDict`` (a container of
    ``dicts``, see ``module_dicts``) it is a string key: ``block["0"]``.
    """
    text = prefix = ""
    for part in path.split("."):
        if part.isdigit():
            text += f'["{part}"]' if prefix in dicts else f"[{part}]"
        elif not part.isidentifier():  # "block1-0": an nn.ModuleDict key (letters, digits, _ -)
            text += f'["{part}"]'
        else:
            text += f".{part}" if text else part
        prefix = f"{prefix}.{part}" if prefix else part
    return text


def module_dicts(paths: Iterable[str]) -> frozenset[str]:
    """The containers among the dotted layer ``paths`` (in first-use order, as ``tree``
    builds them) that become ``nn.ModuleDict``s: those whose children are not ``0..n-1``."""
    children: dict[str, dict[str, None]] = {}
    for path in paths:
        parts = path.split(".")
        for depth in range(1, len(parts)):
            children.setdefault(".".join(parts[:depth]), {})[parts[depth]] = None
    return frozenset(
        prefix
        for prefix, keys in children.items()
        if list(keys) != [str(i) for i in range(len(keys))]
    )


@record
class Container:
    """A node of the layer tree: children by key, each a container or a constructor."""

    children: dict[str, Container | Call] = field(default_factory=dict)
    applied_whole: bool = False  # forward calls it (sequential.py): named children in order

    @property
    def holds_parameter(self) -> bool:
        """A parameter or buffer among its children: no ``nn.Sequential``/``nn.ModuleDict``
        can hold it, so this container is a plain ``nn.Module`` given its children one by one
        as attributes (lowering keeps their keys words)."""
        return any(
            isinstance(child, Call) and child.func in (PARAMETER, REGISTER_BUFFER)
            for child in self.children.values()
        )

    def plain_below(self, target: str) -> list[tuple[str, Container]]:
        """The plain containers below this one (``holds_parameter``), each with the Python
        text reaching it from ``target``, outermost first."""
        found: list[tuple[str, Container]] = []
        for key, child in self.children.items():
            if not isinstance(child, Container):
                continue
            if key.isdigit():
                reach = f"{target}[{key}]" if self.sequential else f'{target}["{key}"]'
            elif key.isidentifier():
                reach = f"{target}.{key}"
            else:
                reach = f'{target}["{key}"]'
            if child.holds_parameter:
                found.append((reach, child))
            else:
                found += child.plain_below(reach)
        return found

    @property
    def sequential(self) -> bool:
        return list(self.children) == [str(i) for i in range(len(self.children))]

    def call(self) -> Call:
        """The constructor; a plain child container is an empty ``nn.Module()``, filled in
        afterwards (``plain_below``)."""
        items = [
            (Call("nn.Module") if child.holds_parameter else child.call())
            if isinstance(child, Container)
            else child
            for child in self.children.values()
        ]
        if self.sequential:
            return Call("nn.Sequential", tuple(_text(i) for i in items))
        keys = list(self.children)
        if all(k.isidentifier() for k in keys):
            named = tuple(f"{k}={_text(i)}" for k, i in zip(keys, items, strict=True))
            if self.applied_whole:
                return Call("nn.Sequential", (Call("OrderedDict", named).text(),))
            inner = Call("dict", named)
        else:
            pairs = ", ".join(f'"{k}": {_text(i)}' for k, i in zip(keys, items, strict=True))
            inner = Call("", (f"{{{pairs}}}",))
        return Call("nn.ModuleDict", (inner.text() if inner.func else pairs_text(inner),))


def pairs_text(call: Call) -> str:
    return call.args[0]


def _text(item: Call) -> str:
    return item.text()


def tree(
    named: list[tuple[str, Call]], applied_whole: frozenset[str] = frozenset()
) -> dict[str, Container | Call]:
    """Top-level attributes: plain layers and containers, in first-use order; a container
    in ``applied_whole`` or below one is an ``nn.Sequential`` of its named children."""
    root = Container()
    for path, init in named:
        parts = path.split(".")
        holder = root
        for depth, part in enumerate(parts[:-1], start=1):
            whole = holder.applied_whole or ".".join(parts[:depth]) in applied_whole
            child = holder.children.setdefault(part, Container(applied_whole=whole))
            assert isinstance(child, Container)
            holder = child
        holder.children[parts[-1]] = init
    return root.children


def function_items(graphs: Iterable[Graph]) -> bool:
    """Whether rolled classes take the operations inside their list and table arguments
    (``cfg = [(8, relu), (4, exp)]``) as functions (``((8, F.relu), (4, torch.exp))``,
    forward ``x = a(x)``) rather than as module factories (``nn.ReLU``, built where
    applied: ``x = a()(x)``): where a call among ``graphs`` (every block instance of the
    program) gives an operation with no module factory but a function, as an
    operation-valued parameter is taken as a function where one call's has no module
    class."""
    return any(
        module_factory(item.name) is None and function_of(item.name) is not None
        for graph in graphs
        for value in graph.block_args.values()
        for item in operation_items(value)
    )


def operation_items(value: Any) -> list[OpValue]:
    """The operations (not blocks) inside a list or table argument, at any depth."""
    return list(_operation_items(value))


def _operation_items(value: Any) -> Iterable[OpValue]:
    if isinstance(value, OpValue):
        if not value.is_model:
            yield value
    elif isinstance(value, tuple | list) and not isinstance(value, str):
        for item in value:
            yield from _operation_items(item)
