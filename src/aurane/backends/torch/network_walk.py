"""The walk of a network's ``__init__`` (``rolled.roll``, called from ``program.py``):
outside loops the network roller's own (``rolled._Walk``: several tensors, each width
kept by name); inside a loop the block roller's forms (``block_walk.BlockWalk``), so a
loop body that threads a second tensor rolls as in a block:

- an inline residual ``h = x -> ... as convs{i}``, ``x = add(x, h)`` (width kept) or
  ``x = concat(x, h, dim=1)`` (``channels = channels + growth``);
- an alias ``r = x``, the threaded tensor going on, then ``x = add(x, r)``;
- another tensor bound outside the loop, or a later input, joined to the threaded one by
  an operation that makes no module and keeps the width (``x = add(x, emb)``);
- an unnamed module, by the IR's name (``setattr(self, f"conv2d{2 * i + 2}", ...)``);
- modules of another tensor bound before the loop (``e = dense(e, width) as mix{i}``,
  ``t = cond -> dense(width) as temb{i}``), from its own width text, with no line; where
  the loop changes that tensor's width, from a local of its own (``e_channels``);
- a per-stage skip read after the loop only (``s = x``, ``s = x -> ... as
  laterals{i}``), its width its text or its own (``s_channels = channels``) where the
  local changes after it;
- a tensor no line reads (a buffer, ``h0 = buffer(w0)``, registered per iteration) or one
  made without a module and returned after the loop (``h0 = tanh(x)``, ``return h0``),
  the walk told the forward's statements as a block's is (``BlockWalk.statements``).

An operation-valued parameter the variants give differently is applied from the module
it stores (``applied_operations``: ``self.op1 = op1()``, ``x = self.op1(x)``).

A second tensor that the body reads again is joined back in it (else ``the tensor 'h'
is not joined back``), as in a block; one no other statement of the loop reads is a skip.

The variants' forwards are their own (unrolled), which must read alike as for any network;
where they do not (a loop run a different number of times), forward is written with the
source's loops (``network_forward.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from aurane.backends.torch.block_walk import BlockWalk, _flat, _names, _steps_from
from aurane.backends.torch.emit_common import Call
from aurane.backends.torch.folded_sizes import _same_shape, passes_input_sizes
from aurane.backends.torch.modules import INDENT, attribute_namespace
from aurane.backends.torch.named import module_class
from aurane.backends.torch.names import Namespace
from aurane.backends.torch.rolled import (
    RESERVED,
    SIZE,
    TOP,
    Unsupported,
    _given,
    _Walk,
    evaluate,
)
from aurane.backends.torch.rolled_forward import with_applied
from aurane.ir.blocks import operation_params
from aurane.ir.graph import Graph, Node
from aurane.ops import lookup
from aurane.records import replace
from aurane.semantics.values import OpValue
from aurane.syntax import ast
from aurane.syntax.items import syntax_items


class NetworkWalk(BlockWalk):
    """``rolled._Walk`` outside loops, ``BlockWalk`` inside them."""

    apart = False  # walking a tensor other than the threaded one: its width is a text

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # ``s = x`` in a loop, read after it only: (its ``choices`` key, its width at
        # the last visit) by name
        self.kept: dict[str, tuple[Any, int]] = {}
        # the width texts of the tensors bound before the network loop being walked, and
        # the own local of each whose width that loop changes (``e = dense(e, 2 * width)
        # as mix{i}``: ``e_channels``), by name
        self.before: dict[str, str] = {}
        self.carried: dict[str, str] = {}
        # the IR's values of steps whose shape a boolean or string the network's
        # arguments give may change (``avgpool(2, ceil_mode=c)``): the name and the step
        self.flag_steps: dict[str, tuple[str, ast.Call]] = {}

    @staticmethod
    def applied_operations(
        network: ast.Model,
        variants: Sequence[tuple[ast.Model, Graph]],
        envs: Sequence[Mapping[str, Any]],
        texts: Sequence[list[str]],
        constants: Mapping[str, ast.Expr],
    ) -> tuple[list[list[str]], list[str]]:
        """An operation-valued parameter the variants give differently (``op1=tanh``,
        ``op1=gelu``), applied by the network itself (``-> op1``): each variant's
        statement of a node it applies written as a block's (``rolled_forward.with_applied``:
        ``x = self.op1(x)``), the constructor storing the module (``self.op1 = op1()``).
        Only where every such node is what the module class the variant passes computes
        built with no argument (``module_class``: not ``softmax(dim=-1)``), so a class
        built with another operation applies it as its own class would; a parameter the
        network passes on to a block is left as it was (folded, the variants then differ)."""
        given = [_operations(network, variant, constants) for variant, _ in variants]
        differ = {
            name
            for name in set().union(*given)
            if all(name in ops for ops in given) and len({ops[name] for ops in given}) > 1
        }
        graphs = []
        for (_, graph), ops, env in zip(variants, given, envs, strict=True):
            values = {name: OpValue(ops[name], False) for name in sorted(differ)}
            found = operation_params(network, values, {}, graph, {})
            for name in sorted(differ):
                param = found.get(name)
                nodes = graph.node_by_id
                if (
                    param is None
                    or param.passed  # passed on to a block: its class takes it
                    or any(
                        module_class(nodes[n].op, nodes[n].args) != env[name] for n in param.nodes
                    )
                ):
                    differ.discard(name)  # folded as before: the variants' forwards differ
                    continue
            graphs.append((graph, found))
        if not differ:
            return list(texts), []
        attrs = attribute_namespace()  # no module's name, nor an nn.Module attribute
        attrs.claim(n.layer.split(".")[0] for g, _ in graphs for n in g.nodes if n.layer)
        attrs.claim(n.id for g, _ in graphs for n in g.nodes)
        applied = {name: attrs.allocate(name) for name in sorted(differ)}
        try:
            written = [
                with_applied(replace(g, block_ops={n: found[n] for n in applied}), lines, applied)
                for (g, found), lines in zip(graphs, texts, strict=True)
            ]
        except Unsupported:  # a forward not of one statement per layer: as it was
            return list(texts), []
        stores = [f"{INDENT * 2}self.{attr} = {name}()" for name, attr in applied.items()]
        return written, stores

    def assign(self, stmt: ast.Assign, depth: int) -> list[str]:
        if depth == TOP:
            return _Walk.assign(self, stmt, depth)
        if not self.tensor and self._rebinds(stmt):
            # a loop opening the forward (``for w in widths: x = Block(x, w)``) threads
            # the input from here, as a chain of it (``x -> Block(w)``) does
            self.switch(stmt.target, depth)
        if self._kept(stmt):  # s = x or s = x -> ..., read after the loop only
            return self._keep(stmt, depth)
        if not stmt.targets and (found := self._of_another(stmt.value, self.inputs_)):
            return self._another(found, stmt.target, depth)
        return super().assign(stmt, depth)

    def chain(self, chain: ast.Chain, depth: int) -> list[str]:
        if depth == TOP:
            return _Walk.chain(self, chain, depth)
        if found := self._of_another(chain, self.inputs_):  # e -> relu(): e goes on
            return self._another(found, found[0], depth)
        return super().chain(chain, depth)

    def _of_another(
        self, value: ast.Expr, sources: Collection[str]
    ) -> tuple[str, tuple[ast.Call, ...]] | None:
        """In a loop, the steps of one of ``sources`` (a tensor bound before it, or by an
        earlier statement of this form, other than the threaded one: ``t = cond ->
        dense(width) as temb{i}``, ``e = dense(e, width) as mix{i}``): its name and
        steps; None for another statement."""
        source = value.source if isinstance(value, ast.Chain) else None
        if isinstance(value, ast.Call) and value.args:
            source = value.args[0]
            node = next((n for n in self.pending if n.span == value.span), None)
            if node is None or len(node.inputs) != 1:  # a join, or a call of several
                return None
        if not isinstance(source, ast.Name) or source.id not in sources:
            return None
        if isinstance(value, ast.Chain) and value.layer is not None:
            return None
        steps = _steps_from(value, source.id)
        return None if steps is None else (source.id, steps)

    def _another(
        self, found: tuple[str, tuple[ast.Call, ...]], target: str, depth: int, carry: bool = True
    ) -> list[str]:
        """Its modules, built from its own width's text (no line: the local is the
        threaded tensor's); ``target`` has the width it ends with, and may be joined to
        the threaded tensor without a module, as a tensor bound before the loop."""
        source, steps = found
        taken = {self.tensor, self.second, self.alias, self.renamed, *self.aliases}
        if target in taken:
            raise Unsupported(f"an assignment to '{target}' the roller does not write")
        assert self.widths is not None
        held = self.tensor, self.size
        self.tensor, self.size, self.apart = source, self._known(source), True
        try:
            lines = [line for step in steps for line in self.step(step, depth)]
            self.widths[target] = self.size
        finally:
            self.apart = False
            self.tensor, self.size = held
        self.inputs_ |= {target}
        return lines + (self._carry(target, depth) if carry else [])

    def _carry(self, name: str, depth: int) -> list[str]:
        """``e_channels = 2 * width`` where a statement of the loop changes the width text
        of ``name``, bound before it: its own local carries the width to the next
        iteration, so the iterations read alike; the first walk to find it tells the
        next ones to start the local before the loop (``_carried_locals``)."""
        assert self.widths is not None and self.fors
        text, start = self.widths[name], self.before.get(name)
        own = self.carried.get(name)
        if own is None and start is not None and text != start:
            own = self.carried[name] = self._own_local(name)
            self.choices[("carried", self.fors[0].span, name)] = [own]
        if own is None or text == own:
            return []
        self.env[own] = int(evaluate(text, self.env))
        self.widths[name] = own
        return [f"{INDENT * depth}{own} = {text}"]

    def _kept(self, stmt: ast.Assign) -> bool:
        """``s = x`` or ``s = x -> ... as laterals{i}`` in a loop whose body reads ``s``
        nowhere else (a skip kept for after the loop, the last iteration's): not an alias
        or a second tensor the body joins back."""
        value = stmt.value
        alias = isinstance(value, ast.Name) and value.id == self.tensor
        if (
            stmt.targets
            or not (alias or self._of_another(value, {self.tensor}))
            or stmt.target == self.tensor
            or self.second is not None
            or self.alias is not None
            or not self.fors
        ):
            return False
        others = [s for s in _flat(self.fors[0].body) if s is not stmt]
        return all(stmt.target not in _names(s) for s in others)

    def _keep(self, stmt: ast.Assign, depth: int) -> list[str]:
        """The skip's modules (as another tensor's: no line) and its width: its text
        where that still holds after the loop in every variant, else a local of its own
        (``s_channels = channels``), the first walks deciding which (``choices``)."""
        assert self.widths is not None
        lines: list[str] = []
        if isinstance(stmt.value, ast.Name):  # s = x: no module, no node
            self.widths[stmt.target] = self.size
        else:
            found = self._of_another(stmt.value, {self.tensor})
            assert found is not None
            lines = self._another(found, stmt.target, depth, carry=False)  # kept apart below
        text = self.widths[stmt.target]
        own = self._own_local(stmt.target)
        key = ("kept", stmt.span)
        texts = self.choices.setdefault(key, [text, own])
        width = int(evaluate(text, self.env))
        self.kept[stmt.target] = (key, width)
        if not texts or texts[0] != own:
            return lines
        self.env[own] = width
        self.widths[stmt.target] = own
        return [*lines, f"{INDENT * depth}{own} = {text}"]

    def _own_local(self, tensor: str) -> str:
        """The local holding ``tensor``'s own width, ``s_channels``; ``s_channels_`` where
        that would shadow a name the class reads (a parameter, a loop target, a constant,
        a class), so the network still rolls."""
        tr = self.tr
        taken = RESERVED | tr.locals | set(tr.constants) | set(tr.classes.values())
        return Namespace(taken).fresh(f"{tensor}_{SIZE}")

    def _advance(self, text: str, width: int, depth: int) -> list[str]:
        if self.apart:
            self.size = text
            return []
        return super()._advance(text, width, depth)

    def _returns_made_apart(self, name: str) -> bool:
        """``return x`` of a tensor the network bound outside loops before another
        statement threaded a tensor of its own (``h0 = buffer(w0)``, read by nothing, then
        ``return x``): nothing more to build, ``x`` threaded again with its width kept."""
        if super()._returns_made_apart(name):
            return True
        if self.loops_around or self.widths is None or name not in self.widths:
            return False
        self.switch(name, TOP)
        return True

    def body(self, stmts: tuple[ast.ForwardStmt, ...], depth: int) -> list[str]:
        if depth == TOP and not self.top:  # the forward's: its loops number modules on
            # and tell the tensors made in a loop that nothing reads (``h0 =
            # buffer(w0)``, registered state; ``h0 = tanh(x)`` returned after the loop):
            # dropped at the end of their iteration, as in a block
            self.top = self.statements = stmts
        return super().body(stmts, depth)

    def _place(self, step: ast.Call, node: Node, made: Call, depth: int, keep: bool) -> list[str]:
        """An unnamed module in a loop is the block roller's ``setattr(self,
        f"conv2d{i + 2}", ...)``, the IR's name; forward, each variant's own, must read
        it by that name (checked as for one outside loops)."""
        lines = super()._place(step, node, made, depth, keep)
        if step.layer is None and depth > TOP and self.collect is None:
            self.unnamed.add(node.id)
        return lines

    def loop(self, stmt: ast.For, depth: int) -> list[str]:
        """The tensors a loop body may join without a module: those bound before it. A
        skip kept for after a loop keeps its width text where it still holds after the
        loop and any later one, inner loops of its own stage included (the local may
        change after ``s = x``), else a first walk narrows it to its own local (and the
        IR's number is written meanwhile)."""
        assert self.widths is not None
        carry: list[str] = []
        if depth == TOP:
            named = set(self.widths) | set(self.later)
            self.inputs_ = frozenset(named - {self.tensor})
            self.before = {n: self.widths[n] for n in sorted(self.inputs_) if self.widths.get(n)}
            carry = self._carried_locals(stmt)
        self._narrow(lambda text, _: re.search(rf"\b{SIZE}\b", text) is not None)
        lines = super().loop(stmt, depth)
        if self.second is not None:  # the local held its width: not the threaded tensor's
            raise Unsupported(f"the tensor '{self.second}' is not joined back")
        if depth == TOP:
            self._narrow(lambda text, width: evaluate(text, self.env) != width)
            self.before, self.carried = {}, {}
        return carry + lines

    def _carried_locals(self, stmt: ast.For) -> list[str]:
        """``e_channels = width`` before the loop, for each tensor bound before it whose
        width a first walk found the loop changes: the modules of it in the loop are built
        from its own local (``nn.Linear(e_channels, 2 * width)``), which each statement
        rebinding it sets (``_carry``), so the iterations read alike."""
        assert self.widths is not None
        lines: list[str] = []
        for name, text in self.before.items():
            own = self.choices.get(("carried", stmt.span, name), [None])[0]
            if own is None:
                continue
            self.carried[name] = own
            if text != own:
                self.env[own] = int(evaluate(text, self.env))
                self.widths[name] = own
                lines.append(f"{INDENT * TOP}{own} = {text}")
        return lines

    def _loop_changed(self, value: str, origin: tuple[ast.Origin, ...]) -> bool:
        """A network's sizes are plain numbers (its variants' ``input_shape``), so the
        block roller's test (a size reading the block's input sizes) never holds. Here:
        ``Unsupported`` where a step the IR's value ``value`` comes from, made in a loop
        or an ``if`` branch other than those of ``origin`` (where the reader was made),
        changes a size on an axis the class does not thread (``maxpool(2)`` in ``for i in
        range(n)``, then ``flatten() -> dense(4)``): the class would write the variants'
        number there (``nn.Linear(channels * 8, 4)``), wrong at another count or
        condition. Only through steps whose sizes follow their inputs' (not before an
        ``adaptive_avg_pool((7, 7))``)."""
        own = {frame.span for frame in origin}
        threaded = self.axis - 1 if self.axis > 0 else self.axis  # of the sample's axes
        made_by = {node.output: node for node in self.graph.nodes}
        pending, seen = [value], set()
        while pending:
            node = made_by.get(pending.pop())
            if node is None or node.output in seen:
                continue
            seen.add(node.output)
            frames = [frame for frame in node.origin if frame.span not in own]
            where = ""
            if frames:
                kind = "the loop" if frames[0].kind == "loop" else "the if"
                where = f"{kind} at {frames[0].span.line}:{frames[0].span.column}"
            elif node.output in self.flag_steps:
                flag, step = self.flag_steps[node.output]
                where = f"the flag '{flag}' of '{step.func}' at {step.span.line}:{step.span.column}"
            if where and node.inputs and self._resizes(node):
                raise Unsupported(
                    f"the sizes of '{value}' on an axis the class does not track change"
                    f" with {where}: a module reading them would be built with the number"
                    " each variant gives"
                )
            if passes_input_sizes(self.graph, node, threaded):
                pending.extend(node.inputs)
        return False

    def _flags(self, step: ast.Call, node: Node) -> None:
        """Also marks a step reading a boolean or string the network's arguments give
        that may change its shape (``flag_steps``): a network's graph has no block
        parameters, so the walk's own values tell them (``avgpool(2, ceil_mode=c)`` at
        ``c = true`` on a length of 15 gives the 8 ``c = false`` gives on 16)."""
        super()._flags(step, node)
        spec = lookup(node.op) if node.op not in ("block", "repeat") else None
        try:
            given = _given(spec, step) if spec is not None else {}
        except Unsupported:
            given = {}
        exprs = given or {str(i): arg for i, arg in enumerate(step.args)}
        exprs |= {k.name: k.value for k in step.keywords}
        for arg, expr in exprs.items():
            read = [
                item.id
                for item in syntax_items(expr)
                if isinstance(item, ast.Name) and isinstance(self.env.get(item.id), bool | str)
            ]
            if not read:
                continue
            value = self.env[read[0]]
            flipped = isinstance(expr, ast.Name) and isinstance(value, bool) and arg in given
            if (  # a bare boolean argument of an operation: its shape tells
                flipped
                and spec is not None
                and _same_shape(self.graph, node, spec, {arg: not value})
            ):
                continue
            self.flag_steps[node.output] = (read[0], step)
            return

    def _resizes(self, node: Node) -> bool:
        """Whether ``node``'s output differs from its first input in rank or in a size
        on an axis other than the batch's and the threaded one."""
        before = self.values[node.inputs[0]].shape
        after = self.values[node.output].shape
        if before is None or after is None or len(before) != len(after):
            return True
        threaded = self.axis if self.axis > 0 else len(before) + self.axis
        pairs = enumerate(zip(before, after, strict=True))
        return any(a != b for axis, (a, b) in pairs if axis not in (0, threaded))

    def _narrow(self, stale: Callable[[str, int], bool]) -> None:
        """Each kept skip whose width text is ``stale`` here (given the skip's width):
        not its text any more."""
        assert self.widths is not None
        for name, (key, width) in self.kept.items():
            text = self.widths.get(name, "")
            if text and stale(text, width):
                self.choices[key] = [t for t in self.choices[key] if t != text]
                self.widths[name] = ""


def _operations(
    network: ast.Model, variant: ast.Model, constants: Mapping[str, ast.Expr]
) -> dict[str, str]:
    """The operations ``variant`` gives the network's parameters (``op1=tanh``, or the
    default, a constant naming one: ``act0``), by parameter."""
    base = variant.base
    assert base is not None
    exprs: dict[str, ast.Expr] = {p.name: p.default for p in network.params if p.default}
    exprs.update({p.name: arg for p, arg in zip(network.params, base.args, strict=False)})
    exprs.update({k.name: k.value for k in base.keywords})
    found: dict[str, str] = {}
    for name, expr in exprs.items():
        seen: set[str] = set()
        while isinstance(expr, ast.Name) and expr.id in constants and expr.id not in seen:
            seen.add(expr.id)
            expr = constants[expr.id]
        if isinstance(expr, ast.OpRef) and not expr.is_model:
            found[name] = expr.name
        elif isinstance(expr, ast.Name) and lookup(expr.id) is not None:
            found[name] = expr.id
    return found
