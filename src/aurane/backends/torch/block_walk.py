"""The walk of a rolled block's ``__init__`` (``rolled_block.py``): the network roller's
walk (``rolled._Walk``) with the forms a block's loop body takes, each checked against the
call's IR at every visit:

- an inline residual: a second tensor made from the threaded one (``h = x -> ...``, or a
  call of it alone, ``h = Unit(x, w) as units{i}``, going on by chains or under new
  names, ``h2 = gelu(h1)``) and joined back by one operation of both that makes no
  module: ``x = add(x, h)`` keeps the width, ``x = concat(x, h, dim=1)`` grows it
  (``channels = channels + growth``);
- the second tensor going on by an operation of both tensors that makes no module and
  keeps the width (``h2 = matmul(h1, x)``, then ``x = add(x, h2)``);
- the threaded tensor going on before that join (``x -> ...``, or under another name the
  join names: ``y = x -> ...``, ``x = add(y, h)``);
- an alias ``r = x`` joined back after the threaded tensor went on (``x = add(x, r)``, or
  ``x = concat(r, x, dim=1)``: the local keeps the alias's width until the join);
- a later input joined to the threaded tensor without a module (``x = add(x, c)``), or a
  skip saved at a loop's start and read after it only (``s = x``, then ``x = add(x, s)``);
- an unnamed module in a loop (``x -> rms_norm()``), whose IR names number on across the
  iterations (``rms_norm1``, ``rms_norm2``, ...): ``setattr(self, f"rms_norm{i + 1}",
  ...)``, where every call's names follow one progression in the loop's count (a loop
  over items counts its iterations: ``for i, w in enumerate(widths)``);
- tensors only each other read, made by no module (``h1 = arange(p)``, ``h2 =
  hardtanh(h1)``): nothing in ``__init__``, forward computes them and drops them.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

from aurane.backends.torch.emit import emitter
from aurane.backends.torch.emit_common import Call
from aurane.backends.torch.modules import INDENT
from aurane.backends.torch.named import factory_call, module_factory, module_item_class
from aurane.backends.torch.refusals import refusal
from aurane.backends.torch.rolled import (
    _ATOMIC,
    RESERVED,
    SIZE,
    BranchCount,
    Counts,
    Triangle,
    Unsupported,
    _added_lines,
    _Walk,
    _within,
    count_target,
    counter_marked,
    evaluate,
    numbered_stem,
    total_mark,
    zero_mark,
)
from aurane.backends.torch.rolled_forward import count_mark, counted_path, fixed_count
from aurane.ir.graph import Node
from aurane.ops import lookup
from aurane.records import replace
from aurane.semantics.symbolic import plain
from aurane.semantics.values import OpValue
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.items import syntax_items


def _makes_module(node: Node) -> bool:
    return emitter(node.op).init is not None


def _names(node: object) -> set[str]:
    """Every name ``node`` reads or binds (``r`` of ``x -> add(r)``)."""
    found: set[str] = set()
    for item in syntax_items(node):
        if isinstance(item, ast.Name):
            found.add(item.id)
        elif isinstance(item, ast.Assign):
            found.update([item.target, *(n for n, _ in item.targets)])
    return found


class BlockWalk(_Walk):
    """The network roller's walk of a block's ``__init__``, with an inline residual: a
    second tensor made from the threaded one (``h = x -> dense(width).relu as fc{i}``) and
    joined back by an operation that makes no module and keeps the width (``x = add(x,
    h)``), the threaded tensor untouched in between. The running width is the second
    tensor's until the join; the join's output must have it (checked at every visit).
    Or an alias: ``r = x`` (no node), the threaded tensor going on, then the same join of
    ``x`` and ``r``; only the join reads ``r``."""

    second: str | None = None  # the tensor made apart from the threaded one
    grow: str | None = None  # the threaded tensor's width text while a concat's second is made
    around: tuple[ast.ForwardStmt, ...] = ()  # the statements of the body being walked
    alias: str | None = None  # ``r = x``: the threaded tensor kept for the join
    aliases: frozenset[str] = frozenset()  # every alias made: read by their joins only
    inputs_: frozenset[str] = frozenset()  # the block's later inputs (``def forward(x, c)``)
    renamed: str | None = None  # ``y = x -> ...`` before the join: x, threaded on as y
    fors: tuple[ast.For, ...] = ()  # the loops around the statement being walked
    statements: tuple[ast.ForwardStmt, ...] = ()  # the block's whole forward body
    top: tuple[ast.ForwardStmt, ...] = ()  # a network's (whose loops number modules on)
    unused: str | None = None  # a second tensor no statement reads: dropped after its body
    dead: frozenset[str] | None = None  # tensors only dead statements read (``_dead``)
    skips: frozenset[str] = frozenset()  # ``s = x`` opening a loop, read after it only
    # tensors last bound by statements that make no module (forward writes them): one
    # the block returns needs nothing of ``__init__`` (``_returns_made_apart``)
    free: frozenset[str] = frozenset()
    # the last second tensor dropped unjoined (``_drop_unused``) and its width text
    dropped: tuple[str, str] | None = None
    # an unnamed module's step in a loop -> (its name's prefix, the loop's count, its
    # number, the modules of its operation that loops before its own made) at every visit
    # of every call (shared by the walks), and the path written
    numbers: dict[Span, set[tuple[str, int, int, int]]]
    paths: dict[Span, str]
    # an unnamed module whose name reads loop counts (``rolled_forward.count_mark``): the
    # inner loops around it, the loops before it (nested ones: their counts multiply)
    counted: dict[Span, Counts]
    # the running count of a triangle's inner iterations (``rolled.Triangle``) at this
    # visit, and its total after the triangle, by the outer loop
    tick: int = 0
    totals: dict[Span, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.totals = {}
        # the steps a visit numbered other than ``_closed_count`` says: the running count
        self.open_counts: set[Span] = set()

    @staticmethod
    def running_counts(
        body: tuple[ast.ForwardStmt, ...], taken: set[str], counted: tuple[Triangle, ...]
    ) -> tuple[BranchCount, ...]:
        return branch_counts(body, taken, counted)

    def assign(self, stmt: ast.Assign, depth: int) -> list[str]:
        dead = _bound(stmt) <= self._dead() and not self._feeds_module(stmt)
        if dead and self._no_module(stmt.value.span):
            self.free |= _bound(stmt)
            return []  # h1 = zeros(3): read by nothing kept, no module (forward writes it)
        self.free -= _bound(stmt)
        if self._skip(stmt):  # no module, no node: forward writes it in the loop
            made = self._skip_width(stmt.target, depth)
            self.skips |= {stmt.target}
            return made
        if self.alias is not None:
            if not stmt.targets and stmt.target == self.tensor and self.alias in _names(stmt):
                return self._join(stmt.value, depth)  # x = add(x, r)
            self._untouched(stmt)
            return super().assign(stmt, depth)  # x = x -> ... before the join
        if (
            not stmt.targets
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id == self.tensor != stmt.target
            and self.second is None
        ):
            self.alias = stmt.target  # makes no module and no node: forward writes nothing
            self.aliases |= {stmt.target}
            if self._concat_join(stmt):  # the local keeps the alias's width for the join
                self.grow = self.size
            return []
        if self.renamed is not None and not stmt.targets and stmt.target == self.renamed:
            return self._join(stmt.value, depth)  # x = add(y, h)
        if self._goes_on_as(stmt):  # y = x -> ...: the threaded tensor goes on as y
            self._untouched(stmt.value)
            self.aliases -= {stmt.target}  # bound afresh
            assert isinstance(stmt.value, ast.Chain)
            made = self.chain(stmt.value, depth)
            self.renamed, self.tensor = self.tensor, stmt.target
            return made
        self._untouched(stmt)
        if self._with_input(stmt) or self._with_threaded(stmt):
            return []
        if stmt.targets or (stmt.target == self.tensor and self.second is None):
            return super().assign(stmt, depth)  # x = x -> ..., x = multiply(x, s)
        if stmt.target == self.tensor:
            return self._join(stmt.value, depth)
        value = stmt.value
        apart = self.second or stmt.target  # h = x -> ..., then h = h -> ...
        source = self.tensor if self.second is None else self.second
        steps = _steps_from(value, source)
        if isinstance(value, ast.Call):  # h = Unit(x, width): a call of the one tensor
            steps = self._call_steps(value, source)
        if steps is not None and self._second_renamed(stmt):
            apart = stmt.target  # h2 = gelu(h1): the second tensor goes on as h2
        if steps is None and isinstance(value, ast.Call) and value.func == "buffer":
            return self._buffer_apart(stmt, value, depth)
        if stmt.target != apart or steps is None:
            raise Unsupported(f"an assignment to '{stmt.target}' the roller does not write")
        if self.second is None and (self._unused(stmt) or stmt.target in self._dead()):
            self.unused = stmt.target  # made, read by nothing kept (``_dead``): dropped
        if self.second is None and (self._grows(stmt) or self.unused is not None):
            self.grow = self.size  # kept for the join; the second's width is a text apart
        self.second = stmt.target
        if isinstance(value, ast.Chain) and value.layer is not None:  # (x -> ...) as mlp{i}
            return _Walk.chain(self, value, depth)
        lines: list[str] = []
        for step in steps:
            lines += self.step(step, depth)
        return lines

    def _buffer_apart(self, stmt: ast.Assign, value: ast.Call, depth: int) -> list[str]:
        """``h2 = buffer(c0).tanh``: a second tensor made from no tensor (``buffer``),
        after a dead one before it is dropped (``h1 = multiply(x, x)``); read by nothing
        kept, it is dropped in turn at the end of the body."""
        self._drop_unused()
        if self.second is not None or stmt.target in (self.tensor, *self.inputs_):
            raise Unsupported(f"an assignment to '{stmt.target}' the roller does not write")
        if self._unused(stmt) or stmt.target in self._dead():
            self.unused = stmt.target
        self.grow = self.size  # the threaded tensor's width, for the join or the drop
        self.second = stmt.target
        return self.buffer(value, depth)

    def chain(self, chain: ast.Chain, depth: int) -> list[str]:
        """``x -> relu()`` while a second tensor is made apart: the local is the threaded
        tensor's again, and the second's width text must not read it where it changes."""
        dead = chain.layer is None and _source(chain) in self._dead()
        if dead and self._no_module(chain.span):
            return []  # h1 -> permute(0, 2, 1): a dead tensor going on, no module
        self.free -= {_source(chain)}
        self._untouched(chain)
        if self.second is None:
            return super().chain(chain, depth)
        if _source(chain) == self.second and chain.layer is None:  # h -> ...: h goes on
            lines: list[str] = []
            for step in chain.steps:
                lines += self.step(step, depth)
            return lines
        if self.grow is None or _source(chain) != self.tensor:
            raise Unsupported(f"'{self.tensor}' goes on before '{self.second}' is joined")
        held, self.size, self.grow = self.size, self.grow, None
        lines = super().chain(chain, depth)
        local = re.compile(rf"(?<![\w.]){SIZE}\b")
        if local.search(held) and any(line.strip().startswith(f"{SIZE} = ") for line in lines):
            raise Unsupported(f"'{self.tensor}' goes on before '{self.second}' is joined")
        self.grow, self.size = self.size, held
        return lines

    def body(self, stmts: tuple[ast.ForwardStmt, ...], depth: int) -> list[str]:
        """An alias is joined in the body that makes it (an iteration, a branch); a
        triangle's inner iteration is counted (``tick``)."""
        outer, around = self.alias, self.around
        self.around = stmts
        try:
            lines = super().body(stmts, depth)
        finally:
            self.around = around
        if self.alias is not None and self.alias != outer:
            raise Unsupported(f"the tensor '{self.alias}' is not joined back")
        self._drop_unused()
        if any(stmts == counted.inner.body for counted in self.tr.triangles):
            self.tick += 1  # one inner iteration
        return lines

    def _drop_unused(self) -> None:
        """The end of a second tensor read by nothing kept (``h1 = x -> ... as probe{i}``,
        ``h2 = h1 -> ...``): the threaded tensor's width again, as at the end of the body
        that made it or before a loop or an ``if`` (where the dead chain cannot go on)."""
        dropped = self.second == self.unused or self.second in self._dead()
        if self.unused is not None and dropped and self.grow is not None:
            assert self.second is not None
            self.dropped = (self.second, self.size)
            self.size, self.grow = self.grow, None  # the threaded tensor's width again
            self.second = self.unused = None

    def loop(self, stmt: ast.For, depth: int) -> list[str]:
        self._no_statement_between("a loop")
        self._drop_unused()
        self.fors = (*self.fors, stmt)
        try:
            lines = self._counted_loop(stmt, depth)
        finally:
            self.fors = self.fors[:-1]
        # a triangle in a branch: its running count added to the branch count after it
        lines += total_mark(depth, self.tr.branch_counts, stmt)
        for counted in self.tr.branch_counts:
            found = counted.total(stmt)
            if found is not None:
                self.branch_made[counted.op] += found[1] * self.totals[stmt.span]
        # after the loop a skip is joined as a later input is (``_with_input``)
        self.inputs_ |= self.skips
        return [*zero_mark(depth, self.tr.branch_counts, stmt), *lines]

    def _counted_loop(self, stmt: ast.For, depth: int) -> list[str]:
        """A triangle's loops (``rolled.Triangle``): their headers marked for the counter,
        and its iterations counted as the rolled class counts them."""
        counted = self.tr.triangles
        if not any(stmt.span in (t.outer.span, t.inner.span, t.start.span) for t in counted):
            return super().loop(stmt, depth)
        if any(stmt.span == t.start.span for t in counted):
            self.tick = 0  # counted across the loop outside loops holding the triangle
        lines = super().loop(stmt, depth)
        if self.tr.triangle_of(stmt) is not None:  # the total so far, after the last
            self.totals[stmt.span] = self.tick
        header = f"{INDENT * depth}for "
        at = next((k for k, line in enumerate(lines) if line.startswith(header)), None)
        if at is not None:
            lines[at] = counter_marked(lines[at], stmt, counted)
        return lines

    def _skip(self, stmt: ast.Assign) -> bool:
        """``s = x`` opening the body of a loop outside loops, ``s`` read nowhere else in
        it: a skip kept for after the loop (the last iteration's), whose joins there
        make no module and keep the width (``x = add(x, s)``, checked as a later
        input's) or add the skip's (``x = concat(x, s, dim=-1)``: ``_skip_concat``);
        forward writes it in the loop (``rolled_forward._opening_alias``)."""
        loop = self.fors[0] if len(self.fors) == 1 else None
        if (
            loop is None
            or not self.statements
            or loop.body[0] is not stmt
            or stmt.targets
            or not isinstance(stmt.value, ast.Name)
            or stmt.value.id != self.tensor
            or stmt.target in (self.tensor, *self.inputs_, *self.aliases)
            or self.second is not None
        ):
            return False
        others = [s for s in _flat(loop.body) if s is not stmt]
        return all(stmt.target not in _names(s) for s in others)

    def _module_item(
        self, step: ast.Call, node: Node, made: Call | None, depth: int
    ) -> list[str] | None:
        """A step applying a loop's target over a list the calls give (``for w, a in cfg:
        x -> dense(w) -> a``) where an item builds a module in the class of one call
        (``layer_norm``: ``self.layer_norm1 = nn.LayerNorm(6)``, numbered per operation
        over the instance): the class tests the item the call passed and counts that
        operation's modules, as the IR numbers them::

            if a is nn.LayerNorm:
                layer_norm_count += 1
                setattr(self, f"layer_norm{layer_norm_count}", a(channels))

        The first walks collect the operations built at the step (``item_spans``); the
        last writes the test of each at every visit, the same lines whatever the item (an
        item building no module, ``relu``, runs none). ``Unsupported`` where the module
        is not the item's class built from the running width (or alone), or where
        another step of the instance makes that operation's modules other than as an
        item (their numbers would follow the list). Items of several steps, of several
        loops or of loops nested in each other count on one counter, started once
        (``rolled_block.with_item_counters``). None where the step applies no such
        target, or names its module (``as norm{i}``)."""
        bound = self.env.get(step.func) if step.func in self.tr.locals else None
        if not isinstance(bound, OpValue) or bound.is_model:
            return None
        given = step.func in self.module_params  # norm given layer_norm or relu
        if not given and not any(
            step.func == name for loop in self.fors for name, _ in loop.target.names()
        ):
            return None  # an operation-valued parameter: the class takes it (``act()``)
        if step.layer is not None or self.collect is not None:
            return None  # named by the source (``as norm{i}``), not numbered per operation
        # forward applies the items as functions (``a(x)``) or builds their modules
        refused = [] if given or self.function_items else self._item_refusal(step, bound, depth)
        if not self.module_items:  # every item stateless: the refusal alone, if any
            return (refused or None) if made is None else None
        if made is not None:
            known = self.module_items.get(node.op)
            if (
                known is None
                or made.func != known[0]
                or made.args != ((self.size,) if known[1] else ())
            ):
                raise Unsupported(
                    f"the module '{node.id}' that '{step.func}' builds takes arguments"
                    f" other than the width ({made.text()})"
                )
            self._item_counts[node.op] += 1  # over the instance, as the IR numbers them
            if node.id != f"{node.op}{self._item_counts[node.op]}":
                raise Unsupported(
                    f"'{step.func}' builds '{node.id}', numbered on from other"
                    f" '{node.op}' modules of the block"
                )
            self.item_spans.setdefault(step.span, set()).add(node.op)
        if not self.strict:  # the first walks only collect the operations built here
            return []
        ops = sorted(self.item_spans.get(step.span, ()))
        for op in ops:  # the IR numbers them over the instance, and so does one counter
            other = next(
                (
                    n
                    for n in self.graph.nodes
                    if n.op == op
                    and n.span != step.span
                    and op not in self.item_spans.get(n.span, ())  # another loop's item
                ),
                None,
            )
            if other is not None:
                raise Unsupported(
                    f"'{step.func}' builds '{op}' modules at {step.span} beside"
                    f" '{other.id}' at {other.span}, numbered together"
                )
        pad = INDENT * depth
        lines: list[str] = list(refused)
        for index, op in enumerate(ops):
            cls, sized = self.module_items[op]
            count = f"{op}_count"
            built = f"{step.func}({self.size})" if sized else f"{step.func}()"
            lines += [
                f"{pad}{'elif' if index else 'if'} {step.func} is {cls}:",
                f"{pad}{INDENT}{count} += 1",
                f'{pad}{INDENT}setattr(self, f"{op}{{{count}}}", {built})',
            ]
        return lines

    def _item_refusal(self, step: ast.Call, bound: OpValue, depth: int) -> list[str]:
        """A list's item applied where forward builds its module (``x = a()(x)``: no
        module of it in ``__init__``): the class refuses, by name, a class none of the
        calls' items give (``if a not in (nn.ReLU, nn.LayerNorm):``). Another class built
        there would have been a module with state (``nn.BatchNorm1d(channels)``, a
        ``TypeError`` in forward) or a mode (a fresh ``nn.Dropout`` per forward drops in
        ``eval``); the calls' items are stateless activations or the modules ``__init__``
        counts. The first walks collect each call's item; the last writes the test (none
        where an item is a ``functools.partial``, which no ``in`` test can name)."""
        classes = self.item_classes.setdefault(step.span, [])
        if not self.strict:
            sized = module_item_class(bound.name)  # nn.LayerNorm: no factory alone
            made = sized[0] if sized is not None else module_factory(bound.name)
            shown = made if made is not None and re.fullmatch(r"[\w.]+", made) else None
            if shown not in classes:
                classes.append(shown)
            return []
        if not classes or None in classes:
            return []
        # a stateless activation any call gives at any step is built alike here; a module
        # ``__init__`` counts (``nn.LayerNorm``) only where this step's test counts it
        counted = {cls for cls, _ in self.module_items.values()}
        stateless = [
            c for found in self.item_classes.values() for c in found if c not in {*counted, None}
        ]
        names = list(dict.fromkeys(cast("list[str]", [*classes, *stateless])))
        local = step.func
        if len(names) == 1:
            test, said = f"{local} is not {names[0]}", f"for {local} is {names[0]}"
        else:
            shown_all = f"({', '.join(names)})"
            test, said = f"{local} not in {shown_all}", f"for {local} in {shown_all}"
        why = "the operations the calls' items give"
        return refusal(self.class_name, test, said, why, f"{local}.__name__", depth)

    def _place(self, step: ast.Call, node: Node, made: Call, depth: int, keep: bool) -> list[str]:
        """An unnamed module in a loop: ``setattr(self, f"dense{2 * i + 1}", ...)``, the
        IR's name (``dense3``) a progression in the loop's count that holds at every
        visit of every call (the first walks collect the visits, the last writes it). Where
        loops before its own number the same operation on by counts the calls differ in,
        the name adds theirs (``dense{a + j + 2}`` in a loop after ``range(a)``)."""
        if step.span in self.row_counters and self.collect is None:  # a row's block: b(...)
            self._no_branches_apart(step)
            stem = f"{{{step.func}.__name__.lower()}}"  # a row's block: any class
            if step.func not in self.tr.locals:  # a block by name counted beside the rows
                stem = step.func.lower()
            named = f"{stem}{{{self.counter}[{step.func}]}}"
            self.paths[step.span] = named
            counting = f"{INDENT * depth}{self.row_counters[step.span]}"
            return [counting, *_added_lines(depth, f'setattr(self, f"{named}", ', made, keep)]
        if step.layer is None and self.collect is None:
            self._no_branches_apart(step)
        if step.layer is None and not self.fors and self.collect is None:
            return self._after_loop(step, node, made, depth, keep)
        if step.layer is not None or not self.fors or self.collect is not None:
            return super()._place(step, node, made, depth, keep)
        if self._branch_counted(step):
            return self._numbered_on(step, node, made, depth, keep)
        found = numbered_stem(node, step)
        counted = self._iterations(step)
        earlier = self._earlier(self.fors[0].span, step)
        if self._loops_before(self.fors[0].span, step) and (
            earlier is None or not self._counted(earlier, step)
        ):  # their counts give no number to go on from: a class running both would
            # make this loop's modules under the names of theirs
            raise Unsupported(
                f"an unnamed '{step.func}' module in a loop at {step.span} after a loop "
                "that makes them under an 'if' or in loops nested otherwise"
            )
        earlier = earlier or ()
        if found is None or counted is None:
            raise Unsupported(f"an unnamed '{step.func}' module in a loop at {step.span}")
        target, count, inner, per = counted
        prefix, number = found
        try:
            made_before = self._made_by(earlier, step)
        except Unsupported:  # a count this call's values do not give: no offset holds
            made_before = -1
        self.numbers.setdefault(step.span, set()).add((prefix, count, number, made_before))
        if self.strict:
            nests = inner
            path = None
            if earlier:  # numbered on from the loops before, whatever counts the calls gave
                # (where no call runs both, ``dense{i + 1}`` fits the visits too, but a
                # class built to run both would make the second loop's modules again)
                nests = (*inner, *earlier)
                offset, fixed = _offset(earlier, step, len(inner), self.tr.triangles)
                path = _progression(self.numbers[step.span], target, per, offset, fixed)
            if path is None:
                nests = inner
                path = _progression(self.numbers[step.span], target, per)
            if path is None:
                raise Unsupported(f"an unnamed '{step.func}' module in a loop at {step.span}")
            self.paths[step.span] = path
            if nests:  # the counts it reads, written apart in forward
                self.counted[step.span] = nests
                path = counted_path(path, nests, self.tr)
        else:
            path = node.id
        return _added_lines(depth, f'setattr(self, f"{path}", ', made, keep)

    def _iterations(self, step: ast.Call) -> tuple[str, int, Counts, int] | None:
        """The iterations run so far around the step, as text and number, the loops
        whose counts the text reads (``count_mark``) and the step's operation's nodes an
        iteration makes: the loop's count (``i`` of ``for i
        in range(n)`` or ``for i, w in enumerate(widths)``: ``rolled.count_target``; of a
        loop over items, ``for w in widths``, the name ``rolled.loop_indices`` gives it),
        or in loops nested in each other ``(i * COUNT + j) * COUNT + k`` (each ``COUNT``
        an inner loop's count, ``b`` in ``__init__``, ``self.b`` in forward); in a triangle
        (``rolled.Triangle``), its running count (``_triangle_iterations``); None where a
        count is not a number, or an inner loop's count reads an outer target (``range(i
        + b)``: its iterations differ) in no triangle."""
        triangle = self.tr.triangle_of(self.fors[0]) or self._nested_triangle(self.fors[0])
        per = _made_along(self.fors[-1].body, step, self.fors)
        if per is None:  # an iteration makes a number of them the counts do not give
            return None
        if triangle is not None and _made(triangle.inner, step):
            return self._triangle_iterations(triangle, step)
        targets = [self.indices.get(loop.span, count_target(loop)) for loop in self.fors]
        values = [self.env.get(t) if t is not None else None for t in targets]
        counts: list[int] = [v for v in values if type(v) is int]
        if len(counts) != len(values):
            return None
        outer: set[str] = set()
        text, number = str(targets[0]), counts[0]
        inner: list[tuple[ast.For, ...]] = []
        for depth, loop in enumerate(self.fors[1:], 1):
            outer |= {name for name, _ in self.fors[depth - 1].target.names()}
            if outer & _names(loop.iterable):
                return None
            size = self._runs(loop)
            head = f"({text})" if " + " in text else text
            text = f"{head} * {count_mark(len(inner))} + {targets[depth]}"
            number = number * size + counts[depth]
            inner.append((loop,))
        self.indexed.update(loop.span for loop in self.fors if loop.span in self.indices)
        return text, number, tuple(inner), per

    def _triangle_iterations(
        self, triangle: Triangle, step: ast.Call
    ) -> tuple[str, int, Counts, int] | None:
        """``_iterations`` in a triangle whose inner iterations make nodes of ``step``'s
        operation: its running count (``n``), each iteration making the inner body's; where
        the outer body makes some outside the inner loop too (``x -> dense(w)`` opening a
        stage, the inner loop repeating its blocks), those the outer count (``i``) numbers
        on: ``i + 2 * n``, one node a unit, which the progression of the visits checks."""
        if triangle.top is not None:  # in another loop: the inner loop's modules only
            alone = _made(triangle.top, step) == _made(triangle.inner, step)
            if not alone or self.fors[-1] is not triangle.inner:
                return None
            if not self._counted(((triangle.top,),), step):
                return None
            return triangle.name, self.tick, (), _made(triangle.inner, step)
        if len(self.fors) > 2 or not self._counted(((triangle.outer, triangle.inner),), step):
            return None  # an iteration under an ``if`` makes some: the counts give no number
        inner = _made(triangle.inner, step)
        outside = _made(triangle.outer, step) - inner
        if not outside:
            return (triangle.name, self.tick, (), inner) if len(self.fors) == 2 else None
        index = self.indices.get(triangle.outer.span, count_target(triangle.outer))
        value = self.env.get(index) if index is not None else None
        if type(value) is not int:
            return None
        if triangle.outer.span in self.indices:
            self.indexed.add(triangle.outer.span)
        terms = [_times(outside, str(index)), _times(inner, triangle.name)]
        return " + ".join(terms), outside * value + inner * self.tick, (), 1

    def _earlier(self, span: Span, step: ast.Call) -> Counts | None:
        """The loops before the statement at ``span`` (outside loops) that make unnamed
        modules of ``step``'s operation, each as the loops whose counts multiply to the
        iterations making them (``_nest``); None where one is nested otherwise."""
        nests: list[tuple[ast.For, ...]] = []
        for loop in self._loops_before(span, step):
            found = self._nests(loop, step)
            if found is None:
                return None
            nests += found
        return tuple(nests)

    def _loops_before(self, span: Span, step: ast.Call) -> list[ast.For]:
        """The loops outside loops before ``span`` that make nodes of ``step``'s operation
        (``_made``: named ones too, which the IR numbers alike)."""
        return [
            s
            for s in self.statements or self.top
            if isinstance(s, ast.For) and _before(s.span, span) and _made(s, step)
        ]

    def _nests(self, loop: ast.For, step: ast.Call) -> list[tuple[ast.For, ...]] | None:
        """``_nest`` as a list; of the triangle (``rolled.Triangle``), the outer loop
        alone where its body makes nodes of ``step``'s operation outside the inner loop,
        and both where the inner iterations make some, which its running count counts."""
        held = self._nested_triangle(loop)
        if held is not None:  # its modules all in the inner loop: its running count
            alone = _made(loop, step) == _made(held.inner, step)
            counted = self._counted(((loop,),), step)
            return [(held.outer, held.inner)] if alone and counted else None
        triangle = self.tr.triangle_of(loop)
        if triangle is not None:
            if not self._counted(((loop, triangle.inner),), step):
                return None
            inner = _made(triangle.inner, step)
            return [(loop,)] * (_made(loop, step) > inner) + [(loop, triangle.inner)] * (inner > 0)
        nest = _nest(loop, step)
        return None if nest is None else [nest]

    def _nested_triangle(self, loop: ast.For) -> Triangle | None:
        """The triangle inside ``loop``, a loop outside loops (``rolled.Triangle.top``)."""
        return next(
            (t for t in self.tr.triangles if t.top is not None and t.top.span == loop.span), None
        )

    @staticmethod
    def _counted(nests: Counts, step: ast.Call) -> bool:
        """Whether each iteration of ``nests`` makes its body's nodes of ``step``'s
        operation, none under an ``if``, so their counts give how many."""
        branches = [i for n in nests for i in syntax_items(n[0].body) if isinstance(i, ast.If)]
        return not any(_made_in(branch, step) for branch in branches)

    def _made_by(self, nests: Counts, step: ast.Call, plain: bool = False) -> int:
        """How many nodes of ``step``'s operation ``nests`` make at this call,
        each iteration of the innermost loop making its body's (``_made``); ``plain``:
        those outside its ifs (a running count counts theirs: ``_numbered_on``)."""
        triangles = self.tr.triangles
        return sum(_per(nest, step, triangles, plain) * self._count(nest) for nest in nests)

    def _count(self, nest: tuple[ast.For, ...]) -> int:
        """How many times the innermost of ``nest`` runs at this call (counts multiply; a
        triangle's, its running count after it)."""
        triangle = self.tr.triangle_of(nest[0])
        if triangle is not None and nest == (triangle.outer, triangle.inner):
            if nest[0].span not in self.totals:
                raise Unsupported("a triangle of loops not run before")
            return self.totals[nest[0].span]
        return math.prod(self._runs(loop) for loop in nest)

    def _runs(self, loop: ast.For) -> int:
        """How many times ``loop`` runs at this call: the number its iterable writes
        (``fixed_count``: ``[act, exp]``, whose items need no Python value), else the
        length of its iterable's value."""
        fixed = fixed_count(loop)
        if fixed is not None:
            return fixed
        return len(list(evaluate(self.tr.text(loop.iterable), self.env)))

    def _after_loop(
        self, step: ast.Call, node: Node, made: Call, depth: int, keep: bool
    ) -> list[str]:
        """An unnamed module outside loops whose IR name the calls' counts of the loops
        before it number (``dense3`` at two iterations, ``dense4`` at three):
        ``setattr(self, f"dense{n + 1}", ...)``, after two loops ``dense{a + b + 1}``; one
        the calls name alike is ``self.dense1``."""
        if self._branch_counted(step):
            return self._numbered_on(step, node, made, depth, keep)
        found = numbered_stem(node, step)
        several = len(self._loops_before(step.span, step)) > 1
        nests = self._earlier(step.span, step)
        if (
            found is None
            or nests == ()
            or several
            and (not nests or not self._counted(nests, step))
        ):
            return super()._place(step, node, made, depth, keep)
        if nests is None:
            raise Unsupported(f"an unnamed '{step.func}' module after nested loops at {step.span}")
        prefix, number = found
        if len(nests) == 1:  # the progression in the loop's count (its step from the visits)
            point = (prefix, self._count(nests[0]), number, 0)
        else:  # numbered on from each loop's modules
            point = (prefix, 0, number, self._made_by(nests, step))
        self.numbers.setdefault(step.span, set()).add(point)
        if not self.strict:
            return _added_lines(depth, f'setattr(self, f"{node.id}", ', made, keep)
        alike = len({number for _, _, number, _ in self.numbers[step.span]}) == 1
        if alike and not _varies(nests):  # every call, and every class, names it alike
            return super()._place(step, node, made, depth, keep)
        if len(nests) == 1:
            per = _per(nests[0], step, self.tr.triangles)
            path = _progression(self.numbers[step.span], count_mark(0), per)
        else:
            offset, fixed = _offset(nests, step, 0, self.tr.triangles)
            path = _progression(self.numbers[step.span], "0", 1, offset, fixed)
        if path is None:
            raise Unsupported(f"an unnamed '{step.func}' module after a loop at {step.span}")
        self.paths[step.span] = path
        self.counted[step.span] = nests
        init_path = counted_path(path, nests, self.tr)
        return _added_lines(depth, f'setattr(self, f"{init_path}", ', made, keep)

    def _branch_counted(self, step: ast.Call) -> bool:
        """Whether ``step`` is an unnamed module numbered on from the modules of its
        operation that the branches taken of the ifs before it made (``BranchCount``),
        or a loop in a branch before it (``x -> dense(w)`` after that loop, in the same
        branch)."""
        counted = self._branch_count_of(step)
        if counted is None or step.layer is not None:
            return False
        if any(_before(span, step.span) for span in counted.differing):
            return True
        body = self.statements or self.top
        if any(
            isinstance(item, ast.If) and _on_iterations(item, step, body)
            for item in syntax_items(body)
        ):
            return True  # an if on the count in its loop: earlier iterations took it
        looped = {item.span for item in syntax_items(body) if isinstance(item, ast.For)}
        loops = [span for span, _ in counted.added if span in looped]
        loops += [span for span, _, _ in counted.totals]
        # in the branch holding the loop, after it (another branch names its own alike)
        branches = [b.span for found in ifs_outside_loops(body) for b in found.branches]
        return any(
            _before(span, step.span)
            and any(_within(span, b) and _within(step.span, b) for b in branches)
            for span in loops
        )

    def _branch_count_of(self, step: ast.Call) -> BranchCount | None:
        """The running count of ``step``'s operation (``tr.branch_counts``), if any."""
        op = _operation(step.func)
        return next((c for c in self.tr.branch_counts if c.op == op), None)

    def _numbered_on(
        self, step: ast.Call, node: Node, made: Call, depth: int, keep: bool
    ) -> list[str]:
        """An unnamed module after an if whose branches make different numbers of its
        operation (``if flag: x -> dense(w) else: x -> layer_norm()``, then ``for c in
        rows: x -> dense(c)``): its IR name counts the modules the branch taken made, which
        the running count ``n`` of ``rolled.BranchCount`` holds, beside the loops' counts
        (``dense{n + i + 1}``, after a loop of ``range(a)`` ``dense{n + a + 1}``). Each
        visit's number less the count and the loops' modules outside ifs must follow one
        progression in the loop's count, as ``_place`` checks."""
        counted = self._branch_count_of(step)
        assert counted is not None
        found = numbered_stem(node, step)
        nests = self._earlier(self.fors[0].span if self.fors else step.span, step)
        # in loops nested in each other only where the count counts every module of the
        # operation there (``if j > 0:`` in the inner body): the loops' counts number none
        whole = len(self.fors) > 1 and not _uncounted(self.fors[0].body, step)
        nested = (len(self.fors) > 1 and not whole) or any(
            _made(t.outer, step) and not counted.counts_in(t.outer) for t in self.tr.triangles
        )  # a triangle in a branch adds its iterations to the count
        if found is None or nests is None or nested:
            raise Unsupported(
                f"an unnamed '{step.func}' module at {step.span} numbered on across the branch"
                " taken of an if, in loops nested in each other: name it with 'as'"
            )
        prefix, number = found
        target, count, per = "0", 0, 1  # outside loops: the count and loops' modules only
        if whole:  # the running count alone numbers them
            per = 0
        elif self.fors:
            loop = self.fors[0]
            index = self.indices.get(loop.span, count_target(loop))
            value = self.env.get(index) if index is not None else None
            if index is None or type(value) is not int:
                raise Unsupported(f"an unnamed '{step.func}' module in a loop at {step.span}")
            target, count, per = index, value, _made_here(loop.body, step)
            if loop.span in self.indices:
                self.indexed.add(loop.span)
            # a loop in a branch adds its iterations to the count (``m += 1``): the
            # iterations before this one are the count's, not the target's (``dense{m +
            # 1}``; ``dense{m + i + 1}`` counted them twice, fuzz seed 130000271)
            looped = counted.made(loop) * count
            per = 0 if counted.made(loop) else per
        if not self.fors or whole:
            looped = 0
        before = self._made_by(nests, step, plain=True) + self.branch_made[counted.op] + looped
        closed = _closed_count(self.fors, step, counted)
        if closed is not None and self.branch_made[counted.op] != closed[1] * count + closed[2]:
            self.open_counts.add(step.span)  # not the closed form's count: the running one
        self.numbers.setdefault(step.span, set()).add((prefix, count, number, before))
        if not self.strict:
            return _added_lines(depth, f'setattr(self, f"{node.id}", ', made, keep)
        offset, fixed = _offset(nests, step, 0, self.tr.triangles, plain=True)
        if counted.added:  # no if makes its branches' modules apart: the loops count them
            offset = f"{counted.name} + {offset}" if offset else counted.name
        path = _progression(self.numbers[step.span], target, per, offset, fixed, level=True)
        if path is None:
            raise Unsupported(f"an unnamed '{step.func}' module in a loop at {step.span}")
        closed = _closed_count(self.fors, step, counted)
        if closed is not None and not per and step.span not in self.open_counts:
            # ``dense{i}``: in the branch of ``if i > 0:`` the count is ``i - 1``, so the
            # number is a step in ``i``, as a PyTorch engineer would write it
            index, branch_made, constant = closed
            rest, _ = _offset(nests, step, 0, self.tr.triangles, plain=True)
            points = {
                (stem, at, number, before - branch_made * at - constant)
                for stem, at, number, before in self.numbers[step.span]
            }
            path = _progression(points, index, branch_made + per, rest, fixed) or path
        self.paths[step.span] = path
        self.counted[step.span] = nests
        init_path = counted_path(path, nests, self.tr)
        return _added_lines(depth, f'setattr(self, f"{init_path}", ', made, keep)

    def branch(self, stmt: ast.If, depth: int) -> list[str]:
        self._no_statement_between("an if")
        self._drop_unused()
        start = zero_mark(depth, self.tr.branch_counts, stmt)  # n = 0: a running count
        if self.loops_around:
            return [*start, *super().branch(stmt, depth)]
        return [*start, *self._branch_outside_loops(stmt, depth)]

    def _branch_outside_loops(self, stmt: ast.If, depth: int) -> list[str]:
        """An ``if`` outside loops: each branch threads the one tensor on, under its
        name, and joins back what it makes apart; no second tensor is pending across
        it, and no branch adds children to a container filled in order (``as
        features.*``), whose later indices would depend on the branch taken."""
        if self.second is not None or self.renamed is not None:
            raise Unsupported(f"an if outside loops while a second tensor is made at {stmt.span}")
        starred = [
            item.layer
            for item in syntax_items(stmt)
            if isinstance(item, ast.Call | ast.Chain) and (item.layer or "").endswith(".*")
        ]
        if starred:
            raise Unsupported(
                f"a child of '{starred[0]}' made in an if outside loops at {stmt.span}"
            )
        tensor = self.tensor
        if not tensor:  # a network's forward opening with the if: no width held yet
            raise Unsupported(f"an if outside loops before any tensor is threaded at {stmt.span}")
        lines = super().branch(stmt, depth)
        if self.second is not None or self.renamed is not None or self.tensor != tensor:
            raise Unsupported(
                f"an if outside loops whose branch leaves another tensor at {stmt.span}"
            )
        return lines

    def _no_branches_apart(self, step: ast.Call) -> None:
        """``Unsupported`` where an ``if`` outside loops before ``step`` (an unnamed
        module) has branches making different numbers of its operation's nodes: the IR
        numbers it on across the branch taken (``dense3`` after a branch of two, ``dense2``
        after one of one), which one name cannot write; an ``if`` with no ``else`` makes
        none where it is not taken; unless a running count numbers it (``_numbered_on``)."""
        if self._branch_counted(step):
            return
        for branching in ifs_outside_loops(self.statements or self.network_statements):
            if not _before(branching.span, step.span):
                continue
            made = {_made_in(b.body, step) for b in branching.branches}
            if branching.branches[-1].test is not None:
                made.add(0)
            if len(made) > 1:
                raise Unsupported(
                    f"an unnamed '{step.func}' module at {step.span} numbered on across the"
                    f" branch taken of the if at {branching.span}: name it with 'as'"
                )

    def _no_statement_between(self, what: str) -> None:
        if self.alias is not None:
            raise Unsupported(f"{what} between '{self.alias} = {self.tensor}' and its join")

    def _untouched(self, stmt: object) -> None:
        """Only its join reads an alias: between ``r = x`` and ``x = add(x, r)`` only the
        threaded tensor goes on, and after the join ``r`` is not read again."""
        used = sorted(_names(stmt) & self.aliases)
        if used:
            raise Unsupported(f"a use of '{used[0]}' other than its join")
        if self.renamed is not None and self.renamed in _names(stmt):
            raise Unsupported(f"a use of '{self.renamed}' after it goes on as '{self.tensor}'")

    def _call_steps(self, value: ast.Call, source: str) -> tuple[ast.Call, ...] | None:
        """``Unit(x, width)``: a step of ``source``; or an operation of ``source`` alone
        given it several times (``subtract(x, x)``, ``multihead_attention(x, x, heads,
        dim)``), its tensors left out as the step's input: the rest bind as the
        compiler binds them after its tensors (``_given``), checked at every visit."""
        node = next((n for n in self.pending if n.span == value.span), None)
        if node is None:
            return None
        count = len(node.inputs)
        if count == 1:
            return _steps_from(value, source)
        tensors = value.args[:count]
        if count < 1 or any(not isinstance(a, ast.Name) or a.id != source for a in tensors):
            return None
        return (replace(value, args=value.args[count:]),)

    def _second_renamed(self, stmt: ast.Assign) -> bool:
        """``h2 = gelu(h1)`` of the second tensor ``h1`` (its steps checked by the caller):
        it goes on under a new name, which the join then names (``x = add(x, h2)``); a
        join of the old name is refused there (not one operation of both)."""
        return (
            self.second is not None
            and not stmt.targets
            and stmt.target not in (self.tensor, self.second, self.renamed, *self.inputs_)
            and stmt.target not in self.aliases
        )

    def _goes_on_as(self, stmt: ast.Assign) -> bool:
        """``y = x -> ...`` while a second tensor is made apart: the threaded tensor goes
        on under a new name, which the join then names (``x = add(y, h)``)."""
        value = stmt.value
        return (
            self.second is not None
            and self.grow is not None
            and self.renamed is None
            and not stmt.targets
            and stmt.target not in (self.tensor, self.second, *self.inputs_)
            and isinstance(value, ast.Chain)
            and value.layer is None
            and _source(value) == self.tensor
        )

    def _with_input(self, stmt: ast.Assign) -> bool:
        """``x = add(x, c)`` of a later input ``c`` (``def forward(x, c)``): no module, and
        the running width kept (checked); forward writes it from each call's."""
        value = stmt.value
        names = {a.id for a in getattr(value, "args", ()) if isinstance(a, ast.Name)}
        if (
            stmt.targets
            or stmt.target != self.tensor
            or self.second is not None
            or not isinstance(value, ast.Call)
            or not names & self.inputs_
            or not names <= {self.tensor, *self.inputs_}
            or len(names) != len(value.args)
        ):
            return False
        node = self._node(value)
        if node.layer is not None or _makes_module(node):
            raise Unsupported(f"'{value.func}' of a later input makes a module")
        before = len(self.pending)
        self._suffixes(node)
        last = self.graph.nodes[self.graph.nodes.index(node) + before - len(self.pending)]
        if self._concrete_size() != self._width(last.output):
            if not self._skip_concat(value, node, names):
                raise Unsupported(f"'{value.func}' of a later input changes the width")
            self.size = f"{self.size} + {_skip_width_name(next(iter(names & self.skips)))}"
            if self._concrete_size() != self._width(last.output):
                raise Unsupported(f"'{value.func}' of a skip is not both widths' sum")
        return True

    def _skip_width(self, skip: str, depth: int) -> list[str]:
        """``s_width = channels`` as the iteration that saves the skip starts: after the
        loop it is the last iteration's, which a concat of the skip adds (``n`` of no
        iteration leaves ``s`` unbound, which the compiler refuses)."""
        name = _skip_width_name(skip)
        taken = name in self.env or name in self.tr.locals or name in self.tr.constants
        if taken and skip not in self.skips:  # (a later iteration's: the one made before)
            raise Unsupported(f"the skip width's local '{name}' is a name of the block")
        self.env[name] = self._concrete_size()
        return [f"{INDENT * depth}{name} = {self.size}"]

    def _skip_concat(self, value: ast.Call, node: Node, names: set[str]) -> bool:
        """``x = concat(x, s, dim=-1)`` of the threaded tensor and one skip, on the
        width's axis: the width after it is both widths' sum."""
        dim = plain(node.args.get("dim"))
        rank = len(self.values[node.inputs[0]].shape or ())
        return (
            value.func == "concat"
            and len(value.args) == 2
            and len(names & self.skips) == 1
            and names == {self.tensor, *(names & self.skips)}
            and isinstance(dim, int)
            and rank > 0
            and dim % rank == self.axis % rank
        )

    def _with_threaded(self, stmt: ast.Assign) -> bool:
        """``h2 = matmul(h1, x)`` of the second tensor ``h1`` and the threaded ``x`` (fuzz
        seed 36000088): the second goes on as ``h2``, which the join then names; no
        module, and the running width kept (checked at every visit)."""
        value = stmt.value
        if (
            self.grow is not None  # the two widths are texts apart: not one kept width
            or not self._second_renamed(stmt)
            or not isinstance(value, ast.Call)
        ):
            return False
        names = [a.id for a in value.args if isinstance(a, ast.Name)]
        if set(names) != {self.tensor, self.second}:
            return False
        node = self._node(value)
        if node.layer is not None or _makes_module(node):
            raise Unsupported(
                f"'{value.func}' of '{self.tensor}' and '{self.second}' makes a module"
            )
        before = len(self.pending)
        self._suffixes(node)
        last = self.graph.nodes[self.graph.nodes.index(node) + before - len(self.pending)]
        if self._concrete_size() != self._width(last.output):
            raise Unsupported(
                f"'{value.func}' of '{self.tensor}' and '{self.second}' changes the width"
            )
        self.second = stmt.target
        return True

    def _unused(self, stmt: ast.Assign) -> bool:
        """``h1 = conv_transpose2d(x, 8)`` whose name no other statement of the forward
        reads or binds (the per-call classes compute it and drop it). Only where the
        walk knows the whole forward (a block's; a network's walk is not told it)."""
        if not self.statements:
            return False
        others = [s for s in _flat(self.statements) if s is not stmt]
        return not stmt.targets and all(stmt.target not in _names(s) for s in others)

    def _dead(self) -> frozenset[str]:
        """The tensors no statement that matters reads (``_dead_names``), found once; a
        tensor only loops bind that the last statement returns (``_loop_result``) counts
        as read by nothing kept: its statements that make no module are forward's only."""
        if self.dead is None:
            kept = {self.tensor, *self.inputs_}
            self.dead = _dead_names(_loop_result(self.statements, kept)[0], kept)
        return self.dead

    def _returns_made_apart(self, name: str) -> bool:
        """``return h1`` of the tensor a loop's last iteration bound without a module
        (``for i in range(n): h1 = clamp(x, min=0.0, max=1.0).sigmoid``): forward
        computes it as each call's class does, ``__init__`` builds nothing for it, and
        its width must be the threaded tensor's; or of one the last iteration made by
        modules apart from the threaded tensor (``h = x -> dense(width) as head{i}``,
        dropped at the end of each iteration: ``_drop_unused``), whose width text is then
        the block's output width. Checked against the IR at every visit; a loop of no
        iteration leaves it unbound, which the compiler refuses for a call. One made
        without a module whose width is not the threaded tensor's (``h1 = glu(x)``: half
        of it) has the width its last binding gave it, from the threaded tensor's then
        (``_returned_width``)."""
        if name != _loop_result(self.statements, set())[1]:
            return False
        if name not in self.free:  # made by modules: ``h = x -> dense(width) as head{i}``
            made, text = self.dropped or ("", "")
            if made != name:
                return False
            self.size = text  # the block's output width: the returned tensor's
        width = self._width(self.graph.output)
        if width != self._concrete_size():
            if name not in self.free:
                raise Unsupported(f"the returned '{name}' has a width the walk does not know")
            self.size = self._returned_width(name, width)
        return True

    def _returned_width(self, name: str, width: int) -> str:
        """The width text of the returned ``name``, bound last in the loop's body from the
        threaded tensor by operations that make no module (``h1 = global_avg_pool(x)``,
        ``h1 -> glu()``): half or twice the threaded tensor's width there, else the IR's
        number, the first that holds at every visit of every call. Nothing of ``__init__``
        reads it: it tells the block's output width apart from the local a loop leaves
        (``LoopWidths``), so an enclosing class reads the width from its own IR."""
        size = self.size if _ATOMIC.fullmatch(self.size) else f"({self.size})"
        texts = [f"{size} // 2", f"2 * {size}", str(width)]
        try:
            return self._choose(("returned", name), texts, width, name)
        except Unsupported:
            raise Unsupported(f"the returned '{name}' has a width the walk does not know") from None

    def _feeds_module(self, stmt: ast.Assign) -> bool:
        """Whether a later statement of the body that reads what ``stmt`` binds makes a
        module (``h1 = unsqueeze(x, 1)``, then ``h2 = rms_norm(h1)``): ``stmt`` then starts
        a second tensor, whose width that module is built from."""
        index = next((i for i, s in enumerate(self.around) if s is stmt), None)
        for later in self.around[index + 1 :] if index is not None else ():
            if not _names(later) & _bound(stmt):
                continue
            inside = [n for n in self.pending if _within(n.span, later.span)]
            if any(n.layer is not None or _makes_module(n) for n in inside):
                return True
        return False

    def _no_module(self, span: Span) -> bool:
        """Whether the statement at ``span`` makes no module at this visit (its nodes, the
        next pending ones inside it, are then taken as they are)."""
        count = 0
        while count < len(self.pending) and _within(self.pending[count].span, span):
            count += 1
        inside = self.pending[:count]
        if any(n.layer is not None or _makes_module(n) for n in inside):
            return False
        del self.pending[:count]
        return True

    def _grows(self, stmt: ast.Assign) -> bool:
        """Whether the second tensor ``stmt`` starts is kept apart from the running width:
        where it is joined back by a ``concat`` (the first later statement of the body
        that rebinds the threaded tensor), or where the threaded tensor goes on before
        the join (``x -> relu()``)."""
        index = next((i for i, s in enumerate(self.around) if s is stmt), None)
        for later in self.around[index + 1 :] if index is not None else ():
            if isinstance(later, ast.ChainStmt) and _source(later.chain) == self.tensor:
                return True
            if (
                isinstance(later, ast.Assign)
                and later.target not in (self.tensor, stmt.target)
                and isinstance(later.value, ast.Chain)
                and _source(later.value) == self.tensor
            ):
                return True  # y = x -> ...
            if isinstance(later, ast.Assign) and later.target == self.tensor:
                return isinstance(later.value, ast.Call) and later.value.func == "concat"
        return False

    def _concat_join(self, alias: ast.Assign) -> bool:
        """Whether the alias ``alias`` binds is joined back by a ``concat`` (the first later
        statement of the body that rebinds the threaded tensor and reads the alias)."""
        index = next((i for i, s in enumerate(self.around) if s is alias), None)
        for later in self.around[index + 1 :] if index is not None else ():
            if (
                isinstance(later, ast.Assign)
                and later.target == self.tensor
                and alias.target in _names(later.value)
            ):
                return isinstance(later.value, ast.Call) and later.value.func == "concat"
        return False

    def _advance(self, text: str, width: int, depth: int) -> list[str]:
        """While a concat's second tensor is made, its width is a text of its own (no
        line): the local still holds the threaded tensor's for the join."""
        if self.grow is None:
            return super()._advance(text, width, depth)
        self.size = text
        return []

    def _join(self, value: ast.Expr, depth: int) -> list[str]:
        """``x = add(x, h)``: no module, and the width the second tensor has; ``x =
        concat(x, h, dim=1)``: the sum of both widths (``channels = channels + growth``)."""
        kept = self.second if self.second is not None else self.alias
        aliased = self.second is None
        args = [a.id for a in getattr(value, "args", ()) if isinstance(a, ast.Name)]
        grows = self.grow is not None and len(args) != 2  # concat(x, h, h): not the sum
        if not isinstance(value, ast.Call) or set(args) != {self.tensor, kept} or grows:
            raise Unsupported(f"'{kept}' is not joined by one operation of both")
        node = self._node(value)
        if node.layer is not None or _makes_module(node):
            raise Unsupported(f"the join '{value.func}' makes a module")
        before = len(self.pending)
        self._suffixes(node)
        last = self.graph.nodes[self.graph.nodes.index(node) + before - len(self.pending)]
        width = self._width(last.output)
        self.second = self.alias = None
        if self.renamed is not None:  # x = add(y, h): x again, y read no more
            self.aliases |= {self.tensor}
            renamed = {self.tensor: self.renamed}
            args = [renamed.get(a, a) for a in args]
            self.tensor, self.renamed = self.renamed, None
        if self.grow is not None:
            texts = {self.tensor: self.grow, kept: self.size}
            if aliased:  # r = x: the threaded tensor's width is the text apart
                texts = {self.tensor: self.size, kept: self.grow}
            self.size, self.grow = self.grow, None
            terms = [t if _ATOMIC.fullmatch(t) else f"({t})" for t in (texts[a] for a in args)]
            key = ("join", value.span, " + ".join(terms))  # narrowed per text of the terms
            text = self._choose(key, [" + ".join(terms), self.size], width, value.func)
            return self._advance(text, width, depth)
        if self._concrete_size() != width:
            raise Unsupported(f"the join '{value.func}' changes the width")
        return []

    def _layer(self, step: ast.Call, node: Node) -> tuple[Call | None, str | None]:
        """An operation an operation-valued parameter gave: nothing, or ``act()`` named; a
        layer's factory is given the layer's sizes (``norm(channels)``: ``factory_call``)."""
        for param, found in self.graph.block_ops.items():
            if node.id not in found.nodes:
                continue
            if node.layer is None and param in self.params_built:  # norm(channels)
                return super()._layer(step, node)
            if node.layer is None:
                return None, None
            if emitter(node.op).init is None:
                return Call(param), None
            made, _ = super()._layer(step, node)
            return (factory_call(param, made, node) if made else Call(param)), None
        return super()._layer(step, node)


