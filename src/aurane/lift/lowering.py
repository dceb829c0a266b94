"""The lowerer's state and the plumbing every handler uses: a base below both sides.

``Lowering`` holds what lowering the traced graph builds (the operations, the gaps, the
reference of each node) and the calls that add to it (``emit``, ``gap``, ``parameter``).
The driver, ``aurane.lift.lower.Lowerer``, extends it with the walk over the graph; the
handlers it calls (``functions``, ``patterns``, ``outputs``) take a ``Lowering`` and import
this module, never the driver, so nothing imports back up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import torch
from torch import fx

from aurane.lift.graph import Gap, Op, Scope
from aurane.lift.layers import Unexpressible
from aurane.lift.refs import UNKNOWN, ConstRef, ParamRef, Stop, TensorRef
from aurane.lift.trace import Traced
from aurane.lift.values import FIRST, Meta, Observed, dtype_name

NO_LITERAL = "it uses a constant tensor (the language has no tensor literals)"

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _where(node: fx.Node) -> str | None:
    trace = node.meta.get("stack_trace") or node.stack_trace
    if not trace:
        return None
    found = [m for m in _FRAME.finditer(trace) if "/torch/" not in m.group(1)]
    if not found:
        return None
    last = found[-1]
    return f"{last.group(1)}:{last.group(2)}"


class Lowering:
    """The state of one lowering and the calls that add to it (``aurane.lift.lower`` walks
    the graph)."""

    input_shape: tuple[int, ...]  # set when the walk starts: the first input's
    input_dtype: str
    input_values: dict[str, tuple[tuple[int, ...], str]]  # every input's (shape, dtype) by id

    def __init__(
        self,
        traced: Traced,
        observed: Observed,
        output_names: list[str] | None = None,
        wanted_output: str | None = None,
    ) -> None:
        self.traced = traced
        self.output_names = output_names
        self.wanted_output = wanted_output
        self.root = traced.root
        self.module = traced.graph_module
        self.observed = observed
        self.ops: list[Op] = []
        self.by_id: dict[str, Op] = {}
        self.gaps: list[Gap] = []
        self.env: dict[fx.Node, Any] = {}
        self.modules = dict(self.root.named_modules(remove_duplicate=False))
        self.scope: tuple[Scope, ...] = ()
        self.node: fx.Node | None = None
        self.counter = 0
        self.groups = 0
        self.parameter_ids = {id(p) for p in self.root.parameters()}
        self.owners: dict[int, str] = {}  # parameter -> the first module holding it
        for path, module in self.root.named_modules(remove_duplicate=False):
            weight = getattr(module, "weight", None)
            if isinstance(weight, torch.Tensor):
                self.owners.setdefault(id(weight), path)
        self.parameters_made: dict[str, TensorRef] = {}
        self.applied: set[str] = set()  # layers with weights already applied once
        self.members: dict[str, list[fx.Node]] = {}  # a layer call's nodes (export graphs)
        # attention calls' dropout in training mode (aurane.lift.training), unseen in eval
        self.attention_dropout: dict[fx.Node, float] = {}

    # -- plumbing ----------------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def gap(self, what: str, why: str, path: str | None = None) -> None:
        where = _where(self.node) if self.node is not None else None
        if path is None:
            path = self.scope[-1].path if self.scope else ""
        self.gaps.append(Gap(path, what, why, where))

    def meta(self, node: fx.Node) -> tuple[Any, Any]:
        seen = self.observed.seen[node]
        return seen.first, seen.second

    def emit(
        self,
        op: str,
        inputs: tuple[str, ...],
        args: dict[str, Any],
        meta: Any,
        *,
        layer: str | None = None,
        origin: str = "",
        group: str | None = None,
        pieces: int = 0,
        scope: tuple[Scope, ...] | None = None,
    ) -> TensorRef:
        if not isinstance(meta, Meta):
            raise Unexpressible(origin or op, "its result is not a single tensor")
        name = self.fresh(op)
        made = Op(
            name,
            op,
            inputs,
            args,
            meta.shape[1:],
            meta.dtype,
            layer=layer,
            scope=self.scope if scope is None else scope,
            origin=origin,
            group=group,
            pieces=pieces,
            where=_where(self.node) if self.node is not None else None,
        )
        self.ops.append(made)
        self.by_id[name] = made
        return TensorRef(name)

    def shape_of(self, ref: TensorRef) -> tuple[int, ...]:
        """A value's per-sample shape (``Stop`` for one lost to a gap)."""
        if ref.id.startswith(UNKNOWN):
            raise Stop
        made = self.by_id.get(ref.id)
        if made is not None:
            return made.shape
        return self.input_values.get(ref.id, (self.input_shape, ""))[0]

    def dtype_of(self, ref: TensorRef) -> str:
        made = self.by_id.get(ref.id)
        if made is not None:
            return made.dtype
        return self.input_values.get(ref.id, ((), self.input_dtype))[1]

    # nn.Flatten and torch.flatten alike
    def _flatten(
        self, x: TensorRef, start: int, end: int, meta: Any, label: str, path: str | None = None
    ) -> TensorRef:
        rank = len(self.shape_of(x)) + 1
        start, end = start % rank, end % rank
        if start == 0:
            raise Unexpressible(label, "it flattens the batch axis into the sample")
        if start == 1 and end == rank - 1:
            return self.emit("flatten", (x.id,), {}, meta, layer=path, origin=label)
        return self.emit("reshape", (x.id,), {"shape": meta.shape[1:]}, meta, origin=label)

    # -- parameters read directly ---------------------------------------------------------------

    def parameter(
        self, ref: ParamRef, batched_rank: int | None, meta_shape: tuple[int, ...] | None = None
    ) -> TensorRef:
        """A ``parameter(...)`` op for ``ref`` used against batched values of ``batched_rank``
        (None: used as given, with a batch axis added by an expand)."""
        shape = tuple(int(d) for d in ref.tensor.shape)
        if batched_rank is not None and len(shape) == batched_rank and shape[:1] == (1,):
            per_sample, batch_axis = shape[1:], True
        else:
            per_sample, batch_axis = shape, False
        key = f"{ref.path}/{batch_axis}"
        made = self.parameters_made.get(key)
        if made is not None:
            return made
        args: dict[str, Any] = {"shape": per_sample}  # () for a scalar (CLIP's logit_scale)
        args.update(_init_of(ref.tensor))
        if not batch_axis:
            args["batch_axis"] = False
        meta = Meta((FIRST, *per_sample), dtype_name(ref.tensor.dtype))
        out = self.emit("parameter", (), args, meta, layer=ref.path, origin="nn.Parameter")
        self.parameters_made[key] = out
        return out

    def constant(self, ref: ConstRef, what: str) -> TensorRef:
        """A constant computed in the forward without the input, as the operations computing
        it where the catalog has them (the driver rebuilds them); ``Unexpressible`` here."""
        raise Unexpressible(what, NO_LITERAL)

    def try_constant(self, ref: Any, what: str) -> TensorRef | None:
        """A constant other than a buffer as the operations computing it (``constant``), else
        None: where the constant can also be read back otherwise (an attention mask, ids)."""
        if not isinstance(ref, ConstRef) or ref.buffer is not None:
            return None
        try:
            return self.constant(ref, what)
        except Unexpressible:
            return None

    def buffer(self, ref: ConstRef) -> TensorRef:
        """A ``buffer(...)`` op for a buffer read directly, its contents named by the
        catalog's ``init`` that computes them exactly (Swin's and MaxViT's
        ``relative_position_index``, a causal mask, ``arange``, a fill); one the state dict
        does not hold is ``persistent=false`` (CLIP's causal mask), and without such an init
        it is a constant like any other (no tensor literals)."""
        assert ref.buffer is not None
        made = self.parameters_made.get(ref.buffer)
        if made is not None:
            return made
        tensor = ref.tensor
        shape = tuple(int(d) for d in tensor.shape)
        label = f"buffer {ref.buffer}"
        if not shape:
            raise Unexpressible(label, "a scalar buffer has no shape")
        init = _buffer_init(tensor)
        if init is None and not ref.persistent:
            raise Unexpressible(label, NO_LITERAL)
        if init is None:
            raise Unexpressible(
                label,
                "its contents are none the catalog's buffer(init=...) computes (zeros, ones, "
                "full, arange, causal_mask, sinusoid, relative_position_index)",
            )
        args: dict[str, Any] = {"shape": shape, **init}
        dtype = dtype_name(tensor.dtype)
        if dtype != _BUFFER_DTYPE.get(str(init.get("init", "zeros")), "float32"):
            args["dtype"] = dtype
        if not ref.persistent:
            args["persistent"] = False
        meta = Meta((FIRST, *shape), dtype)
        out = self.emit("buffer", (), args, meta, layer=ref.buffer, origin="buffer")
        self.parameters_made[ref.buffer] = out
        return out


