"""Emission of the tensor operations of ops/arith.py, ops/shape.py, ops/pad.py,
ops/parameter.py and ops/reduce.py.

Registered in ``emit.EMITTERS``. Most become one method call or operator a person would
write: ``a * b``, ``x * 0.5``, ``q @ k``, ``x.transpose(1, 2)``, ``x[:, 0]``,
``x.mean(dim=1)``, ``F.pad(x, (1, 1))``. ``split``/``chunk`` nodes that together bind
every piece are grouped into one unpacking statement by modules.py (``pieces_call``); a
lone piece is indexed: ``x.chunk(2, dim=-1)[1]``. ``parameter`` stores an
``nn.Parameter`` in ``__init__`` and expands it over the batch in ``forward``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from aurane.backends.torch.emit_common import (
    Call,
    OpEmitter,
    Site,
    Step,
    dtype_arg,
    flag,
    kw,
    lit,
    options,
)
from aurane.backends.torch.shown import operand
from aurane.ops import CATALOG, context
from aurane.ops.parameter import stored_shape
from aurane.ops.shape import _permute_order, piece_sizes
from aurane.semantics.symbolic import PREC

SPLITS = frozenset({"split", "chunk"})


def _binary(symbol: str) -> OpEmitter:
    def forward(site: Site) -> Step:
        if len(site.inputs) == 2:
            return Step(f"{site.inputs[0]} {symbol} {site.inputs[1]}")
        constant = site.args["constant"]
        return Step(f"{site.x} {symbol} {operand(constant, lit(constant), PREC[symbol])}")

    return OpEmitter(forward)


def _dims(value: Any) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if len(items) == 1 and isinstance(items[0], tuple | list):
        items = tuple(items[0])
    return tuple(i if isinstance(i, int) else int(i) for i in items)  # a shown size stays


def _permute(site: Site) -> Step:
    ctx = context(CATALOG["permute"], site.args, site.in_shapes)
    return Step(Call(f"{site.x}.permute", tuple(map(str, _permute_order(ctx)))))


def _method(name: str, *params: str) -> OpEmitter:
    def forward(site: Site) -> Step:
        return Step(Call(f"{site.x}.{name}", tuple(lit(site.args[p]) for p in params)))

    return OpEmitter(forward)


def _index(site: Site, item: str, dim: int) -> str:
    """``x[:, item]`` (or ``x[..., item]`` for a negative dim) for an axis counting the batch."""
    if dim < 0:
        return f"{site.x}[..., {item}{', :' * (-dim - 1)}]"
    return f"{site.x}[{':, ' * dim}{item}]"


def _select(site: Site) -> Step:
    return Step(_index(site, str(site.args["index"]), site.args["dim"]))


def _slice(site: Site) -> Step:
    a = site.args
    parts = ["" if a[k] is None else str(a[k]) for k in ("start", "end")]
    if a["step"] != 1:
        parts.append(str(a["step"]))
    return Step(_index(site, slice_text(parts), a["dim"]))


def slice_text(parts: Sequence[str]) -> str:
    """``start:end:step`` spaced as black/ruff space it: around each colon when a bound is
    more than a name or a number (``x[:, self.s + 2 :]``), except beside an omitted one."""
    if all(re.fullmatch(r"-?\w*", part) for part in parts):
        return ":".join(parts)
    text = parts[0]
    for before, part in zip(parts, parts[1:], strict=False):
        text += (" :" if before else ":") + (f" {part}" if part else "")
    return text


def _expand(site: Site) -> Step:
    return Step(Call(f"{site.x}.expand", ("-1", *map(str, _dims(site.args["sizes"])))))


def pieces_call(site: Site) -> Call:
    """``x.split(4, dim=-1)`` / ``x.chunk(2, dim=-1)``: every piece of a split node's input."""
    a = site.args
    first = lit(a["size"]) if site.node.op == "split" else str(a["chunks"])
    return Call(f"{site.x}.{site.node.op}", (first, kw("dim", a["dim"])))


def piece_count(site: Site) -> int:
    ctx = context(CATALOG[site.node.op], site.args, site.in_shapes)
    return len(piece_sizes(ctx)[1])