def _skip_width_name(skip: str) -> str:
    return f"{skip}_width"


def _steps_from(value: ast.Expr, source: str) -> tuple[ast.Call, ...] | None:
    """The steps of ``value`` from the tensor ``source``: a chain's (``h = x -> ...``), or
    one call of it alone (``h = Unit(x, width) as units{i}``, a step of ``x``)."""
    if isinstance(value, ast.Chain):
        if isinstance(value.source, ast.Name) and value.source.id == source:
            return value.steps
        return None
    if (
        isinstance(value, ast.Call)
        and value.args
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == source
    ):
        return (replace(value, args=value.args[1:]),)
    return None


def _varies(nests: Counts) -> bool:
    """Whether a loop of ``nests`` runs a count its iterable does not write as a number
    (``range(n)``, ``widths``): a class built at other arguments runs it otherwise."""
    return any(fixed_count(loop) is None for nest in nests for loop in nest)


def _progression(
    found: set[tuple[str, int, int, int]],
    target: str,
    per: int,
    offset: str = "",
    fixed: int = 0,
    level: bool = False,
) -> str | None:
    """``dense{2 * i + 1}``: the one name whose number is ``k * i + base`` at every visit
    (``k`` from two visits at different counts, else the unnamed steps of the op in one
    iteration, ``per``); None where the visits follow no such progression. ``offset``: the
    modules of the op that loops before made (``_offset``), the last of each visit's
    numbers, are counted first (``dense{a + j + 2}``); a ``target`` of ``0``: none
    counted in a loop around it (``dense{a + b + 1}``); ``fixed``: the modules of the op
    that loops before made at a count written as a number (``range(2)``, ``[act,
    sigmoid]``), which ``offset`` leaves out and the base holds (``dense{n + 3}``, not
    ``dense{n + 2 + 1}``); ``level``: the number may stay at every count (``dense{n +
    1}`` in a loop whose modules of the op are under ifs, which a running count holds)."""
    prefixes = {prefix for prefix, _, _, _ in found}
    points = sorted(
        {(count, number - (before if offset else 0)) for _, count, number, before in found}
    )
    least = 0 if level else 1
    if len(prefixes) != 1 or per < least or offset and any(b < 0 for _, _, _, b in found):
        return None
    (i1, n1), (i2, n2) = points[0], points[-1]
    k = per if i1 == i2 else (n2 - n1) // (i2 - i1)
    base = n1 - k * i1
    if k < least or any(number != k * count + base for count, number in points):
        return None
    base += fixed if offset else 0  # the numbered loops' modules, left out of the points
    term = target if k == 1 else f"{k} * ({target})" if " " in target else f"{k} * {target}"
    if target == "0" or k == 0:
        term = ""
    if offset:
        term = f"{offset} + {term}" if term else offset
    expr = term if base == 0 else f"{term} + {base}" if base > 0 else f"{term} - {-base}"
    return f"{prefixes.pop()}{{{expr or base}}}"


