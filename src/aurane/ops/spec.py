"""Operation specs: typed parameters, shape/dtype rules, parameter and FLOP formulas.

An ``OpSpec`` is the single description of an operation that every stage reads: the
semantic pass binds and validates arguments with ``params``, lowering calls ``infer``,
the profiler calls ``parameters`` and ``macs``, backends look the op up by ``name``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any

from aurane.records import field, record
from aurane.source import Span


class ArgKind(Enum):
    INT = "int"
    FLOAT = "float"  # ints accepted
    BOOL = "bool"
    STR = "str"
    INT_OR_PAIR = "int or pair of ints"  # spatial sizes: kernel=3 or kernel=(2, 3)
    INT_OR_TUPLE = "int or tuple of ints"  # upsample size
    FLOAT_OR_TUPLE = "float or tuple of floats"  # upsample scale_factor
    INT_OR_STR = "int, pair or string"  # conv padding: 1, (1, 2) or "same"
    OPTIONAL_INT = "int or None"
    OPTIONAL_FLOAT = "float or None"
    MODEL = "model name"  # repeat(Block, n)
    TENSOR = "named tensor"  # attn_mask=pad: a tensor of the body, an extra node input
    ANY = "value"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@record(frozen=True, slots=True)
class Param:
    name: str
    kind: ArgKind
    default: Any = REQUIRED
    # A check returns an error message (lowercase, e.g. "must be in [0, 1)") or None.
    check: Callable[[Any], str | None] | None = None
    choices: tuple[str, ...] | None = None
    keyword_only: bool = False
    doc: str = ""
    # A variadic parameter (last positional one) collects every remaining positional
    # argument into a tuple: reshape(6, -1) binds shape=(6, -1). Its check sees the tuple.
    variadic: bool = False
    # ``None`` stands for another parameter's value (a pool's stride: its kernel); every
    # consumer that compares arguments reads it through ``OpSpec.effective``
    none_means: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@record(frozen=True, slots=True)
class TensorName:
    """A tensor keyword argument as the program wrote it (``attn_mask=pad``): the name of a
    tensor of the body, before lowering makes it an input of the node."""

    name: str

    def __str__(self) -> str:
        return self.name


@record(frozen=True, slots=True)
class TensorArg:
    """A tensor keyword argument after lowering: its position in the node's inputs (after
    the positional tensor inputs, in parameter order)."""

    index: int

    def __str__(self) -> str:
        return f"input{self.index}"


def tensor_positions(args: Mapping[str, Any]) -> dict[str, int]:
    """Tensor keyword arguments by name -> their index among a node's inputs."""
    return {name: v.index for name, v in args.items() if isinstance(v, TensorArg)}


