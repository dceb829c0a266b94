"""``aurane.tools.roll_check`` at CI size: the fuzz programs whose rolled block classes
were right only at the program's calls (seed 68000233's ``causal=True`` of ``causal=p1``,
seed 36000088's ``nn.RMSNorm((8, 8))`` of ``axes=2 * p0``) check clean, and the command
runs over a few programs."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from aurane.tools.fuzz import generate  # noqa: E402
from aurane.tools.roll_check import check_source, main  # noqa: E402


@pytest.mark.parametrize("seed", [68000233, 36000088])
def test_known_fuzz_programs_check_clean(seed: int) -> None:
    assert check_source(generate(seed).text) == []


def test_the_command_checks_a_few_programs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--programs", "3", "--seed", "68"]) == 0
    assert ", 0 problems" in capsys.readouterr().out


def test_a_class_joined_over_branches_is_checked() -> None:
    """A block whose calls took different ``if`` branches is one class (``branches.py``),
    not a rolled one: it is compared at its calls and at other arguments with the build
    of one class per call (``per_call=True``), where it was not checked at all."""
    from collections import Counter

    source = (
        "model Sel(flag, w):\n    def forward(x):\n        if flag:\n"
        "            x -> dense(w).relu\n        else:\n            x -> layer_norm()\n"
        "        return x\n\nmodel Net:\n    input_shape = (3,)\n    def forward(x):\n"
        "        x -> Sel(true, 4) -> Sel(false, 2)\n        return x\n"
    )
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["calls"] == 2 and counts["other arguments"] > 0
