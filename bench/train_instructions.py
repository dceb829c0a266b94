"""The generated training loop's overhead per step, counted in instructions instead of timed.

    .venv/bin/python bench/train_instructions.py      # needs valgrind and a C compiler

Why: ``train_speed.py`` times the overhead (issue 12's target: <= 5 us a step) and on a
shared virtual machine its verdict is "unresolved": the hand-written loop timed against
itself swings by about +-100 us a step between rounds, twenty times the target. Valgrind's
callgrind counts the instructions a run executes instead; the count does not depend on the
machine's load (the same run gives the same count, to the instruction, with
``PYTHONHASHSEED=0``).

Method: the models, data, loaders and the two loops of ``train_loops.py`` (the code that
``train_speed.py`` times). One process runs under callgrind with instrumentation off until
the counted part: each side first runs once (first-use imports and caches are not the
loop's work), then each side runs at 8 and at 128 steps a run (2 epochs of 4 and of 64
batches), each run counted alone through Valgrind's client requests (``callgrind_probe.c``).
Both sides must reach the same steps and final loss, as in ``train_speed.py``.

Rows, per model:
- instructions per step at 128 steps a run: everything the generated function does (set-up
  and per-epoch work included, ``train_speed.py``'s definition), against the hand loop;
- the same split into a per-step slope (8 to 128 steps) and a fixed part per run;
- the overhead as CPU time: the extra instructions at the slower of two rates measured in
  this process without valgrind (median of the benchmark's runs): the hand loop's own (its
  CPU time per step over its instructions per step) and plain Python code's (a calibration
  loop of calls, attribute and dict accesses), since the extra work is Python glue. Target:
  <= 5 us a step.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402

TARGET_US = 5.0
SIZES = {"small": 128, "large": 2048}  # samples: 4 and 64 batches of 32 an epoch
CALIBRATION_ROUNDS = 20_000


def tools_missing() -> str | None:
    """Why instructions cannot be counted here, or None."""
    for tool in ("valgrind", "gcc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not Path("/usr/include/valgrind/callgrind.h").exists():
        return "valgrind's headers (callgrind.h) are not installed"
    return None


# ------------------------------------------------------------------ dumps


def read_dumps(folder: Path) -> dict[str, int]:
    """Instructions per client-request dump (label -> Ir) from callgrind's output files."""
    counts: dict[str, int] = {}
    for path in sorted(folder.glob("callgrind.out*")):
        text = path.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.MULTILINE)
        total = re.search(r"^summary: (\d+)$", text, re.MULTILINE)
        if label and total:
            counts[label.group(1)] = int(total.group(1))
    return counts


def split_cost(short: int, long: int, short_steps: int, long_steps: int) -> tuple[float, float]:
    """(per step, fixed per run) from the counts of a short and a long run."""
    per_step = (long - short) / (long_steps - short_steps)
    return per_step, short - short_steps * per_step


# ------------------------------------------------------------------ the counted process


def _calibration(rounds: int) -> int:
    """Plain Python of the kind a loop's glue is made of: calls, attributes, dicts."""

    class Box:
        def __init__(self) -> None:
            self.seen: dict[str, int] = {}

        def add(self, key: str, value: int) -> None:
            self.seen[key] = self.seen.get(key, 0) + value

    box = Box()
    for index in range(rounds):
        box.add("even" if index % 2 == 0 else "odd", index)
    return len(box.seen)


def _datasets() -> dict[str, dict[str, Any]]:
    import torch
    from torch.utils.data import TensorDataset

    generator = torch.Generator().manual_seed(0)
    size = max(SIZES.values())
    full = {
        "Mlp": (
            torch.randn(size, 64, generator=generator),
            torch.randint(0, 10, (size,), generator=generator),
        ),
        "SmallCnn": (
            torch.randn(size, 1, 16, 16, generator=generator),
            torch.randint(0, 10, (size,), generator=generator),
        ),
    }
    return {
        name: {key: TensorDataset(x[:n], y[:n]) for key, n in SIZES.items()}
        for name, (x, y) in full.items()
    }


def child(library: str, out: str) -> None:
    """Runs under callgrind: every counted run between a zero and a labelled dump."""
    import torch
    import train_loops

    from aurane.compile import compile_source

    torch.set_num_threads(1)
    probe = ctypes.CDLL(library)
    text = (c.PROGRAMS / "train.aur").read_text()
    program = c.load_generated(compile_source(text, filename="train.aur"), "bench_train")
    loops = {
        (name, size): train_loops.Loops(program, name, data)
        for name, by_size in _datasets().items()
        for size, data in by_size.items()
    }
    sides = ("aurane", "hand")
    for each in loops.values():  # first use, not counted
        for side in sides:
            getattr(each, side)()
    _calibration(CALIBRATION_ROUNDS)
    outcomes: dict[str, Any] = {}
    probe.probe_start()
    for (name, size), each in loops.items():
        for side in sides:
            probe.probe_zero()
            steps, loss, _ = getattr(each, side)()
            probe.probe_dump(f"{name}:{size}:{side}".encode())
            outcomes[f"{name}:{size}:{side}"] = {"steps": steps, "loss": loss}
    probe.probe_zero()
    _calibration(CALIBRATION_ROUNDS)
    probe.probe_dump(b"calibration")
    probe.probe_stop()
    Path(out).write_text(json.dumps(outcomes))


