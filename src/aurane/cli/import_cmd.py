"""``aurane import SPEC [-o OUT.aur]``: lift a PyTorch module into a ``.aur`` program.

SPEC is ``module:callable`` or ``module:callable(literal args)``. The program is written to
OUT (stdout without ``-o``) once it is complete; then it is compiled, the original's
``state_dict()`` loaded into it with ``strict=True`` and every output compared on seeded
inputs (``aurane.lift.check``). Several inputs are ``--input-shape NAME=SHAPE``, repeated
(``--input-dtype NAME=DTYPE`` likewise), named after the module's ``forward`` parameters. Exit 0 when the lift is exact, 1 when it is not (a part the
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
from aurane.lift.inputs import DTYPES

if TYPE_CHECKING:
    from aurane.lift.pipeline import ImportResult


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
        metavar="[NAME=]SHAPE",
        action="append",
        help="an input's shape without the batch axis, e.g. 3,224,224 (default: what the "
        "module makes evident: a first convolution's channels at 224x224, a first "
        "embedding's positions). Several inputs: repeat it as NAME=SHAPE, NAME a parameter "
        "of the module's forward (--input-shape input_ids=8 --input-shape "
        "token_type_ids=8), or separate shapes by ';' to take forward's parameters in "
        "order ('3,32,32;8'); NAME=() is one number per sample. Parameters left out keep "
        "their defaults",
    )
    parser.add_argument(
        "--input-dtype",
        metavar="[NAME=]DTYPE",
        action="append",
        help=f"an input's dtype, one of {', '.join(DTYPES)} (default float32; token ids "
        "int64). Several inputs: NAME=DTYPE, as for --input-shape (default: int64 for a "
        "name ending in 'ids' and for a mask of a model whose first input is int64, else "
        "float32)",
    )
    parser.add_argument("--name", metavar="NAME", help="the model's name (default: its class's)")
    parser.add_argument(
        "--output",
        metavar="NAME",
        help="the one output the program returns, when the module returns several (a "
        "tuple, dict or ModelOutput: 0, 1, ... or the key, e.g. pooler_output; default: "
        "every tensor output, in order, named after its key)",
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


def parse_shape(text: str, *, empty: bool = False, name: str | None = None) -> tuple[int, ...]:
    """``3,224,224`` (or ``3x224x224``, ``(3, 224, 224)``); ``()`` only where ``empty``."""
    shown = repr(f"{name}={text}" if name is not None else text)
    cleaned = text.strip().strip("()[]").replace("x", ",")
    try:
        sizes = tuple(int(part) for part in cleaned.split(",") if part.strip())
    except ValueError:
        raise CommandError(
            f"--input-shape {shown}: expected sizes like 3,224,224", EXIT_USAGE
        ) from None
    if (not sizes and not empty) or any(size < 1 for size in sizes):
        raise CommandError(f"--input-shape {shown}: expected positive sizes", EXIT_USAGE)
    return sizes


def _entries(values: list[str] | None, option: str) -> list[tuple[str | None, str]]:
    """``[NAME=]VALUE`` items of a repeated option (each may hold several, ';'-separated)."""
    found: list[tuple[str | None, str]] = []
    for value in values or []:
        for item in value.split(";"):
            name, sep, rest = item.partition("=")
            if not sep:
                found.append((None, item.strip()))
                continue
            if not name.strip().isidentifier():
                raise CommandError(
                    f"{option} {item!r}: expected NAME=VALUE, NAME a parameter of forward",
                    EXIT_USAGE,
                )
            found.append((name.strip(), rest.strip()))
    return found


Shapes = tuple[int, ...] | dict[str, tuple[int, ...]] | None
Dtypes = str | dict[str, str] | None


def parse_inputs(args: argparse.Namespace, model: Any) -> tuple[Shapes, Dtypes]:
    """The inputs the options give: one shape and dtype as before, or several by the
    module's ``forward`` parameter names (unnamed ones take them in order)."""
    from aurane.lift.inputs import InputError, name_positional

    shapes = _entries(args.input_shape, "--input-shape")
    dtypes = _entries(args.input_dtype, "--input-dtype")
    for name, dtype in dtypes:
        if dtype not in DTYPES:
            shown = f"{name}={dtype}" if name else dtype
            raise CommandError(
                f"--input-dtype {shown!r}: expected one of {', '.join(DTYPES)}", EXIT_USAGE
            )
    named = any(name is not None for name, _ in [*shapes, *dtypes])
    if not named and len(shapes) <= 1 and len(dtypes) <= 1:  # one input, as before
        shape = parse_shape(shapes[0][1]) if shapes else None
        return shape, dtypes[0][1] if dtypes else None
    if not shapes:
        raise CommandError("--input-dtype NAME=DTYPE needs --input-shape NAME=SHAPE", EXIT_USAGE)
    try:
        by_name = name_positional(model, shapes, "--input-shape")
        dtype_names = name_positional(model, dtypes, "--input-dtype")
    except InputError as error:
        raise CommandError(str(error), EXIT_USAGE) from None
    parsed = {name: parse_shape(str(text), empty=True, name=name) for name, text in by_name.items()}
    return parsed, {name: str(dtype) for name, dtype in dtype_names.items()}


def run(args: argparse.Namespace) -> int:
    from aurane.lift.pipeline import lift_built
    from aurane.lift.spec import SpecError, build, parse_spec

    try:
        spec = parse_spec(args.spec)
        model, recorder = build(spec)
    except SpecError as error:
        raise CommandError(f"SPEC {args.spec!r}: {error}", EXIT_USAGE) from None
    except Exception as error:  # the user's builder failed: their input, not our bug
        raise CommandError(
            f"building {args.spec} failed: {type(error).__name__}: {error}"
        ) from None
    shape, dtype = parse_inputs(args, model)
    try:
        result = lift_built(
            args.spec,
            model,
            recorder,
            input_shape=shape,
            input_dtype=dtype,
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
    if result.text is not None and (len(result.inputs) > 1 or len(result.output_names) > 1):
        given = ", ".join(f"{i.name} {i.shape} {i.dtype}" for i in result.inputs)
        print(f"inputs: {given}; outputs: {', '.join(result.output_names)}", file=out)
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
