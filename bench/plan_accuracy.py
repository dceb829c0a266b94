"""``aurane plan`` against PyTorch for the whole zoo at full size, on the CPU.

    .venv/bin/python bench/plan_accuracy.py                # every zoo job, two batch sizes
    .venv/bin/python bench/plan_accuracy.py --only gpt2 --out /tmp/plan_accuracy.json

Each zoo training job at its loader batch and at twice it trains two steps as the generated
loop writes them, under ``FakeTensorMode``: PyTorch's autograd saves exactly the tensors
it would (shapes, strides, storages, views), but nothing is allocated or computed, so a
1.1B-parameter Llama at 2048 tokens runs on a laptop. Compared (bench/_plan_measure.py):
parameters, buffers, gradients and optimizer state, byte for byte, and the activations
(the storages autograd saved plus the loop's inputs, targets, outputs and loss, each once)
with the plan's, and the peak of a third step as ``MemTracker`` tracks it (every tensor)
with the plan's peak. The plan is for the CPU (``--device cpu``: dropout keeps float noise, the
RMSNorm composite keeps its normalized input, step counters live with the state); the
CUDA side is bench/plan_cuda.py. The GAN's models run as plain jobs (see plan_cuda.py),
on real tensors: they are small, and FakeTensorMode's ``mse_loss`` returns a fresh scalar
where the CPU kernel's loss keeps its elementwise buffer (the plan counts that buffer).
Prints a markdown table (docs/profile.md holds the last run's).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))
sys.path.insert(0, str(BENCH))

import _plan_measure as pm  # noqa: E402
import torch  # noqa: E402

from aurane.analysis.plan import STRATEGIES, plan_job  # noqa: E402

SINGLE = tuple(s for s in STRATEGIES if s.name == "single")
REAL = frozenset({"dcgan"})  # measured on real tensors (see the module doc)


def run_case(name: str, job: Any, graphs: Any, text: str, batch: int) -> dict[str, Any]:
    side = job.sides[0]
    graph = graphs[side.model]
    module = pm.compile_module(text, f"{name}.aur")
    vocab = next((int(n.args["vocabulary"]) for n in graph.nodes if n.op == "embedding"), 1000)
    started = time.perf_counter()
    with pm.fake_mode() if name not in REAL else contextlib.nullcontext():
        with pm.fake_safe_init() if name not in REAL else contextlib.nullcontext():
            model = getattr(module, side.model)()
        optimizer = pm.make_optimizer(model, side.train.optimizer, dict(side.train.options))
        inputs, targets = pm.sample_batch(
            graph.input_value.sample_shape,
            graph.input_value.dtype,
            graph.output_value.sample_shape,
            side.loss,
            batch,
            vocab,
            torch.device("cpu"),
        )
        measured = pm.measure_step(model, inputs, targets, side.loss, optimizer)
        peak = pm.mem_tracker_peak(model, inputs, targets, side.loss, optimizer)
    plan = plan_job(job, graphs, batch=batch, device="cpu", strategies=SINGLE)
    state = plan.state
    planned_state = (
        state.parameter_bytes,
        state.buffer_bytes,
        state.gradient_bytes,
        state.optimizer_bytes + state.step_counter_bytes,
    )
    measured_state = (
        measured.parameter_bytes,
        measured.buffer_bytes,
        measured.gradient_bytes,
        measured.optimizer_bytes + measured.step_counter_bytes,
    )
    return {
        "program": name,
        "model": side.model,
        "batch": batch,
        "state": planned_state,
        "state_equal": planned_state == measured_state,
        "measured_state": measured_state,
        "plan_activations": plan.activation_bytes,
        "measured_activations": measured.activation_bytes,
        "plan_peak": plan.strategies[0].peak_bytes,
        "measured_peak": peak,
        "seconds": round(time.perf_counter() - started, 1),
    }


def mib(count: int) -> str:
    return f"{count / 2**20:,.1f}"


def error(plan: int, measured: int) -> str:
    return f"{100 * (plan - measured) / measured:+.2f}%" if measured else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="zoo programs (file stems)")
    parser.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    print(f"# aurane plan vs PyTorch {torch.__version__} on the CPU (FakeTensorMode; dcgan real)")
    print(
        "| program | model | batch | state (params + grads + optimizer) MiB | state | "
        "activations plan MiB | measured MiB | error | peak plan MiB | MemTracker MiB | error |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    rows = []
    for name, _model, job, graphs, text in pm.zoo_cases(args.only, []):
        first = job.batch or 1
        for batch in (first, 2 * first):
            row = run_case(name, job, graphs, text, batch)
            rows.append(row)
            state = sum(row["state"]) - row["state"][1]
            print(
                f"| {name} | {row['model']} | {batch} | {mib(state)} | "
                f"{'exact' if row['state_equal'] else 'DIFFERS'} | "
                f"{mib(row['plan_activations'])} | {mib(row['measured_activations'])} | "
                f"{error(row['plan_activations'], row['measured_activations'])} | "
                f"{mib(row['plan_peak'])} | {mib(row['measured_peak'])} | "
                f"{error(row['plan_peak'], row['measured_peak'])} |",
                flush=True,
            )
    print(f"# {len(rows)} cases in {time.perf_counter() - started:.0f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
