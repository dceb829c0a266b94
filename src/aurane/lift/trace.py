"""Tracing a module into a graph that keeps its module hierarchy.

Two tracers, tried in order:

- ``torch.fx`` symbolic tracing with PyTorch's layers as leaves (``aurane.lift.layers``):
  each ``nn.Conv2d`` stays one ``call_module`` node, every function call between layers is
  a node, and ``node.meta["nn_module_stack"]`` names the module calls a node ran inside.
  It is fast (milliseconds for a ResNet) and sees the code as written: ``x.view(...)``,
  ``torch.cat``, ``F.relu``. Every torchvision classifier traces this way.
- ``torch.export`` (non-strict), when symbolic tracing fails for any reason other than
  control flow on a tensor (Hugging Face models: keyword-only forwards, cache objects,
  item assignment on proxies). Its graph is ATen operations; the nodes of each known layer
  (by ``nn_module_stack``) are folded back into one layer node by ``aurane.lift.lower``.

A module whose forward branches on a tensor's value cannot become a static program: that
is one ``TraceFailure`` naming the line of Python responsible (the innermost frame outside
torch), and export is not tried (it would fail on the same branch).
"""

from __future__ import annotations

import contextlib
import io
import linecache
import logging
import os
import traceback
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import torch
from torch import fx, nn

from aurane.lift import layers
from aurane.lift.inputs import forward_signature
from aurane.records import record

FX = "fx"
EXPORT = "export"
TRACERS = ("auto", FX, EXPORT)


