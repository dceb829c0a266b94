"""The flags that may change a size a class writes as its number (issue 24 item 3).

A size folded into a module (``nn.Linear(3, w)``, the 3 the last axis after
``avgpool(2, ceil_mode=c)`` of 7) is right at the calls' values of what changes it. A
numeric parameter shows in the size's tree; a boolean or string one does not (``c``: 3 at
``False``, 4 at ``True``). Of the flags a call before the size reads, a flag that gave
arguments of a built-in operation is tried at its other value: one that leaves the
operation's output shape as it is (``bias=b``) cannot change the size; any other is taken
as changing it.

An integer parameter shows in the size's tree, except where a shape rule loses it
(``slice(start=k)`` of ``w`` features: ``w - k``, written as a plain number):
``hidden_params`` tries each integer an operation's operands read at another value and
compares the rule's shape with what its output sizes' trees say there; its input sizes'
integers too where it is given a number (``slice(start=2)`` of ``w``: ``w - 2``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aurane.ir.graph import Graph, Node
from aurane.ops import bind_defaults, lookup
from aurane.ops.spec import InferContext, OpSpec, TensorType
from aurane.semantics.symbolic import (
    Expr,
    Ref,
    evaluate,
    is_symbolic,
    leaves,
    plain,
    symbol,
    tree_of,
)


def size_flags(graph: Graph, node: Node, read: Iterable[str]) -> set[str]:
    """Of the block parameters ``read`` (those the call making ``node`` of the instance
    ``graph`` reads), the boolean and string ones that may change ``node``'s output shape."""
    given = {**graph.block_defaults, **graph.block_args}
    flags = {p for p in read if isinstance(plain(given.get(p)), bool | str)}
    spec = lookup(node.op) if node.op not in ("block", "repeat") else None
    refs = graph.block_refs.get(node.id, {})
    kept: set[str] = set()
    for param in flags:
        value = plain(given.get(param))
        args = [arg for arg, ref in refs.items() if ref == param and "." not in arg]
        if spec is None or not args or not isinstance(value, bool):
            kept.add(param)  # a string, a block's or one read in an expression: may
        elif not _same_shape(graph, node, spec, {arg: not value for arg in args}):
            kept.add(param)
    return kept


def _same_shape(graph: Graph, node: Node, spec: OpSpec, changed: dict[str, Any]) -> bool:
    """Whether ``node`` infers the same output shape with the arguments ``changed``; False
    where either cannot be inferred here."""
    values = {v.name: v for v in graph.values}
    types = []
    for name in node.inputs:
        value = values.get(name)
        if value is None or value.shape is None:
            return False
        types.append(TensorType(tuple(plain(value.shape[1:])), value.dtype))
    args = {name: plain(value) for name, value in node.args.items()}
    try:
        shapes = [
            tuple(
                spec.infer(
                    InferContext.of_node(
                        bind_defaults(spec, given), tuple(types), graph.param_dtype
                    )
                ).shape
            )
            for given in (args, {**args, **changed})
        ]
    except Exception:  # noqa: BLE001 - an argument set the rule refuses: taken as changing it
        return False
    return shapes[0] == shapes[1]


def resizing_args(graph: Graph, node: Node, names: Iterable[str], threaded: int) -> set[str]:
    """Of ``node``'s arguments ``names`` (those the source writes as expressions: a loop's
    item ``k``, ``k // 2``), the whole numbers (or tuples of them) whose other values make
    the operation's output another rank or another size on an axis of the sample other
    than ``threaded`` (``conv1d(c, k, padding=k // 2)``: the length at an even ``k``). A
    size after it that the class writes as the calls' number could then be wrong at other
    arguments, though every call keeps it. Values the rule refuses are not counted: torch
    refuses them too, loudly."""
    spec = lookup(node.op) if node.op not in ("block", "repeat") else None
    values = {v.name: v for v in graph.values}
    types = []
    for name in node.inputs:
        value = values.get(name)
        if spec is None or value is None or value.shape is None:
            return set()
        types.append(TensorType(tuple(plain(value.shape[1:])), value.dtype))
    args = {name: plain(value) for name, value in node.args.items()}

    def shape_at(changed: dict[str, Any]) -> tuple[Any, ...] | None:
        assert spec is not None
        given = bind_defaults(spec, {**args, **changed})
        try:
            context = InferContext.of_node(given, tuple(types), graph.param_dtype)
            return tuple(spec.infer(context).shape)
        except Exception:  # noqa: BLE001 - refused at those arguments
            return None

    base = shape_at({})
    if base is None:
        return set()
    kept = threaded if threaded >= 0 else len(base) + threaded
    found: set[str] = set()
    for name in names:
        for other in _others(args.get(name)):
            shape = shape_at({name: other})
            if shape is None:
                continue
            if len(shape) != len(base) or any(
                a != b for axis, (a, b) in enumerate(zip(base, shape, strict=True)) if axis != kept
            ):
                found.add(name)
                break
    return found


