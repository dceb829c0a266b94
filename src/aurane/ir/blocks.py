"""Lowering calls of parameterised blocks: bind the arguments, resolve, check, lower.

Each distinct (arguments, input types) of a block lowers once. Inside the instance every
number given as an argument, and each block input's channel/feature axes, are symbolic
numbers (``aurane.semantics.symbolic``), so the torch backend can write the one class of
the block in terms of its constructor parameters.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from typing import Any

from aurane.diagnostics import Diagnostic, Label
from aurane.ir.builder import ModelInfo, model_info
from aurane.ir.graph import Graph, Node, OperationParam, Value
from aurane.ir.lowering import Lowering
from aurane.ops import canonical
from aurane.ops.rules import fmt_shape as shape_text
from aurane.ops.spec import TensorType
from aurane.records import fields, is_record, replace
from aurane.semantics.block_args import bind_block_call, inner_values
from aurane.semantics.constants import evaluate_constant, per_call, resolve_block
from aurane.semantics.forward import ForwardChecker
from aurane.semantics.inits import read_rules
from aurane.semantics.symbolic import (
    InputSize,
    Ref,
    evaluate,
    is_symbolic,
    leaves,
    plain,
    symbol,
)
from aurane.semantics.uncalled import name_references
from aurane.semantics.values import OpValue, show
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.printer import expr_text


def call_text(name: str, values: dict[str, Any], defaults: dict[str, Any]) -> str:
    """``BasicBlock(128, stride=2)``: required values positionally, changed defaults by name."""
    parts = []
    for key, value in values.items():
        if key not in defaults:
            parts.append(show(plain(value)))
        elif plain(value) != plain(defaults[key]) or type(plain(value)) is not type(
            plain(defaults[key])
        ):
            parts.append(f"{key}={show(plain(value))}")
    return f"{name}({', '.join(parts)})"


def defaults_of(lowerer: Lowering, model: ast.Model) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param in model.params:
        if param.default is not None:
            value, problems = evaluate_constant(lowerer.program, param.default)
            lowerer.diagnostics.extend(problems)
            out[param.name] = value
    return out


def bind(
    lowerer: Lowering,
    model: ast.Model,
    args: tuple[ast.Expr, ...],
    call: ast.Call | None,
    call_span: Span,
) -> dict[str, Any] | None:
    keywords = call.keywords if call is not None else ()
    values, problems = bind_block_call(
        model, args, keywords, call_span, defaults_of(lowerer, model)
    )
    lowerer.diagnostics.extend(problems)
    return values


def values_key(values: dict[str, Any] | None) -> tuple[Any, ...]:
    if values is None:
        return ()
    return tuple(
        (name, repr(plain(v)), type(plain(v)).__name__, getattr(v, "tree", None))
        for name, v in values.items()
    )


def repeated_call(call: ast.Call, rest: tuple[ast.Expr, ...]) -> ast.Call | None:
    """The ``Block(64)`` of ``repeat(Block(64), 2)``."""
    if rest and isinstance(rest[0], ast.Call):
        return rest[0]
    for keyword in call.keywords:
        if keyword.name == "block" and isinstance(keyword.value, ast.Call):
            return keyword.value
    return None


def symbolic_input(shape: tuple[int, ...], input: int = 0) -> tuple[int, ...]:
    """The sizes of the block's input number ``input`` (0: the first) with its channels
    (axis 0) and, for (length, features), features as symbols; the first input's image or
    volume spatial axes too (a class reads them from its input in forward, ``height, width =
    x.shape[2:]``, and folds them into its constructor), and the last axis of a first input
    of five axes or more (the features a dense reads: calls at other sizes share a class)."""
    dims = list(plain(shape))
    for axis in range(len(dims)):
        spatial = input == 0 and len(dims) in (3, 4)
        features = input == 0 and len(dims) >= 5 and axis == len(dims) - 1
        if axis == 0 or (axis == 1 and len(dims) == 2) or spatial or features:
            dims[axis] = symbol(dims[axis], InputSize(axis, input))
    return tuple(dims)


def rebase(value: Any, env: Mapping[str, Any], inputs: tuple[tuple[Any, ...], ...] = ()) -> Any:
    """A block's symbolic number re-expressed in the caller's terms.

    The tree of ``value`` names the block's parameters and input sizes; ``env`` maps each
    parameter to the caller's value and ``inputs`` gives the per-sample sizes of each of the
    call's inputs, first input first (plain numbers, or symbolic numbers of the caller's own
    parameters and inputs), so ``channels`` of ``SqueezeExcitation(h, hidden, 4)`` becomes
    ``hidden`` in the calling block. Anything that cannot be re-expressed becomes plain.
    """
    if isinstance(value, tuple):
        return tuple(rebase(v, env, inputs) for v in value)
    if not is_symbolic(value):
        return value

    def value_of(leaf: Ref | InputSize) -> Any:
        if isinstance(leaf, Ref):
            return env[leaf.name]
        if leaf.input >= len(inputs) or leaf.axis >= len(inputs[leaf.input]):
            raise KeyError(leaf)
        return inputs[leaf.input][leaf.axis]

    try:
        found = evaluate(value.tree, value_of)
    except (LookupError, ArithmeticError, TypeError, ValueError):  # an item out of range too
        return plain(value)
    return found if found == plain(value) else plain(value)


def output_shape(
    sub: Graph, in_shapes: tuple[tuple[Any, ...], ...], value: Value | None = None
) -> tuple[Any, ...] | None:
    """The shape a block call produces, its symbols re-expressed at the call site.

    ``in_shapes``: the shape of each of the call's inputs (batch axis first). Plain blocks
    and blocks whose output does not depend on the call give plain numbers, as before.
    ``value``: one output of a block with several (the first by default).
    """
    out = (value or sub.output_value).shape
    if out is None or sub.block_params is None:
        return None if out is None else tuple(plain(out))
    samples = tuple(tuple(shape[1:]) for shape in in_shapes)
    return tuple(rebase(tuple(out), sub.block_args, samples))


def with_plain_sizes(graph: Graph, value: Any, sizes: Container[InputSize]) -> Any:
    """``value`` of the block instance ``graph`` with the input ``sizes`` as the numbers
    this instance has, its other references kept: the value it would be had those sizes
    never been symbolic (a size every call of the block gives alike is written as its
    number). Tuples, lists and dicts item by item."""
    if isinstance(value, dict):
        return {k: with_plain_sizes(graph, v, sizes) for k, v in value.items()}
    if isinstance(value, list):
        return [with_plain_sizes(graph, v, sizes) for v in value]
    if isinstance(value, tuple):
        return tuple(with_plain_sizes(graph, v, sizes) for v in value)
    if not is_symbolic(value) or not any(leaf in sizes for leaf in leaves(value.tree)):
        return value
    env = {name: symbol(plain(v), name) for name, v in graph.block_args.items()}
    inputs = tuple(
        tuple(
            plain(d)
            if InputSize(axis, index) in sizes
            else symbol(plain(d), InputSize(axis, index))
            for axis, d in enumerate(v.sample_shape or ())
        )
        for index, v in enumerate(graph.inputs)
    )
    return rebase(value, env, inputs)


def first_input_terms(graph: Graph, value: Any) -> Any:
    """``value`` of the block instance ``graph`` with the sizes of its inputs after the
    first as numbers: only the first input's sizes and the parameters stay symbolic."""
    later = frozenset(
        InputSize(axis, index)
        for index, v in enumerate(graph.inputs[1:], start=1)
        for axis in range(len(v.sample_shape or ()))
    )
    return with_plain_sizes(graph, value, later)


