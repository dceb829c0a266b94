"""Front-end speed: parse -> resolve -> check -> lower on generated models of N operations,
against torch.fx on the equivalent hand-written module, measured in the same run.

    python bench/analysis_speed.py                 # N = 1,000 and 10,000
    python bench/analysis_speed.py --sizes 500 2000 --width 512

Two fx baselines, both warmed up first and both excluding module construction:

- fx + ShapeProp, real tensors: ``symbolic_trace`` then ``ShapeProp.propagate`` on a real
  (1, width) input. With the default width of 16 the tensors are nearly empty, so this is
  fx's own per-node cost, the cheapest fx can ever be.
- fx + ShapeProp, fake tensors: the same under ``FakeTensorMode`` with the module built in
  that mode (fake parameters), torch's compute-free shape propagation (what torch.compile
  and torch.export use): the like-for-like peer of a static shape checker, and independent
  of tensor sizes.

It also prints where Aurane's time goes (per stage), the share of it spent constructing
frozen AST/IR records (DESIGN: "count it in the analysis benchmark"), and `aurane check`
on a small file as a fresh process, interpreter start included, with and without a
bytecode cache.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_RATIO = 50.0
CLI_TARGET_MS = 100.0


def aur_source(units: int, width: int) -> str:
    """Each unit is 5 operations: a chain (dense + relu) and a branch pair merged by add."""
    lines = ["model Big:", f"    input_shape = ({width},)", "    def forward(x):"]
    for _ in range(units):
        lines += [
            f"        x -> dense({width}).relu",
            f"        a = dense(x, {width})",
            f"        b = dense(x, {width})",
            "        x = add(a, b)",
        ]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def torch_source(units: int, width: int) -> str:
    init = [
        f"        self.d{i}_{k} = nn.Linear({width}, {width})"
        for i in range(units)
        for k in range(3)
    ]
    body = []
    for i in range(units):
        body += [
            f"        x = torch.relu(self.d{i}_0(x))",
            f"        a = self.d{i}_1(x)",
            f"        b = self.d{i}_2(x)",
            "        x = a + b",
        ]
    return "\n".join(
        [
            "import torch",
            "from torch import nn",
            "",
            "class Big(nn.Module):",
            "    def __init__(self):",
            "        super().__init__()",
            *init,
            "",
            "    def forward(self, x):",
            *body,
            "        return x",
            "",
        ]
    )


# ------------------------------------------------------------------ Aurane


def best_of(repeats: int, run: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def time_front_end(source: str, repeats: int) -> tuple[float, int]:
    from aurane.compiler import run_front_end

    result = run_front_end(source, "big.aur")
    assert result.ok, result.diagnostics[:3]
    seconds = best_of(repeats, lambda: run_front_end(source, "big.aur"))
    return seconds, len(result.graphs["Big"].nodes)


def time_stages(source: str, repeats: int) -> dict[str, float]:
    """Each stage alone on the previous stage's output, best of ``repeats``, GC paused."""
    from aurane.ir.lower import lower_program
    from aurane.semantics.check import analyze
    from aurane.semantics.constants import resolve_program
    from aurane.syntax.parser import parse_program

    program, _ = parse_program(source, "big.aur")
    assert program is not None
    resolved, _ = resolve_program(program)
    semantic = analyze(resolved)
    stages: dict[str, Callable[[], Any]] = {
        "parse": lambda: parse_program(source, "big.aur"),
        "resolve": lambda: resolve_program(program),
        "check": lambda: analyze(resolved),
        "lower": lambda: lower_program(resolved, semantic),
    }
    gc.disable()
    try:
        return {name: best_of(repeats, run) for name, run in stages.items()}
    finally:
        gc.enable()


def count_records(source: str) -> int:
    """Frozen dataclass instances the front end keeps: AST (with spans) and IR records."""
    from aurane.compiler import run_front_end

    result = run_front_end(source, "big.aur")
    seen: set[int] = set()
    stack: list[Any] = [result.program, result.resolved, *result.graphs.values()]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple | list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif dataclasses.is_dataclass(item) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return len(seen)


def record_cost() -> float:
    """Seconds to construct one frozen AST record, averaged over a Span, a Name and a Call."""
    from aurane.source import Span
    from aurane.syntax import ast

    span = Span(1, 1, 1, 2)
    name = ast.Name("x", span)
    rounds = 20_000
    start = time.perf_counter()
    for _ in range(rounds):
        Span(1, 1, 1, 2)
        ast.Name("x", span)
        ast.Call("dense", span, (name,), (), (), span)
    return (time.perf_counter() - start) / (3 * rounds)


# ------------------------------------------------------------------ torch.fx


def build_twin(units: int, width: int) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(torch_source(units, width), "big_twin.py", "exec"), namespace)  # noqa: S102 - our own twin
    return namespace["Big"]()


