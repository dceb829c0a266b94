"""bench/run_all.py still runs, and every benchmark still proves both sides did the same work.

Runs the benchmarks at their smallest sizes (``--smoke``: same rules, no subprocess
timings) in a child process and reads the JSON it writes. No timing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = {"analysis_speed", "model_speed", "train_speed", "profile_accuracy", "profile_speed"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run_all.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "AURANE_BENCH_NO_ZOO": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert (out / "latest.md").read_text().count("| benchmark | metric |") == 1
    data: dict[str, object] = json.loads((out / "latest.json").read_text())
    return data


def test_every_benchmark_ran(report: dict[str, object]) -> None:
    benchmarks = report["benchmarks"]
    assert isinstance(benchmarks, dict)
    assert set(benchmarks) == BENCHMARKS
    for name, bench in benchmarks.items():
        assert "error" not in bench, (name, bench.get("error"))
        assert bench["rows"], name


def test_both_sides_did_the_same_work(report: dict[str, object]) -> None:
    benchmarks = report["benchmarks"]
    assert isinstance(benchmarks, dict)
    for name, bench in benchmarks.items():
        assert bench["work"], f"{name} asserts no shared work"
        assert bench["work_equal"] is True, name
        assert all(check["equal"] for check in bench["work"]), name


def test_rows_carry_statistic_and_target(report: dict[str, object]) -> None:
    benchmarks = report["benchmarks"]
    assert isinstance(benchmarks, dict)
    for name, bench in benchmarks.items():
        for row in bench["rows"]:
            assert row["target"], (name, row["metric"])
            for side in ("aurane", "baseline"):
                summary = row[side]
                if summary is not None and summary["n"] > 1:  # a timing, not a count
                    assert summary["n"] >= 7, (name, row["metric"])
                    assert summary["q1"] <= summary["median"] <= summary["q3"]
        settings = bench["settings"]
        assert settings["runs"] >= 7 and settings["torch_threads"] == 1, name


def test_machine_is_described(report: dict[str, object]) -> None:
    machine = report["machine"]
    assert isinstance(machine, dict)
    for key in ("cpu", "cores", "python", "torch"):
        assert machine[key], key
