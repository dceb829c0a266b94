"""Exhaustive parametrizations, split into what the default suite runs and the rest.

The default run (``addopts`` in pyproject.toml: ``-m "not slow"``) keeps a representative
subset of an exhaustive parametrization (every zoo model, every torchvision builder): each
distinct code path at least once, chosen and explained where the test parametrizes. The
other cases carry the ``slow`` marker and run with ``.venv/bin/python -m pytest -m slow``
(the README lists it beside the fuzz and bench commands): nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, TypeVar

import pytest

Case = TypeVar("Case")


def representative(
    cases: Iterable[Case],
    default: Collection[str],
    name: Callable[[Case], str] = str,
) -> list[Any]:
    """Every case as a ``pytest.param`` (a tuple as its several arguments) with id
    ``name(case)``; those whose id is not in
    ``default`` are marked slow. A name in ``default`` that no case has is an error, so a
    renamed model cannot silently leave the default run with fewer cases than it names."""
    listed: Sequence[Case] = list(cases)
    ids = [name(case) for case in listed]
    unknown = set(default) - set(ids)
    assert not unknown, f"representative cases that are not cases: {sorted(unknown)}"
    return [
        pytest.param(
            *(case if isinstance(case, tuple) else (case,)),
            id=case_id,
            marks=() if case_id in default else pytest.mark.slow,
        )
        for case, case_id in zip(listed, ids, strict=True)
    ]
