"""A parameterised block whose calls differ in loop counts as one class (issue 24 item 3).

``model Stage(width, n)`` with ``for i in range(n): x -> dense(width).relu as layers{i}``
lowers per call with the loop unrolled, so ``Stage(16, 2)`` and ``Stage(16, 3)`` are two
instance graphs of different structure, which ``param_blocks.py`` writes as ``Stage`` and
``Stage_2``. This module writes them as one class instead, with the source's loops as Python
loops in both methods:

- ``__init__`` is the network roller's (``rolled._Walk``, the same checks against each
  instance's IR), starting from the input width ``in_features``/``in_channels``;
- ``forward`` is ``rolled_forward.py``'s: each instance's own forward with the source's
  loops rolled, the same method for every instance. The instances must write the same
  class.

The block's constants (``hidden = 4 * width``) are locals of ``__init__`` (each must give
the compiler's value at every call; one forward reads is stored), an operation-valued
parameter is a module class argument (``act=nn.ReLU``, built once as ``self.act = act()``)
or, where a call gives an operation without an argument-free module class, a function
(``act=F.relu``, stored as ``self.act = act``; calls pass ``torch.exp``),
and a loop may make a second tensor from the threaded one and join it back (``h = x ->
...`` then ``x = add(x, h)``, or ``x = concat(x, h, dim=1)``, the width growing by the
second's: ``channels = channels + growth``), or keep the threaded one under a second name
and join it back (``r = x``, ``x -> ...``, then ``x = add(x, r)`` or ``x = concat(r, x,
dim=1)``: ``block_walk.py``). A later input (``def forward(x, c)``) may be joined to the
threaded tensor without a module (``x = add(x, c)``).

Anything else raises ``rolled.Unsupported`` and the instances keep today's classes.
"""

from __future__ import annotations

import ast as pyast
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from aurane.backends.torch.block_walk import (
    BlockWalk,
    _makes_module,
    branch_counts,
    ifs_outside_loops,
)
from aurane.backends.torch.inner_widths import InnerWidths
from aurane.backends.torch.kinds import without_kind_tests
from aurane.backends.torch.layer_names import repeating_name
from aurane.backends.torch.loop_counts import params_tested
from aurane.backends.torch.modules import INDENT, attribute_namespace, wrap
from aurane.backends.torch.named import (
    function_value,
    module_factory,
    module_item_class,
    operation_items,
    signature_default,
    stored_function,
)
from aurane.backends.torch.names import Namespace
from aurane.backends.torch.param_blocks import (
    BlockClasses,
    _module_of,
    fills_by_parameter,
    input_names,
    loop_params,
    module_params,
    operation_kinds,
    rolled_axis,
    unused_module_params,
    value_text,
)
from aurane.backends.torch.refusals import first_in_init, refusal, refused_first
from aurane.backends.torch.rolled import (
    RESERVED,
    SIZE,
    TOP,
    Counts,
    LoopWidth,
    Model,
    Translator,
    Unsupported,
    Untaken,
    _fill,
    _loop_names,
    check_names,
    enumerated,
    evaluate,
    keyed_stages,
    loop_indices,
    numbered_after_branch_loops,
    row_count,
    stages_in_order,
    starred_loops,
    triangles,
    untracked_sizes,
    without_empty_branches,
)
from aurane.backends.torch.rolled_forward import (
    SelfTranslator,
    rolled_forward,
    shared_forward,
    with_applied,
)
from aurane.backends.torch.stage_apply import children_one_by_one, whole_stages
from aurane.backends.torch.unread_locals import without_unread_locals
from aurane.backends.torch.untaken import (
    deciding_params,
    is_loop,
    kind_blind,
    numbers_after,
    refusal_lines,
    refused_reason,
)
from aurane.backends.torch.whole_numbers import (
    boolean_refusals,
    number_names,
)
from aurane.ir.graph import Graph
from aurane.ops import lookup
from aurane.records import field as record_field
from aurane.records import record, replace
from aurane.semantics.config import MODEL_TABLE
from aurane.semantics.symbolic import plain, table_name
from aurane.semantics.values import OpValue
from aurane.source import Span
from aurane.syntax import ast


@record(frozen=True)
class RolledBlock:
    """A block's rolled class: its lines, the sample axis whose size its constructor takes
    first (None: a sample without axes), what its output width depends on (``LoopWidth``:
    a caller passing its loops' counts values it computes cannot read the width after it
    from one call's instance) and the inner blocks' classes whose width it reads from
    the module built (each then stores it: ``stored_width``)."""

    lines: list[str]
    axis: int | None
    width: LoopWidth
    reads: frozenset[str]  # the inner blocks' classes it reads ``out_channels`` of
    # the model-valued parameters it takes as block classes, each with its default's class
    blocks: Mapping[str, str | None] = record_field(default_factory=dict)
    # the block classes it builds through one (``layer = block(channels, w)``), each with
    # the output width it stores for it (``self.out_channels = width``)
    out_sizes: Mapping[str, str] = record_field(default_factory=dict)
    # the bodies no call runs that it refuses to build, each said as a note's reason
    refused: tuple[str, ...] = ()
    # the input's sizes on other sample axes its constructor takes too (``in_channels``
    # of a class threading the last axis), read by a module where no step changes them
    sizes: tuple[int, ...] = ()

    @property
    def dims(self) -> tuple[int, ...]:
        """The sample axes whose input sizes the constructor takes, in order."""
        return tuple(sorted({*([] if self.axis is None else [self.axis]), *self.sizes}))


@record(frozen=True)
class RollOptions:
    """What ``roll_block`` reads of the program besides the block and its instances (the
    same at each try: at each axis, with each phantom). ``name``: the class's name;
    ``resolved`` gives a call's values of the block's constants as the compiler computed
    them (each constant's text must give them). ``functions_of``: the operation-valued
    parameters an inner block's classes take as functions, which a parameter of this
    block taking a function may be passed on to. ``function_items``: the operations in
    the calls' list arguments are functions (``named.function_items``, decided for the
    whole program, so a list passed on to an inner block agrees). ``loop_widths``: the
    rolled inner classes whose output width is what a loop leaves, each with the
    parameters its loops' counts read (``rolled.LoopWidth``). ``blocks``: the classes of
    the blocks given to model-valued parameters and in rows (without it, the class takes
    none). ``inner_widths``: the probes of what the width after an inner block follows
    where its instance shows a number (``inner_widths.py``)."""

    name: str
    constants: Mapping[str, ast.Expr]
    block_models: Mapping[str, ast.Model]
    class_of: Callable[[Graph], str]
    dims_of: Callable[[Graph], tuple[int, ...] | None]
    resolved: Callable[[ast.Model, Mapping[str, Any]], Mapping[str, ast.Expr]] | None = None
    functions_of: Callable[[Graph], Mapping[str, str | None]] | None = None
    function_items: bool = False
    loop_widths: Mapping[str, LoopWidth] | None = None
    blocks: BlockClasses | None = None
    inner_widths: InnerWidths | None = None
    # how many of the instances are the calls' (the others: phantoms, at arguments no
    # call gives); None: all
    calls: int | None = None


