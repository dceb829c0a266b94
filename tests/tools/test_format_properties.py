"""K-FMT on generated programs: safe (same AST and IR), stable under one extra pass, and
adding no lint warnings. CI runs 200 programs; a campaign sets AURANE_FUZZ_EXAMPLES
(e.g. 5000) for the per-test count.
"""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aurane.tools.format import format_source
from aurane.tools.lint import lint_source
from tests.conftest import corpus_paths
from tests.tools.programs import programs

_CAMPAIGN = os.environ.get("AURANE_FUZZ_EXAMPLES")
_SETTINGS = settings(
    max_examples=int(_CAMPAIGN) if _CAMPAIGN else 200,
    deadline=None,  # no wall-clock limit (a busy machine is not a failure)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=_CAMPAIGN is None,
)


@_SETTINGS
@given(programs())
def test_format_is_safe_stable_and_adds_no_warnings(text: str) -> None:
    result = format_source(text, "gen.aur")
    assert result.error is None, result.error  # the safety check (AST + IR) passed
    assert result.output is not None, result.diagnostics
    out = result.output
    assert format_source(out, "gen.aur").output == out  # exactly one extra pass
    before = {d.code for d in lint_source(text, "gen.aur")}
    after = {d.code for d in lint_source(out, "gen.aur")}
    assert after <= before, after - before
    assert not after & {"W001", "W002"}


# ---------------------------------------------------------------- mutated corpus programs

_PIECES = re.compile(r"\w+|\s+|.", re.DOTALL)
_INSERTS = ["\n", "  ", "# c\n", "\n    # own\n", "(", ")", ",", "\r\n", "\t", "->", " 1 ", "'s'"]
_SEEDS = [p.read_text(encoding="utf-8") for p in corpus_paths()] or [
    "model Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(4)\n"
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    pieces = _PIECES.findall(draw(st.sampled_from(_SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(pieces) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "insert"]))
        if action == "delete":
            del pieces[at]
        elif action == "duplicate":
            pieces.insert(at, pieces[at])
        else:
            pieces.insert(at, draw(st.sampled_from(_INSERTS)))
    return "".join(pieces)


@settings(_SETTINGS, max_examples=max(1, _SETTINGS.max_examples // 4))
@given(mutated())
def test_mutated_programs_are_formatted_safely_or_left_alone(text: str) -> None:
    result = format_source(text, "mut.aur")
    assert result.error is None, result.error
    if result.output is None:  # does not parse: nothing to format, nothing written
        assert result.diagnostics
        return
    assert format_source(result.output, "mut.aur").output == result.output
