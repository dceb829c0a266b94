"""Run every benchmark in bench/ and write bench/results/latest.json and latest.md.

    .venv/bin/python bench/run_all.py            # full sizes (minutes on 2 cores)
    .venv/bin/python bench/run_all.py --quick    # smoke run: tiny sizes, same rules
    .venv/bin/python bench/run_all.py --only train_speed profile_speed --out /tmp/res

Every benchmark follows bench/_common.py: both sides get the same warm-up, runs (>= 7),
statistic (median, IQR, min/max), GC and thread settings, and each records the work both
sides did and stops when it differs. The table lists every ratio with its target.
A full run gives each benchmark a process of its own (a quick or smoke run stays in one).
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
from report import markdown  # noqa: E402

BENCHMARKS = ("analysis_speed", "model_speed", "train_speed", "profile_accuracy", "profile_speed")


README_HEADING = "## Benchmarks"


def readme_section(report: dict[str, Any]) -> str:
    """The README's Benchmarks section: how to run, the rules, the latest table."""
    table = markdown(report).split("\n\n")
    rows = next(block for block in table if block.startswith("| benchmark |"))
    m = report["machine"]
    return f"""{README_HEADING}

`bench/run_all.py` runs every benchmark and writes `bench/results/latest.json` and
`bench/results/latest.md` (this table, the per-model profile table and every work check);
`--quick` is a fast run with small sizes, `--only NAME ...` picks benchmarks, and each
`bench/*.py` also runs alone. Rules (bench/_common.py): both sides get the same warm-up,
runs (>= 7, interleaved, alternating order), statistic (median with IQR), GC state and torch
threads (1); each benchmark asserts both sides did the same work (graph sizes and output
shapes, parameters, outputs and gradients, steps, final loss and parameters) before it
reports a ratio; `tests/test_bench_smoke.py` runs them all at minimal sizes so they cannot rot.

```bash
.venv/bin/python bench/run_all.py            # full run, 5 to 7 minutes on 2 cores
.venv/bin/python bench/run_all.py --quick    # about 20 s
```

Latest full run: `{report["command"]}` on {m["cpu"]}, {m["cores"]} cores (shared with other
work: load average {m.get("load_average", "?")} at the start), Python {m["python"]}, torch
{m["torch"]}, {report["date"]}. CPU-time rows are less disturbed by other load than
wall-clock rows (which include waiting for a core), but on a busy machine both move by
several percent between runs: compare ratios within one run, not figures across runs.
Targets are the ones the earlier bench scripts stated.

{rows}
"""


def update_readme(report: dict[str, Any], path: Path = c.REPO / "README.md") -> None:
    """Replace the Benchmarks section (up to the next ``## `` heading) or append it."""
    text = path.read_text()
    section = readme_section(report)
    start = text.find(f"\n{README_HEADING}\n")
    if start < 0:
        path.write_text(text.rstrip("\n") + "\n\n" + section)
        return
    end = text.find("\n## ", start + 1)
    tail = "" if end < 0 else "\n" + text[end + 1 :]
    path.write_text(text[: start + 1] + section + tail)


def run_one(name: str, settings: c.Settings, no_cli: bool) -> dict[str, Any]:
    """One benchmark in this process: its JSON, or an error entry (one broken benchmark must
    not hide the others)."""
    try:
        module = importlib.import_module(name)
        smoke = no_cli or settings.smoke
        kwargs = {"cli": False} if smoke and name in ("analysis_speed", "model_speed") else {}
        result: c.Result = module.run(settings, **kwargs)
        return result.to_json()
    except Exception as error:
        traceback.print_exc()
        return {"name": name, "error": f"{type(error).__name__}: {error}", "work_equal": False}


def run_isolated(name: str, argv: list[str] | None) -> dict[str, Any]:
    """One benchmark in a child process with this run's options."""
    options = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--readme"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.json"
        command = [sys.executable, __file__, *options, "--one", name, str(out)]
        done = subprocess.run(command)
        if done.returncode == 0 and out.exists():
            data: dict[str, Any] = json.loads(out.read_text())
            return data
    why = f"killed by signal {-done.returncode}" if done.returncode < 0 else "failed"
    return {
        "name": name,
        "error": f"its process {why} (exit {done.returncode})",
        "work_equal": False,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, same rules (minutes)")
    parser.add_argument(
        "--smoke", action="store_true", help="minimal sizes, no subprocess timings (the test)"
    )
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    parser.add_argument("--out", type=Path, default=c.BENCH / "results", help="results folder")
    parser.add_argument("--runs", type=int, default=None, help="runs per side (>= 7)")
    parser.add_argument("--no-cli", action="store_true", help="skip subprocess timings")
    parser.add_argument(
        "--readme", action="store_true", help="also put the table into README.md (full runs)"
    )
    parser.add_argument("--one", nargs=2, metavar=("NAME", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    settings = c.Settings.make(args.quick, args.runs, smoke=args.smoke)
    if args.one is not None:  # the child of a full run: one benchmark, its JSON to a file
        name, out = args.one
        Path(out).write_text(json.dumps(run_one(name, settings, args.no_cli)))
        return 0
    started = time.perf_counter()
    report: dict[str, Any] = {
        "machine": c.machine(),
        "command": "python bench/run_all.py" + (" " + " ".join(argv or sys.argv[1:])).rstrip(),
        "quick": settings.quick,
        "level": settings.level,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "benchmarks": {},
    }
    failed = False
    for name in args.only:
        t0 = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        # A full run gives each benchmark a process of its own: one benchmark's memory (or
        # its death by the out-of-memory killer) cannot reach the next one's figures.
        isolate = settings.level == "full"
        data = run_isolated(name, argv) if isolate else run_one(name, settings, args.no_cli)
        failed = failed or "error" in data
        data["seconds"] = round(time.perf_counter() - t0, 2)
        report["benchmarks"][name] = data
    report["seconds"] = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(report, indent=1) + "\n")
    text = markdown(report)
    (args.out / "latest.md").write_text(text)
    if args.readme and not failed:
        update_readme(report)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
