"""One generated class per parameterised block, taking the block's parameters.

``model BasicBlock(width, stride=1):`` becomes ``class BasicBlock(nn.Module)`` with
``def __init__(self, in_channels, width, stride=1)``: each call's instance graph is written
with its symbolic numbers shown as expressions of the parameters (``nn.Linear(width,
4 * width)``), plus the block input's channel or feature size (``in_channels``,
``in_features``) when a constructor needs it, and an image's spatial size the calls give
differently when the constructor reads it (``in_features`` for the last axis alone, else
``in_height``, ``in_width``). The channel or feature size of an input
after the first is a constructor argument named after the input (``skip_channels``) when
the block's calls give it differently; a size every call gives alike is written as its
number, as it was before those sizes were symbolic. Instances whose classes read the same
(shape comments aside) share one class; a call whose graph differs in structure gets its
own class (``BasicBlock_2``). Shape comments that differ between the calls are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from graphlib import TopologicalSorter
from typing import Any

from aurane.backends.torch.branches import (
    Conditions,
    Member,
    Parts,
    Test,
    Untaken,
    cut,
    holds,
    if_parents,
    join,
    middle,
    nests_tests,
    runs_if,
    uncommented,
    untaken_ways,
)
from aurane.backends.torch.emit_common import lit
from aurane.backends.torch.folded_sizes import hidden_params, size_flags
from aurane.backends.torch.inline import inlined_source
from aurane.backends.torch.kinds import (
    is_flag,
    kind_guarded,
    kind_subject,
    kind_text,
    kinds_mixed,
    refusing_text,
    same_value,
)
from aurane.backends.torch.loop_counts import (
    branch_params,
    branches_on_iterations,
    params_by_call,
    read_params,
)
from aurane.backends.torch.modules import INDENT, ClassPlan, attribute_namespace, emit_class
from aurane.backends.torch.named import (
    default_function,
    function_of,
    function_value,
    holds_no_state,
    layer_factory,
    module_class,
    module_factory,
    module_item_class,
    same_operation,
    signature_default,
    sized_module_class,
)
from aurane.backends.torch.names import Namespace
from aurane.backends.torch.norm_axes import cut_axes_refusals
from aurane.backends.torch.pyexpr import negation
from aurane.backends.torch.refusals import first_in_init, refusal
from aurane.backends.torch.shown import Dropped, Naming, ShownStr, show, show_named
from aurane.backends.torch.untaken import indexed_params, kind_blind, phantom_arguments
from aurane.backends.torch.whole_numbers import boolean_refusals, number_names
from aurane.ir.blocks import with_plain_sizes
from aurane.ir.graph import Graph, Node, OperationParam
from aurane.records import field, fields, is_record, record, replace
from aurane.semantics.symbolic import InputSize, Leaf, Ref, is_symbolic, plain
from aurane.semantics.values import OpValue
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.items import syntax_items

# told the parameters a number written as its value reads and the values it is a size of
FoldedAt = Callable[[frozenset[str], tuple[str, ...]], None]


@record(frozen=True)
class BlockClasses:
    """What a rolled class needs of the classes of model-valued arguments (``block=Basic``,
    a row's ``Basic``): per inner block instance, the model-valued parameters its class
    takes as block classes, each with the class that call gives (``taken``); the one class
    of a block (``named``; None where it has several or none); and the class a model-valued
    parameter's default is written as in a signature (``default``; None where it cannot be)."""

    taken: Callable[[Graph], Mapping[str, str]]
    named: Callable[[str], str | None]
    default: Callable[[Graph, str], str | None]


@record
class _Class:
    name: str
    plan: ClassPlan
    dims: tuple[int, ...]  # input axes passed to the constructor (0, the last, spatial)
    params: tuple[str, ...]  # the constructor's parameters after the input sizes, in order
    defaults: dict[str, Any]
    # operation- and model-valued parameters passed as classes (``act=nn.ReLU``,
    # ``block=Basic``): name -> default class or None
    ops: dict[str, str | None] = field(default_factory=dict)
    more: tuple[InputSize, ...] = ()  # sizes of the inputs after the first it takes
    members: list[list[str]] = field(default_factory=list)  # each instance's lines
    graphs: list[Graph] = field(default_factory=list)  # the instances it writes
    lines: list[str] | None = None  # a class joined over branches: its text
    # operation-valued parameters a rolled class takes as functions (``act=F.relu``)
    functions: dict[str, str | None] = field(default_factory=dict)
    # a rolled class takes the operations in its list arguments as functions
    # (``((8, F.relu), (4, torch.exp))``: ``named.function_items``), not module factories
    function_items: bool = False
    # a class written out for its calls' counts or branches that still takes the values
    # deciding them: the lines refusing any other value (``if n != 2: raise ...``)
    guards: list[str] = field(default_factory=list)
    # written for a phantom's call of a block no call makes (``_class_for_phantom``): the
    # shapes of that call are no call's, so the class shows none
    phantom: bool = False
    # joined over branches: the ways through its ``if`` statements that no call takes,
    # which its constructor refuses (``branches.untaken_ways``, ``_refusing_untaken``)
    untaken: list[Untaken] = field(default_factory=list)
    # the parameters its constructor's numbers written as their values read (``_Scopes``)
    dropped: set[str] = field(default_factory=set)


class _Scopes:
    """How a class writes its references, and which it used: the constructor writes a
    parameter or input size by its constructor name (``width``, ``in_channels``,
    ``skip_channels``); a forward statement reads it from the module (``self.width``), which
    the constructor stores."""

    def __init__(
        self,
        graph: Graph,
        params: tuple[str, ...],
        unfolded: frozenset[int] = frozenset(),
        folded: frozenset[str] = frozenset(),
    ) -> None:
        """``unfolded``: the spatial axes of the input that the block's calls give
        differently: the constructor takes them (``in_height``), not their numbers;
        ``folded``: parameters the class does not take (a loop count its calls give alike,
        ``ParamClasses._join``): a number read from one is written as its value."""
        rank = len(graph.input_value.shape or ()) - 1
        self.folded = folded
        self.inputs = input_names(rank, params, unfolded)
        self.unfolded = unfolded
        self.more = later_input_names(graph, (*params, *self.inputs))
        # an image's or volume's spatial sizes: read from the input in forward
        self.spatial = SPATIAL_NAMES.get(rank - 1, ())
        self.sizes: set[int] = set()  # the spatial axes a forward statement reads
        attrs = attribute_namespace()
        attrs.claim(n.layer.split(".")[0] for n in graph.nodes if n.layer)  # the user's names
        every = (*self.inputs, *self.more.values(), *params)
        self.attrs = {name: attrs.allocate(name) for name in every}
        self.used_inputs: set[int] = set()
        self.used_more: set[InputSize] = set()  # sizes of later inputs the class reads
        self.read: set[str] = set()  # constructor names a forward statement reads
        # the parameters the trees of the numbers the constructor writes as their values
        # read (``nn.Linear(8, w)``, the 8 a width after ``conv_transpose2d(kernel=k)``):
        # the class is right at its calls' values of them only (``ParamClasses._guards``)
        self.dropped: set[str] = set()
        # the IR's values whose sizes such numbers are (or that the node whose argument
        # one is reads): a parameter an operation before them reads may change them too,
        # where no tree shows it (``avgpool(2, ceil_mode=c)``)
        self.folded_from: set[str] = set()

    def drop(self, refs: frozenset[str], values: tuple[str, ...]) -> None:
        self.dropped |= refs
        self.folded_from |= set(values)

    def constructor_name(self, leaf: Leaf) -> str:
        if isinstance(leaf, InputSize) and leaf.input:
            self.used_more.add(leaf)
            return self.more[leaf]
        if isinstance(leaf, InputSize):
            self.used_inputs.add(leaf.axis)
            return self.inputs[leaf.axis]
        return leaf.name

    def init(self, leaf: Leaf) -> str:
        return self.constructor_name(leaf)

    def _spatial(self, leaf: Leaf) -> bool:
        """A spatial size of the first input: forward reads it from the input."""
        return (
            isinstance(leaf, InputSize)
            and leaf.input == 0
            and leaf.axis >= 1
            and bool(self.spatial)
        )

    def folds(self, leaf: Leaf) -> bool:
        """A spatial size every call gives alike: no constructor argument, so the
        constructor writes its value."""
        if isinstance(leaf, Ref):
            return leaf.name in self.folded
        return (
            self._spatial(leaf) and isinstance(leaf, InputSize) and leaf.axis not in self.unfolded
        )

    def folds_forward(self, leaf: Leaf) -> bool:
        """A folded parameter, in forward too (spatial sizes forward reads from the input)."""
        return isinstance(leaf, Ref) and leaf.name in self.folded

    def forward(self, leaf: Leaf) -> str:
        if self._spatial(leaf):
            assert isinstance(leaf, InputSize)
            self.sizes.add(leaf.axis)
            return self.spatial[leaf.axis - 1]
        return self.kept(leaf)

    def kept(self, leaf: Leaf) -> str:
        """A reference as forward reads it from the module (``self.in_features``), an
        input's spatial size too (a branch's test: forward may not have read it yet)."""
        name = self.constructor_name(leaf)
        self.read.add(name)
        return f"self.{self.attrs[name]}"

    def stored(self, order: list[str]) -> tuple[tuple[str, str], ...]:
        return tuple((self.attrs[n], n) for n in order if n in self.read)

    def input_sizes(self) -> tuple[tuple[int, str], ...]:
        """(axis, local name) of each spatial size forward reads, for its first line."""
        return tuple((axis, self.spatial[axis - 1]) for axis in sorted(self.sizes))


# the locals a forward reads its input's spatial sizes into, by the number of spatial axes
SPATIAL_NAMES = {2: ("height", "width"), 3: ("depth", "height", "width")}


def _with_plain_sizes(graph: Graph, sizes: frozenset[InputSize]) -> Graph:
    """``graph`` with the input ``sizes`` written as numbers (``blocks.with_plain_sizes``)
    in its nodes' arguments and its values' shapes."""
    if not sizes:
        return graph
    nodes = tuple(
        replace(n, args=with_plain_sizes(graph, dict(n.args), sizes)) for n in graph.nodes
    )
    values = tuple(replace(v, shape=with_plain_sizes(graph, v.shape, sizes)) for v in graph.values)
    return replace(graph, nodes=nodes, values=values)


def _shown_graph(
    graph: Graph,
    name: Naming,
    folds: Callable[[Leaf], bool] | None = None,
    ops: Mapping[str, object] | None = None,
    dropped: FoldedAt | None = None,
) -> Graph:
    """``graph`` as a class writes it: symbolic numbers as expressions, and the
    boolean/string arguments a parameter gave as the parameter, references by ``name``;
    an operation-valued parameter of ``ops`` given to an inner block (``Inner(8, act)``)
    is that block's argument by the parameter's name; ``dropped`` is told the parameters
    of each number written as its value (``show``), and the values it is a size of."""

    def at(values: tuple[str, ...]) -> Dropped | None:
        return None if dropped is None else lambda refs: dropped(refs, values)

    passed = {
        (node_id, inner): param
        for param in ops or {}
        for node_id, inner in _given(graph, param).passed
    }
    nodes = []
    for node in graph.nodes:
        args: dict[str, Any] = show(dict(node.args), name, folds, at(node.inputs))
        for arg, param in graph.block_refs.get(node.id, {}).items():
            holder, key = args, arg
            if arg.startswith("arguments."):  # a nested block call's argument
                holder = args["arguments"] = dict(args["arguments"])
                key = arg.removeprefix("arguments.")
            holder[key] = show_named(holder[key], param, name)
        for (node_id, inner), param in passed.items():
            if node_id == node.id:  # written by name where call_args reads it
                args["arguments"] = {
                    **args.get("arguments", {}),
                    inner: show_named("", param, name),
                }
        nodes.append(replace(node, args=args))
    values = tuple(
        replace(v, shape=show(v.shape, name, folds, at((v.name,)))) for v in graph.values
    )
    return replace(graph, nodes=tuple(nodes), values=values)


def _operation_ids(graph: Graph, ops: Mapping[str, object]) -> dict[str, str]:
    """New ids for the nodes an operation-valued parameter applies, after the parameter
    (``act1``, ``act2``): their locals then read alike whichever operation a call gave. (A
    model-valued parameter's block calls are named so by the IR already: ``block1``.)"""
    taken = {n.id for n in graph.nodes}
    out: dict[str, str] = {}
    for param in ops:
        if param not in graph.block_ops:
            continue
        for index, node in enumerate(graph.block_ops[param].nodes, start=1):
            name = f"{param}{index}"
            while name in taken:
                name += "_"
            taken.add(name)
            out[node] = name
    return out


def _renamed(graph: Graph, ids: Mapping[str, str]) -> Graph:
    if not ids:
        return graph
    nodes = tuple(replace(n, id=ids[n.id]) if n.id in ids else n for n in graph.nodes)
    return replace(graph, nodes=nodes)


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
        models: Mapping[str, ast.Model] | None = None,
        join_branches: bool = True,
        constants: Mapping[str, ast.Expr] | None = None,
        roll: RollBlock | None = None,
        function_items: bool = False,
        arguments: Mapping[int, Mapping[str, Any]] | None = None,
        lower_at: LowerAt | None = None,
    ) -> None:
        """``roll``: writes one class for a block's instances that differ in loop counts
        (``rolled_block.py``), or returns None to keep their classes; ``function_items``:
        a rolled class takes the operations in its list arguments as functions
        (``named.function_items`` of every block instance of the program); ``arguments``:
        each instance's call arguments, by ``id`` of its graph; ``lower_at``: an
        instance's block lowered again at other arguments (None where that fails), for a
        body no call runs (``untaken.py``)."""
        self.lower_at = lower_at
        self.instances = instances
        self._phantom_graphs: list[Graph] = []  # those the roller reads now (``_phantoms``)
        # the blocks no call of the program makes whose class a phantom's inner call wrote
        # (``_class_for_phantom``): kept where the rolled class calls it, else dropped
        self._phantom_blocks: list[str] = []
        self.globals = globals_
        self.function_items = function_items
        self.outer = class_of
        self.models = models or {}
        self.constants = constants or {}
        self.by_graph: dict[int, _Class] = {}
        self.classes: dict[str, dict[tuple[str, ...], _Class]] = {}
        # per block, the sizes of its later inputs that every call gives alike (numbers)
        self.alike: dict[str, frozenset[InputSize]] = {}
        # per block, the spatial axes of its input that its calls give differently
        self.unfolded: dict[str, frozenset[int]] = {}
        # per block, the parameters its loops run over that its class joined over
        # branches folds (``_join``): its calls give them alike
        self.loops_folded: dict[str, frozenset[str]] = {}
        self.given = arguments or {}
        # (block, reason) for each block whose calls stay several classes that no roller
        # was given: the caller reports them as located notes (``RollFallback``)
        self.fallbacks: list[tuple[str, str]] = []
        self._refusals: dict[str, str] = {}  # per block, why a join was refused
        order: list[Graph] = []
        seen: set[int] = set()
        callees: dict[str, set[str]] = {}

        def visit(graph: Graph) -> None:
            if id(graph) in seen:
                return
            seen.add(id(graph))
            callees.setdefault(graph.name, set())
            for node in graph.nodes:
                if node.subgraph is not None and node.subgraph.block_params is not None:
                    visit(node.subgraph)
                    if node.subgraph.name != graph.name:
                        callees[graph.name].add(node.subgraph.name)
            order.append(graph)

        for graphs in instances.values():
            for graph in graphs:
                visit(graph)
        self.alike = _alike_sizes(order)
        self.varying = _varying_models(order)
        spatial = _varying_spatial(order)
        if lower_at is not None:
            for block, axes in _moved_spatial(order, lower_at).items():
                spatial[block] = spatial.get(block, frozenset()) | axes
        self.unfolded = _shared_spatial(order, spatial, self.varying)
        # (instance, parameter) whose block is folded after all: its class serves one block
        self.folded: set[tuple[int, str]] = set()
        # per block, the operation-valued parameters its classes take as functions, each
        # with its default's function (decided before any caller's, which passes it on);
        # with no roller (a class per call), each call's class folds them instead, so that
        # neither build has a module for them (``self.act = act()`` beside ``self.act = act``)
        self.functions: dict[str, dict[str, str | None]] = {}
        self.takes_functions = roll is not None
        # per block, those it takes as module factories (applied by named steps only:
        # ``functools.partial(nn.LogSoftmax, dim=-1)`` beside ``nn.GELU``)
        self.factories: dict[str, dict[str, str | None]] = {}
        # per block, the module-class parameters its instances that apply them nowhere
        # take too (``unused_module_params``), so the kind does not hang on which ran
        self.unused_ops: dict[str, dict[str, str | None]] = {}
        # the blocks whose one class for calls agreeing on a count is written out for it
        # (and refuses another, ``_guards``), each with why the roller was not tried
        self.refused: list[tuple[str, str]] = []
        self.globals.allocate_all(instances)
        self._order = order
        self._join_branches = join_branches
        # per block, the blocks whose instances call it (``_takes_width``)
        self._callers: dict[str, set[str]] = {}
        for caller, called in callees.items():
            for callee in called:
                self._callers.setdefault(callee, set()).add(caller)
        self._rolling = ""  # the block being rolled
        # the blocks written again taking an input width a rolled caller threads
        self._width_taken: set[str] = set()
        # every instance of a block, then its classes joined, before any of its callers
        for name in TopologicalSorter(callees).static_order():
            self._write(name, roll)

    def _write(self, name: str, roll: RollBlock | None) -> None:
        """The classes of the block ``name``'s instances: each instance's, those reading
        alike shared, joined over branches and rolled where they can be, each refusing
        other values of what it folded."""
        graphs = [graph for graph in self._order if graph.name == name]
        self.functions[name] = self._function_params(graphs)
        self.factories[name] = factory_params(graphs) if roll is not None else {}
        self.unused_ops[name] = unused_module_params(graphs) if roll is not None else {}
        for graph in graphs:
            self._assign(graph)
        while self._fold_unshared(name):
            for graph in graphs:
                self._assign(graph)
        if self._join_branches and name in self.models:
            self._join(name)
        if roll is not None and name in self.models:
            self._roll(name, roll)
        # every class written out for its calls refuses other values of what it
        # folded: one for all its calls, and each of a block whose calls keep one
        # class per call (the roller's note, or ``--class-per-call``), which a user
        # may build by hand too
        if name in self.models:
            for written in self.classes.get(name, {}).values():
                written.guards = self._guards(written, self.models[name])

    def _written_again(self, name: str, roll: RollBlock | None) -> None:
        """The classes of ``name`` dropped, names and all, and written again (after a
        block it calls changed its signature)."""
        for written in self.classes.pop(name, {}).values():
            if written.name != self.globals.allocate(name):
                self.globals.used.discard(written.name)
        self._write(name, roll)

    def _takes_width(self, block: str, axis: int) -> bool:
        """Whether the one class of ``block``, written for its calls' input size on the
        sample axis ``axis`` (``nn.Linear(6, w)``: they all give 6), can take that size as
        a constructor argument instead, for the rolled class of ``_rolling``, which calls
        it at a running width (fuzz seed 112000053). Once; the other callers' classes
        written already with the old signature are written again (``_take_width``)."""
        written = list(self.classes.get(block, {}).values())
        if len(written) != 1 or written[0].lines is not None or written[0].phantom:
            return False
        rank = len(plain(written[0].graphs[0].input_value.sample_shape) or ())
        return (
            block in self.models
            and block not in self._width_taken
            and self._rolling in self._callers.get(block, set())
            and 1 <= axis < rank
            and axis not in self.unfolded.get(block, frozenset())
        )

    def _take_width(self, block: str, axis: int, roll: RollBlock | None) -> None:
        """The class of ``block`` written again taking its input size on ``axis``
        (``Unit1(in_features, w)``), as a class serving calls at several widths does, and
        so are the classes of its other callers written already (``Unit1(w)`` there):
        each builds ``Unit1(6, w)`` now. The rolled caller is written again by
        ``_roll``; callers not written yet see the new signature."""
        self._width_taken.add(block)
        self.unfolded[block] = self.unfolded.get(block, frozenset()) | {axis}
        self._written_again(block, roll)
        for caller in sorted(self._callers.get(block, set()) - {self._rolling}):
            if caller in self.classes:
                self._written_again(caller, roll)

    def class_of(self, sub: Graph) -> str:
        found = self.by_graph.get(id(sub))
        return found.name if found is not None else self.outer(sub)

    def functions_of(self, sub: Graph) -> Mapping[str, str | None]:
        """The operation-valued parameters the classes of ``sub``'s block take as
        functions (``act=F.relu``), each with its default."""
        return self._taken_functions(sub.name)

    def _taken_functions(self, block: str) -> dict[str, str | None]:
        """``functions_of``: none with no roller, where each call's class folds them."""
        return self.functions.get(block, {}) if self.takes_functions else {}

    def dims_of(self, sub: Graph) -> tuple[int, ...] | None:
        """The input axes the class of ``sub`` takes as constructor arguments; None also
        for a class that takes sizes of its later inputs."""
        found = self.by_graph.get(id(sub))
        return found.dims if found is not None and not found.more else None

    def sizes_of(self, sub: Graph) -> tuple[tuple[int, ...], tuple[InputSize, ...]] | None:
        """The input sizes the class of ``sub`` takes as constructor arguments: the first
        input's axes, then the later inputs' sizes (``s0_channels``), in order."""
        found = self.by_graph.get(id(sub))
        return (found.dims, found.more) if found is not None else None

    def _sub_class(self, sub: Graph) -> str:
        return self.class_of(sub) if sub.block_params is not None else self.outer(sub)

    def _block_class(self, sub: Graph | None) -> str | None:
        """The class of a block's instance: a block without parameters' own, a
        parameterised block's once assigned (None before)."""
        if sub is None:
            return None
        if sub.block_params is None:
            return self.outer(sub)
        found = self.by_graph.get(id(sub))
        return found.name if found is not None else None

    def blocks_taken(self, sub: Graph) -> dict[str, str]:
        """The model-valued parameters the class of the instance ``sub`` takes as block
        classes (``block=Basic``), each with the class this call gives it."""
        found = self.by_graph.get(id(sub))
        if found is None:
            return {}
        taken = {}
        for param in sub.block_models:
            made = _module_of(sub, param, self._block_class) if param in found.ops else None
            if made is not None:
                taken[param] = made
        return taken

    def block_class_named(self, model: str) -> str | None:
        """The one class of the block ``model`` (a row's ``Basic``), or None."""
        classes = list(self.classes.get(model, {}).values())
        return classes[0].name if len(classes) == 1 else None

    def block_default(self, graph: Graph, param: str) -> str | None:
        """The class a signature writes for the default of the model-valued ``param`` of
        ``graph``'s block: the one class of a block written before it (a default is
        evaluated where the class is defined), else None."""
        default = graph.block_models[param].default
        order = list(self.models)
        if default is None or default not in order or graph.name not in order:
            return None
        if order.index(default) >= order.index(graph.name):
            return None
        return self.block_class_named(default)

    def _operations(self, graph: Graph) -> dict[str, str | None]:
        """``_operations``, and the model-valued parameters this instance's class takes as
        block classes (``block=Basic``): one the calls of the block give different models
        (one they all give the same stays folded, ``self.block1 = Basic(...)``), whose
        block calls all build one class, and whose default, if any, is the one class of a
        block written before this one (a default is evaluated where the class is defined)."""
        functions = {  # folded here with no roller, but for a module's instance (identity)
            param: default
            for param, default in self.functions.get(graph.name, {}).items()
            if self.takes_functions or not _module_instance(graph, param)
        }
        out = {
            param: default
            for param, default in _operations(graph).items()
            if param not in functions and self._passes_modules(graph, param)
        }
        out.update(self.factories.get(graph.name, {}))
        for param, default in self.unused_ops.get(graph.name, {}).items():
            if _applies_none(graph, param) and param not in functions:
                out[param] = default  # as the block's other instances take it
        order = list(self.models)
        for param, found in graph.block_models.items():
            if param not in self.varying.get(graph.name, ()) or (id(graph), param) in self.folded:
                continue
            if _module_of(graph, param, self._block_class) is None:
                continue
            default = None
            if found.default is not None:
                classes = list(self.classes.get(found.default, {}).values())
                before = (
                    found.default in order
                    and graph.name in order
                    and order.index(found.default) < order.index(graph.name)
                )
                if len(classes) != 1 or not before:
                    continue
                default = classes[0].name
            out[param] = default
        return out

    def _passes_modules(self, graph: Graph, param: str) -> bool:
        """Whether every inner block the operation-valued ``param`` is given to takes it as
        a module class: not where that block's class takes it as a function."""
        nodes = graph.node_by_id
        for node_id, inner in _given(graph, param).passed:
            sub = nodes[node_id].subgraph
            if sub is not None and inner not in self._operations(sub):
                return False
        return True

    def _function_params(self, graphs: Sequence[Graph]) -> dict[str, str | None]:
        """The operation-valued parameters one block's classes take as functions
        (``act=F.relu``, a call passing ``torch.exp``): its calls give different operations,
        one applied (or passed on) without an argument-free module class (an operation
        no call applies is taken as its module class: ``_unused_module``), and each call's
        is a function of one tensor (``function_value``) that it applies unnamed or passes
        on to inner blocks taking it as a function. Each with its default's function (None:
        none)."""
        out: dict[str, str | None] = {}
        for param, found in graphs[0].block_ops.items():
            if any(param not in g.block_ops for g in graphs):
                continue
            if all(param in self._operations(g) or _applies_none(g, param) for g in graphs):
                continue  # act=nn.ReLU
            given = {self._function_given(g, param) for g in graphs}
            default = applied_default(graphs, param, function_value, default_function)
            if None in given or len(given) == 1 or (found.default and default is None):
                continue  # folded: one class per operation given, or one for all
            out[param] = default
        return out

    def _function_given(self, graph: Graph, param: str) -> str | None:
        """The function the operation-valued ``param`` gives the instance ``graph``
        (``torch.exp``), or None where a named step applies it (a module, not a function)
        or an inner block it is given to does not take it as a function."""
        found = graph.block_ops[param]
        nodes = graph.node_by_id
        if any(nodes[n].layer for n in found.nodes):
            return None
        for node_id, inner in found.passed:
            sub = nodes[node_id].subgraph
            if sub is None or inner not in self.functions.get(sub.name, {}):
                return None
        return function_value(graph, param)

    def _plan(
        self,
        graph: Graph,
        dims: tuple[int, ...] | None = None,
        reads: frozenset[str] = frozenset(),
        more: tuple[InputSize, ...] | None = None,
        unused: Mapping[str, str | None] | None = None,
    ) -> tuple[ClassPlan, list[str], tuple[int, ...], tuple[InputSize, ...], _Scopes]:
        """One instance's class: written once to learn which references it reads (the input
        sizes its constructor takes, the values forward reads from ``self``), then with that
        signature (or with ``dims``, ``more`` and ``reads`` more, for a class joined over
        branches, whose ``unused`` operation-valued parameters the instance takes though it
        applies none of them)."""
        assert graph.block_params is not None
        ops = self._operations(graph)
        for param, default in (unused or {}).items():
            ops.setdefault(param, default)
        functions = self._taken_functions(graph.name)
        taken_ops = {**ops, **functions}  # every operation-valued parameter it takes
        params = self._params(graph, taken_ops)
        defaults = dict(graph.block_defaults)
        renamed = _operation_ids(graph, taken_ops)
        varying = self.unfolded.get(graph.name, frozenset())
        if dims is not None:
            varying &= frozenset(dims)
        scopes, probe = self._probe(graph, params, taken_ops, renamed, varying)
        taken = varying & frozenset(scopes.used_inputs)
        if taken and taken != varying:  # named by the spatial axes it takes (in_features)
            scopes, probe = self._probe(graph, params, taken_ops, renamed, taken)
        shown, forward = probe.graph, probe.forward_graph
        claimed, op_params, class_params = probe.claimed, probe.op_params, probe.class_params
        if dims is None:
            dims = tuple(sorted(scopes.used_inputs))
        if more is None:
            more = _in_order(scopes.used_more)
        scopes.read |= reads
        names = [*(scopes.inputs[d] for d in dims), *(scopes.more[leaf] for leaf in more)]
        signature = [*names]
        for param in params:
            if param in defaults:  # rows of operations or blocks as a call passes them
                signature.append(f"{param}={self._value_text(plain(defaults[param]))}")
            elif ops.get(param) is not None:
                signature.append(f"{param}={ops[param]}")
            elif (default := functions.get(param)) is not None:  # act=F.relu: applied as is
                signature.append(f"{param}={signature_default(default)}")
            else:
                signature.append(param)
        stored = scopes.stored([*names, *params])
        size_names: tuple[tuple[Leaf, str], ...] = (
            *((InputSize(d), scopes.inputs[d]) for d in dims),
            *((leaf, scopes.more[leaf]) for leaf in more),
            *((Ref(param), param) for param in params),
        )
        plan = ClassPlan(
            graph.name,
            shown,
            False,
            tuple(signature),
            forward_graph=forward,
            stored=stored,
            claimed=claimed,
            op_params=op_params,
            functions=tuple(functions),
            function_defaults=tuple((p, d) for p, d in functions.items() if d is not None),
            class_params=class_params,
            input_sizes=scopes.input_sizes(),
            size_names=size_names,
        )
        return plan, self._emit(plan), dims, more, scopes

    def _taken(self, classes: list[_Class]) -> frozenset[int]:
        """The spatial axes the constructors of ``classes`` (one block's) take."""
        varying = self.unfolded.get(classes[0].graphs[0].name, frozenset())
        return varying & frozenset(d for c in classes for d in c.dims)

    def _probe(
        self,
        graph: Graph,
        params: tuple[str, ...],
        ops: Mapping[str, str | None],
        renamed: Mapping[str, str],
        unfolded: frozenset[int],
    ) -> tuple[_Scopes, ClassPlan]:
        """The class of one instance written without its signature, to learn which
        references it reads (``unfolded``: the spatial axes its constructor may take)."""
        scopes = _Scopes(graph, params, unfolded, self.loops_folded.get(graph.name, frozenset()))
        written = _with_plain_sizes(graph, self.alike.get(graph.name, frozenset()))
        shown = _renamed(
            _shown_graph(written, scopes.init, scopes.folds, ops, scopes.drop), renamed
        )
        forward = _renamed(_shown_graph(written, scopes.forward, scopes.folds_forward), renamed)
        claimed = tuple(scopes.attrs.values())
        op_params = tuple(
            (renamed[node], param, scopes.attrs[param])
            for param in ops
            if param in graph.block_ops
            for node in graph.block_ops[param].nodes
        )
        class_params = tuple(
            (node, param)
            for param in ops
            if param in graph.block_models
            for node in graph.block_models[param].nodes
        )
        probe = ClassPlan(
            graph.name,
            shown,
            False,
            forward_graph=forward,
            claimed=claimed,
            op_params=op_params,
            class_params=class_params,
        )
        self._emit(probe)
        return scopes, probe

    def _params(self, graph: Graph, ops: Mapping[str, str | None]) -> tuple[str, ...]:
        """The constructor's parameters in the block's order: the numbers, booleans and
        strings, and the operation- and model-valued parameters passed as classes."""
        assert graph.block_params is not None
        taken = {*graph.block_params, *ops}  # a folded loop count too: the class guards it
        model = self.models.get(graph.name)
        if model is None:
            return (*graph.block_params, *ops)
        return tuple(p.name for p in model.params if p.name in taken)

    def _assign(self, graph: Graph) -> None:
        """The class of one instance; instances whose classes read alike share one."""
        assert graph.block_params is not None
        plan, lines, dims, more, scopes = self._plan(graph)
        key = tuple(_strip(line) for line in lines[1:])
        by_key = self.classes.setdefault(graph.name, {})
        found = by_key.get(key)
        if found is None:
            name = (
                self.globals.allocate(graph.name) if not by_key else self.globals.fresh(graph.name)
            )
            ops = self._operations(graph)
            functions = self._taken_functions(graph.name)
            params = self._params(graph, {**ops, **functions})
            defaults = dict(graph.block_defaults)
            found = by_key[key] = _Class(
                name, replace(plan, name=name), dims, params, defaults, ops, more
            )
            found.functions = dict(functions)
        found.members.append(lines)
        found.graphs.append(graph)
        found.dropped |= scopes.dropped | self._changing(graph, scopes.folded_from)
        # and an integer whose size no tree shows: every size after it may be a number
        found.dropped |= self._hidden_numbers(graph)
        # and one an item's index reads (``dense(sizes[k])``): the item is its number
        if (model := self.models.get(graph.name)) is not None:
            found.dropped |= indexed_params(model, self.constants) & set(found.params)
        self.by_graph[id(graph)] = found

    def _hidden_numbers(self, graph: Graph) -> set[str]:
        """The integer parameters a call of the instance ``graph`` gives an operation as an
        argument that change its output shape though no size's tree reads them
        (``slice(start=k)`` of 6: 3 at ``k = 3``, a plain number the sizes after it read),
        so the class is right at its call's values of them only (``hidden_params``)."""
        return set().union(*(hidden_params(graph, node) for node in graph.nodes))

    def _changing(self, graph: Graph, values: Iterable[str]) -> set[str]:
        """The boolean and string parameters the calls before ``values`` (the IR's values
        of the instance ``graph`` whose sizes its class writes as numbers) read that may
        change those sizes where no tree shows it (``avgpool(2, ceil_mode=c)``: 3 or 4 of
        7; not ``bias=b``: ``folded_sizes.size_flags``), so the class is right at its
        call's values of them only."""
        model = self.models.get(graph.name)
        if model is None or not values:
            return set()
        calls = params_by_call(model)
        found: set[str] = set()
        for node in graph.ancestors(values):
            found |= size_flags(graph, node, calls.get(node.span, frozenset()))
        return found

    def _fold_unshared(self, model: str) -> bool:
        """Fold again a model-valued parameter in the instances whose class serves one block
        only (their blocks' constructors differ from the others': ``block(in_features,
        width)`` and ``block(width)`` read differently), so they are written as before, the
        block by its class (``self.block1 = Gate(width)``), and in a class whose signature
        default is none of the blocks it serves (a default it might not build); True when
        it dropped the classes of ``model`` to be assigned again."""
        classes = list(self.classes.get(model, {}).values())
        alone = set()
        for cls in classes:
            for param in cls.ops:
                if param not in self.varying.get(model, ()):
                    continue
                blocks = {g.block_models[param].op for g in cls.graphs}
                default = cls.graphs[0].block_models[param].default
                # a default must be one of the blocks it serves: one it can build
                if len(blocks) == 1 or (default is not None and default not in blocks):
                    alone |= {(id(g), param) for g in cls.graphs}
        if not alone:
            return False
        self.folded |= alone
        for cls in classes[1:]:  # the first keeps its name: allocated, not fresh
            self.globals.used.discard(cls.name)
        self.classes[model] = {}
        return True

    def _join(self, model: str) -> None:
        """The classes of one block, joined into one where they differ only by the ``if``
        branches their calls took (``branches.py``); classes that differ otherwise (an
        operation-valued argument) stay apart, each joined with those it can be."""
        classes = list(self.classes.get(model, {}).values())
        if len(classes) < 2:
            return
        ranks = {len(g.input_value.sample_shape or ()) for c in classes for g in c.graphs}
        rank = ranks.pop() if len(ranks) == 1 else None
        forward = self.models[model].forward
        if forward is not None and fills_by_parameter(forward.body):
            return  # the buffer's contents by init: the roller chooses, or a class per call
        kinded = kind_blind(self.models[model])  # True is not 1 in their tests
        conditions = Conditions(self.models[model], self.constants, rank, kinded)
        if not conditions.supported or not conditions.ifs:
            return
        # each instance's class unrolls the loops, so a class joined over branches cannot
        # run them over other counts or rows: it folds what its calls give alike, and
        # calls that differ are left to the roller (which writes the loops, or says why not)
        loops = loop_params(self.models[model])
        guards: list[tuple[str, str, str]] = []
        if loops:
            found = {repr(self._values(graph, loops)) for cls in classes for graph in cls.graphs}
            values = self._values(classes[0].graphs[0], loops)
            if len(found) > 1 or values is None:
                return
            self.loops_folded[model] = loops
            guards = [guard for p, v in values if (guard := _count_guard(p, v)) is not None]
        # a number written as its value that a parameter changes (``_Class.dropped``): the
        # joined class is right at the calls' value of it only, which they must agree on
        dropped = set().union(*(cls.dropped for cls in classes)) - loops
        sized: list[tuple[str, str, str]] = []
        if dropped:
            found = {repr(self._values(graph, dropped)) for cls in classes for graph in cls.graphs}
            values = self._values(classes[0].graphs[0], dropped)
            if len(found) > 1 or values is None:
                return
            sized = [guard for p, v in values if (guard := _count_guard(p, v)) is not None]
        groups: list[tuple[list[_Class], _Class | None]] = []
        for cls in classes:
            for index, (members, _) in enumerate(groups):
                joined = self._joined(conditions, [*members, cls])
                if joined is not None:
                    groups[index] = ([*members, cls], joined)
                    break
            else:
                groups.append(([cls], None))
        if len(groups) > 1:  # _roll is given no class joined over branches: say why here
            reason = self._refusals.get(model, "their classes do not line up")
            self._refusals[model] = f"its calls take different if branches, and {reason}"
        out: dict[tuple[str, ...], _Class] = {}
        for cls in classes[1:]:  # the classes that remain are named Block_2, Block_3, ...
            self.globals.used.discard(cls.name)
        for index, (members, joined) in enumerate(groups):
            final = joined or members[0]
            if index:
                final.name = self.globals.fresh(model)
                final.plan = replace(final.plan, name=final.name)
                if final.lines is not None:
                    final.lines[0] = f"class {final.name}(nn.Module):"
            if joined is not None and guards and final.lines is not None:
                final.lines = _guarded(final.lines, final.name, guards)
            if joined is not None and sized and final.lines is not None:
                final.lines = _guarded(final.lines, final.name, sized, SIZED)
            if joined is not None and final.untaken and final.lines is not None:
                final.lines = _refusing_untaken(final.lines, final.name, final.untaken)
            for graph in final.graphs:
                self.by_graph[id(graph)] = final
            out[(str(index),)] = final
        self.classes[model] = out
        for phantom in self._phantom_graphs:  # joined over, built by no call
            self.by_graph.pop(id(phantom), None)
        self._phantom_graphs.clear()
        self._keep_phantom_blocks([line for cls in out.values() for line in cls.lines or ()])

    def _roll(self, model: str, roll: RollBlock) -> None:
        """The classes of one block as one class with the source's loops (issue 24 item 3),
        when ``roll`` can write it; the classes left are then one."""
        classes = list(self.classes.get(model, {}).values())
        if not classes:
            return
        joined = any(len(c.members) != len(c.graphs) for c in classes)
        if len(classes) > 1 and joined:  # some joined over branches
            self.fallbacks.append((model, self._refusals.get(model, "")))
            return
        # one class for calls that agree on the counts still takes them: it runs the
        # source's loops (or, unrolled, refuses another count: ``_guards``); one joined
        # over branches refuses another (``_join``)
        counted = loop_params(self.models[model]) & set(classes[0].params)
        if len(classes) < 2 and (not counted or joined or classes[0].lines is not None):
            return
        if len(classes) < 2 and branches_on_iterations(self.models[model]):
            # one count cannot tell how the branch numbers its modules: written out
            self.refused.append((model, "an 'if' on a loop's iteration, at one count"))
            return
        instances = [(g, m) for c in classes for g, m in zip(c.graphs, c.members, strict=True)]
        self._rolling = model
        wanted: InputWidthWanted | None = None
        try:
            found = roll(
                self.models[model],
                instances,
                classes[0].name,
                self.class_of,
                self.dims_of,
                self.functions_of,
                BlockClasses(self.blocks_taken, self.block_class_named, self.block_default),
                lambda key: self._phantoms(self.models[model], [g for g, _ in instances], key),
                self._takes_width,
            )
        except InputWidthWanted as why:
            found, wanted = None, why
        for phantom in self._phantom_graphs:  # read by the roller only
            del self.by_graph[id(phantom)]
        self._phantom_graphs.clear()
        self._keep_phantom_blocks(found[0] if found is not None else [])
        if wanted is not None:  # the inner class takes the width; this block's again
            self._take_width(wanted.block, wanted.axis, roll)
            self._written_again(model, roll)
            return
        if found is None:
            return
        lines, dims, classes_taken = found  # dims: the sample axes whose sizes it takes
        first = classes[0]
        # a model-valued parameter the rolled class calls or passes on takes the block's
        # class (``block=Basic``; ``classes_taken``, each with its default's class or
        # None); one it does not is written from the source, the call passing none
        blocks = {p for g in first.graphs for p in g.block_models} - set(classes_taken)
        params = tuple(
            p.name
            for p in self.models[model].params
            if (p.name in first.params and p.name not in blocks) or p.name in classes_taken
        )
        ops = {p: d for p, d in first.ops.items() if p not in blocks} | dict(classes_taken)
        functions = operation_kinds([g for g, _ in instances])[1]
        built = module_params([g for g, _ in instances])  # norm given layer_norm: a class
        for param in functions:
            ops.pop(param, None)
        for param in built:
            functions.pop(param, None)
            ops[param] = built[param]
        if any(p not in params for p in [*functions, *built]):  # a class that folded it
            taken = {*params, *functions, *built}
            params = tuple(p.name for p in self.models[model].params if p.name in taken)
        rolled = _Class(first.name, first.plan, dims, params, first.defaults, ops)
        rolled.functions = functions
        rolled.lines = lines
        rolled.members = [m for _, m in instances]
        rolled.graphs = [g for g, _ in instances]
        rolled.function_items = self.function_items
        for cls in classes[1:]:
            self.globals.used.discard(cls.name)
        for graph in rolled.graphs:
            self.by_graph[id(graph)] = rolled
        self.classes[model] = {("0",): rolled}

    def _phantoms(
        self, model: ast.Model, graphs: Sequence[Graph], key: str
    ) -> list[tuple[Graph, list[str]]]:
        """Instances of ``model`` at arguments no call gives that run the body ``key``
        marks, which no call runs (``untaken.phantom_arguments``), each with its class as
        written for it alone: the roller reads them beside the calls' to write that body.
        The operations and blocks given are the first call's; the phantom's inner calls
        are read as classes the program has or writes (``_with_known_blocks``). The first
        few that lower, in the order tried; the program builds none of them."""
        if self.lower_at is None:
            return []
        given = [{**g.block_defaults, **g.block_args} for g in graphs]
        # an operation or block given (act=tanh, block=Basic) as the first call gives it
        first = graphs[0]
        given_ops = {p: OpValue(op.op, False) for p, op in first.block_ops.items()}
        given_ops.update({p: OpValue(op.op, True) for p, op in first.block_models.items()})
        if len(given[0]) + len(given_ops) != len(model.params):
            return []
        found: list[tuple[Graph, list[str]]] = []
        for changed in phantom_arguments(model, key, given, self.constants):
            values = {**changed, **given_ops}
            lowered = self.lower_at(graphs[0], values)
            phantom = self._with_known_blocks(lowered) if lowered is not None else None
            if phantom is None:
                continue
            _, lines, _, _, _ = self._plan(phantom)
            # the roller asks the class's sizes of each instance: the calls' class's
            self.by_graph[id(phantom)] = self.by_graph[id(graphs[0])]
            self._phantom_graphs.append(phantom)  # alive while its id is a key
            found.append((phantom, lines))
            if len(found) == _MOST_PHANTOMS:
                break
        return found

    def _with_known_blocks(self, phantom: Graph) -> Graph | None:
        """``phantom`` with each inner block it calls replaced by the program's instance
        equal to it (the same block, arguments and input), whose class is known; a call
        no call of the program makes (other arguments, another input width: fuzz seed
        91000159) is read as an instance of the block's one class where it takes the
        sizes that differ (``_one_class_taking``). None where neither holds (a block no
        call makes, a block without parameters, one kept a class per call)."""
        nodes: list[Node] = []
        for node in phantom.nodes:
            sub = node.subgraph
            if sub is None:
                nodes.append(node)
                continue
            known = next((g for g in self.instances.get(sub.name, ()) if g == sub), None)
            if known is not None and id(known) in self.by_graph:
                nodes.append(replace(node, subgraph=known))
            elif (one := self._one_class_taking(sub)) is not None:
                self.by_graph[id(sub)] = one
                self._phantom_graphs.append(sub)  # alive while its id is a key
                nodes.append(node)
            elif self._class_for_phantom(sub):
                nodes.append(node)
            else:
                return None
        return replace(phantom, nodes=tuple(nodes))

    def _class_for_phantom(self, sub: Graph) -> bool:
        """The class of a block that no call of the program makes, written from the
        phantom's call of it (fuzz seeds 91000106, 91000203: a loop no call runs calls
        ``Unit0``), as a class for one call is (its deciding parameters guarded,
        ``_guards``); True where written. Only for a block calling no parameterised block
        itself. The program keeps the class where the rolled class calls it
        (``_keep_phantom_blocks``)."""
        model = self.models.get(sub.name)
        if (
            sub.block_params is None
            or model is None
            or self.classes.get(sub.name)
            or any(n.subgraph is not None and n.subgraph.block_params for n in sub.nodes)
        ):
            return False
        self.functions[sub.name] = self._function_params([sub])
        self.factories[sub.name] = factory_params([sub])
        # every input size it reads taken as a constructor argument, none folded: the
        # rolled class calls it at the sizes its own arguments give
        rank = len(plain(sub.input_value.sample_shape) or ())
        self.unfolded[sub.name] = frozenset(range(1, rank))
        self._assign(sub)
        (written,) = self.classes[sub.name].values()
        written.guards = self._guards(written, model)
        written.phantom = True
        self._phantom_blocks.append(sub.name)
        return True

    def _keep_phantom_blocks(self, lines: Sequence[str]) -> None:
        """Keep the classes ``_class_for_phantom`` wrote that the rolled class's
        ``lines`` call (the body it was written for is in the class); drop the others,
        names and all, so the program is as before."""
        text = "\n".join(lines)
        for block in self._phantom_blocks:
            (written,) = self.classes[block].values()
            if re.search(rf"\b{re.escape(written.name)}\(", text):
                continue
            for graph in written.graphs:
                self.by_graph.pop(id(graph), None)
            self.globals.used.discard(written.name)
            del self.classes[block]
            self.unfolded.pop(block, None)
            self.functions.pop(block, None)
            self.factories.pop(block, None)
        self._phantom_blocks.clear()

    def _one_class_taking(self, sub: Graph) -> _Class | None:
        """The one class of the block ``sub`` is an instance of, where it can build
        ``sub``: a block's one class takes any arguments (computing what the source says,
        or refusing them: issue 24 item 3), and each input size it does not take as a
        constructor argument (an axis outside ``dims``, a later input's) is one its calls
        give alike, which ``sub`` must give too. None otherwise (several classes, a size
        the class fixes that ``sub`` gives otherwise)."""
        classes = list(self.classes.get(sub.name, {}).values())
        if sub.block_params is None or len(classes) != 1 or not classes[0].graphs:
            return None
        one = classes[0]
        shape = plain(sub.input_value.sample_shape)
        for graph in one.graphs:
            theirs = plain(graph.input_value.sample_shape)
            if shape is None or theirs is None or len(theirs) != len(shape):
                return None
            taken = {axis % len(shape) for axis in one.dims} if shape else set()
            pairs = enumerate(zip(shape, theirs, strict=True))
            if any(a != b for axis, (a, b) in pairs if axis not in taken):
                return None
            later = [plain(v.sample_shape) for v in graph.inputs[1:]]
            if later != [plain(v.sample_shape) for v in sub.inputs[1:]]:
                return None
            # a parameter the class does not take (a block folded in) is its calls' value
            model = self.models.get(sub.name)
            kept = [p.name for p in model.params] if model is not None else []
            for param in kept:
                if param in one.params or param in one.ops:
                    continue
                if _call_gives(graph, param) != _call_gives(sub, param):
                    return None
        return one

    def _mixed(self, model: str) -> frozenset[str]:
        """The parameters of the block ``model`` its calls give booleans and numbers
        (``kinds.kinds_mixed``): a test or guard of one tells ``True`` from 1."""
        given = [
            {**graph.block_defaults, **graph.block_args}
            for cls in self.classes.get(model, {}).values()
            for graph in cls.graphs
        ]
        params = self.models[model].params if model in self.models else ()
        return frozenset(
            p.name for p in params if kinds_mixed([plain(g.get(p.name)) for g in given])
        )

    def _guards(self, cls: _Class, model: ast.Model) -> list[str]:
        """The lines at the top of ``__init__`` of ``cls``, written out for its calls,
        that refuse a value of a parameter it takes that its calls' loops counted by or
        ``if`` tests read other than the calls' (issue 24 item 3: a class may take an
        argument only if it builds what the source says for any value); none for a class
        joined over branches or rolled (``lines``), which computes them."""
        if cls.lines is not None:
            return []
        deciding = loop_params(model) | branch_params(model)
        # and one the source reads that the class never does: folded into a number
        # (``nn.LayerNorm((2, 3, 8))`` for ``axes=p0``)
        body = "\n".join(cls.members[0][1:]) if cls.members else ""
        body = body.split("super().__init__()", 1)[-1]
        deciding |= {p for p in read_params(model) if not _reads(body, p)}
        # and one a call reads whose module the class builds without it, though it reads
        # it elsewhere (``nn.LayerNorm(4)`` for ``layer_norm(axes=k)`` beside ``dense(k)``)
        deciding |= _folded_at_calls(cls.graphs[0], body.split(f"{INDENT}def forward(")[0], model)
        # and one a number the constructor writes as its value reads (``nn.Linear(8, w)``,
        # the 8 the width after ``conv_transpose2d(16, kernel=k)``: right at this ``k`` only)
        deciding |= cls.dropped
        # a norm's shape cut by a count the language rejects (``[-0:]``): refused
        flags = {p.name for p in model.params} - number_names(model)
        out: list[str] = cut_axes_refusals(cls.name, body.split(f"{INDENT}def forward(")[0], flags)
        # and a boolean for an index or count it takes (``k=True`` would index item 1)
        given = [{**graph.block_defaults, **graph.block_args} for graph in cls.graphs]
        taken = [{p: v for p, v in args.items() if p in cls.params} for args in given]
        out += boolean_refusals(model, cls.name, taken)
        guarded: dict[str, list[Any]] = {}  # each parameter refused, with its calls' values
        for param in cls.params:
            if param not in deciding or param in cls.ops or param in cls.functions:
                continue
            values: list[Any] = []
            for graph in cls.graphs:
                value = plain({**graph.block_defaults, **graph.block_args}.get(param))
                if not any(same_value(value, v) for v in values):  # True is not 1
                    values.append(value)
            texts = [self._value_text(v, cls.function_items) for v in values]
            if any("functools.partial(" in text for text in texts):
                continue  # a partial equals no other, not even the call's own: unchecked
            guarded[param] = values
        # compared with their kinds: True is not 1 (``kinds.kind_guarded``), given booleans
        # and numbers, or 0 or 1 alone to an ``if`` test (counts and sizes are left as
        # written: the language refuses a boolean for them)
        if_tested = branch_params(model)
        mixed = self._mixed(model.name) | {
            p for p, values in guarded.items() if kind_guarded(values, p in if_tested)
        }
        joint = self._joint_guard(cls, guarded, mixed)
        if joint is not None:  # the calls' values of one are not free of the others'
            return [*out, *joint]
        for param, values in guarded.items():
            texts = [self._value_text(v, cls.function_items) for v in values]
            if param in mixed:  # True is not 1: p != 1 or p is True
                test = refusing_text(param, values, texts)
                if len(texts) == 1:
                    wanted = f"{param} == {texts[0]}"
                else:
                    wanted = f"{param} in ({', '.join(texts)})"
            elif len(texts) == 1:
                wanted = f"{param} == {texts[0]}"
                test = f"{param} != {texts[0]}"
                if (counted := _count_guard(param, values[0])) is not None:
                    _, tested, shown = counted  # rows compare as tuples, as a join's do
                    wanted, test = f"{param} == {shown}", f"{tested} != {shown}"
                elif is_flag(values[0]):  # if act: rather than if act != True:
                    test = param if not values[0] else f"not {param}"
                elif values[0] is None:
                    wanted, test = f"{param} is None", f"{param} is not None"
            else:
                wanted = f"{param} in ({', '.join(texts)})"
                test = f"{param} not in ({', '.join(texts)})"
            written = (
                "written out for this value" if len(texts) == 1 else "written out for these values"
            )
            out += refusal(cls.name, test, f"for {wanted}", written, param)
        return out

    def _joint_guard(
        self, cls: _Class, guarded: Mapping[str, list[Any]], mixed: Container[str] = ()
    ) -> list[str] | None:
        """One guard refusing any combination of the ``guarded`` parameters' values that
        no call gives, where refusing each apart would let a mix through (``Fam(4, true)``
        and ``Fam(9, false)`` written for ``if w >= 8 and flag:``: ``w`` 4 or 9 and ``flag``
        either, yet ``(9, true)`` takes the branch no call does); None where each apart is
        exact (one value each, or every mix given)."""
        combos: list[tuple[Any, ...]] = []
        for graph in cls.graphs:
            given = {**graph.block_defaults, **graph.block_args}
            combo = tuple(plain(given.get(param)) for param in guarded)
            if not any(same_value(combo, c) for c in combos):
                combos.append(combo)
        every_mix = 1
        for values in guarded.values():
            every_mix *= len(values)
        if len(guarded) < 2 or len(combos) == every_mix:
            return None
        tested: list[str] = []  # each parameter as compared: rows as tuples
        shown: list[list[str]] = [[] for _ in combos]  # each combination's values as text
        said_rows: list[list[str]] = [[] for _ in combos]  # as the message says them
        for index, param in enumerate(guarded):
            rows = [_count_guard(param, combo[index]) for combo in combos]
            as_rows = all(r is not None and r[1] != param for r in rows)
            typed = not as_rows and param in mixed  # (p, type(p)): True is not 1
            tested.append(
                rows[0][1]
                if as_rows and rows[0] is not None
                else kind_subject(param)
                if typed
                else param
            )
            for row, said_row, combo, counted in zip(shown, said_rows, combos, rows, strict=True):
                if as_rows and counted is not None:
                    row.append(counted[2])
                    said_row.append(counted[2])
                else:
                    text = self._value_text(combo[index], cls.function_items)
                    row.append(kind_text(combo[index], text) if typed else text)
                    said_row.append(text)
        shown_rows = [f"({', '.join(row)})" for row in shown]
        names = f"({', '.join(guarded)})"
        test = f"({', '.join(tested)}) not in ({', '.join(shown_rows)})"
        said_text = ", ".join(f"({', '.join(row)})" for row in said_rows)
        said = f"for {names} in ({said_text})"
        return refusal(cls.name, test, said, "written out for these values", names)

    def guarded(self, plan: ClassPlan, lines: list[str]) -> list[str]:
        """``lines`` of the class of ``plan`` with its ``_guards`` after ``super().__init__()``."""
        cls = next((c for c in self._all() if c.plan is plan), None)
        if cls is None or not cls.guards:
            return lines
        return first_in_init(lines, cls.guards)

    def _values(self, graph: Graph, params: Iterable[str]) -> tuple[tuple[str, Any], ...] | None:
        """The values the call of the instance ``graph`` gives ``params`` (its arguments,
        else the defaults), each by its parameter; None where its call is not known, gives
        one from its caller's parameters (``Fam(m, true)``: folded, the caller's class
        would not pass it on), or one no guard can check (a list of operations: an
        operation-valued parameter is never folded)."""
        given = self.given.get(id(graph))
        if given is None:
            return None
        values = tuple((p, given.get(p, graph.block_defaults.get(p))) for p in sorted(params))
        if any(_count_guard(p, v) is None for p, v in values):
            return None
        return values

    def _joined(self, conditions: Conditions, classes: list[_Class]) -> _Class | None:
        graphs = [g for c in classes for g in c.graphs]
        model = graphs[0].name
        unused = _unused_operations(classes)
        if unused is None:
            self._refusals[model] = "they differ in an operation-valued argument too"
            return None
        params = self._params(graphs[0], {**classes[0].ops, **classes[0].functions, **unused})
        scopes = _Scopes(graphs[0], params, self._taken(classes))
        folded = self.loops_folded.get(model, frozenset())
        read_folded: list[str] = []  # a folded loop count a test reads: not written

        def naming(name: Naming) -> Naming:
            def named(leaf: Leaf) -> str:
                if isinstance(leaf, Ref) and leaf.name in folded:
                    read_folded.append(leaf.name)
                return name(leaf)

            return named

        tests: dict[tuple[int, int], Test] = {}
        for i, stmt in enumerate(conditions.ifs):
            for j in range(len(stmt.branches)):
                found = conditions.test(i, j, naming(scopes.init), naming(scopes.kept))
                if found is not None:
                    tests[(i, j)] = found
        if read_folded:
            self._refusals[model] = f"an if test reads the loop count '{read_folded[0]}'"
            return None
        varying = self.unfolded.get(model, frozenset())
        if (scopes.used_inputs & varying) - self._taken(classes):
            self._refusals[model] = "an if test reads an input size their classes take otherwise"
            return None
        for graph in graphs:
            if not _decided(conditions, graph, tests, scopes.inputs):
                self._refusals[model] = "an if test the class cannot write decides their branches"
                return None
        decided = [conditions.decisions(graph) for graph in graphs]
        untaken = untaken_ways(conditions, decided, lambda i, j: tests.get((i, j)))
        if untaken is None:
            self._refusals[model] = "an if branch no call takes has a test the class cannot write"
            return None
        dims = tuple(sorted({d for c in classes for d in c.dims} | scopes.used_inputs))
        more = _in_order({leaf for c in classes for leaf in c.more} | scopes.used_more)
        # a branch no call takes is written where a phantom call takes it (the calls'
        # arguments with a deciding one changed), else refused; joined without them
        # where their classes do not line up with the calls'
        phantoms = self._untaken_phantoms(conditions, graphs, decided, tests, scopes.inputs)
        attempt = None
        if phantoms:
            attempt = self._join_with(
                conditions, classes, tests, dims, more, frozenset(scopes.read), unused, phantoms
            )
        if attempt is None:
            phantoms = []
            attempt = self._join_with(
                conditions, classes, tests, dims, more, frozenset(scopes.read), unused
            )
        if attempt is None:
            self._refusals[model] = "their classes do not line up outside the if statements"
            return None
        if phantoms:
            decided = [*decided, *(conditions.decisions(graph) for graph in phantoms)]
            untaken = untaken_ways(conditions, decided, lambda i, j: tests.get((i, j))) or []
        joined, used = attempt
        # store only what forward's tests read (self.stride, not a size only __init__ tests)
        needed = _Scopes(graphs[0], params, self._taken(classes))
        for i, j in sorted(used):
            conditions.test(i, j, needed.init, needed.kept)
        if needed.read != scopes.read:
            again = self._join_with(
                conditions, classes, tests, dims, more, frozenset(needed.read), unused, phantoms
            )
            joined = again[0] if again is not None else joined
        # branches taken together that no call took need refusing only where the join
        # nests one if's test inside another's branch (``branches.nests_tests``)
        together = joined.lines is None or nests_tests(joined.lines)
        together = together or not _tests_each(joined.lines or [], conditions, decided, tests)
        joined.untaken = [way for way in untaken if together or not way.together]
        return joined

    def _untaken_phantoms(
        self,
        conditions: Conditions,
        graphs: Sequence[Graph],
        decided: Sequence[tuple[int, ...]],
        tests: Mapping[tuple[int, int], Test],
        inputs: Sequence[str],
    ) -> list[Graph]:
        """Phantom calls (``_phantoms``) that take a branch of an ``if`` no call takes,
        each deciding every ``if`` as the tests the class writes say (``_decided``) and
        in a way no call or earlier phantom does; none where every branch is taken."""
        model = self.models[graphs[0].name]
        parents = if_parents(conditions)
        seen = set(decided)
        found: list[Graph] = []
        for at, stmt in enumerate(conditions.ifs):
            ways = set(range(len(stmt.branches)))
            ways |= {-1} if stmt.branches[-1].test is not None else set()
            if ways <= {d[at] for d in seen if runs_if(parents, d, at)}:
                continue
            # the phantom arguments change a parameter the if's tests read, whichever
            # branch no call takes: the key names the if (``untaken.body_position``)
            key = f"if {stmt.span.line}:{stmt.span.column}"
            # each call's arguments changed, not only the first's (``if p: ... elif q:``
            # at ``(true, 5)`` and ``(false, 2)``: ``(false, 0)`` takes the else)
            for base in graphs[:_MOST_PHANTOM_BASES]:
                others = [g for g in graphs if g is not base]
                for phantom, _ in self._phantoms(model, [base, *others], key):
                    decisions = conditions.decisions(phantom)
                    if decisions in seen or not _decided(
                        conditions, phantom, tests, inputs, reached_only=True
                    ):
                        continue
                    seen.add(decisions)
                    found.append(phantom)
        return found

    def _join_with(
        self,
        conditions: Conditions,
        classes: list[_Class],
        tests: Mapping[tuple[int, int], Test],
        dims: tuple[int, ...],
        more: tuple[InputSize, ...],
        reads: frozenset[str],
        unused: Mapping[str, str | None],
        phantoms: Sequence[Graph] = (),
    ) -> tuple[_Class, set[tuple[int, int]]] | None:
        """The joined class when forward stores ``reads``, and the tests forward uses; every
        instance takes the ``unused`` operation-valued parameters some others apply. The
        ``phantoms`` (``_untaken_phantoms``) are joined too, so the branches they take
        are written, but the class writes none of them: their statements show no shapes
        (no call's) where a call's differ."""
        graphs = [g for c in classes for g in c.graphs]
        ops = {**classes[0].ops, **unused}
        params = self._params(graphs[0], {**ops, **classes[0].functions})
        scopes = _Scopes(graphs[0], params, self._taken(classes))
        parts: list[Parts] = []
        members: list[Member] = []
        for graph in [*graphs, *phantoms]:
            plan, lines, _, _, _ = self._plan(graph, dims, reads, more, unused)
            cut_lines = cut(lines)
            if cut_lines is None:
                return None
            parts.append(cut_lines)
        parts = [_inputs_apart(p) for p in parts]
        calls = len(graphs)
        for index, cut_lines in enumerate(parts[calls:], calls):
            parts[index] = _shown_as_calls(cut_lines, parts[:calls])
        for graph, cut_lines in zip([*graphs, *phantoms], parts, strict=True):
            members.append((conditions.decisions(graph), cut_lines.init))
        first = parts[0]
        between = middle(parts)  # an _init_weights some instances have
        if between is None or any(p.head[1:] != first.head[1:] for p in parts):
            return None
        taken = {
            *params,
            *(scopes.inputs[d] for d in dims),
            *(scopes.more[leaf] for leaf in more),
        }
        list_name = "layers"  # the list a container is built in (branches._built)
        while list_name in taken:
            list_name += "_"
        init = join(
            members, lambda i, j: tests[(i, j)].init if (i, j) in tests else None, list_name
        )
        forward_members = [(m[0], p.forward) for m, p in zip(members, parts, strict=True)]
        used: set[tuple[int, int]] = set()

        def forward_test(i: int, j: int) -> str | None:
            used.add((i, j))
            return tests[(i, j)].forward if (i, j) in tests else None

        forward = join(forward_members, forward_test)
        if init is None or forward is None:
            return None
        name = classes[0].name
        plan, _, _, _, _ = self._plan(graphs[0], dims, reads, more, unused)
        lines = [
            f"class {name}(nn.Module):",
            *first.head[1:],
            *(line for s in init for line in s),
            *between,
            *(line for s in forward for line in s),
        ]
        joined = _Class(
            name,
            replace(plan, name=name),
            dims,
            params,
            classes[0].defaults,
            {p: ops[p] for p in params if p in ops},
            more,
        )
        joined.functions = dict(classes[0].functions)
        joined.lines = lines
        joined.graphs = graphs
        return joined, used

    def text(self, plan: ClassPlan) -> list[str] | None:
        """The lines of a class joined over branches (None: emit ``plan``)."""
        cls = next((c for c in self._all() if c.plan is plan), None)
        return cls.lines if cls is not None else None

    def edit_lines(self, name: str, edit: Callable[[list[str]], list[str]]) -> None:
        """The written lines of the class ``name`` (a rolled one) passed through ``edit``."""
        for cls in self._all():
            if cls.name == name and cls.lines is not None:
                cls.lines = edit(cls.lines)

    def _emit(self, plan: ClassPlan) -> list[str]:
        return emit_class(plan, self._sub_class, frozenset(self.globals.used), self.call_args)

    def plans(self, model: str) -> list[ClassPlan]:
        out = []
        for cls in self.classes.get(model, {}).values():
            out.append(cls.plan)
        return out

    def merge_comments(self, plan: ClassPlan, lines: list[str]) -> list[str]:
        """Keep a shape comment only where every call of the class has the same one."""
        cls = next((c for c in self._all() if c.plan is plan), None)
        if cls is not None and cls.phantom:
            return [_strip(line) for line in lines if not line.lstrip().startswith("# ")]
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

    def call_args(self, node: Node, in_shapes: tuple[tuple[int, ...], ...]) -> tuple[str, ...]:
        """The constructor arguments of a call: input sizes (the first input's, then the
        later inputs'), then the block's arguments."""
        sub = node.subgraph
        cls = self.by_graph.get(id(sub)) if sub is not None else None
        if cls is None:
            return ()
        args = [lit(in_shapes[0][d]) for d in cls.dims]
        args += [lit(in_shapes[leaf.input][leaf.axis]) for leaf in cls.more]
        given = node.args.get("arguments", {})
        for param in cls.params:
            if param in cls.functions:  # act=torch.exp: the function this call's nodes apply
                named = given.get(param)  # or the caller's own parameter: act=act
                made = function_value(sub, param) if sub is not None else None
                text = lit(named) if isinstance(named, ShownStr) else made
                assert text is not None  # the class takes it only when every call gives one
                if cls.functions[param] is None:
                    args.append(text)
                elif text != cls.functions[param]:
                    args.append(f"{param}={text}")
                continue
            if param in cls.ops:  # act=nn.ReLU, or the caller's own parameter: act=act
                made = _module_of(sub, param, self._block_class) if sub is not None else None
                if made is None and sub is not None:  # a branch's class that applies it not
                    made = _unused_module(sub, param) or _factory_of(sub, param)
                if made is None and sub is not None and param in sub.block_ops:
                    built = module_item_class(sub.block_ops[param].op)  # nn.LayerNorm
                    made = built[0] if built is not None else None
                assert made is not None  # the class takes it only when every call gives one
                named = given.get(param)
                text = lit(named) if isinstance(named, ShownStr) else made
                if cls.ops[param] is None:
                    args.append(text)
                elif text != made or made != cls.ops[param]:
                    args.append(f"{param}={text}")
                continue
            value = given.get(param)
            text = self._value_text(value, cls.function_items)
            if param not in cls.defaults:
                args.append(text)
                continue
            default = plain(cls.defaults[param])
            symbolic = type(value) not in (int, float, bool, str, type(None), tuple)
            if symbolic or plain(value) != default or type(plain(value)) is not type(default):
                args.append(f"{param}={text}")
        return tuple(args)

    def _value_text(self, value: Any, functions: bool = False) -> str:
        """``value_text`` with the blocks' one classes of this program."""

        def block_class(name: str) -> str | None:
            classes = list(self.classes.get(name, {}).values())
            return classes[0].name if len(classes) == 1 else None

        return value_text(value, functions, block_class)


