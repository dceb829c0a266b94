"""``aurane sweep``: parameters, MACs and training memory over a grid of constants (no torch)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    STDOUT,
    CommandError,
    check_output,
    positive_int,
    print_diagnostics,
    print_json,
    write_output,
)

if TYPE_CHECKING:
    from aurane.tools.sweep import Row, Sweep


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "sweep",
        help=command_help("sweep"),
        description="Evaluate a program at every combination of values of its top-level "
        "constants (--set width=256,512 --set depth=6,12) and print parameters, MACs per "
        "sample and the training memory peak of one device (aurane plan's single strategy) "
        "for one model, read from the IR without torch. --max keeps the largest "
        "configuration under budgets.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        required=True,
        metavar="NAME=V1,V2,...",
        help="a top-level constant and the values it takes (repeatable: the grid is every "
        "combination)",
    )
    parser.add_argument(
        "--model", metavar="NAME", help="the model to measure (default: the trained one)"
    )
    parser.add_argument(
        "--max",
        dest="limits",
        action="append",
        default=[],
        metavar="METRIC=AMOUNT",
        help="a budget: params=125M, macs=4G, flops=8G or memory=24GiB (repeatable); prints "
        "the configuration with the largest first metric that stays within every budget",
    )
    parser.add_argument(
        "--batch", type=positive_int, metavar="B", help="batch for memory (default: the job's)"
    )
    parser.add_argument(
        "--device", choices=("cuda", "cpu"), default="cuda", help="device for memory (cuda)"
    )
    parser.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the figures against the first constant (PNG, SVG or PDF by suffix; "
        "needs matplotlib: pip install 'aurane[plot]')",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from aurane.cli.common import source_text
    from aurane.syntax.gc_pause import paused_gc
    from aurane.tools.sweep import (
        Sweep,
        SweepError,
        grid,
        largest_under,
        parse_assignment,
        parse_limit,
        row_json,
    )

    try:
        assignments = [parse_assignment(text) for text in args.assignments]
        limits = [parse_limit(text) for text in args.limits]
        configurations = grid(assignments)
    except SweepError as error:
        raise CommandError(str(error), EXIT_USAGE) from None
    if args.plot is not None:
        _require_matplotlib()
        check_output(args.plot, args.source)
    text = source_text(args.source, json=args.json)
    sweep = Sweep(text, args.source)
    if sweep.program is None or sweep.parse_diagnostics:
        if not args.json:
            print_diagnostics(sweep.parse_diagnostics, text, args.source)
        raise CommandError(f"{args.source} has errors", EXIT_INPUT, sweep.parse_diagnostics)
    try:
        sweep.check_names(name for name, _ in assignments)
        model = _model(sweep, args.model)
        with paused_gc():
            rows = [
                sweep.evaluate(values, model, batch=args.batch, device=args.device)
                for values in configurations
            ]
    except SweepError as error:
        raise CommandError(str(error), EXIT_USAGE) from None
    best = largest_under(rows, limits) if limits else None
    failed = [row for row in rows if not row.ok]
    if args.json:
        payload: dict[str, Any] = {
            "file": args.source,
            "model": model,
            "constants": [name for name, _ in assignments],
            "batch_size": args.batch,
            "device": args.device,
            "configurations": [row_json(row) for row in rows],
            "limits": [{"metric": name, "amount": amount} for name, amount in limits],
            "best": row_json(best) if best is not None else None,
            "analyses": sweep.analyses,
            "parses": sweep.parses,
        }
        print_json(payload)
    else:
        print(sweep_text(sweep, model, rows, limits, best, args))
        if failed:
            first = failed[0]
            print(f"\n{first.label()}:", file=sys.stderr)
            print_diagnostics(first.diagnostics, text, args.source)
    if args.plot is not None:
        write_output(args.plot, _figure(rows, assignments, model, args.plot))
        if args.plot != STDOUT:
            print(f"wrote {args.plot}", file=sys.stderr)
    return EXIT_INPUT if failed else EXIT_OK


def _model(sweep: Sweep, chosen: str | None) -> str:
    from aurane.syntax import ast
    from aurane.tools.sweep import SweepError

    assert sweep.program is not None
    names = [m.name for m in sweep.program.models]
    if chosen is not None:
        if chosen not in names:
            raise SweepError(f"no model '{chosen}' in {sweep.filename}; models: {', '.join(names)}")
        return chosen
    with_input = [
        m.name for m in sweep.program.models if any(f.name == "input_shape" for f in m.fields)
    ]
    if len(with_input) == 1:
        return with_input[0]
    for stmt in sweep.program.statements:  # else the model the first training job trains
        if isinstance(stmt, ast.Train):
            return stmt.model.id
        if isinstance(stmt, ast.TrainGan):
            return stmt.generator.id
    raise SweepError(f"{sweep.filename} has several models: choose one with --model")


def sweep_text(
    sweep: Sweep,
    model: str,
    rows: list[Row],
    limits: list[tuple[str, int]],
    best: Row | None,
    args: argparse.Namespace,
) -> str:
    from aurane.analysis.plan import format_bytes
    from aurane.tools.sweep import format_value

    names = [name for name, _ in rows[0].values] if rows else []
    batch = f"batch {args.batch}" if args.batch else "the job's batch"
    lines = [
        f"sweep of {model} ({sweep.filename}): {len(rows)} configurations; memory: training "
        f"peak on one {args.device} device at {batch}",
        "",
    ]
    headers = [*names, "parameters", "MACs/sample", "memory"]
    table = []
    for row in rows:
        cells = [format_value(value) for _, value in row.values]
        if row.figures is None:
            cells += ["-", "-", "-"]
        else:
            f = row.figures
            memory = format_bytes(f.memory) if f.memory is not None else "-"
            cells += [f"{f.parameters:,}", _count(f.macs), memory]
        table.append(cells)
    widths = [max(len(r[i]) for r in [headers, *table]) for i in range(len(headers))]
    notes = [""] + [_error_note(row) for row in rows]
    for cells, note in zip([headers, *table], notes, strict=True):
        text = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        lines.append(f"  {text}{note}".rstrip())
    if limits:
        budget = ", ".join(
            f"{name} <= {format_bytes(amount) if name == 'memory' else _count(amount)}"
            for name, amount in limits
        )
        lines.append("")
        if best is None or best.figures is None:
            lines.append(f"no configuration fits {budget}")
        else:
            lines.append(
                f"largest under {budget}: {best.label()} ({best.figures.parameters:,} "
                f"parameters, {_count(best.figures.macs)} MACs/sample"
                + (
                    f", {format_bytes(best.figures.memory)})"
                    if best.figures.memory is not None
                    else ")"
                )
            )
    return "\n".join(lines)


def _error_note(row: Row) -> str:
    if row.figures is not None:
        return ""
    first = row.diagnostics[0] if row.diagnostics else None
    return f"  error {first.code}: {first.message}" if first else "  error"


def _count(value: int) -> str:
    for size, suffix in ((10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return str(value)


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(
            "--plot needs matplotlib: pip install 'aurane[plot]'", EXIT_USAGE
        ) from None


def _figure(
    rows: list[Row], assignments: list[tuple[str, list[Any]]], model: str, path: str
) -> bytes:
    """Parameters, MACs and memory against the first constant, one line per combination
    of the others."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from aurane.tools.sweep import format_value

    x_name = assignments[0][0]
    panels = [("parameters", "parameters"), ("MACs per sample", "macs")]
    if any(r.figures is not None and r.figures.memory is not None for r in rows):
        panels.append(("training memory (GiB)", "memory"))
    figure, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    series: dict[str, list[tuple[Any, Row]]] = {}
    for row in rows:
        rest = ", ".join(f"{n}={format_value(v)}" for n, v in row.values[1:]) or model
        series.setdefault(rest, []).append((row.values[0][1], row))
    for axis, (title, metric) in zip(axes[0], panels, strict=True):
        for label, points in series.items():
            xs, ys = [], []
            for x, row in points:
                if row.figures is None:
                    continue
                value = row.figures.metric(metric)
                if value is None:
                    continue
                xs.append(x)
                ys.append(value / 2**30 if metric == "memory" else value)
            if xs:
                axis.plot(xs, ys, marker="o", label=label)
        axis.set_xlabel(x_name)
        axis.set_title(title)
        axis.grid(True, alpha=0.3)
    if len(series) > 1:
        axes[0][0].legend(fontsize="small")
    figure.suptitle(f"sweep of {model}")
    figure.tight_layout()
    buffer = io.BytesIO()
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else "png"
    figure.savefig(buffer, format=suffix if suffix in ("png", "svg", "pdf") else "png")
    plt.close(figure)
    return buffer.getvalue()