def _offset(
    nests: Counts,
    step: ast.Call,
    first: int,
    triangles: tuple[Triangle, ...],
    plain: bool = False,
) -> tuple[str, int]:
    """The modules of ``step``'s operation that ``nests`` make, as text marking their
    counts from the ``first`` mark on (``a + 2 * b``), and those of the nests whose count
    is a number (``range(2)``, ``[act, sigmoid]``: ``fixed_count``), left out of the text."""
    terms = []
    fixed = 0
    for index, nest in enumerate(nests, first):
        per = _per(nest, step, triangles, plain)
        if plain and not per:  # its modules are under ifs: the running count holds them
            continue
        counts = [fixed_count(loop) for loop in nest]
        if all(count is not None for count in counts):
            fixed += per * math.prod(c for c in counts if c is not None)
            continue
        mark = count_mark(index)
        terms.append(mark if per == 1 else f"{per} * {mark}")
    return " + ".join(terms), fixed


def _per(
    nest: tuple[ast.For, ...], step: ast.Call, triangles: tuple[Triangle, ...], plain: bool = False
) -> int:
    """The nodes of ``step``'s operation an iteration of the innermost loop of ``nest``
    makes; a triangle's outer loop alone (``_nests``), those outside its inner loop;
    ``plain``: those outside its ifs (``_made_here``)."""
    if plain:
        return _made_here(nest[-1].body, step)
    per = _made(nest[-1], step)
    for triangle in triangles:
        if nest == (triangle.outer,):
            per -= _made(triangle.inner, step)
    return per


