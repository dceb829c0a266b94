"""``aurane export SRC --format onnx|pt2 [--model NAME] [-o OUT]``.

One model (the only one, or ``--model``): OUT is the file (default ``SRC`` with the
format's suffix). Several models: OUT is a folder (created) holding ``<Model>.<format>``;
without OUT the files go beside SRC as ``<stem>.<Model>.<format>``. Each artifact is
loaded back and checked numerically against the module before success is reported.
Exit 0 ok, 1 errors in the input, 2 usage errors (including a missing optional package:
``pip install 'aurane[export]'``), 123 when an exporter fails or the exported program
disagrees with the module (a bug, said so).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    STDOUT,
    CommandError,
    check_output,
    os_reason,
    print_diagnostics,
    print_json,
    refused_output,
    write_output,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "export",
        help=command_help("export"),
        description="Export models to ONNX or a torch.export program (.pt2) with a dynamic "
        "batch axis and input/output names from the source; the exported outputs are "
        "checked against the module's on a random input before success is reported.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--format", choices=("onnx", "pt2"), required=True, help="artifact kind")
    parser.add_argument("--model", metavar="NAME", help="only this model")
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file (folder: several; '-': stdout, one model)",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="export a training checkpoint's weights (a file, run folder or job folder; "
        "default: fresh weights, seed 0)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON report on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import os

    from aurane.cli.common import load_text
    from aurane.export import (
        ExportMismatch,
        ExportSpecialized,
        ExportUnavailable,
        default_path,
        export_model,
        missing_packages,
    )
    from aurane.stages import CompilationError
    from aurane.trained import CheckpointRefused, checkpoint_file, holds_weights
    from aurane.verify import load_generated

    missing = missing_packages(args.format)
    if missing:
        raise CommandError(
            f"--format {args.format} needs {', '.join(missing)}: pip install 'aurane[export]'",
            EXIT_USAGE,
        )
    if args.output not in (None, STDOUT) and not os.path.isdir(args.output):
        check_output(args.output, args.source)  # before the (slow) compile and export
    text = load_text(args.source)
    if text is None:
        return EXIT_INPUT
    try:
        gen = load_generated(text, args.source)
    except CompilationError as error:
        print_diagnostics(error.diagnostics, text, args.source)
        return EXIT_INPUT
    if args.model is not None and args.model not in gen.graphs:
        names = ", ".join(gen.graphs) or "none"
        raise CommandError(f"no standalone model '{args.model}' in {args.source}; models: {names}")
    models = [args.model] if args.model is not None else list(gen.graphs)
    if not models:
        raise CommandError(f"{args.source} has no model with an input_shape to export")
    checkpoint = None
    if args.checkpoint is not None:
        try:
            checkpoint = checkpoint_file(args.checkpoint)
            # without --model: the models whose weights it holds (refused when none)
            models = holds_weights(gen, models, checkpoint, every=args.model is not None)
        except CheckpointRefused as error:
            raise CommandError(str(error)) from None
    several = len(models) > 1
    to_stdout = args.output == STDOUT
    if to_stdout and (several or args.json):
        what = "several models" if several else "--json"
        raise CommandError(f"-o - (stdout) takes one model's artifact, not {what}", EXIT_USAGE)
    if several and args.output is not None:
        try:
            os.makedirs(args.output, exist_ok=True)
        except OSError as error:
            reason = os_reason(error)
            raise CommandError(f"cannot make the folder '{args.output}': {reason}") from None
    paths = {}
    for model in models:  # every output checked before the first (slow) export
        if args.output is None:
            path = default_path(args.source, model, args.format, several)
        else:
            path = os.path.join(args.output, f"{model}.{args.format}") if several else args.output
        check_output(path, args.source)
        paths[model] = path
    results = []
    for model in models:
        try:
            if to_stdout:
                results.append(_to_stdout(gen, model, args.format, checkpoint))
            else:
                results.append(export_model(gen, model, args.format, paths[model], checkpoint))
        except ExportUnavailable as error:
            raise CommandError(str(error), EXIT_USAGE) from None
        except ExportSpecialized as error:  # a symbolic size torch's tracer fixed: not a bug
            print(f"error: {error}", file=sys.stderr)
            return EXIT_INPUT
        except ExportMismatch as error:
            print(f"error: {error} (this is a bug in aurane, please report it)", file=sys.stderr)
            return EXIT_INTERNAL
        except OSError as error:  # publishing the artifact: the output rule, a full disk
            raise refused_output(paths[model], error) from None
        except Exception as error:  # the exporter refused generated code: our bug
            print(
                f"error: exporting {model} to {args.format} failed (this is a bug in aurane, "
                f"please report it): {type(error).__name__}: {error}",
                file=sys.stderr,
            )
            return EXIT_INTERNAL
    if args.json:
        print_json({"ok": True, "file": args.source, "exports": [r.to_json() for r in results]})
    else:
        trained = f"; trained weights: {checkpoint}" if checkpoint else ""
        for r in results:
            names = (
                f"inputs {', '.join(r.input_names)}; outputs {', '.join(r.output_names)}"
                if r.input_names
                else f"input '{r.input_name}', output '{r.output_name}'"
            )
            print(
                f"exported {r.model} -> {r.path} ({r.exporter}; {names}, "
                f"{', '.join(r.dynamic)} dynamic; checked, max |diff| "
                f"{r.max_abs_difference:.1e}{trained})",
                file=sys.stderr,
            )
    return EXIT_OK


def _to_stdout(gen: Any, model: str, fmt: str, checkpoint: str | None) -> Any:
    """Export into a private temporary folder, then copy the artifact to stdout."""
    import tempfile
    from pathlib import Path

    from aurane.export import export_model
    from aurane.records import replace

    with tempfile.TemporaryDirectory(prefix="aurane-export-") as folder:
        path = Path(folder) / f"{model}.{fmt}"
        result = export_model(gen, model, fmt, str(path), checkpoint)
        write_output(STDOUT, path.read_bytes())
    return replace(result, path=STDOUT)
