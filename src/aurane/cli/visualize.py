"""``aurane visualize``: architecture diagrams from the IR (rich tree, Mermaid, DOT, SVG)."""

from __future__ import annotations

import argparse
import sys

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    STDOUT,
    CommandError,
    check_output,
    write_output,
)

FORMATS = ("rich", "mermaid", "dot", "svg")
SUFFIXES = {
    ".svg": "svg",
    ".dot": "dot",
    ".gv": "dot",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".txt": "rich",
}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "visualize",
        help=command_help("visualize"),
        description="Draw each model from its IR: nodes show the call, the user's name for "
        "the value, output shape and parameters, coloured by operation family (legend); "
        "activations and suffixes are folded into the node they follow; edges are the real "
        "data flow (branches and merges), labelled with the shape where it changes; the "
        "returned value is marked. Composed blocks are one node unless --expand or "
        "--expand-block.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="rich (terminal tree, the default), mermaid, dot, or svg (drawn by Aurane, "
        "no Graphviz needed); with --output the default follows the file suffix",
    )
    parser.add_argument("--model", metavar="NAME", help="only this model")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (one model; '-': stdout)"
    )
    parser.add_argument(
        "--expand", action="store_true", help="draw the layers inside every composed block"
    )
    parser.add_argument(
        "--expand-block",
        action="append",
        default=[],
        metavar="PATH",
        help="draw the layers of this block call only (its node path, e.g. residualunit1 or "
        "repeat1[2]/block1; repeatable)",
    )
    parser.set_defaults(run=run)


def _format(args: argparse.Namespace) -> str:
    from pathlib import Path

    if args.format is not None:
        return str(args.format)
    if args.output:
        return SUFFIXES.get(Path(args.output).suffix.lower(), "rich")
    return "rich"


def run(args: argparse.Namespace) -> int:
    from aurane.analysis.diagrams import RENDERERS, RenderError, build_diagram
    from aurane.cli.ir import load_graphs

    if args.output == STDOUT:  # '-': stdout, as without --output
        args.output = None
    if args.output:  # before any work: a FIFO, a device or the source is never opened
        check_output(args.output, args.source)
    fmt = _format(args)
    graphs = load_graphs(args.source, args.model)
    if len(graphs) > 1 and (args.output or fmt == "svg"):
        names = ", ".join(g.name for g in graphs)
        raise CommandError(
            f"{args.source} has {len(graphs)} models ({names}); choose one with --model "
            "(nothing was written)",
            EXIT_USAGE,
        )
    if not graphs:
        raise CommandError(f"{args.source} has no model with an input_shape to draw")
    expand = True if args.expand else args.expand_block
    diagrams = [build_diagram(g, expand=expand) for g in graphs]
    # rich draws in a terminal; pipes and files get the same tree as stable plain text
    if fmt == "rich" and not args.output and sys.stdout.isatty() and _print_rich(diagrams):
        return EXIT_OK
    try:
        text = "\n\n".join(RENDERERS[fmt](d) for d in diagrams)
    except RenderError as error:
        raise CommandError(str(error)) from None
    if args.output:
        write_output(args.output, text if text.endswith("\n") else text + "\n")
    else:
        print(text)
    return EXIT_OK


def _print_rich(diagrams: list) -> bool:  # type: ignore[type-arg]
    from aurane.analysis.diagrams.text import rich_tree

    trees = [rich_tree(d) for d in diagrams]
    if any(tree is None for tree in trees):
        return False
    from rich.console import Console  # type: ignore[import-not-found, unused-ignore]

    console = Console(file=sys.stdout, highlight=False)
    for index, tree in enumerate(trees):
        if index:
            console.print()
        console.print(tree)
    return True
