"""The lifted graph: catalog operations recovered from a traced PyTorch module.

Between tracing (``aurane.lift.trace``) and the block structure (``aurane.lift.structure``)
a model is a flat list of ``Op`` records in execution order. Each is one catalog
operation applied to tensor values, with its arguments in catalog terms (sizes per sample,
axes counting the batch axis), the module path of the layer it stands for (the name that
keeps the state dict keys) and the module calls it ran inside (the scope, from which blocks
are rebuilt). What could not be expressed is a ``Gap``: the module path, the layer or
function, why, and the line of Python when known.
"""

from __future__ import annotations

from typing import Any

from aurane.records import field, record

# what a gap says and what stands in for it, read by the lowerer, the structure and the writer
SHARED = (
    "it is applied twice, sharing its weights between the calls: a program names each "
    "layer once (tie= shares a dense or embedding weight with another layer)"
)
GAP_ORIGIN = "not expressed: "  # the origin of the identity standing in for a gap


@record(frozen=True)
class Scope:
    """One module call on the stack: ``key`` is unique per call (``layer1.0``, ``act@1``)."""

    key: str
    path: str  # the module's attribute path from the root ("" for the root)
    cls: type


@record
class Op:
    id: str  # the value it produces (unique in the graph)
    op: str  # catalog operation name
    inputs: tuple[str, ...]  # tensor values, in the operation's order
    args: dict[str, Any]  # catalog arguments by name (given ones only)
    shape: tuple[int, ...]  # per-sample output shape (batch axis excluded)
    dtype: str
    layer: str | None = None  # module (or parameter) path this op stands for
    scope: tuple[Scope, ...] = ()  # the module calls it ran inside, outermost first
    origin: str = ""  # what it was traced from: "nn.Conv2d", "torch.cat", "Tensor.view"
    group: str | None = None  # split/chunk: the siblings of one call share it
    pieces: int = 0  # split/chunk: how many pieces the call gives
    where: str | None = None  # file:line of the Python that made it, when known


@record(frozen=True)
class Gap:
    """A part of the module the language cannot express."""

    path: str  # module path ("" for the root module)
    what: str  # the layer class or function: "nn.Conv2d(padding_mode='reflect')", "torch.roll"
    why: str
    where: str | None = None  # file:line of the Python responsible

    def describe(self) -> str:
        place = f"{self.path or '<root>'}: " if self.path is not None else ""
        line = f" ({self.where})" if self.where else ""
        return f"{place}{self.what}: {self.why}{line}"


@record
class LiftedGraph:
    """A traced module as catalog operations, before blocks are rebuilt."""

    ops: list[Op]
    input: str  # the (first) input value's id
    input_shape: tuple[int, ...]  # per sample
    input_dtype: str
    output: str  # the value the program returns (the first, when it returns several)
    output_name: str = ""  # the output's name in the module's result ("logits", "0")
    dropped_outputs: list[str] = field(default_factory=list)  # other outputs, by name
    inputs: tuple[str, ...] = ()  # every input value's id, in the forward's order
    outputs: tuple[str, ...] = ()  # every returned value, in the module's order
    output_names: tuple[str, ...] = ()  # and their names in the module's result
    gaps: list[Gap] = field(default_factory=list)
    ties: dict[str, str] = field(default_factory=dict)  # layer path -> layer it shares weights with
    notes: list[str] = field(default_factory=list)

    def producer(self) -> dict[str, Op]:
        return {op.id: op for op in self.ops}

    def uses(self) -> dict[str, list[Op]]:
        found: dict[str, list[Op]] = {}
        for op in self.ops:
            for name in op.inputs:
                found.setdefault(name, []).append(op)
        return found


def summarize(gaps: list[Gap]) -> list[tuple[Gap, int]]:
    """Gaps of one kind (the same layer or function, the same reason) reported once, at
    their first place, with how many places have them."""
    found: dict[tuple[str, str], list[Gap]] = {}
    for gap in gaps:
        found.setdefault((gap.what, gap.why), []).append(gap)
    return [(group[0], len(group)) for group in found.values()]
