"""Which of the module's outputs the program returns.

A program has one output today. A module that returns several tensors (Hugging Face's
``BertModel``: ``last_hidden_state`` and ``pooler_output``) is lifted with the one the
caller names (``--output``), or else the one that needs the most layers: a program holds
only the layers its output reads, and ``strict`` loading needs every weight, so the
output that reads them all is the one to keep (``pooler_output`` reads the whole encoder).
The others are reported as dropped.
"""

from __future__ import annotations

from typing import Any

from aurane.lift.layers import Unexpressible
from aurane.lift.lowering import Lowering
from aurane.lift.refs import Pieces, TensorRef


def _named(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, TensorRef):
        return [(prefix or "output", value)]
    if isinstance(value, Pieces):
        value = value.items
    if isinstance(value, dict):
        found: list[tuple[str, Any]] = []
        for key, item in value.items():
            found += _named(item, f"{prefix}.{key}" if prefix else str(key))
        return found
    if isinstance(value, tuple | list):
        found = []
        for index, item in enumerate(value):
            found += _named(item, f"{prefix}.{index}" if prefix else str(index))
        return found
    return []


def _reach(lw: Lowering, start: str) -> int:
    """How many weighted layers the value ``start`` reads."""
    producer = {op.id: op for op in lw.ops}
    seen: set[str] = set()
    stack = [start]
    layers = 0
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        op = producer.get(name)
        if op is None:
            continue
        if op.layer is not None:
            layers += 1
        stack.extend(op.inputs)
    return layers


def choose_output(lw: Lowering, resolved: Any) -> tuple[str, str, list[str]]:
    """(the output's value, its name, the names of the outputs left out)."""
    names = lw.output_names
    found = _named(resolved)
    if names and len(names) == len(found):
        found = [(name, ref) for name, (_, ref) in zip(names, found, strict=True)]
    if not found:
        raise Unexpressible("the module's output", "it returns no tensor computed from the input")
    wanted = lw.wanted_output
    if wanted is not None:
        for name, ref in found:
            if name == wanted or name.split(".")[-1] == wanted:
                chosen = (name, ref)
                break
        else:
            known = ", ".join(name for name, _ in found)
            raise Unexpressible("--output", f"no output named {wanted!r}; the outputs are {known}")
    else:
        chosen = max(found, key=lambda item: _reach(lw, item[1].id))
    dropped = [name for name, _ in found if name != chosen[0]]
    return chosen[1].id, chosen[0], dropped
