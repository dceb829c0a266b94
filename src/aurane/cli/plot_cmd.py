"""``aurane plot RUN_DIR [RUN_DIR...]``: loss and metric curves from runs' metrics.jsonl.

One panel per quantity (loss, each metric); training solid, validation dashed; one colour
per run, so several runs compare in one figure. Needs matplotlib (``pip install
aurane[plot]``); the figure goes to ``--output`` (default ``metrics.png`` in the first
RUN_DIR when one run is given, else ``runs.png`` in the working directory).
"""

from __future__ import annotations

import argparse
import os
import sys

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, CommandError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "plot",
        help=command_help("plot"),
        description="Draw the loss and metric curves of one or more training runs (folders "
        "holding the metrics.jsonl a run writes beside its checkpoints) into one PNG.",
    )
    parser.add_argument("runs", metavar="RUN_DIR", nargs="+", help="a run's checkpoint folder")
    parser.add_argument("-o", "--output", metavar="PNG", help="where to write the figure")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(
            "aurane plot needs matplotlib: pip install 'aurane[plot]'", EXIT_INPUT
        ) from None
    from aurane.runtime.history import plot_runs, read_history

    runs = []
    for folder in args.runs:
        try:
            history = read_history(folder)
        except FileNotFoundError:
            raise CommandError(
                f"no metrics.jsonl in '{folder}': is it a run's checkpoint folder?", EXIT_INPUT
            ) from None
        except ValueError as error:
            raise CommandError(
                f"cannot read '{folder}/metrics.jsonl': {error}", EXIT_INPUT
            ) from None
        runs.append((os.path.basename(os.path.normpath(folder)) or folder, history))
    default = os.path.join(args.runs[0], "metrics.png") if len(runs) == 1 else "runs.png"
    output = args.output or default
    plot_runs(runs, output)
    print(f"wrote {output}", file=sys.stderr)
    return EXIT_OK
