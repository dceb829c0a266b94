"""Profiling speed from source, as a user runs it, beside torch's FlopCounterMode.

    .venv/bin/python bench/profile_speed.py [--quick] [--ops 10000]

Aurane's side is what ``aurane profile`` does in-process: parse, resolve, check and lower
the source, then profile every model (parameters, FLOPs, activation memory). The
baseline is the PyTorch user's way to get the same FLOP count: a forward pass under
``torch.utils.flop_counter.FlopCounterMode`` on the equivalent module (the one Aurane
generates for the program, built before timing, train mode, batch 2, attention on the
math kernel so that FlopCounterMode sees every product). Checked equal before timing:
FLOPs per sample and parameters, per model.

Two workloads: one large file (the mixed conv / residual-block / attention / reshape unit
of analysis_speed.py scaled to ``--ops`` operations; target: under 1 s from source), and
every shipped program in a row (bench/programs, examples, examples/zoo).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
import torch  # noqa: E402
from analysis_speed import UNIT_OPS, aur_source  # noqa: E402
from torch import nn  # noqa: E402

BUDGET_S = 1.0
BATCH = 2


def aurane_side(files: dict[str, str]) -> Callable[[], dict[str, tuple[int, int]]]:
    from aurane.analysis.profile import profile

    def run() -> dict[str, tuple[int, int]]:
        counts = {}
        for name, text in files.items():
            front = c.run_front_end(text, name)
            assert front.ok, front.diagnostics[:3]
            for model, graph in front.graphs.items():
                if graph.input_value.sample_shape is None:
                    continue
                report = profile(graph)
                counts[f"{name}:{model}"] = (report.parameters, report.flops)
        return counts

    return run


def flop_counter_side(files: dict[str, str]) -> Callable[[], dict[str, tuple[int, int]]]:
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from aurane.compile import compile_source

    modules: list[tuple[str, nn.Module, torch.Tensor]] = []
    for name, text in files.items():
        front = c.run_front_end(text, name)
        namespace = c.load_generated(
            compile_source(text, filename=name), f"bench_ps_{len(modules)}"
        )
        for model, graph in front.graphs.items():
            value = graph.input_value
            if value.sample_shape is None:
                continue
            shape = (BATCH, *value.sample_shape)
            if value.dtype in ("int64", "int32"):
                x = torch.randint(1, 50, shape, dtype=getattr(torch, value.dtype))
            else:
                x = torch.randn(shape)
            modules.append((f"{name}:{model}", namespace[model]().train(), x))

    def run() -> dict[str, tuple[int, int]]:
        counts = {}
        for label, module, x in modules:
            with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
                module(x)
            params = sum(p.numel() for p in module.parameters())
            counts[label] = (params, int(counter.get_total_flops()) // BATCH)
        return counts

    return run


def compare(
    label: str, files: dict[str, str], settings: c.Settings, result: c.Result
) -> tuple[list[float], list[float]]:
    ours, theirs = aurane_side(files), flop_counter_side(files)
    a, b = ours(), theirs()
    result.work.same(f"{label}: models profiled", sorted(a), sorted(b))
    for key in a:
        result.work.same(f"{label}: {key} parameters", a[key][0], b[key][0])
        result.work.same(f"{label}: {key} FLOPs per sample", a[key][1], b[key][1])
    timed = c.paired({"aurane": ours, "flop_counter": theirs}, settings)
    return timed["aurane"].wall, timed["flop_counter"].wall


def run(settings: c.Settings, ops: int | None = None) -> c.Result:
    result = c.Result("profile_speed", settings=c.configure(settings))
    result.settings["baseline"] = "FlopCounterMode, train mode, batch 2, SDPA math kernel"
    if ops is None:
        ops = settings.pick(10_000, 340, UNIT_OPS)
    units = max(1, round(ops / UNIT_OPS))
    big = {"big.aur": aur_source(units)}
    ours, theirs = compare("large file", big, settings, result)
    row = c.speedup_row(
        f"profile from source, one file of {units * UNIT_OPS:,} ops (parse+check+lower+profile)",
        ours,
        theirs,
        "FlopCounterMode forward (module prebuilt)",
        1.0,
    )
    row.target = f"aurane < {BUDGET_S:g} s"
    row.met = row.aurane is not None and row.aurane.median < BUDGET_S * 1e3
    row.ratio_means = "baseline / aurane (median); > 1 = Aurane faster"
    result.rows.append(row)
    shipped = {}
    for path in c.usable_programs(result):
        text = path.read_text()
        front = c.run_front_end(text, path.name)
        large = [model for model, graph in front.graphs.items() if c.too_large(graph)]
        if large:  # the peer runs every model in torch: leave the file out of both sides
            result.note(
                f"{path.name} left out: {', '.join(large)} too large to run in torch here "
                f"(over {c.MAX_PARAMETERS:,} parameters)"
            )
            continue
        try:  # the peer must run every model of a file, or the file is left out of both
            flop_counter_side({path.name: text})()
        except Exception as error:
            result.note(f"{path.name} left out: FlopCounterMode fails ({type(error).__name__})")
            continue
        shipped[path.name] = text
    ours, theirs = compare("shipped programs", shipped, settings, result)
    row = c.speedup_row(
        f"profile from source, {len(shipped)} shipped programs in a row",
        ours,
        theirs,
        "FlopCounterMode forward (modules prebuilt)",
        1.0,
    )
    row.target, row.met = "informational", None
    row.ratio_means = "baseline / aurane (median); > 1 = Aurane faster"
    result.rows.append(row)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--ops", type=int, default=None)
    args = parser.parse_args(argv)
    from report import print_result

    print_result(run(c.Settings.make(args.quick, smoke=args.smoke), args.ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
