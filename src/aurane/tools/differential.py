"""Differential testing: the compiler's verdict and static claims against torch (K-DIFF).

For every generated program (``aurane.tools.fuzz``):

* **accepted** by ``check``: the generated module is imported and each model is built and
  run. ``aurane.verify`` traces a batch-2 forward and compares every IR value's shape and
  dtype and every layer's parameter count with torch's; then a real CPU run at batch 1
  (eval) and batch 2 (train, with backward) compares the output's shape and dtype and the
  total parameter count. Any difference or exception is a **bug**.
* **rejected**: the first error is mapped to the generated call on its line and that call
  is run in torch directly (an independent torch *twin* of the operation, the
  hand-written ones of ``tests/ops``). Torch failing too is an **agreed** rejection; torch
  running it is either a **deliberate** rejection listed in ``DELIBERATE`` (and in
  ``docs/fuzzing.md``) or a **bug** (``check`` refuses a program torch runs).

``python -m aurane.tools.fuzz --programs 20000 --seed 1`` runs a campaign and prints a
summary; ``--json`` writes one line per finding.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from aurane import ops
from aurane.ops.rules import CONVOLUTION
from aurane.ops.spec import split_inputs
from aurane.records import field, record
from aurane.stages import CompilationError
from aurane.tools.fuzz import FLOAT_DTYPES, Program, Step, generate

# Torch twins: op name -> (plain args, per-sample input shapes) -> nn.Module
Twins = dict[str, Callable[[dict[str, Any], tuple[tuple[int, ...], ...]], Any]]

RUN_LIMIT = 4_000_000  # parameters or elements per value above which a model is not run


@record(frozen=True)
class Deliberate:
    """A rejection torch would run, made on purpose (documented in docs/fuzzing.md)."""

    code: str
    ops: tuple[str, ...]  # empty: any operation
    pattern: str  # regular expression the diagnostic message matches
    reason: str

    def matches(self, code: str, op: str, message: str) -> bool:
        return (
            code == self.code
            and (not self.ops or op in self.ops)
            and re.search(self.pattern, message) is not None
        )


DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate(
        "T002",
        ("cross_batch_matmul",),
        r"needs two \(features,\) inputs",
        "cross_batch_matmul of per-sample scalars: the (batch, batch) similarity needs a "
        "feature axis to contract; torch's product of two (batch,) tensors is one number",
    ),
    Deliberate(
        "T003",
        (),
        r"needs a floating input dtype, got (bool|u?int\d+)",
        "a floating layer or activation of a bool or integer tensor (a mask, positions): "
        "torch runs a few of them on integers (dropout with p=0, hardtanh), but their "
        'results are no longer what the layer means; cast with to(x, "float32")',
    ),
    Deliberate(
        "T123",
        ("logical_and", "logical_or", "logical_not"),
        r"must be a bool tensor",
        "logical operations of non-bool tensors: torch reads every nonzero as true, which "
        "hides a number passed for a mask; compare first (ne(x, 0))",
    ),
    Deliberate(
        "T003",
        (),
        r"parameters but a b?float\d+ input",
        "a layer of one float precision given another (after to() or a constructor of "
        "another dtype): torch refuses most, and autocast-free programs keep one precision",
    ),
    Deliberate(
        "T004",
        (),
        r"batch axis",
        "an axis argument naming the batch axis (dim=0): the batch axis is never an operand "
        "of a per-sample operation (SPEC 4.1)",
    ),
    Deliberate(
        "T007",
        ("chunk",),
        r"pieces, not",
        "chunk(n) where torch returns fewer than n pieces: the pieces bound must be the "
        "pieces asked for",
    ),
    Deliberate(
        "T002",
        ("multiply", "subtract", "divide", "add", "matmul", "expand"),
        r"rank",
        "broadcasting tensors of different ranks: torch would align the batch axis of one "
        "with a sample axis of the other (docs/language.md, Axes and broadcasting)",
    ),
    Deliberate(
        "T080",
        ("rotary_embedding",),
        r"even",
        "rotary_embedding of an odd last axis: the rotate-half formula broadcasts it into "
        "a different shape instead of failing",
    ),
    Deliberate(
        "T062",
        ("squeeze",),
        r"not 1",
        "squeeze of an axis whose size is not 1: torch returns the tensor unchanged, so the "
        "program would not do what it says",
    ),
    Deliberate(
        "T002",
        (),
        r"non-scalar input, got shape \(\)",
        "an axis operation (reduction, select, slice, squeeze, split...) on a per-sample "
        "scalar: the only axis torch could use is the batch axis (dim=None or dim=() would "
        "reduce it)",
    ),
    Deliberate(
        "T002",
        ("scaled_dot_product_attention", "rotary_embedding"),
        r"\(heads, sequence, head_dim\)",
        "attention inputs outside the documented per-sample layout, (heads, S, Dh) for "
        "scaled_dot_product_attention and (..., S, Dh) for rotary_embedding: torch would take "
        "other leading axes, or read the batch axis as the sequence; unsqueeze(x, 1) makes "
        "one head",
    ),
    Deliberate(
        "T002",
        (
            *ops.family(CONVOLUTION),
            "pixel_shuffle",
            "multihead_attention",
            "lstm",
            "gru",
        ),
        r"expects a \((channels|sequence)",
        "a per-sample input one axis short of the layer's layout ((L,) for conv1d, (C, H) "
        "for pixel_shuffle, (F,) for attention and recurrent layers): torch's unbatched form "
        "would read the batch axis as channels or as the sequence and mix the samples",
    ),
    Deliberate(
        "T002",
        ("positional_encoding",),
        r"\(sequence, features\)",
        "positional_encoding of a sample that is not (sequence, features): a learned "
        "(max_len, features) table would broadcast across the wrong axes",
    ),
    Deliberate(
        "T001",
        ("add",),
        r".",
        "add of different shapes without broadcast=true: broadcasting is explicit",
    ),
    Deliberate(
        "S004",
        ("multiply", "divide", "add", "subtract"),
        r"a second tensor or a constant, not both",
        "a second tensor and a constant in one call: the twin would silently drop the "
        "constant; which operand the call means is ambiguous",
    ),
    Deliberate(
        "S004",
        ("dropout", "drop_path"),
        r"argument 'p' of \w+ must be in \[0, 1\), got 1(\.0)?$",
        "a drop probability of exactly 1: torch accepts it, but the layer then zeroes every "
        "value it sees in training, so what follows it learns nothing",
    ),
)


# Run-time failures that depend on the batch size, which ``check`` cannot know: torch
# refuses batch statistics from one value per channel (BatchNorm at batch 1 with one
# element per channel, in training or without running statistics).
BATCH_DEPENDENT = (r"Expected more than 1 value per channel when training",)


# torch_runs' reason for a sample one axis short of a ConvNd layout (the table's entry for
# it applies whatever the first error's code: a wrong-length kernel tuple is reported first)
SHORT = "torch reads the batch axis as channels"
ACCEPTED = frozenset({"ok", "skipped", "batch-dependent", "bug"})
REJECTED = frozenset({"agreed", "deliberate", "rejected-bug", "unmapped", "unclassified"})


@record
class Outcome:
    seed: int
    verdict: str  # ok, skipped, bug, agreed, deliberate, rejected-bug, unmapped, crash
    detail: str = ""
    code: str | None = None
    op: str | None = None
    line: int | None = None

    @property
    def is_bug(self) -> bool:
        return self.verdict in ("bug", "rejected-bug", "crash", "runner-error")

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


@record
class Summary:
    programs: int = 0
    accepted: int = 0
    rejected: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    findings: list[Outcome] = field(default_factory=list)
    ops: Counter[str] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)  # accepted programs using each
    seconds: float = 0.0
    generator_errors: list[str] = field(default_factory=list)
    slowest: list[tuple[float, int]] = field(default_factory=list)  # (seconds, seed)

    def add(self, program: Program, outcome: Outcome) -> None:
        self.programs += 1
        self.accepted += outcome.verdict in ACCEPTED
        self.rejected += outcome.verdict in REJECTED
        self.verdicts[outcome.verdict] += 1
        if outcome.code:
            self.codes[f"{outcome.verdict} {outcome.code} {outcome.op or ''}".strip()] += 1
        self.ops.update(program.ops)
        if outcome.verdict in ACCEPTED:
            self.features.update(program.features)
        if outcome.is_bug or outcome.verdict == "unmapped":
            self.findings.append(outcome)

    @property
    def bugs(self) -> int:
        return sum(1 for f in self.findings if f.is_bug)

    def text(self) -> str:
        lines = [
            f"programs {self.programs}  accepted {self.accepted}  rejected {self.rejected}  "
            f"bugs {self.bugs}  ({self.seconds:.0f} s)",
            "verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(self.verdicts.items())),
            "rejections: " + ", ".join(f"{k} x{v}" for k, v in self.codes.most_common(30)),
        ]
        if self.features:
            shown = sorted(self.features.items(), key=lambda item: (-item[1], item[0]))
            lines.append("accepted programs with: " + ", ".join(f"{k} {v}" for k, v in shown[:120]))
        if self.generator_errors:
            lines.append(f"generator errors {len(self.generator_errors)}: "
                         + "; ".join(self.generator_errors[:5]))  # fmt: skip
        if self.slowest:
            slow = ", ".join(f"seed {seed} {sec:.1f} s" for sec, seed in reversed(self.slowest))
            lines.append(f"slowest programs: {slow}")
        missing = sorted(set(ops.CATALOG) - set(self.ops))
        if missing:
            lines.append("operations never generated: " + ", ".join(missing))
        for finding in self.findings[:40]:
            lines.append(
                f"  seed {finding.seed}: {finding.verdict} {finding.code or ''} {finding.op or ''}"
                f" line {finding.line}: {finding.detail[:300]}"
            )
        return "\n".join(lines)


def deliberate_table() -> str:
    """The rows of docs/fuzzing.md's table of deliberate rejections."""
    rows = []
    for entry in DELIBERATE:
        names = ", ".join(f"`{op}`" for op in entry.ops) or "any"
        rows.append(f"| `{entry.code}` | {names} | {entry.reason} |")
    return "\n".join(rows) + "\n"


