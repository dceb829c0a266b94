"""Refusing a norm's ``axes`` count the language rejects (issue 24 item 3).

A class whose norm's ``axes`` a block parameter gives cuts the normalised shape from its
input's sizes (``emit_layers.normalized_shape``: ``nn.RMSNorm((channels, 8, 8)[-p0:])``).
Python's slice takes any count: ``[-0:]`` and ``[-4:]`` are all three axes, ``[-True:]``
the last; the language rejects ``axes`` below 1 or above the sample's axes, and a
boolean (S003). The class raises instead, naming itself, the count and its range::

    if not 1 <= p0 <= 3:  # a norm of the last 1 to 3 sample axes
        raise ValueError(f"Norms is written for 1 <= p0 <= 3, not {p0}")

The block and network rollers write it before the norm's line (in a loop too: the count
may read its targets); a class written without loops (``param_blocks``) first in its
``__init__``.
"""

from __future__ import annotations

import ast as pyast
import re
from collections.abc import Container

from aurane.backends.torch.refusals import refusal


def axes_refusal(class_name: str, count: str, rank: int, flags: bool, depth: int = 2) -> list[str]:
    """The lines refusing a norm's ``axes`` count (``count``, the text of a block
    parameter's expression) that the language rejects, on a sample of ``rank`` axes:
    none or more than ``rank`` (``(channels, 8, 8)[-p0:]`` at ``p0 = 0`` or 4 cuts all
    three axes), where a class built with it would normalise axes no source does; on a
    sample of one axis (or the channel axis of ``layer_norm(dim=1)``, ``rank`` 1), any
    count but 1. ``flags``: a boolean may reach ``count``, which the slice takes for 1."""
    if rank == 1:
        test, said, why = f"{count} != 1", f"for {count} == 1", "the one axis the norm takes"
    else:
        test, said = f"not 1 <= {count} <= {rank}", f"for 1 <= {count} <= {rank}"
        why = f"a norm of the last 1 to {rank} sample axes"
    if flags:
        test = f"isinstance({count}, bool) or {test}"
    return refusal(class_name, test, said, why, count, depth)


# ``nn.RMSNorm((in_channels, 8, 8)[-p0:]`` as ``normalized_shape`` writes it: the sizes
# and the count (a name or a parenthesised expression)
_CUT = re.compile(r"nn\.(?:RMSNorm|LayerNorm)\((\((?:[^()]|\([^()]*\))*\))\[-(\w+|\(.+?\)):\]")


def cut_axes_refusals(class_name: str, init: str, flags: Container[str]) -> list[str]:
    """The refusals (``axes_refusal``) of each count the ``__init__`` text ``init`` cuts
    a norm's shape by, once each: a class written without loops refuses them first.
    ``flags``: the names a boolean may reach."""
    out: list[str] = []
    for sizes, count in dict.fromkeys(_CUT.findall(init)):
        try:
            shape = pyast.parse(sizes, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(shape, pyast.Tuple):
            continue
        rank = len(shape.elts)
        bare = count.removeprefix("(").removesuffix(")")
        out += axes_refusal(class_name, bare, rank, bare in flags)
    return out