@record(frozen=True)
class LoopWidths:
    """What the walks of a block's ``__init__`` found: whether its output width is what a
    loop leaves (``channels`` after it, at some call), and the inner blocks' classes
    whose width it reads from the module built (``layer.out_channels``)."""

    own: bool
    reads: frozenset[str]
    out_sizes: Mapping[str, str] = record_field(default_factory=dict)


def _first_difference(instances: Sequence[tuple[Graph, list[str]]]) -> str:
    """The first line two instances' classes write differently (``nn.Linear(8, w)`` against
    ``nn.Linear(5, w)``), which says what keeps them apart."""
    first = instances[0][1]
    for _, lines in instances[1:]:
        for mine, theirs in zip(first[1:], lines[1:], strict=False):  # after the class line
            if mine != theirs:
                return f"'{mine.strip()}' against '{theirs.strip()}'"
    return "different classes"


def _unnamed_layers_given(graphs: Sequence[Graph]) -> None:
    """``Unsupported`` where an operation-valued parameter builds a layer with weights in
    an unnamed step and the calls give different operations: the layer is named after
    its operation (``layer_norm1``, ``rms_norm1``), so no one class has every call's
    state-dict keys; ``as`` gives it one name (``-> norm() as norm``: ``norm(width)``)."""
    for param in graphs[0].block_ops:
        names: dict[str, str] = {}  # operation -> the name of its first such layer
        for graph in graphs:
            found = graph.block_ops.get(param)
            nodes = graph.node_by_id
            for node_id in found.nodes if found is not None else ():
                node = nodes[node_id]
                if node.layer is None and node.parameters:
                    names.setdefault(node.op, node_id)
        if len(names) > 1:
            raise Unsupported(
                f"operation-valued parameter '{param}' builds a layer with weights named after"
                f" the operation each call gives ({', '.join(names.values())}); name it with `as`"
                f" (`-> {param}() as {param}`) for one class"
            )


def roll_block(
    model: ast.Model,
    instances: Sequence[tuple[Graph, list[str]]],
    options: RollOptions,
    phantoms: Callable[[str], Sequence[tuple[Graph, list[str]]]] | None = None,
) -> RolledBlock:
    """The lines of one class for every instance of ``model``, and the sample axis whose
    size its constructor takes first (``rolled_axis``; None: a sample without axes);
    ``instances`` holds each call's graph and the lines of the class written for it alone;
    ``options``, what the roller reads of the program (``RollOptions``). ``Unsupported``
    when the roller cannot write it (the caller names the block). Where no call's class
    takes an input size (the calls' inputs are alike) and the channels' walk fails, the
    last axis is tried (``dense`` layers of a sequence that grow its features:
    ``concat(x, h, dim=-1)``). ``phantoms``: for the marker of a loop or ``if`` branch
    that runs at no call (``Untaken``), instances at arguments no call gives that may run
    it (``untaken.py``), tried one by one beside the calls' so the class writes that body
    too, though the program builds none of them; where none can be read, the class is
    written without the body and refuses the arguments that run it (``RolledBlock.refused``
    says so)."""
    name, constants = options.name, options.constants
    Phantom = tuple[Graph, list[str]]
    untried: dict[str, list[Phantom]] = {}  # body marker -> phantoms that may run it
    chosen: dict[str, Phantom] = {}  # body marker -> the phantom read for it, latest last
    refused: dict[str, list[str]] = {}  # body marker -> the lines refusing its arguments
    given = [{**g.block_defaults, **g.block_args} for g, _ in instances]

    def next_phantom(key: str) -> None:
        """The next phantom for ``key``, else the refusal of its arguments."""
        if key not in untried:
            untried[key] = list(phantoms(key)) if phantoms is not None else []
        chosen.pop(key, None)
        if untried[key]:
            chosen[key] = untried[key].pop(0)
        else:
            refused[key] = _refusal(model, name, key, given, constants)

    for _ in range(_MOST_ROLLS):
        # the calls' instances first: the signature's defaults are the first's
        try:
            rolled = _roll_block_at_axes(
                model,
                [*instances, *chosen.values()],
                replace(options, calls=len(instances)),
                frozenset(refused),
            )
        except Untaken as why:  # a body no call runs (or the phantom read did not run it)
            if why.key in refused:
                raise
            next_phantom(why.key)
            continue
        except Unsupported:
            if not chosen:
                raise
            # a phantom the roller cannot read beside the calls: the next, else refuse
            next_phantom(list(chosen)[-1])
            continue
        if refused:
            guards = [line for lines in refused.values() for line in lines]
            lines = first_in_init(rolled.lines, list(dict.fromkeys(guards)))
            # a parameter refused all but the calls' numbers is no boolean in later tests
            numbers = [
                numbers_after(deciding_params(model, key, constants), given, model)
                for key, guard in refused.items()
                if guard
            ]
            lines = without_kind_tests(lines, frozenset().union(*numbers))
            # a body that runs at no arguments at all is no refusal: nothing to say
            said = tuple(
                refused_reason(model, key, constants, unit="call", phantoms=True)
                for key, guard in refused.items()
                if guard
            )
            rolled = replace(rolled, lines=lines, refused=said)
        guards = boolean_refusals(model, name, given)  # k=True would index item 1
        return replace(rolled, lines=first_in_init(rolled.lines, guards))
    raise Unsupported("too many bodies that no call runs")


_MOST_ROLLS = 12  # each finds one more body no call runs, or tries its next phantom


def _refusal(
    model: ast.Model,
    name: str,
    key: str,
    given: Sequence[Mapping[str, Any]],
    constants: Mapping[str, ast.Expr],
) -> list[str]:
    """The lines refusing the arguments that run the body ``key`` marks (none where no
    argument runs it: the class never builds it); ``Untaken`` where they cannot be
    written (the roller then keeps a class per call)."""
    params = deciding_params(model, key, constants)
    lines = refusal_lines(name, params, given, "call", model) if params is not None else None
    if lines is None:
        what = "a loop" if is_loop(key) else "an if branch"
        raise Untaken(what, key)
    return lines


def _roll_block_at_axes(
    model: ast.Model,
    instances: Sequence[tuple[Graph, list[str]]],
    options: RollOptions,
    dropped: frozenset[str],
) -> RolledBlock:
    """``roll_block`` for ``instances``: the channels' axis, else the last; ``dropped``:
    the bodies no call runs that the class refuses to build (``rolled._fill``)."""

    def at(axis: int | None, by_name: bool = False) -> RolledBlock:
        return _roll_block(model, instances, axis, options, dropped, by_name)

    try:
        return at(None)
    except Unsupported as error:
        last = _unsized_last_axis(instances, options.dims_of)
        if last is not None:
            try:
                return at(last)
            except Unsupported:
                pass
        # the input's sizes on the axes it does not thread taken as constructor arguments
        # too (``in_channels``), where a module reads one the calls give differently or
        # beside a size a parameter changes: the channels', then the last axis
        rank = len(instances[0][0].input_value.shape or ()) - 1
        for axis in dict.fromkeys([None, rank - 1] if rank >= 2 else []):
            try:
                return at(axis, by_name=True)
            except Unsupported:
                continue
        raise error from None  # the channels' reason, as before the retries


