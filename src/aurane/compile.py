"""Compile API (SPEC §9, §10): ``compile_source`` and ``compile_file``.

Pipeline: parse -> resolve constants -> semantic pass -> lowering (always; lowering
needs a semantically valid program) -> ``optimize_ast`` (``optimize`` > 0, then
lowered again if a rewrite changed the program) -> backend generator. What the
switches add:

- ``analyze=True``: strict analysis. The semantic and type passes' *warnings*
  (e.g. a value computed but never used) fail the compile like errors. Without it
  warnings are not reported by this API (``aurane check`` shows them).
- ``validate=True``: every graph is checked by the IR verifier (after lowering and
  after optimization), and the generated text is ``ast.parse``d and ``compile()``d,
  must have no encoding cookie on lines 1-2 and no raw line-breaking or NUL
  characters (K-GEN, K-INJ). A failure there is a compiler bug: it raises
  ``BackendOutputError`` or ``IRVerificationError``, not ``CompilationError``.
- ``cache``: ``None``/``False`` = no caching and no cache I/O; ``True`` = the default
  location; a ``CompileCache`` or a directory path. Backends without a cache version
  are never cached; a source with lone surrogates (not UTF-8 encodable) is not cached.

Errors in the *source* always raise ``CompilationError`` (stage, span, diagnostics).
Errors in the *options* (unknown backend, bad level, wrong types) raise
``UnknownBackendError`` (a ``LookupError``), ``ValueError`` or ``TypeError``.
"""

from __future__ import annotations

import ast as pyast
import os
import re
import unicodedata
from collections.abc import Mapping

from aurane.backends.registry import BackendEntry, GenerationRequest, get_backend
from aurane.cache import CompileCache, cache_key
from aurane.diagnostics import Diagnostic
from aurane.frontend import read_source_text, run_front_end
from aurane.ir.graph import Graph
from aurane.records import field, record
from aurane.stages import CompilationError
from aurane.syntax import ast
from aurane.version import __version__

CacheArg = CompileCache | str | os.PathLike[str] | bool | None

