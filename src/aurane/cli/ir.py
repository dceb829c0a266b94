"""``aurane ir``: the lowered graph as text or JSON."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, CommandError, print_diagnostics

if TYPE_CHECKING:
    from aurane.frontend import FrontEnd
    from aurane.ir.graph import Graph


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "ir",
        help=command_help("ir"),
        description="Print each model's IR: named values with shapes (batch first) and dtypes, "
        "and nodes with resolved arguments and parameter counts.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--model", metavar="NAME", help="only this model")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    parser.set_defaults(run=run)


def load_graphs(path: str, model: str | None) -> list[Graph]:
    """Front end + model selection shared by ir and visualize."""
    return load(path, model)[1]


def load(
    path: str, model: str | None, *, json: bool = False, allow: frozenset[str] = frozenset()
) -> tuple[FrontEnd, list[Graph]]:
    """The front end's result and the selected graphs (every model with an input_shape).

    With ``json``, located errors travel in the ``CommandError`` (the caller prints JSON)
    instead of being rendered on stderr.
    """
    from aurane.cli.common import source_text
    from aurane.frontend import run_front_end

    text = source_text(path, json=json)
    result = run_front_end(text, path)
    if not (json and not result.ok):
        print_diagnostics(result.diagnostics, text, path)
    if any(d.is_error and d.code not in allow for d in result.diagnostics):
        raise CommandError(f"{path} has errors", EXIT_INPUT, result.diagnostics)
    if model is None:
        return result, list(result.graphs.values())
    if model in result.graphs:
        return result, [result.graphs[model]]
    assert result.resolved is not None
    names = [m.name for m in result.resolved.models]
    if model in names:
        # SPEC 4: a model named with --model must stand alone; a located S014 like `train`
        from aurane.codes import diag

        chosen = next(m for m in result.resolved.models if m.name == model)
        selected = diag(
            "S014",
            f"model '{model}' is selected with --model, so it needs input_shape",
            chosen.name_span,
            hint="add input_shape = (...) to the model; without it, it is only a block "
            "of other models",
        )
        if not json:
            print_diagnostics([selected], text, path)
        raise CommandError(f"{path} has errors", EXIT_INPUT, [selected])
    raise CommandError(f"no model '{model}' in {path}; models: {', '.join(names) or 'none'}")


def run(args: argparse.Namespace) -> int:
    from aurane.ir.printer import graph_to_text, graphs_to_json

    graphs = load(args.source, args.model, json=args.format == "json")[1]
    if args.format == "json":
        print(graphs_to_json(graphs))
    else:
        print("\n\n".join(graph_to_text(g) for g in graphs))
    return EXIT_OK
