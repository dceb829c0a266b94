"""``aurane compile SRC [OUT]``: Python to OUT or stdout; diagnostics to stderr.

Decisions (SPEC §11 leaves them open):
- stdout carries only the generated Python (when no OUT) or the ``--diff``; every
  message, warning and diagnostic goes to stderr.
- ``--optimize`` alone means level 1; ``--opt-level N`` sets the level (with or
  without ``--optimize``).
- ``--format`` uses Black when it is importable; otherwise a warning on stderr and
  the unformatted output (the compile itself succeeded, so it is not an error).
- ``--diff`` needs OUT; prints a unified diff of OUT's current text (empty when
  missing) against the new output, writes nothing, exits 0.
- ``--show-ast`` prints the JSON dump of the program the backend receives
  (constants resolved, optimizations applied) to stderr, keeping stdout clean.
- The cache is on by default (``AURANE_CACHE_DIR`` or ``.aurane_cache`` in the
  working directory); ``--no-cache`` does no cache I/O.
- Notes: each network or block the code generator left one class per variant or call
  is named on stderr with the reason (``note: block 'Stack' at 3:7 stays one class per
  call: ...``) before the success message; ``--quiet`` drops them with it, and a cache
  hit has none (no generator ran). stdout, OUT and the exit status are unchanged.
- ``--json-errors``: any failure after argument parsing prints one JSON object
  (``check --json``'s shape plus ``stage`` and, for non-diagnostic failures,
  ``error``) on stderr; stdout stays empty.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
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
    read_source,
    shown_text,
    write_output,
)

PASSES = ["semantic", "types"]
# --diff reads the existing OUT: a generated file is a few times its 1 MiB source at most
MAX_COMPARED_BYTES = 64 * 1024 * 1024


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "compile",
        help=command_help("compile"),
        description="Compile SRC to Python, written to OUT (atomically, only on success) or to "
        "stdout. Diagnostics go to stderr. Exit 0 ok, 1 errors in the input, 2 usage errors, "
        "123 internal error.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("out", metavar="OUT", nargs="?", help="output file (default: stdout)")
    parser.add_argument("-o", "--output", metavar="OUT", help="output file (same as OUT)")
    parser.add_argument(
        "--analyze",
        action="store_true",
        help="strict analysis: semantic and type warnings fail the compile",
    )
    parser.add_argument(
        "--validate",
        action="store_true",
        help="verify the IR and check that the generated Python compiles",
    )
    parser.add_argument(
        "--optimize",
        action="store_true",
        help="apply proven AST rewrites (level 1 unless --opt-level)",
    )
    parser.add_argument(
        "--opt-level", metavar="N", type=int, choices=range(3), help="optimization level 0, 1 or 2"
    )
    parser.add_argument(
        "--backend", default="torch", metavar="NAME", help="code generator (default: torch)"
    )
    parser.add_argument(
        "--format", action="store_true", help="format the output with Black when it is installed"
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="print a unified diff against the existing OUT; write nothing",
    )
    parser.add_argument(
        "--show-ast",
        action="store_true",
        help="print the AST given to the backend (JSON) on stderr",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no success message and no notes"
    )
    parser.add_argument(
        "--verify", action="store_true", help="run `aurane verify` first; write nothing on a bug"
    )
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    parser.add_argument(
        "--class-per-call",
        action="store_true",
        help="a class per distinct block call and per network variant, with no loops or "
        "branches in Python (default: one class per block definition where it can be written)",
    )
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="copy the training runtime the program uses into it, so it needs no Aurane",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite OUT even when it is not a file Aurane generated",
    )
    parser.add_argument(
        "--json-errors", action="store_true", help="on failure print one JSON object on stderr"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CommandError as error:
        if not args.json_errors:
            raise
        _json_failure(args, [], error=error.message)
        return error.code
    except Exception as error:  # a bug; with --json-errors stderr must stay one JSON object
        if not args.json_errors:
            raise
        from aurane.version import __version__

        _json_failure(
            args,
            [],
            error=f"internal error in aurane {__version__} (this is a bug, "
            f"not your input): {type(error).__name__}: {error}",
            traceback=traceback.format_exc(),
        )
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    from aurane.backends.registry import UnknownBackendError
    from aurane.compile import compile_detailed
    from aurane.stages import CompilationError

    out = _output_path(args)
    text, bad = read_source(args.source)
    if text is None:
        assert bad is not None
        return _fail(args, CompilationError([bad], args.source), shown_text(args.source))
    try:
        result = compile_detailed(
            text,
            backend=args.backend,
            analyze=args.analyze,
            validate=args.validate,
            optimize=_level(args),
            cache=_cache(args),
            filename=args.source,
            per_call=args.class_per_call,
        )
    except CompilationError as error:
        return _fail(args, error, text)
    except UnknownBackendError as error:
        raise CommandError(str(error), EXIT_USAGE) from None
    output = result.output
    if args.standalone:
        if args.backend.strip().lower() != "torch":
            raise CommandError("--standalone needs the torch backend", EXIT_USAGE)
        from aurane.backends.torch.runtime import standalone

        output = standalone(output)
    output = _format(output) if args.format else output
    if args.standalone or args.format:  # lines moved: the source map is made again
        from aurane.compile import attach_source_map
        from aurane.sourcemap import strip_table

        output = attach_source_map(strip_table(output), text, args.source)
    if args.verify:  # issue 13: static shapes checked against torch before publishing
        from aurane.cli.verify_cmd import show, verify_reports

        if show(verify_reports(text, args.source, None), text, args.source, stream=sys.stderr):
            return EXIT_INPUT
    if args.show_ast:
        _show_ast(args, text, result.program)
    if args.diff:
        assert out is not None
        sys.stdout.write(_diff(out, output))
        return EXIT_OK
    if out is not None and not args.force:
        _refuse_overwriting_foreign(out)
    _publish(out, output)
    if not args.quiet:
        for note in result.notes:  # e.g. a block the roller left one class per call
            print(f"note: {note}", file=sys.stderr)
        where = f" -> {out}" if out is not None else ""
        cached = " (cached)" if result.cached else ""
        print(f"compiled {args.source}{where}{cached}", file=sys.stderr)
    return EXIT_OK


def _output_path(args: argparse.Namespace) -> str | None:
    out: str | None = args.out
    if args.output is not None:
        if out is not None and out != args.output:
            raise CommandError(
                f"two different outputs given: '{out}' and '{args.output}'", EXIT_USAGE
            )
        out = args.output
    if out == STDOUT:  # '-': stdout, as with no OUT
        out = None
    if args.diff and out is None:
        raise CommandError("--diff needs an output file to compare against", EXIT_USAGE)
    if out is not None:  # before any work: a FIFO, a device or the source is never opened
        check_output(out, args.source)
    return out


GENERATED_MARK = "# Generated by Aurane"


def _refuse_overwriting_foreign(out: str) -> None:
    """Refuse to replace a non-empty file that does not start with Aurane's header."""
    from aurane.fs import read_limited

    try:  # only a regular file gets here (check_output); its first bytes are enough
        data = read_limited(out, len(GENERATED_MARK), truncate=True)
    except FileNotFoundError:
        return
    except OSError as error:
        raise CommandError(f"cannot read '{out}': {os_reason(error)}") from None
    head = data.decode("utf-8", errors="replace")
    if head and not head.startswith(GENERATED_MARK):
        raise CommandError(
            f"refusing to overwrite '{out}': it was not generated by Aurane (no "
            f"'{GENERATED_MARK}' header); pass --force to replace it",
            EXIT_INPUT,
        )