def _records(node: object) -> Iterator[object]:
    """``node`` and every AST record inside it, depth first (tuples walked through)."""
    if isinstance(node, tuple):
        for item in node:
            yield from _records(item)
    elif is_record(node) and not isinstance(node, Span | type):
        yield node
        for item in fields(node):
            yield from _records(getattr(node, item.name))


def _calls(node: object, out: dict[Span, ast.Call]) -> None:
    for found in _records(node):
        if isinstance(found, ast.Call):
            out.setdefault(found.span, found)


def _inside(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _operation_spans(node: object, names: frozenset[str], out: dict[tuple[int, int], str]) -> None:
    """Where each of ``names`` is applied as an operation: a suffix (``.act``), a step
    (``-> act``) or a call (``act(h)``), by the start of the name."""
    for found in _records(node):
        if isinstance(found, ast.Suffix) and found.name in names:  # a suffix starts at its dot
            out[(found.span.line, found.span.column)] = found.name
        elif isinstance(found, ast.Call) and found.func in names:
            out[(found.func_span.line, found.func_span.column)] = found.func


def parameter_callees(model: ast.Model, values: Mapping[str, Any]) -> dict[tuple[int, int], str]:
    """Where ``model``'s forward calls one of its model-valued parameters (``block(width)``,
    ``block(x, width)``), by the start of the name, with the parameter: lowering numbers
    those calls after the parameter (``block1``), as the source writes them, whichever
    block the instance was given; the backend's one class names its layers alike."""
    names = frozenset(
        name for name, value in values.items() if isinstance(value, OpValue) and value.is_model
    )
    if not names or model.forward is None:
        return {}
    return {
        (found.func_span.line, found.func_span.column): found.func
        for found in _records(model.forward)
        if isinstance(found, ast.Call) and found.func in names
    }


# per use of a loop variable (by where its name starts): the loop's header and, iteration
# by iteration, the parameter the variable holds there (None: some other value)
LoopUses = dict[tuple[int, int], tuple[Span, tuple[str | None, ...]]]


def _loop_uses(model: ast.Model, names: frozenset[str]) -> LoopUses:
    """Where a loop variable of ``for a in [act, relu]`` (or ``for w, a in [(8, act), ...]``,
    over a list written there or a block constant holding one, or such a list in a
    ``zip`` or an ``enumerate``: ``for w, a in zip(widths, [act, gelu])``) is used, and which of
    ``names`` each iteration binds it to: an operation or block reaching a step, a suffix,
    a call or an inner block through the loop variable."""
    fields = {f.name: f.value for f in model.fields}
    out: LoopUses = {}

    def component(item: ast.Expr, target: ast.LoopTarget, name: str) -> ast.Expr | None:
        if target.name is not None:
            return item if target.name == name else None
        if not isinstance(item, ast.TupleExpr | ast.ListExpr):
            return None
        if len(item.items) != len(target.items):
            return None
        for sub_item, sub_target in zip(item.items, target.items, strict=True):
            found = component(sub_item, sub_target, name)
            if found is not None:
                return found
        return None

    def visit(stmts: tuple[ast.ForwardStmt, ...]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                for branch in stmt.branches:
                    visit(branch.body)
            elif isinstance(stmt, ast.For):
                loop(stmt)
                visit(stmt.body)

    def column(iterable: ast.Expr, target: ast.LoopTarget, name: str) -> list[ast.Expr | None]:
        """Iteration by iteration, what ``iterable`` binds ``name`` of ``target`` to: the
        items of a list (written there or a block constant), or of the list of a ``zip``
        or an ``enumerate`` that the name draws from; empty where it is none of those."""
        if isinstance(iterable, ast.Name):
            iterable = fields.get(iterable.id, iterable)
        if isinstance(iterable, ast.ListExpr | ast.TupleExpr):
            return [component(item, target, name) for item in iterable.items]
        if not isinstance(iterable, ast.Call) or iterable.keywords or target.name is not None:
            return []
        if iterable.func == "enumerate" and len(iterable.args) == 1 and len(target.items) == 2:
            return column(iterable.args[0], target.items[1], name)
        if iterable.func == "zip" and len(iterable.args) == len(target.items):
            for arg, sub in zip(iterable.args, target.items, strict=True):
                if name in {n for n, _ in sub.names()}:
                    return column(arg, sub, name)
        return []

    def loop(stmt: ast.For) -> None:
        for name, _ in stmt.target.names():
            bound = []
            for found in column(stmt.iterable, stmt.target, name):
                ref = found.id if isinstance(found, ast.Name) else None
                bound.append(ref if ref in names else None)
            if any(bound):
                for start in _uses(stmt.body, name):
                    out[start] = (stmt.header_span, tuple(bound))

    if model.forward is not None:
        visit(model.forward.body)
    return out


def _uses(body: tuple[ast.ForwardStmt, ...], name: str) -> Iterator[tuple[int, int]]:
    """Where ``name`` is used in ``body`` (a name, a call's function, a suffix), not inside a
    loop that binds it again."""
    for stmt in body:
        if isinstance(stmt, ast.For) and name in {n for n, _ in stmt.target.names()}:
            continue
        for found in _records(stmt):
            if isinstance(found, ast.Name | ast.Suffix) and name == (
                found.id if isinstance(found, ast.Name) else found.name
            ):
                yield (found.span.line, found.span.column)  # a suffix starts at its dot
            elif isinstance(found, ast.Call) and found.func == name:
                yield (found.func_span.line, found.func_span.column)


def _bound_at(uses: LoopUses, start: tuple[int, int], node: Node) -> str | None:
    """The parameter the loop variable used at ``start`` holds in the iteration that made
    ``node``."""
    found = uses.get(start)
    if found is None:
        return None
    header, bound = found
    frame = next((f for f in node.origin if f.kind == "loop" and f.span == header), None)
    if frame is None or frame.index >= len(bound):
        return None
    return bound[frame.index]


def operation_params(
    model: ast.Model,
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    graph: Graph,
    models: Mapping[str, ast.Model],
    of_models: bool = False,
    ran: ast.Forward | None = None,
) -> dict[str, OperationParam]:
    """The operation-valued parameters of an instance (``act = relu``), the nodes that
    apply each, found by the span of the parameter's name, and the block calls it is given
    to (``Inner(8, act)``), so the backend can make the operation a constructor argument
    (``act=nn.ReLU``) passed on as the parameter. ``of_models``: the model-valued
    parameters instead (``block = Basic``), each with the block calls it makes
    (``block(width)``, ``repeat(block(width), 2)``); one whose name is called where no
    block call of the graph starts makes none, so the backend keeps it folded. ``ran``:
    the instance's resolved forward (its loops unrolled, its ``if`` decided), whose calls
    ran."""
    given = {
        name: value
        for name, value in {**defaults, **values}.items()
        if isinstance(value, OpValue) and value.is_model == of_models
    }
    if not given or model.forward is None:
        return {}
    starts: dict[tuple[int, int], str] = {}
    _operation_spans(model.forward, frozenset(given), starts)
    uses = _loop_uses(model, frozenset(given))
    nodes: dict[str, list[str]] = {name: [] for name in given}
    matched: set[tuple[int, int]] = set()
    # repeat(block(width), 2): the repeat's node is the call of the block it copies
    repeated = {
        (c.span.line, c.span.column): (r.func_span.line, r.func_span.column)
        for c in _records(model.forward)
        if isinstance(c, ast.Call) and c.func == "repeat"
        for r in (repeated_call(c, c.args),)
        if r is not None
    }
    for node in graph.nodes:
        start = (node.span.line, node.span.column)
        if of_models and node.op == "repeat":
            start = repeated.get(start, start)
        param = starts.get(start) or _bound_at(uses, start, node)
        if param is None:
            continue
        if of_models:
            applies = node.op in ("block", "repeat") and node.block == given[param].name
        else:
            # an alias given (swish) applies as its operation (silu)
            applies = node.subgraph is None and node.op == (
                canonical(given[param].name) or given[param].name
            )
        if applies:
            nodes[param].append(node.id)
            matched.add(start)
    passed = _passed_on(model, graph, frozenset(given), models, uses)
    executed = {
        (c.func_span.line, c.func_span.column)
        for c in _records(ran or model.forward)
        if isinstance(c, ast.Call)
    }
    by_id = graph.node_by_id
    out = {}
    for name, value in given.items():
        # an inner block given it holds the same operation or block (a check on the loop's)
        passed[name] = [
            (node_id, inner)
            for node_id, inner in passed.get(name, ())
            if _inner_op(by_id[node_id], inner) == value.name
        ]
        default = defaults.get(name)
        missed = of_models and any(
            p == name and s in executed and s not in matched for s, p in starts.items()
        )
        out[name] = OperationParam(
            value.name,
            () if missed else tuple(nodes[name]),
            default.name
            if isinstance(default, OpValue) and default.is_model == of_models
            else None,
            tuple(passed.get(name, ())),
            _applied_bare(model.forward, name),
        )
    return out


def _applied_bare(forward: ast.Forward, name: str) -> bool:
    """Whether ``forward`` applies the operation-valued parameter ``name`` with no argument
    wherever it calls it (``act()``; a suffix ``.act`` takes none) and passes it to no
    call (``Inner(8, act)``): ``OperationParam.bare``."""
    for found in _records(forward):
        if not isinstance(found, ast.Call):
            continue
        if found.func == name and (found.args or found.keywords):
            return False
        values = [*found.args, *(k.value for k in found.keywords)]
        if any(isinstance(v, ast.Name) and v.id == name for v in values):
            return False
    return True


def _inner_op(node: Node, param: str) -> str | None:
    """The operation or block the inner block of ``node`` was given for ``param``."""
    sub = node.subgraph
    found = None if sub is None else sub.block_ops.get(param) or sub.block_models.get(param)
    return found.op if found is not None else None


def _passed_on(
    model: ast.Model,
    graph: Graph,
    names: frozenset[str],
    models: Mapping[str, ast.Model],
    uses: LoopUses,
) -> dict[str, list[tuple[str, str]]]:
    """Per operation- or model-valued parameter of ``names``: the block calls whose
    argument is the parameter itself (``Inner(8, act)``, ``Inner(8, act=act)``), or a loop
    variable holding it in that iteration (``for a in [act, relu]: Inner(8, a)``), with the
    inner block's parameter that receives it (one of the inner instance's operation or
    model parameters)."""
    assert model.forward is not None
    calls: dict[Span, ast.Call] = {}
    _calls(model.forward, calls)
    steps: set[Span] = set()
    _chain_steps(model.forward, steps)
    out: dict[str, list[tuple[str, str]]] = {}
    for node in graph.nodes:
        call, sub = calls.get(node.span), node.subgraph
        inner = models.get(call.func) if call is not None else None
        if call is None or sub is None or inner is None or sub.block_params is None:
            continue
        # the tensors come first in a call (a chain step's first is the chain's value)
        tensors = max(len(sub.inputs) - (1 if call.span in steps else 0), 0)
        given = [(p.name, a) for p, a in zip(inner.params, call.args[tensors:], strict=False)]
        given += [(k.name, k.value) for k in call.keywords]
        for param, arg in given:
            ref = arg.id if isinstance(arg, ast.Name) else getattr(arg, "name", None)
            if isinstance(arg, ast.Name) and ref not in names:
                ref = _bound_at(uses, (arg.span.line, arg.span.column), node)
            receives = sub.block_ops.get(param) or sub.block_models.get(param)
            if isinstance(arg, ast.Name | ast.OpRef) and ref in names and receives is not None:
                out.setdefault(ref, []).append((node.id, param))
    return out


def _chain_steps(node: object, out: set[Span]) -> None:
    """The spans of the calls that are chain steps (their input is the chain's value)."""
    for found in _records(node):
        if isinstance(found, ast.Chain):
            out.update(step.span for step in found.steps)


def text_refs(
    model: ast.Model, values: Mapping[str, Any], graph: Graph
) -> dict[str, dict[str, str]]:
    """Boolean and string arguments of the instance's nodes that a parameter gave, by name.

    Numbers remember their parameter through symbolic numbers; booleans and strings cannot,
    so the argument whose span holds a reference to the parameter is recorded instead
    (``conv2d(..., bias=use_bias)``), letting the backend write ``bias=use_bias``.
    """
    names = frozenset(k for k, v in values.items() if isinstance(v, bool | str))
    if not names or model.forward is None:
        return {}
    spans = name_references(model.forward, names)
    calls: dict[Span, ast.Call] = {}
    _calls(model.forward, calls)
    out: dict[str, dict[str, str]] = {}
    for node in graph.nodes:
        call = calls.get(node.span)
        given = node.args.get("arguments") if node.subgraph is not None else None
        if call is not None and isinstance(given, Mapping):
            for kw in call.keywords:  # Inner(h, flag=use_bias): the inner call's argument
                param = spans.get(kw.value.span)
                if param is not None and type(given.get(kw.name)) is type(values[param]):
                    out.setdefault(node.id, {})[f"arguments.{kw.name}"] = param
        for arg, arg_span in node.arg_spans.items():
            for ref, param in spans.items():
                value = node.args.get(arg)
                if (
                    _inside(ref, arg_span)
                    and type(value) is type(values[param])
                    and value == values[param]
                ):
                    out.setdefault(node.id, {})[arg] = param
    return out


def lower_instance(
    lowerer: Lowering,
    model: ast.Model,
    values: dict[str, Any],
    input_type: TensorType,
    call_span: Span,
    more: tuple[tuple[TensorType, Span], ...] = (),
) -> Graph | None:
    """``more``: the types of the inputs after the first (a block with several)."""
    defaults = defaults_of(lowerer, model)
    shown_call = f"in the call {call_text(model.name, values, defaults)}"
    symbolic = symbolic_input(input_type.shape)
    # the other inputs' channel/feature sizes are symbolic too: one class for every call
    more = tuple(
        (TensorType(symbolic_input(t.shape, index), t.dtype), span)
        for index, (t, span) in enumerate(more, start=1)
    )
    instance, problems = resolve_block(lowerer.program, model, inner_values(values), symbolic)
    checker = _checker(lowerer, problems)
    if instance.forward is not None and not any(d.is_error for d in problems):
        checker.run(instance.forward)
    lowerer.instances.append(instance)
    before = len(lowerer.diagnostics)
    lowerer.diagnostics.extend(problems)
    graph = None
    if not any(d.is_error for d in problems) and instance.forward is not None:
        info = model_info(instance)
        if (
            info.input_shape is not None
            and not more
            and tuple(info.input_shape) != plain(input_type.shape)
        ):
            lowerer.diagnostics.append(
                _shape_refused(model, info.input_shape, input_type, call_span)
            )
        else:
            graph = lowerer.lower_model(
                instance,
                info,
                TensorType(symbolic, input_type.dtype),
                instance.forward.param_span,
                model.name,
                input_origin=f"the call at {call_span}",
                more_inputs=more,
                callees=parameter_callees(model, values),
            )
    for index in range(before, len(lowerer.diagnostics)):
        found = lowerer.diagnostics[index]
        if found.is_error or found.code.startswith("S"):
            label = Label(call_span, f"{shown_call}, input {shape_text(input_type.shape)}")
            lowerer.diagnostics[index] = replace(found, labels=(*found.labels, label))
    if graph is None:
        return None
    # an operation-valued parameter (act=relu) shapes the class itself: until one class per
    # block definition (issue 24 item 3), it is no constructor argument
    kept = [
        p.name
        for p in model.params
        if not isinstance(values.get(p.name), OpValue)
        and not isinstance(defaults.get(p.name), OpValue)
    ]
    return replace(
        graph,
        block_params=tuple(kept),
        block_args={k: v for k, v in values.items() if k in kept},
        block_defaults={k: v for k, v in defaults.items() if k in kept},
        block_refs=text_refs(model, {k: v for k, v in values.items() if k in kept}, graph),
        block_ops=operation_params(model, values, defaults, graph, lowerer.models),
        block_models=operation_params(
            model, values, defaults, graph, lowerer.models, True, instance.forward
        ),
    )


def lower_variant(
    lowerer: Lowering,
    variant: ast.Model,
    info: ModelInfo,
    input_type: TensorType,
    input_span: Span,
    graph_name: str,
    input_origin: str | None = None,
    more_inputs: tuple[tuple[TensorType, Span], ...] = (),
) -> Graph | None:
    """``model resnet50 = ResNet(Bottleneck, [3, 4, 6, 3])``: the block's forward with those
    arguments, lowered as the variant itself (its layers at the root, its own input_shape,
    dtype and init rules)."""
    base = variant.base
    assert base is not None
    model = lowerer.models.get(base.func)
    if model is None or (model.forward is None and model.base is None):
        return None  # S128, reported by the semantic pass
    before = len(lowerer.diagnostics)
    if model.base is not None:  # a variant of a variant
        graph = lower_variant(
            lowerer, model, info, input_type, input_span, graph_name, input_origin, more_inputs
        )
    elif per_call(model):
        values = bind(lowerer, model, base.args, base, base.span) if model.params else {}
        graph = None
        if values is not None:
            graph = _lower_resolved(
                lowerer,
                model,
                values,
                info,
                input_type,
                input_span,
                graph_name,
                input_origin,
                more_inputs,
            )
    else:
        if base.args or base.keywords:
            from aurane.codes import diag

            extra = (*base.args, *base.keywords)[0]
            lowerer.diagnostics.append(
                diag(
                    "S006",
                    f"model '{model.name}' declares no parameters and takes no arguments",
                    extra.span,
                    hint=f"declare them in its header: model {model.name}(width):",
                )
            )
            return None
        assert model.forward is not None
        graph = lowerer.lower_model(
            model, info, input_type, input_span, graph_name, input_origin, more_inputs
        )
    label = Label(variant.name_span, f"in the variant {variant.name} = {expr_text(base)}")
    for index in range(before, len(lowerer.diagnostics)):
        found = lowerer.diagnostics[index]
        if label not in found.labels:
            lowerer.diagnostics[index] = replace(found, labels=(*found.labels, label))
    if graph is None:
        return None
    rules, problems = read_rules(variant)  # the variant's own rules come after the block's
    lowerer.diagnostics.extend(problems)
    return replace(
        graph, name=graph_name, span=variant.span, init_rules=(*graph.init_rules, *rules)
    )


def _lower_resolved(
    lowerer: Lowering,
    model: ast.Model,
    values: dict[str, Any],
    info: ModelInfo,
    input_type: TensorType,
    input_span: Span,
    graph_name: str,
    input_origin: str | None,
    more_inputs: tuple[tuple[TensorType, Span], ...] = (),
) -> Graph | None:
    """A per-call block resolved with plain values, lowered as a standalone model."""
    instance, problems = resolve_block(lowerer.program, model, dict(values), input_type.shape)
    checker = _checker(lowerer, problems)
    if instance.forward is not None and not any(d.is_error for d in problems):
        checker.run(instance.forward)
    lowerer.instances.append(instance)
    lowerer.diagnostics.extend(problems)
    if any(d.is_error for d in problems) or instance.forward is None:
        return None
    return lowerer.lower_model(
        instance,
        info,
        input_type,
        input_span,
        graph_name,
        input_origin,
        more_inputs,
        parameter_callees(model, values),
    )


def _checker(lowerer: Lowering, problems: list[Diagnostic]) -> ForwardChecker:
    """The forward checker of a per-call block body, knowing every block's inputs (a block
    with several inputs called inside it: ``CrossAttention(h, memory, keep)``)."""
    checker = ForwardChecker(set(lowerer.models), problems, lowerer.bound)
    checker.parameterised = frozenset(n for n, m in lowerer.models.items() if m.params)
    checker.block_inputs = {
        n: m.forward.inputs for n, m in lowerer.models.items() if m.forward and m.forward.params
    }
    return checker


def _shape_refused(
    model: ast.Model, declared: tuple[int, ...], input_type: TensorType, call_span: Span
) -> Diagnostic:
    from aurane.codes import diag

    return diag(
        "T010",
        f"block '{model.name}' expects input shape {shape_text(declared)}, "
        f"called with {shape_text(input_type.shape)}",
        call_span,
    )


__all__ = [
    "bind",
    "call_text",
    "first_input_terms",
    "is_symbolic",
    "lower_instance",
    "output_shape",
    "rebase",
    "values_key",
    "with_plain_sizes",
]