def _unsized_last_axis(
    instances: Sequence[tuple[Graph, list[str]]],
    dims_of: Callable[[Graph], tuple[int, ...] | None],
) -> int | None:
    """The last axis of a sample of rank 2 or more where no call's own class takes an
    input size, which ``rolled_axis`` then leaves at the channels; else None."""
    rank = len(instances[0][0].input_value.shape or ()) - 1
    if rank < 2 or any(dims_of(g) != () for g, _ in instances):
        return None
    return rank - 1


def _roll_block(
    model: ast.Model,
    instances: Sequence[tuple[Graph, list[str]]],
    axis: int | None,
    options: RollOptions,
    dropped: frozenset[str] = frozenset(),
    by_name: bool = False,
) -> RolledBlock:
    """``roll_block`` threading the sample axis ``axis`` (None: ``rolled_axis``'s);
    ``by_name``: the input's sizes on the other axes taken by name where a module reads
    them (``in_channels``), else written as the calls' numbers."""
    name, constants, block_models = options.name, options.constants, options.block_models
    class_of, dims_of, resolved = options.class_of, options.dims_of, options.resolved
    functions_of = options.functions_of or (lambda sub: {})
    function_items, blocks = options.function_items, options.blocks
    loop_widths, inner_widths = options.loop_widths or {}, options.inner_widths
    forward = model.forward
    if forward is None or not instances:
        raise Unsupported("a block without forward")
    _unnamed_layers_given([g for g, _ in instances])
    # a block without loops rolls where its calls give operations to build, or the
    # contents of a buffer (``buffer(p0, init=p1)``: one class choosing among them)
    loopless = not _loops(forward.body)
    if (
        loopless
        and not module_params([g for g, _ in instances])
        and not fills_by_parameter(forward.body)
    ):
        raise Unsupported(f"a block without loops whose calls write {_first_difference(instances)}")
    first = instances[0][0]
    # a block's class never checks its input's dtype (only a top-level model's does), so a
    # program's declared input_dtype reaching the block's graph does not stop it
    if any(g.tied for g, _ in instances):
        raise Unsupported("tied weights")
    ops, functions = operation_params(
        [g for g, _ in instances], functions_of, [g for g, _ in instances][: options.calls]
    )
    built = module_params([g for g, _ in instances])
    for param in built:  # norm given layer_norm: taken as a class, not as a function
        functions.pop(param, None)
        ops[param] = built[param]
    fields = [f.name for f in model.fields]  # the block's constants: locals of __init__
    if any(field in MODEL_TABLE for field in fields):
        raise Unsupported("a block with its own input_shape or input_dtype")
    shape = first.input_value.shape or ()
    params = tuple(p.name for p in model.params)
    rank = len(shape) - 1
    if any(len(g.input_value.shape or ()) != len(shape) for g, _ in instances):
        raise Unsupported("calls at inputs of different ranks")
    if axis is None:
        axis = rolled_axis((dims_of(g) for g, _ in instances), rank)
    # a sample without axes (``(batch,)``, after a reduction) has no width to thread: the
    # class takes no input size, where nothing it builds would read one
    width = input_names(rank, params)[axis] if rank >= 1 else None
    if width is None and any(n.layer or _makes_module(n) for g, _ in instances for n in g.nodes):
        raise Unsupported("a block input without a channel or feature axis")
    loops = _loop_names(forward.body)
    all_sizes = input_names(rank, params) if rank >= 1 else ()
    other_sizes = {
        other: all_sizes[other]
        for other in range(rank)
        if by_name and width is not None and other != axis and other < len(all_sizes)
    }
    names = [*params, *loops, *fields, *([width] if width is not None else [])]
    names += list(other_sizes.values())
    check_names(names, [*constants, *block_models])
    tr = Translator(frozenset(names), constants, {})
    tr.mixed = kind_blind(model)  # True is not 1 in their tests
    local_lines: list[str] = []
    for field in model.fields:
        written = tr.text(field.value)
        named = table_name(written)
        if named != written:  # a table the file defines once (SIZES): read by that name
            tr.aliases[field.name] = named
        else:
            local_lines.append(f"{INDENT * 2}{field.name} = {written}")
    envs = [
        _environment(model, graph, width, axis, tr, resolved, set(functions), blocks, set(built))
        | {
            name: int(plain((graph.input_value.shape or ())[a + 1]))
            for a, name in other_sizes.items()
        }
        for graph, _ in instances
    ]
    taken = _blocks_taken(model, [g for g, _ in instances], envs, blocks)
    paths: dict[Span, str] = {}  # the names of unnamed modules in loops
    # and of those after a loop: the loop numbering them (nested: the loops, counts multiply)
    counted: dict[Span, Counts] = {}
    branches: dict[str, list[str]] = {}
    # a loop over items (``for w in widths``): its count, where that names a module
    words = {w for _, lines in instances for w in re.findall(r"\w+", "\n".join(lines))}
    indices = loop_indices(forward.body, {*names, *constants, *block_models, *RESERVED, *words})
    # triangles of loops: the running counts naming modules (``n``), names of none of these
    tr.triangles = triangles(
        forward.body, {*names, *constants, *block_models, *words, *indices.values()}, nested=True
    )
    used = {*names, *constants, *block_models, *words, *indices.values()}
    # a running count of the modules the branches taken made (``n``), named apart too
    tr.branch_counts = branch_counts(
        forward.body, {*used, *(t.name for t in tr.triangles)}, tr.triangles
    )
    numbered_after_branch_loops(forward.body, counts=tr.branch_counts)
    # a row's block's modules, numbered per block (``rolled._Walk._row_block``): the
    # counter's name, one no name of the block or its calls' classes is
    counter = next(c for c in ("made", "counts", "seen", "made_") if c not in used)
    row_counters: dict[Span, str] = {}
    row_classes: dict[str, list[str]] = {}  # each row's block: the classes the rows give
    # a list's items building modules (``layer_norm``: ``block_walk._module_item``), each
    # counted by a local named after its operation (``layer_norm_count``)
    module_items = _module_items([g for g, _ in instances], set(built))
    clashing = sorted(f"{op}_count" for op in module_items if f"{op}_count" in used)
    if clashing:
        raise Unsupported(f"the counter '{clashing[0]}' is a name of the block or its calls")
    item_spans: dict[Span, set[str]] = {}
    inits: list[str] = []  # a sample without axes: nothing to build (checked above)
    widths = LoopWidths(False, frozenset())
    if width is not None:
        inits, branches, paths, counted, indexed, widths = _walked_inits(
            model,
            instances,
            envs,
            tr,
            width,
            axis,
            indices,
            class_of=class_of,
            dims_of=dims_of,
            block_models=block_models,
            functions_of=functions_of,
            function_items=function_items,
            loop_widths=loop_widths,
            blocks=blocks,
            row_counters=row_counters,
            row_classes=row_classes,
            counter=counter,
            module_items=module_items,
            item_spans=item_spans,
            inner_widths=inner_widths,
            built=frozenset(built),
            other_sizes=other_sizes,
        )
        starred = starred_loops(forward.body)  # forward's self.stack[i]
        indices = {s: name for s, name in indices.items() if s in indexed | starred}
    inits = stages_in_order(enumerated(without_empty_branches(_fill(inits, branches, dropped))))
    inits = refused_first(inits)  # a list's item refused once, before its loop builds
    inits = with_counters(inits, row_counters, counter)
    inits = with_row_refusals(inits, row_classes, row_counters, counter, name)
    inits = with_item_counters(inits, item_spans)
    heads = {line.split("=")[0].strip() for line in inits if " = " in line}
    attrs = attribute_namespace()
    attrs.claim(n.layer.split(".")[0] for g, _ in instances for n in g.nodes if n.layer)
    attrs.claim(n.id for g, _ in instances for n in g.nodes if n.span in paths)
    attrs.claim(n.id for g, _ in instances for n in g.nodes if n.span in item_spans)
    attrs.claim(h.removeprefix("self.").split(".")[0] for h in heads if h.startswith("self."))
    sizes = {width} if width is not None else set()
    # the parameters some calls apply nowhere taken as module classes, as the caller's
    # ParamClasses decides from the calls alone: a phantom that disagrees is no reading
    calls = [g for g, _ in instances][: options.calls]
    unused = set(unused_module_params(calls))
    if unused != set(unused_module_params([g for g, _ in instances])) & unused:
        raise Unsupported("a body no call runs applies an operation-valued parameter otherwise")
    stored, op_modules = _stored(
        instances, {*sizes, *params}, set(ops), {*functions, *built}, unused
    )
    attrs.claim(stored)
    attrs.claim(line.split("=")[0].strip().removeprefix("self.") for line in op_modules)
    built_params = _built_params(instances, built, attrs, name)
    op_modules += [line for lines in built_params.values() for line in lines[1]]
    applied = {  # self.act = act, where the block applies it (not only passes it on)
        param: attrs.allocate(param)
        for param in functions
        if any(g.block_ops[param].nodes for g, _ in instances)
    }
    forward_tr = SelfTranslator(frozenset(loops), constants, {*params, *fields}, attrs, stored)
    forward_tr.aliases = tr.aliases
    forward_tr.triangles = tr.triangles
    forward_tr.branch_counts = tr.branch_counts
    forward_tr.mixed = tr.mixed

    def forwards(one_by_one: bool) -> list[str]:
        """Forward with the source's loops; ``one_by_one``: read from the calls' forwards
        with each container they apply whole applied a child a statement, the loop
        filling it then applying it whole again (``stage_apply.py``)."""
        branches_forward: dict[str, list[str]] = {}  # each branch's body, from any instance
        methods = [
            rolled_forward(
                model,
                g,
                with_applied(
                    g,
                    children_one_by_one("\n".join(lines), g).split("\n") if one_by_one else lines,
                    applied,
                ),
                forward_tr,
                env,
                branches_forward,
                paths,
                counted,
                indices,
                function_items,
                row_counters,
                {
                    span: [(op, module_items[op][0]) for op in sorted(built)]
                    for span, built in item_spans.items()
                },
                {param: names for param, (names, _) in built_params.items()},
            )
            for (g, lines), env in zip(instances, envs, strict=True)
        ]
        body = enumerated(_fill(shared_forward(methods), branches_forward, dropped))
        if dropped:  # a loop or else left without its body goes with it
            body = without_empty_branches(body)
        body = with_counters(body, row_counters, counter)
        body = with_item_counters(body, item_spans)
        return whole_stages(body) if one_by_one else body

    try:
        body = forwards(one_by_one=False)
    except Unsupported as why:
        split = [children_one_by_one("\n".join(lines), g) for g, lines in instances]
        if all(text == "\n".join(lines) for text, (_, lines) in zip(split, instances, strict=True)):
            raise  # no container applied whole: nothing else to read
        forward_tr.read.clear()  # what the first try read
        try:
            body = forwards(one_by_one=True)
        except Unsupported:
            raise why from None
        # the loop applying a container whole again reads no count: not stored for it
        text = "\n".join(body)
        forward_tr.read = {
            attr: param
            for attr, param in forward_tr.read.items()
            if re.search(rf"\bself\.{attr}\b", text)
        }
    for op in sorted({op for ops in item_spans.values() for op in ops}):
        counting = f"{op}_count += 1"  # forward applies each module __init__ counts
        if sum(counting in line for line in body) != sum(counting in line for line in inits):
            raise Unsupported(f"forward does not apply the '{op}' modules a list's items build")
    inits = keyed_stages(inits, "\n".join(body))
    keeps_width = width is not None  # the local ``channels``, for ``stored_width``
    # the lines besides inits and forward that may read the width: modules built from
    # operation-valued parameters, and values the class stores
    others = [*op_modules, *(f"{attr} = {value}" for attr, value in stored.items())]
    if (
        width is not None
        and (unthreaded := _without_width(inits, [*body, *others], width)) is not None
    ):
        inits, sizes, width = unthreaded, set(), None  # no layer reads it: not an argument
        keeps_width = False
    # the input's sizes on other axes that a module or an inner block reads by name
    read = [
        a
        for a, size in other_sizes.items()
        if any(re.search(rf"\b{size}\b", line) for line in [*inits, *others])
    ]
    if read and width is None:
        raise Unsupported("input sizes read where the running width is not")
    # the input's sizes the constructor takes, in the order of their axes
    taken_sizes = {**{a: other_sizes[a] for a in read}, **({axis: width} if width else {})}
    signature = [taken_sizes[a] for a in sorted(taken_sizes)]
    defaults = dict(first.block_defaults)
    for param in params:
        if param in defaults:  # rows of operations or blocks as a call passes them
            signature.append(f"{param}={_default_text(defaults[param], function_items, blocks)}")
        elif ops.get(param) is not None:  # act=nn.ReLU, as a class of one call writes it
            signature.append(f"{param}={ops[param]}")
        elif (default := functions.get(param)) is not None:  # act=F.relu: applied as is
            signature.append(f"{param}={signature_default(default)}")
        elif taken.get(param) is not None:  # block=Basic, as a class of one call writes it
            signature.append(f"{param}={taken[param]}")
        else:
            signature.append(param)
    stores = {**stored, **forward_tr.read}
    lines = [
        f"class {name}(nn.Module):",
        *wrap(1, "", f"def __init__(self, {', '.join(signature)})", tail=":"),
        f"{INDENT * 2}super().__init__()",
        *local_lines,
        *(f"{INDENT * 2}self.{attr} = {param}" for attr, param in sorted(stores.items())),
        *op_modules,
        *(
            f"{INDENT * 2}self.{attr} = {stored_function(param, functions[param])}"
            for param, attr in applied.items()
        ),
        *inits,
        "",
        *body,
    ]
    # the width an if outside loops leaves depends on its tests' parameters as a loop's
    # on its count's: a caller passing one of its own reads the width from the module
    tests = params_tested(model, ifs_outside_loops(forward.body))
    counts = loop_params(model) | tests if widths.own else frozenset()
    axis_taken = axis if width is not None else None
    own = LoopWidth(counts, keeps_width)
    return RolledBlock(
        without_unread_locals(lines),
        axis_taken,
        own,
        widths.reads,
        taken,
        widths.out_sizes,
        sizes=tuple(sorted(read)),
    )