def deliberate(code: str, op: str, message: str) -> Deliberate | None:
    return next((d for d in DELIBERATE if d.matches(code, op, message)), None)


# -- accepted programs ----------------------------------------------------------------------


def _too_large(graph: Any) -> bool:
    if not isinstance(graph.parameters, int) or graph.parameters > RUN_LIMIT:
        return True
    for value in graph.values:
        dims = [d for d in (value.shape or ())[1:]]
        if any(not isinstance(d, int) for d in dims) or math.prod(dims) > RUN_LIMIT:
            return True
    values = graph.value_map
    for node in graph.nodes:
        if node.subgraph is not None and _too_large(node.subgraph):
            return True
        positional = split_inputs(node.args, node.inputs)[0]  # not attn_mask= and others
        shapes: list[tuple[Any, ...]] = [tuple(values[name].shape or ()) for name in positional]
        if not shapes or not all(isinstance(d, int) for s in shapes for d in s[1:]):
            continue
        x: tuple[Any, ...] = shapes[0][1:]
        if node.op in ("multihead_attention", "scaled_dot_product_attention") and len(x) >= 2:
            keys = shapes[-1][1:][-2] if len(shapes) > 1 else x[-2]
            heads = node.args.get("heads") or (x[0] if len(x) >= 3 else 1)
            if heads * x[-2] * keys > RUN_LIMIT:  # the attention weights
                return True
        if node.op == "matmul" and len(shapes) == 2:
            out = values[node.output].shape or ()
            if (
                math.prod(d for d in out[1:] if isinstance(d, int)) * (x[-1] if x else 1)
                > RUN_LIMIT * 8
            ):
                return True
    return False


