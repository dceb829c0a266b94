"""``aurane export``: models to ONNX (onnxruntime-checked) or ``torch.export`` programs.

Each model is built on the CPU with freshly initialised weights, in eval mode, or with a
trained checkpoint's weights (``--checkpoint``: ``load_trained``). The batch
axis is dynamic; the input is named after the forward's parameter (``x``, ``tokens``) and
the output after the value the program returns when it bound a name (else ``output``).
Before reporting success the exported artifact is loaded again and run on a random input
of a *different* batch size than the one traced; its outputs must equal the module's
(``torch.testing.assert_close`` tolerances for float32).

ONNX goes through ``torch.onnx.export(dynamo=True)`` when ``onnxscript`` is importable,
else through the TorchScript-based exporter. The check needs ``onnxruntime``: without it
the export is refused (``ExportUnavailable``) rather than reported unchecked.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import math
import os
import sys
from pathlib import Path
from typing import Any

from aurane.fs import publish_file
from aurane.records import record
from aurane.semantics.sizes import SizeExpr, bounds
from aurane.trained import load_trained
from aurane.verify import Generated, input_sizes, sample_inputs

FORMATS = ("onnx", "pt2")
TRACE_BATCH = 2
CHECK_BATCH = 3


class ExportUnavailable(RuntimeError):
    """A package the format needs is not installed (a usage problem, exit 2)."""


class ExportSpecialized(RuntimeError):
    """torch could not keep a symbolic size (``seq = dim(...)``) dynamic for this model:
    its tracer specialised it to the traced value (a limit of torch, not a bug; exit 1)."""


class ExportMismatch(RuntimeError):
    """The exported program's outputs differ from the module's (a bug, exit 123)."""


@record(frozen=True)
class ExportResult:
    model: str
    format: str
    path: str
    input_name: str
    output_name: str
    exporter: str
    max_abs_difference: float
    dynamic: tuple[str, ...] = ("batch",)  # the input's dynamic axes: batch, then symbols
    # several inputs/outputs (issue 23): every name, in order (empty for one of each)
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "format": self.format,
            "path": self.path,
            "input": self.input_name,
            "output": self.output_name,
            "exporter": self.exporter,
            "max_abs_difference": self.max_abs_difference,
            "dynamic": list(self.dynamic),
            **(
                {"inputs": list(self.input_names), "outputs": list(self.output_names)}
                if self.input_names
                else {}
            ),
        }


def missing_packages(fmt: str) -> list[str]:
    needed = ["onnx", "onnxruntime"] if fmt == "onnx" else []
    return [name for name in needed if importlib.util.find_spec(name) is None]


def names(gen: Generated, model: str) -> tuple[str, str]:
    """(input name, output name) from the source."""
    cls = getattr(gen.module, gen.class_names[model])
    params = list(inspect.signature(cls.forward).parameters)
    graph = gen.graphs[model]
    input_name = params[1] if len(params) > 1 else "input"
    output = graph.output_value.source_name
    if not output or output == input_name or not output.isidentifier():
        output = "output"
    return input_name, output


def all_names(gen: Generated, model: str) -> tuple[list[str], list[str]]:
    """Every input's and output's name: the forward's parameters and the names the return
    statement wrote (issue 23); one of each reads as ``names``."""
    graph = gen.graphs[model]
    if not graph.several:
        input_name, output_name = names(gen, model)
        return [input_name], [output_name]
    cls = getattr(gen.module, gen.class_names[model])
    params = list(inspect.signature(cls.forward).parameters)[1 : 1 + len(graph.inputs)]
    outputs: list[str] = []
    for index in range(len(graph.outputs)):
        label = graph.output_label(index)
        if not label.isidentifier() or label in params or label in outputs:
            label = f"output{index}"
        outputs.append(label)
    return params, outputs


def default_path(source: str, model: str, fmt: str, several: bool) -> str:
    stem = Path(source).with_suffix("")
    return f"{stem}.{model}.{fmt}" if several else f"{stem}.{fmt}"


def export_model(
    gen: Generated, model: str, fmt: str, path: str, checkpoint: str | None = None
) -> ExportResult:
    """Export ``model``; with ``checkpoint`` (a file ``checkpoint_file`` found) its trained
    weights, else fresh ones (seed 0)."""
    import torch

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    missing = missing_packages(fmt)
    if missing:
        raise ExportUnavailable(
            f"--format {fmt} needs {', '.join(missing)}: pip install 'aurane[export]'"
        )
    graph = gen.graphs[model]
    torch.manual_seed(0)
    net = getattr(gen.module, gen.class_names[model])()
    if checkpoint is not None:
        load_trained(net, model, checkpoint)
    net.eval()
    inputs, outputs = all_names(gen, model)
    input_name, output_name = inputs[0], outputs[0]
    # one batch dimension for every input; a symbolic size is one name across inputs
    x = sample_inputs(graph, "cpu", TRACE_BATCH, sizes=input_sizes(graph, 0))
    check = sample_inputs(graph, "cpu", CHECK_BATCH, sizes=input_sizes(graph, 1))
    with torch.no_grad():
        expected = net(*check)
    batch = torch.export.Dim("batch", min=1, max=1 << 16)
    dynamic = {
        name: {0: batch, **dynamic_axes(value.shape or ())}
        for name, value in zip(inputs, graph.inputs, strict=True)
    }
    tmp = f"{path}.tmp-{os.getpid()}.{fmt}"
    symbols = tuple(dict.fromkeys(n for v in graph.inputs for n in _axes(v.shape).values()))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # exporters print progress on stdout
            try:
                if fmt == "pt2":
                    exporter, actual = _pt2(net, x, check, dynamic, tmp)
                else:
                    exporter, actual = _onnx(net, x, check, inputs, outputs, dynamic, tmp, graph)
            except Exception as error:
                if symbols and _specialized(error):
                    first = str(error).strip().splitlines()[0]
                    raise ExportSpecialized(
                        f"{model}: torch could not keep {', '.join(symbols)} dynamic in the "
                        f"{fmt} program ({first}); an operation of this model needs a fixed "
                        "size in torch's tracer: export with concrete sizes instead"
                    ) from None
                raise
        several = graph.several
        wanted = tuple(expected) if len(graph.output_names) > 1 else (expected,)
        got = tuple(actual) if several and isinstance(actual, tuple | list) else (actual,)
        if len(got) != len(wanted):
            raise ExportMismatch(
                f"{model}: the {fmt} program returned {len(got)} outputs, the module {len(wanted)}"
            )
        difference = max(
            _compare(model, fmt, want, have) for want, have in zip(wanted, got, strict=True)
        )
        publish_file(tmp, path)  # the output rule (K-OUT): never onto a device or FIFO
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    dynamic_names = ("batch", *symbols)
    return ExportResult(
        model,
        fmt,
        path,
        input_name,
        output_name,
        exporter,
        difference,
        dynamic_names,
        tuple(inputs) if graph.several else (),
        tuple(outputs) if graph.several else (),
    )


def _pt2(
    net: Any, x: tuple[Any, ...], check: tuple[Any, ...], dynamic: dict[str, Any], tmp: str
) -> tuple[str, Any]:
    import torch

    with torch.no_grad():
        program = torch.export.export(net, x, dynamic_shapes=dynamic)
    torch.export.save(program, tmp)
    loaded = torch.export.load(tmp)
    with torch.no_grad():
        return "torch.export", loaded.module()(*check)


def _onnx(
    net: Any,
    x: tuple[Any, ...],
    check: tuple[Any, ...],
    input_names: list[str],
    output_names: list[str],
    dynamic: dict[str, Any],
    tmp: str,
    graph: Any,
) -> tuple[str, Any]:
    import onnxruntime
    import torch

    dynamo = importlib.util.find_spec("onnxscript") is not None
    axes = {
        name: {0: "batch", **_axes(value.shape)}
        for name, value in zip(input_names, graph.inputs, strict=True)
    }
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(
                net,
                x,
                tmp,
                input_names=input_names,
                output_names=output_names,
                dynamic_shapes=dynamic,
                dynamo=True,
                external_data=False,
            )
        else:  # pragma: no cover - the legacy exporter, when onnxscript is missing
            torch.onnx.export(
                net,
                x,
                tmp,
                input_names=input_names,
                output_names=output_names,
                dynamic_axes={**axes, **{name: {0: "batch"} for name in output_names}},
                dynamo=False,
            )
    if dynamo:
        for name in input_names:
            _name_onnx_axes(tmp, name, axes[name])
    session = onnxruntime.InferenceSession(tmp, providers=["CPUExecutionProvider"])
    found = ([i.name for i in session.get_inputs()], [o.name for o in session.get_outputs()])
    if found != (input_names, output_names):
        if len(input_names) == 1:
            found_one = (found[0][0], found[1][0])
            raise ExportMismatch(f"the ONNX graph names its input/output {found_one}")
        raise ExportMismatch(f"the ONNX graph names its inputs/outputs {found}")
    feeds = {name: tensor.numpy() for name, tensor in zip(input_names, check, strict=True)}
    outputs = session.run(None, feeds)
    exporter = "torch.onnx (dynamo)" if dynamo else "torch.onnx (torchscript)"
    if len(outputs) > 1:
        return exporter, tuple(torch.from_numpy(o) for o in outputs)
    return exporter, torch.from_numpy(outputs[0])


def dynamic_axes(shape: tuple[Any, ...]) -> dict[int, Any]:
    """``torch.export`` dims for the symbolic axes of an input shape (batch axis first).

    An axis whose size is a formula over symbols (``seq``, ``2*seq``) becomes
    ``Dim.DYNAMIC`` bounded by the formula's range over the declared ``dim(min, max)``
    ranges: torch may add its own guards inside that range (an intermediate size that must
    not be 1) instead of refusing the export. A formula with one value stays static.
    """
    import torch

    axes: dict[int, Any] = {}
    for axis, size in enumerate(shape):
        if not isinstance(size, SizeExpr):
            continue
        low, high = bounds(size)
        if low == high:
            continue
        top = int(high) if math.isfinite(high) else None
        axes[axis] = torch.export.Dim.DYNAMIC(min=max(int(low), 0), max=top)
    return axes


def _specialized(error: BaseException) -> bool:
    text = str(error)
    return any(marker in text for marker in ("Guard failed", "Constraints violated", "specializ"))


def _name_onnx_axes(path: str, input_name: str, names: dict[int, str]) -> None:
    """Name the ONNX graph's dynamic input axes after the source (``batch``, ``seq``), and
    every other use of the same symbolic dimension (the outputs' axes) alike."""
    import onnx

    model = onnx.load(path)
    renames: dict[str, str] = {}
    for value in model.graph.input:
        if value.name != input_name:
            continue
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if axis in names and dim.dim_param:
                renames[dim.dim_param] = names[axis]
    if not renames:
        return
    for value in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param in renames:
                dim.dim_param = renames[dim.dim_param]
    onnx.save(model, path)


def axis_names(graph: Any) -> dict[int, str]:
    """ONNX ``dynamic_axes`` names for the symbolic input axes: the formula's text."""
    return _axes(graph.input_value.shape)


def _axes(shape: Any) -> dict[int, str]:
    """The symbolic axes of one input's shape, named by their formula's text (``seq``): the
    same name on every input that has that size."""
    shape = shape or ()
    return {axis: str(size) for axis, size in enumerate(shape) if isinstance(size, SizeExpr)}


def _compare(model: str, fmt: str, expected: Any, actual: Any) -> float:
    import torch

    if isinstance(actual, tuple | list):
        actual = actual[0]
    if tuple(actual.shape) != tuple(expected.shape):
        raise ExportMismatch(
            f"{model}: the {fmt} program returned shape {tuple(actual.shape)}, "
            f"the module {tuple(expected.shape)}"
        )
    difference = float((actual.double() - expected.double()).abs().max()) if actual.numel() else 0.0
    try:
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5, check_dtype=False)
    except AssertionError as error:
        raise ExportMismatch(f"{model}: the {fmt} program's outputs differ: {error}") from None
    return difference
