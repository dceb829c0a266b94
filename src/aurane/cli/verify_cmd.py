"""``aurane verify SRC``: check the IR's shapes, dtypes and parameter counts against torch.

Exit 0 when every checked fact matches, 1 on errors in the input or on a mismatch (each a
located T110-T113 diagnostic that says it is a compiler bug), 2 on usage errors, 123 when
aurane itself fails. See docs/trust.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, CommandError, print_diagnostics, print_json

if TYPE_CHECKING:
    from aurane.verify import ModelReport


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "verify",
        help=command_help("verify"),
        description="Build each model on the meta device (no real weights), run it on inputs "
        "of the declared shape and dtype (batch 2) and check every IR value's shape and dtype "
        "and every layer's parameter count against what torch observes. A mismatch is a "
        "compiler bug, reported at the .aur span that produced the value.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--model", metavar="NAME", help="only this model")
    parser.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="run with a training checkpoint's weights (a file, run folder or job folder): "
        "only the models whose weights it holds, on the CPU",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON report on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.cli.common import load_text, source_text
    from aurane.stages import CompilationError

    # with --json, bad UTF-8 is a JSON failure like every other outcome (main prints it)
    text = source_text(args.source, json=True) if args.json else load_text(args.source)
    if text is None:
        return EXIT_INPUT
    try:
        reports = verify_reports(text, args.source, args.model, args.checkpoint)
    except CompilationError as error:
        print_diagnostics(error.diagnostics, text, args.source)
        if args.json:
            print_json({"ok": False, "file": args.source, "models": [], "error": "compile"})
        return EXIT_INPUT
    return show(reports, text, args.source, as_json=args.json)


def verify_reports(
    text: str, filename: str, model: str | None, checkpoint: str | None = None
) -> list[ModelReport]:
    """Reports for the selected models; an unknown ``--model`` is a CommandError. With a
    checkpoint: the selected models whose weights it holds (none: a CommandError)."""
    from aurane.trained import CheckpointRefused, checkpoint_file
    from aurane.verify import load_generated, verify_model

    gen = load_generated(text, filename)
    if model is not None and model not in gen.graphs:
        known = ", ".join(gen.graphs) or "none"
        raise CommandError(f"no standalone model '{model}' in {filename}; models: {known}")
    names = [model] if model is not None else list(gen.graphs)
    if checkpoint is None:
        return [verify_model(gen, name) for name in names]
    try:
        path = checkpoint_file(checkpoint)
    except CheckpointRefused as error:
        raise CommandError(str(error)) from None
    reports, refusals = [], []
    for name in names:
        try:
            reports.append(verify_model(gen, name, checkpoint=path))
        except CheckpointRefused as error:
            refusals.append(str(error))
    if not reports:
        raise CommandError("; ".join(refusals) or f"{filename} has no model to verify")
    return reports


def show(
    reports: list[ModelReport],
    text: str,
    filename: str,
    *,
    as_json: bool = False,
    stream: TextIO | None = None,
) -> int:
    """Print the reports (diagnostics to stderr, summary to ``stream``); the exit status."""
    ok = all(r.ok for r in reports)
    for report in reports:
        print_diagnostics(report.diagnostics, text, filename)
    if as_json:
        print_json({"ok": ok, "file": filename, "models": [r.to_json() for r in reports]})
        return EXIT_OK if ok else EXIT_INPUT
    stream = stream or sys.stdout
    for r in reports:
        state = "ok" if r.ok else f"FAILED ({len(r.diagnostics)} mismatches)"
        note = f"; not traced: {', '.join(r.unmapped_classes)}" if r.unmapped_classes else ""
        if r.checkpoint is not None:
            note += f"; trained weights: {r.checkpoint} ({r.weights_entry})"
        print(
            f"{r.name}: {state}: {r.values_checked} of {r.values_expected} values and "
            f"{r.parameters_checked} "
            f"parameter counts checked on the {r.device} device in {r.seconds:.2f}s{note}",
            file=stream,
        )
    if not reports:
        print(f"{filename}: no standalone model to verify", file=stream)
    elif not ok:
        print("verify found compiler bugs: please report them with the file", file=sys.stderr)
    return EXIT_OK if ok else EXIT_INPUT
