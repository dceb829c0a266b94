"""'Did you mean' hints from catalogs."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    import difflib  # only on an error path: kept off the start-up of `aurane check`

    matches = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{matches[0]}'?" if matches else None