def split_inputs(
    args: Mapping[str, Any], items: Sequence[Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A node's inputs (names, shapes or types) as (positional inputs, tensor keywords)."""
    positions = tensor_positions(args)
    taken = set(positions.values())
    positional = tuple(item for index, item in enumerate(items) if index not in taken)
    return positional, {name: items[index] for name, index in positions.items()}


@record(frozen=True, slots=True)
class TensorType:
    """A per-sample tensor type: shape excludes the batch axis; dtype None means unknown."""

    shape: tuple[int, ...]
    dtype: str | None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@record(frozen=True, slots=True)
class ArgValue:
    value: Any
    span: Span | None  # None when the default was used


@record(frozen=True, slots=True)
class BoundArgs:
    """Arguments by parameter name, defaults filled in."""

    values: Mapping[str, ArgValue]

    def __getitem__(self, name: str) -> Any:
        return self.values[name].value

    def span(self, name: str) -> Span | None:
        entry = self.values.get(name)
        return entry.span if entry else None

    def given(self, name: str) -> bool:
        entry = self.values.get(name)
        return entry is not None and entry.span is not None

    def plain(self) -> dict[str, Any]:
        return {name: entry.value for name, entry in self.values.items()}


class OpError(Exception):
    """Raised by shape/dtype rules. ``blame`` names the argument (or ``input0``...) at fault.

    ``code`` is a key of aurane.codes.CODES (type stage). Lowering turns it into a located
    diagnostic at the blamed argument's span (or the operation's span when blame is None).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        blame: str | None = None,
        hint: str | None = None,
        input_notes: tuple[tuple[int, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.blame = blame
        self.hint = hint
        # (input index, note) pairs: rendered as secondary labels where each input came from
        self.input_notes = input_notes


@record(frozen=True, slots=True)
class InferContext:
    args: BoundArgs
    inputs: tuple[TensorType, ...]
    param_dtype: str  # floating dtype for parameters (float32 unless input_dtype says otherwise)
    # tensor keyword arguments (``attn_mask=pad``) by parameter name; ``inputs`` holds the
    # positional tensor inputs only
    tensors: Mapping[str, TensorType] = field(default_factory=dict)
    # the batch size as a size (the symbolic ``batch`` when lowering, a number in samples):
    # read only by the operation that mixes samples (``cross_batch_matmul``); None: unknown
    batch: Any = None

    @property
    def input(self) -> TensorType:
        return self.inputs[0]

    def tensor(self, name: str) -> TensorType | None:
        return self.tensors.get(name)

    @staticmethod
    def of_node(
        args: BoundArgs, types: Sequence[TensorType], param_dtype: str, batch: Any = None
    ) -> InferContext:
        """The context of a node whose inputs hold its tensor keywords too (``TensorArg``)."""
        positional, tensors = split_inputs(args.plain(), types)
        return InferContext(args, positional, param_dtype, tensors, batch)


InferRule = Callable[[InferContext], TensorType]
CountRule = Callable[[InferContext, TensorType], int]


def _zero(ctx: InferContext, out: TensorType) -> int:
    return 0


@record(frozen=True)
class OpSpec:
    name: str
    params: tuple[Param, ...]
    infer: InferRule
    doc: str
    # sample argument sets and per-sample input shapes used by catalog tests
    samples: tuple[tuple[Mapping[str, Any], tuple[tuple[int, ...], ...]], ...]
    aliases: tuple[str, ...] = ()
    kinds: frozenset[str] = frozenset()
    min_inputs: int = 1
    max_inputs: int | None = 1  # None: variadic (add, concat)
    parameters: CountRule = _zero
    macs: CountRule = _zero  # multiply-accumulates counted in FLOPs (x2)
    other_flops: CountRule = _zero  # elementwise, normalization, pooling work
    input_dtypes: str = "float"  # "float", "int" (embedding) or "any"
    # the family of related operations it belongs to (``rules.CONVOLUTION``), "" for none;
    # ``aurane.ops.family`` lists a family's members from these entries
    family: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    # the arguments in one spelling where the operation takes several (permute's batch axis
    # written or not); ``effective`` applies it
    canonical: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # derived from params once: argument binding reads it for every call
    positional_params: tuple[Param, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positional = tuple(p for p in self.params if not p.keyword_only)
        object.__setattr__(self, "positional_params", positional)

    @property
    def is_activation(self) -> bool:
        return "activation" in self.kinds

    @property
    def variadic(self) -> bool:
        return self.max_inputs is None

    def graph_inputs(self, args: Sequence[Any], is_tensor: Callable[[Any], bool]) -> int:
        """How many leading positional arguments of a graph-form call are tensor inputs.

        All of them for a variadic op; otherwise ``min_inputs`` and then, up to
        ``max_inputs``, each next argument that ``is_tensor`` (a tensor expression, not a
        value): ``multihead_attention(x, memory, heads=2, dim=8)`` takes two inputs,
        ``multihead_attention(x, 2, 8)`` one.
        """
        if self.max_inputs is None:
            return len(args)
        count = min(self.min_inputs, len(args))
        while count < min(self.max_inputs, len(args)) and is_tensor(args[count]):
            count += 1
        return count

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def effective(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` with each ``None`` that stands for another argument (``Param.none_means``)
        replaced by that argument's value (``maxpool(2)`` has stride 2, as ``maxpool(2, 2)``),
        in the operation's one spelling (``canonical``: ``permute(0, 3, 1, 2)`` is
        ``permute(3, 1, 2)``)."""
        out = dict(args)
        for param in self.params:
            if param.none_means and out.get(param.name, 0) is None:
                out[param.name] = out.get(param.none_means)
        return self.canonical(out) if self.canonical is not None else out
