"""Pooling: windowed max/average pooling over 1-, 2- and 3-D inputs, adaptive and global pools.

``maxpool``/``avgpool`` follow ``nn.MaxPool1d/2d/3d`` and ``nn.AvgPool1d/2d/3d``: stride
defaults to the kernel, padding is at most half the kernel, and with ``ceil_mode`` the
output size rounds up, except that a last window starting past the input and its left
padding is dropped (PyTorch's ``pooling_output_shape``). ``adaptive_avg_pool`` and
``adaptive_max_pool`` follow ``nn.AdaptiveAvgPool1d/2d/3d`` and ``nn.AdaptiveMaxPool1d/2d/3d``
(``None`` in ``output_size`` keeps that axis). ``global_max_pool`` takes the maximum over
every spatial axis. Their work is counted in ``other_flops`` (one operation per element of
each window, windows summed exactly); none of them has MACs.
"""

from __future__ import annotations

from typing import Any

from aurane.ops.rules import (
    PARAMETER_FREE,
    POOLING,
    fmt_shape,
    ints_at_least,
    is_int,
    is_symbolic_size,
    make_spec,
    numel,
    optional,
    require_min_rank,
    require_rank,
    same_everywhere,
    smallest_size,
    spatial,
    window_output,
)
from aurane.ops.spec import ArgKind, InferContext, OpError, OpSpec, Param, TensorType

LAYOUTS = "(channels, length), (channels, height, width) or (channels, depth, height, width)"
_SIZES = ints_at_least(1, lengths=(1, 2, 3))
_PADS = ints_at_least(0, lengths=(1, 2, 3))


