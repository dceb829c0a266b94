"""Functions that compute a buffer's contents, and the row lookup of ``lookup``, inlined
into the generated files that use them (``inspect.getsource``: generated programs never
import aurane).

They are ordinary Python, tested on their own against hand-written torch; this module
imports torch only for type checking, so the compiler does not load it.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def sinusoid_table(positions: int, width: int) -> torch.Tensor:
    """The (positions, width) table of "Attention is all you need": sin on even features,
    cos on odd ones, wavelengths from 2*pi to 10000*2*pi."""
    import torch

    position = torch.arange(positions, dtype=torch.float32)[:, None]
    rates = 10000.0 ** (-torch.arange(0, width, 2, dtype=torch.float32) / width)
    table = torch.zeros(positions, width)
    table[:, 0::2] = torch.sin(position * rates)
    table[:, 1::2] = torch.cos(position * rates)
    return table


def relative_position_index(height: int, width: int) -> torch.Tensor:
    """Swin's (h*w, h*w) index of the relative position of two tokens of an h x w window,
    into a table of (2h - 1) * (2w - 1) rows."""
    import torch

    coords = torch.stack(torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij"))
    coords = coords.flatten(1)  # (2, h*w)
    relative = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0)  # (h*w, h*w, 2)
    relative[:, :, 0] += height - 1
    relative[:, :, 1] += width - 1
    relative[:, :, 0] *= 2 * width - 1
    return relative.sum(-1)


def gather_rows(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Rows of a (batch, rows, features) table at integer positions (batch, ...): an
    embedding lookup per sample, as a gather (torch.export keeps the batch dynamic)."""
    rows = index.flatten(1)[..., None].expand(-1, -1, table.shape[-1])
    return table.gather(1, rows).reshape(*index.shape, table.shape[-1])


HELPERS = {f.__name__: f for f in (sinusoid_table, relative_position_index, gather_rows)}
HELPER_NAMES: frozenset[str] = frozenset(HELPERS)


def helper_source(name: str) -> str:
    """A helper's source as generated files hold it: no aurane import, torch imported at
    the top of the file (so the function-local import goes)."""
    source = inspect.getsource(HELPERS[name])
    return re.sub(r"\n    import torch\n", "", source).rstrip()


def buffer_helper_sources(code: str) -> list[str]:
    """The helpers ``code`` calls, in a fixed order."""
    return [helper_source(n) for n in HELPERS if re.search(rf"(?<![\w.]){n}\(", code)]
