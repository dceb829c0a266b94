"""The rebuilt program's records: blocks of steps (the ``Program`` the emitter writes) and
the ``Region`` (one module call of the trace) each block is rebuilt from
(``aurane.lift.structure``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch import nn

from aurane.lift.graph import Gap, Op, Scope
from aurane.lift.inputs import Input
from aurane.records import field, record

# names the written program uses itself: no block or block parameter takes one
RESERVED = frozenset({"torch", "nn", "F", "self", "input", "model", "rt", "math"})


# -- the program ---------------------------------------------------------------------------------


@record
class Step:
    """One statement-sized piece of a body (before it is grouped into chains)."""

    kind: str  # "op", "call" or "chain"
    inputs: tuple[str, ...]
    output: str
    op: Op | None = None  # "op"
    ops: tuple[Op, ...] = ()  # "chain": the layers in order
    block: BlockDef | None = None  # "call"
    call: dict[str, Any] = field(default_factory=dict)  # "call": argument values
    region: Region | None = None  # "call": the instance (until blocks are defined)
    name: str | None = None  # the layer name, relative to the enclosing block
    residual: bool = False
    repeat: int = 1  # "call": copies, ``repeat(B, n) as P`` or (``loop_from``) a loop
    loop_from: int | None = None  # a loop: calls named ``name`` + loop_from, + 1, ...
    outputs: tuple[str, ...] = ()  # "call" of a block returning several: every output
    exprs: dict[tuple[int, str, int], str] = field(default_factory=dict)  # numbers as parameters


@record
class ParamDef:
    name: str
    default: Any = None
    has_default: bool = False


@record
class BlockDef:
    name: str
    params: list[ParamDef]
    steps: list[Step]
    input: str
    output: str
    cls: type | None = None
    comment: str | None = None
    inputs: tuple[str, ...] = ()  # the top model's several inputs (values), else ()
    outputs: tuple[str, ...] = ()  # and its several outputs


@record
class Program:
    blocks: list[BlockDef]  # in definition order (callees first)
    top: BlockDef
    input_shape: tuple[int, ...]
    input_dtype: str
    gaps: list[Gap] = field(default_factory=list)  # found while rebuilding blocks
    gaps_text: list[str] = field(default_factory=list)  # every gap, for the --partial header
    inputs: list[Input] = field(default_factory=list)  # several: by name, in forward's order
    output_names: tuple[str, ...] = ()  # several: the module's names for top.outputs


# -- regions --------------------------------------------------------------------------------------


@record(eq=False)
class Region:
    scope: Scope | None  # None: the root
    module: nn.Module
    items: list[Any] = field(default_factory=list)  # Op | Region, in execution order
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    kind: str = ""  # "block", "chain", "container", "inline"
    steps: list[Step] = field(default_factory=list)  # block regions: the body
    height: int = 0
    definition: BlockDef | None = None  # block regions: the block it became
    arguments: dict[str, Any] = field(default_factory=dict)  # and its call's arguments
    residual: bool = False  # called with .residual (its trailing add moved to the call)

    @property
    def path(self) -> str:
        return self.scope.path if self.scope is not None else ""

    def ops(self) -> Iterator[Op]:
        for item in self.items:
            if isinstance(item, Region):
                yield from item.ops()
            else:
                yield item


__all__ = ["RESERVED", "BlockDef", "ParamDef", "Program", "Region", "Step"]
