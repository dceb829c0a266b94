"""Emission of the convolution, pooling, normalization and activation operations of issue 10.

Registered in ``emit.EMITTERS`` (it replaces the ``maxpool``, ``avgpool``, ``batchnorm`` and
``layer_norm`` rules with ones that write the same text for every argument those rules
knew, so existing programs compile byte-identically):

- ``conv3d`` / ``conv_transpose1d/2d/3d``: ``nn.Conv3d`` / ``nn.ConvTranspose1d/2d/3d``;
- pools over 1-, 2- and 3-D inputs, ``ceil_mode=True`` and ``count_include_pad=False``
  when asked; ``nn.AdaptiveAvgPool1d/2d/3d`` and ``nn.AdaptiveMaxPool1d/2d/3d``;
  ``global_max_pool`` as ``x.amax(dim=...)``;
- ``batchnorm`` on (C, D, H, W) as ``nn.BatchNorm3d``; ``layer_norm(axes=n)`` and
  ``rms_norm`` with the trailing shape as a tuple (cut from the input's sizes where a
  block parameter gives ``n``: ``(channels, 8, 8)[-p0:]``); ``layer_norm(dim=1)`` as a
  ``LayerNorm2d`` module (torchvision's: the channel axis normalized at each position),
  a helper class emitted once into each file that calls it; ``nn.GroupNorm``,
  ``nn.InstanceNorm1d/2d/3d``, ``nn.RMSNorm``;
- ``softplus``, ``relu6``, ``hardtanh``, ``hardsigmoid`` and ``glu`` as ``F`` functions;
- ``drop_path`` as a ``DropPath`` module, a small class emitted once into each file that
  uses it (generated files never import aurane): torchvision's ``StochasticDepth(p, "row")``
  written out, so the same random draws give the same numbers;
- ``dense(transposed=true)`` as a ``TransposedLinear`` module (emitted the same way): the
  weight stored (in, out) and applied with ``addmm``, as Hugging Face's ``Conv1D``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from aurane.backends.torch.emit_common import (
    TRANSPOSED_LINEAR_CLASS,
    Call,
    OpEmitter,
    Site,
    Step,
    _conv,
    call_layer,
    dtype_arg,
    functional,
    kw,
    lit,
    options,
)
from aurane.backends.torch.inline import inlined_source
from aurane.backends.torch.shown import ShownBool, ShownInt
from aurane.ops.layers import channel_first

DROP_PATH_CLASS = "DropPath"
LAYER_NORM_2D_CLASS = "LayerNorm2d"


def _module(init: Callable[[Site], Call]) -> OpEmitter:
    return OpEmitter(call_layer, init)


def _transpose(dims: int) -> Callable[[Site], Call]:
    def init(site: Site) -> Call:
        a = site.args
        defaults = {
            "stride": 1,
            "padding": 0,
            "output_padding": 0,
            "groups": 1,
            "bias": True,
            "dilation": 1,
        }
        return Call(
            f"nn.ConvTranspose{dims}d",
            (
                str(site.in_shape[0]),
                str(a["channels"]),
                kw("kernel_size", a["kernel"]),
                *options(a, defaults),
                *dtype_arg(site),
            ),
        )

    return init


def _pool(kind: str) -> Callable[[Site], Call]:
    def init(site: Site) -> Call:
        dims = len(site.in_shape) - 1
        defaults = {"stride": None, "padding": 0, "ceil_mode": False}
        if "count_include_pad" in site.args:
            defaults["count_include_pad"] = True
        extra = options(site.args, defaults)
        return Call(f"nn.{kind}{dims}d", (lit(site.args["kernel"]), *extra))

    return init


def _adaptive(kind: str) -> Callable[[Site], Call]:
    def init(site: Site) -> Call:
        dims = len(site.in_shape) - 1
        return Call(f"nn.Adaptive{kind}Pool{dims}d", (lit(site.args["output_size"]),))

    return init


def _global_max_pool(site: Site) -> Step:
    axes = tuple(range(2, len(site.in_shape) + 1))
    dim = str(axes[0]) if len(axes) == 1 else lit(axes)
    return Step(Call(f"{site.x}.amax", (f"dim={dim}",)))


def _batchnorm(site: Site) -> Call:
    # BatchNorm1d covers (features,) and (channels, length); 2d (C, H, W); 3d (C, D, H, W)
    dims = max(1, len(site.in_shape) - 1)
    defaults = {"eps": 1e-5, "momentum": 0.1, "affine": True, "track_running_stats": True}
    return Call(
        f"nn.BatchNorm{dims}d",
        (str(site.in_shape[0]), *options(site.args, defaults), *dtype_arg(site)),
    )


def normalized_shape(site: Site) -> str:
    """The trailing shape a LayerNorm/RMSNorm normalizes: ``64`` or ``(64, 8, 8)``; for
    ``axes`` a block parameter gives (``axes=p0``), the input's sizes cut to the last
    ``p0`` (``(2, 8, channels)[-p0:]``), so a class built with another ``p0`` normalises
    the axes the source's block would; of a sample of one axis, its width (``p0`` can
    only be 1 there)."""
    axes: int = site.args["axes"]
    if isinstance(axes, ShownInt) and len(site.in_shape) == 1:
        return str(site.in_shape[0])
    if isinstance(axes, ShownInt):
        count = str(axes)
        if not re.fullmatch(r"[\w.]+", count):  # ``-(p0 + 1)``
            count = f"({count})"
        return f"{lit(tuple(site.in_shape))}[-{count}:]"
    if axes == 1:
        return str(site.in_shape[-1])
    return lit(tuple(site.in_shape[len(site.in_shape) - axes :]))


def _layer_norm(site: Site) -> Call:
    a = site.args
    extra = options(a, {"eps": 1e-5, "elementwise_affine": True})
    # a block parameter's flag by its name whatever its value here (``bias=p0``): the
    # block's one class then builds what another call asks for
    if a["elementwise_affine"] and (isinstance(a["bias"], ShownBool) or not a["bias"]):
        extra.append(kw("bias", a["bias"]))
    if channel_first(a.get("dim", -1), len(site.in_shape)):
        return Call(LAYER_NORM_2D_CLASS, (str(site.in_shape[0]), *extra, *dtype_arg(site)))
    return Call("nn.LayerNorm", (normalized_shape(site), *extra, *dtype_arg(site)))


def _rms_norm(site: Site) -> Call:
    extra = options(site.args, {"eps": None, "elementwise_affine": True})
    return Call("nn.RMSNorm", (normalized_shape(site), *extra, *dtype_arg(site)))


def _group_norm(site: Site) -> Call:
    a = site.args
    extra = options(a, {"eps": 1e-5, "affine": True})
    return Call("nn.GroupNorm", (str(a["groups"]), str(site.in_shape[0]), *extra, *dtype_arg(site)))


def _instance_norm(site: Site) -> Call:
    dims = len(site.in_shape) - 1
    defaults = {"eps": 1e-5, "momentum": 0.1, "affine": False, "track_running_stats": False}
    return Call(
        f"nn.InstanceNorm{dims}d",
        (str(site.in_shape[0]), *options(site.args, defaults), *dtype_arg(site)),
    )


def _with_options(func: str, defaults: Mapping[str, object]) -> OpEmitter:
    """``func(x, name=value...)`` with the arguments that differ from PyTorch's defaults."""

    def forward(site: Site) -> Step:
        return Step(Call(func, (site.x, *options(site.args, defaults))))

    return OpEmitter(forward)


