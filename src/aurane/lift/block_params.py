"""Block parameters: the numbers that differ between instances of one block, named after
the class's constructor argument of the same values when the constructor was observed
(``aurane.lift.spec``), else written as a multiple or quotient of another parameter
(``4 * width``, ``k // 2``), as the product of two constructor arguments
(``growth * bn_size``), as the block input's channels (``x.shape[1] // 2``: a block that
halves its input), else given a fresh name (``width``).
"""

from __future__ import annotations

import inspect
import keyword
import re
from typing import Any

from aurane.lift.program import RESERVED, ParamDef
from aurane.lift.signatures import _is_number

# -- parameters -----------------------------------------------------------------------------------

_ARG_NAMES = {"channels": "channels", "features": "features", "p": "p", "dim": "dim"}


def _defaults(cls: type) -> dict[str, Any]:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return {}
    return {
        name: p.default
        for name, p in signature.parameters.items()
        if p.default is not inspect.Parameter.empty
    }


_INPUTISH = re.compile(r"^in|(^|_)(in|inp|input)(_|$)")


def _rank_name(name: str) -> tuple[int, int]:
    """Constructor arguments that size the input rank last: Aurane infers input sizes."""
    return (1 if _INPUTISH.search(name) else 0, 0)


def _parameterise(
    numbers: list[dict[tuple[int, int, str, int], Any]],
    ctors: list[dict[str, Any]],
    cls: type,
    outputs: set[tuple[int, ...]] | frozenset[tuple[int, ...]] = frozenset(),
    layered: set[Any] | frozenset[Any] = frozenset(),
    in_channels: tuple[int, ...] = (),
) -> tuple[list[ParamDef], dict[tuple[int, int, str, int], str], list[dict[str, Any]]]:
    """Block parameters from the instances' ``numbers`` (slot -> value each) and constructor
    arguments ``ctors``; ``in_channels``: each instance's input channels (axis 1), if known."""
    slots = sorted(set().union(*[set(n) for n in numbers]))
    count = len(numbers)
    params: list[tuple[str, tuple[Any, ...]]] = []  # name, values per instance
    exprs: dict[tuple[int, int, str, int], str] = {}
    ctor_names = [
        name
        for name in (ctors[0] if ctors else {})
        if all(name in c and _is_number(c[name]) for c in ctors)
    ]
    ctor_names.sort(key=_rank_name)
    used: set[str] = set()
    from_input: dict[tuple[Any, ...], str] = {}  # values written from the input's channels

    def add(name: str, values: tuple[Any, ...]) -> None:
        if name not in used:
            used.add(name)
            params.append((name, values))

    for slot in slots:
        vector = tuple(n.get(slot) for n in numbers)
        if any(v is None for v in vector):
            continue
        varying = len(set(vector)) > 1
        if not varying and slot not in layered:
            continue  # a constant of a shape operation (a shuffle's 2 groups) stays a number
        text: str | None = None
        if varying:  # the same numbers as a parameter already found: that parameter
            text = next((name for name, values in params if values == vector), None)
        # a constructor argument of these values, then a multiple of a parameter found,
        # then one sizing the input (Aurane infers input sizes: in_channels is a last resort)
        sizing_output = [name for name in ctor_names if _rank_name(name)[0] == 0]
        sizing_input = [name for name in ctor_names if _rank_name(name)[0] == 1]
        match = _from_constructor(vector, ctors, sizing_output, varying, exact=True)
        if text is None and match is not None:
            add(match[0], tuple(c[match[0]] for c in ctors))
            text = match[0]
        if text is None and varying:
            text = _existing(vector, params)
        match = _from_constructor(vector, ctors, sizing_input, varying, exact=True)
        if text is None and match is not None:
            add(match[0], tuple(c[match[0]] for c in ctors))
            text = match[0]
        match = _from_constructor(vector, ctors, ctor_names, varying, exact=False)
        if text is None and match is not None:
            add(match[0], tuple(c[match[0]] for c in ctors))
            text = f"{match[1]} * {match[0]}"
        # a layer's width only: a product elsewhere (a reshape's 4 = 2 * 2) is a coincidence
        widths = slot[2] in ("channels", "features") and slot in layered
        product = _product(vector, ctors, sizing_output) if text is None and widths else None
        if product is not None:
            for name in product:
                add(name, tuple(c[name] for c in ctors))
            text = " * ".join(product)
        if text is None and varying:  # the same numbers as an input size found: that size
            text = from_input.get(vector)
        if text is None and varying and slot[2] == "channels":
            text = _of_input_channels(vector, in_channels)
            if text is not None:
                from_input[vector] = text
        if text is None and varying:
            sizes_output = slot[2] in ("channels", "features") and vector in outputs
            # never a constructor argument's name: that may name other values below
            taken = used | set(ctors[0] if ctors else ())
            name = _fresh_param("out" if sizes_output else slot[2], taken)
            add(name, vector)
            text = name
        if text is not None:
            exprs[slot] = text
    defaults = _defaults(cls)
    order = list(ctors[0]) if ctors else []
    params.sort(key=lambda item: (0, order.index(item[0])) if item[0] in order else (1, 0))
    definitions: list[ParamDef] = []
    for name, values in params:
        default = defaults.get(name, inspect.Parameter.empty)
        usable = _is_number(default) and default in values
        definitions.append(ParamDef(name, default if usable else None, usable))
    definitions.sort(key=lambda p: p.has_default)
    calls = [{name: values[i] for name, values in params} for i in range(count)]
    return definitions, exprs, calls