def pool_output(
    op: str,
    sizes: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[int, ...]:
    """PyTorch's pooling output size (``pooling_output_shape``), T005 when nothing is left."""
    if not ceil_mode:
        return window_output(op, sizes, kernel, stride, padding, (1,) * len(sizes))
    out = [
        ceil_windows(size, k, s, p)
        for size, k, s, p in zip(sizes, kernel, stride, padding, strict=True)
    ]
    if min(out) < 1:
        # rounding up keeps a window that overhangs the input: only an empty output fails
        raise OpError(
            "T005",
            f"{op} of {fmt_shape(sizes)} with kernel {fmt_shape(kernel)} and stride "
            f"{fmt_shape(stride)} leaves no output even with ceil_mode",
            blame="kernel",
            hint="use a smaller kernel or add padding",
        )
    return tuple(out)


def ceil_windows(size: int, kernel: int, stride: int, padding: int) -> int:
    """PyTorch's ceil-mode window count along one axis, written without a branch on a size.

    Torch rounds ``(size + 2 * padding - kernel) / stride`` up, plus one, and drops a last
    window that would start in the right padding. With ``padding <= kernel // 2`` that is
    the smaller of the rounded-up count and ``ceil((size + padding) / stride)``, the windows
    starting inside the input or its left padding. Inside a block these numbers may be
    symbolic (a rolled class writes them as expressions of its parameters): a branch taken
    on their values at the call would keep an expression right on that branch's side only
    (``maxpool(k, stride=s, ceil_mode=true)`` of 3 with k=1 counts 2 windows at s=2 but 1 at
    s=4)."""
    rounded_up = -(-(size + 2 * padding - kernel) // stride) + 1
    starts = -(-(size + padding) // stride)
    # rounded_up is ceil((size + padding + reach) / stride): the sign of reach decides
    # which count is smaller, whatever the size
    if same_everywhere(stride, kernel):
        return starts  # reach is the padding, never negative
    reach = stride + padding - kernel
    if not is_symbolic_size(reach):
        return starts if reach >= 0 else rounded_up
    smaller: int = smallest_size(rounded_up, starts)  # min(...): the arguments decide
    return smaller


def _pool_window(ctx: InferContext, op: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(kernel, output spatial size) of a pooling op on (C, L), (C, H, W) or (C, D, H, W)."""
    t, a = ctx.input, ctx.args
    require_rank(op, t, (2, 3, 4), LAYOUTS)
    dims = t.rank - 1
    kernel = spatial(op, "kernel", a["kernel"], dims)
    stride = kernel if a["stride"] is None else spatial(op, "stride", a["stride"], dims)
    padding = spatial(op, "padding", a["padding"], dims)
    if any(2 * p > k for p, k in zip(padding, kernel, strict=True)):
        raise OpError(
            "S004",
            f"{op} padding {fmt_shape(padding)} is more than half the kernel {fmt_shape(kernel)}",
            blame="padding",
            hint="pytorch allows padding of at most kernel // 2",
        )
    sizes = t.shape[1:]
    if op == "avgpool" and dims == 3 and any(n < k for n, k in zip(sizes, kernel, strict=True)):
        # avg_pool3d alone checks the unpadded input against the kernel (check_input_size)
        raise OpError(
            "T005",
            f"avgpool of a 3-D input {fmt_shape(sizes)} smaller than its kernel "
            f"{fmt_shape(kernel)}: torch's avg_pool3d refuses it even with padding",
            blame="kernel",
            hint="use a kernel no larger than each spatial size",
        )
    return kernel, pool_output(op, t.shape[1:], kernel, stride, padding, a["ceil_mode"])


def _pool_spec(name: str, module: str, average: bool) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        _, out = _pool_window(ctx, name)
        return TensorType((ctx.input.shape[0], *out), ctx.input.dtype)

    def other_flops(ctx: InferContext, out: TensorType) -> int:
        kernel, _ = _pool_window(ctx, name)
        return out.numel * numel(kernel)

    params: tuple[Param, ...] = (
        Param("kernel", ArgKind.INT_OR_PAIR, check=_SIZES, doc="window size"),
        Param(
            "stride",
            ArgKind.INT_OR_PAIR,
            None,
            optional(_SIZES),
            doc="window step (None: the kernel)",
            none_means="kernel",
        ),
        Param(
            "padding",
            ArgKind.INT_OR_PAIR,
            0,
            _PADS,
            doc="implicit padding, at most kernel // 2",
        ),
        Param(
            "ceil_mode",
            ArgKind.BOOL,
            False,
            keyword_only=True,
            doc="round the output size up (a last window must start inside the input)",
        ),
    )
    samples: list[tuple[dict[str, Any], tuple[tuple[int, ...], ...]]] = [
        ({"kernel": 2}, ((3, 8, 8),)),
        ({"kernel": 3, "stride": 2}, ((4, 15, 17),)),
        ({"kernel": (2, 3), "stride": (1, 2), "padding": 1}, ((2, 6, 7),)),
        ({"kernel": 3, "padding": 1}, ((2, 10),)),
        ({"kernel": 2, "stride": (1, 2, 2)}, ((2, 4, 6, 7),)),
        ({"kernel": 3, "stride": 2, "ceil_mode": True}, ((2, 8, 9),)),
        ({"kernel": 2, "stride": 2, "padding": 1, "ceil_mode": True}, ((2, 5, 6),)),
    ]
    if average:
        params += (
            Param(
                "count_include_pad",
                ArgKind.BOOL,
                True,
                keyword_only=True,
                doc="count padding zeros in the average",
            ),
        )
        samples.append(
            ({"kernel": 3, "padding": 1, "ceil_mode": True, "count_include_pad": False}, ((2, 7),))
        )
    return make_spec(
        name=name,
        params=params,
        infer=infer,
        doc=f"{module} over {LAYOUTS} inputs",
        samples=tuple(samples),
        kinds={PARAMETER_FREE, POOLING},
        other_flops=other_flops,
    )


MAXPOOL = _pool_spec("maxpool", "max pooling (nn.MaxPool1d / 2d / 3d)", average=False)
AVGPOOL = _pool_spec("avgpool", "average pooling (nn.AvgPool1d / 2d / 3d)", average=True)

# -- adaptive pooling -------------------------------------------------------------------------


def _output_size_check(value: Any) -> str | None:
    if is_int(value):
        return None if value >= 1 else "must be positive"
    ok = isinstance(value, tuple | list) and 1 <= len(value) <= 3
    if not ok or not all(i is None or is_int(i) for i in value):
        return "must be an int or a tuple of 1 to 3 sizes"
    if any(i is not None and i < 1 for i in value):
        return "must be positive"
    return None


def adaptive_sizes(ctx: InferContext, op: str) -> tuple[int, ...]:
    """The output spatial size of an adaptive pool: ``None`` entries keep the input size."""
    t = ctx.input
    require_rank(op, t, (2, 3, 4), LAYOUTS)
    dims = t.rank - 1
    value = ctx.args["output_size"]
    if value is None:
        raise OpError(
            "S004",
            f"{op} output_size must be an int or a tuple of sizes",
            blame="output_size",
            hint="None keeps one axis inside a tuple: output_size=(None, 7)",
        )
    # torch broadcasts a bare int only: a tuple has one entry per spatial axis
    items = tuple(value) if isinstance(value, tuple | list) else (value,) * dims
    if len(items) != dims:
        raise OpError(
            "T002",
            f"{op} got {len(items)} values for output_size but its input has {dims} spatial "
            f"{'axis' if dims == 1 else 'axes'}",
            blame="output_size",
            hint=f"pass one int or a tuple of {dims}",
        )
    if dims == 1 and None in items:
        raise OpError(
            "S004",
            f"{op} of a 1-D input takes an int output_size: torch's 1-D adaptive pools "
            "do not accept None",
            blame="output_size",
            hint=f"write the length itself: output_size={t.shape[1]}",
        )
    return tuple(n if o is None else o for n, o in zip(t.shape[1:], items, strict=True))


def adaptive_window_elements(sizes: tuple[int, ...], out: tuple[int, ...]) -> int:
    """Elements read by every window of an adaptive pool together (windows may overlap)."""
    total = 1
    for n, o in zip(sizes, out, strict=True):
        # window i spans [floor(i n / o), ceil((i + 1) n / o)), as PyTorch's start/end index
        total *= sum(-(-(i + 1) * n // o) - (i * n // o) for i in range(o))
    return total


def _adaptive_spec(name: str, module: str) -> OpSpec:
    def infer(ctx: InferContext) -> TensorType:
        out = adaptive_sizes(ctx, name)
        return TensorType((ctx.input.shape[0], *out), ctx.input.dtype)

    def other_flops(ctx: InferContext, out: TensorType) -> int:
        t = ctx.input
        return t.shape[0] * adaptive_window_elements(t.shape[1:], out.shape[1:])

    return make_spec(
        name=name,
        params=(
            Param(
                "output_size",
                ArgKind.ANY,
                check=_output_size_check,
                doc="output spatial size: an int or one per axis (None keeps the axis)",
            ),
        ),
        infer=infer,
        doc=f"{module} to a fixed output size over {LAYOUTS} inputs",
        samples=(
            ({"output_size": 1}, ((3, 7, 7),)),
            ({"output_size": (2, 3)}, ((2, 5, 7),)),
            ({"output_size": 4}, ((2, 10),)),
            ({"output_size": (None, 3)}, ((2, 4, 8),)),
            ({"output_size": (2, 3, 3)}, ((2, 5, 4, 6),)),
        ),
        kinds={PARAMETER_FREE, POOLING},
        other_flops=other_flops,
    )


ADAPTIVE_AVG_POOL = _adaptive_spec(
    "adaptive_avg_pool", "adaptive average pooling (nn.AdaptiveAvgPool1d / 2d / 3d)"
)
ADAPTIVE_MAX_POOL = _adaptive_spec(
    "adaptive_max_pool", "adaptive max pooling (nn.AdaptiveMaxPool1d / 2d / 3d)"
)

# -- global pooling ---------------------------------------------------------------------------


def _global_infer(op: str) -> Any:
    def infer(ctx: InferContext) -> TensorType:
        require_min_rank(op, ctx.input, 2, "(channels, *spatial)")
        return TensorType(ctx.input.shape[:1], ctx.input.dtype)

    return infer


GLOBAL_AVG_POOL = make_spec(
    name="global_avg_pool",
    params=(),
    infer=_global_infer("global_avg_pool"),
    doc="mean over every spatial axis: (channels, *spatial) to (channels,)",
    samples=(({}, ((4, 5, 6),)), ({}, ((3, 7),))),
    kinds={PARAMETER_FREE, POOLING},
    other_flops=lambda ctx, out: ctx.input.numel,
)

GLOBAL_MAX_POOL = make_spec(
    name="global_max_pool",
    params=(),
    infer=_global_infer("global_max_pool"),
    doc="maximum over every spatial axis: (channels, *spatial) to (channels,)",
    samples=(({}, ((4, 5, 6),)), ({}, ((3, 7),)), ({}, ((2, 3, 4, 5),))),
    kinds={PARAMETER_FREE, POOLING},
    other_flops=lambda ctx, out: ctx.input.numel,
)

SPECS: tuple[OpSpec, ...] = (
    MAXPOOL,
    AVGPOOL,
    ADAPTIVE_AVG_POOL,
    ADAPTIVE_MAX_POOL,
    GLOBAL_AVG_POOL,
    GLOBAL_MAX_POOL,
)
