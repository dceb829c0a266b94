"""Registration of the built-in backends (today: ``torch``).

The registry's lazy loader imports this module once (``registry._load_builtins``),
before any lookup or registration, and importing it registers the built-ins. So a
user's ``register_backend("torch", ...)``, made before or after the first compile, is
kept: the built-in entry never replaces it.

The torch backend's cache version is its format version plus a fingerprint of the
compiler's own source files: output depends on the front end too, and a hand-bumped
version is forgotten exactly when it matters (SPEC §10: a hit must equal a cold
compile). The fingerprint is computed once, on first registration.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from aurane.backends.registry import GenerationRequest, backend_names, register_backend

TORCH_FORMAT = "torch-1"
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def source_fingerprint(root: Path = _PACKAGE_ROOT) -> str:
    """SHA-256 (16 hex digits) over the package's ``.py`` files, by relative path."""
    digest = hashlib.sha256()
    try:
        files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
            digest.update(path.read_bytes() + b"\0")
    except OSError:
        # Unreadable install (zip import, permissions): fall back to the format
        # version alone; the compiler version is still part of every key.
        return "unfingerprinted"
    return digest.hexdigest()[:16]


def generate_torch_request(request: GenerationRequest) -> str:
    """Adapt the registry's request to the torch backend's function signature."""
    # Imported here: registering must not import the generator (or torch).
    from aurane.backends.torch import TorchCodeGenerator

    filename = request.options.get("filename")
    generator = TorchCodeGenerator(
        request.program,  # type: ignore[arg-type]
        request.graphs,  # type: ignore[arg-type]
        filename=filename if isinstance(filename, str) else None,
        per_call=request.options.get("per_call") is True,
    )
    code = generator.generate()
    # a network or block left one class per variant or call: the user may ask why
    request.notes.extend(fallback.note for fallback in generator.roll_fallbacks)
    return code


__all__ = ["TORCH_FORMAT", "generate_torch_request", "source_fingerprint"]


# The registry's lazy loader imports this module once and expects it to register its
# backends on import.
if "torch" not in backend_names():
    register_backend("torch", generate_torch_request, f"{TORCH_FORMAT}+{source_fingerprint()}")
