"""Aurane: compile compact .aur network descriptions into readable PyTorch source."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # real imports for type checkers; at run time they load lazily
    from aurane.backends.registry import register_backend
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import compile_file, compile_source
    from aurane.diagnostics import Diagnostic, LocatedError
    from aurane.optimize import optimize_ast
    from aurane.source import Span
    from aurane.stages import (
        CompilationError,
        TypeChecker,
        analyze_semantics,
        lower,
        parse,
        resolve_constants,
    )

from aurane.version import __version__

# Loaded on first use so that `import aurane` (and so every CLI start) stays fast and never
# imports torch.
_LAZY = {
    "CompilationError": "aurane.stages",
    "TypeChecker": "aurane.stages",
    "analyze_semantics": "aurane.stages",
    "lower": "aurane.stages",
    "parse": "aurane.stages",
    "resolve_constants": "aurane.stages",
    "Diagnostic": "aurane.diagnostics",
    "LocatedError": "aurane.diagnostics",
    "Span": "aurane.source",
    "compile_source": "aurane.compile",
    "compile_file": "aurane.compile",
    "register_backend": "aurane.backends.registry",
    "optimize_ast": "aurane.optimize",
    "TorchCodeGenerator": "aurane.backends.torch",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'aurane' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CompilationError",
    "Diagnostic",
    "LocatedError",
    "Span",
    "TorchCodeGenerator",
    "TypeChecker",
    "__version__",
    "analyze_semantics",
    "compile_file",
    "compile_source",
    "lower",
    "optimize_ast",
    "parse",
    "register_backend",
    "resolve_constants",
]
