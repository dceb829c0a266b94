"""Which of the module's outputs the program returns, and their names.

A module that returns several tensors (a tuple, a dict, a Hugging Face ``ModelOutput``:
``BertModel``'s ``last_hidden_state`` and ``pooler_output``) is lifted returning every one
computed from the inputs, in the module's order, named after its dict keys or fields
(``0``, ``1`` for a tuple's items); ``--output NAME`` keeps one. A tensor computed without
the inputs (a constant, a parameter returned as it is) is not a program output: it is
reported as left out.
"""

from __future__ import annotations

from typing import Any

from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Lowering
from aurane.lift.refs import ConstRef, ParamRef, Pieces, TensorRef


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every tensor of the result (computed from the inputs or not) with its name."""
    if isinstance(value, TensorRef | ConstRef | ParamRef):
        return [(prefix or "output", value)]
    if isinstance(value, Pieces):
        value = value.items
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _leaves(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, tuple | list):
        for index, item in enumerate(value):
            found += _leaves(item, f"{prefix}.{index}" if prefix else str(index))
    return found


def _named(lw: Lowering, resolved: Any) -> list[tuple[str, Any]]:
    found = _leaves(resolved)
    names = lw.output_names  # an exported graph's flat outputs (ModelOutput fields)
    if names and len(names) == len(found):
        found = [(name, ref) for name, (_, ref) in zip(names, found, strict=True)]
    return found


def choose_output(lw: Lowering, resolved: Any) -> tuple[list[str], list[str], list[str]]:
    """(the values the program returns, their names, the names of the outputs left out):
    every tensor output computed from the inputs, or the one ``--output`` names."""
    every = _named(lw, resolved)
    found = [(name, ref) for name, ref in every if isinstance(ref, TensorRef)]
    if not found:
        raise Unexpressible("the module's output", "it returns no tensor computed from the input")
    wanted = lw.wanted_output
    chosen = found
    if wanted is not None:
        chosen = [
            (name, ref) for name, ref in found if name == wanted or name.split(".")[-1] == wanted
        ][:1]
        if not chosen:
            known = ", ".join(name for name, _ in found)
            raise Unexpressible("--output", f"no output named {wanted!r}; the outputs are {known}")
    kept = [name for name, _ in chosen]
    dropped = [name for name, _ in every if name not in kept]
    return [ref.id for _, ref in chosen], kept, dropped