def stored_width(lines: list[str]) -> list[str]:
    """A rolled class's ``lines`` storing the width its loop left at the end of
    ``__init__`` (``self.out_channels = channels``), for a caller that reads it from the
    module it built (``rolled._Walk._loop_width_fixed``)."""
    line = f"{INDENT * 2}self.out_channels = {SIZE}"
    if line in lines:
        return lines
    end = next(i for i, text in enumerate(lines) if text.startswith(f"{INDENT}def forward("))
    while end > 0 and lines[end - 1] == "":
        end -= 1
    return [*lines[:end], line, *lines[end:]]


def _without_width(inits: list[str], body: list[str], width: str) -> list[str] | None:
    """``inits`` without the running width's local (``channels = in_channels``, ``channels
    = 6``) where no layer reads it (attention of a given ``dim``), or None where one does.
    With no such local, ``inits`` as they are where no line reads the width either (a
    block that only pools and gates, or fills a buffer): the width is no argument."""
    first = next((line for line in inits if line.strip() != ""), "")
    matched = re.fullmatch(rf"{INDENT * 2}(\w+) = {re.escape(width)}", first)
    if matched is None:
        read = re.compile(rf"\b{re.escape(width)}\b")
        tracked = re.compile(rf"\s*{SIZE} = ")  # a running width of its own: kept for callers
        if any(read.search(line) for line in [*inits, *body]) or any(map(tracked.match, inits)):
            return None
        return inits
    local = matched[1]
    assigned = re.compile(rf"\s*{re.escape(local)} = ")
    kept = [line for line in inits if not assigned.match(line)]
    read = re.compile(rf"\b({re.escape(local)}|{re.escape(width)})\b")
    if any(read.search(line) for line in [*kept, *body]):
        return None
    later = [line for line in inits if assigned.match(line) and line is not first]
    if any(read.search(line.split(" = ", 1)[1]) for line in later):
        return None  # channels = channels + growth
    try:
        pyast.parse("def f():\n" + "\n".join(kept or [f"{INDENT * 2}pass"]))
    except SyntaxError:  # a loop that only tracked the width
        return None
    return kept


