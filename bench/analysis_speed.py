"""Front-end speed: Aurane's parse -> resolve -> check -> lower against torch.fx
``symbolic_trace`` + ``ShapeProp`` on the same models, and ``aurane check`` start-up.

    .venv/bin/python bench/analysis_speed.py [--quick | --smoke] [--sizes 1000 5000]

Models: a realistic mix scaled to N operations (each unit: a convolution, a residual
block with batch norm called as a block, a reshape to a sequence, a transformer block
with multi-head attention, layer norm and an MLP, and a reshape back), and every shipped
program (bench/programs, examples, examples/zoo when present). The fx side traces the
module Aurane generates for that very program (the equivalent hand-written module),
built before timing; it propagates shapes with fake tensors (compute-free, what
torch.compile/export use) and, for the scaled model, with real small tensors too (fx's
own per-node cost).

Both sides: same warm-up, same runs, median and spread, GC enabled with a collection
before each run, 1 torch thread. (Aurane's front end pauses GC internally while it
builds its records: that is the product's behaviour, kept.) Checked equal before any
ratio: output shape, parameter count and number of parametrised layers, per model.

Also: time per operation at the largest vs the smallest size (linearity), and stage
times (parse, resolve, check, lower) measured inside one pipeline run each, so they add
up to the pipeline total (in the JSON details).

``aurane check examples/quickstart.aur`` (a small file) runs as a fresh process with
bytecode compiled first (PYTHONDONTWRITEBYTECODE removed for that measurement, a private
PYTHONPYCACHEPREFIX), interpreter start included; the baseline is a bare
``python -c pass`` under the same settings. Target: median under 100 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402

TARGET_RATIO = 50.0
CLI_TARGET_MS = 100.0
UNIT_OPS = 17  # flattened IR operations per unit (asserted)


def aur_source(units: int) -> str:
    blocks = (c.PROGRAMS / "mix.aur").read_text().split("model Hybrid:")[0]
    lines = [blocks, "model Big:", "    input_shape = (16, 8, 8)", "    def forward(x):"]
    for _ in range(units):
        lines += [
            "        x -> conv2d(16, kernel=3, padding=1).relu",
            "        x -> ConvUnit()",
            "        x -> reshape(16, 64) -> AttentionBlock() -> reshape(16, 8, 8)",
        ]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def several_inputs_source(units: int) -> str:
    """The scaled mix with two inputs: an image and a per-sample bias of the same shape,
    added at every unit, so every unit reads both inputs (issue 23's scaling check)."""
    blocks = (c.PROGRAMS / "mix.aur").read_text().split("model Hybrid:")[0]
    lines = [
        blocks,
        "model Big:",
        "    input_shape = {x: (16, 8, 8), bias: (16, 8, 8)}",
        "    def forward(x, bias=zeros):",
    ]
    for _ in range(units):
        lines += [
            "        x -> conv2d(16, kernel=3, padding=1).relu",
            "        x = add(x, bias)",
            "        x -> ConvUnit()",
            "        x -> reshape(16, 64) -> AttentionBlock() -> reshape(16, 8, 8)",
        ]
    lines.append("        return x, bias")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ Aurane


def front_end(source: str) -> Any:
    result = c.run_front_end(source, "big.aur")
    assert result.ok, result.diagnostics[:3]
    return result


def staged(source: str) -> dict[str, float]:
    """One pipeline run with a clock between stages (the same calls run_front_end makes)."""
    from aurane.ir.lower import lower_program
    from aurane.semantics.check import analyze
    from aurane.semantics.constants import resolve_program
    from aurane.syntax.gc_pause import paused_gc
    from aurane.syntax.parser import parse_program

    times: dict[str, float] = {}
    with paused_gc():
        start = time.perf_counter()
        program, _ = parse_program(source, "big.aur")
        assert program is not None
        times["parse"] = time.perf_counter() - start
        start = time.perf_counter()
        resolved, _ = resolve_program(program)
        times["resolve"] = time.perf_counter() - start
        start = time.perf_counter()
        semantic = analyze(resolved)
        times["check"] = time.perf_counter() - start
        start = time.perf_counter()
        lower_program(resolved, semantic)
        times["lower"] = time.perf_counter() - start
    return times


# ------------------------------------------------------------------ torch.fx


def fx_runner(source: str, filename: str, model: str, graph: Any, fake: bool) -> tuple[Any, Any]:
    """(run, module): ``run()`` traces ``model`` of the generated module and propagates
    shapes, returning the traced graph. The module is built here, outside any timing."""
    import inspect

    import torch
    from torch.fx import GraphModule, Tracer
    from torch.fx.passes.shape_prop import ShapeProp

    class LayerTracer(Tracer):
        """fx's default leaves, plus subclasses of torch's layers (the generated LayerNorm2d
        is an ``nn.LayerNorm``): one layer each, as in Aurane's IR."""

        def is_leaf_module(self, m: torch.nn.Module, qualname: str) -> bool:
            torch_layer = any(
                k.__module__.startswith("torch.nn.modules") for k in type(m).__mro__[1:-2]
            )
            return super().is_leaf_module(m, qualname) or torch_layer

    def symbolic_trace(root: torch.nn.Module, concrete_args: dict[str, Any]) -> GraphModule:
        return GraphModule(root, LayerTracer().trace(root, concrete_args=concrete_args))

    from aurane.compile import compile_source

    name = f"bench_fx_{Path(filename).stem}_{model}_{fake}"
    namespace = c.load_generated(compile_source(source, filename=filename), name)
    cls = namespace[model]
    # optional arguments (padding_mask) are fixed at None, as a plain call leaves them
    concrete = {
        p.name: None
        for p in list(inspect.signature(cls.forward).parameters.values())[2:]
        if p.default is None
    }
    value = graph.input_value
    shape = (2, *value.sample_shape)
    integer = value.dtype in ("int64", "int32")

    def example_input() -> Any:
        if integer:
            return torch.ones(shape, dtype=getattr(torch, value.dtype))
        return torch.randn(shape)

    if fake:
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode()
        with mode:  # fake parameters too: no real tensor is converted while timing
            module = cls()
            example = example_input()

        def run() -> Any:
            traced = symbolic_trace(module, concrete_args=concrete)
            ShapeProp(traced, fake_mode=mode).propagate(example)
            return traced

    else:
        module = cls()
        real = example_input()

        def run() -> Any:
            traced = symbolic_trace(module, concrete_args=concrete)
            ShapeProp(traced).propagate(real)
            return traced

    return run, module


def check_fx(label: str, graph: Any, run: Any, module: Any, result: c.Result) -> int:
    """Assert fx found what Aurane found; return fx's operation-node count."""
    nodes = c.flat_nodes(graph)
    shape, layers, fx_ops = fx_facts(run())
    result.work.same(f"{label}: output shape", graph.value(graph.output).sample_shape, shape)
    result.work.same(
        f"{label}: parameters",
        sum(n.parameters for n in nodes),
        sum(p.numel() for p in module.parameters()),
    )
    # modules with weights: a learned tensor (`parameter(...)`) is an attribute fx reads
    # (get_attr), not a module call, so it is counted on neither side
    modules = sum(n.parameters > 0 and n.op != "parameter" for n in nodes)
    result.work.same(f"{label}: parametrised layers", modules, layers)
    return fx_ops


def fx_facts(traced: Any) -> tuple[tuple[int, ...], int, int]:
    """(output sample shape, parametrised layer calls, operation nodes) of a traced graph."""
    output = next(n for n in traced.graph.nodes if n.op == "output").args[0]
    shape = tuple(output.meta["tensor_meta"].shape)[1:]
    layers = 0
    ops = 0
    for node in traced.graph.nodes:
        if node.op in ("call_module", "call_function", "call_method"):
            ops += 1
        if node.op == "call_module":
            sub = traced.get_submodule(node.target)
            layers += any(True for _ in sub.parameters())
    return shape, layers, ops


# ------------------------------------------------------------------ CLI start


# What pip writes for the `aurane` console script (the command the README tells users to
# type), pointed at the copy below.
_LAUNCHER = """\
import re
import sys
from aurane.cli.main import entry
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(entry())
"""


def time_check_cli(settings: c.Settings, result: c.Result) -> None:
    """Item 4: ``aurane check`` on a small file, fresh process, bytecode cached.

    The package is laid out as ``pip install`` leaves it: a copy of ``src/aurane`` with its
    bytecode compiled beside it (``__pycache__``), started through the console script. (A
    ``PYTHONPYCACHEPREFIX`` folder, which an earlier version used, costs every import an
    extra path lookup that no installed copy pays: about 10% of this figure.)
    """
    runs = max(settings.runs, 11)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site-packages"
        shutil.copytree(
            c.REPO / "src" / "aurane", site / "aurane", ignore=shutil.ignore_patterns("__pycache__")
        )
        launcher = Path(tmp) / "aurane"
        launcher.write_text(_LAUNCHER)
        path = Path(tmp) / "small.aur"
        path.write_text((c.REPO / "examples" / "quickstart.aur").read_text())
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
        }
        env["PYTHONPATH"] = str(site)
        # compile the copy's bytecode, as pip does at install; the interpreter writes any
        # missing standard-library bytecode on the first start below
        compile_all = [sys.executable, "-m", "compileall", "-q", str(site / "aurane")]
        subprocess.run(compile_all, check=True, capture_output=True, env=env)
        check = [sys.executable, str(launcher), "check", str(path)]
        bare = [sys.executable, "-c", "pass"]
        for command in (check, bare):
            subprocess.run(command, check=True, capture_output=True, env=env)
        out = subprocess.run(check, check=True, capture_output=True, env=env, text=True)
        result.work.same(
            "`aurane check` exit status and verdict", "ok" in out.stdout + out.stderr, True
        )
        where = [sys.executable, "-c", "import aurane; print(aurane.__file__)"]
        loaded = subprocess.run(where, check=True, capture_output=True, env=env, text=True)
        result.work.same(
            "`aurane check` loads the installed copy",
            Path(loaded.stdout.strip()).parent,
            site / "aurane",
        )

        def run_check() -> None:
            subprocess.run(check, check=True, capture_output=True, env=env)

        def run_bare() -> None:
            subprocess.run(bare, check=True, capture_output=True, env=env)

        timed = c.paired({"check": run_check, "bare": run_bare}, settings, runs=runs)
    ours = c.Summary.of(timed["check"].wall).scaled(1e3)
    theirs = c.Summary.of(timed["bare"].wall).scaled(1e3)
    result.rows.append(
        c.Row(
            "`aurane check` small file, fresh process, bytecode cached (item 4)",
            "ms",
            ours,
            theirs,
            "python -c pass (interpreter alone)",
            ours.median / theirs.median,
            "aurane / bare interpreter (median)",
            f"aurane < {CLI_TARGET_MS:g} ms",
            ours.median < CLI_TARGET_MS,
        )
    )


