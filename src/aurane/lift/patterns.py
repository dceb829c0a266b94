"""Constant tensors a model computes from its input's shape, read back as catalog arguments.

Transformers build tensors that do not depend on the input's values: causal masks,
position ids, rotary tables. The language has no tensor literals, so each such constant
is recognised where it is consumed and turned into what the catalog says instead:

- an attention mask that is exactly the lower triangle is ``causal=true``;
- an embedding looked up at ids ``start..end-1`` (positions) or at one id (token type 0)
  is its table as a ``parameter`` named ``<layer>.weight``, sliced to those rows;
- ``x * cos + cat(-x2, x1) * sin`` with the cos and sin tables of positions ``0..S-1``
  (checked against the catalog's own tables, the base read from them) is
  ``rotary_embedding(x, base=...)``;
- keys and values repeated to the number of query heads (Hugging Face's ``repeat_kv``) go
  to ``scaled_dot_product_attention`` unrepeated: it repeats them (grouped-query).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx, nn

from aurane.lift.graph import LiftedGraph, Op
from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Lowering
from aurane.lift.refs import ConstRef, ParamRef, call_name
from aurane.lift.values import Meta, Observed
from aurane.records import record

NO_MASK, CAUSAL = "none", "causal"


def mask_kind(mask: Any, query: tuple[int, ...], key: tuple[int, ...]) -> str | None:
    """What an attention mask (a boolean keep-mask or an additive float mask) computed
    without the input amounts to: every position kept (``NO_MASK``), exactly the lower
    triangle (``CAUSAL``), or something the catalog cannot say (None)."""
    if not isinstance(mask, ConstRef):
        return None
    tensor = mask.tensor
    if tensor.dtype == torch.bool and bool(tensor.all()):
        return NO_MASK
    if tensor.is_floating_point() and bool((tensor == 0).all()):
        return NO_MASK
    return CAUSAL if is_causal_mask(mask, query, key) else None


def is_causal_mask(mask: Any, query: tuple[int, ...], key: tuple[int, ...]) -> bool:
    """Whether ``mask`` (a boolean keep-mask or an additive float mask) is the causal one."""
    if not isinstance(mask, ConstRef):
        return False
    tensor = mask.tensor
    rows, cols = query[-2], key[-2]
    if tensor.dim() < 2 or tuple(tensor.shape[-2:]) != (rows, cols) or rows != cols:
        return False
    lower = torch.ones(rows, cols, dtype=torch.bool).tril()
    flat = tensor.reshape(-1, rows, cols)
    if tensor.dtype == torch.bool:
        return bool((flat == lower).all())
    if tensor.is_floating_point():
        kept = flat == 0
        blocked = flat <= torch.finfo(tensor.dtype).min / 2
        return bool((kept == lower).all() and (blocked == ~lower).all())
    return False


def constant_lookup(
    lw: Lowering, module: nn.Module, path: str, args: list[Any], node: fx.Node
) -> Any:
    """An ``nn.Embedding`` applied to constant ids: rows of its table, as a parameter."""
    ids = next((a for a in args if isinstance(a, ConstRef)), None)
    label = f"nn.Embedding at constant ids ({path})"
    if ids is None:
        raise Unexpressible(label, "its ids are neither the input nor a constant")
    flat = (
        ids.tensor.reshape(-1, ids.tensor.shape[-1])
        if ids.tensor.dim()
        else ids.tensor.reshape(1, 1)
    )
    row = flat[0]
    if not bool((flat == row).all()):
        raise Unexpressible(label, "its ids differ between samples")
    length = int(row.numel())
    start = int(row[0])
    if bool((row == start).all()):
        stop = start + 1
        rows = 1
    elif bool((row == torch.arange(start, start + length, dtype=row.dtype)).all()):
        stop = start + length
        rows = length
    else:
        raise Unexpressible(label, "its ids are not a run of positions or one id")
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.Tensor):
        raise Unexpressible(label, "it has no weight table")
    table = lw.parameter(ParamRef(f"{path}.weight", weight.detach()), None)
    width = int(weight.shape[1])
    first, _ = lw.meta(node)
    dtype = first.dtype if isinstance(first, Meta) else "float32"
    sliced = table
    if (start, stop) != (0, int(weight.shape[0])):
        sliced = lw.emit(
            "slice",
            (table.id,),
            {"dim": 1, "start": start or None, "end": stop},
            Meta((2, rows, width), dtype),
            origin="nn.Embedding",
        )
    want = tuple(first.shape[1:]) if isinstance(first, Meta) else (rows, width)
    if want == (rows, width):
        return sliced
    if rows == 1 and len(want) == 2 and want[1] == width:  # one id at every position
        return lw.emit(
            "expand",
            (sliced.id,),
            {"sizes": (want[0], -1)},
            Meta((2, *want), dtype),
            origin="nn.Embedding",
        )
    raise Unexpressible(label, f"its result {want} is not a run of table rows")


# -- rotary position embedding ------------------------------------------------------------------


@record(frozen=True)
class Rotary:
    """``add(mul(a, cos), mul(cat(-a2, a1), sin))`` recognised: ``rotary_embedding(a, base)``."""

    source: fx.Node
    base: float
    inner: frozenset[fx.Node]  # the pattern's other nodes (folded into the operation)


def _constant(node: Any, observed: Observed) -> torch.Tensor | None:
    if not isinstance(node, fx.Node) or node in observed.dependent:
        return None
    return observed.seen[node].constant


def _operands(node: fx.Node, observed: Observed) -> tuple[fx.Node, torch.Tensor] | None:
    """``mul(x, c)`` or ``mul(c, x)``: the input-dependent factor and the constant one."""
    if call_name(node) != "mul" or len(node.args) != 2:
        return None
    a, b = node.args
    for x, c in ((a, b), (b, a)):
        table = _constant(c, observed)
        if isinstance(x, fx.Node) and x in observed.dependent and table is not None:
            return x, table
    return None


def _half(node: Any) -> tuple[fx.Node, int | None, int | None] | None:
    """A slice of the last axis: (source, start, stop); a piece of ``x.chunk(2, dim=-1)``
    is (source, 0, half) or (source, half, None)."""
    if not isinstance(node, fx.Node):
        return None
    name = call_name(node)
    if name == "getitem" and isinstance(node.args[0], fx.Node) and isinstance(node.args[1], int):
        whole = node.args[0]
        if call_name(whole) in ("chunk", "split") and len(whole.args) >= 2:
            dim = whole.args[2] if len(whole.args) > 2 else whole.kwargs.get("dim", 0)
            source = whole.args[0]
            meta = whole.meta.get("val")
            if dim in (-1, 3) and isinstance(source, fx.Node):
                width = _last_size(source)
                if width is not None and width % 2 == 0:
                    half = width // 2
                    if call_name(whole) == "chunk" and whole.args[1] != 2:
                        return None
                    if call_name(whole) == "split" and whole.args[1] != half:
                        return None
                    del meta
                    return (source, 0, half) if node.args[1] == 0 else (source, half, None)
    if name == "slice" and len(node.args) >= 4 and node.args[1] in (-1, 3):
        source, _, start, stop = node.args[:4]
        if isinstance(source, fx.Node):
            return source, start, stop  # type: ignore[return-value]
    if name == "getitem" and isinstance(node.args[1], tuple) and node.args[1][:1] == (Ellipsis,):
        item = node.args[1][-1]
        source = node.args[0]
        if isinstance(item, slice) and isinstance(source, fx.Node) and len(node.args[1]) == 2:
            return source, item.start, item.stop
    return None


_SIZES: dict[fx.Node, int] = {}  # the last size of each value, from the observed run


def _last_size(node: fx.Node) -> int | None:
    return _SIZES.get(node)


def _rotated(node: Any) -> tuple[fx.Node, set[fx.Node]] | None:
    """``cat((-x[..., h:], x[..., :h]), dim=-1)``: x and the nodes involved."""
    if not isinstance(node, fx.Node) or call_name(node) != "cat":
        return None
    parts = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    if not isinstance(parts, list | tuple) or len(parts) != 2 or dim not in (-1, 3):
        return None
    negated, first = parts
    if not isinstance(negated, fx.Node) or call_name(negated) != "neg":
        return None
    second = _half(negated.args[0])
    head = _half(first)
    if second is None or head is None or second[0] is not head[0]:
        return None
    if head[1] not in (0, None) or second[1] != head[2]:
        return None
    inner = {node, negated, negated.args[0], first}
    for piece in (negated.args[0], first):  # the chunk both pieces come from
        if isinstance(piece, fx.Node) and call_name(piece) == "getitem":
            inner.add(piece.args[0])  # type: ignore[arg-type]
    return head[0], inner  # type: ignore[return-value]


def rotary_tables(length: int, width: int, base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The cos and sin tables ``rotary_embedding`` computes (the generated helper's maths)."""
    exponents = torch.arange(0, width, 2, dtype=torch.float32) / width
    inv_freq = 1.0 / base**exponents
    angles = torch.outer(torch.arange(length, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


def _table(constant: torch.Tensor, length: int, width: int) -> torch.Tensor | None:
    if constant.dim() < 2 or tuple(constant.shape[-2:]) != (length, width):
        return None
    flat = constant.reshape(-1, length, width).float()
    if not bool((flat == flat[0]).all()):
        return None
    return flat[0]


def _base(cos: torch.Tensor, sin: torch.Tensor, width: int) -> float:
    if width < 4 or cos.shape[0] < 2:
        return 10000.0
    angle = float(torch.atan2(sin[1, 1], cos[1, 1]))
    if angle <= 0:
        return 10000.0
    base = angle ** (-width / 2)
    return float(round(base)) if abs(base - round(base)) < 1e-3 * base else base


def find_rotary(module: fx.GraphModule, observed: Observed) -> dict[fx.Node, Rotary]:
    found: dict[fx.Node, Rotary] = {}
    _SIZES.clear()
    for node, seen in observed.seen.items():
        if isinstance(seen.first, Meta) and seen.first.shape:
            _SIZES[node] = seen.first.shape[-1]
    for node in module.graph.nodes:
        if call_name(node) != "add" or len(node.args) != 2:
            continue
        for first, second in (node.args, reversed(node.args)):
            plain = _operands(first, observed) if isinstance(first, fx.Node) else None
            turned = _operands(second, observed) if isinstance(second, fx.Node) else None
            if plain is None or turned is None:
                continue
            source, cos_constant = plain
            rotation = _rotated(turned[0])
            if rotation is None or rotation[0] is not source:
                continue
            meta = observed.seen[source].first
            if not isinstance(meta, Meta) or len(meta.shape) < 3:
                continue
            length, width = meta.shape[-2], meta.shape[-1]
            cos = _table(cos_constant, length, width)
            sin = _table(turned[1], length, width)
            if cos is None or sin is None:
                continue
            base = _base(cos, sin, width)
            want_cos, want_sin = rotary_tables(length, width, base)
            if not (
                torch.allclose(cos, want_cos, atol=1e-5)
                and torch.allclose(sin, want_sin, atol=1e-5)
            ):
                continue
            inner = {first, second, *rotation[1]}
            found[node] = Rotary(source, base, frozenset(inner))  # type: ignore[arg-type]
            break
    return found


# -- grouped-query attention ----------------------------------------------------------------------

REPEAT_HEADS = "repeat_heads"  # x.repeat_interleave(n, dim=1): kept only to feed attention


def _repeated_heads(op: Op, producer: dict[str, Op], uses: dict[str, int]) -> str | None:
    """``reshape(expand(unsqueeze(kv, 2), -1, n, -1, -1), n * H, S, D)`` (HF's repeat_kv)
    or ``kv.repeat_interleave(n, dim=1)``: the value before it, ``kv``, which the catalog's
    attention repeats itself."""
    if op.op == REPEAT_HEADS and uses.get(op.id) == 1:
        return op.inputs[0]
    if op.op != "reshape" or uses.get(op.id) != 1:
        return None
    expand = producer.get(op.inputs[0])
    if expand is None or expand.op != "expand" or uses.get(expand.id) != 1:
        return None
    unsqueeze = producer.get(expand.inputs[0])
    if unsqueeze is None or unsqueeze.op != "unsqueeze" or unsqueeze.args.get("dim") != 2:
        return None
    if uses.get(unsqueeze.id) != 1:
        return None
    source = unsqueeze.inputs[0]
    heads, length, width = unsqueeze.shape[0], unsqueeze.shape[-2], unsqueeze.shape[-1]
    sizes = tuple(expand.args.get("sizes", ()))
    if (
        len(sizes) != 4
        or sizes[0] not in (-1, heads)
        or sizes[2:] not in ((-1, -1), (length, width))
    ):
        return None
    times = sizes[1]
    if tuple(op.shape) != (heads * times, length, width):
        return None
    return source


def drop_repeated_heads(graph: LiftedGraph) -> None:
    """Keys and values repeated to the query heads before ``scaled_dot_product_attention``
    are given to it unrepeated: it repeats them (grouped-query attention)."""
    producer = graph.producer()
    uses: dict[str, int] = {}
    for op in graph.ops:
        for name in op.inputs:
            uses[name] = uses.get(name, 0) + 1
    for op in graph.ops:
        if op.op != "scaled_dot_product_attention":
            continue
        inputs = list(op.inputs)
        for index in (1, 2):
            found = (
                _repeated_heads(producer[inputs[index]], producer, uses)
                if inputs[index] in producer
                else None
            )
            if found is not None:
                inputs[index] = found
        op.inputs = tuple(inputs)
