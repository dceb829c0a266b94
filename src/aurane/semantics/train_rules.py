"""Checks across the fields of a train block (S130): fields that need another field, or a
model of a certain kind. Field values alone are checked by ``fields.FieldChecker``."""

from __future__ import annotations

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.semantics.values import NotLiteral, literal_value
from aurane.syntax import ast


def check_train_fields(
    stmt: ast.Train, models: dict[str, ast.Model], diagnostics: list[Diagnostic]
) -> None:
    """S130 for ``eval_every_steps`` without ``validate_on``, FSDP's options without
    ``strategy = "fsdp"`` and ``channels_last`` for a model whose input is not an image
    (channels, height, width)."""
    given = {item.name: item for item in stmt.fields}
    every = given.get("eval_every_steps")
    if every is not None and "validate_on" not in given:
        diagnostics.append(
            diag(
                "S130",
                "eval_every_steps validates every N steps, but the job has no validate_on",
                every.name_span,
                hint="add validate_on = <dataset>, or remove eval_every_steps",
            )
        )
    strategy = given.get("strategy")
    fsdp = strategy is not None and _literal(strategy.value) == "fsdp"
    for name in ("fsdp_precision", "cpu_offload"):
        item = given.get(name)
        if item is not None and not fsdp:
            diagnostics.append(
                diag(
                    "S130",
                    f"{name} is an option of FSDP, but the job's strategy is "
                    f"{_literal(strategy.value) if strategy is not None else 'ddp'!r}",
                    item.name_span,
                    hint=f'add strategy = "fsdp", or remove {name}',
                )
            )
    channels = given.get("channels_last")
    if fsdp and channels is not None and _is_true(channels.value):
        diagnostics.append(
            diag(
                "S130",
                "channels_last cannot be sharded: FSDP2 shards contiguous parameters only, "
                "and channels-last convolution weights are not",
                channels.name_span,
                hint='remove channels_last, or use strategy = "ddp"',
            )
        )
        return
    model = models.get(stmt.model.id)
    if channels is None or model is None or not _is_true(channels.value):
        return
    shape = next((f.value for f in model.fields if f.name == "input_shape"), None)
    try:
        dims = literal_value(shape) if shape is not None else None
    except NotLiteral:
        return  # a symbolic shape: its rank is still its tuple's length
    rank = len(shape.items) if isinstance(shape, ast.TupleExpr) else None
    rank = len(dims) if isinstance(dims, tuple) else rank
    if rank is not None and rank != 3:
        diagnostics.append(
            diag(
                "S130",
                f"channels_last is for image models, but {model.name}'s input_shape has "
                f"{rank} dimension{'s' if rank != 1 else ''}, not (channels, height, width)",
                channels.name_span,
                hint="remove channels_last, or train a model of images",
            )
        )


def _literal(expr: ast.Expr) -> object:
    try:
        return literal_value(expr)
    except NotLiteral:
        return None


def _is_true(expr: ast.Expr) -> bool:
    try:
        return literal_value(expr) is True
    except NotLiteral:
        return False
