"""``aurane diff A.aur B.aur`` or ``aurane diff FILE --rev REV1 [--rev REV2]``.

Two revisions of one file are read with ``git show REV:./NAME`` in the file's folder; one
``--rev`` compares that revision with the working file. Exit 0 whether or not the models
differ (``--exit-code``: 1 when they differ, like ``git diff``), 1 on errors in either
input, 2 on usage errors. ``--flat`` compares the layers inside the blocks rather than the
block calls (a refactoring into blocks, or what ``aurane import`` gave back).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, print_diagnostics

if TYPE_CHECKING:
    from aurane.ir.graph import Graph


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "diff",
        help=command_help("diff"),
        description="Compare the models of two programs (or two git revisions of one): layers "
        "added, removed or changed, shapes, and parameters and MACs before and after with "
        "the delta per layer and in total.",
    )
    parser.add_argument("sources", metavar="SRC", nargs="+", help="A.aur B.aur, or FILE with --rev")
    parser.add_argument(
        "--rev",
        action="append",
        default=[],
        metavar="REV",
        help="git revision of FILE (give one to compare with the working file, or two)",
    )
    parser.add_argument("--model", metavar="NAME", help="only this model")
    parser.add_argument(
        "--format",
        choices=("text", "json", "mermaid", "dot"),
        default="text",
        help="output format (default: text); diagrams colour added, removed, changed layers",
    )
    parser.add_argument(
        "--exit-code", action="store_true", help="exit 1 when the models differ (like git diff)"
    )
    parser.add_argument(
        "--flat",
        action="store_true",
        help="compare the layers inside every block as the network runs them, whatever "
        "blocks group them: weighted layers by module path (the state-dict prefix), the "
        "others by operation and shape in order; block names and arguments are not compared",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.analysis import diff

    before_name, before_text, after_name, after_text = _inputs(args)
    before = _graphs(before_text, before_name)
    after = _graphs(after_text, after_name)
    if before is None or after is None:
        return EXIT_INPUT
    if args.model is not None:
        if args.model not in before and args.model not in after:
            raise CommandError(f"no model '{args.model}' in either program")
        before = {k: v for k, v in before.items() if k == args.model}
        after = {k: v for k, v in after.items() if k == args.model}
    diffs = diff.diff_programs(before, after, flat=args.flat)
    if args.format == "json":
        sys.stdout.write(diff.render_json(diffs, before_name, after_name))
    elif args.format == "mermaid":
        sys.stdout.write(diff.render_mermaid(diffs))
    elif args.format == "dot":
        sys.stdout.write(diff.render_dot(diffs))
    else:
        sys.stdout.write(diff.render_text(diffs, before_name, after_name))
    differs = any(d.status != "unchanged" for d in diffs)
    return EXIT_INPUT if args.exit_code and differs else EXIT_OK


def _inputs(args: argparse.Namespace) -> tuple[str, str, str, str]:
    from aurane.cli.common import load_text

    revs: list[str] = args.rev
    if len(revs) > 2:
        raise CommandError("give at most two --rev", EXIT_USAGE)
    if revs:
        if len(args.sources) != 1:
            raise CommandError("--rev takes exactly one FILE", EXIT_USAGE)
        path = args.sources[0]
        first = (f"{path}@{revs[0]}", _git_show(path, revs[0]))
        if len(revs) == 2:
            second = (f"{path}@{revs[1]}", _git_show(path, revs[1]))
        else:
            text = load_text(path)
            if text is None:  # load_text printed the located P011/P015
                raise CommandError(f"cannot compare '{path}': it is not a readable program")
            second = (path, text)
        return first[0], first[1], second[0], second[1]
    if len(args.sources) != 2:
        raise CommandError("give two files, or one file with --rev", EXIT_USAGE)
    texts = []
    for path in args.sources:
        text = load_text(path)
        if text is None:  # load_text printed the located P011/P015
            raise CommandError(f"cannot compare '{path}': it is not a readable program")
        texts.append(text)
    return args.sources[0], texts[0], args.sources[1], texts[1]


def _git_show(path: str, rev: str) -> str:
    import subprocess
    from pathlib import Path

    from aurane.syntax.tokens import MAX_FILE_BYTES

    if rev.startswith("-"):
        raise CommandError(f"not a revision: {rev!r}", EXIT_USAGE)
    where = Path(path).resolve().parent
    try:
        done = subprocess.run(
            ["git", "show", f"{rev}:./{Path(path).name}"],
            cwd=where,
            capture_output=True,
            check=False,
        )
    except OSError as error:
        raise CommandError(f"cannot run git: {error.strerror or error}") from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CommandError(f"git show {rev}:{path} failed: {reason[-1] if reason else ''}")
    if len(done.stdout) > MAX_FILE_BYTES:
        raise CommandError(
            f"{path} at {rev} is {len(done.stdout)} bytes; the limit is {MAX_FILE_BYTES} bytes"
        )
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise CommandError(f"{path} at {rev} is not valid UTF-8") from None


def _graphs(text: str, name: str) -> dict[str, Graph] | None:
    from aurane.frontend import run_front_end

    result = run_front_end(text, name)
    print_diagnostics(result.diagnostics, text, name)
    if not result.ok:
        return None
    return _concrete(result.resolved, result.graphs, name)


def _concrete(program: object, graphs: dict[str, Graph], name: str) -> dict[str, Graph] | None:
    """Symbolic sizes (``seq = dim(1, 2048)``) bound at their declared maximum (or an
    example size when unbounded), so figures and deltas are numbers; said on stderr."""
    from aurane.analysis.bind import bind_sizes, symbols_of
    from aurane.syntax import ast

    declared = symbols_of(list(graphs.values()))
    if not declared or not isinstance(program, ast.AuraneProgram):
        return graphs
    sizes = {
        sym: high if high is not None else max(low, 17) for sym, (low, high) in declared.items()
    }
    bound, diagnostics = bind_sizes(program, list(graphs.values()), sizes)
    if not bound:
        print_diagnostics(diagnostics, "", name)
        return None
    shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
    print(f"note: {name}: symbolic sizes compared at {shown}", file=sys.stderr)
    return {g.name: g for g in bound}
