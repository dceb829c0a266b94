"""Read a helper of ``backends/torch/inlined`` as the text a generated file holds.

The helper modules import torch, so they are read as source (``importlib.resources``), never
imported here. Each function's header is written again without its annotations (the
generated code has none); anything else annotated inside a helper is refused, so what is
copied is exactly the tested code, less its types.
"""

from __future__ import annotations

import ast
import copy
import functools
from importlib import resources

_PACKAGE = "aurane.backends.torch.inlined"


@functools.cache
def _module_source(module: str) -> str:
    return resources.files(_PACKAGE).joinpath(f"{module}.py").read_text(encoding="utf-8")


def _header(function: ast.FunctionDef, indent: str) -> str:
    arguments = copy.deepcopy(function.args)
    for argument in (
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        arguments.vararg,
        arguments.kwarg,
    ):
        if argument is not None:
            argument.annotation = None
    return f"{indent}def {function.name}({ast.unparse(arguments)}):"


@functools.cache
def inlined_source(module: str, name: str) -> str:
    """The top-level class or function ``name`` of ``inlined/<module>.py``, unannotated."""
    source = _module_source(module)
    found = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == name
    ]
    if len(found) != 1:
        raise KeyError(f"{_PACKAGE}.{module} defines no single {name!r}")
    node = found[0]
    first = node.lineno - 1
    lines = source.splitlines()[first : node.end_lineno]
    functions = [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef)]
    if any(isinstance(n, ast.AnnAssign | ast.AsyncFunctionDef) for n in ast.walk(node)):
        raise ValueError(f"{name}: only function headers may be annotated in an inlined helper")
    # Last header first, so the line numbers of the ones above still hold.
    for function in sorted(functions, key=lambda f: f.lineno, reverse=True):
        start, body = function.lineno - 1 - first, function.body[0].lineno - 1 - first
        if function.decorator_list or body <= start:
            raise ValueError(f"{name}.{function.name}: write the body below an undecorated def")
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        lines[start:body] = [_header(function, indent)]
    return "\n".join(lines)