MAX_DIVISOR = 8  # ``k // 2`` reads as intended; ``hidden // 24`` is mostly a coincidence


def _existing(vector: tuple[Any, ...], params: list[tuple[str, tuple[Any, ...]]]) -> str | None:
    """``vector`` as a multiple (``4 * width``) or a quotient (``k // 2``) of a parameter's."""
    for name, values in params:
        pairs = list(zip(vector, values, strict=True))
        if not all(isinstance(v, int) and isinstance(w, int) and v > 0 and w > 0 for v, w in pairs):
            continue
        if all(v % w == 0 for v, w in pairs):
            factors = {v // w for v, w in pairs}
            if len(factors) == 1 and (factor := factors.pop()) > 1:
                return f"{factor} * {name}"
        for divisor in sorted({w // v for v, w in pairs if w >= v}):
            if 1 < divisor <= MAX_DIVISOR and all(w // divisor == v for v, w in pairs):
                return f"{name} // {divisor}"
    return None


def _product(
    vector: tuple[Any, ...], ctors: list[dict[str, Any]], names: list[str]
) -> tuple[str, str] | None:
    """The one pair of constructor arguments (neither 0 nor 1 anywhere) whose product these
    values are, in the constructor's order: DenseNet's ``growth * bn_size``."""
    if not ctors or not all(isinstance(v, int) and not isinstance(v, bool) for v in vector):
        return None
    usable = [n for n in names if all(isinstance(c[n], int) and c[n] not in (0, 1) for c in ctors)]
    found = [
        (a, b)
        for i, a in enumerate(usable)
        for b in usable[i + 1 :]
        if all(c[a] * c[b] == v for c, v in zip(ctors, vector, strict=True))
    ]
    return found[0] if len(found) == 1 else None


def _of_input_channels(vector: tuple[Any, ...], in_channels: tuple[int, ...]) -> str | None:
    """Channel counts that follow the block's input channels (axis 1) in every instance:
    ``x.shape[1]`` or a small quotient of it (DenseNet's transition halves)."""
    if len(in_channels) != len(vector) or not all(isinstance(v, int) and v > 0 for v in vector):
        return None
    pairs = list(zip(vector, in_channels, strict=True))
    if all(v == c for v, c in pairs):
        return "x.shape[1]"
    for divisor in range(2, MAX_DIVISOR + 1):
        if all(c % divisor == 0 and c // divisor == v for v, c in pairs):
            return f"x.shape[1] // {divisor}"
    return None  # (a multiple is an expansion: a parameter of its own reads better)


def _from_constructor(
    vector: tuple[Any, ...],
    ctors: list[dict[str, Any]],
    names: list[str],
    varying: bool,
    *,
    exact: bool,
) -> tuple[str, int] | None:
    """A constructor argument with these values (``exact``), or whose values these are a
    multiple of: (its name, the factor)."""
    if not names:
        return None
    if not varying:  # the same number everywhere: named only by an unambiguous argument
        value = vector[0]
        if not exact or value in (0, 1) or not isinstance(value, int):
            return None
        matches = [
            n
            for n in names
            if _rank_name(n)[0] == 0
            and all(c[n] == value and type(c[n]) is type(value) for c in ctors)
        ]
        return (matches[0], 1) if len(matches) == 1 else None
    if exact:
        for name in names:
            if all(
                c[name] == v and type(c[name]) is type(v)
                for c, v in zip(ctors, vector, strict=True)
            ):
                return name, 1
        return None
    for name in names:
        values = [c[name] for c in ctors]
        if all(
            isinstance(v, int) and isinstance(w, int) and w > 0
            for v, w in zip(vector, values, strict=True)
        ):
            factors = {v // w for v, w in zip(vector, values, strict=True) if v % w == 0}
            if len(factors) == 1 and all(v % w == 0 for v, w in zip(vector, values, strict=True)):
                factor = factors.pop()
                if factor > 1:
                    return name, factor
    return None


def _fresh_param(arg: str, used: set[str]) -> str:
    """A name after the argument ``arg`` that none of ``used`` has."""
    base = {
        "features": "width",
        "channels": "width",
        "output_size": "size",
        "shape": "size",
        "sizes": "size",
        "constant": "scale",
    }.get(arg, arg)
    base = re.sub(r"[^0-9A-Za-z_]", "_", base).strip("_") or "n"
    if keyword.iskeyword(base) or base in RESERVED:
        base += "_"
    candidate, number = base, 2
    while candidate in used:
        candidate = f"{base}{number}"
        number += 1
    return candidate
