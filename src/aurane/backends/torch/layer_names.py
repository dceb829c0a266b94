"""Whether a block's layer names stay apart at every argument (hunt109 F7).

The source checks its layer names at each call (S044, S124), so a template that repeats
(``as d{i % 2}``, ``d{i}`` beside ``d{i + 1}``, ``d{c}`` over a parameter's rows) is
refused only at the counts and items that make it repeat. A class rolled for all
arguments would instead overwrite the earlier module without a word (``setattr(self,
"d0", ...)`` twice: one module, applied twice). ``repeating_name`` says which name of a
forward body may repeat at arguments no call gives; the rollers then keep one class per
call with that note. A name is known to stay apart when each loop around it is counted by
one of its holes (``layer{i + 1}`` in ``for i in range(n)``) and no other name of the
body can spell the same text."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from aurane.syntax import ast
from aurane.syntax.items import syntax_items

# a token of a name's spelling: one literal character, or NUMBER (a hole: ``-?\d+``)
NUMBER = ""


@dataclass(frozen=True)
class _Site:
    """A layer name as written (``d{}`` with its holes), the loops around it and the
    ``if`` branches it sits in (each as the ``if``'s identity and the branch's index)."""

    layer: str
    holes: tuple[ast.Expr, ...]
    loops: tuple[ast.For, ...]
    branches: tuple[tuple[int, int], ...]
    tests: tuple[ast.Expr, ...]  # the tests of the branches it sits in (not ``else``)

    def written(self) -> str:
        """The name as the source writes it (``d{i % 2}``), for a note."""
        pieces = self.layer.split("{}")
        text = pieces[0]
        for hole, piece in zip(self.holes, pieces[1:], strict=True):
            text += "{" + _expr_text(hole) + "}" + piece
        return text


def repeating_name(body: tuple[ast.ForwardStmt, ...]) -> str | None:
    """Why a layer name of ``body`` may repeat at arguments no call gives (None: every
    name stays apart, whatever the arguments)."""
    sites = list(_sites(body, (), (), ()))
    for site in sites:
        if site.loops and not _one_to_one(site):
            return (
                f"the layer name '{site.written()}' may repeat at arguments no call gives"
                " (the source refuses those; the class would share one module)"
            )
    for at, site in enumerate(sites):
        for other in sites[at + 1 :]:
            if not (site.holes or other.holes):
                continue  # two fixed names: the source refuses them at every call alike
            if _exclusive_twins(site, other):
                continue
            if _may_meet(site, other):
                return (
                    f"the layer names '{site.written()}' and '{other.written()}' may be the"
                    " same at arguments no call gives (the source refuses those)"
                )
    return None


def _sites(
    body: tuple[ast.ForwardStmt, ...],
    loops: tuple[ast.For, ...],
    branches: tuple[tuple[int, int], ...],
    tests: tuple[ast.Expr, ...],
) -> Iterator[_Site]:
    """Every layer name ``body`` gives, in source order; a container's numbered children
    (``as features.*``) are numbered apart and left out."""
    for stmt in body:
        if isinstance(stmt, ast.For):
            yield from _sites(stmt.body, (*loops, stmt), branches, tests)
        elif isinstance(stmt, ast.If):
            for index, branch in enumerate(stmt.branches):
                held = tests if branch.test is None else (*tests, branch.test)
                yield from _sites(branch.body, loops, (*branches, (id(stmt), index)), held)
        else:
            for item in syntax_items(stmt):
                layer = (
                    getattr(item, "layer", None) if isinstance(item, ast.Call | ast.Chain) else None
                )
                if layer and "*" not in layer:
                    holes = getattr(item, "layer_holes", ())
                    yield _Site(layer.replace('"', ""), holes, loops, branches, tests)


def _one_to_one(site: _Site) -> bool:
    """Whether ``site`` spells a new name at each iteration of the loops around it: each
    loop counted by a hole of its own (``i``, ``i + 1``, ``j - 2``), the holes parted by
    a character no number starts with (``d{i}_{j}``, not ``d{i}{j}``)."""
    counted: set[str] = set()
    for hole in site.holes:
        counters = _mixed_radix(hole, site.loops) if _counter_of(hole) is None else None
        if counters is None:
            counter = _counter_of(hole)
            counters = [counter] if counter is not None else None
        if counters is None or counted & set(counters):
            return False
        counted |= set(counters)
    for piece in site.layer.split("{}")[1:-1]:
        if not piece or piece[0].isdigit() or piece[0] == "-":
            return False
    return all(counter in counted for counter in map(_loop_counter, site.loops))


def _mixed_radix(hole: ast.Expr, loops: tuple[ast.For, ...]) -> list[str] | None:
    """The counters of a hole that counts several loops as digits (``2 * i + j`` in ``for
    j in range(2)``: each coefficient at least the one below it times that loop's
    written count); None for another hole."""
    terms: list[tuple[int, str]] = []
    for term in _terms(hole):
        if term is None:
            return None
        terms.append(term)
    terms = [(scale, name) for scale, name in terms if name]
    if len(terms) < 2:
        return None
    terms.sort()
    for (scale, name), (above, _) in zip(terms, terms[1:], strict=False):
        count = next((_written_count(loop) for loop in loops if _loop_counter(loop) == name), None)
        if scale <= 0 or count is None or above < scale * count:
            return None
    return [name for _, name in terms]


def _terms(expr: ast.Expr) -> Iterator[tuple[int, str] | None]:
    """``expr`` as a sum of ``scale * name`` (a whole number: name ``""``); None for a term
    of another form."""
    if isinstance(expr, ast.BinOp) and expr.op == "+":
        yield from _terms(expr.left)
        yield from _terms(expr.right)
        return
    found = _affine(expr)
    if found is None or (found[0] is not None and found[2] != 0):
        yield None
    elif found[0] is None:
        yield 0, ""
    else:
        yield found[1], found[0]


def _written_count(loop: ast.For) -> int | None:
    """The number of iterations of ``for j in range(2)`` (a written number alone)."""
    iterable = loop.iterable
    if isinstance(iterable, ast.Call) and iterable.func == "range" and len(iterable.args) == 1:
        stop = iterable.args[0]
        if _whole(stop) and not iterable.keywords:
            assert isinstance(stop, ast.Number)
            return int(stop.value)
    return None


def _loop_counter(loop: ast.For) -> str | None:
    """The name counting ``loop``'s iterations apart: a ``range`` loop's target, the index
    of ``enumerate``, the target over a written list of distinct numbers."""
    iterable, target = loop.iterable, loop.target
    if isinstance(iterable, ast.Call) and not iterable.keywords:
        if iterable.func == "range" and iterable.args:
            return target.name
        if iterable.func == "enumerate" and target.name is None and target.items:
            return target.items[0].name
    if isinstance(iterable, ast.ListExpr | ast.TupleExpr):
        values = [item.value for item in iterable.items if isinstance(item, ast.Number)]
        if len(values) == len(iterable.items) == len(set(values)):
            return target.name
    return None


def _counter_of(hole: ast.Expr) -> str | None:
    """The counter ``hole`` shifts and scales (``i``, ``i + 1``, ``2 * i + 1``); None for
    another expression, or one no counter changes."""
    found = _affine(hole)
    return found[0] if found is not None and found[1] != 0 else None


# a hole as ``counter * scale + shift`` (counter None: a whole number)
_Affine = tuple[str | None, int, int]


def _affine(expr: ast.Expr) -> _Affine | None:
    """``expr`` as a whole-number line in at most one name (``2 * i + 1``: ``(i, 2, 1)``)."""
    if isinstance(expr, ast.Name):
        return expr.id, 1, 0
    if _whole(expr):
        assert isinstance(expr, ast.Number)
        return None, 0, int(expr.value)
    if not isinstance(expr, ast.BinOp) or expr.op not in ("+", "-", "*"):
        return None
    left, right = _affine(expr.left), _affine(expr.right)
    if left is None or right is None or (left[0] and right[0] and left[0] != right[0]):
        return None
    name = left[0] or right[0]
    if expr.op == "*":
        if left[0] and right[0]:
            return None
        if left[0] is None:
            left, right = right, left
        return name, left[1] * right[2], left[2] * right[2]
    sign = 1 if expr.op == "+" else -1
    return name, left[1] + sign * right[1], left[2] + sign * right[2]


def _whole(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Number) and type(expr.value) is int


def _may_meet(site: _Site, other: _Site) -> bool:
    """Whether two names may be the same at some arguments: a fixed name a template
    spells at no counter its loops and tests allow (``features.0`` beside
    ``features.{2 * i}`` under ``if i > 0``), or one template at shifts no two counters
    meet (``d{2 * i}``, ``d{2 * i + 1}``), stays apart; else, whatever both may spell."""
    if not other.holes:
        site, other = other, site
    if not site.holes:  # a fixed name: the template's numbers that spell it
        pattern = "".join(
            re.escape(piece) if index == 0 else f"(-?\\d+){re.escape(piece)}"
            for index, piece in enumerate(other.layer.split("{}"))
        )
        found = re.fullmatch(pattern, site.layer)
        if found is None:
            return False
        return all(
            _reaches(hole, int(number), other)
            for hole, number in zip(other.holes, found.groups(), strict=True)
        )
    if site.layer == other.layer:  # one spelling: apart where one hole never meets
        for mine, theirs in zip(site.holes, other.holes, strict=True):
            if _past_the_loop(mine, theirs, site) or _past_the_loop(theirs, mine, other):
                return False
            first, second = _affine(mine), _affine(theirs)
            if first is None or second is None or not (first[1] or second[1]):
                continue
            if (second[2] - first[2]) % math.gcd(first[1], second[1]):
                return False
        return True
    return _may_spell_alike(_tokens(site.layer), _tokens(other.layer))


def _past_the_loop(counted: ast.Expr, other: ast.Expr, site: _Site) -> bool:
    """Whether the hole ``other`` (``n``, ``n + 1``, ``len(widths)``) is past every value
    the hole ``counted`` (``i``, ``i + 1``) takes at ``site``, whose loop over ``i`` stops
    there (``fc{n}`` beside ``fc{i}`` in ``for i in range(n)``: ``i < n``)."""
    found = _affine(counted)
    if found is None or found[0] is None or found[1] != 1:
        return False
    counter, _, shift = found
    stop, beyond = other, 0
    if isinstance(other, ast.BinOp) and other.op == "+" and _whole(other.right):
        assert isinstance(other.right, ast.Number)
        stop, beyond = other.left, int(other.right.value)
    for loop in site.loops:
        iterable = loop.iterable
        if _loop_counter(loop) != counter or not isinstance(iterable, ast.Call):
            continue
        if iterable.keywords or not iterable.args:
            return False
        if iterable.func == "range" and len(iterable.args) in (1, 2):
            end = _expr_text(iterable.args[-1])
        elif iterable.func == "enumerate" and len(iterable.args) == 1:
            end = f"len({_expr_text(iterable.args[0])})"
        else:
            return False
        return "..." not in end and _expr_text(stop) == end and beyond >= shift
    return False


def _reaches(hole: ast.Expr, number: int, site: _Site) -> bool:
    """Whether ``hole`` may be ``number`` where ``site`` sits (its counter's least
    value, from its loop and the tests ``counter > k`` / ``counter >= k`` it is under)."""
    found = _affine(hole)
    if found is None:
        return True
    counter, scale, shift = found
    if counter is None or scale == 0:
        return shift == number
    if (number - shift) % scale:
        return False
    value = (number - shift) // scale
    least = _least(counter, site)
    return least is None or value >= least


def _least(counter: str, site: _Site) -> int | None:
    """The least value ``counter`` takes at ``site`` (None: not known)."""
    least: int | None = None
    for loop in site.loops:
        if _loop_counter(loop) != counter:
            continue
        iterable = loop.iterable
        if isinstance(iterable, ast.Call) and iterable.func in ("range", "enumerate"):
            start: ast.Expr | None = None  # none written: 0
            if len(iterable.args) > 1:
                start = iterable.args[0 if iterable.func == "range" else 1]
            if start is None:
                least = 0
            elif _whole(start):
                assert isinstance(start, ast.Number)
                least = int(start.value)
    for test in site.tests:
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == counter
            and _whole(test.right)
            and test.op in (">", ">=")
        ):
            assert isinstance(test.right, ast.Number)
            bound = int(test.right.value) + (1 if test.op == ">" else 0)
            least = bound if least is None else max(least, bound)
    return least


def _exclusive_twins(site: _Site, other: _Site) -> bool:
    """Whether two names are one template in different branches of one ``if`` (an
    iteration takes one branch, and the template is new at each iteration)."""
    if (site.layer, site.loops) != (other.layer, other.loops):
        return False
    if list(map(_expr_text, site.holes)) != list(map(_expr_text, other.holes)):
        return False
    if not _one_to_one(site):
        return False
    for mine, theirs in zip(site.branches, other.branches, strict=False):
        if mine != theirs:
            return mine[0] == theirs[0]  # the first ``if`` they part at
    return False


def _tokens(layer: str) -> tuple[str, ...]:
    """``d{}_x`` as ``("d", NUMBER, "_", "x")``."""
    tokens: list[str] = []
    for index, piece in enumerate(layer.split("{}")):
        if index:
            tokens.append(NUMBER)
        tokens += list(piece)
    return tuple(tokens)


def _may_spell_alike(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Whether some text is spelt by both (each NUMBER any ``-?\\d+``): the two
    spellings walked side by side over the characters that matter."""
    alphabet = {token for token in (*first, *second) if token != NUMBER} | {"-", "0"}
    start = (_closure(first, (0, 0)), _closure(second, (0, 0)))
    seen = {start}
    todo = [start]
    while todo:
        mine, theirs = todo.pop()
        if (len(first), 0) in mine and (len(second), 0) in theirs:
            return True
        for char in alphabet:
            step = (_step(first, mine, char), _step(second, theirs, char))
            if step[0] and step[1] and step not in seen:
                seen.add(step)
                todo.append(step)
    return False