# The runs of every accepted program: training mode (gradients, then a backward pass) at
# batch 2, evaluation mode at batch 1 (a batch of one finds a batch axis taken for another)
RUNS = ((True, 2), (False, 1))


def run_accepted(gen: Any, name: str, seed: int) -> str | None:
    """None when every fact agrees, else what differed or failed.

    The model is built on the CPU from a fixed seed and run, traced by ``aurane.verify``,
    on a random input of its declared shape and dtype: in training mode with a backward
    pass, then in evaluation mode. Every IR value's runtime shape and dtype, every layer's
    parameter count and the model's total are compared with the IR.
    """
    from aurane.verify import verify_model

    for train, batch in RUNS:
        report = verify_model(gen, name, device="cpu", train=train, batch=batch, seed=seed)
        if report.diagnostics and batch == 1 and _batch_dependent(report.diagnostics):
            # one value per channel at batch 1: the same mode at batch 2 must hold still
            batch = 2
            report = verify_model(gen, name, device="cpu", train=train, batch=batch, seed=seed)
            if not report.diagnostics:
                return BATCH_ONE
        if report.diagnostics:
            mode = "train" if train else "eval"
            return f"{mode} batch {batch}: " + "; ".join(d.message for d in report.diagnostics[:3])
    return None


# run_accepted's answer for a model that holds at batch 2 but not at batch 1 (batch-dependent)
BATCH_ONE = "batch-dependent: torch refuses batch statistics of one value at batch 1"


