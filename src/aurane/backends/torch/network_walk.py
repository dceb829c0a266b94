"""The walk of a network's ``__init__`` (``rolled.roll``, called from ``program.py``):
outside loops the network roller's own (``rolled._Walk``: several tensors, each width
kept by name); inside a loop the block roller's forms (``block_walk.BlockWalk``), so a
loop body that threads a second tensor rolls as in a block:

- an inline residual ``h = x -> ... as convs{i}``, ``x = add(x, h)`` (width kept) or
  ``x = concat(x, h, dim=1)`` (``channels = channels + growth``);
- an alias ``r = x``, the threaded tensor going on, then ``x = add(x, r)``;
- another tensor bound outside the loop, or a later input, joined to the threaded one by
  an operation that makes no module and keeps the width (``x = add(x, emb)``).

A second tensor is joined back in the loop's body (else ``the tensor 'h' is not joined
back``), as in a block.

The variants' forwards are their own (unrolled), which must read alike as for any network.
"""

from __future__ import annotations

from aurane.backends.torch.block_walk import BlockWalk
from aurane.backends.torch.emit_common import Call
from aurane.backends.torch.rolled import TOP, Unsupported, _Walk
from aurane.ir.graph import Node
from aurane.syntax import ast


class NetworkWalk(BlockWalk):
    """``rolled._Walk`` outside loops, ``BlockWalk`` inside them."""

    def assign(self, stmt: ast.Assign, depth: int) -> list[str]:
        if depth == TOP:
            return _Walk.assign(self, stmt, depth)
        return super().assign(stmt, depth)

    def chain(self, chain: ast.Chain, depth: int) -> list[str]:
        if depth == TOP:
            return _Walk.chain(self, chain, depth)
        return super().chain(chain, depth)

    def _place(self, step: ast.Call, node: Node, made: Call, depth: int, keep: bool) -> list[str]:
        """An unnamed module in a loop is the block roller's ``setattr(self,
        f"conv2d{i + 2}", ...)``, the IR's name; forward, each variant's own, must read
        it by that name (checked as for one outside loops)."""
        lines = super()._place(step, node, made, depth, keep)
        if step.layer is None and depth > TOP and self.collect is None:
            self.unnamed.add(node.id)
        return lines

    def loop(self, stmt: ast.For, depth: int) -> list[str]:
        """The tensors a loop body may join without a module: those bound before it."""
        if depth == TOP:
            named = set(self.widths or ()) | set(self.later)
            self.inputs_ = frozenset(named - {self.tensor})
        lines = super().loop(stmt, depth)
        if self.second is not None:  # the local held its width: not the threaded tensor's
            raise Unsupported(f"the tensor '{self.second}' is not joined back")
        return lines
