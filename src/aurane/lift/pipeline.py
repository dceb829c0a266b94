"""``aurane import`` end to end: build, trace, lower, rebuild blocks, write, check.

``lift_module`` takes a built module; ``lift_spec`` builds one from a SPEC first (recording
constructor arguments for parameter names). The result carries the program text, the gaps
(what the language cannot express, located), and the faithfulness check; ``exact`` is true
only when the program compiled, the original's state dict loaded with ``strict=True`` and
the outputs agreed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from aurane.lift.check import CheckResult, compare
from aurane.lift.graph import Gap
from aurane.lift.inputs import Input, forward_parameters, resolve, samples
from aurane.lift.layers import Unexpressible
from aurane.lift.trace import TraceFailure, placeholder_values, trace
from aurane.lift.training import attention_dropouts
from aurane.records import field, record

DEFAULT_IMAGE = 224
DEFAULT_SEQUENCE = 128


@record
class ImportResult:
    text: str | None = None  # the program, None when nothing could be written
    model: str = ""  # the model's name in the program
    exact: bool = False
    gaps: list[Gap] = field(default_factory=list)
    check: CheckResult | None = None
    failure: TraceFailure | None = None
    tracer: str = ""
    input_shape: tuple[int, ...] = ()  # the first input's
    input_dtype: str = "float32"
    inputs: list[Input] = field(default_factory=list)  # every input, in forward's order
    output_name: str = ""  # the first output's
    output_names: list[str] = field(default_factory=list)  # every output the program returns
    dropped_outputs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # trace, observe, ... -> seconds

    @property
    def problem(self) -> str | None:
        if self.failure is not None:
            return self.failure.describe()
        if self.gaps:
            return f"{len(self.gaps)} part(s) cannot be expressed"
        if self.check is not None and not self.check.exact:
            return self.check.problem
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.exact,
            "exact": self.exact,
            "model": self.model,
            "tracer": self.tracer,
            "input_shape": list(self.input_shape),
            "input_dtype": self.input_dtype,
            "inputs": [
                {"name": i.name, "shape": list(i.shape), "dtype": i.dtype} for i in self.inputs
            ],
            "output": self.output_name,
            "outputs": self.output_names,
            "dropped_outputs": self.dropped_outputs,
            "gaps": [
                {"path": g.path, "what": g.what, "why": g.why, "where": g.where} for g in self.gaps
            ],
            "failure": None
            if self.failure is None
            else {
                "message": self.failure.message,
                "where": self.failure.where,
                "line": self.failure.line,
            },
            "check": self.check.to_json() if self.check is not None else None,
            "lines": code_lines(self.text) if self.text else 0,
            "seconds": round(self.seconds, 3),
            "phases": {k: round(v, 3) for k, v in self.phases.items()},
            "notes": self.notes,
        }


def code_lines(text: str) -> int:
    """Lines that are not blank and not only a comment (the zoo table's rule)."""
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def infer_input(model: nn.Module) -> tuple[tuple[int, ...], str] | None:
    """The input a module makes evident: images for a first convolution (its ``image_size``
    attribute or 224), token ids for a first embedding (``config`` positions, at most 128)."""
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            size = getattr(model, "image_size", DEFAULT_IMAGE)
            size = size if isinstance(size, int) else DEFAULT_IMAGE
            return (module.in_channels, size, size), "float32"
        if isinstance(module, nn.Embedding):
            config = getattr(model, "config", None)
            limit = getattr(config, "max_position_embeddings", None) or getattr(
                config, "n_positions", None
            )
            if isinstance(limit, int):
                return (min(limit, DEFAULT_SEQUENCE),), "int64"
            return None
        if isinstance(module, nn.Linear | nn.Conv1d | nn.Conv3d | nn.LSTM | nn.GRU):
            return None
    return None


def lift_module(
    model: nn.Module,
    *,
    input_shape: tuple[int, ...] | Mapping[str, tuple[int, ...]] | None = None,
    input_dtype: str | Mapping[str, str] | None = None,
    name: str | None = None,
    constructors: Mapping[int, Mapping[str, Any]] | None = None,
    output: str | None = None,
    partial: bool = False,
    tracer: str = "auto",
    check: bool = True,
    header: list[str] | None = None,
) -> ImportResult:
    """Lift ``model`` (put in eval mode); ``ValueError`` when its input is not evident or
    the inputs do not fit its ``forward``. ``input_shape`` is one input's shape, or several
    inputs' by ``forward`` parameter name (``input_dtype`` then a dict too)."""
    from aurane.lift.check import vocabulary
    from aurane.lift.emit import render
    from aurane.lift.lower import Lowerer
    from aurane.lift.structure import structure
    from aurane.lift.values import FIRST, observe

    clock = _Clock()
    result = ImportResult()
    model.eval()
    inputs = _inputs(model, input_shape, input_dtype)
    result.inputs = inputs
    result.input_shape, result.input_dtype = inputs[0].shape, inputs[0].dtype
    vocab = vocabulary(model)

    def make_input(batch: int) -> dict[str, torch.Tensor]:
        return samples(inputs, vocab, batch=batch, seed=batch)

    try:
        traced = trace(model, make_input(FIRST), tracer)
    except TraceFailure as failure:
        result.failure = failure
        return clock.done(result)
    clock.lap("trace")
    result.tracer = traced.tracer
    if traced.fx_error:
        result.notes.append(f"torch.fx could not trace it ({traced.fx_error}); used torch.export")
    module = traced.graph_module
    try:
        observed = observe(module, lambda batch: placeholder_values(module, make_input(batch)))
    except Exception as error:  # the module rejects the inputs given (a dtype, a size)
        result.failure = _run_failure(error, inputs)
        return clock.done(result)
    clock.lap("observe")
    lowerer = Lowerer(traced, observed, _output_names(traced), output)
    lowerer.attention_dropout = attention_dropouts(model, module, make_input(FIRST))
    try:
        graph = lowerer.run(inputs)
    except Unexpressible as error:  # the output itself
        result.gaps = [*lowerer.gaps, Gap("", error.what, error.why)]
        return clock.done(result)
    clock.lap("lower")
    result.gaps = list(graph.gaps)
    result.notes += graph.notes
    result.output_names = list(graph.output_names)
    result.output_name = graph.output_names[0]
    result.dropped_outputs = graph.dropped_outputs
    if graph.dropped_outputs:
        kept = ", ".join(repr(n) for n in graph.output_names)
        dropped = ", ".join(repr(d) for d in graph.dropped_outputs)
        why = "" if output is not None else " (not computed from the inputs)"
        result.notes.append(f"the program returns {kept}, not {dropped}{why}")
    if result.gaps and not partial:
        return clock.done(result)
    program = structure(graph, model, constructors, name)
    if len(inputs) > 1:
        program.inputs = list(inputs)
    result.gaps += program.gaps
    from aurane.lift.graph import summarize

    program.gaps_text = [
        gap.describe() + (f" [{count} places]" if count > 1 else "")
        for gap, count in summarize(result.gaps)
    ]
    result.model = program.top.name
    result.text = _formatted(render(program, header))
    clock.lap("write")
    if check and not result.gaps:
        result.check = _check(result, model, program.top.name)
        result.exact = result.check.exact
        clock.lap("check")
    return clock.done(result)


class _Clock:
    """Seconds per phase (``ImportResult.phases``) and in all."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.phases: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.phases[name] = now - self.last
        self.last = now

    def done(self, result: ImportResult) -> ImportResult:
        result.seconds = time.perf_counter() - self.start
        result.phases = dict(self.phases)
        return result


def _formatted(text: str) -> str:
    """Laid out by the project's formatter. Its safety check (the text lowers to the same IR)
    is left out: the faithfulness check compiles and runs the result anyway."""
    from aurane.tools.format import format_text

    try:
        return format_text(text, "<import>")
    except ValueError:  # does not parse: a lifter bug, reported by the check
        return text


def _check(result: ImportResult, model: nn.Module, model_name: str) -> CheckResult:
    from aurane.stages import CompilationError
    from aurane.verify import load_generated

    assert result.text is not None
    try:
        generated = load_generated(result.text, "<import>")
    except CompilationError as error:
        first = error.diagnostics[0] if error.diagnostics else None
        detail = f"{first.code} {first.message}" if first is not None else str(error)
        return CheckResult(False, f"the program does not compile: {detail}")
    class_name = generated.class_names.get(model_name, model_name)
    cls = getattr(generated.module, class_name)
    return compare(model, cls, result.inputs, result.output_names)


def _output_names(traced: Any) -> list[str] | None:
    """The names of the flat outputs of an exported graph (its output spec's keys)."""
    spec = getattr(traced.graph_module, "_out_spec", None)
    context = getattr(spec, "context", None)
    if isinstance(context, list) and all(isinstance(c, str) for c in context):
        return list(context)
    return None


def _run_failure(error: Exception, inputs: list[Input]) -> TraceFailure:
    from aurane.lift.trace import user_frame

    found = user_frame(error)
    where, line = found if found is not None else (None, None)
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    given = ", ".join(f"{i.name}: {i.shape} {i.dtype}" for i in inputs)
    return TraceFailure(
        f"the module fails on seeded inputs ({given}): {type(error).__name__}: {first}; "
        "check --input-shape and --input-dtype",
        where,
        line,
    )


def _inputs(
    model: nn.Module,
    shape: tuple[int, ...] | Mapping[str, tuple[int, ...]] | None,
    dtype: str | Mapping[str, str] | None,
) -> list[Input]:
    """The inputs to lift with: one (given, or evident from the first layer), or several
    by ``forward`` parameter name (``aurane.lift.inputs``)."""
    if isinstance(shape, Mapping):
        dtypes = dict(dtype) if isinstance(dtype, Mapping) else {}
        first = dtype if isinstance(dtype, str) else None
        return resolve(model, shape, dtypes, first_dtype=first)
    if isinstance(dtype, Mapping):
        raise ValueError("--input-dtype NAME=DTYPE needs --input-shape NAME=SHAPE")
    if shape is None:
        inferred = infer_input(model)
        if inferred is None:
            raise ValueError(
                "the module does not make its input evident: give --input-shape "
                "(and --input-dtype for token ids)"
            )
        shape, guessed = inferred
        dtype = dtype or guessed
    names = forward_parameters(model)
    return [Input(names[0] if names else "input", tuple(shape), dtype or "float32")]


def lift_spec(text: str, **options: Any) -> ImportResult:
    """Build the module SPEC names (``aurane.lift.spec``) and lift it."""
    from aurane.lift.spec import build, parse_spec

    model, recorder = build(parse_spec(text))
    return lift_built(text, model, recorder, **options)


def lift_built(text: str, model: Any, recorder: Any, **options: Any) -> ImportResult:
    if not isinstance(model, nn.Module):
        raise ValueError(f"{text} gave a {type(model).__name__}, not an nn.Module")
    header = [f"# Imported from PyTorch by `aurane import {text}`."]
    return lift_module(model, constructors=recorder.arguments, header=header, **options)
