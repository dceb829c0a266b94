"""Traced nodes to catalog operations: the flat ``LiftedGraph``.

Every node of the traced graph becomes one of:

- an ``Op`` (a layer, or a function with a catalog operation), its result a tensor value;
- a Python value observed in both runs (sizes, flags), used as an argument;
- a constant tensor (computed without the input: masks, position ids), only meaningful to
  the patterns that consume it (``aurane.lift.patterns``);
- a parameter or buffer read directly (``self.class_token``), which becomes a
  ``parameter(...)`` operation where a tensor operation uses it;
- several of these (``torch.chunk``, ``nn.MultiheadAttention``'s ``(output, weights)``).

What cannot be expressed becomes a ``Gap`` at the module path and Python line responsible;
lowering goes on past it (with ``--partial`` the rest is still written) by treating the
unexpressible result as the value of an ``identity`` placeholder when the shape allows.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx, nn

from aurane.lift import functions, layers, patterns
from aurane.lift.graph import GAP_ORIGIN, SHARED, Gap, LiftedGraph, Op, Scope
from aurane.lift.inputs import Input
from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import NO_LITERAL, Lowering
from aurane.lift.outputs import choose_output
from aurane.lift.patterns import drop_repeated_heads, find_rotary
from aurane.lift.refs import (
    BATCH,
    UNKNOWN,
    ConstRef,
    ParamRef,
    Pieces,
    Py,
    Stop,
    TensorRef,
    call_name,
    function_label,
    size,
    static,
)
from aurane.lift.trace import EXPORT, Traced, placeholder_inputs
from aurane.lift.values import FIRST, SECOND, Meta, Observed, dtype_name
from aurane.ops import CATALOG
from aurane.ops.index import fill_argument

# creation functions rebuilt per sample where their first size is the batch
FILLED = frozenset({"ones", "zeros", "full"})

IGNORED = frozenset(
    {"_assert", "_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range_for_size"}
)
_PASS_THROUGH = frozenset(
    {"to", "_to_copy", "alias", "clone", "contiguous", "detach", "lift_fresh_copy", "type_as"}
)


class Lowerer(Lowering):
    """Walks the traced graph once, in order, keeping what each node stands for (``env``)."""

    def __init__(
        self,
        traced: Traced,
        observed: Observed,
        output_names: list[str] | None = None,
        wanted_output: str | None = None,
    ) -> None:
        super().__init__(traced, observed, output_names, wanted_output)
        self.leaf_groups = self._leaf_groups() if traced.tracer == EXPORT else {}
        self.rotary = find_rotary(self.module, observed)
        self.rebuilt: dict[fx.Node, TensorRef] = {}  # constants rebuilt as operations
        self.folded = {inner for found in self.rotary.values() for inner in found.inner}

    # -- scopes ------------------------------------------------------------------------------

    def _module_at(self, path: str) -> nn.Module | None:
        return self.modules.get(path)

    def _scope_of(self, node: fx.Node) -> tuple[tuple[Scope, ...], Scope | None]:
        """The non-leaf module calls ``node`` ran in, and the layer call it ran in (if any)."""
        stack = node.meta.get("nn_module_stack") or {}
        scopes: list[Scope] = []
        for key, entry in stack.items():
            path = entry[0] if isinstance(entry, tuple) else str(entry)
            module = self._module_at(path)
            if module is None or path == "":
                continue
            if layers.is_leaf(module):
                return tuple(scopes), Scope(str(key), path, type(module))
            scopes.append(Scope(str(key), path, type(module)))
        return tuple(scopes), None

    def _leaf_groups(self) -> dict[fx.Node, Scope]:
        """Export graphs: the nodes that run inside a known layer, by the layer's call."""
        found: dict[fx.Node, Scope] = {}
        for node in self.module.graph.nodes:
            if node.op not in ("call_function", "get_attr"):
                continue
            _, leaf = self._scope_of(node)
            if leaf is not None:
                found[node] = leaf
                self.members.setdefault(leaf.key, []).append(node)
        return found

    # -- driver ------------------------------------------------------------------------------

    def run(self, inputs: list[Input]) -> LiftedGraph:
        self.input_shape = inputs[0].shape
        self.input_dtype = inputs[0].dtype
        self.input_ids = {item.name: input_id(index, item) for index, item in enumerate(inputs)}
        self.input_values = {self.input_ids[item.name]: (item.shape, item.dtype) for item in inputs}
        graph = self.module.graph
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        names = placeholder_inputs(self.module, [item.name for item in inputs])
        for node, name in zip(placeholders, names, strict=True):
            if name is not None:
                self.env[node] = TensorRef(self.input_ids[name])
            else:
                self.env[node] = Py(None, None)  # an optional argument left at its default
        output: Any = None
        handled_groups: set[str] = set()
        for node in graph.nodes:
            if node.op in ("placeholder",):
                continue
            self.node = node
            if node.op == "output":
                output = node.args[0]
                continue
            self.scope, _ = self._scope_of(node)
            leaf = self.leaf_groups.get(node)
            if leaf is not None:
                self._lower_export_leaf(node, leaf, handled_groups)
                continue
            if node in self.folded and all(
                u in self.folded or u in self.rotary for u in node.users
            ):
                self.env[node] = Py(None, None)  # part of a recognised pattern
                continue
            try:
                self.env[node] = self._lower(node)
            except Unexpressible as error:  # at the layer's own path, or the module's
                self.gap(
                    error.what, error.why, str(node.target) if node.op == "call_module" else None
                )
                self.env[node] = self._placeholder(node)
            except Stop:
                self.env[node] = self._placeholder(node)
        return self._finish(output)

    def _placeholder(self, node: fx.Node) -> Any:
        """After a gap: an ``identity`` of the first tensor input when the shape allows,
        else a value marked unknown (what reads it stops too, without a second report)."""
        first, second = self.meta(node)
        if not isinstance(first, Meta):
            return _unknown_like(first, node.name) if _holds_meta(first) else Py(first, second)
        for arg in node.all_input_nodes:
            ref = self.env.get(arg)
            if (
                isinstance(ref, TensorRef)
                and not ref.id.startswith(UNKNOWN)
                and self.shape_of(ref) == first.shape[1:]
            ):
                gap = self.gaps[-1].describe() if self.gaps else "a part above"
                return self.emit("identity", (ref.id,), {}, first, origin=f"{GAP_ORIGIN}{gap}")
        return TensorRef(f"{UNKNOWN}{node.name}")

    # -- export: a layer's nodes folded back into the layer ------------------------------------

    def _group_output(self, node: fx.Node, leaf: Scope) -> bool:
        return any(self.leaf_groups.get(user) != leaf for user in node.users)

    def _alias_source(self, node: fx.Node, leaf: Scope) -> Any:
        """A layer node that only passes its input on (``x.to(float32)`` of a float32 ``x``
        inside an RMS norm, read again by the residual): the input's reference, or None."""
        current = node
        while self.leaf_groups.get(current) == leaf:
            if call_name(current) not in _PASS_THROUGH or not current.args:
                return None
            source = current.args[0]
            if not isinstance(source, fx.Node):
                return None
            before, after = self.observed.seen[source].first, self.observed.seen[current].first
            if not (isinstance(before, Meta) and before == after):
                return None
            current = source
        return self.env.get(current)

    def _lower_export_leaf(self, node: fx.Node, leaf: Scope, handled: set[str]) -> None:
        if not self._group_output(node, leaf):
            self.env[node] = Py(None, None)  # inside the layer: its value is not needed
            return
        alias = self._alias_source(node, leaf)
        if alias is not None:
            self.env[node] = alias
            return
        if leaf.key in handled:
            self.gap(
                layers.class_label(self.modules[leaf.path]),
                "two of its results are used outside it; a layer gives one",
                leaf.path,
            )
            self.env[node] = self._placeholder(node)
            return
        handled.add(leaf.key)
        inputs: list[Any] = []
        for member in self.members[leaf.key]:
            for arg in member.all_input_nodes:
                if self.leaf_groups.get(arg) == leaf or arg.op == "get_attr":
                    continue
                ref = self.env.get(arg)
                if isinstance(ref, TensorRef | ConstRef) and ref not in inputs:
                    inputs.append(ref)
        module = self.modules[leaf.path]
        tensors = [ref for ref in inputs if isinstance(ref, TensorRef)]
        if isinstance(module, nn.MultiheadAttention) and len(tensors) in (1, 2):
            inputs = [tensors[0], tensors[-1], tensors[-1]]  # self- or cross-attention
        try:
            result = self._layer(module, leaf.path, inputs, {}, node)
            if isinstance(result, Pieces) and isinstance(self.meta(node)[0], Meta):
                result = result.items[0]  # export flattens (output, weights) to the output
            self.env[node] = result
        except Unexpressible as error:
            self.gap(error.what, error.why, leaf.path)
            self.env[node] = self._placeholder(node)
        except Stop:
            self.env[node] = self._placeholder(node)

    # -- one node ----------------------------------------------------------------------------

    def ref(self, value: Any) -> Any:
        """Resolve fx arguments (nodes, nested lists) to references."""
        if isinstance(value, fx.Node):
            return self.env[value]
        if isinstance(value, tuple | list):
            items = [self.ref(v) for v in value]
            return tuple(items) if isinstance(value, tuple) else items
        if isinstance(value, dict):
            return {k: self.ref(v) for k, v in value.items()}
        return value

    def _lower(self, node: fx.Node) -> Any:
        first, second = self.meta(node)
        if node.op == "get_attr":
            return self._attribute(node, first, second)
        if node.op == "call_module":
            if str(node.target) == "_guards_fn":  # torch.export's shape guards
                return Py(None, None)
            module = self.module.get_submodule(str(node.target))
            path = str(node.target)
            args = [self.ref(a) for a in node.args]
            kwargs = {k: self.ref(v) for k, v in node.kwargs.items()}
            return self._layer(module, path, args, kwargs, node)
        name = call_name(node)
        if name in IGNORED:
            return Py(None, None)
        rotary = self.rotary.get(node)
        if rotary is not None:
            source = self.env[rotary.source]
            if not isinstance(source, TensorRef) or source.id.startswith(UNKNOWN):
                raise Stop
            given = {} if rotary.base == 10000.0 else {"base": rotary.base}
            return self.emit("rotary_embedding", (source.id,), given, first, origin="rotary")
        dependent = node in self.observed.dependent
        if not dependent and isinstance(first, Meta) and not self._reads_parameter(node):
            constant = self.observed.seen[node].constant
            if constant is None:
                raise Unexpressible(
                    function_label(node), "a large tensor computed without the input"
                )
            return ConstRef(constant, second, node=node)
        if not isinstance(first, Meta) and not _holds_meta(first):
            return Py(first, second)  # sizes, flags: observed, nothing to emit
        args = [self.ref(a) for a in node.args]
        kwargs = {k: self.ref(v) for k, v in node.kwargs.items()}
        handler = functions.HANDLERS.get(name)
        if handler is None:
            why = functions.EXPLAINED.get(name, "no catalog operation computes it")
            raise Unexpressible(function_label(node), why)
        return handler(self, node, args, kwargs)

    def constant(self, ref: ConstRef, what: str) -> TensorRef:
        """A constant computed in the forward, rebuilt as the operations computing it: an
        ``arange`` spread over the batch and what follows it per sample (the timestep
        frequencies of a sinusoidal embedding). Anything else stays a gap: the language has
        no tensor literals."""
        node = ref.node
        if node is None or node.op not in ("call_function", "call_method"):
            raise Unexpressible(what, NO_LITERAL)
        made = self.rebuilt.get(node)
        if made is not None:
            return made
        first, second = self.meta(node)
        name = call_name(node)
        try:
            if name == "arange":
                out = self._arange(node, first, what)
            elif name in FILLED:
                out = self._filled(node, first, what)
            else:
                handler = functions.HANDLERS.get(name)
                if handler is None or not _batched(first, second):
                    raise Unexpressible(what, NO_LITERAL)
                args = [self.ref(a) for a in node.args]
                kwargs = {k: self.ref(v) for k, v in node.kwargs.items()}
                out = handler(self, node, args, kwargs)
        except Unexpressible as error:
            raise Unexpressible(what, NO_LITERAL) from error
        if not isinstance(out, TensorRef):
            raise Unexpressible(what, NO_LITERAL)
        self.rebuilt[node] = out
        return out

    def _filled(self, node: fx.Node, first: Any, what: str) -> TensorRef:
        """``torch.ones((batch, ...))``, ``zeros``, ``full``: the catalog's operation of that
        name per sample (CLIP's all-true vision mask); ``dtype=`` where not float32."""
        name = call_name(node)
        raw = node.args[0] if node.args else node.kwargs.get("size")
        sizes = [size(self.ref(s), what) for s in raw] if isinstance(raw, list | tuple) else []
        if not isinstance(first, Meta) or not sizes or sizes[0] is not BATCH:
            raise Unexpressible(what, NO_LITERAL)
        args: dict[str, Any] = {"shape": tuple(sizes[1:])}
        if name == "full":
            fill = static(self.ref(node.args[1] if len(node.args) > 1 else None), what)
            if not isinstance(fill, int | float) or isinstance(fill, bool):
                raise Unexpressible(what, NO_LITERAL)
            args["value"] = fill_argument(fill)
        if first.dtype != "float32":
            args["dtype"] = first.dtype
        meta = Meta((FIRST, *first.shape[1:]), first.dtype)
        return self.emit(name, (), args, meta, origin=function_label(node))

    def _arange(self, node: fx.Node, first: Any, what: str) -> TensorRef:
        """``torch.arange(...)``: the catalog's ``arange``, one per sample."""
        if not isinstance(first, Meta) or len(first.shape) != 1:
            raise Unexpressible(what, NO_LITERAL)
        bounds = [static(self.ref(a), what) for a in node.args]
        kwargs = {k: self.ref(v) for k, v in node.kwargs.items()}
        for key in ("start", "end", "step"):
            if key in kwargs:
                bounds.append(static(kwargs[key], what))
        if not 1 <= len(bounds) <= 3 or not all(isinstance(b, int | float) for b in bounds):
            raise Unexpressible(what, NO_LITERAL)
        args: dict[str, Any] = {"start": bounds[0]}
        if len(bounds) > 1:
            args["end"] = bounds[1]
        if len(bounds) > 2 and bounds[2] != 1:
            args["step"] = bounds[2]
        whole = all(isinstance(b, int) for b in bounds)
        if first.dtype != ("int64" if whole else "float32"):
            args["dtype"] = first.dtype
        meta = Meta((FIRST, *first.shape), first.dtype)
        return self.emit("arange", (), args, meta, origin=function_label(node))

    def _reads_parameter(self, node: fx.Node) -> bool:
        seen: set[fx.Node] = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if current.op == "get_attr":
                ref = self.env.get(current)
                if isinstance(ref, ParamRef):
                    return True
                if isinstance(ref, ConstRef) and ref.buffer is not None and ref.persistent:
                    return True  # a state dict entry: written as buffer(...), not folded
            stack.extend(current.all_input_nodes)
        return False

    def _attribute(self, node: fx.Node, first: Any, second: Any) -> Any:
        path = str(node.target)
        value = _fetch(self.module, path)
        if isinstance(value, torch.Tensor):
            original = _fetch_path(self.root, path)
            owner = original if isinstance(original, torch.Tensor) else value
            if id(owner) in self.parameter_ids or isinstance(owner, nn.Parameter):
                return ParamRef(path, owner.detach())
            kind = _buffer_kind(self.root, path)
            return ConstRef(
                value.detach().clone(),
                Meta(tuple(value.shape), dtype_name(value.dtype)),
                buffer=path if kind is not None else None,
                persistent=kind != NON_PERSISTENT,
            )
        return Py(first, second)

    # -- layers ------------------------------------------------------------------------------

    def _layer(
        self, module: nn.Module, path: str, args: list[Any], kwargs: dict[str, Any], node: fx.Node
    ) -> Any:
        first, _ = self.meta(node)
        label = layers.class_label(module)
        op, call, arguments = layers.layer_call(module)
        if any(True for _ in module.parameters()):
            if path in self.applied:
                raise Unexpressible(label, SHARED)
            self.applied.add(path)
        tensors = [a for a in args if isinstance(a, TensorRef)]
        if call == layers.TABLE and not tensors:
            # ids that are an arange over the batch (positions) are rebuilt as it
            constant = next((a for a in args if isinstance(a, ConstRef)), None)
            ids = self.try_constant(constant, label)
            if ids is None:  # rows of the table at constant ids: a parameter
                return patterns.constant_lookup(self, module, path, args, node)
            tensors = [ids]
        if not tensors:
            if any(isinstance(a, ConstRef) for a in args):
                raise Unexpressible(
                    label,
                    "it is applied to a tensor computed without the input (a table of "
                    "relative positions): the language has no tensor constants",
                )
            raise Unexpressible(label, "it is applied to no tensor computed from the input")
        x = tensors[0]
        if x.id.startswith(UNKNOWN):
            raise Stop
        if call == layers.ATTENTION:
            return self._attention(module, path, op, arguments, args, kwargs, node, label)
        if call == layers.RECURRENT:
            extra = [a for a in args[1:] if not (isinstance(a, Py) and a.first is None)]
            if extra:
                raise Unexpressible(label, "an initial state is given; the catalog starts at zero")
            out_meta = first[0] if isinstance(first, tuple | list) else first
            out = self.emit(op, (x.id,), arguments, out_meta, layer=path, origin=label)
            return Pieces((out, Py(None, None)))
        if op == "flatten":
            return self._flatten(
                x, arguments["start_dim"], arguments["end_dim"], first, label, path
            )
        if op == "pad":  # a function in the catalog: no module to name
            return self.emit(op, (x.id,), arguments, first, origin=label)
        if op in ("dense", "embedding"):
            owner = self.owners.get(id(getattr(module, "weight", None)), path)
            if owner != path:  # the weight is another layer's: tie=
                if arguments.get("transposed"):
                    raise Unexpressible(label, f"its (in, out) weight is shared with {owner}")
                arguments = {**arguments, "tie": owner}
        return self.emit(op, (x.id,), arguments, first, layer=path, origin=label)

    def _attention(
        self,
        module: nn.Module,
        path: str,
        op: str,
        arguments: dict[str, Any],
        args: list[Any],
        kwargs: dict[str, Any],
        node: fx.Node,
        label: str,
    ) -> Any:
        first, _ = self.meta(node)
        names = ["query", "key", "value", "key_padding_mask", "need_weights", "attn_mask"]
        given = dict(zip(names, args, strict=False))
        given.update(kwargs)
        query, key, value = given.get("query"), given.get("key"), given.get("value")
        for mask in ("key_padding_mask", "attn_mask"):
            found = given.get(mask)
            if found is not None and not (isinstance(found, Py) and found.first is None):
                raise Unexpressible(label, f"a {mask} is given; the catalog takes none")
        if given.get("is_causal") not in (None, False) and not (
            isinstance(given.get("is_causal"), Py) and not given["is_causal"].first
        ):
            arguments = {**arguments, "causal": True}
        out_meta = first[0] if isinstance(first, tuple | list) else first
        if not isinstance(query, TensorRef):
            raise Unexpressible(label, "its query is not computed from the input")
        if key == query and value == query:
            out = self.emit(op, (query.id,), arguments, out_meta, layer=path, origin=label)
        elif key == value and isinstance(key, TensorRef):
            out = self.emit(op, (query.id, key.id), arguments, out_meta, layer=path, origin=label)
        else:
            raise Unexpressible(label, "keys and values differ; the catalog takes one memory")
        return Pieces((out, Py(None, None)))

    # -- the end: output, dead code -------------------------------------------------------------

    def _finish(self, output: Any) -> LiftedGraph:
        resolved = self.ref(output)
        chosen, names, dropped = choose_output(self, resolved)
        notes = []
        lost = [value for value in chosen if value.startswith(UNKNOWN)]
        if lost:  # --partial: an output is lost to a gap
            known = [op for op in self.ops if op.op in CATALOG and op.op != "parameter"]
            last = known[-1].id if known else "input"
            kept = [(v, n) for v, n in zip(chosen, names, strict=True) if v not in lost]
            chosen, names = [v for v, _ in kept] or [last], [n for _, n in kept] or [names[0]]
            notes.append(
                "an output is lost to a gap: the program returns the last value before"
                if not kept
                else f"{len(lost)} output(s) lost to a gap are not returned"
            )
        first = next(iter(self.input_ids.values()))
        graph = LiftedGraph(
            ops=self.ops,
            input=first,
            input_shape=self.input_shape,
            input_dtype=self.input_dtype,
            output=chosen[0],
            output_name=names[0],
            dropped_outputs=dropped,
            gaps=self.gaps,
            notes=notes,
            inputs=tuple(self.input_ids.values()),
            outputs=tuple(chosen),
            output_names=tuple(names),
        )
        drop_repeated_heads(graph)
        prune(graph)
        self._uncalled_owners(graph)
        for op in graph.ops:  # a helper operation no pattern took up
            if op.op not in CATALOG:
                graph.gaps.append(
                    Gap(
                        op.scope[-1].path if op.scope else "",
                        op.origin,
                        "no catalog operation computes it",
                        op.where,
                    )
                )
        return graph

    def _uncalled_owners(self, graph: LiftedGraph) -> None:
        """A table that embeddings are tied to but the graph never looks up (the zoo's T5
        keeps ``shared`` by a lookup whose result it drops, which torch.export removes): that
        lookup, before the first tied one and at its ids, so that the program has the layer
        and the state dict its weight."""
        for op in list(graph.ops):
            owner = op.args.get("tie") if op.op == "embedding" else None
            if not isinstance(owner, str) or owner in self.applied:
                continue
            self.applied.add(owner)
            scope = tuple(s for s in op.scope if owner.startswith(f"{s.path}.") or not s.path)
            args = {key: value for key, value in op.args.items() if key != "tie"}
            lookup = Op(
                self.fresh("embedding"),
                "embedding",
                op.inputs,
                args,
                op.shape,
                op.dtype,
                layer=owner,
                scope=scope,
                origin="nn.Embedding (its result unused)",
                where=op.where,
            )
            graph.ops.insert(graph.ops.index(op), lookup)