def _walked_inits(
    model: ast.Model,
    instances: Sequence[tuple[Graph, list[str]]],
    envs: Sequence[dict[str, Any]],
    tr: Translator,
    width: str,
    axis: int,
    indices: Mapping[Span, str],
    *,
    class_of: Callable[[Graph], str],
    dims_of: Callable[[Graph], tuple[int, ...] | None],
    block_models: Mapping[str, ast.Model],
    functions_of: Callable[[Graph], Mapping[str, str | None]],
    function_items: bool,
    loop_widths: Mapping[str, LoopWidth],
    blocks: BlockClasses | None,
    row_counters: dict[Span, str],
    row_classes: dict[str, list[str]],
    counter: str,
    module_items: Mapping[str, tuple[str, bool]],
    item_spans: dict[Span, set[str]],
    inner_widths: InnerWidths | None = None,
    built: frozenset[str] = frozenset(),
    other_sizes: Mapping[int, str] | None = None,
) -> tuple[
    list[str], dict[str, list[str]], dict[Span, str], dict[Span, Counts], set[Span], LoopWidths
]:
    """``__init__``'s lines from the walk of each call (``block_walk.BlockWalk``, the same
    lines at every call), its branches' bodies, the names of unnamed modules in loops,
    the loops over items whose counts (``indices``) name them, and what the walks found
    of widths that loops leave (``LoopWidths``)."""
    forward = model.forward
    assert forward is not None
    choices: dict[Any, list[str]] = {}
    branches: dict[str, list[str]] = {}
    numbers: dict[Span, set[tuple[str, int, int, int]]] = {}  # unnamed modules in loops
    paths: dict[Span, str] = {}
    # unnamed modules after a loop: the loop numbering them (nested: the loops)
    counted: dict[Span, Counts] = {}
    empty_loops: set[str] = set()  # loops that build nothing at a call that runs them
    indexed: set[Span] = set()  # loops over items whose counts name modules
    untracked: dict[tuple[Span, str], int] = {}  # modules reading sizes not threaded
    inits: list[str] | None = None
    loop_width = False  # the output width is what a loop leaves (the local, not a text)
    reads: set[str] = set()  # inner blocks' classes whose width is read from their module
    out_sizes: dict[str, str] = {}  # blocks built through a parameter or a row: their widths
    item_classes: dict[Span, list[str | None]] = {}  # items applied as a()(x): their classes
    for strict in (False, True):  # the first walks only narrow the width texts
        inits = None
        unnamed: set[str] | None = None  # the unnamed modules outside loops, by the IR's name
        for (graph, _), env in zip(instances, envs, strict=True):
            walk = BlockWalk(graph, dict(env), tr, class_of, dims_of, block_models, size=width)
            walk.axis = axis + 1 if axis == 0 else -1
            walk.tensor = forward.param
            walk.inputs_ = frozenset(forward.input_names[1:])
            walk.choices, walk.strict = choices, strict
            walk.numbers, walk.paths, walk.counted = numbers, paths, counted
            walk.indices, walk.indexed = indices, indexed
            walk.statements = forward.body
            walk.empty_loops = empty_loops
            walk.operation_of = _operation_of(functions_of)
            walk.function_items = function_items
            walk.loop_widths = loop_widths
            walk.inner_widths = inner_widths
            walk.untracked = untracked
            walk.input_sizes = dict(other_sizes or {})
            walk.blocks = blocks
            walk.row_counters, walk.counter = row_counters, counter
            walk.row_classes = row_classes
            walk.module_items, walk.item_spans = module_items, item_spans
            walk.item_classes, walk.class_name = item_classes, model.name
            walk.number_names = number_names(model)
            walk.module_params = built
            # identity: built once as norm() by its class of one call, as relu is
            walk.params_built = frozenset(p for p in built if _module_of(graph, p) is None)
            if strict:
                walk.branches = branches
            repeating = repeating_name(forward.body)
            if repeating is not None:  # names the class would overwrite without a word
                raise Unsupported(repeating)
            found = walk.body(forward.body, TOP)
            if walk.second is not None:
                raise Unsupported(f"the tensor '{walk.second}' is not joined back")
            left = [n for n in walk.pending if n.layer or _makes_module(n)]
            if left:
                raise Unsupported(f"the layer '{left[0].id}' is not made by the rolled class")
            _rows_numbered_alone(graph, walk.row_nodes, walk.beside_rows, block_models)
            for block, size in walk.out_sizes.items():
                if out_sizes.setdefault(block, size) != size:
                    raise Unsupported(f"the instances of '{block}' write their width differently")
            if unnamed is not None and walk.unnamed != unnamed:
                raise Unsupported(
                    f"an unnamed module after a loop, numbered by the calls' counts "
                    f"('{min(walk.unnamed ^ unnamed)}'): name it with 'as'"
                )
            unnamed = walk.unnamed
            loop_width |= walk.size == SIZE and walk.held is None
            reads |= walk.read_widths
            if strict and inits is not None and found != inits:
                raise Unsupported(f"the calls of '{model.name}' build differently")
            inits = found
    assert inits is not None
    untracked_sizes(untracked)
    widths = LoopWidths(loop_width, frozenset(reads), out_sizes)
    return inits, branches, paths, counted, indexed, widths


