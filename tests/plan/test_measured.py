"""``aurane plan`` against PyTorch on the CPU: state exactly, activations as measured.

Zoo programs at small sizes (tests/plan/zoo_small.py: a transformer with learned and one
with rotary positions, a CNN, a GAN discriminator) run real training steps at two batch
sizes, as the generated loop writes them (bench/_plan_measure.py). The whole zoo at full
size is bench/plan_accuracy.py's job (docs/profile.md has its table). Measured:
parameters, buffers, gradients and optimizer state (every tensor, step counters too) and
the activations (each storage autograd saved, plus the loop's inputs, targets, outputs and
loss, each storage once). ``torch.distributed._tools.mem_tracker.MemTracker`` checks the
same step independently. On torch 2.14 the activation figures are exact; other versions
are held to the 10% of issue 27.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from aurane.analysis.plan import STRATEGIES, JobPlan, PlanJob, Side, plan_job, plan_jobs  # noqa: E402
from aurane.analysis.saved import step_memory  # noqa: E402
from aurane.frontend import run_front_end  # noqa: E402
from tests.plan.zoo_small import SMALL, small_source  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench"
SINGLE = tuple(s for s in STRATEGIES if s.name == "single")
EXACT = torch.__version__.startswith("2.14")
FAKE: frozenset[str] = frozenset()  # programs measured without running the optimizer


@pytest.fixture(scope="module")
def pm() -> Iterator[object]:
    sys.path.insert(0, str(BENCH))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: threads only contend on a shared machine
    try:
        import _plan_measure

        yield _plan_measure
    finally:
        torch.set_num_threads(threads)
        sys.path.remove(str(BENCH))


def job_of(program: str) -> tuple[PlanJob, dict, str]:  # type: ignore[type-arg]
    text = small_source(program)
    front = run_front_end(text, f"{program}.aur")
    assert front.ok and front.resolved is not None, front.diagnostics
    model = SMALL[program][0]
    job = next(j for j in plan_jobs(front.resolved) if any(s.model == model for s in j.sides))
    if job.kind == "train_gan":  # one side as a plain job: its layers, measured alike
        side = next(s for s in job.sides if s.model == model)
        job = PlanJob("train", job.dataset, (Side(model, side.train, "bce"),), job.batch)
    return job, front.graphs, text


def measure(pm: object, program: str, batch: int) -> tuple[JobPlan, object]:
    job, graphs, text = job_of(program)
    module = pm.compile_module(text, f"{program}.aur")  # type: ignore[attr-defined]
    torch.manual_seed(0)
    fake = program in FAKE
    with contextlib.nullcontext():
        return _measure(pm, job, graphs, module, batch, fake)


def _measure(
    pm: object,
    job: PlanJob,
    graphs: dict,  # type: ignore[type-arg]
    module: object,
    batch: int,
    fake: bool,
) -> tuple[JobPlan, object]:
    side = job.sides[0]
    graph = graphs[side.model]
    model = getattr(module, side.model)()
    optimizer = None
    if not fake:
        options = dict(side.train.options)
        optimizer = pm.make_optimizer(model, side.train.optimizer, options)  # type: ignore[attr-defined]
    vocab = next((int(n.args["vocabulary"]) for n in graph.nodes if n.op == "embedding"), 10)
    inputs, targets = pm.sample_batch(  # type: ignore[attr-defined]
        graph.input_value.sample_shape,
        graph.input_value.dtype,
        graph.output_value.sample_shape,
        side.loss,
        batch,
        vocab,
        torch.device("cpu"),
    )
    measured = pm.measure_step(model, inputs, targets, side.loss, optimizer)  # type: ignore[attr-defined]
    plan = plan_job(job, graphs, batch=batch, device="cpu", strategies=SINGLE)
    return plan, measured


@pytest.mark.parametrize("program", sorted(SMALL))
def test_state_exact_and_activations_as_measured(pm: object, program: str) -> None:
    for batch in (1, 3):
        plan, measured = measure(pm, program, batch)
        state = plan.state
        assert (state.parameter_bytes, state.buffer_bytes) == (
            measured.parameter_bytes,  # type: ignore[attr-defined]
            measured.buffer_bytes,  # type: ignore[attr-defined]
        ), (program, batch)
        if program not in FAKE:
            assert (
                state.gradient_bytes,
                state.optimizer_bytes,
                state.step_counter_bytes,
            ) == (
                measured.gradient_bytes,  # type: ignore[attr-defined]
                measured.optimizer_bytes,  # type: ignore[attr-defined]
                measured.step_counter_bytes,  # type: ignore[attr-defined]
            ), (program, batch)
        got = measured.activation_bytes  # type: ignore[attr-defined]
        if EXACT:
            assert plan.activation_bytes == got, (program, batch, plan.activation_bytes, got)
        else:
            assert abs(plan.activation_bytes - got) <= 0.10 * got, (program, batch)


def test_mem_tracker_agrees(pm: object) -> None:
    """MemTracker's categories after the forward pass of a tracked step: parameters,
    gradients and optimizer state exactly; activations are what the forward pass allocated
    (the batch was made before it, except the targets a reshape views during it);
    MemTracker rounds storages up to 512 bytes on CUDA only."""
    from torch import nn
    from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType, _ModState

    from aurane.runtime.metrics import match_target

    program = "gpt2"
    job, graphs, text = job_of(program)
    side = job.sides[0]
    module = pm.compile_module(text, f"{program}.aur")  # type: ignore[attr-defined]

    class Step(nn.Module):
        def __init__(self, model: nn.Module) -> None:
            super().__init__()
            self.model = model
            self.loss = nn.CrossEntropyLoss()

        def forward(self, x: object, y: object) -> object:
            out, target = match_target(self.model(x), y, "class")
            return out, self.loss(out, target)

    torch.manual_seed(0)
    step = Step(getattr(module, side.model)())
    optimizer = pm.make_optimizer(step, side.train.optimizer, dict(side.train.options))  # type: ignore[attr-defined]
    graph = graphs[side.model]
    x, y = pm.sample_batch(  # type: ignore[attr-defined]
        graph.input_value.sample_shape,
        graph.input_value.dtype,
        graph.output_value.sample_shape,
        "cross_entropy",
        2,
        64,
        torch.device("cpu"),
    )

    def train() -> None:
        _, loss = step(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    train()
    tracker = MemTracker()
    tracker.track_external(step, optimizer)
    with tracker:
        train()
    stats = tracker.memory_tracking[step]
    cpu = torch.device("cpu")
    before = stats.snapshots[_ModState.PRE_FW][-1][cpu]
    after = stats.snapshots[_ModState.POST_FW][-1][cpu]
    plan = plan_job(job, graphs, batch=2, device="cpu", strategies=SINGLE)
    state = plan.state
    assert after[_MemRefType.PARAM] == state.parameter_bytes, program
    assert after[_MemRefType.GRAD] == state.gradient_bytes, program
    assert after[_MemRefType.OPT] == state.optimizer_bytes + state.step_counter_bytes
    walk = step_memory(graph, 2, "cross_entropy", device="cpu")
    made = set(walk.kept - walk.batch_data)
    if len(graph.output_value.sample_shape or ()) > 1:
        # match_target reshapes (batch, seq) targets during the tracked forward: the
        # view's storage, the targets', is an activation to MemTracker
        made |= {s for s in walk.batch_data if walk.storages[s].layer == -2}
    planned = sum(walk.storages[s].bytes for s in made)
    activations = after[_MemRefType.ACT] - before[_MemRefType.ACT]
    if EXACT:
        assert planned == activations, (program, planned, activations)
    assert abs(planned - activations) <= 0.10 * activations, (program, planned, activations)


@pytest.mark.parametrize("program", sorted(SMALL))
def test_peak_is_mem_trackers_peak(pm: object, program: str) -> None:
    """The plan's peak (the largest of end of forward, each operation's backward and the
    optimizer step) against MemTracker's peak over a whole training step, every tensor
    counted, at batch 1 and 3."""
    job, graphs, text = job_of(program)
    side = job.sides[0]
    graph = graphs[side.model]
    module = pm.compile_module(text, f"{program}.aur")  # type: ignore[attr-defined]
    vocab = next((int(n.args["vocabulary"]) for n in graph.nodes if n.op == "embedding"), 10)
    for batch in (1, 3):
        torch.manual_seed(0)
        model = getattr(module, side.model)()
        options = dict(side.train.options)
        optimizer = pm.make_optimizer(model, side.train.optimizer, options)  # type: ignore[attr-defined]
        inputs, targets = pm.sample_batch(  # type: ignore[attr-defined]
            graph.input_value.sample_shape,
            graph.input_value.dtype,
            graph.output_value.sample_shape,
            side.loss,
            batch,
            vocab,
            torch.device("cpu"),
        )
        pm.measure_step(model, inputs, targets, side.loss, optimizer)  # type: ignore[attr-defined]
        measured = pm.mem_tracker_peak(model, inputs, targets, side.loss, optimizer)  # type: ignore[attr-defined]
        plan = plan_job(job, graphs, batch=batch, device="cpu", strategies=SINGLE)
        peak = plan.strategies[0].peak_bytes
        if EXACT:
            assert peak == measured, (program, batch, peak, measured)
        assert abs(peak - measured) <= 0.10 * measured, (program, batch, peak, measured)