# a place in a spelling: the token's index, and within a NUMBER 0 (before it), 1 (after
# its ``-``) or 2 (after a digit)
_Place = tuple[int, int]


def _closure(tokens: tuple[str, ...], place: _Place) -> frozenset[_Place]:
    """``place`` and the place after its NUMBER where that number may end there."""
    index, within = place
    if index < len(tokens) and tokens[index] == NUMBER and within == 2:
        return frozenset({place, (index + 1, 0)})
    return frozenset({place})


def _step(tokens: tuple[str, ...], places: frozenset[_Place], char: str) -> frozenset[_Place]:
    """The places after reading ``char`` from any of ``places``."""
    after: set[_Place] = set()
    for index, within in places:
        if index >= len(tokens):
            continue
        token = tokens[index]
        if token != NUMBER:
            if token == char:
                after.add((index + 1, 0))
        elif char.isdigit():
            after |= _closure(tokens, (index, 2))
        elif char == "-" and within == 0:
            after.add((index, 1))
    return frozenset(after)


def _expr_text(expr: ast.Expr) -> str:
    """A hole's expression as the source writes it, for a note (simple forms only)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Number):
        return expr.text
    if isinstance(expr, ast.BinOp):
        return f"{_expr_text(expr.left)} {expr.op} {_expr_text(expr.right)}"
    if isinstance(expr, ast.UnaryOp):
        return f"{expr.op}{_expr_text(expr.operand)}"
    if isinstance(expr, ast.Call) and not expr.keywords:
        return f"{expr.func}({', '.join(map(_expr_text, expr.args))})"
    return "..."
