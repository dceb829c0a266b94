"""``aurane plan``: training memory per device for each strategy, from the IR (never torch)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, positive_int

if TYPE_CHECKING:
    from aurane.analysis.plan import JobPlan

DEVICES = ("cuda", "cpu")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from aurane.analysis.plan import STRATEGY_NAMES

    parser = sub.add_parser(
        "plan",
        help=command_help("plan"),
        description="For each training job: the memory of parameters, gradients, optimizer "
        "state, activations (with and without checkpointing) and temporary buffers per "
        "device, for each strategy (single device, DDP, FSDP and its variants), the peak, "
        "the largest batch that fits --memory, and the three layers that need the most. "
        "Read from the IR alone; estimates exclude the CUDA context, cuDNN/cuBLAS "
        "workspaces and allocator rounding (docs/profile.md).",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--model", metavar="NAME", help="only the jobs that train this model")
    parser.add_argument(
        "--memory",
        metavar="SIZE",
        help="memory per device, as budgets write it (24GiB, 80GB, 512MiB): adds whether "
        "each strategy fits and its largest batch per device",
    )
    parser.add_argument(
        "--devices", type=positive_int, default=1, metavar="N", help="devices (default 1)"
    )
    parser.add_argument(
        "--batch",
        type=positive_int,
        metavar="B",
        help="batch per device (default: the job's loader batch)",
    )
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="cuda",
        help="where the job runs: kernels and optimizer defaults differ (default cuda)",
    )
    parser.add_argument(
        "--strategy",
        action="append",
        choices=STRATEGY_NAMES,
        metavar="NAME",
        help=f"only these strategies (repeatable): {', '.join(STRATEGY_NAMES)}",
    )
    parser.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="NAME=SIZE",
        help="evaluate symbolic sizes (seq = dim(...)) at these values, e.g. --at seq=128",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.analysis.plan import STRATEGIES, parse_size, plan_job, plan_jobs, plan_json
    from aurane.cli.common import print_json
    from aurane.cli.ir import load
    from aurane.cli.profile_cmd import _bound

    limit = None
    if args.memory is not None:
        try:
            limit = parse_size(args.memory)
        except ValueError as error:
            raise CommandError(f"--memory: {error}", EXIT_USAGE) from None
    front, graphs = load(args.source, None, json=args.json, allow=frozenset({"T115"}))
    if args.at:
        graphs = _bound(front, graphs, args.at, args.json)
    by_name = {graph.name: graph for graph in graphs}
    assert front.resolved is not None
    jobs = plan_jobs(front.resolved)
    if args.model is not None:
        jobs = [job for job in jobs if any(side.model == args.model for side in job.sides)]
    if not jobs:
        what = f"no training job trains '{args.model}'" if args.model else "no training job"
        raise CommandError(f"{what} in {args.source}: plan needs a train block", EXIT_INPUT)
    for job in jobs:
        for side in job.sides:
            if side.model not in by_name:
                raise CommandError(f"model '{side.model}' has no input_shape: nothing to plan")
            symbols = by_name[side.model].symbols_json()
            if symbols:
                names = ", ".join(f"{name}=N" for name in symbols)
                raise CommandError(
                    f"model '{side.model}' has symbolic sizes: give them with --at {names}",
                    EXIT_USAGE,
                )
    chosen = [s for s in STRATEGIES if not args.strategy or s.name in args.strategy]
    plans = [
        plan_job(
            job,
            by_name,
            batch=args.batch,
            devices=args.devices,
            device=args.device,
            memory_limit=limit,
            strategies=chosen,
        )
        for job in jobs
    ]
    if args.json:
        print_json({"file": args.source, "jobs": [plan_json(p) for p in plans]})
    else:
        print("\n\n".join(plan_text(p) for p in plans))
    return EXIT_OK


def plan_text(plan: JobPlan) -> str:
    from aurane.analysis.plan import format_bytes as fb

    job, state = plan.job, plan.state
    sides = job.sides
    optimizers = ", ".join(dict.fromkeys(side.train.optimizer for side in sides))
    losses = ", ".join(dict.fromkeys(side.loss for side in sides))
    amp = ", mixed precision" if sides[0].train.mixed_precision else ""
    devices = f"{plan.devices} device{'s' if plan.devices > 1 else ''}"
    lines = [
        f"{job.title}: {optimizers}, {losses}{amp}, batch {plan.batch} per device, "
        f"{devices} ({plan.device})",
        f"  parameters   {state.parameters:,} in {state.parameter_tensors} tensors",
        f"  state        parameters {fb(state.parameter_bytes)}, gradients "
        f"{fb(state.gradient_bytes)}, optimizer {fb(state.optimizer_bytes)} "
        f"({state.optimizer_note}), buffers {fb(state.buffer_bytes)}",
    ]
    if state.step_counter_bytes:
        where = "on the host" if plan.device == "cuda" else "counted in optimizer state"
        lines[-1] += f"; step counters {fb(state.step_counter_bytes)} ({where})"
    checkpoint = "no blocks to checkpoint"
    if plan.units:
        checkpoint = (
            f"with checkpointing {fb(plan.checkpointed_bytes)} (kept "
            f"{fb(plan.checkpoint_kept_bytes)} + one of {plan.units} blocks recomputed "
            f"{fb(plan.checkpoint_recompute_bytes)})"
        )
    lines.append(f"  activations  {fb(plan.activation_bytes)}; {checkpoint}")
    total = sum(share.bytes for share in plan.layers) or 1
    top = ", ".join(
        f"{share.layer} {fb(share.bytes)} ({100 * share.bytes / total:.0f}%)"
        for share in plan.layers[:3]
    )
    lines.append(f"  largest      {top}")
    headers = ["strategy", "generated", "parameters", "gradients", "optimizer"]
    headers += ["activations", "temporaries", "peak"]
    if plan.memory_limit is not None:
        headers.append(f"largest batch ({fb(plan.memory_limit)})")
    rows = []
    for row in plan.strategies:
        name = row.strategy.name + (f" x{row.devices}" if row.devices > 1 else "")
        cells = [name, "yes" if row.strategy.generated else "no"]
        cells += [fb(row.parameter_bytes), fb(row.gradient_bytes), fb(row.optimizer_bytes)]
        cells += [fb(row.activation_bytes), fb(row.temporary_bytes), fb(row.peak_bytes)]
        if plan.memory_limit is not None:
            fits = row.peak_bytes <= plan.memory_limit
            largest = plan.largest_batch.get(row.strategy.name)
            cells[-1] += "" if fits else " (too big)"
            cells.append("none" if largest is None else f"{largest:,}")
        rows.append(cells)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines.append("")
    for cells in [headers, *rows]:
        row_text = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        lines.append(f"  {row_text}".rstrip())
    offloaded = [r for r in plan.strategies if r.host_bytes]
    for row in offloaded:
        lines.append(f"  {row.strategy.name}: {fb(row.host_bytes)} on the host per device")
    lines.append(
        "  generated: the training code Aurane writes runs it (one device; under torchrun DDP, "
        'or FSDP2 with strategy = "fsdp"). Not counted: the CUDA context, cuDNN/cuBLAS '
        "workspaces, allocator rounding."
    )
    return "\n".join(lines)
