"""``aurane sweep``: parameters, MACs and training memory over a grid of top-level
constants, computed from the IR without torch.

The program is parsed once. Each configuration replaces the values of the named top-level
constants in the parsed program (:func:`with_constants`: the ``ast.Constant`` keeps its
name and spans, its value becomes a literal) and runs the passes after parsing (resolve,
check, lower: ``frontend.analyze_program``), so a 100-point grid costs 100 analyses and
one parse. A configuration whose program does not check (``heads`` not dividing
``width``) keeps its located diagnostics and the sweep goes on.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aurane.analysis.plan import STRATEGIES, PlanJob, parse_size, plan_job, plan_jobs
from aurane.analysis.profile import profile
from aurane.diagnostics import Diagnostic
from aurane.frontend import FrontEnd, analyze_program
from aurane.records import record, replace
from aurane.source import Source
from aurane.syntax import ast
from aurane.syntax.parser import parse_program

MAX_CONFIGURATIONS = 10_000
METRICS = {"params": "parameters", "parameters": "parameters", "macs": "macs"}
METRICS |= {"flops": "flops", "memory": "memory"}
Value = int | float | bool


class SweepError(ValueError):
    """A usage error: an unknown constant, a bad value, a bad budget."""


@record(frozen=True)
class Figures:
    parameters: int
    macs: int  # per sample
    memory: int | None  # training peak on one device (None: no training job)

    @property
    def flops(self) -> int:
        return 2 * self.macs

    def metric(self, name: str) -> int | None:
        return getattr(self, METRICS[name])  # type: ignore[no-any-return]


@record(frozen=True)
class Row:
    values: tuple[tuple[str, Value], ...]
    figures: Figures | None  # None: the configuration's program has errors
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.figures is not None

    def label(self) -> str:
        return ", ".join(f"{name}={format_value(value)}" for name, value in self.values)


def format_value(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def parse_assignment(text: str) -> tuple[str, list[Value]]:
    """``width=256,512,1024`` -> ("width", [256, 512, 1024]). Raises SweepError."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise SweepError(f"--set {text!r}: expected NAME=VALUE[,VALUE...], e.g. width=256,512")
    items = [item.strip() for item in rest.split(",")]
    if not rest.strip() or any(not item for item in items):
        raise SweepError(f"--set {name}: give one or more values separated by commas")
    values = [_value(name, item) for item in items]
    return name, list(dict.fromkeys(values))


def _value(name: str, text: str) -> Value:
    if text in ("true", "false"):
        return text == "true"
    plain = text.replace("_", "")
    try:
        return int(plain)
    except ValueError:
        pass
    try:
        number = float(plain)
    except ValueError:
        raise SweepError(f"--set {name}: {text!r} is not a number (or true/false)") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise SweepError(f"--set {name}: {text!r} is not a finite number")
    return number


def parse_limit(text: str) -> tuple[str, int]:
    """``params=125M``, ``macs=4G``, ``memory=24GiB`` -> (metric, amount)."""
    from aurane.syntax.tokens import amount_value

    name, sep, amount = text.partition("=")
    name = name.strip().lower()
    if not sep or name not in METRICS:
        raise SweepError(
            f"--max {text!r}: expected params=N, macs=N, flops=N or memory=SIZE (e.g. params=125M)"
        )
    amount = amount.strip()
    if name == "memory":
        try:
            return name, parse_size(amount)
        except ValueError as error:
            raise SweepError(f"--max memory: {error}") from None
    value = (
        int(amount.replace("_", "")) if amount.replace("_", "").isdigit() else amount_value(amount)
    )
    if value is None or value <= 0:
        raise SweepError(
            f"--max {name}: expected a positive count such as 125M or 4.1G, got {amount!r}"
        )
    return name, int(value)


def grid(assignments: Sequence[tuple[str, Sequence[Value]]]) -> list[tuple[tuple[str, Value], ...]]:
    """Every combination, the last constant varying fastest."""
    names = [name for name, _ in assignments]
    if len(set(names)) != len(names):
        raise SweepError("--set names a constant twice")
    count = 1
    for _, values in assignments:
        count *= len(values)
    if count > MAX_CONFIGURATIONS:
        raise SweepError(
            f"the grid has {count:,} configurations; the limit is {MAX_CONFIGURATIONS:,}"
        )
    return [
        tuple(zip(names, combo, strict=True))
        for combo in itertools.product(*(values for _, values in assignments))
    ]


