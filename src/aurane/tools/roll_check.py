"""Rolled block classes checked against the classes of one call (issue 24 item 3).

A rolled block class (``rolled_block.py``) takes the block's parameters and sizes as
constructor arguments, so a user may build it with any arguments the source accepts; it
must then build and compute what the source says. For a program, this check:

- builds the rolled class with the arguments of each of its calls and compares it with
  that call's own class (``per_call=True``: ``roll_networks=False``, and the calls that
  took different ``if`` branches keep their classes too): the same state-dict keys, a
  strict load, equal outputs on the input the call sees;
- builds it with arguments no call gives (one boolean or integer argument of a call,
  or an item of a list or of its rows, written as a literal, flipped or counted up, a
  boolean as 0 or 1 and 0 or 1 as a boolean (``True == 1`` in Python only), and
  an integer a loop may count by also 0, its own or an inner block's it is passed on
  to, a string naming a buffer's fill the other fills) and compares it with the class of
  one call that a program calling it that way compiles to. Each integer is also tried at
  0, -1, one past the largest its calls give and as a boolean
  (``OTHER_ARGUMENTS_PER_BLOCK`` tries a block at most);
- builds a class taking its input's sizes (``in_features``, ``in_channels``: arguments
  the block's parameters do not name) at input shapes no call gives: each size of the
  entry's ``input_shape`` (a network variant's, for a network class taking sizes) one more
  and one less, where the program so changed compiles, with the arguments the changed
  program's rolled build gives the call, against the class of one call it compiles to
  (``_at_other_sizes``; a size the roller folded in holds at the calls only);
- where that program is rejected at the call (review98 F5: ``rms_norm(axes=p0)`` at
  ``p0 = 0`` or ``true``, ``sizes[k]`` at ``k = true``), builds the class at those
  arguments and runs it on the call's input: it must raise, built or run (ideally
  ``ValueError`` naming the class); one that builds and runs accepts what the source
  refuses, a problem (``_refusal`` says which rejections are demanded, ``_refuses_too``
  which results are let pass).

- builds it with each parameter that has a default left out (its own default: the
  rolled ``Net`` passes the value for a call that keeps it, hunt109 F1), against the class
  of one call of the program whose call leaves it out (``_at_defaults``);
- builds it with an operation-valued argument swapped for another of its kind
  (``OPERATION_KINDS``), with the arguments the changed program's rolled ``Net`` gives
  the call (``_at_other_operations``);
- builds a network class, one taking no sizes too, on a variant's input with one size
  changed (``_network_sizes``: hunt109 F5's classes were written for the variants' shapes).

A block's first problem at accepted arguments ends its tries; a refused value it accepts
is reported once and the tries go on (hunt109 F8), the accepted-argument problems first.

It still never varies: arguments that are global constants (``P(WIDTH)``: the literal is
not at the call), block calls made inside another block (only the entry's calls are
paired with their classes), the arguments of calls the entry makes more than once in a
loop, a block's input shapes beyond the sizes of the entry's single ``input_shape``
(several inputs, a ``reshape`` before the call), and operations outside
``OPERATION_KINDS``.

The classes checked are the rollers' (``rolled_blocks``), every other block class
that serves calls the per-call build writes as several classes (``Sel`` for ``Sel`` and
``Sel_2``: calls joined over their ``if`` branches, ``branches.py``), and every block class
whose constructor takes a parameter of the block (``Stack(in_features, width, n)``, also
one class for calls that agree on ``n``). A class written out for its calls' values that
refuses another (``ValueError: Stack is written for n == 2, not 3``) passes: it is not
silently wrong.

A class that refuses the other arguments by name (``Fam is written for n == 2, not 3``:
a class joined over branches writes its calls' loop count out) has no problem there: it
is loud, not wrong. A value the roller folded in (``causal=True`` where the source has ``causal=p1``, a
normalised shape fixed by the calls' sizes) holds at the program's calls and is found at
the other arguments. Slow (each program compiles several times): a command, not a test.

    python -m aurane.tools.roll_check --programs 300 --seed 1
"""

from __future__ import annotations

import argparse
import functools
import inspect
import types
from collections import Counter
from collections.abc import Container, Iterator
from typing import Any

from aurane.diagnostics import Diagnostic
from aurane.stages import CompilationError
from aurane.syntax import ast

ENTRY = "Net"  # the fuzz programs' top-level model
# the other arguments built per block (each compiles the program once): bounds the
# campaign's work now that every integer is tried at 0, -1, past the calls and as a boolean
OTHER_ARGUMENTS_PER_BLOCK = 16

# the start of a problem that is a class accepting what the source refuses (counted apart)
ACCEPTS_REFUSED = "accepts what the source refuses"

IN_CALL = "in the call "  # the label the checker gives an error inside a block's call

Inputs = dict[str, tuple[Any, Any]]  # layer path -> the (positional, keyword) input it sees