# the dtype each init gives without dtype= (aurane.ops.buffer)
_BUFFER_DTYPE = {"arange": "int64", "causal_mask": "bool", "relative_position_index": "int64"}


def _buffer_init(tensor: torch.Tensor) -> dict[str, Any] | None:
    """The buffer ``init`` (and its arguments) whose contents equal ``tensor`` exactly."""
    from aurane.backends.torch.buffer_helpers import relative_position_index

    flat = tensor.detach().reshape(-1)
    if flat.numel() == 0:
        return None
    if bool((flat == flat[0]).all()) and tensor.dtype != torch.bool:
        first = flat[0].item()
        if first == 0:
            return {}
        if first == 1:
            return {"init": "ones"}
        return {"init": "full", "value": first}
    if tensor.dim() == 1 and torch.equal(flat, torch.arange(len(flat), dtype=tensor.dtype)):
        return {"init": "arange"}
    if tensor.dim() != 2 or tensor.shape[0] != tensor.shape[1]:
        return None
    size = int(tensor.shape[0])
    if tensor.dtype == torch.bool:
        causal = torch.ones(size, size, dtype=torch.bool).tril()
        return {"init": "causal_mask"} if torch.equal(tensor, causal) else None
    for height in range(1, size + 1):
        if size % height == 0:
            table = relative_position_index(height, size // height).to(tensor.dtype)
            if torch.equal(tensor, table):
                return {"init": "relative_position_index", "window": (height, size // height)}
    return None


def _init_of(tensor: torch.Tensor) -> dict[str, Any]:
    """The ``init=`` that a person would write for these values."""
    flat = tensor.detach().reshape(-1).float()
    if flat.numel() == 0:
        return {}
    first = float(flat[0])
    if bool((flat == first).all()):
        if first == 0.0:
            return {}
        if first == 1.0:
            return {"init": "ones"}
        return {"init": "full", "value": _round(first)}
    std = float(flat.std()) if flat.numel() > 1 else 0.02
    args: dict[str, Any] = {"init": "normal"}
    # a sample of n values estimates 0.02 within about 0.02 / sqrt(2 (n - 1)): three times
    # that (a small table of 9 values reads 0.012 as often as not) is still the default
    tolerance = max(0.005, 3 * 0.02 / math.sqrt(2 * max(flat.numel() - 1, 1)))
    if std > 0 and abs(std - 0.02) > tolerance:
        args["std"] = _round(std)
    return args


def _round(value: float) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    digits = 2 - int(math.floor(math.log10(abs(value))))
    return round(value, max(digits, 0) + 2)


Handler = Callable[[Lowering, fx.Node, list[Any], dict[str, Any]], Any]

__all__ = ["NO_LITERAL", "Handler", "Lowering"]