# PEP 263: a comment matching this on line 1 or 2 changes how Python decodes the file.
_CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
# Characters some tool treats as a line break or terminator; repr() escapes all of
# them, so a correct backend never emits one raw.
_RAW_FORBIDDEN = ("\r", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


class BackendOutputError(RuntimeError):
    """A backend produced text that is not valid, safe Python: a compiler bug."""


class OptimizerError(RuntimeError):
    """An optimized program no longer lowers: a bug in a rewrite, never the user's input."""


@record(frozen=True)
class CompileOptions:
    backend: str = "torch"
    analyze: bool = False
    validate: bool = False
    optimize: int = 0
    # one class per distinct block call and network variant instead of one per block
    # definition (issue 24 item 3's "unless the user asks otherwise")
    per_call: bool = False

    def key_options(self, backend: BackendEntry, filename: str | None) -> dict[str, object]:
        # The file name is passed to the generator (it may name it in a header), so
        # it is part of the key: a hit must be byte-identical to a cold compile.
        return {
            "backend": backend.name,
            "analyze": self.analyze,
            "validate": self.validate,
            "optimize": self.optimize,
            "filename": filename,
            "per_call": self.per_call,
        }


@record
class CompileResult:
    output: str
    backend: str
    cached: bool = False
    # Warnings of the passes (empty on a cache hit, where no pass ran).
    diagnostics: list[Diagnostic] = field(default_factory=list)
    program: ast.AuraneProgram | None = None  # what was lowered (resolved, optimized)
    graphs: dict[str, Graph] = field(default_factory=dict)
    # What the backend said about the code it wrote (a block left one class per call, and
    # why); a cache hit gives back the notes stored with its output.
    notes: list[str] = field(default_factory=list)


def _options(
    backend: object, analyze: object, validate: object, optimize: object, per_call: object
) -> CompileOptions:
    from aurane.optimize import check_level

    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string, got {type(backend).__name__}")
    for name, value in (("analyze", analyze), ("validate", validate), ("per_call", per_call)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    assert isinstance(analyze, bool) and isinstance(validate, bool)
    assert isinstance(per_call, bool)
    return CompileOptions(backend, analyze, validate, check_level(optimize), per_call)


def _open_cache(cache: CacheArg) -> CompileCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return CompileCache()
    if isinstance(cache, CompileCache):
        return cache
    if isinstance(cache, str | os.PathLike):
        return CompileCache(os.fspath(cache))
    raise TypeError(
        f"cache must be None, a bool, a path or a CompileCache, got {type(cache).__name__}"
    )


def prepare_program(
    source: str,
    *,
    analyze: bool = False,
    optimize: int = 0,
    validate: bool = False,
    filename: str | None = None,
) -> tuple[ast.AuraneProgram, dict[str, Graph], list[Diagnostic]]:
    """Front end plus optimizer: the program and graphs a backend receives, and the warnings.

    Raises ``CompilationError`` on any error (and, with ``analyze``, on warnings).
    """
    front = run_front_end(source, filename or "<input>")
    if not front.ok or front.resolved is None:
        raise CompilationError(front.diagnostics, filename)
    warnings = [d for d in front.diagnostics if not d.is_error]
    if analyze and warnings:
        raise CompilationError(warnings, filename)
    program, graphs = front.resolved, front.graphs
    unsafe = python_name_problems(program)
    if unsafe:
        raise CompilationError(unsafe, filename)
    if validate:
        _verify_graphs(graphs)
    if optimize:
        optimized, graphs = _optimize(program, optimize, graphs)
        if validate and optimized is not program:
            _verify_graphs(graphs)
        program = optimized
    return program, graphs, warnings


def python_name_problems(program: ast.AuraneProgram) -> list[Diagnostic]:
    """Names the front end accepts but the generated Python must not bind or call.

    A ``use`` alias (or an unaliased top-level module) becomes a module-level name:
    it must not hide a builtin the generated code calls (``use os as super``) or a
    module its runtime imports (``use os as random``), nor be a private name Python
    would mangle (``__x``). A dataset ``from`` rooted at a builtin (``from eval``,
    ``from builtins.exec``) is not a constructor of a data source. Python compares
    identifiers after NFKC normalization, so this check does too.
    """
    from aurane.backends.torch.names import BUILTINS
    from aurane.codes import diag
    from aurane.semantics.uses import check_uses

    # the semantic pass's own rule (semantics/uses.py), so check reports the same names
    found = check_uses(program)
    for stmt in program.statements:
        if isinstance(stmt, ast.Dataset) and stmt.source is not None:
            root = unicodedata.normalize("NFKC", stmt.source.id.split(".")[0])
            if root in BUILTINS or root == "builtins":
                found.append(
                    diag(
                        "S013",
                        f"'{stmt.source.id}' is a Python builtin, not a dataset constructor",
                        stmt.source.span,
                        hint="name a dataset class, e.g. "
                        "torchvision.datasets.FakeData or aurane.data.SyntheticImages",
                    )
                )
    return found


def _optimize(
    program: ast.AuraneProgram, level: int, graphs: dict[str, Graph]
) -> tuple[ast.AuraneProgram, dict[str, Graph]]:
    """The optimized program and its graphs; ``graphs`` (the front end's) when nothing changed."""
    from aurane.ir.lower import lower_program
    from aurane.optimize import optimize_ast
    from aurane.semantics.check import analyze

    optimized = optimize_ast(program, level)
    if optimized is program:  # no rewrite applied: lowering again would give the same graphs
        return program, graphs
    semantic = analyze(optimized)
    graphs, found = lower_program(optimized, semantic)
    problems = [d for d in [*semantic.diagnostics, *found] if d.is_error]
    if problems:
        raise OptimizerError(f"optimization level {level} broke the program: {problems[0].message}")
    return optimized, graphs


def _verify_graphs(graphs: Mapping[str, Graph]) -> None:
    from aurane.ir.verify import verify

    for graph in graphs.values():
        verify(graph)


def validate_python(output: str, filename: str | None = None) -> None:
    """Raise ``BackendOutputError`` unless ``output`` is valid, cookie-free Python."""
    if not isinstance(output, str):
        raise BackendOutputError(f"backend returned {type(output).__name__}, not str")
    for char in _RAW_FORBIDDEN:
        if char in output:
            raise BackendOutputError(f"generated code contains a raw {char!r} character")
    for line in output.split("\n")[:2]:
        if _CODING_COOKIE.match(line):
            raise BackendOutputError("generated code has an encoding cookie on line 1 or 2")
    try:
        tree = pyast.parse(output, filename or "<generated>")
        compile(tree, filename or "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        raise BackendOutputError(f"generated code does not compile: {error}") from error


def compile_detailed(
    source: str,
    *,
    backend: str = "torch",
    analyze: bool = False,
    validate: bool = False,
    optimize: int = 0,
    cache: CacheArg = None,
    filename: str | None = None,
    per_call: bool = False,
) -> CompileResult:
    """``compile_source`` with the details: cache hit, warnings, the lowered program."""
    if not isinstance(source, str):
        raise TypeError(f"source must be str, got {type(source).__name__}")
    if filename is not None and not isinstance(filename, str):
        raise TypeError(f"filename must be a string, got {type(filename).__name__}")
    options = _options(backend, analyze, validate, optimize, per_call)
    entry = get_backend(options.backend)  # loads the built-in backends on first use
    store = _open_cache(cache)
    key_options = options.key_options(entry, filename)
    key = _key(store, entry, key_options, source, filename)
    if store is not None and key is not None:
        hit = store.lookup(*key)
        if hit is not None:
            return CompileResult(hit.output, entry.name, cached=True, notes=list(hit.notes))
    program, graphs, warnings = prepare_program(
        source,
        analyze=options.analyze,
        optimize=options.optimize,
        validate=options.validate,
        filename=filename,
    )
    request = GenerationRequest(program, graphs, dict(key_options))
    output = entry.generator(request)
    if not isinstance(output, str):
        raise BackendOutputError(
            f"backend {entry.name!r} returned {type(output).__name__}, not str"
        )
    if options.validate:
        validate_python(output, filename)
    if store is not None and key is not None:
        store.put(*key, output, request.notes)  # a failed write is not fatal (K-CACHE)
    return CompileResult(output, entry.name, False, warnings, program, graphs, request.notes)


def _key(
    store: CompileCache | None,
    entry: BackendEntry,
    key_options: dict[str, object],
    source: str,
    filename: str | None,
) -> tuple[str, dict[str, object]] | None:
    if store is None or entry.cache_version is None:
        return None
    try:
        (filename or "").encode("utf-8")
        source.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: no stable bytes to hash
        return None
    return cache_key(
        compiler_version=__version__,
        backend=entry.name,
        cache_version=entry.cache_version,
        options=key_options,
        source=source,
    )


def compile_source(
    source: str,
    *,
    backend: str = "torch",
    analyze: bool = False,
    validate: bool = False,
    optimize: int = 0,
    cache: CacheArg = None,
    filename: str | None = None,
    per_call: bool = False,
) -> str:
    """Compile Aurane source text to the backend's output (Python for ``torch``).
    ``per_call=True``: a class per distinct block call and per network variant, where
    the default writes one class per block definition wherever the rollers can."""
    return compile_detailed(
        source,
        backend=backend,
        analyze=analyze,
        validate=validate,
        optimize=optimize,
        cache=cache,
        filename=filename,
        per_call=per_call,
    ).output


def read_source_file(path: str | os.PathLike[str], filename: str | None = None) -> str:
    """The file's text; bad UTF-8 or a file over the size limit raises a located
    ``CompilationError`` (P015, P011: the size is checked before reading).

    A missing or unreadable file raises ``OSError``, as Python's own ``open`` does; a FIFO,
    device or directory raises ``aurane.fs.NotAFile`` (an ``OSError``) without waiting.
    """
    name = filename or os.fspath(path)
    text, bad = read_source_text(os.fspath(path), name)
    if text is None:
        assert bad is not None
        raise CompilationError([bad], name)
    return text


def compile_file(
    path: str | os.PathLike[str],
    *,
    backend: str = "torch",
    analyze: bool = False,
    validate: bool = False,
    optimize: int = 0,
    cache: CacheArg = None,
    filename: str | None = None,
) -> str:
    """``compile_source`` of a file; its name is in every ``CompilationError``."""
    name = filename or os.fspath(path)
    return compile_source(
        read_source_file(path, name),
        backend=backend,
        analyze=analyze,
        validate=validate,
        optimize=optimize,
        cache=cache,
        filename=name,
    )


# -- source maps for a compiled text (aurane run, compile --standalone/--format) --------


def generated_source(text: str, filename: str) -> str:
    """Compile ``text`` (raising ``CompilationError``) and append its source-map table."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.backends.torch.program import with_table

    program, graphs, _ = prepare_program(text, filename=filename)
    generator = TorchCodeGenerator(program, graphs, filename=filename)
    code = generator.generate()
    return with_table(code, [(p.name, p.graph) for p in generator.plans()], filename, program)


def attach_source_map(code: str, text: str, filename: str) -> str:
    """``code`` (compiled from ``text``) with its table appended; unchanged on any problem,
    so a run never fails for want of a source map."""
    try:
        from aurane.backends.torch import TorchCodeGenerator
        from aurane.backends.torch.program import with_table

        program, graphs, _ = prepare_program(text, filename=filename)
        generator = TorchCodeGenerator(program, graphs, filename=filename)
        plans = [(p.name, p.graph) for p in generator.plans()]
        return with_table(code, plans, filename, program)
    except Exception:
        return code


__all__ = [
    "BackendOutputError",
    "CompilationError",
    "CompileResult",
    "OptimizerError",
    "attach_source_map",
    "compile_detailed",
    "compile_file",
    "compile_source",
    "generated_source",
    "prepare_program",
    "read_source_file",
    "validate_python",
]