# ------------------------------------------------------------------ the parent


def count(folder: Path) -> tuple[dict[str, int], dict[str, Any]]:
    """Build the probe, run the child under callgrind, read its counts and outcomes."""
    library = folder / "libprobe.so"
    source = Path(__file__).resolve().parent / "callgrind_probe.c"
    build = ["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source)]
    subprocess.run(build, check=True, capture_output=True)
    outcomes = folder / "outcomes.json"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={folder}/callgrind.out",
        sys.executable,
        __file__,
        "--child",
        str(library),
        str(outcomes),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"callgrind run failed:\n{done.stderr[-3000:]}")
    return read_dumps(folder), json.loads(outcomes.read_text())


def native_rates(settings: c.Settings) -> dict[str, float]:
    """CPU seconds of the calibration and of one hand-written MLP and CNN run at the large
    size, each the median of the benchmark's runs, without valgrind."""
    import torch
    import train_loops

    from aurane.compile import compile_source

    text = (c.PROGRAMS / "train.aur").read_text()
    program = c.load_generated(compile_source(text, filename="train.aur"), "bench_train_rate")
    datasets = _datasets()
    jobs: dict[str, Callable[[], object]] = {
        "calibration": lambda: _calibration(CALIBRATION_ROUNDS),
    }
    for name in datasets:
        jobs[name] = train_loops.Loops(program, name, datasets[name]["large"]).hand
    torch.set_num_threads(settings.threads)
    seconds: dict[str, float] = {}
    for label, job in jobs.items():
        for _ in range(settings.warmup):
            job()
        times = []
        for _ in range(settings.runs):
            start = time.process_time()
            job()
            times.append(time.process_time() - start)
        seconds[label] = statistics.median(times)
    return seconds


def run(settings: c.Settings) -> c.Result:
    result = c.Result("train_instructions", settings=c.configure(settings))
    count_instructions(settings, result)
    return result


def count_instructions(settings: c.Settings, result: c.Result) -> None:
    """Add the counted rows to ``result`` (``train_speed.py`` calls this in a full run)."""
    missing = tools_missing()
    if missing is not None:
        result.note(f"{missing}: instructions not counted (apt-get install valgrind gcc)")
        return
    if settings.quick:
        result.note("instructions are counted in full runs only (about 10 minutes under valgrind)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        counts, outcomes = count(Path(tmp))
    seconds = native_rates(settings)
    python_rate = seconds["calibration"] / counts["calibration"]  # seconds per instruction
    steps = {size: 0 for size in SIZES}
    for name in ("Mlp", "SmallCnn"):
        for size in SIZES:
            ours, theirs = outcomes[f"{name}:{size}:aurane"], outcomes[f"{name}:{size}:hand"]
            result.work.same(f"{name}: steps per run ({size})", ours["steps"], theirs["steps"])
            result.work.same(
                f"{name}: final epoch loss ({size})", ours["loss"], theirs["loss"], tolerance=1e-9
            )
            steps[size] = theirs["steps"]
        ir = {
            (side, size): counts[f"{name}:{size}:{side}"]
            for side in ("aurane", "hand")
            for size in SIZES
        }
        long = steps["large"]
        per_step = {
            side: split_cost(ir[side, "small"], ir[side, "large"], steps["small"], long)
            for side in ("aurane", "hand")
        }
        loop_rate = seconds[name] / ir["hand", "large"]
        rate = max(loop_rate, python_rate)
        extra = (ir["aurane", "large"] - ir["hand", "large"]) / long
        overhead_us = extra * rate * 1e6
        slope = per_step["aurane"][0] - per_step["hand"][0]
        fixed = per_step["aurane"][1] - per_step["hand"][1]
        result.rows.append(
            c.Row(
                f"training loop {name}, instructions per step ({long} steps/run, callgrind)",
                "Ir",
                c.Summary.one(ir["aurane", "large"] / long),
                c.Summary.one(ir["hand", "large"] / long),
                "hand-written loop",
                ir["aurane", "large"] / ir["hand", "large"],
                "aurane / baseline (counted, load-independent)",
                "informational",
                None,
                note=f"difference {extra:+,.0f} Ir/step: {slope:+,.0f} per step and "
                f"{fixed:+,.0f} per run",
            )
        )
        result.rows.append(
            c.Row(
                f"training loop {name}, overhead per step as CPU time ({long} steps/run, "
                "instructions x rate)",
                "us/step",
                c.Summary.one(overhead_us),
                None,
                "hand-written loop",
                None,
                f"extra Ir/step x {rate * 1e9:.3f} ns/Ir (slower of the loop's "
                f"{loop_rate * 1e9:.3f} and plain Python's {python_rate * 1e9:.3f})",
                f"overhead <= {TARGET_US:g} us/step",
                overhead_us <= TARGET_US,
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    from report import print_result

    print_result(run(c.Settings.make(args.quick, smoke=args.smoke)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