def _level(args: argparse.Namespace) -> int:
    if args.opt_level is not None:
        level: int = args.opt_level
        return level
    return 1 if args.optimize else 0


def _cache(args: argparse.Namespace) -> Any:
    if args.no_cache:
        return None
    from aurane.cache import CompileCache

    return CompileCache()


def _fail(args: argparse.Namespace, error: Any, text: str) -> int:
    if args.json_errors:
        _json_failure(args, error.diagnostics, stage=error.stage)
    else:
        print_diagnostics(error.diagnostics, text, args.source)
    return EXIT_INPUT


def _json_failure(args: argparse.Namespace, diagnostics: list[Any], **extra: Any) -> None:
    from aurane.render import check_payload

    payload = check_payload(args.source, diagnostics, PASSES)
    payload["ok"] = False
    payload.setdefault("stage", None)
    payload.update(extra)
    _write_stderr(json.dumps(payload, ensure_ascii=False))


def _format(output: str) -> str:
    try:
        import black  # type: ignore[import-not-found]  # optional
    except ImportError:
        print(
            "warning: --format needs Black (pip install black); output left unformatted",
            file=sys.stderr,
        )
        return output
    try:
        formatted: str = black.format_str(output, mode=black.Mode())
    except Exception as error:  # Black refusing our output is worth a warning, not a failure
        print(
            f"warning: Black could not format the output ({error}); left unformatted",
            file=sys.stderr,
        )
        return output
    return formatted


def _show_ast(args: argparse.Namespace, text: str, program: Any) -> None:
    from aurane.compile import prepare_program
    from aurane.syntax.printer import dump_ast

    if program is None:  # a cache hit ran no pass; rebuild what the backend received
        program, _, _ = prepare_program(text, optimize=_level(args), filename=args.source)
    _write_stderr(json.dumps(dump_ast(program), indent=2, ensure_ascii=False))


def _write_stderr(text: str) -> None:
    """UTF-8 text on stderr; a lone surrogate (from a "\\uD800" escape) becomes its escape."""
    data = text.encode("utf-8", "backslashreplace") + b"\n"
    buffer = getattr(sys.stderr, "buffer", None)
    if buffer is None:
        sys.stderr.write(data.decode("utf-8"))
        return
    sys.stderr.flush()
    buffer.write(data)
    buffer.flush()


def _diff(out: str, output: str) -> str:
    import difflib

    from aurane.fs import read_limited

    try:
        old = read_limited(out, MAX_COMPARED_BYTES).decode("utf-8")
    except FileNotFoundError:
        old = ""
    except OSError as error:
        raise CommandError(f"cannot read '{out}' to compare: {os_reason(error)}") from None
    except UnicodeDecodeError:
        raise CommandError(f"cannot read '{out}' to compare: it is not UTF-8 text") from None
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        output.splitlines(keepends=True),
        fromfile=f"{out} (current)",
        tofile=f"{out} (new)",
    )
    return "".join(lines)


def _publish(out: str | None, output: str) -> None:
    # UTF-8 bytes, whatever the terminal's encoding: this is a Python source file.
    write_output(STDOUT if out is None else out, output)