def passes_input_sizes(graph: Graph, node: Node, threaded: int) -> bool:
    """Whether ``node``'s output sizes on the sample's axes other than ``threaded`` may
    follow its inputs' sizes there (a convolution's length does; ``adaptive_avg_pool((7,
    7))``'s sizes do not): a size an argument before it changed may reach the sizes after
    it. True where the rule cannot tell (a block's, a refused size)."""
    spec = lookup(node.op) if node.op not in ("block", "repeat") else None
    if spec is None:
        return True
    values = {v.name: v for v in graph.values}
    shapes = []
    for name in node.inputs:
        value = values.get(name)
        if value is None or value.shape is None:
            return True
        shapes.append((tuple(plain(value.shape[1:])), value.dtype))
    given = bind_defaults(spec, {name: plain(value) for name, value in node.args.items()})

    def shape_at(step: int) -> tuple[Any, ...]:
        types = tuple(
            TensorType(
                tuple(
                    size + step
                    if type(size) is int and axis != _index(threaded, len(shape))
                    else size
                    for axis, size in enumerate(shape)
                ),
                dtype,
            )
            for shape, dtype in shapes
        )
        return tuple(spec.infer(InferContext.of_node(given, types, graph.param_dtype)).shape)

    try:
        base, other = shape_at(0), shape_at(1)
    except Exception:  # noqa: BLE001 - refused at other input sizes: cannot tell
        return True
    kept = _index(threaded, len(base))
    return len(base) != len(other) or any(
        a != b for axis, (a, b) in enumerate(zip(base, other, strict=True)) if axis != kept
    )


def _index(axis: int, rank: int) -> int:
    return axis if axis >= 0 else rank + axis


def _others(value: Any) -> list[Any]:
    """A few other whole numbers (tuples too, item by item) than ``value``: what other
    calls or loop items could give; none for another kind of value."""
    if type(value) is int:
        return [value + 1, value + 2, 2 * value + 1]
    if isinstance(value, tuple) and value and all(type(v) is int for v in value):
        return [
            tuple(v + step if i == at else v for i, v in enumerate(value))
            for at in range(len(value))
            for step in (1, 2)
        ]
    return []


def hidden_params(graph: Graph, node: Node) -> set[str]:
    """The integer block parameters ``node``'s operands read (its arguments, then its
    inputs' sizes, as trees) whose next value changes its output shape other than its
    sizes' trees say (``slice(start=k)`` of ``w`` features: ``w - k``, a plain number): a
    class writing a size after it is right at their calls' values only. One at which the
    rule refuses the operation is not counted: torch refuses it too, loudly."""
    spec = lookup(node.op) if node.op not in ("block", "repeat") else None
    values = {v.name: v for v in graph.values}
    operands = [values.get(name) for name in node.inputs]
    out = values.get(node.output)
    if spec is None or out is None or out.shape is None:
        return set()
    shapes = [v.shape[1:] for v in operands if v is not None and v.shape is not None]
    if len(shapes) != len(operands):
        return set()
    # the parameters its arguments read first: a rule that loses an argument's tree
    # (``slice(start=k)``) may lose its input sizes' too (``w``), and so may one given
    # plain numbers (``slice(start=2)`` of ``w``: ``w - 2``, a plain number); one given no
    # number, which only picks between input sizes (matmul's broadcast of ``groups`` at
    # 1), is left alone, where forward reads sizes from the tensors
    found = _hidden(graph, node, spec, _reads(tuple(node.args.values())))
    if found or any(True for _ in _numbers(tuple(node.args.values()))):
        found |= _hidden(graph, node, spec, _reads(tuple(shapes)))
    return found


def _reads(value: Any) -> set[str]:
    """The block parameters the trees of the numbers of ``value`` read."""
    trees = [x.tree for x in _numbers(value) if is_symbolic(x)]
    return {leaf.name for tree in trees for leaf in leaves(tree) if isinstance(leaf, Ref)}


def _hidden(graph: Graph, node: Node, spec: OpSpec, read: set[str]) -> set[str]:
    """Of the block parameters ``read``, the integers whose next value changes ``node``'s
    output shape other than its sizes' trees say (``hidden_params``)."""
    values = {v.name: v for v in graph.values}
    shapes = [values[name].shape or () for name in node.inputs]
    dtypes = [values[name].dtype for name in node.inputs]
    out = values[node.output].shape or ()
    given = {name: plain(v) for name, v in {**graph.block_defaults, **graph.block_args}.items()}
    found: set[str] = set()
    for param in sorted(p for p in read if type(given.get(p)) is int):
        at = {**given, param: given[param] + 1}

        def value_of(leaf: Any, at: dict[str, Any] = at) -> Any:
            if isinstance(leaf, Ref):
                return at[leaf.name]
            return plain(graph.inputs[leaf.input].sample_shape or ())[leaf.axis]

        try:
            types = tuple(
                TensorType(tuple(_at(shape[1:], value_of)), dtype)
                for shape, dtype in zip(shapes, dtypes, strict=True)
            )
            args = {name: _at(value, value_of) for name, value in node.args.items()}
            context = InferContext.of_node(bind_defaults(spec, args), types, graph.param_dtype)
            got = tuple(spec.infer(context).shape)
            said = tuple(_at(out[1:], value_of))
        except Exception:  # noqa: BLE001 - refused at that value, or not evaluable here
            continue
        if got != said:
            found.add(param)
    return found


