"""The first-batch check of data ``check`` could not know (``aurane.runtime.contracts``).

A job whose dataset is known statically gets nothing: ``check`` has compared it with the
model already (``ir/contracts.py``). Otherwise the training function builds one
``data_check = rt.BatchCheck(...)`` from the IR's shapes and calls it on the first batch
of each unknown dataset, so a misfit stops with one line instead of a traceback from
inside a layer.
"""

from __future__ import annotations

from typing import Any

from aurane.backends.torch.data_emit import Doc, format_call, format_literal, quote
from aurane.ir.contracts import runtime_check, unknown_input_needs
from aurane.ir.graph import Graph
from aurane.semantics.data_contracts import LOSS_TASKS
from aurane.syntax import ast

COMMENT = (
    "    # data the compiler cannot know: each dataset's first batch is checked against the model"
)


def unknown_datasets(program: ast.AuraneProgram, names: list[str | None]) -> set[str]:
    """The names among ``names`` whose samples or labels the compiler does not know."""
    datasets = {d.name: d for d in program.datasets}
    return {n for n in names if n is not None and runtime_check(datasets.get(n))}


def _shape(shape: tuple[Any, ...] | None) -> tuple[int | None, ...] | None:
    """A per-sample shape with symbolic sizes as None (any size)."""
    if shape is None:
        return None
    return tuple(d if isinstance(d, int) else None for d in shape)


def batch_check(
    model: str,
    graph: Graph,
    *,
    loss: str | None = None,
    ignore_index: int | None = None,
    check_dtype: bool = True,
    output: int | None = None,
) -> str | None:
    """``data_check = rt.BatchCheck(...)`` for ``graph`` (None when its input is unknown);
    ``output``: the output the loss reads of a model that returns several."""
    shape = _shape(graph.input_value.sample_shape)
    if shape is None:
        return None
    needs = unknown_input_needs(graph) if graph.input_dtype is None else None
    dtype = graph.input_dtype or (needs[0] if needs is not None else None)
    # None: no layer constrains an unknown dtype
    wanted = quote(dtype) if check_dtype and dtype is not None else "None"
    args: list[Doc] = [quote(model), format_literal(shape), wanted]
    value = graph.outputs[output] if output is not None else graph.output_value
    made = _shape(value.sample_shape)
    if loss is not None and made is not None:
        args += [
            f"task={quote(LOSS_TASKS.get(loss, 'class'))}",
            f"outputs={format_literal(made)}",
        ]
        if ignore_index is not None:
            args.append(f"ignore_index={ignore_index!r}")
    return "\n".join([COMMENT, *format_call("data_check = rt.BatchCheck", args, 4)])
