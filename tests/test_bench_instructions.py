"""bench/train_instructions.py's arithmetic: callgrind dumps read by label, a run's count split
into a per-step slope and a fixed part. (The counting itself needs valgrind and takes
minutes: it runs with the full benchmark, not in the suite.)"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("train_instructions")
    finally:
        sys.path.remove(str(BENCH))


def _dump(label: str | None, total: int) -> str:
    trigger = f"Client Request: {label}" if label else "Program termination"
    return (
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 42\n"
        f"cmd:  python bench.py\npart: 1\n\ndesc: I1 cache: \ndesc: Trigger: {trigger}\n\n"
        f"positions: line\nevents: Ir\nsummary: {total}\n\nfl=(1) x.c\nfn=(1) f\n0 {total}\n"
        f"totals: {total}\n"
    )


def test_dumps_are_read_by_their_client_request_label(bench: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "callgrind.out.42").write_text(_dump(None, 7))  # the final, unlabelled one
    (tmp_path / "callgrind.out.42.1").write_text(_dump("Mlp:small:aurane", 1_200))
    (tmp_path / "callgrind.out.42.2").write_text(_dump("Mlp:small:hand", 1_100))
    (tmp_path / "unrelated.txt").write_text(_dump("other", 5))
    assert bench.read_dumps(tmp_path) == {"Mlp:small:aurane": 1_200, "Mlp:small:hand": 1_100}


def test_a_run_splits_into_per_step_and_fixed_cost(bench: ModuleType) -> None:
    # 1,000 a step and 50,000 a run: 8 steps 58,000, 128 steps 178,000
    per_step, fixed = bench.split_cost(58_000, 178_000, 8, 128)
    assert per_step == pytest.approx(1_000.0) and fixed == pytest.approx(50_000.0)


def test_missing_tools_are_named(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench.shutil, "which", lambda tool: None)
    assert bench.tools_missing() == "valgrind is not installed"
