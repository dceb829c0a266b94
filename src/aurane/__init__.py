"""Aurane: compile compact .aur network descriptions into readable PyTorch source."""

from aurane.api import (
    CompilationError,
    TypeChecker,
    analyze_semantics,
    lower,
    parse,
    resolve_constants,
)
from aurane.diagnostics import Diagnostic, LocatedError
from aurane.source import Span

__version__ = "0.1.0"

__all__ = [
    "CompilationError",
    "Diagnostic",
    "LocatedError",
    "Span",
    "TypeChecker",
    "__version__",
    "analyze_semantics",
    "lower",
    "parse",
    "resolve_constants",
]
