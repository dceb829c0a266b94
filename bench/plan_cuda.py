"""``aurane plan`` against ``torch.cuda.max_memory_allocated`` on the zoo, on one GPU.

    python bench/plan_cuda.py                 # every zoo model at two batch sizes
    python bench/plan_cuda.py --only gpt2 resnet50 --out plan_cuda.json
    python bench/plan_cuda.py --ops           # also list what autograd saves per op

Runs from a checkout (imports ``src/aurane`` and ``bench/_plan_measure.py``); needs torch
with CUDA. For each zoo training job at its loader batch and at twice it, the generated
model trains three steps as the generated loop writes them (``zero_grad`` after the
forward pass); the third is measured:

- state: parameters, gradients and optimizer state, exactly (compared byte for byte);
- activations: what autograd saved plus the loop's live tensors (storages counted once,
  ``saved_tensors_hooks``) and ``memory_allocated`` after the loss minus before the forward
  pass (the allocator's view: blocks rounded up to 512 bytes);
- peak: ``max_memory_allocated`` over the step, with the plan's peak (state, activations,
  gradient flow, optimizer scratch) beside it.

A case that does not fit the GPU is skipped with a note. The GAN (dcgan) is measured per
model as a plain job (the discriminator with bce, the generator with mse to an image), so
its layers are checked the same way. About a minute on one H200.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))
sys.path.insert(0, str(BENCH))

import _plan_measure as pm  # noqa: E402
import torch  # noqa: E402

from aurane.analysis.memory import TrainJob  # noqa: E402
from aurane.analysis.plan import STRATEGIES, PlanJob, Side, plan_job  # noqa: E402

SINGLE = tuple(s for s in STRATEGIES if s.name == "single")
DEVICE = "cuda"  # --cpu: a dry run of the script's logic (no peak), small programs only


def measure(
    module: Any, job: PlanJob, graphs: Any, batch: int, amp: bool
) -> tuple[pm.Measured, float]:
    side = job.sides[0]
    graph = graphs[side.model]
    device = torch.device(DEVICE)
    with torch.device(device):
        model = getattr(module, side.model)()
    optimizer = pm.make_optimizer(model, side.train.optimizer, dict(side.train.options))
    inp = graph.input_value
    vocab = 1000
    for node in graph.nodes:
        if node.op == "embedding":
            vocab = int(node.args["vocabulary"])
    x, y = pm.sample_batch(
        inp.sample_shape,
        inp.dtype,
        graph.output_value.sample_shape,
        side.loss,
        batch,
        vocab,
        device,
    )
    start = time.perf_counter()
    result = pm.measure_step(
        model, x, y, side.loss, optimizer, warmup=2, amp_dtype=torch.float16 if amp else None
    )
    seconds = time.perf_counter() - start
    del model, optimizer, x, y
    return result, seconds


def pct(plan: int, measured: int) -> str:
    return f"{100 * (plan - measured) / measured:+.1f}%" if measured else "-"


def mib(count: int) -> str:
    return f"{count / 2**20:,.1f}"


def run_case(
    name: str, model: str, job: PlanJob, graphs: Any, text: str, batch: int, amp: bool
) -> dict[str, Any]:
    if amp:
        sides = tuple(
            Side(s.model, TrainJob(**{**_fields(s.train), "mixed_precision": True}), s.loss)
            for s in job.sides
        )
        job = PlanJob(job.kind, job.dataset, sides, job.batch)
    planned = plan_job(job, graphs, batch=batch, device=DEVICE, strategies=SINGLE)
    row = planned.strategies[0]
    module = pm.compile_module(text, f"{name}.aur")
    cuda = DEVICE == "cuda"
    if cuda:
        torch.cuda.empty_cache()
    baseline = torch.cuda.memory_allocated() if cuda else 0
    measured, seconds = measure(module, job, graphs, batch, amp)
    state = planned.state
    plan_state = (
        state.parameter_bytes,
        state.gradient_bytes,
        state.optimizer_bytes,
        state.buffer_bytes,
    )
    got_state = (
        measured.parameter_bytes,
        measured.gradient_bytes,
        measured.optimizer_bytes,
        measured.buffer_bytes,
    )
    peak = (measured.peak_bytes or 0) - baseline
    return {
        "program": name,
        "model": model,
        "batch": batch,
        "amp": amp,
        "state_equal": plan_state == got_state,
        "plan_state": plan_state,
        "measured_state": got_state,
        "plan_activations": planned.activation_bytes,
        "saved_activations": measured.activation_bytes,
        "allocator_activations": measured.allocated_activation_bytes,
        "plan_peak": row.peak_bytes,
        "measured_peak": peak,
        "phases": dict(row.phases),
        "seconds": round(seconds, 2),
        # what was kept, when the plan differs (to find the operation it misreads)
        "storages": measured.storages
        if planned.activation_bytes != measured.activation_bytes
        else [],
    }


def _fields(job: TrainJob) -> dict[str, Any]:
    return {
        "model": job.model,
        "role": job.role,
        "dataset": job.dataset,
        "optimizer": job.optimizer,
        "options": dict(job.options),
        "mixed_precision": job.mixed_precision,
        "batch": job.batch,
        "low_dtype": job.low_dtype,
    }


def print_row(r: dict[str, Any]) -> None:
    print(
        f"| {r['program']} | {r['model']} | {r['batch']}{' amp' if r['amp'] else ''} | "
        f"{'exact' if r['state_equal'] else 'DIFFERS'} | "
        f"{mib(r['plan_activations'])} | {mib(r['saved_activations'])} "
        f"({pct(r['plan_activations'], r['saved_activations'])}) | "
        f"{mib(r['allocator_activations'])} | {mib(r['plan_peak'])} | "
        f"{mib(r['measured_peak'])} ({pct(r['plan_peak'], r['measured_peak'])}) |",
        flush=True,
    )


def _saved_by(fn: Any, arg: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
    saved: list[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(arg)
    return saved, out


def op_probes() -> dict[str, Any]:
    """What autograd saves for single operations on CUDA (to calibrate autograd_rules.py)."""
    import torch.nn.functional as F
    from torch import nn

    dev = torch.device(DEVICE)
    x = torch.randn(2, 8, 64, device=dev, requires_grad=True)
    img = torch.randn(2, 4, 6, 6, device=dev, requires_grad=True)
    q = torch.randn(2, 4, 40, 16, device=dev, requires_grad=True)
    qb = torch.randn(2, 40, 4, 16, device=dev).transpose(1, 2).requires_grad_()
    attention = nn.MultiheadAttention(64, 4, batch_first=True, device=dev)
    probes: dict[str, Any] = {
        "rms_norm": (nn.RMSNorm(64, device=dev), x),
        "layer_norm": (nn.LayerNorm(64, device=dev), x),
        "dropout": (nn.Dropout(0.1), x),
        "gelu": (F.gelu, x),
        "batchnorm": (nn.BatchNorm2d(4, device=dev), img),
        "maxpool": (nn.MaxPool2d(2), img),
        "conv": (nn.Conv2d(4, 4, 3, device=dev), img),
        "sdpa": (lambda t: F.scaled_dot_product_attention(t, t, t, is_causal=True), q),
        "sdpa_bshd": (lambda t: F.scaled_dot_product_attention(t, t, t, is_causal=True), qb),
        "sdpa_half": (
            lambda t: F.scaled_dot_product_attention(t, t, t, is_causal=True),
            q.detach().half().requires_grad_(),
        ),
        "linear3d": (nn.Linear(64, 32, device=dev), x),
        "mha": (lambda t: attention(t, t, t, need_weights=False)[0], x),
    }
    found: dict[str, Any] = {}
    for name, (fn, arg) in probes.items():
        saved, out = _saved_by(fn, arg)
        found[name] = {
            "input": [list(arg.shape), list(arg.stride())],
            "output": [list(out.shape), list(out.stride())],
            "saved": [
                [
                    list(t.shape),
                    list(t.stride()),
                    str(t.dtype),
                    t.untyped_storage().nbytes(),
                    "input"
                    if pm.storage_key(t) == pm.storage_key(arg)
                    else "output"
                    if pm.storage_key(t) == pm.storage_key(out)
                    else "other",
                ]
                for t in saved
            ],
        }
    for name, loss in (("mse", nn.MSELoss()), ("bce", nn.BCELoss()), ("ce", nn.CrossEntropyLoss())):
        arg = torch.rand(4, 3, 8, device=dev, requires_grad=True)
        target = torch.randint(0, 3, (4, 8), device=dev) if name == "ce" else torch.rand_like(arg)
        saved, value = _saved_by(lambda t, f=loss, y=target: f(t, y), arg)
        found[f"loss_{name}"] = {
            "loss_storage_bytes": value.untyped_storage().nbytes(),
            "saved": [[list(t.shape), str(t.dtype), t.untyped_storage().nbytes()] for t in saved],
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="zoo programs (file stems)")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--ops", action="store_true", help="also probe single operations")
    parser.add_argument("--no-amp", action="store_true", help="skip the mixed-precision rows")
    parser.add_argument("--cpu", action="store_true", help="dry run on the CPU (no peak)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="rewrite a top-level constant of every program (a small dry run)",
    )
    args = parser.parse_args()
    global DEVICE
    if args.cpu:
        DEVICE = "cpu"
    elif not torch.cuda.is_available():
        sys.exit("plan_cuda.py needs a CUDA GPU (or --cpu for a dry run)")
    torch.backends.cudnn.benchmark = False
    started = time.perf_counter()
    device_name = torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu (dry run)"
    print(f"# plan vs measured on {device_name}, torch {torch.__version__}")
    print(
        "| program | model | batch | state | activations plan MiB | saved MiB (err) | "
        "allocator MiB | peak plan MiB | peak measured MiB (err) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    results: list[dict[str, Any]] = []
    for name, model, job, graphs, text in pm.zoo_cases(args.only, args.set):
        first = job.batch or 1
        runs = [(first, False), (2 * first, False)]
        if not args.no_amp and name in ("gpt2", "resnet50"):
            runs.append((first, True))
        for batch, amp in runs:
            try:
                row = run_case(name, model, job, graphs, text, batch, amp)
            except torch.cuda.OutOfMemoryError:  # noqa: PERF203
                print(f"| {name} | {model} | {batch} | skipped: does not fit |", flush=True)
                results.append(
                    {"program": name, "model": model, "batch": batch, "skipped": "out of memory"}
                )
            except Exception as error:  # noqa: BLE001 - report and go on to the next model
                traceback.print_exc()
                print(f"| {name} | {model} | {batch} | failed: {error!r:.80} |", flush=True)
                results.append(
                    {"program": name, "model": model, "batch": batch, "failed": repr(error)}
                )
            else:
                print_row(row)
                results.append(row)
            gc.collect()
            if DEVICE == "cuda":
                torch.cuda.empty_cache()
    probes = op_probes() if args.ops else {}
    total = time.perf_counter() - started
    print(f"# {len(results)} cases in {total:.0f} s", flush=True)
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "device": device_name,
                    "torch": torch.__version__,
                    "results": results,
                    "ops": probes,
                    "seconds": total,
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    if probes:
        print(json.dumps(probes, indent=None)[:20000])


if __name__ == "__main__":
    main()
