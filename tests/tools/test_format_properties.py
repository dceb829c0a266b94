"""K-FMT on generated programs: safe (same AST and IR), stable under one extra pass, and
adding no lint warnings. CI runs about 1,000 programs; a campaign sets AURANE_FUZZ_EXAMPLES
(e.g. 5000) for the per-test count.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, given, settings

from aurane.tools.format import format_source
from aurane.tools.lint import lint_source
from tests.tools.programs import programs

_CAMPAIGN = os.environ.get("AURANE_FUZZ_EXAMPLES")
_SETTINGS = settings(
    max_examples=int(_CAMPAIGN) if _CAMPAIGN else 1000,
    deadline=timedelta(seconds=5),
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
