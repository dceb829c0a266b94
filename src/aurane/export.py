"""``aurane export``: models to ONNX (onnxruntime-checked) or ``torch.export`` programs.

Each model is built on the CPU with freshly initialised weights, in eval mode. The batch
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
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aurane.verify import Generated, sample_input

FORMATS = ("onnx", "pt2")
TRACE_BATCH = 2
CHECK_BATCH = 3


class ExportUnavailable(RuntimeError):
    """A package the format needs is not installed (a usage problem, exit 2)."""


class ExportMismatch(RuntimeError):
    """The exported program's outputs differ from the module's (a bug, exit 123)."""


@dataclass(frozen=True)
class ExportResult:
    model: str
    format: str
    path: str
    input_name: str
    output_name: str
    exporter: str
    max_abs_difference: float

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "format": self.format,
            "path": self.path,
            "input": self.input_name,
            "output": self.output_name,
            "exporter": self.exporter,
            "max_abs_difference": self.max_abs_difference,
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


def default_path(source: str, model: str, fmt: str, several: bool) -> str:
    stem = Path(source).with_suffix("")
    return f"{stem}.{model}.{fmt}" if several else f"{stem}.{fmt}"


def export_model(gen: Generated, model: str, fmt: str, path: str) -> ExportResult:
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
    net = getattr(gen.module, gen.class_names[model])().eval()
    input_name, output_name = names(gen, model)
    x = sample_input(graph, "cpu", TRACE_BATCH)
    check = sample_input(graph, "cpu", CHECK_BATCH)
    with torch.no_grad():
        expected = net(check)
    batch = torch.export.Dim("batch", min=1, max=1 << 16)
    dynamic = {input_name: {0: batch}}
    tmp = f"{path}.tmp-{os.getpid()}.{fmt}"
    try:
        with contextlib.redirect_stdout(sys.stderr):  # exporters print progress on stdout
            if fmt == "pt2":
                exporter, actual = _pt2(net, x, check, dynamic, tmp)
            else:
                exporter, actual = _onnx(net, x, check, input_name, output_name, dynamic, tmp)
        difference = _compare(model, fmt, expected, actual)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return ExportResult(model, fmt, path, input_name, output_name, exporter, difference)


def _pt2(net: Any, x: Any, check: Any, dynamic: dict[str, Any], tmp: str) -> tuple[str, Any]:
    import torch

    with torch.no_grad():
        program = torch.export.export(net, (x,), dynamic_shapes=dynamic)
    torch.export.save(program, tmp)
    loaded = torch.export.load(tmp)
    with torch.no_grad():
        return "torch.export", loaded.module()(check)


def _onnx(
    net: Any,
    x: Any,
    check: Any,
    input_name: str,
    output_name: str,
    dynamic: dict[str, Any],
    tmp: str,
) -> tuple[str, Any]:
    import onnxruntime
    import torch

    dynamo = importlib.util.find_spec("onnxscript") is not None
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(
                net,
                (x,),
                tmp,
                input_names=[input_name],
                output_names=[output_name],
                dynamic_shapes=dynamic,
                dynamo=True,
                external_data=False,
            )
        else:  # pragma: no cover - the legacy exporter, when onnxscript is missing
            torch.onnx.export(
                net,
                (x,),
                tmp,
                input_names=[input_name],
                output_names=[output_name],
                dynamic_axes={input_name: {0: "batch"}, output_name: {0: "batch"}},
                dynamo=False,
            )
    session = onnxruntime.InferenceSession(tmp, providers=["CPUExecutionProvider"])
    found = (session.get_inputs()[0].name, session.get_outputs()[0].name)
    if found != (input_name, output_name):
        raise ExportMismatch(f"the ONNX graph names its input/output {found}")
    outputs = session.run(None, {session.get_inputs()[0].name: check.numpy()})
    exporter = "torch.onnx (dynamo)" if dynamo else "torch.onnx (torchscript)"
    return exporter, torch.from_numpy(outputs[0])


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