def _times(factor: int, name: str) -> str:
    return name if factor == 1 else f"{factor} * {name}"


def _before(earlier: Span, later: Span) -> bool:
    """Whether ``earlier`` ends before ``later`` starts."""
    return (earlier.end_line, earlier.end_column) <= (later.line, later.column)


def _nest(loop: ast.For, step: ast.Call) -> tuple[ast.For, ...] | None:
    """The loops whose counts multiply to the iterations that write ``step``'s operation
    unnamed: ``loop`` alone, or it and the one loop nested in it that writes every such
    call of its body, run alike at each iteration (its count reads no outer target:
    ``range(b)``, not ``range(i)``); None where they are nested otherwise."""
    inner = [s for s in syntax_items(loop.body) if isinstance(s, ast.For) and _made(s, step)]
    if not inner:
        return (loop,)
    nested = inner[0]
    targets = {name for name, _ in loop.target.names()}
    if (
        len(inner) != 1
        or nested not in loop.body  # not under an ``if``
        or _nest(nested, step) != (nested,)  # nor deeper
        or _made(nested, step) != _made(loop, step)
        or targets & _names(nested.iterable)
    ):
        return None
    return loop, nested


def _made_along(
    stmts: tuple[ast.ForwardStmt, ...], step: ast.Call, fors: tuple[ast.For, ...]
) -> int | None:
    """How many nodes of ``step``'s operation one run of ``stmts`` makes where ``step``
    is made: of an ``if`` around ``step``, the branch holding it (the same at every
    iteration where the tests read no target of the loops ``fors``: ``if up:``), of
    another ``if``, what every branch makes alike; None where that is not one number
    (``if i == 0:`` around a branch making more, or an ``if`` elsewhere whose branches
    make different numbers). The IR numbers the branch that runs only."""
    total = 0
    targets = {name for loop in fors for name, _ in loop.target.names()}
    for stmt in stmts:
        if not isinstance(stmt, ast.If):
            total += _made_in(stmt, step)
            continue
        arms = [branch.body for branch in stmt.branches]
        if stmt.branches[-1].test is not None:
            arms.append(())  # no ``else``: a run that takes no branch makes none
        counts = [_made_along(arm, step, fors) for arm in arms]
        held = [k for k, branch in enumerate(stmt.branches) if _within(step.span, branch.span)]
        choosing = stmt.branches[: held[0] + 1] if held else ()  # the tests tried up to it
        read = set().union(*(_names(b.test) for b in choosing if b.test is not None))
        if held and not targets & read:
            made = counts[held[0]]
        elif len(set(counts)) == 1:
            made = counts[0]
        else:
            return None
        if made is None:
            return None
        total += made
    return total


