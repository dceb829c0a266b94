"""Backend registry (SPEC §9): name -> (generator, cache version).

One immutable `BackendEntry` per name, so re-registering swaps the generator
and its cache version in a single assignment; a reader never sees the new
generator with the old version. A backend without a cache version is never
cached, because nothing would invalidate its outputs when its code changes.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from typing import Protocol

from aurane.records import field, record
from aurane.semantics.suggest import did_you_mean

# Each module registers its backends on import (builtin.py: "torch").
_BUILTIN_MODULES = ("aurane.backends.builtin",)


@record(frozen=True)
class GenerationRequest:
    program: object
    graphs: Mapping[str, object]
    options: Mapping[str, object]
    # what the backend tells the user about the code it wrote (``aurane compile`` prints
    # each as ``note: ...`` on stderr); a backend may append to it
    notes: list[str] = field(default_factory=list)


class Backend(Protocol):
    def __call__(self, request: GenerationRequest) -> str: ...


@record(frozen=True)
class BackendEntry:
    name: str
    generator: Backend
    cache_version: str | None

    @property
    def cacheable(self) -> bool:
        return self.cache_version is not None


class UnknownBackendError(LookupError):
    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        listed = ", ".join(repr(k) for k in known) or "none registered"
        hint = did_you_mean(normalize_name(name), known)
        message = f"unknown backend {name!r} (known: {listed})"
        super().__init__(f"{message}; {hint}" if hint else message)

    def __str__(self) -> str:
        # LookupError's default would repr the message; keep it readable.
        return str(self.args[0])


_REGISTRY: dict[str, BackendEntry] = {}
_BUILTINS_LOADED = False


def normalize_name(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"backend name must be a string, got {type(name).__name__}")
    return name.strip().lower()


def _load_builtins() -> None:
    """Import built-in backend modules once; each registers itself on import."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    # Set first: a built-in module calls register_backend while importing.
    _BUILTINS_LOADED = True
    try:
        for module in _BUILTIN_MODULES:
            # Absent modules are skipped; a present but broken one must raise.
            if importlib.util.find_spec(module) is not None:
                importlib.import_module(module)
    except BaseException:
        _BUILTINS_LOADED = False
        raise


def register_backend(
    name: str, generator: Backend, cache_version: str | None = None
) -> BackendEntry:
    # Built-ins load first so they never later overwrite a user's registration.
    _load_builtins()
    key = normalize_name(name)
    if not key:
        raise ValueError("backend name must not be empty")
    if not callable(generator):
        raise TypeError(f"backend generator must be callable, got {type(generator).__name__}")
    if cache_version is not None and (
        not isinstance(cache_version, str) or not cache_version.strip()
    ):
        raise ValueError("cache_version must be a non-empty string or None")
    entry = BackendEntry(key, generator, cache_version)
    _REGISTRY[key] = entry
    return entry


def get_backend(name: str) -> BackendEntry:
    _load_builtins()
    entry = _REGISTRY.get(normalize_name(name))
    if entry is None:
        raise UnknownBackendError(name, backend_names())
    return entry


def backend_names() -> tuple[str, ...]:
    _load_builtins()
    return tuple(sorted(_REGISTRY))
