"""What a generated program is made of: ``Value``, ``Step``, ``Program``, their ``.aur``
text (``literal``, ``call_text``) and the generator's size tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from aurane.ops.spec import OpSpec
from aurane.records import field, record

INT64_MAX = 2**63 - 1
SIZES = (1, 2, 3, 4, 5, 6, 8)
WIDTHS = (1, 2, 3, 4, 6, 8, 12, 16)
FLOAT_DTYPES = ("float32", "float32", "float32", "float64")
# sizes past what torch can index (int64): each must be rejected with a located error
HUGE = (2**31, 2**32, 2**62, 2**63, 2**64, 4294967296)
# operations written only in graph form (several inputs, no input, or joined tensors)
GRAPH_ONLY = frozenset({"add", "concat", "parameter", "matmul", "scaled_dot_product_attention"})
SIZE_NAMES = frozenset({"channels", "features", "width", "hidden"})


@record(frozen=True)
class Value:
    """A named per-sample tensor of the forward being generated."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@record
class Step:
    """One generated call: where it is, what it does, and the shape rule's verdict."""

    op: str
    args: dict[str, Any]
    inputs: tuple[tuple[int, ...], ...]
    dtype: str
    line: int = 0  # 1-based line in the program text, filled in when the text is assembled
    valid: bool = True
    error: str | None = None  # the shape rule's code and message when not valid
    model: str = ""
    written: tuple[str, ...] = ()  # arguments written as expressions of block parameters


@record
class Program:
    seed: int
    text: str
    steps: list[Step]
    culprit: Step | None = None  # the call the generator expects to be rejected
    edge: str | None = None  # an edge case (huge sizes) the program exercises
    models: list[str] = field(default_factory=list)
    constructs: dict[str, int] = field(default_factory=dict)  # how often each was added

    @property
    def expect_valid(self) -> bool:
        return self.culprit is None and self.edge is None

    @property
    def ops(self) -> set[str]:
        return {s.op for s in self.steps}

    @property
    def features(self) -> set[str]:
        """The constructs and block-parameter positions the program exercises."""
        found = {name for name, count in self.constructs.items() if count}
        found.update(f"parameter as {name}" for step in self.steps for name in step.written)
        return found

    def step_at(self, line: int) -> Step | None:
        return next((s for s in self.steps if s.line == line), None)


# -- rendering ------------------------------------------------------------------------------


def has_written(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(has_written(v) for v in value)
    return isinstance(value, Written)


@record(frozen=True)
class Written:
    """An argument written as an expression of a block's parameters (``k // 2``), which
    the compiler must evaluate to ``value``."""

    value: Any
    text: str


@record(frozen=True)
class Named:
    """A tensor keyword argument (``attn_mask=h3``): a tensor of the body, by name."""

    name: str


def literal(value: Any) -> str:
    """``.aur`` source for a Python value (bools true/false, None none, tuples)."""
    if isinstance(value, Written):
        return value.text
    if isinstance(value, Named):
        return value.name
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, tuple | list):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def call_text(spec: OpSpec, inputs: Sequence[str], args: dict[str, Any], named: bool) -> str:
    """``op(inputs..., positional..., keyword=...)``; optional arguments as keywords."""
    parts = list(inputs)
    keyword = False
    for param in spec.params:
        if param.name not in args:
            keyword = True  # later positional parameters must be named
            continue
        value = args[param.name]
        if param.variadic and isinstance(value, tuple) and not keyword and not named:
            parts += [literal(v) for v in value]
            continue
        if param.required and not param.keyword_only and not keyword and not named:
            parts.append(literal(value))
        else:
            keyword = True
            parts.append(f"{param.name}={literal(value)}")
    return f"{spec.name}({', '.join(parts)})"