def operation_params(
    graphs: Sequence[Graph],
    functions_of: Callable[[Graph], Mapping[str, str | None]] = lambda sub: {},
    calls: Sequence[Graph] | None = None,
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The operation-valued parameters the class takes as module classes (``act=nn.ReLU``:
    every call gives an operation with an argument-free module class), and those it takes
    as functions (``act=F.relu``, a call passing ``torch.exp`` or
    ``functools.partial(F.softmax, dim=1)``), each with its default (None: none); one taking
    a function may be passed on to inner blocks whose classes take it as a function
    (``functions_of``)."""
    first = graphs[0]
    if any(set(g.block_ops) != set(first.block_ops) for g in graphs):
        raise Unsupported("an operation-valued argument without a module class")
    ops, functions = operation_kinds(graphs, calls)
    built = module_params(graphs)
    for param, default in functions.items():
        if param in built:
            continue  # built as modules where applied: ``module_params``
        for graph in graphs:
            given = graph.block_ops[param]
            nodes = graph.node_by_id
            subs = [(nodes[node].subgraph, inner) for node, inner in given.passed]
            if any(sub is None or inner not in functions_of(sub) for sub, inner in subs):
                raise Unsupported("an operation-valued argument without a module class")
            if any(nodes[n].layer for n in given.nodes):
                raise Unsupported("an operation-valued argument without a module class")
            if function_value(graph, param) is None:
                raise Unsupported(f"an operation given for '{param}' that is no function")
        if first.block_ops[param].default is not None and default is None:
            raise Unsupported(f"the default of '{param}' is no function")
    return ops, functions


def _default_text(value: Any, function_items: bool, blocks: BlockClasses | None) -> str:
    """A parameter's default as its calls pass such a value (``param_blocks.value_text``:
    ``cfg=((4, nn.ReLU), (6, nn.Tanh))``, ``((4, Unit),)``), so the class built at its
    default is the source's default call; ``Unsupported`` for an operation or block in it
    that no call could pass."""

    def unwritten(item: OpValue) -> str:
        raise Unsupported(f"the default of a parameter holds '{item.name}', which no call passes")

    return value_text(
        plain(value), function_items, blocks.named if blocks else _no_class, unwritten
    )


def _no_class(name: str) -> str | None:
    return None


def _operation_of(
    functions_of: Callable[[Graph], Mapping[str, str | None]],
) -> Callable[[Graph, str], str | None]:
    """What an inner block's class takes for an operation-valued parameter at a call: the
    function (``function_value``) where its classes take one, else the module class."""

    def operation_of(sub: Graph, param: str) -> str | None:
        if param in functions_of(sub):
            return function_value(sub, param)
        return _module_of(sub, param)

    return operation_of


def _loops(body: tuple[ast.ForwardStmt, ...]) -> bool:
    """Whether ``body`` holds a loop, one in an ``if``'s branch too."""
    return any(
        isinstance(s, ast.For)
        or (isinstance(s, ast.If) and any(_loops(b.body) for b in s.branches))
        for s in body
    )


def _environment(
    model: ast.Model,
    graph: Graph,
    width: str | None,
    axis: int,
    tr: Translator,
    resolved: Callable[[ast.Model, Mapping[str, Any]], Mapping[str, ast.Expr]] | None,
    functions: set[str],
    blocks: BlockClasses | None = None,
    built: set[str] | None = None,
) -> dict[str, Any]:
    """The instance's parameter values (an operation-valued one as its module class,
    ``nn.ReLU``, or of ``functions`` as its function; a model-valued one as the one class
    of every block it builds, ``rolled.Model``; one of ``built``, ``module_params``, as
    the operation given, tested by the class), input width and constants, as the class
    receives and computes them."""
    given = {**plain(dict(graph.block_defaults)), **plain(dict(graph.block_args))}
    env: dict[str, Any] = {**given}
    for param, operation in graph.block_ops.items():
        made = function_value(graph, param) if param in functions else _module_of(graph, param)
        # an operation built as modules where applied (``module_params``): tested by it
        env[param] = OpValue(operation.op, False) if param in (built or ()) else made
    for param in graph.block_models:
        block_class = _block_class_of(graph, param, blocks) if blocks is not None else None
        if block_class is not None:
            env[param] = Model(block_class)
    shape = graph.input_value.shape
    if width is not None:
        if shape is None or len(shape) < 2:
            raise Unsupported("a block input without a channel or feature axis")
        env[width] = int(plain(shape[axis + 1]))
    if not model.fields:
        return env
    if resolved is None:
        raise Unsupported("a block with constants")
    # an operation-valued parameter a constant reads (``table = [(8, act), (6, gelu)]``):
    # the compiler resolves it with the operation the call gives
    operations = {param: OpValue(found.op, False) for param, found in graph.block_ops.items()}
    expected = resolved(model, {**given, **operations})
    literal = Translator(frozenset(), {}, {})
    for field in model.fields:
        text = tr.text(field.value)
        read = [p for p in functions if re.search(rf"(?<![\w.]){p}\b", text)]
        if read:  # the compiler's value holds the operation, the class's its function
            raise Unsupported(f"the constant '{field.name}' reads '{read[0]}', given as a function")
        env[field.name] = evaluate(text, env)
        value = expected.get(field.name)
        if value is None or env[field.name] != evaluate(literal.text(value), {}):
            raise Unsupported(f"the constant '{field.name}' is not '{text}' at every call")
    return env