def _module(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module


def _compiled(source: str, *, roll: bool) -> tuple[Any, Any, types.ModuleType, frozenset[str]]:
    """The program, its graphs, its generated module and its rolled block classes."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(source, filename="checked.aur")
    generator = TorchCodeGenerator(program, graphs, roll_networks=roll, per_call=not roll)
    code = generator.generate()
    rolled = generator.rolled_blocks if roll else frozenset()
    return program, graphs, _module(code, "rolled" if roll else "flat"), rolled


def _recording(module: types.ModuleType, names: frozenset[str]) -> None:
    """Each instance of the classes ``names`` keeps the arguments it was built with."""
    for name in names:
        cls = getattr(module, name, None)
        if not isinstance(cls, type) or hasattr(vars(cls).get("__init__"), RECORDS):
            continue  # recorded already: wrapped once, however often a check asks
        built = cls.__init__  # type: ignore[misc]

        def init(self: Any, *args: Any, __built: Any = built, **kwargs: Any) -> None:
            object.__setattr__(self, "_built_with", (args, kwargs))
            __built(self, *args, **kwargs)

        # the class's signature stays its own: other arguments are bound by it
        wrapped = functools.wraps(built)(init)
        setattr(wrapped, RECORDS, True)
        cls.__init__ = wrapped  # type: ignore[misc]


RECORDS = "_records_built_with"  # marks a constructor ``_recording`` wrapped


def _per_call_run(
    flat: types.ModuleType, graphs: Any, path: str
) -> tuple[Any, tuple[Any, Any]] | None:
    """The module at ``path`` of the entry built with one class per call, and the inputs it
    sees in a run of the entry; None where the build has no such module or the run does
    not reach it (nothing to compare a class with there)."""
    try:
        theirs = getattr(flat, ENTRY)()
        target = theirs.get_submodule(path)
    except (AttributeError, RuntimeError):
        return None
    seen = _run(theirs, graphs[ENTRY], [path])
    return (target, seen[path]) if path in seen else None


def _run(net: Any, graph: Any, paths: list[str]) -> dict[str, tuple[Any, Any]]:
    """The inputs (positional, keywords) each module at ``paths`` sees in a run of ``net``."""
    import torch

    from aurane.verify import sample_inputs

    seen: dict[str, tuple[Any, Any]] = {}
    handles = []
    for path in paths:
        try:
            module = net.get_submodule(path)
        except AttributeError:  # a call inside a rolled class the other build names apart
            continue

        def hook(_: Any, args: Any, kwargs: Any, __path: str = path) -> None:
            seen.setdefault(__path, (args, kwargs))

        handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    torch.manual_seed(0)
    inputs = sample_inputs(graph, "cpu", batch=2)
    net.eval()
    with torch.no_grad():
        net(*inputs)
    for handle in handles:
        handle.remove()
    return seen


def _refuses(message: str) -> bool:
    """Whether ``message`` is a class refusing arguments it was not written for, by name:
    ``Fam is written for n == 2, not 3``, ``Sel is written without the branch at 6:9,
    which no call takes``."""
    return " is written for " in message or " is written without " in message


def _same(
    cls: type, args: Any, kwargs: Any, theirs: Any, given: tuple[Any, Any], *, other: bool = False
) -> str | None:
    """None where ``cls(*args, **kwargs)`` strict-loads ``theirs`` and computes the same;
    ``other`` (arguments no call gives): also where the class refuses them by name (a class
    joined over branches guards the loop count it writes out: ``Fam is written for n == 2,
    not 3``), which is loud, not wrong."""
    import torch

    try:
        mine = cls(*args, **kwargs)
    except ValueError as error:
        if other and _refuses(str(error)):
            return None
        return f"cannot be built: ValueError: {error}"
    except Exception as error:  # noqa: BLE001 - a class the source's arguments cannot build
        return f"cannot be built: {type(error).__name__}: {error}"
    if list(mine.state_dict()) != list(theirs.state_dict()):
        return f"state-dict keys {list(mine.state_dict())} against {list(theirs.state_dict())}"
    try:
        mine.load_state_dict(theirs.state_dict(), strict=True)
    except RuntimeError as error:
        return f"no strict load: {str(error).splitlines()[0]}"
    mine.eval()
    theirs.eval()
    with torch.no_grad():
        try:
            out = mine(*given[0], **given[1])
        except Exception as error:  # noqa: BLE001
            return f"fails to run: {type(error).__name__}: {error}"
        expected = theirs(*given[0], **given[1])
    if not any(True for _ in _tensors(out)):  # ``x = a(x)`` with ``a = nn.Identity``
        return f"fails to run: returns {type(out).__name__}, not a tensor"
    try:
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
    except AssertionError as error:
        return f"computes differently: {str(error).splitlines()[0]}"
    return None


def _at_calls(
    source: str, counts: Counter[str]
) -> tuple[list[str], dict[str, tuple[str, Any, Any]], Any, types.ModuleType, Inputs]:
    """The problems of the rolled classes at the program's own calls, each rolled call's
    layer path -> (class, positional, keyword arguments), the program, its rolled
    module and the input each call sees (path -> positional, keyword arguments)."""
    import torch

    program, graphs, rolled, names = _compiled(source, roll=True)
    if ENTRY not in graphs:
        return [], {}, program, rolled, {}
    # blocks called at several argument or shape sets: one class may serve calls that the
    # per-call build writes as several (joined over branches), so it is checked too
    several = {
        name
        for name, calls in block_call_sets(graphs).items()
        if len(calls) > 1 and isinstance(getattr(rolled, name, None), type)
    }
    taken = _taking_params(program, rolled)
    if not names and not several and not taken:
        return [], {}, program, rolled, {}
    _, _, flat, _ = _compiled(source, roll=False)
    several_classes = names | {name for name in several if hasattr(flat, f"{name}_2")}
    names = several_classes | taken
    if not names:
        return [], {}, program, rolled, {}
    _recording(rolled, names)
    torch.manual_seed(0)
    mine = getattr(rolled, ENTRY)()
    theirs = getattr(flat, ENTRY)()
    calls = {
        path: (type(module).__name__, *module._built_with)
        for path, module in mine.named_modules()
        if type(module).__name__ in names and hasattr(module, "_built_with")
    }
    seen = _run(theirs, graphs[ENTRY], list(calls))
    problems = []
    for path, (name, args, kwargs) in calls.items():
        if path not in seen:
            continue  # a call forward does not reach
        found = _same(getattr(rolled, name), args, kwargs, theirs.get_submodule(path), seen[path])
        # the calls of a class no call sets write as several: counted apart
        counts["calls" if name in several_classes else "other block calls"] += 1
        if found is not None:
            problems.append(f"{name} at '{path}' ({_shown(args, kwargs)}): {found}")
    return problems, calls, program, rolled, seen


def _taking_params(program: Any, module: types.ModuleType) -> frozenset[str]:
    """The block classes of ``module`` whose constructor takes a parameter of the block
    (``n`` of ``Stack(width, n)``): each must build what the source says at any value
    it accepts, also one written for calls that agree (issue 24 item 3)."""
    found = set()
    for model in program.models:
        cls = getattr(module, model.name, None)
        if not model.params or model.forward is None or not isinstance(cls, type):
            continue
        taken = inspect.signature(cls).parameters
        if any(param.name in taken for param in model.params):
            found.add(model.name)
    return frozenset(found)


def _shown(args: Any, kwargs: Any) -> str:
    return ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])


def _block_calls(program: Any, block: str) -> Iterator[tuple[ast.Call, ast.Model]]:
    """The calls of the block ``block`` in the entry model's forward."""
    from aurane.syntax.items import syntax_items

    models = {m.name: m for m in program.models}
    entry, model = models.get(ENTRY), models.get(block)
    if entry is None or model is None or entry.forward is None:
        return
    for item in syntax_items(entry.forward.body):
        if isinstance(item, ast.Call) and item.func == block:
            yield item, model


def _changed(
    value: ast.Expr, count: bool, *, largest: int | None = None, refused: bool = False
) -> list[tuple[str, bool | int | str]]:
    """Other literals, each its text and value, for a boolean or a small integer written
    as a literal; an integer that may be a loop's count (``count``) is tried at 0 too,
    where a loop runs no iteration. A boolean is tried as the number Python finds equal
    to it and 0 or 1 as the boolean, where the language's ``==`` tells them apart (``true
    == 1`` is false) and Python's does not (``True == 1``). A string naming a buffer's
    fill (``"zeros"``) is tried at the others (``buffer(p0, init=p1)``: a class filling by
    ``p1`` must fill as the source does, or refuse the init by name).

    ``refused`` (blocks, whose class must refuse what the source refuses): every
    integer is also tried at 0, at -1, one past ``largest`` (the largest value the
    calls give there: past a table or the input's axes) and as a boolean, values the
    source often rejects (``rms_norm(axes=0)``, ``sizes[true]``) and Python takes."""
    if isinstance(value, ast.String):
        fills = ("zeros", "ones", "full")
        return [(f'"{f}"', f) for f in fills if f != value.value] if value.value in fills else []
    if isinstance(value, ast.Bool):
        return [("false", False) if value.value else ("true", True), _NUMBER_OF[value.value]]
    if not isinstance(value, ast.Number) or not isinstance(value.value, int):
        return []
    number = value.value
    found: list[tuple[str, bool | int | str]] = []
    if 0 <= number < 8:
        zero = [("0", 0)] if count and number > 0 else []
        boolean = [_BOOLEAN_OF[number]] if number in _BOOLEAN_OF else []
        found = [(str(number + 1), number + 1), *zero, *boolean]
    if refused and number >= 0:
        past = max(number, largest if largest is not None else number) + 1
        more: list[tuple[str, bool | int]] = [(str(past), past), ("0", 0), ("-1", -1)]
        more += [("true", True), ("false", False)]
        # ``True == 1`` in Python: compare the texts, not the values, to keep both
        found += [item for item in more if item[0] not in {text for text, _ in found}]
        found = [(text, new) for text, new in found if text != str(number)]
    return found


# the value of the other kind that Python's ``==`` finds equal to a boolean or to 0 and 1
_NUMBER_OF: dict[bool, tuple[str, bool | int]] = {False: ("0", 0), True: ("1", 1)}
_BOOLEAN_OF: dict[int, tuple[str, bool | int]] = {0: ("false", False), 1: ("true", True)}


def _leaves(value: ast.Expr) -> Iterator[tuple[tuple[int, ...], ast.Expr]]:
    """The literals of an argument, each with its place in it: the argument itself, or an
    item of a list or of its rows (``[(8, 1), (6, 2)]``: ``(1, 0)`` is ``6``)."""
    if not isinstance(value, ast.ListExpr | ast.TupleExpr):
        yield (), value
        return
    for index, item in enumerate(value.items):
        if isinstance(item, ast.ListExpr | ast.TupleExpr):
            yield from (((index, inner), leaf) for inner, leaf in enumerate(item.items))
        else:
            yield (index,), item


def _at(value: Any, place: tuple[int, ...]) -> Any:
    for index in place:
        if not isinstance(value, list | tuple) or index >= len(value):
            return None
        value = value[index]
    return value


def _put(value: Any, place: tuple[int, ...], new: Any) -> Any:
    """``value`` (a list or tuple, nested) with the item at ``place`` replaced."""
    if not place:
        return new
    items = list(value)
    items[place[0]] = _put(items[place[0]], place[1:], new)
    return type(value)(items)


def _counted(
    model: ast.Model, models: dict[str, ast.Model], seen: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The block's parameters a loop may count by, whose literals may be 0 (a loop running
    no iteration): those the iterables of its loops read (``range(k)``), and those it
    passes on to such a parameter of an inner block (``x -> Inner(w, k)``)."""
    from aurane.backends.torch.param_blocks import loop_params
    from aurane.syntax.items import syntax_items

    found = set(loop_params(model))
    body = model.forward.body if model.forward is not None else ()
    steps = _chain_steps(body)
    for item in syntax_items(body):
        if not isinstance(item, ast.Call):
            continue
        inner = models.get(item.func)
        if inner is None or inner.name in seen | {model.name}:
            continue
        counts = _counted(inner, models, seen | {model.name})
        for param, value in _param_arguments(item, inner, steps):
            if param in counts and isinstance(value, ast.Name):
                found.add(value.id)
    return frozenset(found & {p.name for p in model.params})


def _replaced(source: str, span: Any, text: str) -> str:
    lines = source.split("\n")
    line = lines[span.line - 1]
    lines[span.line - 1] = line[: span.column - 1] + text + line[span.end_column - 1 :]
    return "\n".join(lines)


def _param_arguments(
    call: ast.Call, model: ast.Model, steps: Container[int] = frozenset(), *, tensors: int = -1
) -> list[tuple[str, ast.Expr]]:
    """The call's arguments by the block's parameter: positional ones after the tensors it
    is called on (``Loop0(x, 1, 1)``: every input of the block's forward; one fewer where
    the call is a step of a chain, ``x -> Loop0(1, 1)``, whose ``id`` is in ``steps``), then
    keywords. Counting them as the arguments past the parameters paired ``x`` with ``w0``
    where a call left a defaulted parameter out (``Fam0(x, 3, 3)`` for ``Fam0(w0, n0,
    block0 = Unit0)``). ``tensors``: how many, where the caller knows (a network variant's
    base, ``Net(4, 2, true)``, is called on none)."""
    names = [p.name for p in model.params]
    if tensors < 0:
        forward = model.forward
        inputs = max(1, len(forward.params)) if forward is not None else 1
        tensors = inputs - 1 if id(call) in steps else inputs
    by_name = list(zip(names, list(call.args)[tensors:], strict=False))
    return by_name + [(k.name, k.value) for k in call.keywords]


def _chain_steps(body: object) -> set[int]:
    """The ``id`` of every call in ``body`` that is a step of a chain (its first input the
    value before it), not its source."""
    from aurane.syntax.items import syntax_items

    return {
        id(step)
        for item in syntax_items(body)
        if isinstance(item, ast.Chain)
        for step in item.steps
    }


def _at_other_arguments(
    source: str,
    program: Any,
    rolled: types.ModuleType,
    calls: dict[str, tuple[str, Any, Any]],
    seen: Inputs,
    counts: Counter[str],
    *,
    refused: bool = False,
) -> list[str]:
    """The problems of each rolled class (of ``rolled``, compiled from ``program``) built
    with a literal argument of one of its calls changed, against that call's class in the
    program so changed, or, where that program is rejected, run on the input the call
    sees (``seen``), which it must refuse (``refused``: else skipped; the first problem
    of each block; with ``refused``, which tries more values, at most
    ``OTHER_ARGUMENTS_PER_BLOCK`` changed arguments each)."""
    accepted: list[str] = []  # classes built at arguments the source accepts
    refusals: list[str] = []  # classes accepting arguments the source refuses
    found: set[str] = set()  # blocks with a problem at accepted arguments: tries end
    refusing: set[str] = set()  # blocks with a refused value reported: tries go on
    models = {m.name: m for m in program.models}
    entry = models.get(ENTRY)
    steps = _chain_steps(entry.forward.body if entry is not None and entry.forward else ())
    tried: Counter[str] = Counter()  # the other arguments built, per block
    for name in sorted({name for name, _, _ in calls.values()}):
        paths = [(path, a, k) for path, (n, a, k) in calls.items() if n == name]
        sources = list(_block_calls(program, name))
        if len(paths) != len(sources):
            continue  # calls made other than in the entry's forward: not paired
        cls = getattr(rolled, name)
        given = _blocks_given(sources, steps)
        largest = _largest_given(sources, steps)

        def other(
            path: str, changed: dict[str, Any], at: Any, text: str, name: str = name, cls: Any = cls
        ) -> str | None:
            if refused and tried[name] >= OTHER_ARGUMENTS_PER_BLOCK:
                return None
            tried[name] += 1
            given = seen.get(path) if refused else None
            return _one_other(source, cls, path, changed, at, text, given, counts)

        def report(shown: str, path: str, problem: str, name: str = name) -> None:
            """A block's first problem at accepted arguments ends its tries; a refused
            value it accepts is reported once and the tries go on (hunt109 F8: a known
            T040 kind hid a no-load behind it)."""
            if not problem.startswith(ACCEPTS_REFUSED):
                found.add(name)
                accepted.append(f"{name} with {shown} (at '{path}'): {problem}")
            elif name not in refusing:
                refusing.add(name)
                refusals.append(f"{name} with {shown} (at '{path}'): {problem}")

        for (path, args, kwargs), (call, model) in zip(paths, sources, strict=True):
            bound = inspect.signature(cls).bind(*args, **kwargs).arguments
            counted = _counted(model, models)
            for param, value in _param_arguments(call, model, steps):
                if name in found:
                    break
                for swapped, new, old, text in _other_blocks(source, value, given, rolled):
                    if _at(bound.get(param), swapped) is not old and swapped != ():
                        continue
                    if not swapped and bound.get(param) != old:
                        continue
                    changed = {**bound, param: _put(bound[param], swapped, new)}
                    at = value if not swapped else _leaf_at(value, swapped)
                    problem = other(path, changed, at, text)
                    counts["other blocks"] += problem is not None
                    if problem:
                        where = "".join(f"[{i}]" for i in swapped)
                        report(f"{param}{where}={text}", path, problem)
                        if name in found:
                            break
                # a row's item may be passed on to an inner block's count through the
                # loop's targets (``for w, k in cfg: x -> Inner(w, k)``): each may be 0
                for place, leaf in _leaves(value):
                    count = param in counted if not place else "range(" in source
                    most = largest.get((param, place))
                    for text, new in _changed(leaf, count, largest=most, refused=refused):
                        if name in found or _at(bound.get(param), place) != _value(leaf):
                            continue
                        changed = {**bound, param: _put(bound[param], place, new)}
                        problem = other(path, changed, leaf, text)
                        counts["other arguments"] += problem is not None
                        if problem:
                            shown = f"{param}{''.join(f'[{i}]' for i in place)}={text}"
                            report(shown, path, problem)
    # the problems at arguments the source accepts first: the wrong classes
    return accepted + refusals


# operations a rolled class taking an operation may be given in its place, by kind: the
# same arity, so a source applying one (``act(0.2)``, ``act``) accepts the others
OPERATION_KINDS: tuple[tuple[str, ...], ...] = (
    ("relu", "tanh", "gelu", "sigmoid", "silu", "identity"),
    ("leaky_relu", "elu"),
    ("layer_norm", "rms_norm"),
    ("softmax", "log_softmax"),
)


def _other_operations(name: str) -> list[str]:
    for kind in OPERATION_KINDS:
        if name in kind:
            return [other for other in kind if other != name]
    return []


def _paired_calls(
    program: Any, calls: dict[str, tuple[str, Any, Any]]
) -> Iterator[tuple[str, str, ast.Call, ast.Model, Container[int]]]:
    """Each rolled call of the entry's forward: its class, its layer path, its call and its
    block, and the calls that are steps of a chain (calls made elsewhere are not paired)."""
    models = {m.name: m for m in program.models}
    entry = models.get(ENTRY)
    steps = _chain_steps(entry.forward.body if entry is not None and entry.forward else ())
    for name in sorted({name for name, _, _ in calls.values()}):
        paths = [path for path, (n, _, _) in calls.items() if n == name]
        sources = list(_block_calls(program, name))
        if len(paths) != len(sources):
            continue
        for path, (call, model) in zip(paths, sources, strict=True):
            yield name, path, call, model, steps


def _removed(source: str, call: ast.Call, param: str, model: ast.Model, steps: Any) -> str | None:
    """``source`` with the call's argument for ``param`` left out (a keyword, or the last
    positional one before any keyword), or None where it cannot be (a positional one
    before others). ``source`` itself where the call leaves it out already."""
    given = dict(_param_arguments(call, model, steps))
    if param not in given:
        return source
    value = given[param]
    items: list[Any] = [*call.args, *call.keywords]
    keyword = next((k for k in call.keywords if k.value is value), None)
    item = keyword if keyword is not None else value
    if keyword is None and call.args[-1] is not value:
        return None
    index = next(i for i, it in enumerate(items) if it is item)
    lines = source.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def at(line: int, column: int) -> int:
        return offsets[line - 1] + column - 1

    if index > 0:  # from the end of the item before it: its comma goes too
        before = items[index - 1].span
        start, end = (
            at(before.end_line, before.end_column),
            at(item.span.end_line, item.span.end_column),
        )
    elif len(items) > 1:  # the first: up to the next item
        after = items[1].span
        start, end = at(item.span.line, item.span.column), at(after.line, after.column)
    else:
        start, end = (
            at(item.span.line, item.span.column),
            at(item.span.end_line, item.span.end_column),
        )
    return source[:start] + source[end:]


def _at_defaults(
    source: str,
    program: Any,
    rolled: types.ModuleType,
    calls: dict[str, tuple[str, Any, Any]],
    counts: Counter[str],
) -> list[str]:
    """The problems of each rolled class built with a parameter that has a default left
    out (the class's own default, hunt109 F1: ``act=F.leaky_relu`` where the source
    applies ``act(0.2)``), against the class of one call of the program whose call leaves
    it out. ``Net`` passes the value for calls that keep the default, so no call of the
    program builds the class at its default. The first problem of each block."""
    problems: list[str] = []
    found: set[str] = set()
    for name, path, call, model, steps in _paired_calls(program, calls):
        cls = getattr(rolled, name)
        _, args, kwargs = calls[path]
        signature = inspect.signature(cls)
        bound = signature.bind(*args, **kwargs).arguments
        for param in model.params:
            taken = signature.parameters.get(param.name)
            if name in found or param.default is None or param.name not in bound:
                continue
            if taken is None or taken.default is inspect.Parameter.empty:
                continue  # the class demands it: built without it, it is loud
            changed = _removed(source, call, param.name, model, steps)
            if changed is None:
                continue
            left = {k: v for k, v in bound.items() if k != param.name}
            problem = _against_flat(changed, cls, path, left)
            counts["defaults left out"] += problem is not None
            if problem:
                found.add(name)
                problems.append(f"{name} with {param.name} left out (at '{path}'): {problem}")
    return problems


def _against_flat(
    source: str, cls: type, path: str, bound: dict[str, Any], *, loud_passes: bool = False
) -> str | None:
    """ "" where ``cls(**bound)`` agrees with the class of one call at ``path`` that
    ``source`` compiles to, a problem where not; None where nothing to compare (the
    program rejected, the path gone). ``loud_passes``: modules other than the source's
    pass where the class, built with its own weights, then raises or returns no tensor
    on that input (``_loud``)."""
    import torch

    try:
        _, graphs, flat, _ = _compiled(source, roll=False)
    except CompilationError:
        return None
    torch.manual_seed(0)
    ran = _per_call_run(flat, graphs, path)
    if ran is None:
        return None
    target, seen = ran
    problem = _same(cls, (), bound, target, seen, other=True) or ""
    if loud_passes and problem.startswith(("no strict load", "state-dict keys")):
        return "fails to run" if _loud(cls, bound, seen) else problem
    return problem


def _loud(cls: type, bound: dict[str, Any], given: tuple[Any, Any]) -> bool:
    """Whether ``cls(**bound)`` raises, built or run on ``given``, or returns no tensor."""
    import torch

    torch.manual_seed(0)
    try:
        built = cls(**bound)
        built.eval()
        with torch.no_grad():
            out = built(*given[0], **given[1])
    except Exception:  # noqa: BLE001 - any failure is loud
        return True
    return not any(True for _ in _tensors(out))


def _at_other_operations(
    source: str,
    program: Any,
    rolled: types.ModuleType,
    calls: dict[str, tuple[str, Any, Any]],
    counts: Counter[str],
) -> list[str]:
    """The problems of each rolled class built with an operation-valued argument (an
    argument ``relu``, a row's ``(8, relu)``) swapped for another operation of its kind
    (``OPERATION_KINDS``): built with the arguments the changed program's rolled ``Net``
    gives the call (the operation as the rollers pass it: a module class, a function, a
    partial), against the changed program's class of one call. The first of each block.
    A class that raises, built or run, or returns no tensor (its modules then not the
    source's too) is loud, not wrong: counted (``other operations loud``), as the changed
    program's class may take the operation in a form this one does not (``nn.Identity``
    or ``nn.RMSNorm`` where the calls give functions: a case of its own there)."""
    problems: list[str] = []
    found: set[str] = set()
    for name, path, call, model, steps in _paired_calls(program, calls):
        cls = getattr(rolled, name)
        for param, value in _param_arguments(call, model, steps):
            for place, leaf in _leaves(value):
                if not isinstance(leaf, ast.OpRef) or leaf.is_model:
                    continue
                for other in _other_operations(leaf.name):
                    if name in found:
                        break
                    changed = _replaced(source, leaf.span, other)
                    bound = _built_by(changed, path, name, cls)
                    if bound is None or param not in bound:
                        # the changed program's class folds the operation in (its calls
                        # agree) or is built another way: no argument to give this one
                        counts["other operations not paired"] += 1
                        continue
                    problem = _against_flat(changed, cls, path, bound, loud_passes=True)
                    if problem and problem.startswith(("fails to run", "cannot be built")):
                        # loud: the changed class may take the operation in another form
                        # (``nn.Identity`` among functions, a case of its own there)
                        counts["other operations loud"] += 1
                        problem = ""
                    counts["other operations"] += problem is not None
                    if problem:
                        found.add(name)
                        shown = f"{param}{''.join(f'[{i}]' for i in place)}={other}"
                        problems.append(f"{name} with {shown} (at '{path}'): {problem}")
    return problems


def _built_by(source: str, path: str, name: str, cls: type) -> dict[str, Any] | None:
    """The arguments (by ``cls``'s parameters) the rolled ``Net`` of ``source`` builds its
    class ``name`` with at ``path``, those it gives only (not the defaults: a class of
    ``source`` may fold a value ``cls`` takes); None where it is rejected or builds it
    another way."""
    import torch

    try:
        _, _, moved, _ = _compiled(source, roll=True)
    except CompilationError:
        return None
    if not isinstance(getattr(moved, name, None), type):
        return None
    _recording(moved, frozenset({name}))
    torch.manual_seed(0)
    try:
        built = getattr(moved, ENTRY)().get_submodule(path)
        args, kwargs = built._built_with
        return dict(inspect.signature(cls).bind(*args, **kwargs).arguments)
    except (AttributeError, TypeError):
        return None


def _input_size_literals(model: ast.Model | None) -> list[ast.Number]:
    """The sizes of ``model``'s ``input_shape`` written as integer literals (one input's
    tuple; none for the dict of several inputs)."""
    fields = model.fields if model is not None else ()
    for field in fields:
        if field.name == "input_shape":
            return [
                leaf
                for _, leaf in _leaves(field.value)
                if isinstance(leaf, ast.Number)
                and isinstance(leaf.value, int)
                and not isinstance(leaf.value, bool)
            ]
    return []


def _sized(rolled: types.ModuleType, models: dict[str, ast.Model], names: set[str]) -> set[str]:
    """The classes among ``names`` whose constructor takes a size the block's parameters
    do not name (``in_features``, ``in_channels``: its input's, given by the caller)."""
    found = set()
    for name in names:
        cls, model = getattr(rolled, name, None), models.get(name)
        if not isinstance(cls, type) or model is None:
            continue
        taken = set(inspect.signature(cls).parameters)
        if taken - {param.name for param in model.params}:
            found.add(name)
    return found


def _sample_shape(given: tuple[Any, Any]) -> tuple[int, ...] | None:
    """The shape of a call's first input, less the batch axis."""
    first: Any = given[0][0] if given[0] else None
    return tuple(first.shape[1:]) if hasattr(first, "shape") else None


def _at_other_sizes(
    source: str,
    program: Any,
    rolled: types.ModuleType,
    calls: dict[str, tuple[str, Any, Any]],
    seen: Inputs,
    counts: Counter[str],
) -> list[str]:
    """The problems of each rolled class taking its input's sizes (``in_features``) at
    input shapes no call gives: each size of the entry's ``input_shape`` written one more
    and one less, where the program so changed compiles (the source accepts it), the class
    (of ``rolled``) built with the arguments the changed program's rolled build gives the
    call, against the changed program's class of one call, as for other arguments (its
    sizes are arguments too: a size the roller folded in holds at the calls only)."""
    models = {m.name: m for m in program.models}
    sized = _sized(rolled, models, {name for name, _, _ in calls.values()})
    literals = _input_size_literals(models.get(ENTRY))
    if not sized or not literals:
        return []
    given: dict[str, set[tuple[int, ...] | None]] = {}
    for path, (name, _, _) in calls.items():
        if path in seen:
            given.setdefault(name, set()).add(_sample_shape(seen[path]))
    problems: list[str] = []
    found: set[str] = set()  # classes with a problem: the first of each is reported
    for leaf in literals:
        for size in (leaf.value + 1, leaf.value - 1):
            if size < 1 or not sized - found:
                continue
            changed = _replaced(source, leaf.span, str(size))
            shown = f"input_shape's {leaf.value} as {size}"
            problems += _one_other_size(changed, shown, rolled, sized - found, given, counts, found)
    return problems


def _one_other_size(
    source: str,
    shown: str,
    rolled: types.ModuleType,
    names: set[str],
    given: dict[str, set[tuple[int, ...] | None]],
    counts: Counter[str],
    found: set[str],
) -> list[str]:
    """``_at_other_sizes`` for one changed program ``source`` (described by ``shown``):
    the problems of the classes ``names`` of ``rolled`` at the calls whose input shape no
    call of the original program gives (``given``); ``found`` gains the classes found."""
    import torch

    try:
        _, graphs, moved, _ = _compiled(source, roll=True)
        _, flat_graphs, flat, _ = _compiled(source, roll=False)
    except CompilationError:
        return []  # the source refuses that input: no size to compare at
    if ENTRY not in graphs:
        return []
    _recording(moved, frozenset(names))
    torch.manual_seed(0)
    mine, theirs = getattr(moved, ENTRY)(), getattr(flat, ENTRY)()
    built = {
        path: (type(module).__name__, *module._built_with)
        for path, module in mine.named_modules()
        if type(module).__name__ in names and hasattr(module, "_built_with")
    }
    inputs = _run(theirs, flat_graphs[ENTRY], list(built))
    problems = []
    for path, (name, args, kwargs) in built.items():
        shape = _sample_shape(inputs[path]) if path in inputs else None
        if shape is None or name in found or shape in given.get(name, set()):
            continue  # a call forward does not reach, or a shape a call gave
        cls = getattr(rolled, name)
        try:
            bound = inspect.signature(cls).bind(*args, **kwargs)
            target = theirs.get_submodule(path)
        except (TypeError, AttributeError):
            # the changed program rolls the block another way (other arguments, or
            # classes per call): nothing to build the class with
            counts["other input sizes not paired"] += 1
            continue
        counts["other input sizes"] += 1
        problem = _same(cls, bound.args, bound.kwargs, target, inputs[path], other=True)
        if problem and _loud_at(cls, bound, inputs[path], problem, counts):
            problem = None
        if problem:
            found.add(name)
            built_with = _shown(bound.args, bound.kwargs)
            problems.append(
                f"{name} at input {shape} ({shown}; {built_with}, at '{path}'): {problem}"
            )
    return problems


def _largest_given(
    sources: list[tuple[ast.Call, ast.Model]], steps: Container[int]
) -> dict[tuple[str, tuple[int, ...]], int]:
    """The largest integer the calls of a block write at each parameter and place in it
    (``P(1) -> P(2) -> P(3)``: 3 for ``p0``), the value one past which is tried."""
    found: dict[tuple[str, tuple[int, ...]], int] = {}
    for call, model in sources:
        for param, value in _param_arguments(call, model, steps):
            for place, leaf in _leaves(value):
                number = _value(leaf)
                if isinstance(number, int) and not isinstance(number, bool):
                    found[param, place] = max(number, found.get((param, place), number))
    return found


def _blocks_given(sources: list[tuple[ast.Call, ast.Model]], steps: Container[int]) -> list[str]:
    """The blocks the calls of a block give in their arguments (a row's ``Basic``), in
    order of first appearance; ``steps``: the calls that are steps of a chain."""
    found: dict[str, None] = {}
    for call, model in sources:
        for _, value in _param_arguments(call, model, steps):
            for _, leaf in _leaves(value):
                if isinstance(leaf, ast.OpRef) and leaf.is_model:
                    found[leaf.name] = None
    return list(found)


def _leaf_at(value: ast.Expr, place: tuple[int, ...]) -> ast.Expr:
    for index in place:
        assert isinstance(value, ast.ListExpr | ast.TupleExpr)
        value = value.items[index]
    return value


def _other_blocks(
    source: str, value: ast.Expr, given: list[str], rolled: types.ModuleType
) -> Iterator[tuple[tuple[int, ...], Any, Any, str]]:
    """Arguments holding blocks changed (issue 24 item 3: a rolled class taking block
    classes must build what the source says for any of them): each block of a row or
    list swapped for another block the calls give (``(8, Basic)`` as ``(8, Wide)``), and
    rows holding blocks in reverse order. Each: the place changed (``()``: the whole
    argument), the value the class is given there, the value the call gave, and the
    source text written there."""
    blocks = {name: getattr(rolled, name, None) for name in given}
    for place, leaf in _leaves(value):
        if not (isinstance(leaf, ast.OpRef) and leaf.is_model) or blocks.get(leaf.name) is None:
            continue
        for other in given:
            if other != leaf.name and blocks.get(other) is not None:
                yield place, blocks[other], blocks[leaf.name], other
    if not isinstance(value, ast.ListExpr) or len(value.items) < 2:
        return
    if not any(isinstance(leaf, ast.OpRef) and leaf.is_model for _, leaf in _leaves(value)):
        return
    lines = source.split("\n")
    texts = []
    for item in value.items:
        if item.span.line != item.span.end_line:
            return
        texts.append(lines[item.span.line - 1][item.span.column - 1 : item.span.end_column - 1])
    values = [_row_value(item, blocks) for item in value.items]
    if any(v is None for v in values):
        return
    yield (), tuple(reversed(values)), tuple(values), f"[{', '.join(reversed(texts))}]"


def _row_value(item: ast.Expr, blocks: dict[str, Any]) -> Any:
    """A row as the rolled class receives it (``(8, Basic)`` with the class), or None
    where an item is no number, boolean or block."""
    if isinstance(item, ast.TupleExpr | ast.ListExpr):
        found = [_row_value(inner, blocks) for inner in item.items]
        return None if any(v is None for v in found) else tuple(found)
    if isinstance(item, ast.OpRef) and item.is_model:
        return blocks.get(item.name)
    if isinstance(item, ast.Bool | ast.Number):
        return item.value
    return None


def _value(expr: ast.Expr) -> Any:
    return expr.value if isinstance(expr, ast.Bool | ast.Number | ast.String) else None


def _changed_flat(
    source: str, value: Any, text: str
) -> tuple[Any, types.ModuleType] | CompilationError:
    """The graphs and the module of one class per call that ``source`` with the literal
    ``value`` written as ``text`` compiles to, the torch seed set for building from it;
    the error where that program is rejected."""
    try:
        _, graphs, flat, _ = _compiled(_replaced(source, value.span, text), roll=False)
    except CompilationError as error:
        return error
    import torch

    torch.manual_seed(0)
    return graphs, flat


def _one_other(
    source: str,
    cls: type,
    path: str,
    bound: dict[str, Any],
    value: Any,
    text: str,
    given: tuple[Any, Any] | None,
    counts: Counter[str],
) -> str | None:
    """ "" where the rolled class built with the arguments ``bound`` agrees with the class
    of one call compiled from the source with the literal ``value`` written as ``text``, a
    problem where not; None where the changed program is not one to compare against
    (the path gone). Where that program is rejected at the call (``_refusal``), the class
    must refuse ``bound`` too, built or run on ``given``, the input the call sees."""
    compiled = _changed_flat(source, value, text)
    if isinstance(compiled, CompilationError):
        refusal = _refusal(compiled, value.span)
        if refusal is None or given is None:
            return None
        counts["refused arguments"] += 1
        return _refuses_too(cls, bound, given, refusal, counts)
    graphs, flat = compiled
    ran = _per_call_run(flat, graphs, path)
    if ran is None:
        return None
    target, seen = ran
    return _same(cls, (), bound, target, seen, other=True) or ""


def _refusal(error: CompilationError, literal: Any) -> Diagnostic | None:
    """The error of a program rejected because of the literal changed at ``literal`` (its
    span), which the class built at that argument must refuse too, or None.

    Demanded: an error located at the literal, or one whose labels name the call the
    literal is written in (``in the call P(0), input (8, 8, 8)``: an error inside that
    call's instance of the block, at any depth of the calls it makes). The class is
    given the same arguments and, in forward, the same input, so it can know all such
    an error knows. Not demanded: warnings (a lint the source lets pass, or rejects only
    under ``--strict``, is no refusal), and an error elsewhere the changed call only
    leads to (its output's new shape refused by a later layer of the caller or another
    block's call, whose class is not the one built here)."""
    at = (literal.line, literal.column)
    for diagnostic in error.diagnostics:
        if not diagnostic.is_error:
            continue
        # an instance's labels, not those naming where a value came from (``(5,) from
        # `W` at 8:13``: an error the call's output only leads to)
        calls = [label.span for label in diagnostic.labels if label.message.startswith(IN_CALL)]
        spans = [diagnostic.span, *calls]
        for span in spans:
            if span is not None and (span.line, span.column) <= at < (
                span.end_line,
                span.end_column,
            ):
                return diagnostic
    return None


def _refuses_too(
    cls: type,
    bound: dict[str, Any],
    given: tuple[Any, Any],
    refusal: Diagnostic,
    counts: Counter[str],
) -> str:
    """ "" where ``cls(**bound)`` raises, built or run on ``given`` (the project's rule for
    arguments the source refuses: ideally ``ValueError`` naming the class); where it
    builds and runs, the problem: it accepts what the source refuses.

    Not a problem: a class whose output is empty (``nn.Linear(4, 0)`` at ``dense(w)``,
    ``w = 0``, which the source refuses as not positive). Torch defines such a layer,
    and a ``(batch, 0)`` result holds no number to be taken for the source's; counted as
    ``refused arguments run empty``, so a campaign shows how often."""
    import torch

    torch.manual_seed(0)
    try:
        built = cls(**bound)
        built.eval()
        with torch.no_grad():
            out = built(*given[0], **given[1])
    except Exception:  # noqa: BLE001 - any refusal is loud, not silently wrong
        return ""
    if any(tensor.numel() == 0 for tensor in _tensors(out)):
        counts["refused arguments run empty"] += 1
        return ""
    return f"{ACCEPTS_REFUSED}: {refusal.code}: {refusal.message}"


def _tensors(value: Any) -> Iterator[Any]:
    """The tensors of a forward's result (one, or a tuple, list or dict of them)."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def block_call_sets(graphs: dict[str, Any]) -> dict[str, set[str]]:
    """Each block a program calls -> its distinct calls: the arguments, the input shapes,
    the repeat count and the operations its instance graph runs (an operation given by
    value shows there), over every graph, the calls inside blocks too. A block with one
    such call is one class whatever the rollers do."""
    found: dict[str, set[str]] = {}

    def walk(graph: Any) -> None:
        for node in graph.nodes:
            sub = node.subgraph
            if node.op != "block" or sub is None:
                continue
            inputs = tuple(value.shape for value in sub.inputs)
            ops = tuple(inner.op for inner in sub.nodes)
            found.setdefault(node.block, set()).add(
                repr((node.args.get("arguments"), inputs, node.repeat, ops))
            )
            walk(sub)

    for graph in graphs.values():
        walk(graph)
    return found


def check_networks(source: str, counts: Counter[str] | None = None) -> list[str]:
    """The problems of the rolled network classes of ``source`` (``model small =
    Net(4, 2)``: ``Net`` takes the arguments): each built with a literal argument of a
    variant changed (as for blocks) must compute what that variant, so changed, computes
    as written out, or refuse the value (``ValueError``: forward is written out for the
    variants' value); it must never compute something else. ``counts`` gains the
    arguments compared."""
    import torch

    from aurane.backends.torch.param_blocks import loop_params

    counts = counts if counts is not None else Counter()
    program, _, rolled, _ = _compiled(source, roll=True)
    models = {m.name: m for m in program.models}
    problems: list[str] = []
    bases = {m.base.func for m in program.models if m.base is not None} & models.keys()
    _recording(rolled, frozenset(bases))
    for variant in program.models:
        if variant.base is None or variant.base.func not in bases:
            continue
        network = models[variant.base.func]
        cls, entry = getattr(rolled, network.name, None), getattr(rolled, variant.name, None)
        if not isinstance(cls, type) or not isinstance(entry, type):
            continue
        if entry is cls or not issubclass(entry, cls):
            continue  # the variant keeps its own class
        torch.manual_seed(0)
        try:
            built: Any = entry()
        except Exception as error:  # noqa: BLE001 - a variant that cannot be built is a finding
            problems.append(f"{variant.name} cannot be built: {type(error).__name__}: {error}")
            continue
        args, kwargs = built._built_with
        bound = inspect.signature(cls).bind(*args, **kwargs).arguments
        counted = loop_params(network)
        for param, value in _param_arguments(variant.base, network, tensors=0):
            for place, leaf in _leaves(value):
                for text, other in _changed(leaf, param in counted and not place):
                    if _at(bound.get(param), place) != _value(leaf):
                        continue
                    changed = {**bound, param: _put(bound[param], place, other)}
                    problem = _other_variant(source, cls, variant.name, changed, leaf, text)
                    counts["network arguments"] += problem is not None
                    if problem:
                        shown = f"{param}{''.join(f'[{i}]' for i in place)}={text}"
                        problems.append(
                            f"{network.name} with {shown} (as '{variant.name}'): {problem}"
                        )
                        break
    return problems


def _loud_at(
    cls: type,
    bound: inspect.BoundArguments,
    given: tuple[Any, Any],
    problem: str,
    counts: Counter[str],
) -> bool:
    """Whether a class whose modules are not the source's at an input no call gives
    (``problem``: ``no strict load``, other state-dict keys) raises on that input, built
    with its own weights: loud, not silently wrong (a per-call class taking
    ``in_channels`` and written for its call's spatial sizes, ``nn.Linear(120, v0)``
    after a ``flatten``, fails in torch's matmul). Counted as ``other input sizes
    refused by torch``, as a campaign shows how often; one that runs is a problem."""
    import torch

    if not problem.startswith(("no strict load", "state-dict keys")):
        return False
    torch.manual_seed(0)
    try:
        built = cls(*bound.args, **bound.kwargs)
        built.eval()
        with torch.no_grad():
            built(*given[0], **given[1])
    except Exception:  # noqa: BLE001 - any failure is loud
        counts["other input sizes refused by torch"] += 1
        return True
    return False


def _network_sizes(
    source: str, program: Any, rolled: types.ModuleType, counts: Counter[str]
) -> list[str]:
    """As ``_at_other_sizes`` for networks used through variants: each rolled network
    class taking its input's sizes (``Fam0(in_features, w0, n0)``), built with the
    arguments a variant's rolled class gives it where one size of that variant's
    ``input_shape`` is written one more and one less (and the source accepts it), must
    compute what that variant, so changed, computes as written out. Also a network class
    taking no sizes (``Fam(n, w)``, written for its variants' input shapes, hunt109 F5):
    built with the same arguments on the changed input, it must load and compute what the
    changed variant computes, or fail loudly (``_loud_at``)."""
    models = {m.name: m for m in program.models}
    bases = {m.base.func for m in program.models if m.base is not None} & models.keys()
    sized = {name for name in bases if isinstance(getattr(rolled, name, None), type)}
    unsized = sized - _sized(rolled, models, bases)
    problems: list[str] = []
    found: set[str] = set()
    for variant in program.models:
        network = variant.base.func if variant.base is not None else ""
        if network not in sized or variant.name == network:
            continue
        for leaf in _input_size_literals(variant):
            for size in (leaf.value + 1, leaf.value - 1):
                if size < 1 or network in found:
                    continue
                changed = _replaced(source, leaf.span, str(size))
                shown = f"'{variant.name}' input_shape's {leaf.value} as {size}"
                own = _variant_arguments(rolled, network, variant.name, unsized)
                problem = _other_network_size(changed, rolled, network, variant.name, counts, own)
                if problem:
                    found.add(network)
                    problems.append(f"{network} at {shown}: {problem}")
    return problems


def _variant_arguments(
    rolled: types.ModuleType, network: str, variant: str, unsized: set[str]
) -> tuple[Any, Any] | None:
    """The arguments the variant ``variant`` builds the network class ``network`` with,
    where that class takes no sizes (``unsized``) and the variant is built from it."""
    import torch

    entry, base = getattr(rolled, variant, None), getattr(rolled, network, None)
    if network not in unsized or not isinstance(entry, type) or not isinstance(base, type):
        return None
    if entry is base or not issubclass(entry, base):
        return None
    _recording(rolled, frozenset({network}))
    torch.manual_seed(0)
    built: Any = entry()
    args, kwargs = built._built_with
    return args, kwargs


def _other_network_size(
    source: str,
    rolled: types.ModuleType,
    network: str,
    variant: str,
    counts: Counter[str],
    own: tuple[Any, Any] | None = None,
) -> str:
    """The problem of ``rolled``'s class ``network`` built as the variant ``variant`` of
    the changed program ``source`` builds it, against that variant written out; "" where
    none (or nothing to compare: the source refuses the input, the class is not used).
    ``own``: the arguments the variant gives a class taking no sizes, which hold at any
    input, used where the changed program keeps the variant's own class (its variants'
    shapes no longer agree)."""
    import torch

    try:
        _, graphs, moved, _ = _compiled(source, roll=True)
        _, flat_graphs, flat, _ = _compiled(source, roll=False)
    except CompilationError:
        return ""
    entry = getattr(moved, variant, None)
    base = getattr(moved, network, None)
    if not isinstance(entry, type) or entry is base:
        return ""
    if isinstance(base, type) and issubclass(entry, base):
        _recording(moved, frozenset({network}))
        torch.manual_seed(0)
        variant_built: Any = entry()
        args, kwargs = variant_built._built_with
    elif own is not None:
        args, kwargs = own
    else:
        return ""  # the changed program keeps the variant's own class
    cls = getattr(rolled, network)
    try:
        bound = inspect.signature(cls).bind(*args, **kwargs)
    except TypeError:
        counts["other input sizes not paired"] += 1
        return ""
    theirs = getattr(flat, variant)()
    seen = _run(theirs, flat_graphs[variant], [""])
    counts["other input sizes"] += 1
    problem = _same(cls, bound.args, bound.kwargs, theirs, seen[""], other=True)
    if problem and _loud_at(cls, bound, seen[""], problem, counts):
        problem = None
    return f"{problem} ({_shown(bound.args, bound.kwargs)})" if problem else ""


def _other_variant(
    source: str, cls: type, variant: str, bound: dict[str, Any], value: Any, text: str
) -> str | None:
    """As ``_one_other`` for a network: "" where ``cls`` built with ``bound`` computes what
    the variant ``variant`` with ``value`` written as ``text`` compiles to, or refuses it
    (``ValueError``); a problem where not; None where the changed program is rejected."""
    compiled = _changed_flat(source, value, text)
    if isinstance(compiled, CompilationError):
        return None
    graphs, flat = compiled
    theirs = getattr(flat, variant)()
    seen = _run(theirs, graphs[variant], [""])
    problem = _same(cls, (), bound, theirs, seen[""]) or ""
    refused = problem.startswith("cannot be built: ValueError") and _refuses(problem)
    return "" if refused else problem


def check_source(
    source: str, counts: Counter[str] | None = None, *, refused: bool = False
) -> list[str]:
    """Every problem the rolled block and network classes of ``source`` have (none:
    ``[]``); ``counts`` gains the calls and the other arguments compared. ``refused``
    (the command's default): each integer is also tried at 0, -1, past the calls and
    as a boolean, and a block class must refuse the arguments the source refuses at
    its call (``_refusal``, review98 F5). Off for the tests of each form until the
    generator refuses them all (roll101: booleans as counts, ``dense(0)`` before a
    layer, ``cumsum(dim=0)``)."""
    counts = counts if counts is not None else Counter()
    problems, calls, program, rolled, seen = _at_calls(source, counts)
    if calls:
        problems += _at_other_arguments(
            source, program, rolled, calls, seen, counts, refused=refused
        )
        problems += _at_other_sizes(source, program, rolled, calls, seen, counts)
        problems += _at_defaults(source, program, rolled, calls, counts)
        problems += _at_other_operations(source, program, rolled, calls, counts)
    if any(m.base is not None and m.base.func != m.name for m in program.models):
        problems += check_networks(source, counts)
        problems += _network_sizes(source, program, rolled, counts)
    return problems


def main(argv: list[str] | None = None) -> int:
    from aurane.tools.fuzz import generate

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--skip-refused",
        action="store_true",
        help="do not build block classes at the arguments the source refuses",
    )
    options = parser.parse_args(argv)
    checked = found = refused_found = 0
    counts: Counter[str] = Counter()
    for seed in range(options.seed * 10**6, options.seed * 10**6 + options.programs):
        source = generate(seed).text
        try:
            problems = check_source(source, counts, refused=not options.skip_refused)
        except CompilationError:
            continue
        except Exception as error:  # noqa: BLE001 - a crash is a finding, not the end
            problems = [f"the check failed: {type(error).__name__}: {error}"]
        checked += 1
        for problem in problems:
            # a class accepting a value the source refuses, counted apart from wrong classes
            refused_found += ACCEPTS_REFUSED in problem
            found += ACCEPTS_REFUSED not in problem
            print(f"seed {seed}: {problem}")
    print(
        f"{checked} programs compiled, {counts['calls']} rolled block calls, "
        f"{counts['other block calls']} calls of other block classes taking parameters, "
        f"{counts['other arguments']} other arguments, {counts['other input sizes']} other"
        f" input sizes ({counts['other input sizes not paired']} not paired,"
        f" {counts['other input sizes refused by torch']} refused by torch) and"
        f" {counts['network arguments']} network arguments compared, {counts['refused arguments']} arguments the source"
        f" refuses tried ({counts['refused arguments run empty']} run empty),"
        f" {counts['defaults left out']} defaults left out, {counts['other operations']}"
        f" other operations, {found} problems and {refused_found} refused values accepted"
    )
    return 1 if found or refused_found else 0


if __name__ == "__main__":
    raise SystemExit(main())
