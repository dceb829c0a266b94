"""What one training step keeps in memory, read from the IR: the tensors autograd saves for
backward, the views that keep them alive, and the step's own live tensors.

The walk follows the generated PyTorch code node by node at a concrete batch size. Every
value is a *view* (shape and strides, batch axis first) of a *storage*; an operation either
makes a view of its input's storage (``transpose``, ``split``, a ``reshape`` that PyTorch
can express as a view) or writes a new storage. Each operation then names what its
backward needs, following ``tools/autograd/derivatives.yaml`` and the kernels PyTorch
picks: ``dense`` saves its input, ``relu`` its output, ``gelu`` its input, ``batchnorm``
its input and two per-channel statistics, ``maxpool`` its input and int64 indices,
``scaled_dot_product_attention`` the query, key, value, output and a float32 log-sum-exp
per query, ``dropout`` its mask (one byte per element on CUDA, the full-precision noise on
CPU), ``add`` and ``concat`` nothing. A saved view keeps its whole storage alive, and a
storage counts once however many operations save it, exactly as the caching allocator
sees it. The step's live tensors (inputs, targets, outputs, the loss and what it saves)
are added at the end. Parameters are never activations.

Results are per batch size: strides differ at batch 1 (a size-1 axis is skipped when
PyTorch decides whether a reshape can be a view), so the walk runs at the batch asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aurane import ops
from aurane.analysis.memory import FULL_PRECISION_OPS, LOW_PRECISION_OPS, PROMOTING_OPS
from aurane.analysis.profile import dtype_bytes
from aurane.ir.graph import Graph, Node
from aurane.ops.layers import channel_first
from aurane.ops.rules import FLOAT_DTYPES, numel
from aurane.records import field, record

PARAMETER = -1  # the storage of a parameter or constant: never an activation
GRAD_NONE = -1


@record(frozen=True, slots=True)
class View:
    """A tensor as PyTorch holds it: a storage, a shape and strides (batch axis first)."""

    storage: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str
    grad: bool  # requires grad: the value depends on a parameter
    grad_id: int = GRAD_NONE  # the buffer its gradient accumulates in, during backward


@record(frozen=True, slots=True)
class Storage:
    bytes: int
    layer: int  # index of the top-level layer that created it (-1: input, -2: loss)
    unit: int  # checkpoint/FSDP unit it was created in (-1: outside every unit)


@record(frozen=True, slots=True)
class Step:
    """One leaf operation as backward sees it."""

    node: str  # path: ``transformer.h/3/ln_1``
    op: str
    layer: int
    unit: int
    saved: tuple[int, ...]  # storages its backward reads
    param_tensors: tuple[int, ...]  # element counts of its parameters (grads at backward)
    grad_out: int  # grad buffer of its output (GRAD_NONE: no grad)
    grad_ins: tuple[int, ...]  # grad buffers of its inputs
    scratch: int = 0  # bytes its backward allocates besides the gradients it passes on


@record(frozen=True)
class StepMemory:
    """The walk's result at one batch size and dtype policy."""

    batch: int
    storages: tuple[Storage, ...]
    steps: tuple[Step, ...]
    live: frozenset[int]  # kept by the training loop itself: inputs, targets, outputs, loss
    grad_bytes: Mapping[int, int]  # grad buffer id -> bytes
    unit_inputs: Mapping[int, frozenset[int]] = field(default_factory=dict)
    layers: tuple[str, ...] = ()  # top-level layer names, by index
    batch_data: frozenset[int] = frozenset()  # inputs and targets: made before the forward

    @property
    def kept(self) -> frozenset[int]:
        """Every storage alive at the end of the forward pass and the loss."""
        found = set(self.live)
        for step in self.steps:
            found.update(step.saved)
        return frozenset(found)

    @property
    def activation_bytes(self) -> int:
        return sum(self.storages[s].bytes for s in self.kept)

    def checkpointed_bytes(self) -> tuple[int, int]:
        """Activations with every unit checkpointed: (kept across the step, the largest
        unit's recomputed activations). A storage is kept when a step outside every unit
        saves it, the loop holds it, or it is a unit's input; the rest is recomputed one
        unit at a time during backward."""
        kept = set(self.live)
        for inputs in self.unit_inputs.values():
            kept.update(inputs)
        inside: dict[int, set[int]] = {}
        for step in self.steps:
            if step.unit < 0:
                kept.update(step.saved)
            else:
                inside.setdefault(step.unit, set()).update(step.saved)
        kept_bytes = sum(self.storages[s].bytes for s in kept)
        recompute = max(
            (sum(self.storages[s].bytes for s in found - kept) for found in inside.values()),
            default=0,
        )
        return kept_bytes, recompute

    def by_layer(self) -> dict[int, int]:
        """Kept bytes per top-level layer (the layer that created each storage)."""
        totals: dict[int, int] = {}
        for index in self.kept:
            storage = self.storages[index]
            totals[storage.layer] = totals.get(storage.layer, 0) + storage.bytes
        return totals

    def backward_peak(self, grad_total: int) -> int:
        return max(self.backward_held(grad_total), default=0)

    def backward_held(self, grad_total: int) -> list[int]:
        """Memory held during each operation's backward (last operation first), besides parameters,
        buffers and optimizer state: saved storages still needed, parameter gradients made
        so far (their share of ``grad_total``), and the gradients flowing between
        operations. Gradients of the previous step are freed by ``zero_grad(set_to_none=
        True)`` just before backward, so ``grad_total`` grows back as backward runs."""
        count = len(self.steps)
        if count == 0:
            return []
        kept = self.kept
        # a saved storage is freed once the first step (in forward order) saving it is done
        released = [0] * count
        first: dict[int, int] = {}
        for index, step in enumerate(self.steps):
            for s in step.saved:
                first.setdefault(s, index)
        for s, index in first.items():
            if s not in self.live:
                released[index] += self.storages[s].bytes
        # a gradient buffer lives from its last consumer's backward to its producer's
        low: dict[int, int] = {}
        high: dict[int, int] = {}
        for index, step in enumerate(self.steps):
            if step.grad_out != GRAD_NONE:
                low.setdefault(step.grad_out, index)
            for g in step.grad_ins:
                if g != GRAD_NONE:
                    high[g] = index
        flowing = [0] * (count + 1)
        for g, top in high.items():
            bottom = low.get(g, 0)
            flowing[bottom] += self.grad_bytes.get(g, 0)
            flowing[top + 1] -= self.grad_bytes.get(g, 0)
        for index in range(1, count + 1):
            flowing[index] += flowing[index - 1]
        param_total = sum(sum(s.param_tensors) for s in self.steps) or 1
        alive = sum(self.storages[s].bytes for s in kept)
        made = 0
        held = []
        for index in range(count - 1, -1, -1):
            step = self.steps[index]
            made += sum(step.param_tensors)
            held.append(alive + grad_total * made // param_total + flowing[index] + step.scratch)
            alive -= released[index]
        return held


DTYPE_POLICIES = ("ir", "autocast", "low")


def plain(shape: Sequence[int] | None) -> tuple[int, ...]:
    """A shape as plain ints: IR sizes computed from constants carry their expression's
    text (``semantics.symbolic``), whose arithmetic builds ever longer strings."""
    return tuple(int(size) for size in shape or ())


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * max(shape[d + 1], 1)
    return tuple(strides)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """PyTorch's rule: size-1 axes are skipped."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def view_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """The strides of ``reshape(new_shape)`` as a view, or None when it must copy
    (``at::detail::computeStride``)."""
    if numel(tuple(shape)) == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1] if strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def dense_order(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """The axes from outermost to innermost when the view is dense and non-overlapping."""
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], -d))
    expected = 1
    for d in reversed(order):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return None
        expected *= shape[d]
    return tuple(order)


def stride_order(view: View) -> tuple[int, ...]:
    """The axes from the largest stride to the smallest (ties in axis order)."""
    return tuple(sorted(range(len(view.shape)), key=lambda d: (-view.strides[d], d)))


def strides_in_order(shape: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def like(source: View | None, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides PyTorch's elementwise kernels give an output: the first input's axis order
    when it has the output's shape and is dense, else contiguous."""
    if source is not None and source.shape == shape:
        order = dense_order(source.shape, source.strides)
        if order is not None:
            return strides_in_order(shape, order)
    return contiguous_strides(shape)


def _channels_last(view: View) -> bool:
    if len(view.shape) != 4 or is_contiguous(view.shape, view.strides):
        return False
    return view.strides == strides_in_order(view.shape, (0, 2, 3, 1))


# ---------------------------------------------------------------- parameter tensors


def parameter_tensors(node: Node, in_shape: tuple[int, ...] | None) -> tuple[int, ...]:
    """The element counts of the parameter tensors ``node`` creates (as torch.nn lays them
    out), summing to the node's parameter count; one tensor when the layout is unknown."""
    total = int(node.parameters)
    if total <= 0:
        return ()
    found = tuple(int(size) for size in _tensor_layout(node, in_shape))
    return found if found and sum(found) == total else (total,)


def _tensor_layout(node: Node, in_shape: tuple[int, ...] | None) -> tuple[int, ...]:
    a, op, total = node.args, node.op, node.parameters
    if op == "dense":
        bias = int(a["features"]) if a.get("bias") else 0
        return (total - bias, bias) if bias else (total,)
    if op.startswith("conv"):
        bias = int(a["channels"]) if a.get("bias") else 0
        return (total - bias, bias) if bias else (total,)
    if op in ("batchnorm", "instance_norm", "group_norm"):
        return (total // 2, total // 2)
    if op == "layer_norm":
        return (total // 2, total // 2) if a.get("bias", True) else (total,)
    if op == "multihead_attention":
        dim = int(a["dim"])
        bias = bool(a.get("bias", True))
        out = (dim * dim, dim) if bias else (dim * dim,)
        rest = total - sum(out)
        in_bias = 3 * dim if bias else 0
        return (rest - in_bias, in_bias, *out) if bias else (rest, *out)
    if op in ("lstm", "gru") and in_shape:
        gates = (4 if op == "lstm" else 3) * int(a["hidden"])
        hidden = int(a["hidden"])
        directions = 2 if a.get("bidirectional") else 1
        tensors: list[int] = []
        width = in_shape[-1]
        for _ in range(int(a.get("num_layers", 1))):
            for _ in range(directions):
                tensors += [gates * width, gates * hidden]
                if a.get("bias", True):
                    tensors += [gates, gates]
            width = hidden * directions
        return tuple(tensors)
    return (total,)


# ---------------------------------------------------------------- the walk


@record(frozen=True, slots=True)
class _Copy:
    """What one walked copy of a block made: its input, output and the id ranges."""

    signature: tuple[Any, ...]
    first: View
    out: View
    start: tuple[int, int, int]  # storages, steps, grad buffers before the copy
    end: tuple[int, int, int]
    prefix: str


Rule = Callable[["_Walker", Node, list[View], tuple[int, ...], str], View]


class _Walker:
    def __init__(self, batch: int, device: str, policy: str, low: str) -> None:
        self.batch, self.device, self.policy, self.low = batch, device, policy, low
        self.storages: list[Storage] = []
        self.steps: list[Step] = []
        self.grad_bytes: dict[int, int] = {}
        self.layer = -1
        self.layer_names: list[str] = []
        self.frozen = False  # parameters do not require grad (a GAN's discriminator, G phase)
        self.unit = -1
        self.unit_inputs: dict[int, set[int]] = {}
        self.data: set[int] = set()  # the batch: inputs and targets
        # set by each rule for the step being built
        self.saved: list[int] = []

    # -- storages and views

    def new(
        self,
        shape: tuple[int, ...],
        dtype: str,
        strides: tuple[int, ...] | None = None,
        grad: bool = True,
    ) -> View:
        """A new storage holding ``shape`` (its output, when ``grad``, gets a grad buffer)."""
        size = numel(shape) * dtype_bytes(dtype)
        self.storages.append(Storage(size, self.layer, self.unit))
        grad_id = GRAD_NONE
        if grad:
            grad_id = len(self.grad_bytes)
            self.grad_bytes[grad_id] = size
        return View(
            len(self.storages) - 1,
            shape,
            strides if strides is not None else contiguous_strides(shape),
            dtype,
            grad,
            grad_id,
        )

    def extra(self, count: int, dtype: str = "float32") -> None:
        """A buffer the operation makes and saves for backward (statistics, masks)."""
        self.storages.append(Storage(int(count) * dtype_bytes(dtype), self.layer, self.unit))
        self.saved.append(len(self.storages) - 1)

    def save(self, *views: View) -> None:
        self.saved += [v.storage for v in views if v.storage != PARAMETER]

    def reshaped(self, view: View, shape: tuple[int, ...]) -> View:
        """``view.reshape(shape)``: a view when PyTorch can make one, else a new copy."""
        strides = view_strides(view.shape, view.strides, shape)
        if strides is not None:
            return View(view.storage, shape, strides, view.dtype, view.grad, view.grad_id)
        return self.new(shape, view.dtype, grad=view.grad)

    def permuted(self, view: View, order: Sequence[int]) -> View:
        return View(
            view.storage,
            tuple(view.shape[d] for d in order),
            tuple(view.strides[d] for d in order),
            view.dtype,
            view.grad,
            view.grad_id,
        )

    def cast(self, view: View, dtype: str) -> View:
        if view.dtype == dtype or view.dtype not in FLOAT_DTYPES:
            return view
        strides = like(view, view.shape)
        made = self.new(view.shape, dtype, strides, grad=view.grad)
        return View(made.storage, made.shape, made.strides, dtype, view.grad, view.grad_id)

    def out_dtype(self, node: Node, ins: list[View], ir_dtype: str | None) -> str:
        if ir_dtype is not None and ir_dtype not in FLOAT_DTYPES:
            return ir_dtype
        if self.policy == "low":
            return self.low
        if self.policy == "autocast":
            if node.op in LOW_PRECISION_OPS:
                return self.low
            if node.op in FULL_PRECISION_OPS:
                return "float32"
            floats = [v.dtype for v in ins if v.dtype in FLOAT_DTYPES]
            if node.op in PROMOTING_OPS and floats:
                return max(
                    [*floats, "float32"] if node.op == "positional_encoding" else floats,
                    key=dtype_bytes,
                )
            if node.op == "embedding":
                return "float32"
            return floats[0] if floats else (ir_dtype or "float32")
        return ir_dtype or "float32"

    # -- graphs

    def walk_graph(self, graph: Graph, first: View, prefix: str, top: bool) -> View:
        views: dict[str, View] = {graph.input: first}
        values = graph.value_map
        for node in graph.nodes:
            path = f"{prefix}{node.layer or node.id}"
            if top:
                self.layer = len(self.layer_names)
                self.layer_names.append(path)
            ins = [views[name] for name in node.inputs]
            if node.subgraph is not None:
                views[node.output] = self.walk_copies(node, node.subgraph, ins[0], path, top)
                continue
            out = values[node.output]
            shape = (self.batch, *plain(out.sample_shape))
            dtype = self.out_dtype(node, ins, out.dtype)
            views[node.output] = self.step(node, ins, shape, dtype, path, node.id in graph.tied)
        return views[graph.output]

    def walk_copies(self, node: Node, sub: Graph, current: View, path: str, top: bool) -> View:
        """Every copy of a block call. A copy whose input looks like the previous copy's
        (shape, strides, dtype) makes the same storages and steps: it is replayed with its
        ids moved instead of walked again (a 24-layer transformer walks two layers)."""
        last: _Copy | None = None
        for copy in range(node.repeat):
            if top:
                self.unit = len(self.unit_inputs)
                self.unit_inputs[self.unit] = {current.storage} - {PARAMETER}
            inner = f"{path}/{copy}/" if node.repeat > 1 else f"{path}/"
            signature = (current.shape, current.strides, current.dtype, current.grad)
            if last is not None and last.signature == signature:
                current = self.replay(last, current, inner)
                continue
            marks = (len(self.storages), len(self.steps), len(self.grad_bytes))
            out = self.walk_graph(sub, current, inner, top=False)
            last = _Copy(signature, current, out, marks, self.marks(), inner)
            current = out
        if top:
            self.unit = -1
        return current

    def marks(self) -> tuple[int, int, int]:
        return len(self.storages), len(self.steps), len(self.grad_bytes)

    def replay(self, last: _Copy, first: View, prefix: str) -> View:
        (s0, t0, g0), (s1, t1, g1) = last.start, last.end
        ds, dg = len(self.storages) - s0, len(self.grad_bytes) - g0
        old_in, old_in_grad = last.first.storage, last.first.grad_id

        def storage(i: int) -> int:
            if s0 <= i < s1:
                return i + ds
            return first.storage if i == old_in else i

        def grad(i: int) -> int:
            if g0 <= i < g1:
                return i + dg
            return first.grad_id if i == old_in_grad and i != GRAD_NONE else i

        for made in self.storages[s0:s1]:
            self.storages.append(Storage(made.bytes, self.layer, self.unit))
        for index in range(g0, g1):
            self.grad_bytes[index + dg] = self.grad_bytes[index]
        cut = len(last.prefix)
        for step in self.steps[t0:t1]:
            self.steps.append(
                Step(
                    prefix + step.node[cut:],
                    step.op,
                    self.layer,
                    self.unit,
                    tuple(storage(i) for i in step.saved),
                    step.param_tensors,
                    grad(step.grad_out),
                    tuple(grad(i) for i in step.grad_ins),
                    step.scratch,
                )
            )
        out = last.out
        return View(
            storage(out.storage), out.shape, out.strides, out.dtype, out.grad, grad(out.grad_id)
        )

    def step(
        self,
        node: Node,
        ins: list[View],
        shape: tuple[int, ...],
        dtype: str,
        path: str,
        tied: bool = False,
    ) -> View:
        self.saved = []
        rule = RULES.get(node.op, _saves_inputs)
        trainable = node.parameters > 0 and not self.frozen
        grad_in = any(v.grad for v in ins) or trainable
        in_shape = ins[0].shape[1:] if ins else None
        if self.policy == "autocast" and node.op in LOW_PRECISION_OPS:
            ins = [self.cast(v, self.low) for v in ins]
            weights = sum(parameter_tensors(node, in_shape)) - _bias_elements(node)
            if tied and in_shape:  # the shared weight is cast for this layer too
                weights += in_shape[-1] * int(node.args["features"])
            if weights:  # autocast's cached half-precision copy, saved by the product
                self.extra(weights, self.low)
        out = rule(self, node, ins, shape, dtype)
        if not grad_in:
            self.saved = []  # no autograd node: nothing is saved
            out = View(out.storage, out.shape, out.strides, out.dtype, False, GRAD_NONE)
        tensors = parameter_tensors(node, in_shape) if trainable else ()
        self.steps.append(
            Step(
                node=path,
                op=node.op,
                layer=self.layer,
                unit=self.unit,
                saved=tuple(dict.fromkeys(self.saved)),
                param_tensors=tensors,
                grad_out=out.grad_id,
                grad_ins=tuple(v.grad_id for v in ins if v.grad),
            )
        )
        return out


def _bias_elements(node: Node) -> int:
    if node.op == "dense" and node.args.get("bias"):
        return int(node.args["features"])
    if node.op.startswith("conv") and node.args.get("bias"):
        return int(node.args["channels"])
    return 0


# ---------------------------------------------------------------- rules


def _saves_inputs(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    """The default for an operation without its own rule: saves its inputs."""
    w.save(*ins)
    return w.new(shape, dtype, like(ins[0] if ins else None, shape))


def _saves_nothing(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    return w.new(shape, dtype, like(ins[0] if ins else None, shape))


def _saves_output(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    out = w.new(shape, dtype, like(ins[0], shape))
    w.save(out)
    return out


def _saves_input(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    w.save(ins[0])
    return w.new(shape, dtype, like(ins[0], shape))


def _alias(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    return ins[0]


def _reshape(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    return w.reshaped(ins[0], shape)


def _transpose(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    rank = len(ins[0].shape)
    a, b = int(node.args["dim0"]) % rank, int(node.args["dim1"]) % rank
    order = list(range(rank))
    order[a], order[b] = order[b], order[a]
    return w.permuted(ins[0], order)


def _permute(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    from aurane.ops.shape import _permute_order

    ctx = ops.context(ops.CATALOG["permute"], node.args, [ins[0].shape[1:]])
    return w.permuted(ins[0], _permute_order(ctx))  # the batch axis included, first


def _same_strides(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    """split, chunk, slice: a narrower view with the input's strides."""
    v = ins[0]
    return View(v.storage, shape, v.strides, v.dtype, v.grad, v.grad_id)


def _select(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    v = ins[0]
    axis = int(node.args["dim"]) % len(v.shape)
    strides = v.strides[:axis] + v.strides[axis + 1 :]
    return View(v.storage, shape, strides, v.dtype, v.grad, v.grad_id)


def _squeeze_like(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    """squeeze, unsqueeze, expand: a view; size-1 axes take any stride, expanded ones 0."""
    v = ins[0]
    kept = [(s, st) for s, st in zip(v.shape, v.strides, strict=True) if s != 1]
    strides: list[int] = []
    for size in reversed(shape):
        if kept and kept[-1][0] == size:
            strides.append(kept.pop()[1])
        else:
            strides.append(0 if size != 1 else 1)
    return View(v.storage, shape, tuple(reversed(strides)), v.dtype, v.grad, v.grad_id)


def _dropout(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    p = float(node.args.get("p", 0.0))
    if p == 0.0:
        return ins[0]  # F.dropout(p=0) returns its input
    if node.op == "drop_path":  # x * noise of shape (batch, 1, ...): saves the noise
        w.extra(shape[0], dtype)
    elif w.device == "cuda":  # native_dropout: a bool mask
        w.extra(numel(shape), "bool")
    else:  # CPU: input * noise, the noise saved at full precision
        w.extra(numel(shape), dtype)
    return w.new(shape, dtype, like(ins[0], shape))


def _dense(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    x = ins[0]
    if len(x.shape) > 2:  # folded to (rows, features): a view or a copy, saved by mm
        x = w.reshaped(x, (numel(x.shape) // x.shape[-1], x.shape[-1]))
    w.save(x)
    return w.new(shape, dtype)


def _conv(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])
    if _channels_last(ins[0]):
        return w.new(shape, dtype, strides_in_order(shape, (0, 2, 3, 1)))
    return w.new(shape, dtype)


def _batchnorm(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])
    channels = shape[1]
    w.extra(channels)  # save_mean
    w.extra(channels)  # save_invstd
    if _channels_last(ins[0]):
        return w.new(shape, dtype, strides_in_order(shape, (0, 2, 3, 1)))
    return w.new(shape, dtype)


def _instance_norm(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    x = ins[0]
    folded = w.reshaped(x, (1, x.shape[0] * x.shape[1], *x.shape[2:]))
    w.save(folded)
    rows = x.shape[0] * x.shape[1]
    w.extra(rows)  # save_mean
    w.extra(rows)  # save_invstd
    if node.parameters:  # the weight repeated over the batch, a new tensor batch_norm saves
        w.extra(rows, dtype)
    return w.new(shape, dtype)


def _layer_norm(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    x = ins[0]
    rank = len(x.shape) - 1
    if node.op == "layer_norm" and channel_first(int(node.args.get("dim", -1)), rank):
        order = (0, *range(2, rank + 1), 1)  # movedim(1, -1)
        moved = w.permuted(x, order)
        w.save(moved)
        w.extra(numel(moved.shape) // moved.shape[-1])  # mean
        w.extra(numel(moved.shape) // moved.shape[-1])  # rstd
        normed = w.new(moved.shape, dtype)
        back = [0] * (rank + 1)
        for position, axis in enumerate(order):
            back[axis] = position
        return w.permuted(normed, back)
    axes = int(node.args.get("axes", 1))
    rows = numel(x.shape) // numel(x.shape[len(x.shape) - axes :])
    w.save(x)
    if node.op == "rms_norm" and w.device == "cpu":
        # CPU: the composite x * rsqrt(mean(x^2) + eps) * weight, which keeps x * rsqrt
        w.extra(rows)
        if node.parameters:
            w.extra(numel(shape), dtype)
        return w.new(shape, dtype)
    if node.op == "layer_norm":
        w.extra(rows)  # mean
    w.extra(rows)  # rstd
    return w.new(shape, dtype)


def _group_norm(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    w.save(ins[0])
    groups = shape[0] * int(node.args["groups"])
    w.extra(groups)
    w.extra(groups)
    return w.new(shape, dtype)


def _pool_with_indices(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    w.save(ins[0])
    w.extra(numel(shape), "int64")
    return w.new(shape, dtype)


def _adaptive_avg(
    w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str
) -> View:
    if all(size == 1 for size in shape[2:]):
        return _saves_nothing(w, node, ins, shape, dtype)  # a mean over the spatial axes
    return _saves_input(w, node, ins, shape, dtype)


def _amax(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    out = w.new(shape, dtype)
    w.save(ins[0], out)
    return out


def _multiply(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if len(ins) == 2:
        a, b = ins
        if b.grad:
            w.save(a)
        if a.grad:
            w.save(b)
    return w.new(shape, dtype, like(ins[0], shape))


def _divide(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if len(ins) == 2:
        a, b = ins
        if a.grad or b.grad:
            w.save(b)
        if b.grad:
            w.save(a)
    return w.new(shape, dtype, like(ins[0], shape))


def _matmul(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(*ins)
    return w.new(shape, dtype)


def _pad(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    if node.args.get("mode", "constant") in ("reflect", "replicate"):
        w.save(ins[0])
    return w.new(shape, dtype)


def _embedding(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    w.save(ins[0])  # the indices
    return w.new(shape, dtype)


def _parameter(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    strides = tuple(
        0 if i == 0 and shape[0] != 1 else s for i, s in enumerate(contiguous_strides(shape))
    )
    return View(PARAMETER, shape, strides, dtype, not w.frozen)


def _sdpa_core(w: _Walker, q: View, k: View, v: View, dropout: float, dtype: str) -> View:
    """Flash / memory-efficient attention: saves q, k, v, the output and a float32
    log-sum-exp per query (CUDA's efficient kernel pads it to multiples of 32)."""
    batch, heads, seq = q.shape[0], q.shape[1], q.shape[2]
    shape = (*q.shape[:-1], v.shape[-1])
    if dropout > 0 and w.device == "cpu":  # the math path: scores, weights and dropout kept
        scores = batch * heads * seq * k.shape[2]
        w.extra(numel(q.shape), dtype)
        w.extra(numel(k.shape), dtype)
        w.extra(scores, dtype)
        w.extra(scores, dtype)
        w.extra(scores, dtype)
        w.save(v)
        return w.new(shape, dtype)
    w.save(q, k, v)
    # CUDA's kernels write (batch, seq, heads, dim) and return it transposed; the CPU
    # kernel writes its output in the query's axis order
    order = (0, 2, 1, 3) if w.device == "cuda" else stride_order(q)
    out = w.new(shape, dtype, strides_in_order(shape, order))
    w.save(out)
    lse = seq if w.device == "cpu" or dtype != "float32" else -(-seq // 32) * 32
    w.extra(batch * heads * lse)
    return out


def _heads(view: View) -> View:
    """A 3-axis (batch, seq, dim) input as SDPA sees it: one head."""
    if len(view.shape) == 4:
        return view
    b, s, d = view.shape
    bs, ss, ds = view.strides
    return View(
        view.storage, (b, 1, s, d), (bs, s * ss, ss, ds), view.dtype, view.grad, view.grad_id
    )


def _sdpa(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    q, k, v = (_heads(x) for x in ins)
    if k.shape[1] != q.shape[1]:  # grouped-query: repeat_interleave copies keys and values
        k = w.new((k.shape[0], q.shape[1], *k.shape[2:]), k.dtype, grad=k.grad)
        v = w.new((v.shape[0], q.shape[1], *v.shape[2:]), v.dtype, grad=v.grad)
    out = _sdpa_core(w, q, k, v, float(node.args.get("dropout") or 0.0), dtype)
    if len(ins[0].shape) == 3:
        return View(
            out.storage,
            shape,
            (out.strides[0], out.strides[2], out.strides[3]),
            dtype,
            True,
            out.grad_id,
        )
    return out


def _attention(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """nn.MultiheadAttention (batch_first, need_weights=False) as F.multi_head_attention_forward
    runs it: packed in-projection of the (seq, batch, dim) transposed input, a contiguous
    copy split into q, k, v, SDPA, a contiguous copy for the output projection."""
    x = ins[0]
    batch, seq, dim = x.shape
    heads = int(node.args["heads"])
    head = dim // heads
    xt = w.permuted(x, (1, 0, 2))
    w.save(w.reshaped(xt, (seq * batch, dim)))
    if len(ins) == 2:
        memory = w.permuted(ins[1], (1, 0, 2))
        kv_len = memory.shape[0]
        folded = (kv_len * batch, memory.shape[2])
        qp = w.new((seq, batch, dim), dtype)
        q = _heads_view(qp, seq, batch, heads, head)
        if memory.shape[2] == dim:  # packed key/value projection, one contiguous copy
            w.save(w.reshaped(memory, folded))
            packed = w.new((2, kv_len, batch, dim), dtype)
            k = v = _heads_view(packed, kv_len, batch, heads, head)
        else:  # kdim/vdim: separate projections, each folding the memory itself
            w.save(w.reshaped(memory, folded), w.reshaped(memory, folded))
            k = _heads_view(w.new((kv_len, batch, dim), dtype), kv_len, batch, heads, head)
            v = _heads_view(w.new((kv_len, batch, dim), dtype), kv_len, batch, heads, head)
    else:
        kv_len = seq
        packed = w.new((3, seq, batch, dim), dtype)
        q = k = v = _heads_view(packed, seq, batch, heads, head)
    if node.args.get("causal"):  # the boolean mask becomes an additive float (seq, kv) mask
        w.extra(seq * kv_len, dtype)
    out = _sdpa_core(w, q, k, v, float(node.args.get("dropout") or 0.0), dtype)
    moved = w.permuted(out, (2, 0, 1, 3))  # (seq, batch, heads, head)
    if not is_contiguous(moved.shape, moved.strides):
        moved = w.new(moved.shape, dtype)
    w.save(moved)
    projected = w.new((seq * batch, dim), dtype)
    return View(projected.storage, shape, (dim, batch * dim, 1), dtype, True, projected.grad_id)


def _heads_view(packed: View, seq: int, batch: int, heads: int, head: int) -> View:
    """q, k or v of a (n, seq, batch, dim) projection seen as (batch, heads, seq, head)."""
    dim = heads * head
    return View(
        packed.storage,
        (batch, heads, seq, head),
        (heads * head, head, batch * dim, 1),
        packed.dtype,
        True,
        packed.grad_id,
    )


def _rotary(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    seq, head = shape[-2], shape[-1]
    w.extra(seq * head, dtype)  # cos
    w.extra(seq * head, dtype)  # sin
    return w.new(shape, dtype, like(ins[0], shape))


def _recurrent(w: _Walker, node: Node, ins: list[View], shape: tuple[int, ...], dtype: str) -> View:
    """An estimate: the input, every step's gates and states, per layer and direction."""
    x = ins[0]
    batch, seq = x.shape[0], x.shape[1]
    hidden = int(node.args["hidden"])
    gates = 4 if node.op == "lstm" else 3
    layers = int(node.args.get("num_layers", 1)) * (2 if node.args.get("bidirectional") else 1)
    w.save(x)
    w.extra(layers * batch * seq * hidden * (gates + 2), dtype)
    out = w.new(shape, dtype)
    w.save(out)
    return out


RULES: dict[str, Rule] = {
    # views: nothing saved, no new storage
    "reshape": _reshape,
    "flatten": _reshape,
    "transpose": _transpose,
    "permute": _permute,
    "split": _same_strides,
    "chunk": _same_strides,
    "slice": _same_strides,
    "select": _select,
    "squeeze": _squeeze_like,
    "unsqueeze": _squeeze_like,
    "expand": _squeeze_like,
    "identity": _alias,
    "dropout": _dropout,
    "drop_path": _dropout,
    "parameter": _parameter,
    # parametric layers
    "dense": _dense,
    "conv1d": _conv,
    "conv2d": _conv,
    "conv3d": _conv,
    "conv_transpose1d": _conv,
    "conv_transpose2d": _conv,
    "conv_transpose3d": _conv,
    "embedding": _embedding,
    "positional_encoding": _saves_nothing,
    "batchnorm": _batchnorm,
    "instance_norm": _instance_norm,
    "layer_norm": _layer_norm,
    "rms_norm": _layer_norm,
    "group_norm": _group_norm,
    "multihead_attention": _attention,
    "lstm": _recurrent,
    "gru": _recurrent,
    # activations: relu, sigmoid, tanh, softmax keep their output; the rest their input
    "relu": _saves_output,
    "sigmoid": _saves_output,
    "tanh": _saves_output,
    "softmax": _saves_output,
    "log_softmax": _saves_output,
    # merges and arithmetic
    "add": _saves_nothing,
    "subtract": _saves_nothing,
    "concat": _saves_nothing,
    "multiply": _multiply,
    "divide": _divide,
    "matmul": _matmul,
    # pooling and reductions
    "maxpool": _pool_with_indices,
    "adaptive_max_pool": _pool_with_indices,
    "avgpool": _saves_input,
    "adaptive_avg_pool": _adaptive_avg,
    "global_avg_pool": _saves_nothing,
    "mean": _saves_nothing,
    "sum": _saves_nothing,
    "global_max_pool": _amax,
    "amax": _amax,
    "max": _amax,
    # resampling
    "pad": _pad,
    "upsample": _saves_nothing,
    "pixel_shuffle": _saves_nothing,
    # attention helpers
    "scaled_dot_product_attention": _sdpa,
    "rotary_embedding": _rotary,
}
for _name in (
    "gelu",
    "silu",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "softplus",
    "mish",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "glu",
):
    RULES[_name] = _saves_input


# ---------------------------------------------------------------- the loss and the loop

CLASS_LOSSES = frozenset({"cross_entropy", "cross_entropy_with_label_smoothing", "nll"})


def _loss(w: _Walker, out: View, loss: str, target_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The loss as the generated loop computes it: ``rt.match_target`` then the loss
    function. Returns the storages the loop keeps (outputs, targets, the loss)."""
    w.layer, w.unit = -2, -1
    w.saved = []
    # the loop keeps what match_target returns: the raw output only through it
    live: list[int] = []
    scratch = 0
    if loss in CLASS_LOSSES:
        classes = out.shape[-1]
        target_dtype = "int64"
        pairs = out
        if len(out.shape) > 2:
            if out.shape[:-1] == target_shape:
                pairs = w.reshaped(out, (numel(out.shape) // classes, classes))
            else:  # (batch, classes, ...): classes moved last, then flattened
                classes = out.shape[1]
                order = (0, *range(2, len(out.shape)), 1)
                moved = w.permuted(out, order)
                pairs = w.reshaped(moved, (numel(out.shape) // classes, classes))
        live.append(pairs.storage)
        if loss == "nll":
            pass  # the outputs are log-probabilities already: nll keeps the targets
        else:
            log_probs = w.new(pairs.shape, pairs.dtype)
            w.save(log_probs)  # log_softmax keeps its output
            scratch = w.storages[log_probs.storage].bytes  # nll's gradient of log_probs
        w.extra(1)  # nll_loss's total weight
    else:
        target_dtype = out.dtype
        live.append(out.storage)
        w.save(out)  # bce, mse, l1, huber keep their input (and the targets)
    targets = w.new(target_shape, target_dtype, grad=False)
    w.data.add(targets.storage)
    # mse and bce reduce an elementwise buffer that the scalar loss keeps as its storage
    loss_value = w.new(out.shape if loss in ("mse", "bce") else (), out.dtype)
    w.steps.append(
        Step(
            "loss",
            loss,
            -2,
            -1,
            tuple(dict.fromkeys(w.saved)),
            (),
            loss_value.grad_id,
            (out.grad_id,) if out.grad else (),
            scratch=scratch,
        )
    )
    return (*live, targets.storage, loss_value.storage)


def target_shape(out_shape: tuple[int, ...], loss: str) -> tuple[int, ...]:
    """The per-sample target shape the generated loop pairs with ``out_shape``."""
    if loss in CLASS_LOSSES:
        if len(out_shape) <= 1:
            return ()
        if len(out_shape) >= 3:
            return out_shape[1:]  # (classes, h, w) logits: (h, w) class maps
        return out_shape[:-1]
    return out_shape


def step_memory(
    graph: Graph,
    batch: int,
    loss: str | None = "cross_entropy",
    *,
    device: str = "cuda",
    policy: str = "ir",
    low: str = "float16",
    targets: tuple[int, ...] | None = None,
) -> StepMemory:
    """Walk ``graph`` at ``batch`` (see the module doc). ``policy``: ``ir`` (each value at
    its IR dtype), ``autocast`` (CUDA autocast to ``low``) or ``low`` (every float value in
    ``low``: FSDP's mixed precision). ``loss``: the job's loss (None: the model alone)."""
    w = _start(batch, device, policy, low)
    first = _input(w, graph)
    out = w.walk_graph(graph, first, "", top=True)
    live: tuple[int, ...] = (first.storage, out.storage)
    if loss is not None:
        live = (first.storage, *_finish(w, out, loss, targets))
    return _result(w, live)


def gan_step_memory(
    generator: Graph,
    discriminator: Graph,
    batch: int,
    loss: str = "bce",
    *,
    device: str = "cuda",
    policy: str = "ir",
    low: str = "float16",
) -> StepMemory:
    """The larger of a ``train_gan`` step's two phases (backends/torch/gan.py): the
    discriminator phase keeps D's activations on the real batch beside the fakes G made
    without a graph; the generator phase keeps G's activations and those of the frozen D
    judging G's output."""
    g_name, d_name = generator.name, discriminator.name
    w = _start(batch, device, policy, low)
    noise = _input(w, generator)
    fake = w.walk_graph(generator, noise, f"{g_name}/", top=True)
    w.frozen = True
    judged = w.walk_graph(discriminator, fake, f"{d_name}/", top=True)
    w.frozen = False
    generator_phase = _result(w, (noise.storage, *_finish(w, judged, loss, None)))
    w = _start(batch, device, policy, low)
    w.layer = -1
    made = w.new((batch, *plain(generator.output_value.sample_shape)), "float32", grad=False)
    real = _input(w, discriminator)
    out = w.walk_graph(discriminator, real, f"{d_name}/", top=True)
    d_phase = _result(w, (made.storage, real.storage, *_finish(w, out, loss, None)))
    if d_phase.activation_bytes > generator_phase.activation_bytes:
        return d_phase
    return generator_phase


def _start(batch: int, device: str, policy: str, low: str) -> _Walker:
    if batch < 1:
        raise ValueError("batch size must be positive")
    if policy not in DTYPE_POLICIES:
        raise ValueError(f"unknown dtype policy {policy!r}")
    return _Walker(batch, device, policy, low)


def _input(w: _Walker, graph: Graph) -> View:
    inp = graph.input_value
    shape = (w.batch, *plain(inp.sample_shape))
    dtype = inp.dtype or "float32"
    if w.policy == "low" and dtype in FLOAT_DTYPES:
        dtype = w.low
    w.layer = -1
    made = w.new(shape, dtype, grad=False)
    w.data.add(made.storage)
    return made


def _finish(w: _Walker, out: View, loss: str, targets: tuple[int, ...] | None) -> tuple[int, ...]:
    wanted = targets if targets is not None else target_shape(out.shape[1:], loss)
    if w.policy == "autocast" and out.dtype != "float32":
        w.layer = -2
        out = w.cast(out, "float32")  # outputs.to(torch.float32) before the loss
    return _loss(w, out, loss, (w.batch, *wanted))


def _result(w: _Walker, live: tuple[int, ...]) -> StepMemory:
    return StepMemory(
        batch=w.batch,
        storages=tuple(w.storages),
        steps=tuple(w.steps),
        live=frozenset(live),
        grad_bytes=dict(w.grad_bytes),
        unit_inputs={u: frozenset(s) for u, s in w.unit_inputs.items()},
        layers=tuple(w.layer_names),
        batch_data=frozenset(w.data),
    )


def graph_parameter_tensors(graph: Graph) -> list[int]:
    """The element counts of every parameter tensor of ``graph`` (blocks and repeats
    expanded), as ``model.parameters()`` lists them; a tied weight counts once."""
    values = graph.value_map
    found: list[int] = []
    for node in graph.nodes:
        if node.subgraph is not None:
            found += node.repeat * graph_parameter_tensors(node.subgraph)
            continue
        shape = values[node.inputs[0]].sample_shape if node.inputs else None
        found += parameter_tensors(node, plain(shape) if shape is not None else None)
    return found


def buffer_bytes(graph: Graph) -> int:
    """Running statistics: float32 mean and variance per channel and an int64 counter for
    each batchnorm (and instance_norm with ``track_running_stats``)."""
    values = graph.value_map
    total = 0
    for node in graph.nodes:
        if node.subgraph is not None:
            total += node.repeat * buffer_bytes(node.subgraph)
        elif node.op in ("batchnorm", "instance_norm") and node.args.get(
            "track_running_stats", node.op == "batchnorm"
        ):
            shape = plain(values[node.inputs[0]].sample_shape) or (0,)
            total += 2 * 4 * shape[0] + 8
    return total