def time_fx(units: int, width: int, fake: bool) -> float:
    import torch
    from torch.fx import symbolic_trace
    from torch.fx.passes.shape_prop import ShapeProp

    if fake:
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode()
        with mode:  # fake parameters too, so no real tensor is converted while timing
            module = build_twin(units, width)
            example = torch.empty(1, width)
        start = time.perf_counter()
        traced = symbolic_trace(module)
        ShapeProp(traced, fake_mode=mode).propagate(example)
    else:
        module = build_twin(units, width)
        example = torch.randn(1, width)
        start = time.perf_counter()
        traced = symbolic_trace(module)
        ShapeProp(traced).propagate(example)
    seconds = time.perf_counter() - start
    output = next(n for n in traced.graph.nodes if n.op == "output").args[0]
    assert tuple(output.meta["tensor_meta"].shape) == (1, width)  # fx really inferred it
    return seconds


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
        from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: F401
        from torch.fx.passes.shape_prop import ShapeProp  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ CLI start


def time_check_cli(width: int) -> dict[str, list[float]]:
    """`aurane check` on a small file in fresh processes, with and without Aurane's bytecode."""
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.aur"
        path.write_text(aur_source(3, width))
        # A copy of the package that never gets bytecode: every start compiles its modules,
        # as the first run after an editable install does (the standard library keeps its own).
        copy = Path(tmp) / "src"
        shutil.copytree(
            Path(__file__).resolve().parents[1] / "src" / "aurane",
            copy / "aurane",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached = [sys.executable, "-X", f"pycache_prefix={tmp}/cache", "-m", "aurane"]
        runs = {
            "bytecode cached (as after pip install)": (cached, env),
            "first run, Aurane compiled from source": (
                [sys.executable, "-m", "aurane"],
                {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(copy)},
            ),
        }
        subprocess.run([*cached, "check", str(path)], check=True, capture_output=True, env=env)
        for label, (command, run_env) in runs.items():
            times = []
            for _ in range(11):
                start = time.perf_counter()
                subprocess.run(
                    [*command, "check", str(path)], check=True, capture_output=True, env=run_env
                )
                times.append(time.perf_counter() - start)
            results[label] = times
    return results


# ------------------------------------------------------------------ report


def ratio_text(baseline: float, ours: float) -> str:
    ratio = baseline / ours
    verdict = "meets" if ratio >= TARGET_RATIO else "below"
    return f"{ratio:7.1f}x ({verdict} {TARGET_RATIO:.0f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[1000, 10000],
        help="operation counts (rounded to units of 5)",
    )
    parser.add_argument("--width", type=int, default=16, help="features per layer (default 16)")
    parser.add_argument("--no-cli", action="store_true", help="skip the `aurane check` timing")
    args = parser.parse_args()
    width = args.width
    have_torch = torch_available()
    if have_torch:  # one-time imports and dispatch caches are nobody's per-model cost
        time_fx(2, width, fake=False)
        time_fx(2, width, fake=True)
    else:
        print("torch is not installed: fx baselines skipped (pip install -e '.[torch]')")
    totals: dict[int, float] = {}
    for size in args.sizes:
        units = max(1, size // 5)
        source = aur_source(units, width)
        repeats = 3 if size <= 2000 else 2
        seconds, nodes = time_front_end(source, repeats)
        totals[size] = seconds
        stages = time_stages(source, repeats)
        records = count_records(source)
        per_record = record_cost()
        print(f"\n{nodes:,} operations, width {width}")
        print(
            f"  aurane parse+resolve+check+lower  {seconds:8.3f} s  "
            f"{nodes / seconds:9,.0f} ops/s  {seconds / nodes * 1e6:6.1f} us/op"
        )
        print("    stages: " + "  ".join(f"{k} {v * 1e3:.1f} ms" for k, v in stages.items()))
        floor = records * per_record
        print(
            f"    frozen records kept: {records:,} ({records / nodes:.1f}/op) at "
            f"{per_record * 1e6:.2f} us each = {floor * 1e3:.1f} ms, "
            f"{floor / seconds:.0%} of the total"
        )
        if have_torch:
            for kind, fake in (("real", False), ("fake", True)):
                fx = time_fx(units, width, fake=fake)
                print(
                    f"  fx trace + ShapeProp, {kind} tensors {fx:8.3f} s  {ratio_text(fx, seconds)}"
                )
    if 1000 in totals and 10000 in totals:
        print(f"\n10k/1k time ratio: {totals[10000] / totals[1000]:.2f} (target <= 11)")
    if not args.no_cli:
        print("\n`aurane check` on a small file, fresh process, interpreter start included:")
        for label, times in time_check_cli(width).items():
            median = statistics.median(times) * 1000
            verdict = "meets" if median < CLI_TARGET_MS else "above"
            print(
                f"  {label:42} median {median:5.0f} ms, min {min(times) * 1000:4.0f} ms "
                f"({verdict} the {CLI_TARGET_MS:.0f} ms target)"
            )


if __name__ == "__main__":
    main()