def with_counters(lines: list[str], row_counters: Mapping[Span, str], counter: str) -> list[str]:
    """``lines`` with the counter of the rows' blocks' modules started (``made = {}``)
    before the loop that counts them (``made[b] = made.get(b, 0) + 1``)."""
    counting = f"{counter}.get("
    at = next((k for k, line in enumerate(lines) if counting in line), None)
    if not row_counters or at is None:
        return lines
    depth = len(lines[at]) - len(lines[at].lstrip())
    headers = [
        k
        for k in range(at - 1, -1, -1)
        if lines[k].lstrip().startswith("for ") and len(lines[k]) - len(lines[k].lstrip()) < depth
    ]
    if not headers:
        raise Unsupported("a row's block counted outside a loop")
    loop = headers[0]
    pad = lines[loop][: len(lines[loop]) - len(lines[loop].lstrip())]
    return [*lines[:loop], f"{pad}{counter} = {{}}", *lines[loop:]]


def with_row_refusals(
    lines: list[str],
    row_classes: Mapping[str, Sequence[str]],
    row_counters: Mapping[Span, str],
    counter: str,
    name: str,
) -> list[str]:
    """``__init__``'s ``lines`` refusing, in every loop over the rows, a row's block whose
    class is none of those the calls' rows give (``if b not in (Basic, Wide):``; one
    class: ``if b is not Basic:``): the class reads the width after it from the module
    built (``layer.out_channels``), which only those classes store, and calls it as they
    are called; another raised an ``AttributeError`` or built with arguments of its own.
    The loops are those of the row steps the walk counted (``row_counters``): each has
    its count line, before which the refusal goes (two loops over rows: two refusals)."""
    counted = set(row_counters.values())
    counting = {row_count(counter, b): b for b in row_classes if row_count(counter, b) in counted}
    out: list[str] = []
    for line in lines:
        local = counting.get(line.strip())
        if local is not None:
            classes = row_classes[local]
            depth = (len(line) - len(line.lstrip())) // len(INDENT)
            if len(classes) == 1:
                test, said = f"{local} is not {classes[0]}", f"for {local} is {classes[0]}"
            else:
                shown = f"({', '.join(classes)})"
                test, said = f"{local} not in {shown}", f"for {local} in {shown}"
            why = "the blocks the calls' rows give"
            out += refusal(name, test, said, why, f"{local}.__name__", depth)
        out.append(line)
    return out


def _module_items(
    graphs: Sequence[Graph], built: set[str] | None = None
) -> dict[str, tuple[str, bool]]:
    """The operations inside the calls' list arguments that the class of one call builds
    as modules (``layer_norm``, ``identity``), each with the class the calls pass and
    whether it takes the width (``named.module_item_class``), also where the other items
    are functions (``named.function_items``: ``torch.exp`` beside ``nn.LayerNorm``)."""
    found: dict[str, tuple[str, bool]] = {}
    for graph in graphs:
        for value in graph.block_args.values():
            for item in operation_items(value):
                spec = lookup(item.name)
                made = module_item_class(item.name)
                if spec is not None and made is not None:
                    found[spec.name] = made
        for param in built or ():  # norm given layer_norm: ``module_params``
            if _module_of(graph, param) is not None:  # identity: built once, norm()
                continue
            spec = lookup(graph.block_ops[param].op)
            made = module_item_class(graph.block_ops[param].op)
            if spec is not None and made is not None:
                found[spec.name] = made
    return found


def with_item_counters(lines: list[str], item_spans: Mapping[Span, set[str]]) -> list[str]:
    """``lines`` with each counter of a list's items' modules (``layer_norm_count += 1``,
    ``block_walk._module_item``) started once (``layer_norm_count = 0``) before the
    statement of the method's body that first counts it: the loop holding it (the
    outermost of nested loops), or the ``if`` testing a parameter outside loops. The IR
    numbers an operation's modules over the instance, in the order they are made,
    which one count from there writes: in loops nested in each other (``for k in
    range(m): for w, a in cfg``), and in several loops (``for c, a in rows0`` then ``for
    c, a in rows1``)."""
    counters = {f"{op}_count" for ops in item_spans.values() for op in ops}
    starts: dict[int, list[str]] = {}
    top = min(  # the method's body, under forward's ``def`` line
        (_indent_of(line) for line in lines if line.strip() and not _def(line)),
        default=0,
    )
    started: set[str] = set()
    for at, line in enumerate(lines):
        name = line.strip().removesuffix(" += 1")
        if name not in counters or not line.strip().endswith(" += 1") or name in started:
            continue
        header = _statement_at(lines, at, top)
        if header is None:
            raise Unsupported(f"the counter '{name}' outside a loop or an if")
        started.add(name)
        starts.setdefault(header, []).append(f"{' ' * top}{name} = 0")
    out: list[str] = []
    for at, line in enumerate(lines):
        out += [*starts.get(at, []), line]
    return out


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _statement_at(lines: list[str], at: int, top: int) -> int | None:
    """The line of the ``for`` or ``if`` of the method's body (indented ``top``) that
    holds line ``at`` (an ``elif`` or ``else`` of it: its ``if``); None where another."""
    k = at - 1
    while k >= 0:
        stripped = lines[k].strip()
        if stripped and _indent_of(lines[k]) == top and not stripped.startswith(("elif ", "else:")):
            break
        k -= 1
    if k < 0 or not lines[k].lstrip().startswith(("for ", "if ")):
        return None
    return k


def _def(line: str) -> bool:
    return line.lstrip().startswith("def ")


def _rows_numbered_alone(
    graph: Graph,
    row_nodes: set[str],
    beside: set[str],
    block_models: Mapping[str, ast.Model],
) -> None:
    """``Unsupported`` where a name of the instance other than the rows' blocks' modules
    would take a block's numbering (``basic1`` from ``as basic1`` or a ``Basic`` called
    by name outside loops): the class numbers the rows' blocks from 1 for any rows, which
    the IR does only where no other name has such a block's name and a number. Those of
    ``beside``, blocks called by name in a loop, are counted with the rows' blocks."""
    if not row_nodes:
        return
    row_nodes = row_nodes | beside
    lowered = [name.lower() for name in block_models]
    if len(set(lowered)) != len(lowered):  # Basic and BASIC: one numbering, two counts
        raise Unsupported("two blocks whose names differ only in case number as one")
    stems = "|".join(re.escape(name.lower()) for name in block_models)
    numbered = re.compile(rf"(?:{stems})\d+")
    others = [n.id for n in graph.nodes if n.id not in row_nodes]
    others += [n.layer.split(".")[0] for n in graph.nodes if n.layer]
    others += [v.name for v in graph.values if v.name not in row_nodes]
    taken = next((name for name in others if numbered.fullmatch(name)), None)
    if taken is not None:
        raise Unsupported(f"the name '{taken}' takes a block's numbering beside the rows' blocks")


