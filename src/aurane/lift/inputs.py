"""The inputs a module is lifted with: names, per-sample shapes, dtypes, seeded values.

One input is the module's first ``forward`` parameter, as before issue 23. Several are
named after ``forward``'s parameters (``input_ids``, ``attention_mask``): the original is
called with them as keywords, the lifted program declares them in ``forward``'s order
(``input_shape = {input_ids: (8,), attention_mask: (8,)}``), and the parameters left out
keep their defaults, as a call without them does. A name the language cannot take (a
keyword, a catalog operation, ``input``) is written with a trailing underscore.

Seeded values: floating inputs are normal, integer inputs (token ids, token types, index
tensors) lie in ``[0, smallest embedding table)`` so every lookup is in range, and an input
whose name says it is a mask holds 0s and 1s (its first position 1, so no row is all
padding) in the dtype it has.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from aurane.records import record

if TYPE_CHECKING:  # torch is imported where a tensor is made: the CLI reads DTYPES first
    import torch
    from torch import nn

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")
_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class InputError(ValueError):
    """Inputs that do not fit the module's ``forward`` (a usage error)."""


@record(frozen=True)
class Input:
    name: str  # the forward's parameter (the keyword the original is called with)
    shape: tuple[int, ...]  # per sample
    dtype: str
    program_name: str = ""  # its name in the program, when it differs

    @property
    def written(self) -> str:
        return self.program_name or self.name


def forward_signature(model: nn.Module) -> list[inspect.Parameter]:
    """``forward``'s parameters (``self`` excluded), none when its signature is not known."""
    try:
        return list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return []


def _keyword_parameters(model: nn.Module) -> list[inspect.Parameter]:
    return [p for p in forward_signature(model) if p.kind in _KINDS]


def forward_parameters(model: nn.Module) -> list[str]:
    """The names ``forward`` takes by keyword, in order (``self`` excluded)."""
    return [p.name for p in _keyword_parameters(model)]


def required_parameters(model: nn.Module) -> list[str]:
    """Those of them without a default."""
    return [p.name for p in _keyword_parameters(model) if p.default is inspect.Parameter.empty]


def _described(model: nn.Module) -> str:
    names = forward_parameters(model)
    return f"{type(model).__name__}.forward({', '.join(names)})"


def name_positional(
    model: nn.Module, entries: Sequence[tuple[str | None, object]], option: str
) -> dict[str, object]:
    """``[(name or None, value)]`` as given on the command line, keyed by forward parameter:
    unnamed entries take the parameters in order; ``InputError`` for a name ``forward``
    does not have, or one given twice."""
    parameters = forward_parameters(model)
    found: dict[str, object] = {}
    position = 0
    for name, value in entries:
        if name is None:
            if position >= len(parameters):
                raise InputError(
                    f"{option}: {len(entries)} inputs given, but {_described(model)} "
                    f"takes {len(parameters)}"
                )
            name = parameters[position]
            position += 1
        elif name not in parameters:
            raise InputError(
                f"{option} {name}=...: {_described(model)} has no parameter {name!r}"
                + _did_you_mean(name, parameters)
            )
        if name in found:
            raise InputError(f"{option} {name}=...: {name!r} is given twice")
        found[name] = value
    return found


def _did_you_mean(name: str, names: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def resolve(
    model: nn.Module,
    shapes: Mapping[str, tuple[int, ...]],
    dtypes: Mapping[str, str],
    first_dtype: str | None = None,
) -> list[Input]:
    """Several named inputs in ``forward``'s order, with dtypes: the given ones, else int64
    for a name ending in ``ids`` (and a ``mask`` of a model whose first input is int64),
    else ``first_dtype`` for the first input, else float32."""
    parameters = forward_parameters(model)
    for name in [*shapes, *dtypes]:
        if name not in parameters:
            raise InputError(
                f"--input-shape {name}=...: {_described(model)} has no parameter {name!r}"
                + _did_you_mean(name, parameters)
            )
    for name in dtypes:
        if name not in shapes:
            raise InputError(f"--input-dtype {name}=...: {name!r} has no --input-shape")
    missing = [name for name in required_parameters(model) if name not in shapes]
    if missing:
        raise InputError(
            f"--input-shape: {_described(model)} requires {', '.join(missing)}: give "
            + " ".join(f"--input-shape {name}=SHAPE" for name in missing)
        )
    ordered = [name for name in parameters if name in shapes]
    inputs: list[Input] = []
    for index, name in enumerate(ordered):
        dtype = dtypes.get(name)
        if dtype is None:
            if name.endswith("ids"):
                dtype = "int64"
            elif index == 0 and first_dtype is not None:
                dtype = first_dtype
            elif "mask" in name and inputs and inputs[0].dtype.startswith("int"):
                dtype = "int64"
            else:
                dtype = "float32"
        inputs.append(Input(name, tuple(shapes[name]), dtype, program_name(name)))
    if not inputs:
        raise InputError("--input-shape: no input given")
    if not inputs[0].shape and len(inputs) == 1:
        raise InputError("--input-shape: a single input needs at least one axis")
    return inputs


_TAKEN = frozenset({"input", "self", "torch", "nn", "F", "model", "rt", "math", "batch"})


def program_name(name: str) -> str:
    """``name`` as the program can write it ("" when it can as it is)."""
    from aurane.ops import CATALOG

    if keyword.iskeyword(name) or name in _TAKEN or name in CATALOG or name.startswith("_"):
        return name.lstrip("_") + "_" if name.lstrip("_") else "input_"
    return ""


def is_mask(name: str) -> bool:
    return "mask" in name.lower()


def sample(
    shape: tuple[int, ...],
    dtype: str,
    vocabulary: int,
    *,
    batch: int,
    seed: int,
    mask: bool = False,
) -> torch.Tensor:
    import torch

    generator = torch.Generator().manual_seed(seed)
    torch_dtype = getattr(torch, dtype)
    full = (batch, *shape)
    if mask:
        values = torch.randint(0, 2, full, generator=generator)
        if values.dim() > 1:  # a view: each sample's first position
            values.view(batch, -1)[:, 0] = 1
        return values.to(torch_dtype)
    if torch_dtype.is_floating_point:
        return torch.randn(full, generator=generator).to(torch_dtype)
    if torch_dtype == torch.bool:
        return torch.zeros(full, dtype=torch.bool)
    return torch.randint(0, max(1, vocabulary), full, generator=generator, dtype=torch_dtype)


def samples(
    inputs: Sequence[Input], vocabulary: int, *, batch: int, seed: int
) -> dict[str, torch.Tensor]:
    """One seeded tensor per input, by name (seeds differ between inputs)."""
    masked = len(inputs) > 1
    return {
        item.name: sample(
            item.shape,
            item.dtype,
            vocabulary,
            batch=batch,
            seed=seed + 7919 * index,
            mask=masked and is_mask(item.name),
        )
        for index, item in enumerate(inputs)
    }


__all__ = [
    "DTYPES",
    "Input",
    "InputError",
    "forward_parameters",
    "forward_signature",
    "name_positional",
    "program_name",
    "resolve",
    "sample",
    "samples",
]
