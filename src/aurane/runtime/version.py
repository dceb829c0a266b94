"""The runtime's version: a generated program states the one it needs (``require``).

``RUNTIME_VERSION`` changes whenever a function generated code calls changes its meaning or
signature; a program compiled for another version fails at import with a clear message.
"""

from __future__ import annotations

# 3: Run(sharded=...), rt.blocks, rt.fully_shard, rt.checkpoint_activations (issue 27)
RUNTIME_VERSION = 3
AURANE_VERSION = "0.1.0"  # the compiler release this runtime ships with (tests keep it equal)


def require(version: int) -> None:
    """Fail clearly when the program was compiled for another runtime version."""
    if version != RUNTIME_VERSION:
        raise ImportError(
            f"this program was compiled for Aurane runtime {version}, but the installed "
            f"aurane {AURANE_VERSION} provides runtime {RUNTIME_VERSION}; recompile it with "
            "'aurane compile' (or compile it with --standalone to need no Aurane at all)"
        )
