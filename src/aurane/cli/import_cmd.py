"""``aurane import SPEC [-o OUT.aur]``: lift a PyTorch module into a ``.aur`` program.

SPEC is ``module:callable`` or ``module:callable(literal args)``. The program is written to
OUT (stdout without ``-o``) once it is complete; then it is compiled, the original's
``state_dict()`` loaded into it with ``strict=True`` and the outputs compared on a seeded
input (``aurane.lift.check``). Exit 0 when the lift is exact, 1 when it is not (a part the
language cannot express, listed with its module path, layer or function and Python line; a
forward that cannot be traced; outputs that differ), 2 on usage errors, 123 when aurane
itself fails. ``--partial`` writes what can be expressed, with the rest marked. See
docs/import.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from aurane.cli.commands import command_help
from aurane.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, CommandError, print_json

if TYPE_CHECKING:
    from aurane.lift.pipeline import ImportResult

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "import",
        help=command_help("import"),
        description="Trace a PyTorch module (torch.fx with PyTorch's layers as leaves, else "
        "torch.export), map its layers and functions to catalog operations and rebuild its "
        "structure: submodules become blocks, layer names become 'as' names (the state dict "
        "keys are the original's), instances of one class become one parameterised block. "
        "The program is then compiled, given the original's state_dict (strict) and "
        "compared with it on a seeded input (eval mode, rtol 1e-5).",
    )
    parser.add_argument(
        "spec",
        metavar="SPEC",
        help="module:callable, or module:callable(literal args), e.g. "
        "torchvision.models:resnet50 or 'torchvision.models:vit_b_16(image_size=64)'",
    )
    parser.add_argument(
        "-o", "--out", metavar="OUT", help="the .aur file to write (default: stdout)"
    )
    parser.add_argument(
        "--input-shape",
        metavar="SHAPE",
        help="the input's shape without the batch axis, e.g. 3,224,224 (default: what the "
        "module makes evident: a first convolution's channels at 224x224, a first "
        "embedding's positions)",
    )
    parser.add_argument(
        "--input-dtype",
        choices=DTYPES,
        help="the input's dtype (default float32; token ids: int64)",
    )
    parser.add_argument("--name", metavar="NAME", help="the model's name (default: its class's)")
    parser.add_argument(
        "--output",
        metavar="NAME",
        help="which of the module's outputs the program returns, when it returns several "
        "(default: the one that reads the most layers)",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="write what can be expressed even when some parts cannot, with them marked",
    )
    parser.add_argument(
        "--tracer", choices=("auto", "fx", "export"), default="auto", help="how to trace (auto)"
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="do not compile the program and compare it with the module",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON report on stdout")
    parser.set_defaults(run=run)


def parse_shape(text: str) -> tuple[int, ...]:
    cleaned = text.strip().strip("()[]").replace("x", ",")
    try:
        sizes = tuple(int(part) for part in cleaned.split(",") if part.strip())
    except ValueError:
        raise CommandError(
            f"--input-shape {text!r}: expected sizes like 3,224,224", EXIT_USAGE
        ) from None
    if not sizes or any(size < 1 for size in sizes):
        raise CommandError(f"--input-shape {text!r}: expected positive sizes", EXIT_USAGE)
    return sizes


def run(args: argparse.Namespace) -> int:
    from aurane.lift.pipeline import lift_built
    from aurane.lift.spec import SpecError, build, parse_spec

    shape = parse_shape(args.input_shape) if args.input_shape else None
    try:
        spec = parse_spec(args.spec)
        model, recorder = build(spec)
    except SpecError as error:
        raise CommandError(f"SPEC {args.spec!r}: {error}", EXIT_USAGE) from None
    except Exception as error:  # the user's builder failed: their input, not our bug
        raise CommandError(
            f"building {args.spec} failed: {type(error).__name__}: {error}"
        ) from None
    try:
        result = lift_built(
            args.spec,
            model,
            recorder,
            input_shape=shape,
            input_dtype=args.input_dtype,
            name=args.name,
            output=args.output,
            partial=args.partial,
            tracer=args.tracer,
            check=not args.no_check,
        )
    except ValueError as error:  # the input is not evident, or not a module
        raise CommandError(str(error), EXIT_USAGE) from None
    written = _write(args, result)
    if args.json:
        payload = result.to_json()
        payload.update(spec=args.spec, file=args.out if written else None)
        print_json(payload)
    else:
        report(result, args, written)
    return (
        EXIT_OK if result.exact or (args.no_check and written and not result.gaps) else EXIT_INPUT
    )


def _write(args: argparse.Namespace, result: ImportResult) -> bool:
    if result.text is None:
        return False
    if args.out is None:
        if not args.json:
            sys.stdout.write(result.text)
        return False
    from aurane.fs import atomic_write

    atomic_write(args.out, result.text)
    return True


def report(result: ImportResult, args: Any, written: bool, stream: Any = None) -> None:
    from aurane.lift.graph import summarize
    from aurane.lift.pipeline import code_lines

    out = stream or (sys.stdout if args.out else sys.stderr)
    err = sys.stderr if stream is None else stream
    if result.failure is not None:
        print(f"error: cannot import {args.spec}: {result.failure.describe()}", file=err)
        return
    for note in result.notes:
        print(f"note: {note}", file=out)
    if result.gaps:
        groups = summarize(result.gaps)
        print(
            f"error: {len(groups)} construct(s) of {args.spec} cannot be written in Aurane:",
            file=err,
        )
        for gap, count in groups:
            more = f" [{count} places]" if count > 1 else ""
            print(f"  {gap.describe()}{more}", file=err)
    if result.text is not None:
        where = args.out if written else "stdout"
        print(
            f"wrote {where}: model {result.model}, {code_lines(result.text)} lines "
            f"({result.tracer} trace, {result.seconds:.1f}s)",
            file=out,
        )
    check = result.check
    if check is None:
        if result.gaps:
            print("not exact: the parts above are missing", file=err)
        return
    if check.exact:
        print(
            f"exact: the original's state_dict loads (strict) and the outputs agree "
            f"(max |difference| {check.max_abs_difference:.3g}, rtol 1e-05)",
            file=out,
        )
    else:
        print(f"error: not exact: {check.problem}", file=err)
