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

from collections.abc import Mapping, Sequence
from typing import Any

from aurane.analysis.autograd_rules import RULES, bias_elements, parameter_tensors, saves_inputs
from aurane.analysis.memory import FULL_PRECISION_OPS, LOW_PRECISION_OPS, PROMOTING_OPS
from aurane.analysis.profile import dtype_bytes
from aurane.analysis.views import (
    GRAD_NONE,
    PARAMETER,
    View,
    contiguous_strides,
    like,
    plain,
    view_strides,
)
from aurane.ir.graph import Graph, Node
from aurane.ops.rules import FLOAT_DTYPES, numel
from aurane.records import field, record

__all__ = [
    "DTYPE_POLICIES",
    "Step",
    "StepMemory",
    "Storage",
    "buffer_bytes",
    "gan_step_memory",
    "graph_parameter_tensors",
    "parameter_tensors",
    "plain",
    "step_memory",
    "target_shape",
    "view_strides",
]


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
        rule = RULES.get(node.op, saves_inputs)
        trainable = node.parameters > 0 and not self.frozen
        grad_in = any(v.grad for v in ins) or trainable
        in_shape = ins[0].shape[1:] if ins else None
        if self.policy == "autocast" and node.op in LOW_PRECISION_OPS:
            ins = [self.cast(v, self.low) for v in ins]
            weights = sum(parameter_tensors(node, in_shape)) - bias_elements(node)
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
    each batchnorm (and instance_norm with ``track_running_stats``); and each ``buffer``
    (persistent or not: ``model.buffers()`` lists both) at its shape and dtype."""
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
        elif node.op == "buffer":
            value = values[node.output]
            total += numel(plain(value.sample_shape)) * dtype_bytes(value.dtype)
    return total
