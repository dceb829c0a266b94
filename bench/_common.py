"""Shared measurement rules for every benchmark in bench/ (one place, so both sides of a
comparison always get the same treatment).

- Both sides get the same warm-up, the same number of runs (at least 7) and the same
  statistic: the median with its spread (interquartile range and min/max).
- Runs are interleaved, and the order alternates every round (A B, B A, ...), so slow
  drift of a shared machine's load falls on both sides alike.
- GC is in the same state for both: enabled (what a user has), with ``gc.collect()``
  before every timed run of either side (objects alive before timing are frozen with
  ``gc.freeze()`` first, so those collections are cheap). Torch uses the same thread count for both
  (``configure``; 1 by default).
- Every comparison records the work both sides did (``Work.same``) and fails loudly when
  it differs, so a ratio is never computed between two different jobs.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
PROGRAMS = BENCH / "programs"
MIN_RUNS = 7

if str(REPO / "src") not in sys.path:  # runnable from a checkout without an install
    sys.path.insert(0, str(REPO / "src"))


# ------------------------------------------------------------------ settings


@dataclass(frozen=True)
class Settings:
    """Sizes of one benchmark run. ``level``: "full"; "quick" (a fast run of every
    benchmark, same rules); "smoke" (minimal sizes, no subprocess timings: the test)."""

    level: str = "full"
    runs: int = 11
    warmup: int = 2
    threads: int = 1

    @property
    def quick(self) -> bool:
        return self.level != "full"

    @property
    def smoke(self) -> bool:
        return self.level == "smoke"

    def pick(self, full: Any, quick: Any, smoke: Any) -> Any:
        return {"full": full, "quick": quick, "smoke": smoke}[self.level]

    @staticmethod
    def make(
        quick: bool, runs: int | None = None, threads: int = 1, smoke: bool = False
    ) -> Settings:
        level = "smoke" if smoke else "quick" if quick else "full"
        chosen = runs if runs is not None else (MIN_RUNS if quick or smoke else 11)
        return Settings(level, max(MIN_RUNS, chosen), 2 if level == "full" else 1, threads)


def configure(settings: Settings) -> dict[str, Any]:
    """Process-wide settings shared by both sides; returns them for the report."""
    gc.enable()
    threads: int | None = None
    try:
        import torch

        torch.set_num_threads(settings.threads)
        threads = torch.get_num_threads()
    except ImportError:
        pass
    return {
        "level": settings.level,
        "runs": settings.runs,
        "warmup": settings.warmup,
        "torch_threads": threads,
        "gc": "enabled for both sides; gc.freeze() before timing, gc.collect() before every run",
        "order": "interleaved, alternating every round",
    }


# ------------------------------------------------------------------ statistics


@dataclass
class Summary:
    median: float
    q1: float
    q3: float
    min: float
    max: float
    n: int

    @staticmethod
    def one(value: float) -> Summary:
        """A single exact figure (a count, not a timing)."""
        return Summary(value, value, value, value, value, 1)

    @staticmethod
    def of(values: list[float]) -> Summary:
        if len(values) < 2:
            raise ValueError("a summary needs at least two runs")
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return Summary(statistics.median(values), q1, q3, min(values), max(values), len(values))

    def scaled(self, factor: float) -> Summary:
        return Summary(
            self.median * factor,
            self.q1 * factor,
            self.q3 * factor,
            self.min * factor,
            self.max * factor,
            self.n,
        )


@dataclass
class Timings:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def paired(
    sides: Mapping[str, Callable[[], object]],
    settings: Settings,
    *,
    inner: int = 1,
    runs: int | None = None,
) -> dict[str, Timings]:
    """Time every side ``runs`` times (seconds per call, ``inner`` calls per run) under the
    same rules: same warm-up, interleaved alternating order, GC collected before each run."""
    count = max(MIN_RUNS, runs if runs is not None else settings.runs)
    names = list(sides)
    # Everything alive now (torch, the models, both sides' inputs) moves to the permanent
    # generation: the per-run collections below then cost milliseconds, not 100 ms.
    gc.collect()
    gc.freeze()
    for _ in range(settings.warmup):
        for name in names:
            sides[name]()
    result = {name: Timings() for name in names}
    for round_ in range(count):
        order = names if round_ % 2 == 0 else names[::-1]
        for name in order:
            fn = sides[name]
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(inner):
                fn()
            result[name].cpu.append((time.process_time() - cpu) / inner)
            result[name].wall.append((time.perf_counter() - wall) / inner)
    return result


def median_interval(values: list[float], coverage: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of ``values``: the order statistics
    ``(k, n - k + 1)`` with the largest ``k`` whose binomial coverage is at least
    ``coverage`` (no assumption about the shape of the noise)."""
    ordered = sorted(values)
    n = len(ordered)
    k, below = 0, 0.0  # below: P(Binomial(n, 1/2) < k)
    while True:
        nxt = below + math.comb(n, k) / 2**n
        if 1 - 2 * nxt < coverage or k + 1 > n // 2:
            break
        below, k = nxt, k + 1
    if k == 0:
        return ordered[0], ordered[-1]
    return ordered[k - 1], ordered[n - k]


def round_ratios(ours: list[float], theirs: list[float]) -> Summary:
    """Per-round ratios ours/theirs (each pair ran back to back): robust to load drift."""
    return Summary.of([a / b for a, b in zip(ours, theirs, strict=True)])


# ------------------------------------------------------------------ results


