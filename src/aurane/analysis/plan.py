"""``aurane plan``: the memory of each training job per device, for each way of spreading
it over devices, and the largest batch that fits, from the IR alone (never torch).

Per job: parameters, buffers, gradients and optimizer state (exact: ``torch.optim``'s
tensors), activations (what autograd keeps at the end of the forward pass and the loss,
``aurane.analysis.saved``), with and without activation checkpointing, and temporary
buffers (gradients flowing through backward, the optimizer's foreach scratch). A strategy
is data (``STRATEGIES``): how it divides state over ``devices`` and which activation
variant it uses. The peak per device is the largest of three moments of a step:

- end of forward: state + the previous step's gradients (``zero_grad(set_to_none=True)``
  comes after the forward pass in the generated loop) + activations;
- backward: state + saved tensors still needed + gradients made so far + gradients
  flowing between operations (``StepMemory.backward_peak``);
- optimizer step: state + gradients + the loop's live tensors + the optimizer's scratch.

Rules, stated in docs/profile.md: DDP keeps a full replica and adds its gradient buckets
(one more copy of the gradients); FSDP (full shard) divides parameters, gradients and
optimizer state by the device count and adds the unsharded working copy (parameters and
gradients) of the root unit and the largest wrapped block; CPU offload keeps only that
working copy on the device; activation checkpointing per block keeps each block's input
plus one block's activations at a time; FSDP mixed precision computes in bfloat16.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aurane.analysis.memory import TrainJob, optimizer_states, training_jobs
from aurane.analysis.profile import dtype_bytes
from aurane.analysis.saved import (
    StepMemory,
    buffer_bytes,
    gan_step_memory,
    graph_parameter_tensors,
    step_memory,
)
from aurane.ir.graph import Graph
from aurane.records import field, record
from aurane.semantics import config
from aurane.syntax import ast

MAX_BATCH = 1 << 30  # the search for the largest batch stops here


@record(frozen=True)
class Strategy:
    """One way to run a training job on ``devices`` devices."""

    name: str
    summary: str
    generated: bool  # the training code Aurane writes runs this today
    replicate: bool = True  # every device holds all parameters, gradients and state
    buckets: bool = False  # DDP's gradient buckets: one more copy of the gradients
    shard: bool = False  # FSDP full shard: state divided by the device count
    offload: bool = False  # parameters, gradients and optimizer state on the host
    checkpoint: bool = False  # activation checkpointing per block
    low_precision: bool = False  # FSDP MixedPrecision: bfloat16 parameters and compute


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("single", "one device, as the job is written", generated=True),
    Strategy(
        "ddp",
        "DistributedDataParallel, one process per device (torchrun)",
        generated=True,
        buckets=True,
    ),
    # the train fields that generate each (issue 27): strategy, activation_checkpointing,
    # cpu_offload, fsdp_precision; FSDP's units are rt.blocks's, as ``_units`` counts them
    Strategy(
        "fsdp",
        'FSDP2 full shard, each block a unit (strategy = "fsdp")',
        generated=True,
        shard=True,
    ),
    Strategy(
        "fsdp+checkpoint",
        "FSDP2 full shard with activation checkpointing per block "
        "(and activation_checkpointing = true)",
        generated=True,
        shard=True,
        checkpoint=True,
    ),
    Strategy(
        "fsdp+offload",
        "FSDP2 full shard with parameters, gradients and optimizer state on the CPU "
        "(and cpu_offload = true)",
        generated=True,
        shard=True,
        offload=True,
    ),
    Strategy(
        "fsdp+mixed",
        'FSDP2 full shard with bfloat16 parameters and compute (and fsdp_precision = "bf16")',
        generated=True,
        shard=True,
        low_precision=True,
    ),
)
STRATEGY_NAMES = tuple(s.name for s in STRATEGIES)

# per optimizer: the foreach step's scratch, in copies of the local parameters
# (torch.optim's _multi_tensor_* functions), and whether weight decay adds one
_STEP_SCRATCH: dict[str, tuple[int, bool]] = {
    "adam": (1, False),  # sqrt of the second moment (the decayed grads are freed first)
    "adamw": (1, False),
    "sgd": (0, True),  # decayed gradients; nesterov adds one
    "rmsprop": (1, True),  # sqrt of the square average
    "adagrad": (1, True),
    "adadelta": (2, True),
}
_HAS_STEP_COUNTER = frozenset({"adam", "adamw", "rmsprop", "adagrad", "adadelta"})


@record(frozen=True)
class Side:
    """One model a job trains, with its optimizer and loss."""

    model: str
    train: TrainJob
    loss: str


@record(frozen=True)
class PlanJob:
    kind: str  # "train" or "train_gan"
    dataset: str
    sides: tuple[Side, ...]  # train: one; train_gan: generator, discriminator
    batch: int | None  # the loader's batch

    @property
    def title(self) -> str:
        models = " and ".join(side.model for side in self.sides)
        return f"{self.kind} {models} on {self.dataset}"


def plan_jobs(program: ast.AuraneProgram) -> list[PlanJob]:
    """Every training job of the resolved program, in source order."""
    trains = training_jobs(program)
    found: list[PlanJob] = []
    for stmt in program.statements:
        if isinstance(stmt, ast.Train):
            models = [(stmt.model.id, "loss")]
        elif isinstance(stmt, ast.TrainGan):
            models = [
                (stmt.generator.id, "generator_loss"),
                (stmt.discriminator.id, "discriminator_loss"),
            ]
        else:
            continue
        sides = []
        for model, key in models:
            job = trains.get(model)
            if job is None:
                break
            sides.append(Side(model, job, _loss_name(stmt.fields, key)))
        else:
            batch = sides[0].train.batch if sides else None
            kind = "train" if isinstance(stmt, ast.Train) else "train_gan"
            found.append(PlanJob(kind, stmt.dataset.id, tuple(sides), batch))
    return found


def _loss_name(fields: tuple[ast.Field, ...], key: str) -> str:
    expr = next((f.value for f in fields if f.name == key), None)
    default = "cross_entropy" if key == "loss" else "bce"
    name = config.option_name(expr) if expr is not None else default
    return config.canonical_loss(name) or default


# ---------------------------------------------------------------- figures


@record(frozen=True)
class State:
    """Parameters, buffers, gradients and optimizer state of a job (every side)."""

    parameters: int  # elements
    parameter_tensors: int
    parameter_bytes: int
    buffer_bytes: int
    gradient_bytes: int
    optimizer_bytes: int  # moments and other per-parameter buffers
    step_counter_bytes: int  # one float32 ``step`` per tensor (on the host under CUDA)
    largest_tensor_bytes: int
    step_scratch: int  # the foreach step's scratch, in copies of the parameters
    optimizer_note: str


@record(frozen=True)
class StrategyMemory:
    strategy: Strategy
    devices: int
    parameter_bytes: int
    buffer_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    activation_bytes: int
    temporary_bytes: int
    peak_bytes: int
    host_bytes: int = 0
    phases: Mapping[str, int] = field(default_factory=dict)
    # every moment the peak is the largest of (end of forward, optimizer step, each
    # operation's backward): for batches of 2 and more each is affine in the batch
    candidates: tuple[int, ...] = ()

    @property
    def steady_bytes(self) -> int:
        return (
            self.parameter_bytes
            + self.buffer_bytes
            + self.gradient_bytes
            + self.optimizer_bytes
            + self.activation_bytes
        )


@record(frozen=True)
class LayerShare:
    layer: str
    activation_bytes: int
    state_bytes: int

    @property
    def bytes(self) -> int:
        return self.activation_bytes + self.state_bytes


@record(frozen=True)
class JobPlan:
    job: PlanJob
    batch: int
    devices: int
    device: str
    state: State
    activation_bytes: int
    checkpoint_kept_bytes: int
    checkpoint_recompute_bytes: int
    strategies: tuple[StrategyMemory, ...]
    layers: tuple[LayerShare, ...]  # largest first
    largest_batch: Mapping[str, int | None] = field(default_factory=dict)
    memory_limit: int | None = None
    units: int = 0  # wrapped blocks (checkpoint / FSDP units)
    walks: int = 0  # IR walks made (batch sizes x dtype policies): the plan's work

    @property
    def checkpointed_bytes(self) -> int:
        return self.checkpoint_kept_bytes + self.checkpoint_recompute_bytes


def _state(job: PlanJob, graphs: Mapping[str, Graph]) -> State:
    parameters = tensors = param_bytes = optimizer = counters = largest = scratch = 0
    notes = []
    buffers = 0
    for side in job.sides:
        graph = graphs[side.model]
        width = dtype_bytes(graph.param_dtype)
        sizes = graph_parameter_tensors(graph)
        buffers += buffer_bytes(graph)
        count = sum(sizes)
        parameters += count
        tensors += len(sizes)
        param_bytes += count * width
        states, note = optimizer_states(side.train.optimizer, side.train.options)
        optimizer += states * count * width
        notes.append(note)
        if side.train.optimizer in _HAS_STEP_COUNTER:
            counters += 4 * len(sizes)
        largest = max([largest, *(size * width for size in sizes)])
        base, decay = _STEP_SCRATCH.get(side.train.optimizer, (1, False))
        options = side.train.options
        extra = int(decay and bool(options.get("weight_decay")))
        extra += int(side.train.optimizer == "sgd" and bool(options.get("nesterov")))
        scratch = max(scratch, base + extra)
    return State(
        parameters=parameters,
        parameter_tensors=tensors,
        parameter_bytes=param_bytes,
        buffer_bytes=buffers,
        gradient_bytes=param_bytes,
        optimizer_bytes=optimizer,
        step_counter_bytes=counters,
        largest_tensor_bytes=largest,
        step_scratch=scratch,
        optimizer_note="; ".join(dict.fromkeys(notes)),
    )


class _Walks:
    """Walks of one job, cached per batch and dtype policy."""

    def __init__(self, job: PlanJob, graphs: Mapping[str, Graph], device: str) -> None:
        self.job, self.graphs, self.device = job, graphs, device
        self.cache: dict[tuple[int, str], StepMemory] = {}

    def policy(self, low_precision: bool) -> str:
        if low_precision:
            return "low"
        amp = self.job.sides[0].train.mixed_precision and self.device == "cuda"
        return "autocast" if amp else "ir"

    def walk(self, batch: int, policy: str) -> StepMemory:
        key = (batch, policy)
        if key not in self.cache:
            self.cache[key] = self._walk(batch, policy)
        return self.cache[key]

    def _walk(self, batch: int, policy: str) -> StepMemory:
        side = self.job.sides[0]
        low = "bfloat16" if policy == "low" else side.train.low_dtype
        if self.job.kind == "train_gan":
            generator, discriminator = (self.graphs[s.model] for s in self.job.sides)
            return gan_step_memory(
                generator,
                discriminator,
                batch,
                self.job.sides[0].loss,
                device=self.device,
                policy=policy,
                low=low,
            )
        return step_memory(
            self.graphs[side.model], batch, side.loss, device=self.device, policy=policy, low=low
        )


def _units(walk: StepMemory) -> tuple[int, int]:
    """(root parameters, largest wrapped unit's parameters), in elements."""
    per_unit: dict[int, int] = {}
    root = 0
    for step in walk.steps:
        size = sum(step.param_tensors)
        if step.unit < 0:
            root += size
        else:
            per_unit[step.unit] = per_unit.get(step.unit, 0) + size
    return root, max(per_unit.values(), default=0)


def _strategy_memory(
    strategy: Strategy, walks: _Walks, state: State, batch: int, devices: int
) -> StrategyMemory:
    n = devices if strategy.shard else 1
    walk = walks.walk(batch, walks.policy(strategy.low_precision))
    width = state.parameter_bytes // max(state.parameters, 1) if state.parameters else 4
    root, largest_unit = _units(walk)
    working_width = 2 if strategy.low_precision else width
    # the unsharded copy of the units in use; on one device FSDP computes on its only
    # shard in place, unless it must move it (offload) or cast it (mixed precision)
    copies = strategy.shard and (devices > 1 or strategy.offload or strategy.low_precision)
    working = (root + largest_unit) * working_width if copies else 0
    if strategy.offload:
        params = working
        grads = working
        optimizer = 0
        host = -(-state.parameter_bytes // n) + -(-state.gradient_bytes // n)
        host += -(-state.optimizer_bytes // n)
    else:
        params = -(-state.parameter_bytes // n) + working
        grads = -(-state.gradient_bytes // n) + (working if strategy.shard else 0)
        optimizer = -(-state.optimizer_bytes // n)
        host = 0
    # DDP's gradient buckets (allocated at any world size) are never freed
    buckets = state.gradient_bytes if strategy.buckets else 0
    if walks.device == "cpu":
        optimizer += -(-state.step_counter_bytes // n)
    if strategy.checkpoint:
        kept, recompute = walk.checkpointed_bytes()
        activations = kept + recompute
    else:
        activations = walk.activation_bytes
    persistent = params + state.buffer_bytes + optimizer + buckets
    live = sum(walk.storages[s].bytes for s in walk.live)
    if strategy.offload:
        scratch = 0  # the optimizer steps on the host
    elif walks.device == "cuda":
        scratch = state.step_scratch * -(-state.parameter_bytes // n)
    else:
        scratch = state.step_scratch * state.largest_tensor_bytes
    forward_end = persistent + grads + activations
    if strategy.checkpoint:
        flow = max(0, walk.backward_peak(0) - walk.activation_bytes)
        held = [persistent + grads + activations + flow]
    else:
        local_grads = grads - (working if strategy.shard and not strategy.offload else 0)
        extra = persistent + grads - local_grads
        held = [extra + value for value in walk.backward_held(local_grads)]
    backward = max(held, default=persistent)
    step = persistent + grads + live + scratch
    peak = max(forward_end, backward, step)
    return StrategyMemory(
        strategy=strategy,
        devices=devices if strategy.name != "single" else 1,
        parameter_bytes=params,
        buffer_bytes=state.buffer_bytes,
        gradient_bytes=grads + buckets,
        optimizer_bytes=optimizer,
        activation_bytes=activations,
        temporary_bytes=max(0, peak - forward_end),
        peak_bytes=peak,
        host_bytes=host,
        phases={"forward": forward_end, "backward": backward, "optimizer_step": step},
        candidates=(forward_end, step, *held),
    )


def _largest_batch(
    strategy: Strategy, walks: _Walks, state: State, devices: int, limit: int
) -> int | None:
    """The largest batch per device whose peak fits ``limit`` (None: not even 1).

    From batch 2 on, every storage is a fixed size or proportional to the batch (the view
    decisions that differ at batch 1 are the same for 2 and more), so each candidate moment
    of the peak is affine in the batch: two walks (batch 2 and 3) give each line, the
    answer is where the first line crosses the limit, and it is checked on both sides
    (bisection takes over should a check fail)."""

    def memory(batch: int) -> StrategyMemory:
        return _strategy_memory(strategy, walks, state, batch, devices)

    if memory(1).peak_bytes > limit:
        return None
    two, three = memory(2).candidates, memory(3).candidates
    if memory(2).peak_bytes > limit:
        return 1
    guess = MAX_BATCH
    if len(two) == len(three):
        for at_two, at_three in zip(two, three, strict=True):
            slope = at_three - at_two
            if slope > 0:
                guess = min(guess, 2 + (limit - at_two) // slope)
        guess = max(2, min(guess, MAX_BATCH))
        fits = memory(guess).peak_bytes <= limit
        if fits and (guess == MAX_BATCH or memory(guess + 1).peak_bytes > limit):
            return guess
    low, high = 2, 4  # bisection: the peak never falls as the batch grows
    while high < MAX_BATCH and memory(high).peak_bytes <= limit:
        low, high = high, high * 2
    if high >= MAX_BATCH and memory(MAX_BATCH).peak_bytes <= limit:
        return MAX_BATCH
    while high - low > 1:
        middle = (low + high) // 2
        if memory(middle).peak_bytes <= limit:
            low = middle
        else:
            high = middle
    return low


def plan_job(
    job: PlanJob,
    graphs: Mapping[str, Graph],
    *,
    batch: int | None = None,
    devices: int = 1,
    device: str = "cuda",
    memory_limit: int | None = None,
    strategies: Sequence[Strategy] = STRATEGIES,
) -> JobPlan:
    """The plan of one training job (see the module doc)."""
    if devices < 1:
        raise ValueError("the device count must be positive")
    chosen = batch or job.batch or 1
    walks = _Walks(job, graphs, device)
    base = walks.walk(chosen, walks.policy(False))
    state = _state(job, graphs)
    kept, recompute = base.checkpointed_bytes()
    rows = tuple(_strategy_memory(s, walks, state, chosen, devices) for s in strategies)
    largest: dict[str, int | None] = {}
    if memory_limit is not None:
        for s in strategies:
            largest[s.name] = _largest_batch(s, walks, state, devices, memory_limit)
    return JobPlan(
        job=job,
        batch=chosen,
        devices=devices,
        device=device,
        state=state,
        activation_bytes=base.activation_bytes,
        checkpoint_kept_bytes=kept,
        checkpoint_recompute_bytes=recompute,
        strategies=rows,
        layers=_layer_shares(job, graphs, base, state),
        largest_batch=largest,
        memory_limit=memory_limit,
        units=len(base.unit_inputs),
        walks=len(walks.cache),
    )


def _layer_shares(
    job: PlanJob, graphs: Mapping[str, Graph], walk: StepMemory, state: State
) -> tuple[LayerShare, ...]:
    """Each top-level layer's kept activations plus the parameters, gradients and optimizer
    state of its parameters, largest first."""
    per_param = 0
    if state.parameters:
        per_param = (
            state.parameter_bytes + state.gradient_bytes + state.optimizer_bytes
        ) // state.parameters
    acts = walk.by_layer()
    params: dict[int, int] = {}
    for step in walk.steps:
        params[step.layer] = params.get(step.layer, 0) + sum(step.param_tensors)
    names = dict(enumerate(walk.layers))
    names[-1] = "input"
    names[-2] = "loss"
    del graphs, job
    shares = [
        LayerShare(names.get(index, "?"), acts.get(index, 0), params.get(index, 0) * per_param)
        for index in sorted(set(acts) | set(params))
    ]
    shares.sort(key=lambda s: (-s.bytes, s.layer))
    return tuple(shares)


# ---------------------------------------------------------------- sizes


def parse_size(text: str) -> int:
    """A memory amount as budgets write it: ``24GiB``, ``512MiB``, ``80GB``, ``1_000_000``
    (bytes). Raises ValueError."""
    from aurane.syntax.tokens import amount_value

    cleaned = text.strip()
    if cleaned.isdigit():
        return int(cleaned)
    value = amount_value(cleaned)
    if value is None or not cleaned.endswith("B") or int(value) <= 0:
        raise ValueError(f"expected a memory size such as 24GiB or 512MiB, got {text!r}")
    return int(value)


def format_bytes(count: int) -> str:
    """``1.50 GiB``: binary units, as budgets write them."""
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{count} B" if unit == "B" else f"{size:.2f} {unit}"
        size /= 1024
    return f"{count} B"  # pragma: no cover


def plan_json(plan: JobPlan) -> dict[str, Any]:
    """The JSON object of one job's plan (schema in docs/profile.md)."""
    state = plan.state
    return {
        "job": plan.job.title,
        "kind": plan.job.kind,
        "models": [side.model for side in plan.job.sides],
        "dataset": plan.job.dataset,
        "optimizers": [side.train.optimizer for side in plan.job.sides],
        "losses": [side.loss for side in plan.job.sides],
        "mixed_precision": plan.job.sides[0].train.mixed_precision,
        "batch_size": plan.batch,
        "devices": plan.devices,
        "device": plan.device,
        "memory_limit": plan.memory_limit,
        "parameters": state.parameters,
        "parameter_tensors": state.parameter_tensors,
        "state": {
            "parameter_bytes": state.parameter_bytes,
            "buffer_bytes": state.buffer_bytes,
            "gradient_bytes": state.gradient_bytes,
            "optimizer_bytes": state.optimizer_bytes,
            "step_counter_bytes": state.step_counter_bytes,
            "optimizer": state.optimizer_note,
        },
        "activations": {
            "bytes": plan.activation_bytes,
            "checkpointed_bytes": plan.checkpointed_bytes,
            "checkpoint_kept_bytes": plan.checkpoint_kept_bytes,
            "checkpoint_recompute_bytes": plan.checkpoint_recompute_bytes,
            "checkpoint_units": plan.units,
        },
        "largest_layers": [
            {
                "layer": share.layer,
                "activation_bytes": share.activation_bytes,
                "state_bytes": share.state_bytes,
                "bytes": share.bytes,
            }
            for share in plan.layers[:3]
        ],
        "strategies": [
            {
                "name": row.strategy.name,
                "summary": row.strategy.summary,
                "generated": row.strategy.generated,
                "devices": row.devices,
                "parameter_bytes": row.parameter_bytes,
                "buffer_bytes": row.buffer_bytes,
                "gradient_bytes": row.gradient_bytes,
                "optimizer_bytes": row.optimizer_bytes,
                "activation_bytes": row.activation_bytes,
                "temporary_bytes": row.temporary_bytes,
                "peak_bytes": row.peak_bytes,
                "host_bytes": row.host_bytes,
                "phases": dict(row.phases),
                "fits": None if plan.memory_limit is None else row.peak_bytes <= plan.memory_limit,
                "largest_batch": plan.largest_batch.get(row.strategy.name),
            }
            for row in plan.strategies
        ],
    }
