"""'Did you mean' hints from catalogs."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate; an abbreviation (``acc``) means the one word it begins, not
    a word a letter away (``auc``)."""
    import difflib  # only on an error path: kept off the start-up of `aurane check`

    names = sorted(set(candidates))
    begun = [c for c in names if len(name) >= 3 and c.startswith(name) and c != name]
    if len(begun) == 1:
        return f"did you mean '{begun[0]}'?"
    matches = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"did you mean '{matches[0]}'?" if matches else None
