"""What each traced node computes, observed by running the graph at two batch sizes.

The traced graph is run (``torch.fx.Interpreter``, no gradients) on inputs of batch
``FIRST`` and ``SECOND``. Comparing the two runs sorts every number the forward computed
from sizes (``x.shape[0]``, ``x.size(1) // groups``): the same in both runs is a static
size, equal to the batch in each run is the batch, anything else depends on the batch in
a way no per-sample program can express. Tensors are kept as shape and dtype only, except
the ones that do not depend on the input's values (masks, position ids, rotary tables),
which are kept whole so that patterns over them can be recognised.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import fx, nn

from aurane.records import record

FIRST, SECOND = 2, 3
CONSTANT_LIMIT = 1 << 22  # elements of an input-independent tensor kept whole


@record(frozen=True)
class Meta:
    """A tensor seen at one batch size."""

    shape: tuple[int, ...]
    dtype: str


@record
class Seen:
    first: Any  # Meta, a Python value, or a tuple/list of them
    second: Any
    constant: torch.Tensor | None = None  # the value at batch FIRST, input-independent only


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _meta(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return Meta(tuple(int(d) for d in value.shape), dtype_name(value.dtype))
    if isinstance(value, torch.Size):
        return tuple(int(d) for d in value)
    if isinstance(value, tuple | list):
        items = [_meta(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {k: _meta(v) for k, v in value.items()}
    if hasattr(value, "to_tuple") and callable(value.to_tuple):  # a Hugging Face ModelOutput
        return _meta(dict(value.items()))
    if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
        return int(value) if isinstance(value, torch.SymInt) else value
    return value


_SHAPE_METHODS = frozenset({"size", "dim", "numel"})
_SHAPE_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "is_cuda"})


def is_shape_query(node: fx.Node) -> bool:
    """A node that reads a tensor's sizes (or dtype), never its values."""
    if node.op == "call_method" and node.target in _SHAPE_METHODS:
        return True
    if node.op == "call_function":
        if node.target is getattr and len(node.args) > 1 and node.args[1] in _SHAPE_ATTRS:
            return True
        name = getattr(node.target, "__name__", "")
        if name in ("sym_size.int", "sym_size", "sym_numel.default", "sym_stride.int"):
            return True
    return False


def data_dependent(graph: fx.Graph) -> set[fx.Node]:
    """Nodes whose result depends on the input's values (not only on its shape)."""
    found: set[fx.Node] = set()
    for node in graph.nodes:
        if node.op == "placeholder":
            found.add(node)
        elif node.op in ("call_function", "call_method", "call_module", "output"):
            if is_shape_query(node):
                continue
            if any(arg in found for arg in node.all_input_nodes):
                found.add(node)
    return found


class _Recorder(fx.Interpreter):
    def __init__(self, module: fx.GraphModule, keep: set[fx.Node]) -> None:
        super().__init__(module, garbage_collect_values=True)
        self.keep = keep  # nodes whose tensors are input-independent
        self.seen: dict[fx.Node, Any] = {}
        self.constants: dict[fx.Node, torch.Tensor] = {}

    def run_node(self, n: fx.Node) -> Any:
        result = super().run_node(n)
        self.seen[n] = _meta(result)
        if n in self.keep and isinstance(result, torch.Tensor) and result.numel() <= CONSTANT_LIMIT:
            self.constants[n] = result.detach().clone()
        return result


@record
class Observed:
    seen: dict[fx.Node, Seen]
    output: Any  # the graph's output at batch FIRST (tensors kept)
    dependent: set[fx.Node]


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, tuple | list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


def observe(module: fx.GraphModule, make_input: Any) -> Observed:
    """Run ``module`` at batch FIRST, then at SECOND on the ``meta`` device (shapes and
    Python values only, no arithmetic: a second real run of a ViT-L would cost seconds);
    ``make_input(batch)`` gives the inputs."""
    dependent = data_dependent(module.graph)
    keep = {n for n in module.graph.nodes if n not in dependent}
    with torch.no_grad():
        first = _Recorder(module, keep)
        output = first.run(*make_input(FIRST))
        second = _Recorder(module, set())
        _run_on_meta(second, module, make_input(SECOND))
    seen = {
        node: Seen(first.seen.get(node), second.seen.get(node), first.constants.get(node))
        for node in module.graph.nodes
    }
    return Observed(seen, output, dependent)


class _Run(nn.Module):
    """``recorder.run`` as a module holding the traced graph, for ``functional_call``."""

    def __init__(self, module: fx.GraphModule, recorder: _Recorder) -> None:
        super().__init__()
        self.graph_module = module
        self.recorder = recorder

    def forward(self, *inputs: Any) -> Any:
        return self.recorder.run(*inputs)


def _run_on_meta(recorder: _Recorder, module: fx.GraphModule, inputs: tuple[Any, ...]) -> None:
    """``recorder`` run with every parameter, buffer and input on the ``meta`` device (and
    tensors created meanwhile there too); a real run where that fails (a tensor the module
    keeps outside its parameters and buffers, an operation without a meta kernel)."""
    from torch.func import functional_call

    meta = {
        f"graph_module.{name}": tensor.to("meta")
        for name, tensor in (
            *module.named_parameters(remove_duplicate=False),
            *module.named_buffers(remove_duplicate=False),
        )
    }
    try:
        with torch.device("meta"):
            functional_call(_Run(module, recorder), meta, tuple(_to_meta(x) for x in inputs))
    except Exception:  # observe it for real instead
        recorder.seen.clear()
        recorder.run(*inputs)


def _to_meta(value: Any) -> Any:
    return value.to("meta") if isinstance(value, torch.Tensor) else value
