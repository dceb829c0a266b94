"""What every emitter table uses: the records of one emission (``Site``, ``Call``,
``Step``, ``OpEmitter``), literals (``lit``, ``kw``, ``options``), small rule builders, and
the two rules that several tables share (``_conv``, ``_attention_forward``).

The tables (``emit.py``'s own entries, ``emit_attention.py``, ``emit_tensor.py``,
``emit_layers.py``) import this module; ``emit.py`` joins them into ``EMITTERS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from aurane.backends.torch.data_emit import quote
from aurane.backends.torch.shown import ShownBool, ShownStr
from aurane.ir.graph import Node
from aurane.ops.spec import split_inputs
from aurane.records import record

MASK = "padding_mask"  # the forward parameter of models containing attention
REGISTER_BUFFER = "self.register_buffer"  # the buffer operation's __init__ call
ATTENTION_HELPER = "self_attention"


@record(frozen=True)
class Site:
    """One node at its place in a generated class: local names, IR shapes, attribute."""

    node: Node
    inputs: tuple[str, ...]  # local variable of each input
    in_shapes: tuple[tuple[int, ...], ...]  # per-sample input shapes (batch axis excluded)
    out_shape: tuple[int, ...]
    attr: str  # self.<attr> for ops with a constructor
    param_dtype: str = "float32"
    block_class: str | None = None  # generated class of a block / repeat
    block_attention: bool = False  # the block takes padding_mask
    block_args: tuple[str, ...] = ()  # constructor arguments of a parameterised block
    batch: str = ""  # the forward input, whose shape[0] is the batch size (parameter)
    # the block's constructor parameter that gave this node's operation (act=nn.ReLU):
    # built as ``act()``, applied unnamed as ``self.<op_attr>(x)``
    op_param: str = ""
    op_attr: str = ""

    @property
    def args(self) -> Mapping[str, Any]:
        return self.node.args

    @property
    def x(self) -> str:
        return self.inputs[0]

    @property
    def in_shape(self) -> tuple[int, ...]:
        return self.in_shapes[0]

    @property
    def layer(self) -> str:
        return f"self.{self.attr}"

    @property
    def positional(self) -> tuple[str, ...]:
        """The positional tensor inputs (``inputs`` also holds the tensor keywords)."""
        return split_inputs(self.args, self.inputs)[0]

    def tensor(self, name: str) -> str | None:
        """The local variable of tensor keyword ``name`` (``attn_mask=pad``), if given."""
        found: str | None = split_inputs(self.args, self.inputs)[1].get(name)
        return found

    def tensor_shape(self, name: str) -> tuple[int, ...] | None:
        found: tuple[int, ...] | None = split_inputs(self.args, self.in_shapes)[1].get(name)
        return found


@record(frozen=True)
class Call:
    """``func(arg, ...)``; kept structured so long calls can be wrapped like black does."""

    func: str
    args: tuple[str, ...] = ()

    def text(self) -> str:
        return f"{self.func}({', '.join(self.args)})"


@record(frozen=True)
class Step:
    """A forward statement producing the node's output."""

    expr: Call | str
    unpack: bool = False  # the module returns (output, state): keep the output
    loop: bool = False  # expr is an nn.ModuleList applied in sequence with the mask


@record(frozen=True)
class OpEmitter:
    forward: Callable[[Site], Step]
    init: Callable[[Site], Call] | None = None


# -- literals ---------------------------------------------------------------------------


def lit(value: Any) -> str:
    """A Python literal for a resolved argument; ``ast.literal_eval`` gives the value back."""
    if isinstance(value, ShownStr):
        return value.text  # a block's string parameter, by name
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite argument {value!r} cannot be emitted")
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, tuple | list):
        items = ", ".join(lit(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    raise TypeError(f"cannot emit a literal of type {type(value).__name__}")


def kw(name: str, value: Any) -> str:
    return f"{name}={lit(value)}"


def flag(name: str, value: Any) -> list[str]:
    """``name=True`` where the flag is set, nothing where it is not; a block parameter's
    flag (``causal=p1``) by the parameter's name whatever its value at this call, so the
    block's one class computes what another argument asks for."""
    if isinstance(value, ShownBool):
        return [f"{name}={value.text}"]
    return [f"{name}=True"] if value else []


def options(
    args: Mapping[str, Any], defaults: Mapping[str, Any], rename: Mapping[str, str] = {}
) -> list[str]:  # noqa: B006
    """Keyword arguments that differ from PyTorch's defaults, in ``defaults`` order."""
    out = []
    for name, default in defaults.items():
        value = args[name]
        if value != default or type(value) is not type(default):
            out.append(kw(rename.get(name, name), value))
    return out


def dtype_arg(site: Site) -> list[str]:
    return [] if site.param_dtype == "float32" else [f"dtype=torch.{site.param_dtype}"]


def call_layer(site: Site, *extra: str) -> Step:
    return Step(Call(site.layer, (site.x, *extra)))


def functional(func: str, *names: str) -> OpEmitter:
    """``func(x, name=value...)`` for an activation whose arguments map one to one."""

    def forward(site: Site) -> Step:
        return Step(Call(func, (site.x, *(kw(n, site.args[n]) for n in names))))

    return OpEmitter(forward)


# -- rules shared by several tables ------------------------------------------------------


def _conv(dims: int) -> Callable[[Site], Call]:
    def init(site: Site) -> Call:
        a = site.args
        defaults = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "bias": True}
        return Call(
            f"nn.Conv{dims}d",
            (
                str(site.in_shape[0]),
                str(a["channels"]),
                kw("kernel_size", a["kernel"]),
                *options(a, defaults),
                *dtype_arg(site),
            ),
        )

    return init


def _attention_forward(site: Site) -> Step:
    causal = flag("causal", site.args["causal"])
    return Step(Call(ATTENTION_HELPER, (site.layer, site.x, MASK, *causal)))


TRANSPOSED_LINEAR_CLASS = "TransposedLinear"  # dense(transposed=true): HF's Conv1D layout