def _numbers(value: Any) -> Iterable[Any]:
    """The numbers of a value, tuples, lists and dicts item by item."""
    if isinstance(value, tuple | list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield value


def _at(value: Any, value_of: Any) -> Any:
    """``value`` with each symbolic number's tree evaluated by ``value_of``."""
    if is_symbolic(value):
        return evaluate(value.tree, value_of)
    if isinstance(value, tuple):
        return tuple(_at(item, value_of) for item in value)
    if isinstance(value, list):
        return [_at(item, value_of) for item in value]
    if isinstance(value, dict):
        return {key: _at(item, value_of) for key, item in value.items()}
    return plain(value)


# a leaf standing for an argument's source text (``k // 2``) in a size's tree
ARGUMENT = "\x00argument "


def spatial_trees(
    graph: Graph, node: Node, sizes: Mapping[int, Expr], args: Mapping[str, Any]
) -> dict[int, Expr] | None:
    """The sizes of ``node``'s output on the sample's axes ``sizes`` names, as trees: the
    operation catalog's shape rule run at symbolic sizes (each axis of ``sizes`` its tree,
    each of ``args`` a symbolic argument), so a running size is updated as the rule
    computes it (``length + 2 * (k // 2) - k + 1`` after ``conv1d(c, k, padding=k //
    2)``), never by a formula written per operation. None where the rule refuses them,
    changes the rank or takes more than one input."""
    spec = lookup(node.op) if node.op not in ("block", "repeat") else None
    values = {v.name: v for v in graph.values}
    if spec is None or len(node.inputs) != 1:
        return None
    value = values.get(node.inputs[0])
    if value is None or value.shape is None:
        return None
    shape = tuple(plain(value.shape[1:]))
    if any(axis >= len(shape) for axis in sizes):
        return None
    symbolic = tuple(
        symbol(size, sizes[axis]) if axis in sizes else size for axis, size in enumerate(shape)
    )
    given = {name: plain(v) for name, v in node.args.items()} | dict(args)
    try:
        context = InferContext.of_node(
            bind_defaults(spec, given), (TensorType(symbolic, value.dtype),), graph.param_dtype
        )
        out = tuple(spec.infer(context).shape)
    except Exception:  # noqa: BLE001 - refused at symbolic sizes: not tracked
        return None
    if len(out) != len(shape):
        return None
    return {axis: tree_of(out[axis]) for axis in sizes}


def keeps_arguments(
    graph: Graph,
    node: Node,
    trees: Mapping[int, Expr],
    args: Mapping[str, Any],
    value_of: Callable[[Ref], Any],
) -> bool:
    """Whether the spatial sizes' ``trees`` (``spatial_trees`` of ``node`` at the symbolic
    ``args``) give what the shape rule gives at other values of each argument: a rule
    that loses an argument's tree (``slice(start=k)``, a plain number) would leave a size
    right at this visit only. ``value_of``: a leaf's value at this visit. Values the rule
    refuses are not counted: torch refuses them too, loudly."""
    spec = lookup(node.op)
    value = {v.name: v for v in graph.values}[node.inputs[0]]
    types = (TensorType(tuple(plain((value.shape or ())[1:])), value.dtype),)
    given = {name: plain(v) for name, v in node.args.items()}
    assert spec is not None
    for name, arg in args.items():
        items = arg if isinstance(arg, tuple) else (arg,)
        for at, item in enumerate(items):
            if not is_symbolic(item):
                continue
            leaf = item.tree
            for other in (int(item) + 1, int(item) + 2, 2 * int(item) + 1):
                changed = tuple(other if i == at else plain(v) for i, v in enumerate(items))
                try:
                    context = InferContext.of_node(
                        bind_defaults(
                            spec, {**given, name: changed if isinstance(arg, tuple) else other}
                        ),
                        types,
                        graph.param_dtype,
                    )
                    shape = tuple(spec.infer(context).shape)
                except Exception:  # noqa: BLE001 - refused at that value
                    continue

                def at_other(ref: Any, leaf: Any = leaf, other: int = other) -> Any:
                    return other if ref == leaf else value_of(ref)

                for axis, tree in trees.items():
                    if axis >= len(shape) or evaluate(tree, at_other) != shape[axis]:
                        return False
    return True
