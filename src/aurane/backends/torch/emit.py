"""Per-operation emission table: what each catalog op becomes in PyTorch source.

``EMITTERS`` is keyed by canonical catalog name (plus ``block`` for a model call). An
entry gives the constructor placed in ``__init__`` (``None`` for functional ops such as
activations) and the forward step. Rules only format text: shapes come from the IR, and
every literal is written by ``lit`` (``repr`` underneath), so no source text reaches the
output unescaped. Constructor arguments equal to PyTorch's defaults are omitted, the way
a person would write them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from aurane.backends.torch.data_emit import quote
from aurane.ir.graph import Node
from aurane.records import record
from aurane.semantics.symbolic import ShownStr

MASK = "padding_mask"  # the forward parameter of models containing attention
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


# -- layers -----------------------------------------------------------------------------


TRANSPOSED_LINEAR_CLASS = "TransposedLinear"  # dense(transposed=true): HF's Conv1D layout


def _dense(site: Site) -> Call:
    bias = [] if site.args["bias"] else ["bias=False"]
    cls = TRANSPOSED_LINEAR_CLASS if site.args.get("transposed") else "nn.Linear"
    return Call(cls, (str(site.in_shape[-1]), str(site.args["features"]), *bias, *dtype_arg(site)))


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


def _embedding(site: Site) -> Call:
    a = site.args
    defaults = {"padding_idx": None, "max_norm": None, "scale_grad_by_freq": False, "sparse": False}
    return Call(
        "nn.Embedding",
        (str(a["vocabulary"]), str(a["width"]), *options(a, defaults), *dtype_arg(site)),
    )


def _positional(site: Site) -> Call:
    # a learned (1, max_len, features) table, sliced to the sequence length in forward
    sizes = (1, site.args["max_len"], site.in_shape[-1])
    zeros = Call("torch.zeros", (*map(str, sizes), *dtype_arg(site)))
    return Call("nn.Parameter", (zeros.text(),))


def _positional_forward(site: Site) -> Step:
    return Step(f"{site.x} + {site.layer}[:, : {site.x}.shape[1]]")


def _upsample(site: Site) -> Call:
    defaults = {"size": None, "scale_factor": None, "mode": "nearest", "align_corners": None}
    return Call("nn.Upsample", tuple(options(site.args, defaults)))


def _attention(site: Site) -> Call:
    a = site.args
    extra = options(a, {"dropout": 0.0, "bias": True})
    return Call(
        "nn.MultiheadAttention",
        (str(a["dim"]), str(a["heads"]), *extra, "batch_first=True", *dtype_arg(site)),
    )


def _attention_forward(site: Site) -> Step:
    causal = ["causal=True"] if site.args["causal"] else []
    return Step(Call(ATTENTION_HELPER, (site.layer, site.x, MASK, *causal)))


def _recurrent(module: str) -> Callable[[Site], Call]:
    def init(site: Site) -> Call:
        a = site.args
        layers = options(a, {"num_layers": 1, "bias": True})
        rest = options(a, {"dropout": 0.0, "bidirectional": False})
        return Call(
            f"nn.{module}",
            (
                str(site.in_shape[-1]),
                str(a["hidden"]),
                *layers,
                "batch_first=True",
                *rest,
                *dtype_arg(site),
            ),
        )

    return init


# -- tensor ops -------------------------------------------------------------------------


def _reshape_sizes(value: Any) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if len(items) == 1 and isinstance(items[0], tuple | list):
        items = tuple(items[0])  # reshape((6, -1)) as well as reshape(6, -1)
    return tuple(int(i) for i in items)


def _reshape(site: Site) -> Step:
    sizes = ", ".join(map(str, _reshape_sizes(site.args["shape"])))
    return Step(f"{site.x}.reshape({site.x}.shape[0], {sizes})")


def _global_avg_pool(site: Site) -> Step:
    axes = tuple(range(2, len(site.in_shape) + 1))
    dim = str(axes[0]) if len(axes) == 1 else lit(axes)
    return Step(Call(f"{site.x}.mean", (f"dim={dim}",)))


def _concat(site: Site) -> Step:
    return Step(Call("torch.cat", (f"[{', '.join(site.inputs)}]", kw("dim", site.args["dim"]))))


# -- composition ------------------------------------------------------------------------


def _block_class(site: Site) -> str:
    if site.block_class is None:
        raise ValueError(f"node {site.node.id} has no generated block class")
    return site.block_class


def _block_forward(site: Site) -> Step:
    return call_layer(site, MASK) if site.block_attention else call_layer(site)


def _repeat_init(site: Site) -> Call:
    # nn.Sequential cannot pass padding_mask along, so attention blocks use a ModuleList loop
    made = Call(_block_class(site), site.block_args).text()
    copies = f"{made} for _ in range({site.node.repeat})"
    if site.block_attention:
        return Call("nn.ModuleList", (f"[{copies}]",))
    return Call("nn.Sequential", (f"*[{copies}]",))


def _repeat_forward(site: Site) -> Step:
    return Step(site.layer, loop=True) if site.block_attention else call_layer(site)


def _module(
    init: Callable[[Site], Call], forward: Callable[[Site], Step] = call_layer
) -> OpEmitter:
    return OpEmitter(forward, init)


EMITTERS: dict[str, OpEmitter] = {
    "dense": _module(_dense),
    "conv1d": _module(_conv(1)),
    "conv2d": _module(_conv(2)),
    "embedding": _module(_embedding),
    "positional_encoding": _module(_positional, _positional_forward),
    "dropout": _module(lambda site: Call("nn.Dropout", (lit(site.args["p"]),))),
    "flatten": OpEmitter(lambda site: Step(Call("torch.flatten", (site.x, "1")))),
    "reshape": OpEmitter(_reshape),
    "global_avg_pool": OpEmitter(_global_avg_pool),
    "upsample": _module(_upsample),
    "add": OpEmitter(lambda site: Step(" + ".join(site.inputs))),
    "concat": OpEmitter(_concat),
    "multihead_attention": _module(_attention, _attention_forward),
    "lstm": _module(
        _recurrent("LSTM"), lambda site: Step(Call(site.layer, (site.x,)), unpack=True)
    ),
    "gru": _module(_recurrent("GRU"), lambda site: Step(Call(site.layer, (site.x,)), unpack=True)),
    "relu": functional("F.relu"),
    "gelu": OpEmitter(
        lambda site: Step(Call("F.gelu", (site.x, *options(site.args, {"approximate": "none"}))))
    ),
    "sigmoid": functional("torch.sigmoid"),
    "tanh": functional("torch.tanh"),
    "softmax": functional("F.softmax", "dim"),
    "log_softmax": functional("F.log_softmax", "dim"),
    "leaky_relu": OpEmitter(
        lambda site: Step(
            Call(
                "F.leaky_relu",
                (site.x, *options(site.args, {"slope": 0.01}, {"slope": "negative_slope"})),
            )
        )
    ),
    "silu": functional("F.silu"),
    "mish": functional("F.mish"),
    "elu": OpEmitter(
        lambda site: Step(Call("F.elu", (site.x, *options(site.args, {"alpha": 1.0}))))
    ),
    "selu": functional("F.selu"),
    "hardswish": functional("F.hardswish"),
    "repeat": _module(_repeat_init, _repeat_forward),
    "block": _module(lambda site: Call(_block_class(site), site.block_args), _block_forward),
}


def _register() -> None:
    # attention emitters live in emit_attention.py, which imports this module's helpers
    from aurane.backends.torch.emit_attention import ATTENTION_EMITTERS

    EMITTERS.update(ATTENTION_EMITTERS)
    from aurane.backends.torch.emit_tensor import TENSOR_EMITTERS

    EMITTERS.update(TENSOR_EMITTERS)
    from aurane.backends.torch.emit_layers import LAYER_EMITTERS

    EMITTERS.update(LAYER_EMITTERS)


_register()


def emitter(op: str) -> OpEmitter:
    found = EMITTERS.get(op)
    if found is None:
        raise KeyError(f"the torch backend has no emission rule for operation {op!r}")
    return found


# -- the attention helper, emitted once per file that needs it ---------------------------

ATTENTION_HELPER_SOURCE = f'''def {ATTENTION_HELPER}(attention, x, padding_mask=None, causal=False):
    """Batch-first self-attention; padding_mask is (batch, seq) with True = padding.

    Padded keys are hidden and padded queries output zeros. A padded query attends to
    every key instead of none, so no softmax row is all -inf and outputs and gradients
    stay finite even for fully padded sequences; its output is zeroed afterwards.
    """
    seq_len = x.shape[1]
    attn_mask = None
    if causal:
        attn_mask = torch.ones(seq_len, seq_len, dtype=torch.bool, device=x.device).triu(1)
    if padding_mask is None:
        return attention(x, x, x, attn_mask=attn_mask, need_weights=False)[0]
    hidden = padding_mask[:, None, :].expand(-1, seq_len, -1)  # (batch, query, key)
    if attn_mask is not None:
        hidden = hidden | attn_mask
    hidden = hidden & ~padding_mask[:, :, None]
    hidden = hidden.repeat_interleave(attention.num_heads, dim=0)
    out = attention(x, x, x, attn_mask=hidden, need_weights=False)[0]
    return out.masked_fill(padding_mask[:, :, None], 0.0)'''
