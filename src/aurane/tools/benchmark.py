"""``aurane benchmark``: parse, cold compile and warm (cached) compile, timed separately.

Cold: a compile against an empty cache folder (a miss: the full pipeline plus the record
write). Warm: the same compile again, answered from the cache (a verified hit). One untimed
round first, so imports and first-call costs do not land in the figures.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from aurane.records import field, record

PHASES = ("parse", "cold_compile", "warm_compile")


@record
class BenchmarkResult:
    timings: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PHASES})
    warm_hits: int = 0

    def to_json(self) -> dict[str, list[float]]:
        return {phase: list(self.timings[phase]) for phase in PHASES}


def run_benchmark(source: str, filename: str, iterations: int) -> BenchmarkResult:
    """Raises ``CompilationError`` when ``source`` does not compile."""
    if iterations < 1:
        raise ValueError("iterations must be positive")
    result = BenchmarkResult()
    with tempfile.TemporaryDirectory(prefix="aurane-bench-") as scratch:
        _round(source, filename, Path(scratch) / "warmup", None)
        for index in range(iterations):
            _round(source, filename, Path(scratch) / f"cache{index}", result)
    return result


def _round(source: str, filename: str, cache_dir: Path, result: BenchmarkResult | None) -> None:
    from aurane.cache import CompileCache
    from aurane.compile import compile_detailed
    from aurane.syntax.parser import parse_program

    started = time.perf_counter()
    parse_program(source, filename)
    parsed = time.perf_counter()
    cache = CompileCache(cache_dir)
    compile_detailed(source, cache=cache, filename=filename)
    cold = time.perf_counter()
    warm = compile_detailed(source, cache=cache, filename=filename)
    done = time.perf_counter()
    if result is None:
        return
    result.timings["parse"].append(parsed - started)
    result.timings["cold_compile"].append(cold - parsed)
    result.timings["warm_compile"].append(done - cold)
    result.warm_hits += bool(warm.cached)


def summary(result: BenchmarkResult) -> str:
    lines = [f"{'phase':<14}{'mean':>11}{'median':>11}{'stdev':>11}{'min':>11}{'max':>11}  (ms)"]
    for phase in PHASES:
        values = [t * 1000 for t in result.timings[phase]]
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        row = [statistics.mean(values), statistics.median(values), stdev, min(values), max(values)]
        lines.append(f"{phase:<14}" + "".join(f"{v:>11.3f}" for v in row))
    runs = len(result.timings["warm_compile"])
    lines.append(f"warm compiles answered from the cache: {result.warm_hits} of {runs}")
    return "\n".join(lines)