class TraceFailure(Exception):
    """The module could not be traced: ``message``, at ``where`` (file:line) when known."""

    def __init__(self, message: str, where: str | None = None, line: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.line = line

    def describe(self) -> str:
        if self.where is None:
            return self.message
        code = f"\n    {self.line}" if self.line else ""
        return f"{self.where}: {self.message}{code}"


@record
class Traced:
    graph_module: fx.GraphModule
    root: nn.Module
    tracer: str  # FX or EXPORT
    fx_error: str | None = None  # why symbolic tracing failed, when export was used


class _LeafTracer(fx.Tracer):
    """Symbolic tracing that stops at the layers Aurane maps (and unknown torch.nn leaves),
    recording each node's Python line for the report of what cannot be expressed."""

    def __init__(self, helpers: Sequence[Any] = ()) -> None:
        super().__init__(autowrap_functions=tuple(helpers))
        self.record_stack_traces = True
        # a buffer read in forward is a value of the graph (get_attr), as torch.export makes
        # it: a plain tensor fails at buffer.expand(x.shape[0], -1) (a size from the input)
        self.proxy_buffer_attributes = True

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return layers.is_leaf(m)


_TORCH_DIR = os.path.dirname(torch.__file__)
_HERE = os.path.dirname(os.path.abspath(__file__))


def user_frame(error: BaseException) -> tuple[str, str] | None:
    """(file:line, source line) of the innermost traceback frame outside torch and Aurane."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        path = os.path.abspath(frame.filename)
        if path.startswith(_TORCH_DIR) or path.startswith(_HERE):
            continue
        if frame.filename.startswith("<"):
            continue
        text = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
        return f"{frame.filename}:{frame.lineno}", text
    return None


def _is_control_flow(error: BaseException) -> bool:
    text = str(error)
    return isinstance(error, fx.proxy.TraceError) and (
        "control flow" in text or "iterate" in text or "len(" in text
    )


def _left_at_default(root: nn.Module, names: Collection[str]) -> dict[str, Any]:
    """Arguments of ``forward`` that are not inputs and have defaults (``padding_mask=None``):
    traced at their default, as a call without them runs them."""
    import inspect

    parameters = forward_signature(root)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    first = parameters[0].name if parameters else None
    return {
        p.name: p.default
        for p in parameters
        if p.kind in kinds
        and p.default is not inspect.Parameter.empty
        and p.name not in names
        and not (p.name == first and len(names) == 1 and first not in names)
    }


def split_inputs(
    root: nn.Module, inputs: Mapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The inputs as a call passes them: the ones that lead ``forward``'s parameters (or a
    single input of a forward without named ones) positionally, the rest by keyword."""
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = [p.name for p in forward_signature(root) if p.kind in kinds]
    names = list(inputs)
    if len(names) == 1 and names[0] not in parameters:
        return (inputs[names[0]],), {}
    positional: list[Any] = []
    for name in parameters:
        if name not in inputs:
            break
        positional.append(inputs[name])
    keywords = {name: value for name, value in list(inputs.items())[len(positional) :]}
    return tuple(positional), keywords


def generated_helpers(root: nn.Module) -> tuple[Any, ...]:
    """The helpers of Aurane's generated files that ``root``'s code calls (``gather_rows``,
    compared by bytecode with the package's own): traced as one call each, so that a
    compiled program imports back as the operation that wrote it, not as its steps."""
    from aurane.backends.torch.buffer_helpers import gather_rows

    found: dict[int, Any] = {}
    for module in root.modules():
        helper = getattr(type(module).forward, "__globals__", {}).get(gather_rows.__name__)
        code = getattr(helper, "__code__", None)
        if code is not None and code.co_code == gather_rows.__code__.co_code:
            found[id(helper)] = helper
    return tuple(found.values())


def trace_fx(root: nn.Module, names: Collection[str] = ()) -> fx.GraphModule:
    tracer = _LeafTracer(generated_helpers(root))
    graph = tracer.trace(root, concrete_args=_left_at_default(root, names) or None)
    name = type(root).__name__
    return fx.GraphModule(tracer.root, graph, name)


def placeholder_inputs(module: fx.GraphModule, names: Sequence[str]) -> list[str | None]:
    """The input each placeholder of a traced graph stands for (None: an argument left at
    its default). fx names a placeholder after its parameter, export after its keyword; a
    single input of a forward without named parameters is the first placeholder."""
    placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
    found: list[str | None] = [
        str(n.target) if str(n.target) in names else n.name if n.name in names else None
        for n in placeholders
    ]
    if len(names) == 1 and placeholders and names[0] not in found:
        found[0] = names[0]
    return found


def placeholder_values(module: fx.GraphModule, inputs: Mapping[str, Any]) -> tuple[Any, ...]:
    """The values to run a traced graph with, one per placeholder: the inputs, and the
    defaults of the arguments traced at them."""
    placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
    values: list[Any] = []
    for node, name in zip(placeholders, placeholder_inputs(module, list(inputs)), strict=True):
        values.append(inputs[name] if name is not None else (node.args[0] if node.args else None))
    return tuple(values)


@contextlib.contextmanager
def quiet_torch() -> Iterator[None]:
    """torch's own output (export's guard warnings, the partial graph it prints to stderr
    when it fails) kept off the user's terminal: what matters reaches them as one located
    message."""
    logger = logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def trace_export(
    root: nn.Module, example: tuple[Any, ...], keywords: Mapping[str, Any] | None = None
) -> fx.GraphModule:
    from torch.export import Dim, export

    keywords = dict(keywords or {})
    dynamic: Any = tuple({0: Dim.AUTO} for _ in example)
    if keywords:  # by the forward's parameter names, as export matches them
        given = [p.name for p in forward_signature(root)][: len(example)]
        dynamic = {name: {0: Dim.AUTO} for name in [*given, *keywords]}
    with quiet_torch():
        program = export(root, example, keywords, strict=False, dynamic_shapes=dynamic)
    module = program.module()
    assert isinstance(module, fx.GraphModule)
    return module


def trace(root: nn.Module, inputs: Mapping[str, Any], tracer: str = "auto") -> Traced:
    """Trace ``root`` (in eval mode) called with ``inputs`` (by name); ``TraceFailure`` with
    the responsible line when neither tracer can."""
    root.eval()
    fx_error: str | None = None
    branch: tuple[str, str] | None = None  # where symbolic tracing met a branch on a value
    if tracer in ("auto", FX):
        try:
            return Traced(trace_fx(root, list(inputs)), root, FX)
        except Exception as error:  # any failure of user code or of the tracer
            found = user_frame(error)
            if _is_control_flow(error):
                # a branch on a proxy: on a tensor's values, or only on its dtype or sizes,
                # which torch.export (fake tensors of the example's shape) can follow
                branch = found or ("", "")
            fx_error = f"{type(error).__name__}: {error}"
            if found is not None:
                fx_error += f" ({found[0]})"
            if tracer == FX:
                where, line = found if found is not None else (None, None)
                raise TraceFailure(
                    f"torch.fx could not trace it: {fx_error}", where, line
                ) from None
    try:
        with torch.no_grad():
            module = trace_export(root, *split_inputs(root, inputs))
    except Exception as error:
        found = user_frame(error)
        data_dependent = "data-dependent" in str(error) or "DataDependent" in type(error).__name__
        if branch is not None and (data_dependent or found is None):
            found = branch if branch[0] else found
            data_dependent = True
        where, line = found if found is not None else (None, None)
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        message = f"torch.export could not trace it: {type(error).__name__}: {first}"
        if data_dependent:
            message = BRANCH
        raise TraceFailure(message, where, line) from None
    return Traced(module, root, EXPORT, fx_error)


BRANCH = (
    "the forward branches on a tensor's value (data-dependent control flow): a traced "
    "program has one path, and the language has no conditionals on values"
)
