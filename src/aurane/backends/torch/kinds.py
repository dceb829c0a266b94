"""A boolean is not a number (issue 24 item 3): the language's ``true == 1`` is false,
Python's ``True == 1`` holds (``semantics.constants`` owns the language's equality).

A generated class compares a parameter as the language does wherever a boolean and a
number may both reach it; this module alone decides where Python's comparison differs
(``differs``, ``kinds_mixed``, ``flag_alike``, ``same_value``) and writes the tests that
tell the kinds apart (``equal_text``, ``kind_subject``), so the block roller, the network
roller, the classes written out for their calls and the refusals all read alike.

The kind is ``isinstance(p, bool)``, not the exact type: ``1.0`` and NumPy's 1 are the
language's 1. NumPy's ``np.True_`` is no ``bool`` and so counts as a number here; the
language has no NumPy values, and telling it apart would make generated code import NumPy
(or test a type's name), which hand-written PyTorch does not do.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any, TypeGuard

from aurane.semantics.symbolic import plain


def is_flag(value: Any) -> TypeGuard[bool]:
    """Whether ``value`` is a boolean (the language's ``true``/``false``)."""
    return isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a number and not a boolean (Python's ``bool`` is an ``int``)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def differs(value: Any) -> bool:
    """Whether Python's ``p == value`` may differ from the language's for some ``p``: a
    boolean ``value`` (``1 == True``), or a number a boolean equals (0 or 1)."""
    return is_flag(value) or (is_number(value) and value in (0, 1))


def same_value(a: Any, b: Any) -> bool:
    """Whether two arguments are one value as the language compares them: a boolean is
    never a number, items of lists and tuples alike."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return (
            len(a) == len(b)
            and all(same_value(x, y) for x, y in zip(a, b, strict=True))
            and type(a) is type(b)
        )
    return is_flag(a) == is_flag(b) and a == b


def kinds_mixed(values: Sequence[Any]) -> bool:
    """Whether the calls' ``values`` of one parameter are booleans and numbers, each a
    plain one: the language's ``==`` tells ``true`` from 1, Python's does not (``True in
    (False, 1)``), so a guard compares them with their kinds (``kind_subject``)."""
    numbers = [v for v in values if is_number(v)]
    flags = [v for v in values if is_flag(v)]
    return bool(numbers) and bool(flags) and len(numbers) + len(flags) == len(values)


def flag_alike(values: Sequence[Any]) -> bool:
    """Whether the calls' ``values`` of one parameter are plain numbers, one of them 0 or
    1: Python's ``True == 1`` lets a boolean through a guard written for them, where the
    language's ``==`` tells ``true`` from 1 (an ``if k == 1:`` takes its other branch)."""
    numbers = [v for v in values if is_number(v)]
    return len(numbers) == len(values) > 0 and any(differs(v) for v in numbers)


def kind_guarded(values: Sequence[Any], tested: bool) -> bool:
    """Whether a guard refusing values of a parameter other than its calls' ``values``
    compares kinds too: the calls give booleans and numbers, or ``tested`` (an ``if``
    test reads it) and they give 0 or 1 alone, which ``k != 1`` would let ``True``
    through."""
    return kinds_mixed(values) or (tested and flag_alike(values))


def kind_subject(param: str) -> str:
    """A parameter as a guard of mixed values compares it, its kind beside its value:
    ``(p, isinstance(p, bool))``."""
    return f"({param}, isinstance({param}, bool))"


def kind_text(value: Any, text: str) -> str:
    """A value as ``kind_subject`` compares with it: ``(False, True)`` for a boolean,
    ``(1, False)`` for a number (``text``: the value as written)."""
    return f"({text}, {is_flag(value)})"


def refusing_text(subject: str, values: Sequence[Any], texts: Sequence[str]) -> str:
    """The test refusing any value of ``subject`` but ``values`` (``texts`` as written),
    where a boolean and a number may both reach it, as one writes it: ``p != 1 or p is
    True`` (the one boolean ``p != 1`` lets through refused), ``p != 3`` (no boolean is
    3), ``p is not True``, ``p not in (0, 5) or p is False``, ``not isinstance(p, bool)``
    for both booleans; the kind beside the value (``kind_subject``) where the values are
    booleans and numbers both, where that reads shorter than a clause per value."""
    numbers = [(v, t) for v, t in zip(values, texts, strict=True) if not is_flag(v)]
    flags = [v for v in values if is_flag(v)]
    if not flags:
        shown = [t for _, t in numbers]
        if len(shown) == 1:
            test = f"{subject} != {shown[0]}"
        else:
            test = f"{subject} not in ({', '.join(shown)})"
        if not any(differs(v) for v, _ in numbers):
            return test
        return _excluding(subject, test, [v for v, _ in numbers], False)[0]
    if not numbers:
        if len(set(flags)) == 2:
            return f"not isinstance({subject}, bool)"
        return identity_text(subject, flags[0], False)
    typed = [kind_text(v, t) for v, t in zip(values, texts, strict=True)]
    return f"{kind_subject(subject)} not in ({', '.join(typed)})"


def identity_text(subject: str, flag: bool, equal: bool) -> str:
    """``subject == flag`` as the language means it, where a number may reach
    ``subject``: ``p is True`` (or ``p is not True``), which tells 1 from ``True``."""
    return f"{subject} {'is' if equal else 'is not'} {flag!r}"


def equal_text(subject: str, number: str, value: Any, equal: bool) -> tuple[str, str]:
    """``subject == number`` (``equal``, else ``!=``) as the language means it, where a
    boolean may reach ``subject`` and ``value`` (``number``'s value) is 0 or 1, which a
    boolean equals (``differs``): the comparison, then the one boolean it lets through
    excluded (``p == 1 and p is not True``, ``p != 0 or p is False``), shorter than a
    kind test before it and read as the rule it keeps; with the operator it joins with
    (``and``, ``or``: for parentheses)."""
    return _excluding(subject, f"{subject} {'==' if equal else '!='} {number}", [value], equal)


def member_text(subject: str, numbers: Sequence[str], values: Sequence[Any]) -> tuple[str, str]:
    """``subject == a or subject == b ...`` as the language means it, where a boolean may
    reach ``subject`` and one of the ``values`` (``numbers`` as written) is 0 or 1: one
    membership test, the booleans it lets through excluded (``p in (0, 5) and p is not
    False``), where each equality apart would need its own; its negation reads as one
    too (``p not in (0, 5) or p is False``, ``pyexpr.negation``)."""
    return _excluding(subject, f"{subject} in ({', '.join(numbers)})", values, True)


def _excluding(subject: str, test: str, values: Sequence[Any], equal: bool) -> tuple[str, str]:
    """``test`` (of ``subject`` against numbers ``values``), true for ``equal``, with the
    booleans equal to one of them excluded: one by identity, both by their kind."""
    joined = "and" if equal else "or"
    flags = {bool(v) for v in values if differs(v)}
    if len(flags) == 1:
        excluded = identity_text(subject, flags.pop(), not equal)
    else:
        excluded = f"{'not ' if equal else ''}isinstance({subject}, bool)"
    return f"{test} {joined} {excluded}", joined


def kinds_equal_text(subject: str, other: str, equal: bool) -> tuple[str, str]:
    """``subject == other`` for two parameters a boolean and a number may each reach:
    equal kinds, then equal values; with the operator it joins with."""
    kinds = f"isinstance({subject}, bool) {{}} isinstance({other}, bool)"
    if equal:
        return f"{kinds.format('==')} and {subject} == {other}", "and"
    return f"{kinds.format('!=')} or {subject} != {other}", "or"  # no not (...)


def refused_to_numbers(
    params: Sequence[str], given: Sequence[Mapping[str, Any]], typed: Container[str]
) -> frozenset[str]:
    """The ``params`` a refusal of any values other than the calls' ``given`` leaves
    only numbers to: those the calls give numbers alone, compared with their kinds
    (``typed``: ``(p, isinstance(p, bool)) != (1, False)``), or none of them 0 or 1
    (``p != 3``, which refuses ``True`` too)."""
    return frozenset(
        p
        for p in params
        if all(is_number(plain(call.get(p))) for call in given)
        and (p in typed or not any(differs(plain(call.get(p))) for call in given))
    )


def without_kind_tests(lines: Sequence[str], numbers: Iterable[str]) -> list[str]:
    """``lines`` of a class whose refusal leaves only numbers to the parameters
    ``numbers`` (``refused_to_numbers``): their tests exclude no boolean, which can no
    longer reach them (``if mode == 1:``, not ``if mode == 1 and mode is not True:``).
    Each exclusion ``equal_text`` and ``member_text`` write is always true (after an
    ``and``) or always false (after an ``or``) there, so dropping it keeps the test."""
    out = list(lines)
    # a refusal keeps its exclusion: it is what leaves the parameter numbers alone
    refusals = _refusal_tests(out)
    for param in numbers:
        for subject in (param, f"self.{param}"):
            name = rf"(?<![\w.]){re.escape(subject)}"
            ends = r"(?=$|\)|:| or |  #)"  # the clause is the last operand of its or
            kept = rf"(?:{name} is not (?:True|False)|not isinstance\({name}, bool\))"
            dropped = rf"(?:{name} is (?:True|False)|isinstance\({name}, bool\))"
            pattern = re.compile(rf" and {kept}(?=$|\)|:| and | or |  #)| or {dropped}{ends}")
            # and the parentheses a dropped exclusion left around one comparison
            cmp = rf"{name} (?:==|!=) (?:(?! and | or )[^(),])+|{name} (?:not in|in) \([^()]*\)"
            alone = re.compile(rf"(?<![\w)\]])\(({cmp})\)")
            out = [
                line if at in refusals else _dropped(line, pattern, alone)
                for at, line in enumerate(out)
            ]
    return out


def _refusal_tests(lines: Sequence[str]) -> set[int]:
    """The indices of the lines of each refusal's test (``if p != 1 or p is True:``, the
    lines of a wrapped one too), the ``if`` whose body raises ``ValueError``."""
    found: set[int] = set()
    for at, line in enumerate(lines):
        if not line.lstrip().startswith("raise ValueError("):
            continue
        depth = len(line) - len(line.lstrip())
        test: list[int] = []
        for back in range(at - 1, -1, -1):
            head = lines[back]
            indent = len(head) - len(head.lstrip())
            test.append(back)
            if indent < depth and head.lstrip().startswith("if "):
                found.update(test)
                break
            if indent < depth and not head.lstrip().startswith(")"):
                break  # no if of its own (an else's raise): no refusal's test
    return found


def _dropped(line: str, exclusion: re.Pattern[str], alone: re.Pattern[str]) -> str:
    """``line`` without its ``exclusion`` clauses, and where it held one, without the
    parentheses ``alone`` finds around a comparison left by itself."""
    kept = exclusion.sub("", line)
    return alone.sub(r"\1", kept) if kept != line else line
