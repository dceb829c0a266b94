"""The benchmarks' report: the markdown table of results (``markdown``) and one benchmark's
table when it runs alone (``print_result``). Every benchmark and run_all.py import it."""

from __future__ import annotations

import sys
import time
from typing import Any

import _common as c


def fmt(summary: dict[str, Any] | None, unit: str) -> str:
    if summary is None:
        return "-"
    if summary["n"] <= 1 and float(summary["median"]).is_integer():
        return f"{int(summary['median']):,} {unit}"
    digits = 3 if summary["median"] < 10 else 1
    median = f"{summary['median']:.{digits}f}"
    if summary["n"] <= 1 or summary["q1"] == summary["q3"] == summary["median"]:
        return f"{median} {unit}".strip()
    return (
        f"{median} {unit} (IQR {summary['q1']:.{digits}f}-{summary['q3']:.{digits}f}, "
        f"n={summary['n']})"
    )


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Aurane benchmarks",
        "",
        f"Command: `{report['command']}`{'' if report.get('level', 'full') == 'full' else ' (' + report['level'] + ' run: small sizes, not a result)'}  ",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}; Python {m['python']}, "
        f"torch {m['torch']}, aurane {m['aurane']}; load average at start "
        f"{m.get('load_average', '?')}  ",
        f"Date: {report['date']}; wall time {report['seconds']:.0f} s",
        "",
        "Medians with IQR over n interleaved runs per side (same warm-up, GC and threads "
        "for both). Ratio as defined per row.",
        "",
        "| benchmark | metric | Aurane | baseline | ratio | target | met? |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, bench in report["benchmarks"].items():
        if "error" in bench:
            lines.append(f"| {name} | FAILED: {bench['error']} | | | | | no |")
            continue
        for row in bench["rows"]:
            ratio = "-" if row["ratio"] is None else f"{row['ratio']:.3f}"
            if row["ratio"] is not None and row["ratio"] >= 10:
                ratio = f"{row['ratio']:.1f}"
            judged = row["target"] not in ("informational", "-", "")
            met = {True: "yes", False: "**no**", None: "unresolved" if judged else "-"}[row["met"]]
            baseline = fmt(row["baseline"], row["unit"])
            if row["baseline_name"]:
                baseline = f"{row['baseline_name']}: {baseline}"
            metric = row["metric"] + (f" ({row['note']})" if row["note"] else "")
            lines.append(
                f"| {name} | {metric} | {fmt(row['aurane'], row['unit'])} | {baseline} | "
                f"{ratio} ({row['ratio_means']}) | {row['target']} | {met} |"
            )
    per_model = report["benchmarks"].get("profile_accuracy", {}).get("details", {}).get("per_model")
    if per_model:
        lines += [
            "",
            "profile_accuracy per model (FLOPs per sample; reference = true count when the "
            "shared corpus gives one, else FlopCounterMode with attention on the math kernel):",
            "",
            "| model | Aurane | FlopCounterMode | reference | Aurane = reference? | peer verdict |",
            "|---|---|---|---|---|---|",
        ]
        for m in per_model:
            ok = {True: "yes", False: "**no**", None: "unverified"}[m["aurane_ok"]]
            peer = "-" if m["flop_counter"] is None else f"{m['flop_counter']:,}"
            ref = "-" if m["reference"] is None else f"{m['reference']:,} ({m['reference_kind']})"
            lines.append(
                f"| {m['model']} | {m['aurane']:,} | {peer} | {ref} | {ok} | {m['verdict']} |"
            )
    lines += ["", "Work asserted equal on both sides:", ""]
    for name, bench in report["benchmarks"].items():
        checks = bench.get("work", [])
        ok = bench.get("work_equal", False)
        lines.append(f"- {name}: {len(checks)} checks, {'all equal' if ok else 'NOT EQUAL'}")
    notes = [(n, note) for n, b in report["benchmarks"].items() for note in b.get("notes", [])]
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"- {name}: {note}" for name, note in notes]
    return "\n".join(lines) + "\n"


def print_result(result: c.Result) -> None:
    data = result.to_json()
    print(
        markdown(
            {
                "machine": c.machine(),
                "command": " ".join(sys.argv),
                "quick": False,
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "seconds": 0.0,
                "benchmarks": {result.name: data},
            }
        )
    )
    for key, value in result.details.items():
        print(f"  {key}: {value}")
