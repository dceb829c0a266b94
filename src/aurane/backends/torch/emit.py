"""Per-operation emission table: what each catalog op becomes in PyTorch source.

``EMITTERS`` is keyed by canonical catalog name (plus ``block`` for a model call). An
entry gives the constructor placed in ``__init__`` (``None`` for functional ops such as
activations) and the forward step. Rules only format text: shapes come from the IR, and
every literal is written by ``lit`` (``repr`` underneath), so no source text reaches the
output unescaped. Constructor arguments equal to PyTorch's defaults are omitted, the way
a person would write them.

The entries of this module (layers, tensor operations, composition) come first, then those of
``emit_attention.py``, ``emit_tensor.py`` and ``emit_layers.py``; all of them build on
``emit_common.py`` (the records of an emission and the literal helpers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aurane.backends.torch.emit_attention import ATTENTION_EMITTERS
from aurane.backends.torch.emit_common import (
    MASK,
    TRANSPOSED_LINEAR_CLASS,
    Call,
    OpEmitter,
    Site,
    Step,
    _attention_forward,
    _conv,
    call_layer,
    dtype_arg,
    functional,
    kw,
    lit,
    options,
)
from aurane.backends.torch.emit_index import INDEX_EMITTERS
from aurane.backends.torch.emit_layers import LAYER_EMITTERS
from aurane.backends.torch.emit_tensor import TENSOR_EMITTERS

# -- layers -----------------------------------------------------------------------------


def _dense(site: Site) -> Call:
    given = site.args["bias"]
    bias = [] if given is True else [kw("bias", given)]  # a block's parameter: ``bias=b``
    cls = TRANSPOSED_LINEAR_CLASS if site.args.get("transposed") else "nn.Linear"
    return Call(cls, (str(site.in_shape[-1]), str(site.args["features"]), *bias, *dtype_arg(site)))


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
    # ints stay as they are: a block parameter's size prints as its expression (ShownInt)
    return tuple(i if isinstance(i, int) else int(i) for i in items)


def _reshape(site: Site) -> Step:
    sizes = tuple(map(str, _reshape_sizes(site.args["shape"])))
    return Step(Call(f"{site.x}.reshape", (f"{site.x}.shape[0]", *sizes)))


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
    if len(site.inputs) > 1:  # a block with several inputs: the mask goes by keyword
        mask = (f"{MASK}={MASK}",) if site.block_attention else ()
        return Step(Call(site.layer, (*site.inputs, *mask)))
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


# The other tables join in this order, a later entry replacing an earlier one of the same
# name (emit_attention's multihead_attention, which also takes key/value inputs).
EMITTERS.update(ATTENTION_EMITTERS)
EMITTERS.update(TENSOR_EMITTERS)
EMITTERS.update(LAYER_EMITTERS)
EMITTERS.update(INDEX_EMITTERS)


def emitter(op: str) -> OpEmitter:
    found = EMITTERS.get(op)
    if found is None:
        raise KeyError(f"the torch backend has no emission rule for operation {op!r}")
    return found
