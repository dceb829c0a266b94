"""Diagnostics as data: code, stage, severity, message, span, hint and secondary labels."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from aurane.records import record
from aurane.source import Span

Severity = Literal["error", "warning", "info"]
Stage = Literal["parse", "resolve", "semantic", "type", "lint"]

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@record(frozen=True, slots=True)
class Label:
    """A secondary span with a short note, e.g. where the other side of a mismatch came from."""

    span: Span
    message: str


@record(frozen=True, slots=True)
class Diagnostic:
    code: str
    stage: Stage
    severity: Severity
    message: str
    span: Span | None
    hint: str | None = None
    labels: tuple[Label, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def sort_key(self) -> tuple[int, int, int, str]:
        if self.span is None:
            return (0, 0, SEVERITY_ORDER[self.severity], self.code)
        return (self.span.line, self.span.column, SEVERITY_ORDER[self.severity], self.code)

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "code": self.code,
            "stage": self.stage,
            "message": self.message,
            "hint": self.hint,
            "span": self.span.to_json() if self.span else None,
            "labels": [{"span": lab.span.to_json(), "message": lab.message} for lab in self.labels],
        }


class LocatedError(Exception):
    """An error that carries one diagnostic (and so a span); raised inside passes."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def sorted_unique(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str, Span | None]] = set()
    out: list[Diagnostic] = []
    for diag in sorted(diagnostics, key=Diagnostic.sort_key):
        key = (diag.code, diag.message, diag.span)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    return out


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


class CompilationError(Exception):
    """Readable text plus the failing ``stage``, the first error's ``span`` and every diagnostic."""

    def __init__(self, diagnostics: list[Diagnostic], filename: str | None = None) -> None:
        self.diagnostics = sorted_unique(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error] or self.diagnostics
        first = errors[0] if errors else None
        self.stage: str | None = first.stage if first else None
        self.span: Span | None = first.span if first else None
        self.filename = filename
        super().__init__(self._text())

    def _text(self) -> str:
        name = self.filename or "<input>"
        lines = []
        for d in self.diagnostics:
            where = f"{name}:{d.span.line}:{d.span.column}" if d.span else name
            lines.append(f"{where}: {d.severity}[{d.code}]: {d.message}")
        return "\n".join(lines) or "compilation failed"
