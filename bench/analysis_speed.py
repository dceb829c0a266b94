"""Front-end speed: parse -> resolve -> check -> lower on generated models of N operations,
against torch.fx symbolic_trace + ShapeProp on the equivalent hand-written module (same run).

    python bench/analysis_speed.py            # N = 1,000 and 10,000
    python bench/analysis_speed.py --sizes 500 2000

Also times `aurane check` on a small file as a fresh process (interpreter start included).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WIDTH = 16


def aur_source(units: int) -> str:
    """Each unit is 5 operations: a chain (dense + relu) and a branch pair merged by add."""
    lines = ["model Big:", f"    input_shape = ({WIDTH},)", "    def forward(x):"]
    for _ in range(units):
        lines += [
            f"        x -> dense({WIDTH}).relu",
            f"        a = dense(x, {WIDTH})",
            f"        b = dense(x, {WIDTH})",
            "        x = add(a, b)",
        ]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def torch_source(units: int) -> str:
    init = [
        f"        self.d{i}_{k} = nn.Linear({WIDTH}, {WIDTH})"
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


def time_front_end(source: str, repeats: int) -> tuple[float, int]:
    from aurane.compiler import run_front_end

    best = float("inf")
    nodes = 0
    for _ in range(repeats):
        start = time.perf_counter()
        result = run_front_end(source, "big.aur")
        best = min(best, time.perf_counter() - start)
        assert result.ok, result.diagnostics[:3]
        nodes = len(result.graphs["Big"].nodes)
    return best, nodes


def time_fx(units: int) -> float | None:
    try:
        import torch
        from torch.fx import symbolic_trace
        from torch.fx.passes.shape_prop import ShapeProp
    except ImportError:
        return None
    namespace: dict[str, object] = {}
    exec(compile(torch_source(units), "big_twin.py", "exec"), namespace)  # noqa: S102 - our own twin
    module = namespace["Big"]()  # type: ignore[operator]
    start = time.perf_counter()
    traced = symbolic_trace(module)
    ShapeProp(traced).propagate(torch.randn(1, WIDTH))
    return time.perf_counter() - start


def time_check_cli() -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.aur"
        path.write_text(aur_source(3))
        times = []
        for _ in range(7):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "aurane", "check", str(path)],
                check=True,
                capture_output=True,
            )
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[1000, 10000],
        help="operation counts (rounded to units of 5)",
    )
    args = parser.parse_args()
    results = {}
    time_fx(2)  # warm up fx's lazy imports so that neither side pays one-time costs
    print(f"{'ops':>8} {'aurane s':>10} {'ops/s':>12} {'fx+ShapeProp s':>15} {'speed-up':>9}")
    for size in args.sizes:
        units = max(1, size // 5)
        seconds, nodes = time_front_end(aur_source(units), repeats=3 if size <= 2000 else 1)
        fx = time_fx(units)
        results[size] = seconds
        ratio = f"{fx / seconds:8.1f}x" if fx else "   n/a"
        fx_text = f"{fx:15.3f}" if fx else f"{'(no torch)':>15}"
        print(f"{nodes:>8} {seconds:10.3f} {nodes / seconds:12,.0f} {fx_text} {ratio}")
    if 1000 in results and 10000 in results:
        print(f"10k/1k time ratio: {results[10000] / results[1000]:.2f} (target <= 11)")
    cli = time_check_cli()
    print(
        f"`aurane check` small file, fresh process: median {statistics.median(cli) * 1000:.0f} ms, "
        f"min {min(cli) * 1000:.0f} ms (target < 100 ms)"
    )


if __name__ == "__main__":
    main()