def _batch_dependent(diagnostics: Sequence[Any]) -> bool:
    return all(any(re.search(p, d.message) for p in BATCH_DEPENDENT) for d in diagnostics)


# -- rejected programs ----------------------------------------------------------------------


def torch_runs(step: Step, twins: Twins | None, seed: int = 0) -> tuple[bool | None, str]:
    """(True, "") when torch runs the call (forward and backward at batch 2), (False, why)
    when it fails, (None, why) when there is no twin or the sizes are beyond this machine."""
    import torch

    if twins is None or step.op not in twins:
        return None, "no torch twin"
    spatial = re.search(r"([123])d$", step.op)
    if spatial and step.inputs:
        # torch's ConvNd takes (N, C, *N axes) or, unbatched, (C, *N axes): a sample one
        # axis short runs with the batch axis read as channels; any other rank fails
        axes = int(spatial.group(1)) + 1
        if len(step.inputs[0]) == axes - 1:
            return True, SHORT
        if len(step.inputs[0]) != axes:
            return False, f"{step.op} needs {axes} axes per sample"
    spec = ops.CATALOG[step.op]
    try:
        plain = ops.bind_defaults(spec, step.args).plain()
    except ValueError as error:
        return False, str(error)
    numbers = [v for v in _flat(plain.values()) if isinstance(v, int) and not isinstance(v, bool)]
    if any(abs(v) > 2**24 for v in numbers) or any(math.prod(s) > RUN_LIMIT for s in step.inputs):
        return None, "sizes beyond this machine"
    torch.manual_seed(seed)
    try:
        module = twins[step.op](plain, step.inputs)
        module.train()
        xs = []
        for shape in step.inputs:
            if step.dtype == "bool":
                x = torch.rand((2, *shape)) > 0.5
            elif step.dtype in FLOAT_DTYPES:
                x = torch.randn((2, *shape), dtype=getattr(torch, step.dtype), requires_grad=True)
            else:
                x = torch.randint(0, max(1, int(plain.get("vocabulary") or 2)), (2, *shape))
            xs.append(x)
        if step.dtype == "float64":
            module = module.double()
        out = module(*xs)
        if isinstance(out, torch.Tensor) and out.requires_grad:
            out.float().sum().backward()  # type: ignore[no-untyped-call]
    except Exception as error:  # torch refuses: an agreed rejection
        return False, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return True, ""


def _flat(values: Iterable[Any]) -> Iterable[Any]:
    for value in values:
        if isinstance(value, tuple | list):
            yield from _flat(value)
        else:
            yield value


def classify_rejection(program: Program, error: CompilationError, twins: Twins | None) -> Outcome:
    first = next((d for d in error.diagnostics if d.is_error), None)
    if first is None:
        return Outcome(program.seed, "crash", "rejected without an error diagnostic")
    line = first.span.line if first.span is not None else None
    if first.span is None:
        return Outcome(program.seed, "rejected-bug", f"unlocated: {first.message}", first.code)
    if program.edge is not None:
        return Outcome(program.seed, "agreed", program.edge, first.code, None, line)
    step = program.step_at(line) if line is not None else None
    if step is None and deliberate(first.code, "", first.message) is not None:
        # a rule for any operation (a precision mismatch inside a block of several
        # inputs, whose statements the generator does not map to steps)
        return Outcome(program.seed, "deliberate", first.message, first.code, None, line)
    if step is None:
        return Outcome(program.seed, "unmapped", first.message, first.code, None, line)
    runs, why = torch_runs(step, twins, program.seed)
    if runs is False:
        return Outcome(program.seed, "agreed", why, first.code, step.op, line)
    if runs is None:
        return Outcome(program.seed, "unclassified", why, first.code, step.op, line)
    if why == SHORT or deliberate(first.code, step.op, first.message) is not None:
        return Outcome(program.seed, "deliberate", first.message, first.code, step.op, line)
    return Outcome(
        program.seed,
        "rejected-bug",
        f"torch runs {step.op}({step.args}) on {step.inputs}: {first.message}",
        first.code,
        step.op,
        line,
    )


# -- one program, a campaign ----------------------------------------------------------------