def _glu(site: Site) -> Step:
    dim = site.args["dim"]
    return Step(Call("F.glu", (site.x,) if dim == -1 else (site.x, kw("dim", dim))))


LAYER_EMITTERS: Mapping[str, OpEmitter] = {
    "conv3d": _module(_conv(3)),
    "conv_transpose1d": _module(_transpose(1)),
    "conv_transpose2d": _module(_transpose(2)),
    "conv_transpose3d": _module(_transpose(3)),
    "maxpool": _module(_pool("MaxPool")),
    "avgpool": _module(_pool("AvgPool")),
    "adaptive_avg_pool": _module(_adaptive("Avg")),
    "adaptive_max_pool": _module(_adaptive("Max")),
    "global_max_pool": OpEmitter(_global_max_pool),
    "batchnorm": _module(_batchnorm),
    "layer_norm": _module(_layer_norm),
    "group_norm": _module(_group_norm),
    "instance_norm": _module(_instance_norm),
    "rms_norm": _module(_rms_norm),
    "softplus": _with_options("F.softplus", {"beta": 1.0, "threshold": 20.0}),
    "relu6": functional("F.relu6"),
    "hardtanh": _with_options("F.hardtanh", {"min_val": -1.0, "max_val": 1.0}),
    "hardsigmoid": functional("F.hardsigmoid"),
    "glu": OpEmitter(_glu),
    "drop_path": _module(lambda site: Call(DROP_PATH_CLASS, (lit(site.args["p"]),))),
}

# -- helper classes, emitted once per file whose classes use the operation -------------------


# op -> (global name, its module in backends/torch/inlined); emitted where the generated
# classes call the name (a layer_norm is an nn.LayerNorm unless dim=1 asks for the channel
# axis, a dense an nn.Linear unless transposed=true)
LAYER_HELPERS: dict[str, tuple[str, str]] = {
    "drop_path": (DROP_PATH_CLASS, "layers"),
    "layer_norm": (LAYER_NORM_2D_CLASS, "layers"),
    "dense": (TRANSPOSED_LINEAR_CLASS, "layers"),
}
LAYER_HELPER_NAMES: frozenset[str] = frozenset(name for name, _ in LAYER_HELPERS.values())


def layer_helper_sources(ops: set[str], code: str | None = None) -> list[str]:
    """The helper classes the given operations use (and ``code`` calls), in a fixed order."""
    return [
        inlined_source(module, name)
        for op, (name, module) in LAYER_HELPERS.items()
        if op in ops and (code is None or re.search(rf"(?<![\w.]){name}\(", code))
    ]