def _block_class_of(graph: Graph, param: str, blocks: BlockClasses) -> str | None:
    """The one class of every block the model-valued ``param`` builds in ``graph`` and of
    those the inner blocks it is given to build, where each of those takes it as a class;
    None where it builds none (or several)."""
    found = graph.block_models[param]
    nodes = graph.node_by_id
    made: set[str | None] = set()
    for node_id in found.nodes:
        sub = nodes[node_id].subgraph
        made.add(None if sub is None else blocks.named(sub.name))
    for node_id, inner in found.passed:
        sub = nodes[node_id].subgraph
        made.add(None if sub is None else blocks.taken(sub).get(inner))
    if not made and found.op is not None:
        made.add(blocks.named(found.op))  # given, but built by no call: its one class
    return made.pop() if len(made) == 1 and None not in made else None


def _blocks_taken(
    model: ast.Model,
    graphs: Sequence[Graph],
    envs: Sequence[Mapping[str, Any]],
    blocks: BlockClasses | None,
) -> dict[str, str | None]:
    """The model-valued parameters the class takes as block classes (those every call
    binds to its block's one class), each with the class its signature's default is
    written as (None: none). ``Unsupported`` where the source's default cannot be written
    (a block written after this one): the parameter cannot come after one with a default."""
    if blocks is None:
        return {}
    taken: dict[str, str | None] = {}
    for param in graphs[0].block_models:
        if not all(isinstance(env.get(param), Model) for env in envs):
            continue
        default = None
        if graphs[0].block_models[param].default is not None:
            default = blocks.default(graphs[0], param)
            if default is None:
                raise Unsupported(f"the default block of '{param}' has no class written before")
        taken[param] = default
    return taken


def _stored(
    instances: Sequence[tuple[Graph, list[str]]],
    names: set[str],
    ops: set[str],
    functions: set[str] = frozenset(),  # type: ignore[assignment]
    unused: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[dict[str, str], list[str]]:
    """``self.width = width``: what each instance's constructor stores for its forward; and
    ``self.act = act()``: the module each operation-valued parameter makes, which follow
    (a class of one call builds ``act()`` where the rolled class takes a function: left
    out, the rolled class stores the function). A class of one call applying a parameter
    of ``unused`` nowhere builds no module for it (``unused_module_params``: it holds no
    state), which the rolled class builds as the others do."""
    found: tuple[dict[str, str], list[str]] | None = None
    every: list[list[str]] = []
    for _, lines in instances:
        start = lines.index(f"{INDENT * 2}super().__init__()") + 1
        mine: dict[str, str] = {}
        made: list[str] = []
        for line in lines[start:]:
            matched = re.fullmatch(rf"{INDENT * 2}self\.(\w+) = (\w+)(\(\))?", line)
            if matched is None:
                break
            if matched.group(2) in functions:  # act() or act: the class stores the function
                continue
            if matched.group(3) is None and matched.group(2) in names and not made:
                mine[matched.group(1)] = matched.group(2)
            elif matched.group(3) is not None and matched.group(2) in ops:
                made.append(line)
            else:
                break
        every.append(made)
        found = (_merged(found[0] if found is not None else {}, mine), made)
    if found is None:
        return {}, []
    built = max(every, key=len)
    for made in every:
        missing = [line for line in built if line not in made]
        if [line for line in built if line in made] != made or any(
            line.split(" = ")[1].removesuffix("()") not in unused for line in missing
        ):
            raise Unsupported("the calls' forwards read different stored values")
    return found[0], built


def _built_params(
    instances: Sequence[tuple[Graph, list[str]]],
    built: Mapping[str, str | None],
    attrs: Namespace,
    name: str,
) -> dict[str, tuple[tuple[str, str, tuple[str, ...]], list[str]]]:
    """Per parameter of ``module_params``: the attribute keeping the class the call gave
    (``self.norm_class``, tested by forward), the module a call giving an argument-free
    one builds (``self.norm``, as its class of one call names it), the classes built where
    applied (``nn.LayerNorm``), and ``__init__``'s lines::

        if norm not in (nn.LayerNorm, nn.ReLU):  # the operations the calls give
            raise ValueError(...)
        self.norm_class = norm
        if norm is not nn.LayerNorm:
            self.norm = norm()

    The refusal: another sized class (``nn.RMSNorm``, ``nn.BatchNorm1d``) failed in
    ``norm()`` with a ``TypeError``; none where a call's class is a
    ``functools.partial``, which no ``in`` test can name."""
    out: dict[str, tuple[tuple[str, str, tuple[str, ...]], list[str]]] = {}
    for param in built:
        made = {
            matched.group(1)
            for _, lines in instances
            for line in lines
            if (matched := re.fullmatch(rf"{INDENT * 2}self\.(\w+) = {param}\(\)", line))
        }
        if len(made) > 1 or (made and made != {param}):
            raise Unsupported(f"the module of '{param}' is named '{min(made)}'")
        module = attrs.allocate(param)
        if module != param:  # the name every class of one call gives it
            raise Unsupported(f"the module of '{param}' cannot be named '{param}'")
        kept = attrs.allocate(f"{param}_class")
        # the classes built where applied: those no class of one call builds as norm()
        made_here = {
            module_item_class(graph.block_ops[param].op)
            for graph, _ in instances
            if _module_of(graph, param) is None
        }
        classes = tuple(sorted(made[0] for made in made_here if made is not None))
        if not classes:
            raise Unsupported(f"no call builds the modules of '{param}' where applied")
        test = (
            f"{param} is not {classes[0]}"
            if len(classes) == 1
            else f"{param} not in ({', '.join(classes)})"
        )
        given: list[str | None] = []  # the classes the calls give, in the calls' order
        for graph, _ in instances:
            op = graph.block_ops[param].op
            sized = module_item_class(op)
            text = sized[0] if sized is not None else module_factory(op)
            shown = text if text is not None and re.fullmatch(r"[\w.]+", text) else None
            if shown not in given:
                given.append(shown)
        refused: list[str] = []
        if None not in given:
            names = cast("list[str]", given)
            if len(names) == 1:
                test_given, said = f"{param} is not {names[0]}", f"for {param} is {names[0]}"
            else:
                shown_all = f"({', '.join(names)})"
                test_given, said = f"{param} not in {shown_all}", f"for {param} in {shown_all}"
            why = "the operations the calls give"
            refused = refusal(name, test_given, said, why, f"{param}.__name__")
        lines = [
            *refused,
            f"{INDENT * 2}self.{kept} = {param}",
            f"{INDENT * 2}if {test}:",
            f"{INDENT * 3}self.{module} = {param}()",
        ]
        out[param] = ((module, kept, classes), lines)
    return out


def _merged(known: Mapping[str, str], mine: Mapping[str, str]) -> dict[str, str]:
    """The values two calls' forwards read (attribute -> parameter): a call whose loop
    runs no iteration reads fewer, and the class stores what any call reads; each
    attribute must hold one parameter (forwards that read one under two names differ,
    which their comparison finds)."""
    if any(known.get(attr, param) != param for attr, param in mine.items()):
        raise Unsupported("the calls' forwards read different stored values")
    return {**known, **mine}