def run_program(program: Program, twins: Twins | None = None) -> Outcome:
    from aurane.verify import load_generated

    try:
        gen = load_generated(program.text, f"fuzz{program.seed}.aur")
    except CompilationError as error:
        return classify_rejection(program, error, twins)
    except Exception as error:  # an internal error of the compiler or a broken module
        return Outcome(program.seed, "crash", f"{type(error).__name__}: {error}")
    if program.edge is not None and "past int64" in program.edge:
        return Outcome(program.seed, "bug", f"accepted {program.edge}")
    for name in program.models:
        if name not in gen.graphs:
            return Outcome(program.seed, "bug", f"model {name} has no graph")
        if _too_large(gen.graphs[name]):
            return Outcome(program.seed, "skipped", "too large to run here")
        try:
            problem = run_accepted(gen, name, program.seed)
        except Exception as error:
            problem = f"run time {type(error).__name__}: {str(error)[:300]}"
        if problem == BATCH_ONE:
            return Outcome(program.seed, "batch-dependent", problem)
        if problem is not None:
            op = _op_of(problem, program)
            return Outcome(program.seed, "bug", problem, None, op)
    return Outcome(program.seed, "ok")


def _op_of(problem: str, program: Program) -> str | None:
    found = re.search(r"'([a-z_0-9]+?)\d*'", problem)
    return found.group(1) if found else None


def load_twins() -> Twins | None:
    """The hand-written torch twins of ``tests/ops`` (a source checkout), or None."""
    try:
        module = importlib.import_module("tests.ops.twins")
    except ImportError:
        return None
    return dict(module.TWINS)


def campaign(
    seeds: Iterable[int],
    twins: Twins | None = None,
    *,
    focus: Sequence[str] = (),
    progress: Callable[[Summary], None] | None = None,
    every: int = 500,
) -> Summary:
    summary = Summary()
    started = time.perf_counter()
    for seed in seeds:
        try:
            program = generate(seed, focus=focus)
        except Exception as error:  # a generator bug, not a compiler one: count and go on
            summary.generator_errors.append(f"seed {seed}: {type(error).__name__}: {error}")
            continue
        began = time.perf_counter()
        try:
            outcome = run_program(program, twins)
        except Exception as error:  # the runner itself failed (e.g. in the torch twin)
            outcome = Outcome(seed, "runner-error", f"{type(error).__name__}: {error}")
        summary.add(program, outcome)
        summary.slowest = sorted([*summary.slowest, (time.perf_counter() - began, seed)])[-5:]
        if progress is not None and summary.programs % every == 0:
            summary.seconds = time.perf_counter() - started
            progress(summary)
    summary.seconds = time.perf_counter() - started
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aurane.tools.fuzz",
        description="Differential fuzzing against torch: generate random programs over the "
        "whole operation catalog; every program check accepts must build, run forward at "
        "batch 1 and 2 and backward with the IR's shapes, dtypes and parameter counts; every "
        "rejection is classified (torch fails too, a documented deliberate rejection, or a "
        "bug). Progress and findings print as they come.",
        epilog="Exit status: 0 no bug found, 1 bugs found. docs/fuzzing.md has the details.",
    )
    parser.add_argument(
        "--programs", type=int, default=1000, help="how many programs (default 1000)"
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="campaign seed: programs use seeds SEED*10^6, ..."
    )
    parser.add_argument("--json", metavar="FILE", help="write findings as JSON lines")
    parser.add_argument("--show", type=int, metavar="SEED", help="print one program and exit")
    parser.add_argument("--every", type=int, default=500, help="progress every N programs")
    options = parser.parse_args(argv)
    if options.show is not None:
        program = generate(options.show)
        print(program.text, end="")
        print(run_program(program, load_twins()).to_json())
        return 0
    import warnings

    warnings.filterwarnings("ignore")
    twins = load_twins()
    if twins is None:
        print("note: tests/ops twins not importable; rejections are left unclassified")

    shown = 0

    def progress(summary: Summary) -> None:
        nonlocal shown
        print("\n".join(summary.text().splitlines()[:2]), flush=True)
        for finding in summary.findings[shown:]:  # findings as they come: a long run may stop
            print("  finding", json.dumps(finding.to_json()), flush=True)
        shown = len(summary.findings)

    first = options.seed * 1_000_000
    summary = campaign(
        range(first, first + options.programs), twins, progress=progress, every=options.every
    )
    print(summary.text())
    if options.json:
        with open(options.json, "w", encoding="utf-8") as out:
            for finding in summary.findings:
                out.write(json.dumps(finding.to_json()) + "\n")
    return 1 if summary.bugs else 0


if __name__ == "__main__":
    sys.exit(main())