def ifs_outside_loops(stmts: tuple[ast.ForwardStmt, ...]) -> list[ast.If]:
    """The ``if`` statements of ``stmts`` outside loops, those in their branches too."""
    found: list[ast.If] = []
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            found.append(stmt)
            for branch in stmt.branches:
                found += ifs_outside_loops(branch.body)
    return found


def _made_here(stmts: tuple[ast.ForwardStmt, ...], step: ast.Call, loops: bool = True) -> int:
    """The nodes of ``step``'s operation ``stmts`` make outside their ifs, and in those
    ifs whose every branch makes them alike (``_alike``); ``loops``: those of their loops
    too (not where each loop counts its own: ``branch_counts``)."""
    made = 0
    for stmt in stmts:
        if isinstance(stmt, ast.For) and not loops:
            continue
        if not isinstance(stmt, ast.If):
            made += _made_in(stmt, step)
        elif _alike(stmt, step):
            made += _made_in(stmt.branches[0].body, step)
    return made


def _alike(found: ast.If, step: ast.Call) -> bool:
    """Whether every branch of ``found`` makes as many nodes of ``step``'s operation,
    with no if in them making any (``if up: x -> dense(w).relu else: x ->
    dense(w).tanh``): a loop's count numbers them, no running count."""
    nested = [i for b in found.branches for i in syntax_items(b.body) if isinstance(i, ast.If)]
    return not _branches_differ(found, step) and not any(_made_in(i, step) for i in nested)


