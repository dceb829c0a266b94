"""What the width after an inner block follows, where its instance shows only a number.

An inner block's instance graph keeps its output width symbolic where the block computes
it from its input or arguments (``dense(w)``: ``w``); a width it shows as a plain number
may still be a constant (``dense(6)``), or one the symbols lost track of. The roller's
walk (``rolled._Walk``) then has several texts worth that number at every call (the
input's ``channels``, an argument ``w0``, the number): a class built at other arguments
is right only with the one the block follows. ``InnerWidths`` lowers the block again at
another input width and at each argument changed alone (``ir.lower.lower_block_at``) and
keeps the kinds of text every probe agrees with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aurane.ir.graph import Graph
from aurane.semantics.symbolic import plain
from aurane.semantics.values import OpValue

# the block lowered at other arguments (None: left as the call's), at another input width
# on one sample axis (None: the call's); None where that lowering fails
LowerAt = Callable[[Graph, Mapping[str, Any], "tuple[int, int] | None"], "Graph | None"]

INPUT = ""  # the kind of text that is the input's width (no parameter is named "")
CONSTANT = "#"  # the kind of text that is a number


@dataclass(frozen=True)
class Follows:
    """The kinds of width text the probes agree with: ``INPUT``, ``CONSTANT`` or a
    parameter's name; ``unknown``: the parameters (and ``INPUT``) no probe could change
    (a string, list or operation; no other value lowers), so a kind only such a probe
    would rule out may be kept, and the width may follow them; ``tied`` where the kinds
    left (no number among them) were changed together and the block lowered, but never
    one alone: the block is built only where they are equal, so any of them is right."""

    kinds: frozenset[str]
    unknown: frozenset[str]
    tied: bool = False


class InnerWidths:
    """The probes of inner blocks' output widths, each block lowered once per change
    (memoised by block, arguments and input), so a block called alike at many sites
    costs its probes once."""

    def __init__(self, lower_at: LowerAt, params_of: Callable[[str], list[str] | None]) -> None:
        self.lower_at = lower_at
        self.params_of = params_of  # a block's parameters, in order (None: not a block)
        self._lowered: dict[tuple[Any, ...], int | None] = {}
        self._follows: dict[tuple[Any, ...], Follows] = {}

    def follows(self, sub: Graph, sample_axis: int, axis: int) -> Follows:
        """What the width on ``axis`` of ``sub``'s output follows, its input's width
        being the size on ``sample_axis`` of its sample."""
        values = _values(sub)
        params = self.params_of(sub.name)
        sample = tuple(plain(sub.input_value.sample_shape or ()))
        if values is None or params is None or len(values) != len(params) or not sample:
            return Follows(frozenset(), frozenset(params or ()) | {INPUT})
        key = (sub.name, _frozen(values), sample, sample_axis, axis)
        found = self._follows.get(key)
        if found is None:
            found = self._follows[key] = self._probe(sub, values, sample, sample_axis, axis)
        return found

    def follows_input(self, sub: Graph, sample_axis: int, axis: int) -> bool:
        """Whether the width on ``axis`` of ``sub``'s output is its input's, as far as
        the probes tell: it moves with the input changed alone, or (where that cannot be
        lowered) with the input changed together with the arguments worth as much (a
        residual block's ``dim``). Cheaper than ``follows``: one lowering mostly, for a
        block whose width its instance gives as an expression equal to the input's."""
        values = _values(sub)
        sample = tuple(plain(sub.input_value.sample_shape or ()))
        width = _width(sub, axis)
        if values is None or not sample or width is None or width != sample[sample_axis]:
            return False
        for size in _others(width):
            found = self._lowered_width(sub, values, (sample_axis, size), axis, sample)
            if found is not None:
                return found == size
        tied = {p: v for p, v in values.items() if _number(v) and plain(v) == width}
        for size in _others(width):
            changed = {**values, **dict.fromkeys(tied, size)}
            found = self._lowered_width(sub, changed, (sample_axis, size), axis, sample)
            if found is not None:
                return found == size
        return False

    def _probe(
        self,
        sub: Graph,
        values: dict[str, Any],
        sample: tuple[int, ...],
        sample_axis: int,
        axis: int,
    ) -> Follows:
        width = _width(sub, axis)
        given = sample[sample_axis]
        if width is None:
            return Follows(frozenset(), frozenset(values) | {INPUT})
        # each kind's width at each probe: the input's, a parameter's, the number's
        kinds = {CONSTANT: width}
        if width == given:
            kinds[INPUT] = width
        kinds.update({p: width for p, v in values.items() if _number(v) and plain(v) == width})
        unknown: set[str] = set()  # parameters no probe changed
        for size in _others(given):  # the input's width changed alone
            found = self._lowered_width(sub, values, (sample_axis, size), axis, sample)
            if found is not None:
                kinds = _agreeing(kinds, found, {INPUT: size})
                break
        else:
            unknown.add(INPUT)
        for param, value in values.items():
            for other in _changed(value):  # the parameter changed alone
                found = self._lowered_width(sub, {**values, param: other}, None, axis, sample)
                if found is not None:
                    kinds = _agreeing(kinds, found, {param: other})
                    break
            else:  # a string, list or operation, or no other value lowers
                unknown.add(param)
        tied = False
        moving = {k: v for k, v in kinds.items() if k != CONSTANT}
        if unknown & kinds.keys() and len(kinds) > 1 and moving:
            # the probes changing one alone failed (a residual block needs its ``dim`` to
            # be its input's): change the kinds left together
            for size in _others(width):
                changed = {p: size for p in moving if p != INPUT}
                shape = (sample_axis, size) if INPUT in moving else None
                found = self._lowered_width(sub, {**values, **changed}, shape, axis, sample)
                if found is not None:
                    kinds = _agreeing(kinds, found, dict.fromkeys(moving, size))
                    tied = found == size
                    break
        return Follows(frozenset(kinds), frozenset(unknown), tied)

    def _lowered_width(
        self,
        sub: Graph,
        values: dict[str, Any],
        width: tuple[int, int] | None,
        axis: int,
        sample: tuple[int, ...],
    ) -> int | None:
        key = (sub.name, _frozen(values), sample, width, axis)
        if key not in self._lowered:
            lowered = self.lower_at(sub, values, width)
            self._lowered[key] = _width(lowered, axis) if lowered is not None else None
        return self._lowered[key]


def _agreeing(kinds: dict[str, int], found: int, changed: Mapping[str, int]) -> dict[str, int]:
    """The kinds whose width at the probe (``changed``: the one it changed, others as
    before) is the width the probe found."""
    return {k: v for k, v in kinds.items() if changed.get(k, v) == found}


def _values(sub: Graph) -> dict[str, Any] | None:
    """The instance's arguments as ``lower_block_at`` takes them: numbers plain, an
    operation or block given as its value (as the phantoms' lowering passes them)."""
    values = {k: plain(v) for k, v in {**sub.block_defaults, **sub.block_args}.items()}
    values.update({p: OpValue(op.op, False) for p, op in sub.block_ops.items()})
    values.update({p: OpValue(op.op, True) for p, op in sub.block_models.items()})
    return values


def _number(value: Any) -> bool:
    return isinstance(plain(value), int) and not isinstance(value, bool)


def _others(size: int) -> tuple[int, ...]:
    """Other input widths to try, the first that lowers read (a block may need an even
    width, or a multiple of its groups)."""
    return (size + 1, 2 * size) if size > 0 else (1, 2)


def _changed(value: Any) -> tuple[Any, ...]:
    """Other values of a parameter to try (none: a string, list or operation)."""
    if isinstance(value, bool):
        return (not value,)
    if isinstance(plain(value), float):
        return (value / 2, value + 0.25)
    if not _number(value):
        return ()
    value = int(plain(value))
    return (value + 1, 2 * value) if value > 0 else (value + 1, value + 2)


def _width(graph: Graph, axis: int) -> int | None:
    shape = graph.output_value.shape
    if shape is None or len(shape) < 2:
        return None
    found = plain(shape[axis])
    return found if isinstance(found, int) else None


def _frozen(values: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A hashable key of the arguments (lists and tables as their text)."""
    return tuple(sorted((k, repr(v)) for k, v in values.items()))
