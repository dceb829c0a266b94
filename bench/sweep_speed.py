"""``aurane sweep`` speed: 100 configurations of the GPT-2 program (target: under 2 s).

    .venv/bin/python bench/sweep_speed.py [--runs 7]

Two measurements, each the median of ``--runs`` runs (with min and max), and the in-process
run's CPU time (``time.process_time``), which load on a shared machine moves least:

- in process: parse once, then resolve, check and lower the program, profile it and plan
  its training memory at each of 100 configurations (``aurane.tools.sweep.Sweep``:
  10 widths x 10 depths); reported as configurations per second;
- the command as a user runs it: ``python -m aurane sweep examples/zoo/gpt2.aur --set
  n_embd=... --set n_layer=... --json`` (interpreter start and imports included).

The work is checked, not assumed: one parse and 100 analyses per run, 100 rows, every one
valid, the same rows in both.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from aurane.syntax.gc_pause import paused_gc  # noqa: E402
from aurane.tools.sweep import Sweep, grid  # noqa: E402

GPT2 = REPO / "examples" / "zoo" / "gpt2.aur"
WIDTHS = [192, 288, 384, 480, 576, 672, 768, 864, 960, 1056]
DEPTHS = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
TARGET_S = 2.0


def in_process() -> tuple[float, float, list[tuple[int, int, int | None]]]:
    text = GPT2.read_text(encoding="utf-8")
    configurations = grid([("n_embd", WIDTHS), ("n_layer", DEPTHS)])
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    sweep = Sweep(text, str(GPT2))
    with paused_gc():
        rows = [sweep.evaluate(values, "GPT") for values in configurations]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert (sweep.parses, sweep.analyses) == (1, 100), (sweep.parses, sweep.analyses)
    figures = []
    for row in rows:
        assert row.figures is not None, row.label()
        figures.append((row.figures.parameters, row.figures.macs, row.figures.memory))
    return seconds, cpu, figures


def command() -> tuple[float, list[tuple[int, int, int | None]]]:
    args = [
        sys.executable, "-m", "aurane", "sweep", str(GPT2), "--json",
        "--set", "n_embd=" + ",".join(map(str, WIDTHS)),
        "--set", "n_layer=" + ",".join(map(str, DEPTHS)),
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, check=True)
    seconds = time.perf_counter() - start
    payload = json.loads(done.stdout)
    assert (payload["parses"], payload["analyses"]) == (1, 100)
    rows = [
        (c["parameters"], c["macs_per_sample"], c["memory_bytes"])
        for c in payload["configurations"]
    ]
    return seconds, rows


def summary(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    in_proc: list[float] = []
    cpu_times: list[float] = []
    cli: list[float] = []
    reference = None
    in_process()  # warm-up: imports and caches
    for _ in range(args.runs):
        seconds, cpu, rows = in_process()
        in_proc.append(seconds)
        cpu_times.append(cpu)
        reference = reference or rows
        assert rows == reference
        seconds, rows = command()
        cli.append(seconds)
        assert rows == reference, "the command and the library disagree"
    rate = 100 / statistics.median(in_proc)
    print("aurane sweep, GPT-2 program, 100 configurations (10 n_embd x 10 n_layer)")
    print(f"  in process: {summary(in_proc)}; {rate:,.0f} configurations per second")
    print(
        f"  in process, CPU time: {summary(cpu_times)} (what load on a shared machine moves least)"
    )
    print(f"  command:    {summary(cli)} (interpreter start included); target < {TARGET_S} s")
    print("  work per run: 1 parse, 100 analyses (resolve, check, lower), 100 plans")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