def split_group(sites: Sequence[Site], start: int) -> int:
    """How many sites from ``start`` are the pieces 0..n-1 of one split/chunk, in order
    (n when they bind every piece, so one unpacking statement replaces them; else 1)."""
    first = sites[start]
    if first.node.op not in SPLITS or first.args["index"] != 0:
        return 1
    count = piece_count(first)
    group = sites[start : start + count]
    rest = {k: v for k, v in first.args.items() if k != "index"}
    for offset, site in enumerate(group):
        same = site.node.op == first.node.op and site.inputs == first.inputs
        if not same or site.args["index"] != offset:
            return 1
        if {k: v for k, v in site.args.items() if k != "index"} != rest:
            return 1
    return count if len(group) == count else 1


def _piece(site: Site) -> Step:
    return Step(f"{pieces_call(site).text()}[{site.args['index']}]")


def _pad(site: Site) -> Step:
    extra = options(site.args, {"mode": "constant", "value": 0.0})
    # lit: a block parameter (``mode=mode``) is written even when its value is the default
    if lit(site.args["mode"]) == lit("constant") and lit(site.args["value"]) in ("0", "0.0"):
        extra = []
    return Step(Call("F.pad", (site.x, lit(_dims(site.args["padding"])), *extra)))


def _reduce(method: str) -> OpEmitter:
    def forward(site: Site) -> Step:
        a = site.args
        dim = a["dim"]
        if dim is None:
            axes = tuple(range(1, len(site.in_shape) + 1))
            dim = axes[0] if len(axes) == 1 else axes
        extra = flag("keepdim", a["keepdim"])
        return Step(Call(f"{site.x}.{method}", (kw("dim", dim), *extra)))

    return OpEmitter(forward)


_INIT = {"zeros": "torch.zeros", "ones": "torch.ones", "normal": "torch.empty"}


def _parameter_init(site: Site) -> Call:
    a = site.args
    shape = stored_shape(a)
    if a["init"] == "full":
        tensor = Call("torch.full", (lit(shape), lit(float(a["value"])), *dtype_arg(site)))
        text = tensor.text()
    else:
        sizes = tuple(map(str, shape)) if shape else ("()",)  # a 0-d tensor: torch.zeros(())
        text = Call(_INIT[a["init"]], (*sizes, *dtype_arg(site))).text()
        if a["init"] == "normal":
            text += f".normal_(std={lit(float(a['std']))})"
    return Call("nn.Parameter", (text,))


def _parameter_forward(site: Site) -> Step:
    keep = ", -1" * len(site.out_shape)
    return Step(f"{site.layer}.expand({site.batch}.shape[0]{keep})")


def _pixel_shuffle(site: Site) -> Step:
    factor = str(site.args["upscale_factor"])
    if len(site.in_shape) <= 3:
        return Step(Call("F.pixel_shuffle", (site.x, factor)))
    # torch's pixel_shuffle of 5 or more axes takes (and, in backward, hands back) only
    # contiguous memory: fold the leading axes into the batch, the reshapes copy when needed
    lead = len(site.in_shape) - 2
    folded = Call("F.pixel_shuffle", (f"{site.x}.flatten(0, {lead - 1})", factor))
    return Step(Call(f"{folded.text()}.unflatten", ("0", f"{site.x}.shape[:{lead}]")))


TENSOR_EMITTERS: Mapping[str, OpEmitter] = {
    "multiply": _binary("*"),
    "subtract": _binary("-"),
    "divide": _binary("/"),
    "matmul": OpEmitter(lambda site: Step(f"{site.inputs[0]} @ {site.inputs[1]}")),
    "cross_batch_matmul": OpEmitter(lambda site: Step(f"{site.inputs[0]} @ {site.inputs[1]}.T")),
    "permute": OpEmitter(_permute),
    "transpose": _method("transpose", "dim0", "dim1"),
    "unsqueeze": _method("unsqueeze", "dim"),
    "squeeze": _method("squeeze", "dim"),
    "select": OpEmitter(_select),
    "slice": OpEmitter(_slice),
    "expand": OpEmitter(_expand),
    "split": OpEmitter(_piece),
    "chunk": OpEmitter(_piece),
    "pad": OpEmitter(_pad),
    "pixel_shuffle": OpEmitter(_pixel_shuffle),
    "identity": OpEmitter(
        lambda site: Step(Call(site.layer, (site.x,))), lambda site: Call("nn.Identity")
    ),
    "mean": _reduce("mean"),
    "sum": _reduce("sum"),
    "max": _reduce("amax"),
    "amax": _reduce("amax"),
    "parameter": OpEmitter(_parameter_forward, _parameter_init),
}