@dataclass
class Row:
    """One line of the results table."""

    metric: str
    unit: str
    aurane: Summary | None
    baseline: Summary | None
    baseline_name: str
    ratio: float | None
    ratio_means: str
    target: str
    met: bool | None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["aurane"] = asdict(self.aurane) if self.aurane else None
        data["baseline"] = asdict(self.baseline) if self.baseline else None
        return data


class WorkMismatch(AssertionError):
    """The two sides of a comparison did not do the same work."""


@dataclass
class Work:
    """Facts both sides must agree on; ``same`` raises on a difference."""

    checks: list[dict[str, Any]] = field(default_factory=list)

    def same(self, what: str, ours: Any, theirs: Any, *, tolerance: float = 0.0) -> None:
        if tolerance and isinstance(ours, int | float) and isinstance(theirs, int | float):
            equal = abs(ours - theirs) <= tolerance * max(1.0, abs(ours), abs(theirs))
        else:
            equal = ours == theirs
        self.checks.append(
            {"what": what, "aurane": _plain(ours), "baseline": _plain(theirs), "equal": equal}
        )
        if not equal:
            raise WorkMismatch(f"{what}: aurane {ours!r} != baseline {theirs!r}")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, int | float | str | bool | list | dict) or value is None:
        return value
    return repr(value)


@dataclass
class Result:
    """What one benchmark returns to run_all.py."""

    name: str
    rows: list[Row] = field(default_factory=list)
    work: Work = field(default_factory=Work)
    settings: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rows": [row.to_json() for row in self.rows],
            "work": self.work.checks,
            "work_equal": bool(self.work.checks) and all(c["equal"] for c in self.work.checks),
            "settings": self.settings,
            "notes": self.notes,
            "details": self.details,
        }


def speedup_row(
    metric: str,
    ours: list[float],
    theirs: list[float],
    baseline_name: str,
    minimum: float,
    *,
    note: str = "",
    unit: str = "ms",
) -> Row:
    """Row for "Aurane is at least ``minimum`` times faster": ratio = baseline / Aurane."""
    a, b = Summary.of(ours), Summary.of(theirs)
    ratio = b.median / a.median
    factor = 1e3 if unit == "ms" else 1.0
    return Row(
        metric,
        unit,
        a.scaled(factor),
        b.scaled(factor),
        baseline_name,
        ratio,
        "baseline / aurane (median)",
        f">= {minimum:g}x",
        ratio >= minimum,
        note,
    )


# ------------------------------------------------------------------ programs


def bench_programs() -> list[Path]:
    return sorted(PROGRAMS.glob("*.aur"))


def zoo_programs() -> list[Path]:
    """``examples/zoo/*.aur`` when that folder exists; none with AURANE_BENCH_NO_ZOO=1 (the smoke
    test: full-size zoo models traced by fx under fake tensors take minutes and gigabytes)."""
    if os.environ.get("AURANE_BENCH_NO_ZOO") == "1":
        return []
    zoo = REPO / "examples" / "zoo"
    return sorted(zoo.glob("*.aur")) if zoo.is_dir() else []


def example_programs() -> list[Path]:
    """Every shipped program a benchmark may use: bench's own, examples/, examples/zoo/."""
    return [*bench_programs(), *sorted((REPO / "examples").glob("*.aur")), *zoo_programs()]


# a 1.1 B-parameter decoder at its 2,048-token context needs more than 24 GiB with autograd:
# benchmarks that run models in torch leave out larger ones, with a note
MAX_PARAMETERS = 200_000_000


def too_large(graph: Any) -> bool:
    """A model too large to run forward and backward in torch on the development machine."""
    return int(graph.parameters) > MAX_PARAMETERS


def usable_programs(result: Result, paths: list[Path] | None = None) -> list[Path]:
    """``paths`` (default: every shipped program) that compile; the others are noted and
    left out of both sides (a program being written in examples/zoo must not stop a run)."""
    from aurane.compile import compile_source

    usable = []
    for path in example_programs() if paths is None else paths:
        try:
            compile_source(path.read_text(), filename=path.name)
        except Exception as error:
            result.note(f"{path.name} left out: it does not compile ({type(error).__name__})")
            continue
        usable.append(path)
    return usable


def load_generated(code: str, name: str) -> dict[str, Any]:
    """Execute generated Python in a fresh namespace registered as a module (so classes
    pickle and dataclasses resolve)."""
    import types

    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - our own output
    return module.__dict__


# ------------------------------------------------------------------ machine


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info: dict[str, Any] = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
    }
    with contextlib.suppress(OSError):
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    try:
        import torch

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = None
    try:
        from aurane import __version__

        info["aurane"] = __version__
    except ImportError:
        info["aurane"] = None
    return info


# ------------------------------------------------------------------ Aurane entry points


def run_front_end(text: str, filename: str) -> Any:
    """``run_front_end`` wherever the front-end module lives (it may be renamed)."""
    import importlib

    for module in ("aurane.frontend", "aurane.frontend", "aurane.front_end", "aurane.pipeline"):
        try:
            fn = getattr(importlib.import_module(module), "run_front_end", None)
        except ImportError:
            continue
        if fn is not None:
            return fn(text, filename)
    raise ImportError("no aurane module exports run_front_end")


def flat_nodes(graph: Any) -> list[Any]:
    """IR nodes with block calls expanded (a repeat counts its body ``repeat`` times)."""
    found: list[Any] = []
    for node in graph.nodes:
        if node.subgraph is not None:
            found.extend(flat_nodes(node.subgraph) * max(1, node.repeat))
        else:
            found.append(node)
    return found