def branch_counts(
    body: tuple[ast.ForwardStmt, ...], taken: set[str], counted: tuple[Triangle, ...] = ()
) -> tuple[BranchCount, ...]:
    """The running counts (``rolled.BranchCount``), one for each operation that an unnamed
    module of ``body`` numbers on from an if before it whose branches make different
    numbers of it (an ``if`` with no ``else`` makes none where no test holds; ``dense``
    and ``layer_norm`` both after ``if flag: x -> dense(w) else: x -> layer_norm()``), in
    the order of their first such modules, with the modules each branch of every if
    makes outside the ifs in it, and their names: ``n``, ``m``, ``count``, ``n2``, ...,
    the first no name of ``body``, of ``taken`` nor of a count before is. A loop in a
    branch adds its modules each iteration, an if in that loop each of its branches' (as
    any if's); a triangle there (of ``counted``) its running count after its outer loop,
    where only its inner loop makes them."""
    items = list(syntax_items(body))
    ifs = [item for item in items if isinstance(item, ast.If)]
    steps = [
        item
        for item in items
        if isinstance(item, ast.Call) and item.layer is None and lookup(item.func) is not None
    ]
    used = set(taken) | RESERVED
    used |= {item for item in items if isinstance(item, str) and item.isidentifier()}
    more = (f"n{k}" for k in range(2, len(used) + 3))
    names = (n for n in ("n", "m", "count", *more) if n not in used)
    counts: dict[str, BranchCount] = {}
    for step in steps:
        op = _operation(step.func)
        if op in counts or emitter(op).init is None:
            continue  # counted already, or no module, no name (``relu()``)
        differing = tuple(
            found.span
            for found in ifs
            if _before(found.span, step.span)
            and (_branches_differ(found, step) or _looped(found, step, body))
            or _on_iterations(found, step, body)
        )
        if not differing:
            continue
        added: list[tuple[Span, int]] = []
        for found in ifs:
            for branch in found.branches:
                made = _made_here(branch.body, step, loops=False)
                if made and not _alike(found, step):
                    added.append((branch.span, made))
        # a loop in an if's branch counts its own iterations (``n += 1`` ending each):
        # the branch taken runs it as many times as that call's count says
        totals: list[tuple[Span, Triangle, int]] = []
        for loop in _branch_loops(body, step):
            triangle = next((t for t in counted if loop.span == t.inner.span), None)
            if triangle is not None and triangle.top is None and not _in_loops(triangle, step):
                totals.append((triangle.outer.span, triangle, _made(loop, step)))
                continue  # n += m after the triangle: its own count counted them
            made = _made_here(loop.body, step, loops=False)
            if made:
                added.append((loop.span, made))
        spans = [span for span, _ in added] + [span for span, _, _ in totals]
        first = next(
            (stmt.span for stmt in body if any(_within(span, stmt.span) for span in spans)), None
        )
        counts[op] = BranchCount(op, next(names), first, tuple(added), differing, tuple(totals))
    return tuple(counts.values())


