"""``aurane profile``: static per-layer and total cost estimates from the IR (never torch)."""

from __future__ import annotations

import argparse

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_OK, positive_int, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "profile",
        help=command_help("profile"),
        description="Static estimates read from the IR (work and memory, not latency): "
        "parameters, multiply-accumulates and FLOPs per sample (2 per MAC of dense, "
        "convolution, attention and recurrent products), other FLOPs, activation memory at "
        "--batch-size, and a training-memory estimate for models with a train job.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--model", metavar="NAME", help="only this model")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="N",
        default=None,
        help="batch size for activation memory (default 1; training memory "
        "uses the job's loader batch unless given)",
    )
    parser.add_argument(
        "--detailed",
        action="store_true",
        help="expand blocks, add other FLOPs, activations, dtypes and a per-operation breakdown",
    )
    parser.add_argument(
        "--explain", action="store_true", help="print the formula used for each layer"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.analysis.memory import training_jobs, training_memory
    from aurane.analysis.profile import profile
    from aurane.analysis.report import model_text, profiles_json
    from aurane.cli.ir import load

    front, graphs = load(args.source, args.model, json=args.json)
    jobs = training_jobs(front.resolved) if front.resolved is not None else {}
    batch = args.batch_size or 1
    results = []
    for graph in graphs:
        prof = profile(graph, batch)
        job = jobs.get(graph.name)
        memory = training_memory(graph, prof, job, args.batch_size) if job else None
        results.append((prof, memory))
    if args.json:
        print_json(profiles_json(results, batch, explain=args.explain))
    else:
        print(
            "\n\n".join(
                model_text(p, m, detailed=args.detailed, explain=args.explain) for p, m in results
            )
        )
    return EXIT_OK
