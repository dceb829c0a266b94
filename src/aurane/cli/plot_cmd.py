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
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    STDOUT,
    CommandError,
    check_output,
    os_reason,
    write_output,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "plot",
        help=command_help("plot"),
        description="Draw the loss and metric curves of one or more training runs (folders "
        "holding the metrics.jsonl a run writes beside its checkpoints) into one PNG.",
    )
    parser.add_argument("runs", metavar="RUN_DIR", nargs="+", help="a run's checkpoint folder")
    parser.add_argument(
        "-o", "--output", metavar="PNG", help="where to write the figure ('-': stdout)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(
            "aurane plot needs matplotlib: pip install 'aurane[plot]'", EXIT_INPUT
        ) from None
    from aurane.runtime.history import read_history, render_runs

    default = os.path.join(args.runs[0], "metrics.png") if len(args.runs) == 1 else "runs.png"
    output = args.output or default
    check_output(output)  # before any work: a FIFO or a device is never opened
    runs = []
    for folder in args.runs:
        where = os.path.join(folder, "metrics.jsonl")
        try:
            history = read_history(folder)
        except (FileNotFoundError, NotADirectoryError):
            raise CommandError(
                f"no metrics.jsonl in '{folder}': is it a run's checkpoint folder?", EXIT_INPUT
            ) from None
        except OSError as error:
            raise CommandError(f"cannot read '{where}': {os_reason(error)}") from None
        except ValueError as error:  # HistoryError: located at its line
            raise CommandError(str(error), EXIT_INPUT) from None
        if not history:
            raise CommandError(f"{where}: no rows yet (the run has not finished an epoch)")
        runs.append((os.path.basename(os.path.normpath(folder)) or folder, history))
    try:
        png, _ = render_runs(runs)
    except ValueError as error:  # too many quantities across the runs
        raise CommandError(str(error), EXIT_INPUT) from None
    write_output(output, png)
    if output != STDOUT:
        print(f"wrote {output}", file=sys.stderr)
    return EXIT_OK
