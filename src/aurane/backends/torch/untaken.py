"""Loop bodies and ``if`` branches that no call of a block runs (issue 24 item 3).

The block roller writes a body from the IR of a call that runs it; where none does
(``for i in range(n1)`` with ``n1=0`` at every call, ``if flag:`` with ``true`` at every
call) it has nothing to write the body from (``rolled.Untaken``). Two ways out, both one
class per block:

- a *phantom*: the block lowered once more at a call's arguments changed so that the body
  runs (``n1=1``, ``flag=false``), read by the roller beside the calls' instances
  (``phantom_arguments`` gives the changed arguments to try); the program builds nothing
  of it, so its modules, names and state dict are the calls' as before;
- a *refusal*: where no phantom lowers (a shape that does not fit at that argument), the
  class is written without the body and refuses the arguments that would run it
  (``refusal_lines``: ``raise ValueError("Fam0 is written for n1 == 0, not 2")``), so a
  class built at another value is never silently wrong.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any, TypeVar

from aurane import ops
from aurane.backends.torch.emit_common import lit
from aurane.backends.torch.kinds import (
    is_flag,
    is_number,
    kind_guarded,
    kind_subject,
    kind_text,
    refused_to_numbers,
    refusing_text,
    same_value,
)
from aurane.backends.torch.loop_counts import branch_params, names_read, through_constants
from aurane.backends.torch.refusals import refusal
from aurane.ops.spec import ArgKind
from aurane.records import fields, is_record
from aurane.semantics.symbolic import PRINTED, plain
from aurane.source import Span
from aurane.syntax import ast

LOOP = "loop "  # a loop's marker, ``rolled.BRANCH`` then this then ``line:column``


def body_position(key: str) -> tuple[int, int]:
    """The ``line:column`` of the statement a body marker (``rolled.BRANCH``) names."""
    text = key.split(" ", 1)[1].removeprefix(LOOP)
    line, column = text.split(":")[:2]
    return int(line), int(column)


def is_loop(key: str) -> bool:
    """Whether a body marker names a loop's body (else an ``if`` branch's)."""
    return key.split(" ", 1)[1].startswith(LOOP)


def _enclosing(
    body: Sequence[ast.ForwardStmt], at: tuple[int, int], around: tuple[ast.ForwardStmt, ...]
) -> tuple[ast.ForwardStmt, ...] | None:
    """The statement at ``at`` with the loops and ifs around it, outermost first."""
    for stmt in body:
        if (stmt.span.line, stmt.span.column) == at and isinstance(stmt, ast.For | ast.If):
            return (*around, stmt)
        inner: list[Sequence[ast.ForwardStmt]] = []
        if isinstance(stmt, ast.For):
            inner = [stmt.body]
        elif isinstance(stmt, ast.If):
            inner = [branch.body for branch in stmt.branches]
        for stmts in inner:
            found = _enclosing(stmts, at, (*around, stmt))
            if found is not None:
                return found
    return None


def deciding_params(
    model: ast.Model, key: str, constants: Container[str]
) -> tuple[str, ...] | None:
    """The block's parameters whose values decide whether the body ``key`` marks runs:
    those its loop's iterable or its if's tests read, and those of every loop and if
    around it (an ``if i == 3`` in a loop runs as the loop's count says), directly or
    through the block's constants. The other names they may read are the loops' targets
    (fixed by those parameters) and the program's ``constants`` (fixed for every build);
    None where they read another (a tensor's size, ``channels(x)``: not an argument) or
    the statement is not found."""
    forward = model.forward
    if forward is None:
        return None
    chain = _enclosing(forward.body, body_position(key), ())
    if chain is None:
        return None
    read: set[str] = set()
    targets: set[str] = set()
    for stmt in chain:
        if isinstance(stmt, ast.For):
            read |= names_read(stmt.iterable)
            targets |= {name for name, _ in stmt.target.names()}
        elif isinstance(stmt, ast.If):
            read |= {name for branch in stmt.branches for name in names_read(branch.test)}
    found = through_constants(model, read)
    params = [p.name for p in model.params]
    known = {*params, *(f.name for f in model.fields), *targets}
    if any(name not in known and name not in constants for name in found):
        return None
    return tuple(p for p in params if p in found)


def _tested_literals(model: ast.Model, key: str) -> list[Any]:
    """The numbers and strings the tests of the ``if`` ``key`` marks compare with
    (``if mode == "wide"``): values that may take one of its branches."""
    forward = model.forward
    chain = _enclosing(forward.body, body_position(key), ()) if forward is not None else None
    if not chain or not isinstance(chain[-1], ast.If):
        return []
    found: list[Any] = []
    for branch in chain[-1].branches:
        for value in _literals(branch.test):
            if value not in found:
                found.append(value)
    return found


def _literals(expr: Any) -> list[Any]:
    """The numbers and strings written in ``expr``, in source order."""
    if isinstance(expr, ast.Number | ast.String):
        return [expr.value]
    if isinstance(expr, tuple):
        return [value for item in expr for value in _literals(item)]
    if is_record(expr) and not isinstance(expr, Span):
        return [value for f in fields(expr) for value in _literals(getattr(expr, f.name))]
    return []


def _item_target(model: ast.Model, key: str, param: str) -> ast.LoopTarget | None:
    """The target binding one item of the list parameter ``param`` in a loop around or at
    the body ``key`` marks (``c`` of ``for c in rows``, ``(w, k)`` of ``for w, k in cfg``,
    ``c`` of ``for i, c in enumerate(rows)``); None where no loop iterates it directly."""
    forward = model.forward
    chain = _enclosing(forward.body, body_position(key), ()) if forward is not None else None
    for stmt in chain or ():
        if not isinstance(stmt, ast.For):
            continue
        iterable, target = stmt.iterable, stmt.target
        if isinstance(iterable, ast.Name) and iterable.id == param:
            return target
        if (
            isinstance(iterable, ast.Call)
            and iterable.func == "enumerate"
            and len(iterable.args) == 1
            and isinstance(iterable.args[0], ast.Name)
            and iterable.args[0].id == param
            and len(target.items) == 2
        ):
            return target.items[1]
    return None


def _item(target: ast.LoopTarget, value: int) -> Any:
    """One item that ``target`` unpacks, each of its names bound to ``value``."""
    if target.name is not None:
        return value
    return tuple(_item(inner, value) for inner in target.items)


def _list_tries(
    model: ast.Model, key: str, param: str, given: Sequence[Mapping[str, Any]]
) -> list[Any]:
    """For a list parameter empty at every call (``rows=[]``) that a loop around the body
    iterates: one-item lists, the item's numbers each an integer the first call gives
    elsewhere (a width it builds with), else a small literal; unpacked as the loop's
    target says (``((6, 6),)`` for ``for w, k in cfg``). Last, a small odd number, where
    none is among those: a kernel item that keeps the sizes (``conv2d(c, k, padding=k //
    2)``), which an even one changes before a later call of a block whose class takes
    the calls' sizes (fuzz seed 91000113)."""
    target = _item_target(model, key, param)
    if target is None:
        return []
    numbers = [
        value
        for value in (plain(v) for p, v in given[0].items() if p != param)
        if isinstance(value, int) and is_number(value) and value > 0
    ]
    tried = list(dict.fromkeys([*numbers, _SMALL_ITEM]))[:_MOST_ITEM_TRIES]
    if all(number % 2 == 0 for number in tried):
        tried.append(_SMALL_ODD_ITEM)
    kind = type(plain(given[0][param]))
    return [kind([_item(target, number)]) for number in tried]


_SMALL_ITEM = 4  # an item's number where the calls give none elsewhere
_SMALL_ODD_ITEM = 3  # tried last where every number tried is even (a kernel keeping sizes)
_MOST_ITEM_TRIES = 3  # one-item lists tried for a list no call fills


def phantom_arguments(
    model: ast.Model, key: str, given: Sequence[Mapping[str, Any]], constants: Container[str]
) -> list[dict[str, Any]]:
    """Arguments at which the body ``key`` marks may run, each the first call's with one
    deciding parameter changed to a value no call gives: a boolean flipped, a literal its
    ``if`` compares with or one either side of it, a count one more than the calls'
    largest, an integer one either side of the calls', a one-item list where every call gives an empty one
    (``_list_tries``). The roller tries them in this order."""
    params = deciding_params(model, key, constants) or ()
    if not given:
        return []
    tested = _tested_literals(model, key)
    out: list[dict[str, Any]] = []
    for param in params:
        values = [plain(call.get(param)) for call in given]
        if any(v is None for v in values):
            continue
        tries: list[Any] = []
        if all(is_flag(v) for v in values):
            tries = [not v for v in values]
        elif all(isinstance(v, int) and is_number(v) for v in values):
            # a literal a test compares with, and either side of it (``if w > 8``: 9),
            # first: the roller reads only the first few phantoms
            numbers = [t for t in tested if isinstance(t, int) and is_number(t)]
            tries = [t + d for t in numbers for d in (0, 1, -1)]
            tries += [max(values) + 1, *(v + d for v in values for d in (1, -1))]
        elif all(isinstance(v, str) for v in values):
            tries = [t for t in tested if isinstance(t, str)]
        elif all(isinstance(v, tuple | list) and not v for v in values):
            tries = _list_tries(model, key, param, given)
        for value in tries:
            if value in values or (isinstance(value, int) and value < 0):
                continue
            changed = {**given[0], param: value}
            if changed not in out:
                out.append(changed)
    return out


def refusal_lines(
    block: str,
    params: tuple[str, ...],
    given: Sequence[Mapping[str, Any]],
    who: str = "call",
    model: ast.Model | None = None,
) -> list[str] | None:
    """The lines at the top of ``__init__`` refusing values of ``params`` other than the
    calls' (``if n1 != 0: raise ValueError(...)``): the class is written without a body
    that none of those values runs. Several parameters are refused together, as a tuple
    (``(n, m)``: another pairing of the calls' values may run it). A list is compared as
    a tuple (``if tuple(rows) != ():``, as a class written out for its calls guards it).
    None where a value has no plain literal (an operation, a block). ``who``: what gives
    the values (a network's ``variant``). ``model``: the block, whose ``if``-tested
    parameters a boolean may reach are compared with their kinds where the calls give
    them 0 or 1 (``flag_alike``: ``mode != 1`` lets ``True`` through, which the
    language's ``if mode == 1:`` sends elsewhere)."""
    if not params:
        return []
    rows: list[str] = []
    said: list[str] = []  # the rows as the message says them: without their types
    listed: set[str] = set()  # the parameters given lists, compared as tuples
    typed = _typed(params, given, model)
    for call in given:
        values = [plain(call.get(p)) for p in params]
        if not all(_plain_literal(v) for v in values):
            return None
        listed |= {p for p, v in zip(params, values, strict=True) if isinstance(v, tuple | list)}
        texts = [lit(v) for v in values]
        typed_texts = [
            kind_text(v, t) if p in typed else t
            for p, v, t in zip(params, values, texts, strict=True)
        ]
        row = typed_texts[0] if len(params) == 1 else f"({', '.join(typed_texts)})"
        if row not in rows:
            rows.append(row)
            said.append(texts[0] if len(params) == 1 else f"({', '.join(texts)})")
    read = [f"tuple({p})" if p in listed else kind_subject(p) if p in typed else p for p in params]
    subject = read[0] if len(params) == 1 else f"({', '.join(read)})"
    shown = params[0] if len(params) == 1 else f"({', '.join(params)})"
    one = params[0] if len(params) == 1 and params[0] in typed else None
    if one is not None:  # one parameter as one writes it: mode != 1 or mode is True
        distinct: list[Any] = []
        for call in given:
            if not any(same_value(plain(call.get(one)), v) for v in distinct):
                distinct.append(plain(call.get(one)))
        texts = [lit(v) for v in distinct]
        wanted = f"{one} == {texts[0]}" if len(texts) == 1 else f"{one} in ({', '.join(texts)})"
        test = refusing_text(one, distinct, texts)
    elif len(rows) == 1 and rows[0] in ("True", "False"):  # if flag: rather than != False
        wanted = f"{shown} == {rows[0]}"
        test = f"not {subject}" if rows[0] == "True" else subject
    elif len(rows) == 1:
        wanted, test = f"{shown} == {said[0]}", f"{subject} != {rows[0]}"
    else:
        wanted = f"{shown} in ({', '.join(said)})"
        test = f"{subject} not in ({', '.join(rows)})"
    return refusal(block, test, f"for {wanted}", f"a body no {who} runs is not written", shown)


_Node = TypeVar("_Node")

# the kinds of an operation's argument that refuse a boolean (``dense(true)``: S003)
_NUMBER_KINDS = frozenset(
    {
        ArgKind.INT,
        ArgKind.FLOAT,
        ArgKind.INT_OR_PAIR,
        ArgKind.INT_OR_TUPLE,
        ArgKind.FLOAT_OR_TUPLE,
        ArgKind.INT_OR_STR,
        ArgKind.OPTIONAL_INT,
        ArgKind.OPTIONAL_FLOAT,
    }
)


def _typed(
    params: Sequence[str], given: Sequence[Mapping[str, Any]], model: ast.Model | None
) -> frozenset[str]:
    """The ``params`` ``refusal_lines`` compares with their kinds: those given booleans
    and numbers, or 0 or 1 alone where an ``if`` tests them (``kinds.kind_guarded``)."""
    tested = branch_params(model) & kind_blind(model) if model is not None else frozenset()
    return frozenset(
        p for p in params if kind_guarded([plain(c.get(p)) for c in given], p in tested)
    )


def numbers_after(
    params: Sequence[str] | None, given: Sequence[Mapping[str, Any]], model: ast.Model
) -> frozenset[str]:
    """The ``params`` that ``refusal_lines`` of them leaves only numbers to (none where
    unknown): the class's tests of them need not exclude a boolean
    (``kinds.without_kind_tests``)."""
    if not params:
        return frozenset()
    return refused_to_numbers(params, given, _typed(params, given, model))


def kind_blind(model: ast.Model) -> frozenset[str]:
    """The parameters of ``model`` a boolean and a number may both reach, whatever its calls
    give: Python's ``True == 1`` is not the language's for them, so a test compares their
    kinds too (``pyexpr.kind_compare``). Not one annotated ``int``, ``float`` or ``str``
    (T040 refuses a boolean), nor one given bare to an operation's number argument
    (``conv2d(c, 3, stride=s)``: S003 refuses a boolean)."""
    numbers: set[str] = set()
    for call in _calls(model):
        spec = ops.lookup(call.func)
        if spec is None:
            continue
        positional = [p for p in spec.params if not p.keyword_only]
        named = {p.name: p for p in spec.params}
        bound = [
            (positional[i] if i < len(positional) else None, a) for i, a in enumerate(call.args)
        ]
        bound += [(named.get(k.name), k.value) for k in call.keywords]
        numbers |= {
            a.id
            for p, a in bound
            if p is not None and p.kind in _NUMBER_KINDS and isinstance(a, ast.Name)
        }
    return frozenset(
        p.name
        for p in model.params
        if p.annotation not in ("int", "float", "str") and p.name not in numbers
    )


def indexed_params(model: ast.Model, constants: Mapping[str, ast.Expr] | None = None) -> set[str]:
    """The parameters of ``model`` the index of an item reads (``sizes[k]``, through the
    block's constants too) where the constant evaluator folds the item to the calls'
    number, which no size's tree shows, so a class written from its calls is right at
    their values of them only. An item of a table of numbers at an index of arithmetic
    (``sizes[k - 1]``, ``cfg[min(k, 3)][1]``) is not: its tree is the table indexed by the
    index's (``symbolic.Item``), written ``[4, 8, 16, 32][k]`` at every ``k``.
    ``constants``: the program's."""
    params = {p.name for p in model.params}
    fields_ = {f.name: f.value for f in model.fields}
    read: set[str] = set()
    for item in _nodes(model, ast.Subscript):
        if _tracked_item(item, fields_, constants or {}, params):
            continue
        read |= through_constants(model, names_read(item.index)) & params
    return read


def _tracked_item(
    item: ast.Subscript,
    fields_: Mapping[str, ast.Expr],
    constants: Mapping[str, ast.Expr],
    params: Container[str],
) -> bool:
    """Whether ``item`` (with the subscripts it indexes, ``cfg[k][1]``) is an item of a
    constant table of numbers at indices of arithmetic on parameters and numbers: the
    constant evaluator keeps its tree wherever a parameter gives an index
    (``symbolic.item``)."""
    indices: list[ast.Expr] = []
    base: ast.Expr = item
    while isinstance(base, ast.Subscript):
        indices.append(base.index)
        base = base.value
    if isinstance(base, ast.Name) and base.id not in params:
        base = fields_.get(base.id, constants.get(base.id, base))
    if _table_shape(base) is None:
        return False
    return all(_arithmetic(i, fields_, constants, params, set()) for i in indices)


def _table_shape(expr: ast.Expr) -> tuple[int, ...] | None:
    """The lengths of a list or tuple of numbers written out (its rows each as long as
    the others), outer first; None for any other expression (``symbolic.table_of``)."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Number):
        return ()
    if isinstance(expr, ast.Number):
        return () if not isinstance(expr.value, bool) else None
    if not isinstance(expr, ast.ListExpr | ast.TupleExpr) or not expr.items:
        return None
    rows = {_table_shape(row) for row in expr.items}
    if len(rows) != 1 or None in rows:
        return None
    return (len(expr.items), *next(iter(rows)))  # type: ignore[misc]


def _arithmetic(
    expr: ast.Expr,
    fields_: Mapping[str, ast.Expr],
    constants: Mapping[str, ast.Expr],
    params: Container[str],
    seen: set[str],
) -> bool:
    """Whether ``expr`` computes a number from parameters, numbers and the pure functions
    a tree calls (``k - 1``, ``min(k, 3)``; a constant's value likewise): a parameter's
    tree survives it, where ``0 if flag else k`` gives a plain number at one value."""
    match expr:
        case ast.Number():
            return True
        case ast.Name(id=name):
            if name in params or name in seen:
                return name in params
            value = fields_.get(name)
            return value is None or _arithmetic(value, fields_, constants, params, {*seen, name})
        case ast.UnaryOp(operand=operand):
            return _arithmetic(operand, fields_, constants, params, seen)
        case ast.BinOp(left=left, right=right):
            return all(_arithmetic(e, fields_, constants, params, seen) for e in (left, right))
        case ast.Call(func=func, args=args, keywords=keywords) if (
            func in PRINTED and not keywords and not expr.suffixes
        ):
            return all(_arithmetic(a, fields_, constants, params, seen) for a in args)
        case ast.Subscript():
            return _tracked_item(expr, fields_, constants, params)
    return False


def _calls(model: ast.Model) -> list[ast.Call]:
    """Every call written in ``model``, nested ones too."""
    return _nodes(model, ast.Call)


def _nodes(node: object, kind: type[_Node]) -> list[_Node]:
    """Every node of ``kind`` in ``node``, nested ones too."""
    found: list[_Node] = []
    if isinstance(node, tuple | list):
        for item in node:
            found += _nodes(item, kind)
    elif is_record(node) and not isinstance(node, type | Span):
        if isinstance(node, kind):
            found.append(node)
        for field in fields(node):  # type: ignore[arg-type]
            found += _nodes(getattr(node, field.name), kind)
    return found


def _plain_literal(value: Any) -> bool:
    """Whether ``value`` is written as a plain literal: a number, string, boolean or
    None, or a list or tuple of such."""
    if isinstance(value, tuple | list):
        return all(_plain_literal(item) for item in value)
    return value is None or isinstance(value, bool | int | float | str)


def refused_reason(
    model: ast.Model, key: str, constants: Mapping[str, ast.Expr], *, unit: str, phantoms: bool
) -> str:
    """Why a class refuses the arguments that run the body ``key`` marks, which runs at no
    ``unit`` (``call`` of a block, ``variant`` of a network); ``phantoms``: phantom calls
    were tried."""
    line, column = body_position(key)
    what = "the loop" if is_loop(key) else "an if branch"
    params = ", ".join(deciding_params(model, key, constants) or ())
    tried = f", and no phantom {unit} that runs it could be lowered and read" if phantoms else ""
    return f"{what} at {line}:{column} runs at no {unit}{tried}: {params} must be the {unit}s'"
