"""``tests/cpu_profile.py``: a pytest run with the plugin writes one line per test with the
CPU seconds of the test and of the children it waited for, and the report ranks files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, env
from tests.cpu_profile import report

SPIN = """\
import subprocess
import sys


def test_spins_in_a_child():
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)


def test_does_nothing():
    pass
"""


def test_each_test_gets_its_own_and_its_childrens_cpu(tmp_path: Path) -> None:
    (tmp_path / "test_spin.py").write_text(SPIN)
    out = tmp_path / "profile"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.cpu_profile", "-p", "no:cacheprovider"]
        + ["-q", "-o", "addopts=", "-n", "0", str(tmp_path / "test_spin.py")],
        cwd=REPO,
        env=env(
            AURANE_CPU_PROFILE=str(out), PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "src")])
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # One file, named after the xdist worker the child inherits (``main`` outside xdist).
    (written,) = out.glob("*.jsonl")
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    by_name = {row["id"].split("::")[1]: row for row in rows}
    assert set(by_name) == {"test_spins_in_a_child", "test_does_nothing"}
    assert by_name["test_spins_in_a_child"]["children"] > 0.05  # three million squares
    assert by_name["test_does_nothing"]["children"] == 0
    text = report(out)
    assert text.startswith("2 tests, "), text
    assert text.splitlines()[1].endswith("test_spin.py"), text
