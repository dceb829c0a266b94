"""Deterministic offline datasets, usable as ``from`` sources in ``.aur`` programs
(``from aurane.data.SyntheticImages``).

The classes live in :mod:`aurane.runtime.data`, so ``aurane compile --standalone`` copies
them into a program like the rest of the runtime (a standalone program imports nothing of
Aurane); this module is the name programs and users write. It needs torch; ``import
aurane`` never imports it.
"""

from __future__ import annotations

from aurane.runtime.data import (
    SyntheticImages,
    SyntheticRegression,
    SyntheticSegmentation,
    SyntheticTokens,
    Table,
)

__all__ = [
    "SyntheticImages",
    "SyntheticRegression",
    "SyntheticSegmentation",
    "SyntheticTokens",
    "Table",
]
