"""Diagnostic renderers: human (rustc-style, optional colour), plain (tests), JSON."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aurane.diagnostics import Diagnostic, Label
from aurane.source import Source, Span

_COLOURS = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;36m"}
_BOLD, _BLUE, _RESET = "\033[1m", "\033[1;34m", "\033[0m"


def _safe(text: str) -> str:
    """Keep control characters out of terminals; each shows as one column so carets align."""
    out = []
    for char in text:
        if char == "\t":
            out.append(" ")
        elif char.isprintable():
            out.append(char)
        else:
            out.append("\ufffd")  # one column, like the character it replaces
    return "".join(out)


_MAX_SHOWN = 120  # longer source lines are shown as a window around the span
_CONTEXT = 40


def _underline(source: Source, span: Span, marker: str) -> tuple[str, str, int]:
    text = source.line_text(span.line)
    end = span.end_column if span.end_line == span.line else len(text) + 1
    width = max(1, end - span.column)
    start = span.column - 1
    if len(text) <= _MAX_SHOWN:
        return _safe(text), " " * start + marker * width, span.line
    # a very long line (generated or minified input): show a window, marked with '...'
    first = max(0, start - _CONTEXT)
    width = min(width, _MAX_SHOWN - _CONTEXT)
    last = min(len(text), start + width + _CONTEXT)
    before = "..." if first > 0 else ""
    after = "..." if last < len(text) else ""
    shown = before + _safe(text[first:last]) + after
    return shown, " " * (len(before) + start - first) + marker * width, span.line


def render_human(diagnostic: Diagnostic, source: Source, colour: bool = False) -> str:
    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if colour else text

    sev = diagnostic.severity
    location = source.filename
    if diagnostic.span is not None:
        location += f":{diagnostic.span.line}:{diagnostic.span.column}"
    head = (
        f"{paint(_BOLD, location)}: {paint(_COLOURS[sev], f'{sev}[{diagnostic.code}]')}: "
        f"{paint(_BOLD, _safe(diagnostic.message))}"
    )
    lines = [head]
    spans: list[tuple[Span, str, str]] = []
    if diagnostic.span is not None:
        spans.append((diagnostic.span, "^", ""))
    spans.extend((label.span, "-", label.message) for label in diagnostic.labels)
    gutter = max((len(str(s.line)) for s, _, _ in spans), default=1)
    for span, marker, note in spans:
        text, under, line = _underline(source, span, marker)
        lines.append(paint(_BLUE, f"{' ' * gutter} |"))
        lines.append(paint(_BLUE, f"{line:>{gutter}} |") + f" {text}")
        note_text = f" {_safe(note)}" if note else ""
        paint_code = _COLOURS[sev] if marker == "^" else _BLUE
        lines.append(paint(_BLUE, f"{' ' * gutter} |") + " " + paint(paint_code, under) + note_text)
    if diagnostic.hint:
        lines.append(f"{' ' * gutter} = {paint(_BOLD, 'help')}: {_safe(diagnostic.hint)}")
    return "\n".join(lines)


def render_plain(diagnostic: Diagnostic, filename: str = "<input>") -> str:
    """One stable line per diagnostic plus its labels: the golden-file format."""
    where = f"{diagnostic.span.line}:{diagnostic.span.column}" if diagnostic.span else "-"
    out = [f"{filename}:{where}: {diagnostic.severity}[{diagnostic.code}] {diagnostic.message}"]
    out.extend(
        f"  label {lab.span.line}:{lab.span.column}: {lab.message}" for lab in diagnostic.labels
    )
    if diagnostic.hint:
        out.append(f"  help: {diagnostic.hint}")
    return "\n".join(out)


def render_all(diagnostics: Iterable[Diagnostic], source: Source, colour: bool = False) -> str:
    items = list(diagnostics)
    parts = [render_human(d, source, colour) for d in items]
    errors = sum(d.is_error for d in items)
    warnings = sum(d.severity == "warning" for d in items)
    if errors or warnings:
        summary = []
        if errors:
            summary.append(f"{errors} error{'s' if errors != 1 else ''}")
        if warnings:
            summary.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        parts.append(", ".join(summary) + " found")
    return "\n\n".join(parts)


def check_payload(
    filename: str, diagnostics: Iterable[Diagnostic], passes: list[str]
) -> dict[str, Any]:
    items = list(diagnostics)
    return {
        "ok": not any(d.is_error for d in items),
        "file": filename,
        "passes": passes,
        "diagnostics": [d.to_json() for d in items],
    }


__all__ = ["Label", "check_payload", "render_all", "render_human", "render_plain"]
