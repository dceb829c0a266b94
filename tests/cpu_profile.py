"""A pytest plugin that measures the suite's CPU time per test, for deciding what to cut.

Wall times lie on a loaded machine; CPU seconds do not. Each test's line holds the CPU
seconds of the process that ran it and of the children it waited for (``aurane run``, the
generated programs, torchrun's ranks), one JSON line per test in one file per xdist worker:

    AURANE_CPU_PROFILE=/tmp/cpu .venv/bin/python -m pytest -p tests.cpu_profile -n 2
    python -m tests.cpu_profile /tmp/cpu        # the files, costliest first

Not loaded by default; the suite never reads it.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import IO

import pytest

_out: IO[str] | None = None


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    global _out
    if _out is None:
        folder = Path(os.environ.get("AURANE_CPU_PROFILE", "cpu-profile"))
        folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = (folder / f"{worker}.jsonl").open("a", encoding="utf-8")
    own, children = _cpu()
    start = time.monotonic()
    yield
    own_after, children_after = _cpu()
    row = {
        "id": item.nodeid,
        "self": own_after - own,
        "children": children_after - children,
        "wall": time.monotonic() - start,
    }
    _out.write(json.dumps(row) + "\n")
    _out.flush()


def report(folder: Path, top: int = 40) -> str:
    """The test files by CPU seconds (their own, their children's), costliest first."""
    total: Counter[str] = Counter()
    children: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            file = row["id"].split("::")[0]
            total[file] += row["self"] + row["children"]
            children[file] += row["children"]
            tests[file] += 1
    lines = [
        f"{sum(tests.values())} tests, {sum(total.values()):.0f} CPU-s"
        f" ({sum(children.values()):.0f} in children)"
    ]
    for file, seconds in total.most_common(top):
        lines.append(f"{seconds:8.1f} {children[file]:8.1f} {tests[file]:5d}  {file}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1] if len(sys.argv) > 1 else "cpu-profile")))