def _on_iterations(found: ast.If, step: ast.Call, body: tuple[ast.ForwardStmt, ...]) -> bool:
    """Whether ``found``, in the innermost loop around ``step``, tests a target of the
    loops around it (``if i > 0:``, ``if i % 2 == 0:``, an item of the loop's rows) and
    its branches make different numbers of ``step``'s operation: the iterations before
    took it a number of times no one step in the count gives, so the IR numbers
    ``step`` on from the running count of the branches taken, wherever in the loop's
    body ``step`` is (``dense{m + 1}``: ``m += 1`` ending the branch)."""
    loops = [item for item in syntax_items(body) if isinstance(item, ast.For)]
    around = [loop for loop in loops if _within(found.span, loop.span)]
    holding = [loop for loop in loops if _within(step.span, loop.span)]
    if not holding or holding[-1].span not in {loop.span for loop in around}:
        return False
    if _in_branch_loop(found, step):
        return False  # a loop in a branch adds its iterations: counted in none here
    targets = {name for loop in around for name, _ in loop.target.names()}
    read = set().union(*(_names(b.test) for b in found.branches if b.test is not None))
    return bool(targets & read) and _branches_differ(found, step)


def _closed_count(
    fors: tuple[ast.For, ...], step: ast.Call, counted: BranchCount
) -> tuple[str, int, int] | None:
    """Where ``step`` is in the first branch of an ``if`` straight in the body of ``for i
    in range(n)``, the one loop around it, that tests ``i < e`` or ``i <= e`` (``e``
    reading no target: every iteration before took the branch too) or ``i > c`` or ``i
    >= c`` (``c`` a whole number: the first ``c + 1`` or ``c`` took none), the running
    count counting that branch's modules alone (an ``else`` making none): the loop's
    target ``i``, the modules of the operation the branch makes (``k``) and the count's
    constant part, so that the count there is ``k * i + constant`` and the name can
    read ``i`` alone (``dense{i}`` in ``if i > 0:``, ``dense{2 * i + 1}`` in ``if i <
    k:``). None otherwise."""
    if len(fors) != 1 or counted.totals:
        return None
    loop = fors[0]
    iterable, index = loop.iterable, count_target(loop)
    if index is None or not isinstance(iterable, ast.Call) or iterable.func != "range":
        return None
    if len(iterable.args) != 1 or iterable.keywords:
        return None
    found = next(
        (s for s in loop.body if isinstance(s, ast.If) and _within(step.span, s.span)), None
    )
    if found is None or not _within(step.span, found.branches[0].span):
        return None
    if len(found.branches) > 2 or len(found.branches) == 2 and found.branches[1].test:
        return None  # an if, and an else or none (an elif tests more)
    made = dict(counted.added)
    if len(made) != len(counted.added) or set(made) - {b.span for b in found.branches}:
        return None  # the count counts other branches' modules too
    taken = made.get(found.branches[0].span, 0)
    if len(found.branches) == 2 and made.get(found.branches[1].span, 0):
        return None  # an else making some: one count reads better than two forms
    test = found.branches[0].test
    if not isinstance(test, ast.Compare) or not isinstance(test.left, ast.Name):
        return None
    if test.left.id != index:
        return None
    targets = {name for name, _ in loop.target.names()}
    if test.op in ("<", "<=") and not targets & _names(test.right):
        return index, taken, 0  # every iteration before took this branch
    right = test.right
    if test.op not in (">", ">=") or not isinstance(right, ast.Number):
        return None
    if type(right.value) is not int or right.value < 0:
        return None
    first = right.value + (test.op == ">")  # the iterations before it took no module
    return index, taken, -taken * first


