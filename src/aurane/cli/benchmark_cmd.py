"""``aurane benchmark SRC``: parse, cold compile and warm compile timings."""

from __future__ import annotations

import argparse
import sys

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    positive_int,
    print_diagnostics,
    print_json,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "benchmark",
        help=command_help("benchmark"),
        description="Time parse, cold compile (empty cache) and warm compile (cache hit) "
        "separately, each --iterations times, after one untimed round.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument(
        "--iterations", "-n", type=positive_int, default=10, metavar="N", help="rounds (default 10)"
    )
    parser.add_argument("--json", action="store_true", help="print raw seconds as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.cli.common import load_text
    from aurane.stages import CompilationError
    from aurane.tools.benchmark import run_benchmark, summary

    text = load_text(args.source)
    if text is None:
        return EXIT_INPUT
    try:
        result = run_benchmark(text, args.source, args.iterations)
    except CompilationError as error:
        print_diagnostics(error.diagnostics, text, args.source)
        return EXIT_INPUT
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print_json(result.to_json())
    else:
        print(f"{args.source}: {args.iterations} iteration(s)")
        print(summary(result))
    return EXIT_OK