# ------------------------------------------------------------------ main


def run(settings: c.Settings, sizes: list[int] | None = None, cli: bool = True) -> c.Result:
    result = c.Result("analysis_speed", settings=c.configure(settings))
    if sizes is None:
        sizes = settings.pick([1000, 5000], [100], [UNIT_OPS])
    try:
        import torch  # noqa: F401
    except ImportError:
        result.note("torch is not installed: fx baselines skipped")
        sizes = []
    per_op: dict[int, list[float]] = {}
    for size in sizes:
        units = max(1, size // UNIT_OPS)
        source = aur_source(units)
        graph = front_end(source).graphs["Big"]
        nodes = c.flat_nodes(graph)
        ops = len(nodes)
        assert ops == units * UNIT_OPS, (ops, units)
        runners = {
            kind: fx_runner(source, "big.aur", "Big", graph, fake)
            for kind, fake in (("fake", True), ("real", False))
        }
        for kind, (fx_run, module) in runners.items():
            label = f"{ops} ops, fx {kind} tensors"
            result.details[f"{ops} ops: fx {kind} graph nodes"] = check_fx(
                label, graph, fx_run, module, result
            )
        sides = {
            "aurane": lambda source=source: front_end(source),
            "fx_fake": runners["fake"][0],
            "fx_real": runners["real"][0],
        }
        timed = c.paired(sides, settings, runs=c.MIN_RUNS if size > 2000 else None)
        for kind in ("fake", "real"):
            result.rows.append(
                c.speedup_row(
                    f"front end on {ops:,} ops (conv, blocks, attention, reshape) vs fx "
                    f"trace + ShapeProp, {kind} tensors",
                    timed["aurane"].wall,
                    timed[f"fx_{kind}"].wall,
                    f"torch.fx + ShapeProp ({kind})",
                    TARGET_RATIO,
                )
            )
        stage_runs = [staged(source) for _ in range(settings.runs)]
        medians = {k: statistics.median(r[k] for r in stage_runs) * 1e3 for k in stage_runs[0]}
        total = statistics.median(sum(r.values()) for r in stage_runs) * 1e3
        result.details[f"{ops} ops: stage medians ms"] = {
            k: round(v, 2) for k, v in medians.items()
        }
        result.details[f"{ops} ops: staged total ms"] = round(total, 2)
        per_op[ops] = [t / ops for t in timed["aurane"].wall]
        result.details[f"{ops} ops: us per op"] = round(statistics.median(per_op[ops]) * 1e6, 2)
    if len(per_op) >= 2:
        small, large = min(per_op), max(per_op)
        row = c.speedup_row(
            f"front end linearity: time per op at {large:,} vs {small:,} ops",
            per_op[large],
            per_op[small],
            f"Aurane at {small:,} ops",
            1.0,
            unit="us/op",
        )
        row.aurane = c.Summary.of(per_op[large]).scaled(1e6)
        row.baseline = c.Summary.of(per_op[small]).scaled(1e6)
        row.ratio = 1 / row.ratio if row.ratio else None
        row.ratio_means = "per-op time large / small (median)"
        row.target = "<= 1.1"
        row.met = row.ratio is not None and row.ratio <= 1.1
        result.rows.append(row)
    if sizes:
        several_inputs(settings, result, settings.pick([1000, 10000], [100, 1000], [UNIT_OPS]))
        shipped(settings, result)
    if cli:
        time_check_cli(settings, result)
    return result


def several_inputs(settings: c.Settings, result: c.Result, sizes: list[int]) -> None:
    """Front-end time per operation of a two-input, two-output model at the largest vs the
    smallest size: several inputs keep the front end linear."""
    per_op: dict[int, list[float]] = {}
    for size in sizes:
        units = max(1, size // UNIT_OPS)
        source = several_inputs_source(units)
        graph = front_end(source).graphs["Big"]
        ops = len(c.flat_nodes(graph))
        result.work.same(f"two inputs, {size} ops: inputs", len(graph.inputs), 2)
        result.work.same(f"two inputs, {size} ops: outputs", len(graph.outputs), 2)
        result.work.same(f"two inputs, {size} ops: operations", ops, units * (UNIT_OPS + 1))
        timed = c.paired({"aurane": lambda source=source: front_end(source)}, settings)
        per_op[ops] = [t / ops for t in timed["aurane"].wall]
        result.details[f"two inputs, {ops} ops: us per op"] = round(
            statistics.median(per_op[ops]) * 1e6, 2
        )
    if len(per_op) < 2:
        return
    small, large = min(per_op), max(per_op)
    ratio = statistics.median(per_op[large]) / statistics.median(per_op[small])
    result.rows.append(
        c.Row(
            f"front end linearity, two inputs and two outputs: time per op at {large:,} vs "
            f"{small:,} ops",
            "us/op",
            c.Summary.of(per_op[large]).scaled(1e6),
            c.Summary.of(per_op[small]).scaled(1e6),
            f"Aurane at {small:,} ops",
            ratio,
            "per-op time large / small (median)",
            "<= 1.1",
            ratio <= 1.1,
        )
    )


def shipped(settings: c.Settings, result: c.Result) -> None:
    """Every shipped program (bench/programs, examples, examples/zoo) against fx (fake)."""
    files = c.usable_programs(result) if not settings.smoke else [c.PROGRAMS / "mix.aur"]
    sources: dict[str, str] = {}
    runners = []
    ops = 0
    for path in files:
        text = path.read_text()
        try:  # fx must trace every model of a file, or the file is left out of both sides
            found = []
            for model, graph in front_end(text).graphs.items():
                if graph.input_value.sample_shape is None:
                    continue  # a block: traced inside its callers
                run_fx, module = fx_runner(text, path.name, model, graph, fake=True)
                found.append((model, graph, run_fx, module))
            for entry in found:
                fx_facts(entry[2]())
        except Exception as error:
            result.note(f"{path.name} left out of the fx row: fx fails ({type(error).__name__})")
            continue
        for model, graph, run_fx, module in found:
            check_fx(f"{path.name}:{model}, fx fake tensors", graph, run_fx, module, result)
            runners.append(run_fx)
            ops += len(c.flat_nodes(graph))
        sources[path.name] = text

    def aurane_all() -> None:
        for name, text in sources.items():
            c.run_front_end(text, name)

    def fx_all() -> None:
        for run_fx in runners:
            run_fx()

    timed = c.paired({"aurane": aurane_all, "fx": fx_all}, settings)
    result.rows.append(
        c.speedup_row(
            f"front end on {len(sources)} shipped programs ({len(runners)} models, {ops:,} ops) "
            "vs fx trace + ShapeProp, fake tensors",
            timed["aurane"].wall,
            timed["fx"].wall,
            "torch.fx + ShapeProp (fake)",
            TARGET_RATIO,
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--no-cli", action="store_true", help="skip `aurane check` timing")
    args = parser.parse_args(argv)
    settings = c.Settings.make(args.quick, smoke=args.smoke)
    result = run(settings, args.sizes, cli=not (args.no_cli or args.smoke))
    from report import print_result

    print_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