def _uncounted(stmts: tuple[ast.ForwardStmt, ...], step: ast.Call) -> int:
    """The nodes of ``step``'s operation ``stmts`` make that no running count counts
    (``branch_counts``): outside the ifs whose branches differ, and in the loops of
    those branches (each iteration making them)."""
    total = 0
    for stmt in stmts:
        if isinstance(stmt, ast.For):
            total += _uncounted(stmt.body, step)
        elif not isinstance(stmt, ast.If) or _alike(stmt, step):
            total += _made_in(stmt, step)
        else:
            for branch in stmt.branches:
                looped = [s for s in branch.body if isinstance(s, ast.For)]
                total += sum(_made(loop, step) for loop in looped)
                total += _uncounted(tuple(s for s in branch.body if isinstance(s, ast.If)), step)
    return total


def _in_loops(triangle: Triangle, step: ast.Call) -> bool:
    """Whether ``triangle``'s outer loop makes nodes of ``step``'s operation outside its
    inner loop, which its running count does not count."""
    return _made(triangle.outer, step) != _made(triangle.inner, step)


def _branch_loops(body: tuple[ast.ForwardStmt, ...], step: ast.Call) -> list[ast.For]:
    """The loops in the branches of ``body``'s ifs outside loops (those nested in them
    too) that make nodes of ``step``'s operation: only the branch taken runs them, so the
    IR numbers the later ones on from as many as that call's counts made."""
    return [
        loop
        for found in ifs_outside_loops(body)
        for branch in found.branches
        for loop in branch.body
        if isinstance(loop, ast.For)
        for loop in [loop, *(s for s in syntax_items(loop.body) if isinstance(s, ast.For))]
        if _made(loop, step)
    ]


def _in_branch_loop(found: ast.If, step: ast.Call) -> bool:
    """Whether a branch of ``found`` holds a loop making nodes of ``step``'s operation:
    however alike its branches read, the number made is the branch's loop's count."""
    return any(
        isinstance(item, ast.For) and _made(item, step)
        for branch in found.branches
        for item in syntax_items(branch.body)
    )


def _looped(found: ast.If, step: ast.Call, body: tuple[ast.ForwardStmt, ...]) -> bool:
    """Whether ``found`` makes nodes of ``step``'s operation in a loop outside loops
    that ``step`` is not in: however alike its branches, the loop's count gives no number
    of them where the branch taken decides (``_counted``), and the running count does."""
    return _made_in(found, step) > 0 and any(
        isinstance(stmt, ast.For)
        and _within(found.span, stmt.span)
        and not _within(step.span, stmt.span)
        for stmt in body
    )


def _branches_differ(found: ast.If, step: ast.Call) -> bool:
    """Whether the branches of ``found`` make different numbers of ``step``'s operation."""
    if _in_branch_loop(found, step):
        return True
    made = {_made_in(branch.body, step) for branch in found.branches}
    if found.branches[-1].test is not None:
        made.add(0)
    return len(made) > 1


def _made(loop: ast.For, step: ast.Call) -> int:
    """How many nodes of ``step``'s operation the loop's body makes (``_made_in``)."""
    return _made_in(loop.body, step)


def _made_in(node: object, step: ast.Call) -> int:
    """How many nodes of ``step``'s operation ``node`` makes: its calls, named or not, and
    suffixes (``.relu``). The IR numbers an operation's nodes in order whatever their
    ``as`` names (``fc0`` is ``dense1``, the unnamed ``dense`` after it ``dense2``), so a
    named one takes a number too."""
    op = _operation(step.func)
    names = [
        item.func if isinstance(item, ast.Call) else item.name
        for item in syntax_items(node)
        if isinstance(item, ast.Call | ast.Suffix)
    ]
    return sum(_operation(name) == op for name in names)


def _operation(name: str) -> str:
    """The operation ``name`` calls (``layernorm``: ``layer_norm``), or ``name``."""
    spec = lookup(name)
    return spec.name if spec is not None else name


def _flat(stmts: tuple[ast.ForwardStmt, ...]) -> list[object]:
    """Every statement of ``stmts``, those of loop and ``if`` bodies too, and the loops'
    headers and the branches' tests apart from their bodies."""
    out: list[object] = []
    for stmt in stmts:
        if isinstance(stmt, ast.For):
            out += [replace(stmt, body=()), *_flat(stmt.body)]
        elif isinstance(stmt, ast.If):
            for branch in stmt.branches:
                out += [replace(branch, body=()), *_flat(branch.body)]
        else:
            out.append(stmt)
    return out


def _dead_names(stmts: tuple[ast.ForwardStmt, ...], kept: set[str]) -> frozenset[str]:
    """The tensors the forward binds that only statements binding such tensors read (a
    chain ``h1 = arange(p); h2 = hardtanh(h1)`` that nothing reads): no return, loop
    or ``if`` test, nor any statement binding another tensor, reads them. The per-call
    classes compute them and drop them; the rolled ``__init__`` need not follow them."""
    flat = _flat(stmts)
    bound = [_bound(s) for s in flat]
    dead = set().union(*bound) - kept
    changed = True
    while changed:
        changed = False
        for stmt, names in zip(flat, bound, strict=True):
            if names and names <= dead:
                continue
            read = _names(stmt) & dead
            if read:
                dead -= read
                changed = True
    return frozenset(dead)


def _loop_result(
    stmts: tuple[ast.ForwardStmt, ...], kept: set[str]
) -> tuple[tuple[ast.ForwardStmt, ...], str | None]:
    """``stmts`` without a last ``return h1`` of a tensor only loops bind (``for i in
    range(n): h1 = ...``), and that name; else ``stmts`` as they are and None. ``kept``:
    names that are no such tensor (the threaded one, the later inputs)."""
    if len(stmts) < 2 or not isinstance(stmts[-2], ast.For) or not stmts[-2].body:
        return stmts, None
    last, loop = stmts[-1], stmts[-2]
    if not isinstance(last, ast.Return) or not isinstance(last.value, ast.Name):
        return stmts, None
    name = last.value.id
    # bound last in the loop's body, so the threaded tensor has its width then
    closing = loop.body[-1]
    if not isinstance(closing, ast.Assign | ast.ChainStmt) or name not in _bound(closing):
        return stmts, None
    top = _flat(tuple(s for s in stmts if not isinstance(s, ast.For)))
    if name in kept or any(name in _bound(s) for s in top):
        return stmts, None
    return stmts[:-1], name


def _bound(stmt: object) -> set[str]:
    """The tensors a statement binds: an assignment's targets, a chain's source."""
    if isinstance(stmt, ast.Assign):
        return {stmt.target, *(n for n, _ in stmt.targets)}
    if isinstance(stmt, ast.ChainStmt) and isinstance(stmt.chain.source, ast.Name):
        return {stmt.chain.source.id}
    return set()


def _source(chain: ast.Chain) -> str | None:
    return chain.source.id if isinstance(chain.source, ast.Name) else None