def value_text(
    value: Any,
    functions: bool,
    block_class: Callable[[str], str | None],
    unwritten: Callable[[OpValue], str] = lambda value: lit(value.name),
) -> str:
    """``lit``, with an operation or block inside a list or table argument (``[(8, relu),
    (4, gelu)]``) written as the class a call passes for it (``nn.ReLU``, ``Basic``:
    ``block_class``; ``functools.partial(nn.Softmax, dim=-1)`` where its module takes
    keywords), else as ``unwritten`` writes it (by its name as a string). A class of one
    call folds those values; a rolled class builds the operations' modules where it
    applies them (``x = a()(x)``, ``rolled_forward._ForwardWriter._given``). ``functions``:
    such operations as their functions (``F.relu``, ``torch.exp``;
    ``named.function_items``), which the rolled class applies (``x = a(x)``). A signature
    writes a default so too, which a call keeping it then leaves out."""
    if isinstance(value, OpValue):
        made = None
        if value.is_model:
            made = block_class(value.name)
        elif functions:  # exp: torch.exp, which a rolled class applies as it is
            # (layer_norm, identity: the module class it tests items by, and builds)
            item_class = module_item_class(value.name)
            made = item_class[0] if item_class is not None else function_of(value.name)
        else:  # softmax: functools.partial(nn.Softmax, dim=-1), a rolled class builds it
            # (layer_norm: nn.LayerNorm, which it builds from the width, ``a(channels)``)
            made = module_factory(value.name) or sized_module_class(value.name)
        return made or unwritten(value)
    if isinstance(value, tuple | list) and not isinstance(value, ShownStr):
        items = ", ".join(value_text(v, functions, block_class, unwritten) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    return lit(value)


# (block model, (instance graph, its class lines) each, class name, class_of, dims_of,
# functions_of, the block classes, phantoms: a body's marker -> instances at other
# arguments that may run it) -> the class's lines, the sample axis whose size its
# constructor takes first (None: none) and the model-valued parameters it takes as block
# classes, each with its default's class (None: none)
RollBlock = Callable[
    [
        ast.Model,
        list[tuple[Graph, list[str]]],
        str,
        Callable[[Graph], str],
        Callable[[Graph], "tuple[int, ...] | None"],
        Callable[[Graph], Mapping[str, "str | None"]],
        BlockClasses,
        Callable[[str], "list[tuple[Graph, list[str]]]"],
        Callable[[str, int], bool],
    ],
    "tuple[list[str], tuple[int, ...], Mapping[str, str | None]] | None",
]


class InputWidthWanted(Exception):
    """Raised through ``RollBlock`` where the rolled class calls the one class of
    ``block`` at a running width on the sample axis ``axis``, which that class writes as
    its calls' number, and ``ParamClasses._takes_width`` said it can take it: the class
    is written taking it and the caller's classes again, then rolled."""

    def __init__(self, block: str, axis: int) -> None:
        super().__init__(f"the class of '{block}' takes its input size on axis {axis}")
        self.block = block
        self.axis = axis


_MOST_PHANTOMS = 3  # phantoms lowered for one body no call runs, tried one by one
_MOST_PHANTOM_BASES = 4  # the calls whose arguments a joiner's phantoms change

# (a block's instance graph, other arguments) -> the block lowered at them, or None
LowerAt = Callable[[Graph, Mapping[str, Any]], "Graph | None"]

# emitted once in a file whose classes call it: a size such as torchvision's
# ``_make_divisible(ratio * cin, 8)`` of a block's parameters stays an expression
MAKE_DIVISIBLE = "make_divisible"


def _reads(text: str, name: str) -> bool:
    """Whether the generated ``text`` reads the local ``name``: not as an attribute
    (``self.layers.norm``) or a keyword or child name (``eps=0.001``, ``norm=nn.LayerNorm``)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}\b(?!\s*=(?!=))", text) is not None


def _folded_at_calls(graph: Graph, init: str, model: ast.Model) -> set[str]:
    """The parameters a call of ``model`` reads (``loop_counts.params_by_call``) that the
    statement of ``init`` building its node's module (``self.norm = ...``) does not."""
    found: set[str] = set()
    calls = params_by_call(model)
    for node in graph.nodes:
        read = calls.get(node.span)
        if not read or node.suffix_of is not None:
            continue
        attr = re.escape(node.layer or node.id)
        made = re.search(
            rf"^{INDENT * 2}self\.{attr} = (.*?)(?=^{INDENT * 2}\S|\Z)", init, re.M | re.S
        )
        if made is not None:
            found |= {p for p in read if not _reads(made[1], p)}
    return found


def function_sources(code: str) -> list[str]:
    """The helper functions the classes' expressions call (``make_divisible``)."""
    called = re.search(rf"(?<![\w.]){MAKE_DIVISIBLE}\(", code)
    return [inlined_source("functions", MAKE_DIVISIBLE)] if called else []


def _given(graph: Graph, param: str) -> OperationParam:
    """What the operation- or model-valued ``param`` gave the instance ``graph``."""
    found = graph.block_ops.get(param)
    return found if found is not None else graph.block_models[param]


def applied_default(
    graphs: Sequence[Graph],
    param: str,
    value_of: Callable[[Graph, str], str | None],
    at_defaults: Callable[[str], str | None],
) -> str | None:
    """What the operation-valued ``param``'s default gives a class written for ``graphs``
    (one block's), as ``value_of`` reads an instance's (``function_value``: ``act=F.relu``),
    so the class built at its own default computes what the source's default call does.
    The block applies the default with its own arguments (``act(0.2)``, leaky_relu's
    slope): an instance given the default shows them; without one, the default at its
    operation's defaults (``at_defaults``) only where every node applying the parameter
    gives no argument, or (no call applying it) the source names it with none
    (``OperationParam.bare``). None: no default, or none known (a default applied with
    arguments that no call gives), which the class then takes no default for."""
    found = graphs[0].block_ops[param]
    if found.default is None:
        return None
    applying = [g for g in graphs if param in g.block_ops and not _applies_none(g, param)]
    keeping = {
        value_of(g, param) for g in applying if same_operation(g.block_ops[param].op, found.default)
    }
    if keeping:
        return keeping.pop() if len(keeping) == 1 else None
    if applying and all(_without_arguments(g, param) for g in applying):
        return at_defaults(found.default)
    return at_defaults(found.default) if not applying and found.bare else None


def _without_arguments(graph: Graph, param: str) -> bool:
    """Whether every node applying the operation-valued ``param`` in ``graph``, and in the
    inner blocks it is given to, gives the operation no argument (``act()``, ``.act``)."""
    found = graph.block_ops[param]
    nodes = graph.node_by_id
    if any(nodes[n].arg_spans for n in found.nodes):
        return False
    for node_id, inner in found.passed:
        sub = nodes[node_id].subgraph
        if sub is None or inner not in sub.block_ops or not _without_arguments(sub, inner):
            return False
    return True


def _module_of(
    graph: Graph, param: str, block_class: Callable[[Graph | None], str | None] | None = None
) -> str | None:
    """The module class (``nn.ReLU``) that the operation-valued ``param`` gives every node
    it applies in ``graph`` and every inner block it is given to (whose class takes it as
    a module class), or None when one needs arguments (``leaky_relu(0.2)``). With
    ``block_class`` (a block instance's class), a model-valued ``param`` too: the one class
    of every block call it makes (``Basic``) and of the inner blocks it is given to."""
    found = graph.block_ops.get(param)
    nodes = graph.node_by_id
    if found is not None:
        made = {module_class(nodes[n].op, nodes[n].args) for n in found.nodes}
    elif block_class is not None and param in graph.block_models:
        found = graph.block_models[param]
        made = {block_class(nodes[n].subgraph) for n in found.nodes}
    else:
        return None
    for node_id, inner in found.passed:
        sub = nodes[node_id].subgraph
        takes = sub is not None and (
            inner in _operations(sub) or (block_class is not None and inner in sub.block_models)
        )
        made.add(_module_of(sub, inner, block_class) if sub is not None and takes else None)
    return made.pop() if len(made) == 1 and None not in made else None


def _factory_of(graph: Graph, param: str) -> str | None:
    """The module factory (``module_factory``) the operation-valued ``param`` gives every
    node it applies in ``graph`` where each is a named step (``-> act as a1``: a module the
    class builds as ``act()``) and no inner block is given it; else None."""
    found = graph.block_ops[param]
    nodes = graph.node_by_id
    if found.passed or not found.nodes or any(nodes[n].layer is None for n in found.nodes):
        return None
    made = {
        module_factory(nodes[n].op, nodes[n].args) or layer_factory(graph, nodes[n])
        for n in found.nodes
    }
    return made.pop() if len(made) == 1 and None not in made else None


def _default_factory(graphs: Sequence[Graph], param: str) -> str | None:
    """The factory of the operation-valued ``param``'s default (``nn.LayerNorm`` for
    ``norm = layer_norm``), a layer's as built where the first of ``graphs`` applies the
    parameter: the keyword arguments its step gives stay in the class (``norm(width,
    eps=e)``, ``named.factory_call``); a module factory's are bound in it, as the block
    applies the default (``applied_default``: ``functools.partial(nn.Softmax, dim=1)``)."""
    graph = graphs[0]
    found = graph.block_ops[param]
    if found.default is None:
        return None
    if module_factory(found.default) is None:
        if not found.nodes:
            return None
        return layer_factory(graph, graph.node_by_id[found.nodes[0]], found.default)
    return applied_default(graphs, param, _factory_of, module_factory)


def factory_params(graphs: Sequence[Graph]) -> dict[str, str | None]:
    """The operation-valued parameters one class written for all of ``graphs`` (one
    block's) takes as module factories: applied by named steps only, its calls giving
    different modules, one of which takes arguments (``functools.partial(nn.LogSoftmax,
    dim=-1)`` beside ``nn.GELU``: a named step builds a module, so no function will do);
    each with its default's factory (None: none)."""
    out: dict[str, str | None] = {}
    for param, found in graphs[0].block_ops.items():
        if any(param not in g.block_ops for g in graphs):
            continue
        made = {_factory_of(g, param) for g in graphs}
        if None in made or len(made) == 1 or all(_module_of(g, param) for g in graphs):
            continue  # folded, or module classes: act=nn.ReLU
        default = _default_factory(graphs, param)
        if found.default is None or default is not None:
            out[param] = default
    return out


def _module_instance(graph: Graph, param: str) -> bool:
    """Whether the function ``param`` gives ``graph`` is a module's instance
    (``nn.Identity()``, ``named.function_of``): a class taking functions holds it as the
    module ``self.act``, which the class of one call builds alike (``self.act = act()``)
    rather than fold it."""
    made = function_value(graph, param)
    return made is not None and signature_default(made) != made


def _applies_none(graph: Graph, param: str) -> bool:
    """Whether the operation-valued ``param`` is applied nowhere in ``graph`` (a branch the
    call did not take), nor passed on."""
    found = graph.block_ops[param]
    return not found.nodes and not found.passed


def _unused_module(graph: Graph, param: str) -> str | None:
    """The module class of the operation given for ``param`` to an instance that applies it
    nowhere (a branch it did not take), so a class joined over branches still takes it."""
    found = graph.block_ops.get(param)
    if found is None or found.nodes or found.passed:
        return None
    return module_class(found.op)


def unused_module_params(graphs: Sequence[Graph]) -> dict[str, str | None]:
    """The operation-valued parameters that every one of ``graphs`` (one block's) applying
    it takes as one module class (``_operations``, with one default), where others apply
    it nowhere (a loop or branch their calls do not reach) and give an operation with a
    module class (``_unused_module``): a class for them all takes it as a module class
    too (``a1=nn.ReLU``), whichever calls ran the branch (hunt109 F9: it was ``F.relu``
    beside ``nn.Tanh``). Each with its default's class."""
    out: dict[str, str | None] = {}
    for param in graphs[0].block_ops:
        if any(param not in g.block_ops for g in graphs):
            continue
        unused = [g for g in graphs if _applies_none(g, param)]
        taken = [_operations(g) for g in graphs if not _applies_none(g, param)]
        if not unused or not taken or any(param not in ops for ops in taken):
            continue
        if any(
            _unused_module(g, param) is None or not holds_no_state(g.block_ops[param].op)
            for g in unused
        ):
            continue  # its class of one call builds no module for it: none with weights
        if len({ops[param] for ops in taken}) == 1:
            out[param] = taken[0][param]
    return out


def _unused_operations(classes: Sequence[_Class]) -> dict[str, str | None] | None:
    """The operation-valued parameters (with their defaults' classes) that some of one
    block's ``classes`` take and others not, every instance of those applying none of them
    and given one with a module form: the union class takes them all (issue 24 item 3).
    None when an instance cannot take one, or the classes differ in a block-valued one."""
    taken = {p: d for c in classes for p, d in c.ops.items()}
    unused: dict[str, str | None] = {}
    for cls in classes:
        for param in (p for p in taken if p not in cls.ops):  # in order: deterministic
            if any(_unused_module(g, param) is None for g in cls.graphs):
                return None
            unused[param] = taken[param]
    return unused


def operation_kinds(
    graphs: Sequence[Graph], calls: Sequence[Graph] | None = None
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """For one class written for all of ``graphs`` (a rolled block): the operation-valued
    parameters it takes as module classes (every instance takes one, with one default:
    ``act=nn.ReLU``) or factories (``factory_params``), and the others, which it takes as
    functions (``act=F.relu``, or no default); each with its default. ``calls``: those of
    ``graphs`` that are the calls' (the others phantoms), which alone decide a parameter
    some of them apply nowhere (``unused_module_params``), as their caller does."""
    classes = [_operations(g) for g in graphs]
    # those some calls apply nowhere: as the calls (not phantoms, ``calls``) decide
    unused = unused_module_params(calls if calls is not None else graphs)
    ops: dict[str, str | None] = {**factory_params(graphs), **unused}
    functions: dict[str, str | None] = {}
    for param in graphs[0].block_ops:
        if param in ops:
            continue  # a module factory
        if all(param in c for c in classes) and len({c[param] for c in classes}) == 1:
            ops[param] = classes[0][param]
        else:
            functions[param] = applied_default(graphs, param, function_value, default_function)
    return ops, functions


def fills_by_parameter(body: tuple[ast.ForwardStmt, ...]) -> bool:
    """Whether ``body`` makes a buffer whose ``init`` (keyword-only) an expression gives,
    not a string (``buffer(p0, init=p1)``): its calls' classes write their contents as
    values (``torch.zeros(p0)``), right at their calls' init only, so no class joined
    over branches may serve other values; the roller writes the choice among them
    (``rolled._Walk._filled_by``), in a block without loops too."""
    return any(
        isinstance(node, ast.Call)
        and node.func == "buffer"
        and any(k.name == "init" and not isinstance(k.value, ast.String) for k in node.keywords)
        for node in syntax_items(body)
    )


def module_params(graphs: Sequence[Graph]) -> dict[str, str | None]:
    """The operation-valued parameters that some call gives an operation its class of one
    call builds as a module at each step applying it (``norm`` given ``layer_norm``:
    ``self.layer_norm1 = nn.LayerNorm(4)``, numbered per operation as list items are),
    every other call an argument-free module class (``relu``: ``self.norm = norm()``), as
    torchvision's blocks take ``norm_layer``. The rolled class takes each as a module class
    (``norm=nn.ReLU``), counts the modules of the one kind where it applies it
    (``block_walk._module_item``) and builds ``norm()`` once otherwise. Each with its
    default's class (None: no default). A parameter passed on to an inner block or applied
    by a named step is none of these."""
    found: dict[str, str | None] = {}
    for param, first in graphs[0].block_ops.items():
        builds = False
        for graph in graphs:
            given = graph.block_ops.get(param)
            if given is None or given.passed or not given.nodes:
                break
            if any(graph.node_by_id[n].layer for n in given.nodes):
                break
            if _module_of(graph, param) is not None:  # relu, identity: built as norm()
                continue
            if module_item_class(given.op) is None:
                break
            builds = True
        else:
            default = first.default
            made = None if default is None else module_item_class(default)
            default_class = made[0] if made is not None else None
            if default is not None and default_class is None:
                default_class = module_class(default)
            if builds and (default is None or default_class is not None):
                found[param] = default_class
    return found


def _operations(graph: Graph) -> dict[str, str | None]:
    """The operation-valued parameters this instance's class takes as module classes, each
    with its default's class (None: no default). One whose operation needs arguments, has
    no module form or applies no node stays folded into the class (one class per
    operation given, as before)."""
    out: dict[str, str | None] = {}
    for param, found in graph.block_ops.items():
        if _module_of(graph, param) is None:
            continue
        default = applied_default([graph], param, _module_of, module_class)
        if found.default is not None and default is None:
            continue
        out[param] = default
    return out


def _count_guard(param: str, value: Any) -> tuple[str, str, str] | None:
    """The parameter, the value it is tested by and the value it must have, of the guard a
    class joined over branches writes for a loop count or rows it folds (``n``, given 2 by
    every call: ``n != 2``); rows compare as tuples (``tuple(rows) != (4, 2)``), whichever
    sequence a caller passes. None for a value no guard can write (symbolic, an
    operation, a float)."""
    if _plain_int(value):
        shown, test = str(value), param
    elif isinstance(value, tuple | list) and all(_plain_int(item) for item in value):
        shown, test = lit(tuple(value)), f"tuple({param})"
    elif isinstance(value, tuple | list) and all(
        isinstance(row, tuple | list) and all(_plain_int(item) for item in row) for row in value
    ):
        shown, test = lit(tuple(tuple(row) for row in value)), f"tuple(map(tuple, {param}))"
    else:
        return None
    return param, test, shown


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# why a joined class refuses a value (``_guarded``)
LOOPS = "its loops are written out for this value"
SIZED = "a size is written out for this value"


def _guarded(
    lines: list[str], name: str, guards: list[tuple[str, str, str]], why: str = LOOPS
) -> list[str]:
    """The joined class ``lines`` with its constructor refusing a folded loop count other
    than its calls' (``if n != 2: raise ValueError(...)``): its loops are unrolled, so
    the class takes the count only to say it builds no other (issue 24 item 3); or
    (``why``) another value it folded."""
    checks: list[str] = []
    for param, test, shown in guards:
        checks += refusal(name, f"{test} != {shown}", f"for {param} == {shown}", why, param)
    return first_in_init(lines, checks)


def _tests_each(
    lines: list[str],
    conditions: Conditions,
    decided: Sequence[tuple[int, ...]],
    tests: Mapping[tuple[int, int], Test],
) -> bool:
    """Whether the joined class ``lines`` test every ``if`` its calls decide differently,
    by the if's first test as the constructor or forward writes it (or its negation): one
    not tested there is decided by another's branch (``Fam(false, false)``, ``Fam(true,
    true)``: ``if a:`` alone, ``b`` going with it)."""
    tested = " ".join(line.strip() for line in lines if re.match(r"\s*(?:if|elif) ", line))
    for at in range(len(conditions.ifs)):
        if len({d[at] for d in decided}) < 2:
            continue
        first = tests.get((at, 0))
        if first is None:
            return False
        texts = {first.init, first.forward, negation(first.init), negation(first.forward)}
        if not any(f"if {text}:" in tested for text in texts):
            return False
    return True


def _inputs_apart(parts: Parts) -> Parts:
    """The comments opening forward (``# x: (batch, 6)``, the inputs' shapes) a statement
    of their own, so they stay first when the first layer's goes under an ``if``."""
    if not parts.forward:
        return parts
    first = parts.forward[0]
    comments = 0
    while comments < len(first) - 1 and first[comments].lstrip().startswith("# "):
        comments += 1
    if not comments:
        return parts
    forward = (first[:comments], first[comments:], *parts.forward[1:])
    return replace(parts, forward=forward)


def _shown_as_calls(phantom: Parts, calls: Sequence[Parts]) -> Parts:
    """A phantom's class with the shape comments of each statement no call's class has
    as it is left out: they are the phantom's shapes, which no call has."""
    known = {s for part in calls for s in (*part.init, *part.forward)}

    def shown(statements: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        return tuple(s if s in known else uncommented(s) for s in statements)

    return replace(phantom, init=shown(phantom.init), forward=shown(phantom.forward))


def _refusing_untaken(lines: list[str], name: str, untaken: list[Untaken]) -> list[str]:
    """The joined class ``lines`` with its constructor refusing the arguments that take a
    way through an ``if`` that no call takes: the class is written from the calls' branches
    only, so another would build and compute what a branch taken does (issue 24 item 3)."""
    checks: list[str] = []
    for way in untaken:
        # a way of one if says that no call takes it; ways together, the comment does
        said = way.what if way.what.endswith(" together") else f"{way.what}, which no call takes"
        checks += refusal(name, way.test, f"without {said}", "no call takes it: not written")
    return first_in_init(lines, checks)


def _count_names(expr: Any) -> set[str]:
    """The names a loop's iterable reads for its count (``range(k)``: ``k``; ``zip(widths,
    [act, gelu])``: ``widths``, the items of a list written out leave it fixed)."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, ast.ListExpr | ast.TupleExpr):
        return set()
    if isinstance(expr, tuple):
        return {name for item in expr for name in _count_names(item)}
    if is_record(expr) and not isinstance(expr, Span):
        return {name for f in fields(expr) for name in _count_names(getattr(expr, f.name))}
    return set()


def loop_params(model: ast.Model) -> frozenset[str]:
    """The block's parameters that the iterables of its loops read, directly or through
    a constant (``for i in range(k)``, ``for w in widths``): its loops' counts depend on
    them."""
    constants = {f.name: _count_names(f.value) for f in model.fields}
    found: set[str] = set()
    pending = list(model.forward.body if model.forward is not None else ())
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, ast.For):
            names = _count_names(stmt.iterable)
            found |= names.union(*(constants[n] for n in names & constants.keys()))
            pending += stmt.body
        elif isinstance(stmt, ast.If):
            pending += [inner for branch in stmt.branches for inner in branch.body]
    return frozenset(found & {p.name for p in model.params})


def _varying_models(graphs: Sequence[Graph]) -> dict[str, frozenset[str]]:
    """Per block, its model-valued parameters whose calls give different models."""
    given: dict[str, dict[str, set[str]]] = {}
    for graph in graphs:
        for param, found in graph.block_models.items():
            given.setdefault(graph.name, {}).setdefault(param, set()).add(found.op)
    return {
        name: frozenset(p for p, models in by_param.items() if len(models) > 1)
        for name, by_param in given.items()
    }


def _decided(
    conditions: Conditions,
    graph: Graph,
    tests: Mapping[tuple[int, int], Test],
    inputs: Sequence[str],
    reached_only: bool = False,
) -> bool:
    """Whether the printed tests give, for this instance, the branches it took;
    ``reached_only``: of the ``if`` statements it runs (a phantom's: an ``if`` in a
    branch it does not take is tested by the class under that branch only)."""
    parents = if_parents(conditions)
    decisions = conditions.decisions(graph)
    for index, chosen in enumerate(decisions):
        if reached_only and not runs_if(parents, decisions, index):
            continue
        branches = conditions.ifs[index].branches
        last = chosen if chosen >= 0 else len(branches)
        for j in range(min(last + 1, len(branches))):
            test = tests.get((index, j))
            if test is None:
                if branches[j].test is not None or j != chosen:
                    return False
                continue
            if holds(test.init, graph, inputs) is not (j == chosen):
                return False
    return True


def _in_order(sizes: set[InputSize]) -> tuple[InputSize, ...]:
    return tuple(sorted(sizes, key=lambda leaf: (leaf.input, leaf.axis)))


def _alike_sizes(graphs: Sequence[Graph]) -> dict[str, frozenset[InputSize]]:
    """Per block, the symbolic sizes of its inputs after the first that every instance
    has alike: its class writes them as numbers, not constructor arguments."""
    found: dict[str, dict[InputSize, set[int]]] = {}
    for graph in graphs:
        by_size = found.setdefault(graph.name, {})
        for index, value in enumerate(graph.inputs[1:], start=1):
            for axis, size in enumerate(value.sample_shape or ()):
                if is_symbolic(size):
                    by_size.setdefault(InputSize(axis, index), set()).add(int(size))
    return {
        name: frozenset(leaf for leaf, sizes in by_size.items() if len(sizes) == 1)
        for name, by_size in found.items()
    }


def _varying_spatial(graphs: Sequence[Graph]) -> dict[str, frozenset[int]]:
    """Per block, the spatial axes of its first input (an image's or volume's) that its
    calls give differently: a constructor reading one (``nn.Linear(in_width, w)`` on the
    last axis) takes it as an argument, so the calls share one class; an axis every call
    gives alike is written as its number, as before."""
    found: dict[str, dict[int, set[int]]] = {}
    for graph in graphs:
        shape = plain(graph.input_value.sample_shape or ())
        by_axis = found.setdefault(graph.name, {})
        if len(shape) - 1 not in SPATIAL_NAMES:
            continue
        for axis in range(1, len(shape)):
            by_axis.setdefault(axis, set()).add(int(shape[axis]))
    return {
        name: frozenset(axis for axis, sizes in by_axis.items() if len(sizes) > 1)
        for name, by_axis in found.items()
    }


def _moved_spatial(graphs: Sequence[Graph], lower_at: LowerAt) -> dict[str, frozenset[int]]:
    """Per block, the spatial axes of its input that no two calls give differently but an
    argument of the block calling it changes (hunt109 F6: ``Pick(w)`` calling ``Unit(w)``
    after ``Unit(w)`` on a ``(C, H, W)`` sample, the second's last axis is ``w``, which
    every call gave 4): its class takes that size too (``Unit(in_features, w)``), so the
    caller's class passes ``w`` rather than the class folding 4 that ``Pick(5)`` breaks.
    Found by lowering each calling instance again with its integer arguments changed."""
    found: dict[str, set[int]] = {}
    tried: set[tuple[str, str]] = set()
    for graph in graphs:
        inner = [
            n for n in graph.nodes if n.subgraph is not None and n.subgraph.block_params is not None
        ]
        if graph.block_params is None or not inner:
            continue
        given = {**graph.block_defaults, **graph.block_args}
        numbers = {p: v for p, v in given.items() if isinstance(v, int) and not isinstance(v, bool)}
        key = (graph.name, repr((sorted(given.items()), graph.input_value.sample_shape)))
        if not numbers or key in tried:
            continue
        tried.add(key)
        operations = {p: OpValue(op.op, False) for p, op in graph.block_ops.items()}
        operations.update({p: OpValue(op.op, True) for p, op in graph.block_models.items()})
        changes = [dict(numbers)] + [{p: v} for p, v in numbers.items()]
        for change in changes:
            values = {
                **{p: plain(v) for p, v in given.items()},
                **{p: v + 1 for p, v in change.items()},
                **operations,
            }
            again = lower_at(graph, values)
            if again is None:
                continue
            by_id = again.node_by_id
            for node in inner:
                other = by_id.get(node.id)
                sub = node.subgraph
                if other is None or other.subgraph is None or sub is None:
                    continue
                if other.subgraph.name != sub.name:
                    continue
                shape = plain(sub.input_value.sample_shape or ())
                moved = plain(other.subgraph.input_value.sample_shape or ())
                if len(shape) != len(moved) or len(shape) - 1 not in SPATIAL_NAMES:
                    continue
                axes = {a for a in range(1, len(shape)) if shape[a] != moved[a]}
                found.setdefault(sub.name, set()).update(axes)
            if change == numbers:
                break  # every argument changed at once lowers: enough
    return {name: frozenset(axes) for name, axes in found.items() if axes}


def _shared_spatial(
    graphs: Sequence[Graph],
    unfolded: Mapping[str, frozenset[int]],
    varying: Mapping[str, frozenset[str]],
) -> dict[str, frozenset[int]]:
    """``unfolded`` made alike for the blocks given to one model-valued parameter whose
    calls give different blocks (``Pick(w, block=Unit0)`` with ``Unit0`` and ``Unit1``):
    each takes every spatial axis any of them takes, so where one reads its input's width
    (``nn.Linear(in_features, w)``) the other does too rather than writing it as a number,
    their classes take the same arguments and the caller is one class
    (``block(in_features, w)``)."""
    groups = [
        frozenset(g.block_models[p].op for g in graphs if g.name == name and p in g.block_models)
        for name, params in varying.items()
        for p in params
    ]
    out = dict(unfolded)
    changed = True
    while changed:  # a block given to two parameters joins both groups' axes
        changed = False
        for group in groups:
            axes = frozenset(a for block in group for a in out.get(block, frozenset()))
            for block in group:
                if block in out and out[block] != axes:
                    out[block] = axes
                    changed = True
    return out


def later_input_names(graph: Graph, taken: Sequence[str]) -> dict[InputSize, str]:
    """Constructor names of the symbolic sizes of the inputs after the first, after the
    input's name: ``skip_channels`` (axis 0 of a sample of rank 2 or more) or
    ``skip_features`` (the last axis of a rank-1 or rank-2 sample)."""
    names: dict[InputSize, str] = {}
    used = set(taken)
    for index, value in enumerate(graph.inputs[1:], start=1):
        shape = value.sample_shape or ()
        for axis, size in enumerate(shape):
            if not is_symbolic(size):
                continue
            kind = "channels" if axis == 0 and len(shape) >= 2 else "features"
            name = f"{value.name}_{kind}"
            while name in used:
                name += "_"
            used.add(name)
            names[InputSize(axis, index)] = name
    return names


def rolled_axis(dims: Iterable[tuple[int, ...] | None], rank: int) -> int:
    """The input axis a rolled block's class takes and its loops thread: the last of a
    sample of rank 2 or more where every call's own class that takes an input size takes
    that axis alone (a ``dense`` on the last axis: ``in_features``; a call whose loop runs
    no iteration takes none), else axis 0."""
    found = {d for d in dims if d != ()}
    return rank - 1 if rank >= 2 and found == {(rank - 1,)} else 0


def _call_gives(graph: Graph, param: str) -> tuple[Any, Any, Any]:
    """What the call ``graph`` gives the block parameter ``param``: a value, an
    operation or a block."""
    return (
        plain(graph.block_args.get(param)),
        graph.block_ops.get(param),
        graph.block_models.get(param),
    )


def input_names(
    rank: int, params: tuple[str, ...], unfolded: Container[int] = ()
) -> tuple[str, ...]:
    """Constructor names of the input's symbolic axes: channels (axis 0 of a sample of
    rank 2 or more) or features (the last axis of a rank-1 or rank-2 sample). An image's or
    volume's spatial axes (``unfolded``: those the constructor takes): ``in_height``,
    ``in_width`` (``in_depth`` first) where it takes a height or depth, else the last axis
    alone is ``in_features`` (what a dense on the last axis reads). A sample of five axes
    or more: ``in_channels`` and ``in_features`` (the last), its other axes numbers
    (``blocks.symbolic_input``: no constructor takes them; named for the axis only)."""
    bases = ["in_channels" if rank >= 2 else "in_features", "in_features"]
    if rank >= 5:
        bases = ["in_channels", *(f"in_size{axis}" for axis in range(1, rank - 1)), "in_features"]
    spatial = SPATIAL_NAMES.get(rank - 1)
    if spatial is not None:
        image = any(axis in unfolded for axis in range(1, rank - 1))
        bases = ["in_channels", *(f"in_{n}" for n in spatial)]
        bases[-1] = "in_width" if image else "in_features"
    names: list[str] = []
    for base in bases:
        name = base
        while name in params or name in names:
            name += "_"
        names.append(name)
    return tuple(names)
