"""Moving spans: a cached result reused at another place in the document."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from aurane import records
from aurane.diagnostics import Diagnostic, Label
from aurane.source import Span

_POSITION = re.compile(r"\b(\d+):(\d+)\b")

_FIELDS: dict[type, tuple[str, ...]] = {}


def init_fields(obj: Any) -> tuple[str, ...]:
    """The fields a record's constructor takes (cached per type); () for anything else."""
    kind = type(obj)
    names = _FIELDS.get(kind)
    if names is None:
        if records.is_record(obj) and not isinstance(obj, type):
            names = tuple(f.name for f in records.fields(obj) if f.init)
        else:
            names = ()
        _FIELDS[kind] = names
    return names


def shift(obj: Any, delta: int) -> Any:
    """``obj`` with every ``Span`` (and every ``line:column`` in messages) moved ``delta`` lines."""
    if delta == 0:
        return obj
    return remap(obj, lambda line: line + delta)


_ATOMIC = frozenset({str, int, float, bool, type(None), bytes})


def remap(obj: Any, move: Callable[[int], int]) -> Any:
    """``obj`` with every line number ``n`` (spans, ``line:column`` in messages) now ``move(n)``."""
    kind = type(obj)
    if kind in _ATOMIC:
        return obj
    if kind is Span:
        return Span(move(obj.line), obj.column, move(obj.end_line), obj.end_column)
    if kind is tuple:
        return tuple([remap(item, move) for item in obj])
    if kind is list:
        return [remap(item, move) for item in obj]
    if kind is dict:
        return {key: remap(value, move) for key, value in obj.items()}
    if kind is MappingProxyType:
        return MappingProxyType({key: remap(value, move) for key, value in obj.items()})
    if kind is Diagnostic:
        return records.replace(
            obj,
            message=_move_text(obj.message, move),
            span=remap(obj.span, move),
            labels=tuple(
                Label(remap(lab.span, move), _move_text(lab.message, move)) for lab in obj.labels
            ),
        )
    names = init_fields(obj)
    if not names:
        return obj  # not a record: kept as it is
    return kind(**{name: remap(getattr(obj, name), move) for name in names})


def _move_text(text: str, move: Callable[[int], int]) -> str:
    if ":" not in text:
        return text
    return _POSITION.sub(lambda m: f"{move(int(m.group(1)))}:{m.group(2)}", text)


def mover(old: list[tuple[int, int, int]]) -> Callable[[int], int]:
    """Lines of blocks that moved: ``old`` holds (old first line, line count, delta) sorted."""
    firsts = [first for first, _, _ in old]

    def move(line: int) -> int:
        index = bisect.bisect_right(firsts, line) - 1
        return line + old[max(index, 0)][2]

    return move
