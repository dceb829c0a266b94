"""Emission of ops/index.py and ops/buffer.py, registered in ``emit.EMITTERS``.

Each becomes the torch call a person would write: ``ids != 0``, ``keep & causal``,
``torch.where(c, a, b)``, ``x.masked_fill(pad, float("-inf"))``, ``x.to(torch.int64)``,
``x.cumsum(1)``, ``x.roll(1, 1)``, ``x.gather(1, i)``, ``torch.take_along_dim(x, i,
dim=1)``. Constructors make the batch's tensor on the input's device: ``torch.zeros(
x.shape[0], 4, device=x.device)``; ``arange`` expands one row over the batch (a view).
``index_select`` and ``lookup`` are ``take_along_dim`` with the index given the axes it
broadcasts over. A ``buffer`` is registered in ``__init__`` (``self.register_buffer(
"name", tensor, persistent=False)``) and expanded over the batch in forward like a
``parameter``; its contents are torch calls, or a helper function of
``buffer_helpers.py`` inlined into the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aurane.backends.torch.data_emit import quote
from aurane.backends.torch.emit_common import (
    REGISTER_BUFFER,
    Call,
    OpEmitter,
    Site,
    Step,
    kw,
    lit,
)
from aurane.ops.index import fill_number
from aurane.ops.shape import int_items

_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def number(value: Any) -> str:
    """A fill value as Python: ``float("-inf")`` for infinities, else the literal."""
    value = fill_number(value)
    if isinstance(value, float) and math.isinf(value):
        return 'float("-inf")' if value < 0 else 'float("inf")'
    return lit(value)


def _dtype(name: str | None) -> list[str]:
    return [] if name is None else [f"dtype=torch.{name}"]


def _compare(symbol: str) -> OpEmitter:
    def forward(site: Site) -> Step:
        if len(site.inputs) == 2:
            return Step(f"{site.inputs[0]} {symbol} {site.inputs[1]}")
        return Step(f"{site.x} {symbol} {lit(site.args['constant'])}")

    return OpEmitter(forward)


def _where(site: Site) -> Step:
    args = site.inputs if len(site.inputs) == 3 else (*site.inputs, lit(site.args["other"]))
    return Step(Call("torch.where", tuple(args)))


def _masked_fill(site: Site) -> Step:
    mask = site.tensor("mask")
    return Step(Call(f"{site.x}.masked_fill", (str(mask), number(site.args["value"]))))


def _device(site: Site) -> str:
    return f"device={site.batch}.device"


def _arange(site: Site) -> Step:
    a = site.args
    start, end = (0, a["start"]) if a["end"] is None else (a["start"], a["end"])
    bounds = [start, end, a["step"]] if a["step"] != 1 else [end] if start == 0 else [start, end]
    call = Call("torch.arange", (*map(lit, bounds), *_dtype(a["dtype"]), _device(site)))
    return Step(f"{call.text()}.expand({site.batch}.shape[0], -1)")


def _fill(func: str) -> OpEmitter:
    def forward(site: Site) -> Step:
        a = site.args
        sizes = (f"{site.batch}.shape[0]", *map(str, int_items(a["shape"])))
        value = [number(a["value"])] if func == "torch.full" else []
        if func == "torch.full":
            sizes = (f"({', '.join(sizes)})",)
        value_kind = "float32" if func != "torch.full" or isinstance(a["value"], float) else ""
        wanted = a["dtype"] or site.param_dtype
        dtype = [] if wanted == value_kind else _dtype(wanted)  # torch.full(.., 7) is int
        return Step(Call(func, (*sizes, *value, *dtype, _device(site))))

    return OpEmitter(forward)


def _like(func: str) -> OpEmitter:
    def forward(site: Site) -> Step:
        a = site.args
        value = [number(a["value"])] if "value" in a else []
        return Step(Call(func, (site.x, *value, *_dtype(a["dtype"]))))

    return OpEmitter(forward)


def _spread(index: str, rank: int, axis: int, x: str) -> str:
    """A per-sample ``(n,)`` index spread over the other sample axes of ``x`` for
    ``gather``: ``i[:, None, :].expand(-1, x.shape[1], -1)`` (gather broadcasts nothing;
    torch.export keeps the batch dynamic through it, unlike take_along_dim)."""
    if rank == 1:
        return index
    items = [":" if k == axis else "None" for k in range(rank)]
    sizes = ["-1", *("-1" if k == axis else f"{x}.shape[{k + 1}]" for k in range(rank))]
    return f"{index}[:, {', '.join(items)}].expand({', '.join(sizes)})"


def _index_select(site: Site) -> Step:
    rank = len(site.in_shape)
    dim = site.args["dim"]
    axis = dim - 1 if dim > 0 else rank + dim
    index = _spread(str(site.tensor("index")), rank, axis, site.x)
    return Step(Call(f"{site.x}.gather", (lit(dim), index)))


def _lookup(site: Site) -> Step:
    """``gather_rows(table, index)`` (a helper of ``buffer_helpers.py``): the table's rows
    at the positions, one gather over the flattened positions."""
    return Step(Call("gather_rows", (site.x, str(site.tensor("index")))))


# -- buffers ---------------------------------------------------------------------------------


_NATURAL = {"arange": "int64", "causal_mask": "bool", "relative_position_index": "int64"}


def buffer_contents(args: Mapping[str, Any], dtype: str) -> str:
    """The torch expression of a buffer's contents (without the batch axis), converted
    to ``dtype`` when the init makes another one."""
    init = args["init"]
    made = _contents(args, dtype)
    natural = _NATURAL.get(init)
    if natural is not None and natural != dtype:
        return f"{made}.to(torch.{dtype})"
    return made


def _contents(args: Mapping[str, Any], dtype: str) -> str:
    init = args["init"]
    shape = tuple(int_items(args["shape"]))
    if init == "arange":
        return Call("torch.arange", (str(shape[0]),)).text()
    if init == "causal_mask":
        return Call("torch.ones", (*map(str, shape), "dtype=torch.bool")).text() + ".tril()"
    if init == "sinusoid":
        table = Call("sinusoid_table", tuple(map(str, shape))).text()
        return table if dtype == "float32" else f"{table}.to(torch.{dtype})"
    if init == "relative_position_index":
        return Call("relative_position_index", tuple(map(str, int_items(args["window"])))).text()
    cast = [] if dtype == "float32" else [f"dtype=torch.{dtype}"]
    if init == "full" and not cast and not isinstance(fill_number(args["value"]), float):
        cast = ["dtype=torch.float32"]  # torch.full of an int is int64
    if init == "full":
        return Call("torch.full", (lit(shape), number(args["value"]), *cast)).text()
    return Call(f"torch.{init}", (*map(str, shape), *cast)).text()


def _buffer_init(site: Site) -> Call:
    contents = buffer_contents(site.args, _out_dtype(site))
    persistent = [] if site.args["persistent"] else ["persistent=False"]
    return Call(REGISTER_BUFFER, (quote(site.attr), contents, *persistent))


def _out_dtype(site: Site) -> str:
    from aurane.ops.buffer import buffer_dtype

    return buffer_dtype(site.args, site.param_dtype)


def _buffer_forward(site: Site) -> Step:
    keep = ", -1" * len(site.out_shape)
    return Step(f"{site.layer}.expand({site.batch}.shape[0]{keep})")


INDEX_EMITTERS: Mapping[str, OpEmitter] = {
    **{name: _compare(symbol) for name, symbol in _COMPARE.items()},
    "logical_and": OpEmitter(lambda site: Step(f"{site.inputs[0]} & {site.inputs[1]}")),
    "logical_or": OpEmitter(lambda site: Step(f"{site.inputs[0]} | {site.inputs[1]}")),
    "logical_not": OpEmitter(lambda site: Step(f"~{site.x}")),
    "where": OpEmitter(_where),
    "masked_fill": OpEmitter(_masked_fill),
    "abs": OpEmitter(lambda site: Step(f"{site.x}.abs()")),
    "log": OpEmitter(lambda site: Step(f"{site.x}.log()")),
    "exp": OpEmitter(lambda site: Step(f"{site.x}.exp()")),
    "sin": OpEmitter(lambda site: Step(f"{site.x}.sin()")),
    "cos": OpEmitter(lambda site: Step(f"{site.x}.cos()")),
    "clamp": OpEmitter(
        lambda site: Step(
            Call(
                f"{site.x}.clamp",
                tuple(kw(k, site.args[k]) for k in ("min", "max") if site.args[k] is not None),
            )
        )
    ),
    "to": OpEmitter(lambda site: Step(Call(f"{site.x}.to", (f"torch.{site.args['dtype']}",)))),
    "cumsum": OpEmitter(lambda site: Step(Call(f"{site.x}.cumsum", (lit(site.args["dim"]),)))),
    "roll": OpEmitter(
        lambda site: Step(
            Call(
                f"{site.x}.roll",
                (lit(site.args["shifts"]),)
                + ((lit(site.args["dims"]),) if site.args["dims"] != () else ()),
            )
        )
    ),
    "arange": OpEmitter(_arange),
    "zeros": _fill("torch.zeros"),
    "ones": _fill("torch.ones"),
    "full": _fill("torch.full"),
    "zeros_like": _like("torch.zeros_like"),
    "ones_like": _like("torch.ones_like"),
    "full_like": _like("torch.full_like"),
    "gather": OpEmitter(
        lambda site: Step(
            Call(f"{site.x}.gather", (lit(site.args["dim"]), str(site.tensor("index"))))
        )
    ),
    "take_along_dim": OpEmitter(
        lambda site: Step(
            Call(
                "torch.take_along_dim",
                (site.x, str(site.tensor("index")), kw("dim", site.args["dim"])),
            )
        )
    ),
    "index_select": OpEmitter(_index_select),
    "lookup": OpEmitter(_lookup),
    "buffer": OpEmitter(_buffer_forward, _buffer_init),
}
