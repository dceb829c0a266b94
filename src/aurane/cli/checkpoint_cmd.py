"""``aurane checkpoint consolidate PATH -o model.pt``: an ordinary checkpoint from a sharded one.

A job trained with ``strategy = "fsdp"`` keeps its model and optimizer in
``torch.distributed.checkpoint`` folders beside its ``.pt`` files (``aurane.runtime.sharded``).
``consolidate`` writes one file with every entry whole: the model's tensors, the optimizer
in torch's own layout, and the rest of the checkpoint as it was. ``aurane export
--checkpoint``, ``aurane verify --checkpoint`` and a single-process ``--resume`` read it like
any checkpoint; ``torch.load(path, weights_only=True)["model"]`` is the model's state dict.
PATH is a checkpoint file, a run folder (its ``last.pt``) or a job's checkpoint folder (its
latest run).
"""

from __future__ import annotations

import argparse
import io
import sys

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, STDOUT, CommandError, check_output, write_output


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "checkpoint",
        help=command_help("checkpoint"),
        description="Work with training checkpoints. consolidate: write a checkpoint whose "
        'model and optimizer are sharded (strategy = "fsdp") as one ordinary file.',
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    consolidate = actions.add_parser(
        "consolidate",
        help="one ordinary checkpoint file from a sharded one",
        description="Write the checkpoint PATH (a .pt file, a run folder or a job's "
        "checkpoint folder) with its sharded model and optimizer gathered whole, loadable "
        "in one process by torch.load(weights_only=True), export and verify.",
    )
    consolidate.add_argument("path", metavar="PATH", help="checkpoint file or run folder")
    consolidate.add_argument(
        "-o", "--output", metavar="OUT", required=True, help="the file to write ('-': stdout)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import torch

    from aurane.runtime.checkpoint import READABLE_FORMATS
    from aurane.runtime.sharded import consolidate
    from aurane.trained import CheckpointRefused, checkpoint_file

    check_output(args.output)  # before any work: a FIFO or a device is never opened
    try:
        path = checkpoint_file(args.path)
        checkpoint = consolidate(path)
    except CheckpointRefused as error:
        raise CommandError(str(error), EXIT_INPUT) from None
    except ValueError as error:  # CheckpointError: its shards are missing
        raise CommandError(str(error), EXIT_INPUT) from None
    except Exception as error:  # not a checkpoint torch can read
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CommandError(f"{path!r} is not a readable checkpoint ({first})", EXIT_INPUT) from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") not in READABLE_FORMATS:
        raise CommandError(f"{path!r} is not an Aurane training checkpoint", EXIT_INPUT)
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    write_output(args.output, buffer.getvalue())
    if args.output != STDOUT:
        print(f"wrote {args.output} (from {path})", file=sys.stderr)
    return EXIT_OK
