"""``aurane profile``: static per-layer and total cost estimates from the IR (never torch)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    positive_int,
    print_json,
)

if TYPE_CHECKING:
    from aurane.frontend import FrontEnd
    from aurane.ir.graph import Graph


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
    from aurane.analysis.budgets import budget_json, budget_lines
    from aurane.analysis.memory import training_jobs, training_memory
    from aurane.analysis.profile import profile
    from aurane.analysis.report import model_text, profiles_json
    from aurane.cli.ir import load
    from aurane.semantics.sizes import jsonable

    # an exceeded budget (T115) is an error for check and compile; profile shows it
    front, graphs = load(args.source, args.model, json=args.json, allow=frozenset({"T115"}))
    if args.at:
        graphs = _bound(front, graphs, args.at, args.json)
    jobs = training_jobs(front.resolved) if front.resolved is not None else {}
    batch = args.batch_size or 1
    results = []
    for graph in graphs:
        prof = profile(graph, batch)
        job = jobs.get(graph.name)
        memory = training_memory(graph, prof, job, args.batch_size) if job else None
        results.append((prof, memory))
    program = front.resolved
    if args.json:
        payload = profiles_json(results, batch, explain=args.explain)
        for item, graph in zip(payload["models"], graphs, strict=True):
            model = program.model(graph.name) if program is not None else None
            if model is not None and model.budgets:
                item["budgets"] = budget_json(model, graph)
            if graph.symbols_json():
                item["symbols"] = graph.symbols_json()
        print_json(jsonable(payload))
    else:
        texts = []
        for (p, m), graph in zip(results, graphs, strict=True):
            text = model_text(p, m, detailed=args.detailed, explain=args.explain)
            model = program.model(graph.name) if program is not None else None
            if model is not None and model.budgets:
                text += "\n" + "\n".join(budget_lines(model, graph))
            texts.append(text)
        print("\n\n".join(texts))
    return EXIT_OK


def _bound(front: FrontEnd, graphs: list[Graph], at: list[str], json: bool) -> list[Graph]:
    """The graphs lowered again with symbolic sizes bound (``--at seq=128``)."""
    from aurane.analysis.bind import bind_sizes
    from aurane.cli.common import print_diagnostics
    from aurane.semantics.dims import parse_bindings

    assert front.resolved is not None
    try:
        sizes = parse_bindings(at)
        bound, diagnostics = bind_sizes(front.resolved, graphs, sizes)
    except ValueError as error:
        raise CommandError(f"--at: {error}", EXIT_USAGE) from None
    if not bound:
        if not json:
            print_diagnostics(diagnostics, front.source.text, args_path(front))
        raise CommandError(f"the model does not accept {', '.join(at)}", EXIT_INPUT, diagnostics)
    return bound


def args_path(front: FrontEnd) -> str:
    return front.source.filename