def top_constants(program: ast.AuraneProgram) -> dict[str, ast.Constant]:
    return {s.name: s for s in program.statements if isinstance(s, ast.Constant)}


def with_constants(program: ast.AuraneProgram, values: Mapping[str, Value]) -> ast.AuraneProgram:
    """``program`` with the named top-level constants set to ``values`` (literals located
    where the old values were written, so diagnostics point at the definition)."""
    statements = []
    for stmt in program.statements:
        if isinstance(stmt, ast.Constant) and stmt.name in values:
            value = values[stmt.name]
            span = stmt.value.span
            literal: ast.Expr = (
                ast.Bool(value, span)
                if isinstance(value, bool)
                else ast.Number(value, format_value(value), span)
            )
            stmt = replace(stmt, value=literal)
        statements.append(stmt)
    return replace(program, statements=tuple(statements))


class Sweep:
    """One program, parsed once, evaluated at any number of configurations."""

    def __init__(self, text: str, filename: str) -> None:
        self.text, self.filename = text, filename
        self.parses = 0
        self.analyses = 0
        program, found = parse_program(text, filename)
        self.parses += 1
        self.parse_diagnostics = [d for d in found if d.is_error]
        self.program = program
        self.constants = top_constants(program) if program is not None else {}

    def check_names(self, names: Iterable[str]) -> None:
        from aurane.semantics.suggest import did_you_mean

        for name in names:
            if name not in self.constants:
                known = ", ".join(sorted(self.constants)) or "none"
                hint = did_you_mean(name, set(self.constants))
                extra = f" ({hint})" if hint else ""
                raise SweepError(
                    f"--set {name}: {self.filename} has no top-level constant '{name}'"
                    f"{extra}; constants: {known}"
                )

    def analyse(self, values: Mapping[str, Value]) -> FrontEnd:
        assert self.program is not None
        self.analyses += 1
        result = FrontEnd(Source(self.text, self.filename))
        result.program = self.program
        return analyze_program(result, with_constants(self.program, values))

    def evaluate(
        self,
        values: tuple[tuple[str, Value], ...],
        model: str,
        *,
        batch: int | None = None,
        device: str = "cuda",
    ) -> Row:
        front = self.analyse(dict(values))
        errors = tuple(d for d in front.diagnostics if d.is_error and d.code != "T115")
        graph = front.graphs.get(model)
        if errors or graph is None or front.resolved is None:
            return Row(values, None, errors)
        if graph.symbols_json():
            raise SweepError(f"model '{model}' has symbolic sizes: sweep needs fixed sizes")
        prof = profile(graph)
        memory = None
        job = _job_of(front.resolved, model)
        if job is not None and all(side.model in front.graphs for side in job.sides):
            single = tuple(s for s in STRATEGIES if s.name == "single")
            plan = plan_job(job, front.graphs, batch=batch, device=device, strategies=single)
            memory = plan.strategies[0].peak_bytes
        return Row(values, Figures(int(prof.parameters), int(prof.macs), memory))


def _job_of(program: ast.AuraneProgram, model: str) -> PlanJob | None:
    return next((j for j in plan_jobs(program) if any(s.model == model for s in j.sides)), None)


def largest_under(rows: Sequence[Row], limits: Sequence[tuple[str, int]]) -> Row | None:
    """The configuration whose first limited metric is largest while every limit holds."""
    fitting = []
    for row in rows:
        if row.figures is None:
            continue
        values = [row.figures.metric(name) for name, _ in limits]
        if all(
            v is not None and v <= amount for v, (_, amount) in zip(values, limits, strict=True)
        ):
            fitting.append(row)
    if not fitting:
        return None
    first = limits[0][0]
    return max(
        fitting,
        key=lambda row: (
            (row.figures.metric(first) or 0, row.figures.parameters) if row.figures else (0, 0)
        ),
    )


def row_json(row: Row) -> dict[str, Any]:
    figures = row.figures
    return {
        "values": dict(row.values),
        "ok": row.ok,
        "parameters": figures.parameters if figures else None,
        "macs_per_sample": figures.macs if figures else None,
        "flops_per_sample": figures.flops if figures else None,
        "memory_bytes": figures.memory if figures else None,
        "diagnostics": [d.to_json() for d in row.diagnostics],
    }