def prune(graph: LiftedGraph) -> None:
    """Drop operations the outputs do not need, layers with weights too (a program holds
    only the layers its outputs read: GoogLeNet's auxiliary classifiers go, and the strict
    load reports them); split/chunk siblings of a needed piece stay."""
    needed = {graph.output, *graph.outputs}
    producer = graph.producer()
    for op in reversed(graph.ops):
        if op.id in needed:
            needed.update(op.inputs)
    groups = {op.group for op in graph.ops if op.id in needed and op.group}
    graph.ops = [op for op in graph.ops if op.id in needed or (op.group in groups and op.group)]
    del producer


def input_id(index: int, item: Input) -> str:
    """The value an input is in the lifted graph: ``input`` for the first, as with one."""
    return "input" if index == 0 else f"input:{item.name}"


def _unknown_like(value: Any, name: str) -> Any:
    if isinstance(value, Meta):
        return TensorRef(f"{UNKNOWN}{name}")
    if isinstance(value, tuple | list):
        return Pieces(tuple(_unknown_like(v, f"{name}_{i}") for i, v in enumerate(value)))
    return Py(None, None)


def _batched(first: Any, second: Any) -> bool:
    """Whether a node's result has the batch axis first in both runs."""
    return (
        isinstance(first, Meta)
        and isinstance(second, Meta)
        and first.shape[:1] == (FIRST,)
        and second.shape[:1] == (SECOND,)
    )


def _holds_meta(value: Any) -> bool:
    if isinstance(value, Meta):
        return True
    if isinstance(value, tuple | list):
        return any(_holds_meta(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_meta(v) for v in value.values())
    return False


def _fetch(module: nn.Module, target: str) -> Any:
    value: Any = module
    for part in target.split("."):
        value = getattr(value, part)
    return value


PERSISTENT, NON_PERSISTENT = "persistent", "non-persistent"


def _buffer_kind(root: nn.Module, path: str) -> str | None:
    """Whether ``path`` names a buffer the state dict holds (a strict load needs it), one
    it does not hold, or (None) no registered buffer."""
    owner_path, _, name = path.rpartition(".")
    try:
        owner = root.get_submodule(owner_path)
    except AttributeError:
        return None
    if name not in owner._buffers:
        return None
    return NON_PERSISTENT if name in owner._non_persistent_buffers_set else PERSISTENT


def _fetch_path(root: nn.Module, path: str) -> Any:
    try:
        return _fetch(root, path)
    except AttributeError:
        return None


__all__ = ["Lowerer", "prune"]
