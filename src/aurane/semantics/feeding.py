"""Data to several inputs (issue 23): which field of a sample feeds which model input, which
field is the target, and which model output the loss reads.

A train block may write ``inputs = {ids: input_ids, mask: attention_mask}`` (model input:
data field, a name for dict samples, a position for tuples), ``target = label`` and
``output = logits`` (one of the names of the model's ``return logits, pooled``). Without
them an input takes the field of its own name (dict samples, as Hugging Face ``datasets``
yields) or of its position (tuples); the target is the field no input takes; an input with
a default may have no field (the model builds it). ``plan`` resolves this against what a
dataset is known to yield (``data_contracts``): the backend writes the resolved mapping
into the training function (``rt.Feed``), ``ir/contracts.py`` reports what does not fit.

Pure front end: the AST and data contracts only.
"""

from __future__ import annotations

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.records import record
from aurane.semantics.data_contracts import DataContract, Sample, source_spec
from aurane.semantics.values import NotLiteral, literal_value
from aurane.source import Span
from aurane.syntax import ast

Key = str | int  # a dict sample's field name, or a tuple sample's position

FEED_FIELDS = ("inputs", "target")


@record(frozen=True, slots=True)
class FeedPlan:
    """A job's resolved feed: per model input (forward order) its data key (None: left to
    the input's default); the target's key. ``static``: resolved against known data (else
    the generated program resolves inputs by name or position at run time)."""

    inputs: tuple[tuple[str, Key | None], ...]
    target: Key | None
    static: bool


def output_names(model: ast.Model) -> tuple[str, ...]:
    """The names a forward's ``return a, b`` gives its outputs (empty: one output, or a
    return of expressions that are not names)."""
    if model.forward is None:
        return ()
    for stmt in ast.simple_statements(model.forward.body):
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.TupleExpr):
            items = stmt.value.items
            return tuple(item.id if isinstance(item, ast.Name) else "" for item in items)
    return ()


def _return_span(model: ast.Model) -> Span | None:
    if model.forward is None:
        return None
    for stmt in ast.simple_statements(model.forward.body):
        if isinstance(stmt, ast.Return):
            return stmt.value.span
    return None


def _fields(stmt: ast.Train) -> dict[str, ast.Field]:
    return {item.name: item for item in stmt.fields}


def _key(expr: ast.Expr) -> Key | None:
    match expr:
        case ast.Name(id=name) | ast.String(value=name):
            return name
    try:
        value = literal_value(expr)
    except NotLiteral:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def output_index(model: ast.Model, stmt: ast.Train) -> int | None:
    """The index of the output ``output = NAME`` names (None: the model has one output)."""
    names = output_names(model)
    item = _fields(stmt).get("output")
    if not names:
        return None
    if item is None:
        return 0
    key = _key(item.value)
    return names.index(key) if key in names else 0


def check_output(model: ast.Model, stmt: ast.Train) -> list[Diagnostic]:
    """S190 (``output`` names no output), S191 (several outputs and no ``output``),
    S192 (an ``inputs`` key that is no input of the forward, or given twice)."""
    out: list[Diagnostic] = []
    names = output_names(model)
    item = _fields(stmt).get("output")
    where = _return_span(model)
    labels = (Label(where, "the model's outputs"),) if where is not None else ()
    if item is not None:
        key = _key(item.value)
        if key not in (names or ()):
            listed = ", ".join(n for n in names if n) if names else ""
            message = (
                f"model '{model.name}' has no output '{key}' (it returns {listed})"
                if names
                else f"model '{model.name}' returns one output: 'output' is for a model "
                "that returns several"
            )
            hint = f"write output = {names[0]}" if names and names[0] else "remove 'output'"
            out.append(diag("S190", message, item.value.span, hint=hint, labels=labels))
    elif len(names) > 1:
        listed = ", ".join(n for n in names if n)
        out.append(
            diag(
                "S191",
                f"model '{model.name}' returns several outputs ({listed}): say which one the "
                "loss reads",
                stmt.model.span,
                hint=f"add output = {names[0] or 'NAME'} to the train block",
                labels=labels,
            )
        )
    feed = _fields(stmt).get("inputs")
    forward = model.forward
    if feed is not None and isinstance(feed.value, ast.DictExpr) and forward is not None:
        seen: set[str] = set()
        for key_name in feed.value.keys:
            if key_name.id not in forward.input_names or key_name.id in seen:
                again = key_name.id in seen
                out.append(
                    diag(
                        "S192",
                        f"'{key_name.id}' is given twice in inputs"
                        if again
                        else f"'{key_name.id}' is not an input of model '{model.name}' "
                        f"({', '.join(forward.input_names)})",
                        key_name.span,
                        hint="key each entry by a parameter of 'def forward'",
                        labels=(Label(forward.param_span, "the forward's inputs"),),
                    )
                )
            seen.add(key_name.id)
    return out


def uses_feed(model: ast.Model, stmt: ast.Train, data: DataContract | None) -> bool:
    """Whether the job feeds the model through a mapping (``rt.Feed``) rather than the
    one-tensor ``(inputs, targets)`` pairs: several inputs, dict samples, or a train block
    that says which field is what."""
    several = model.forward is not None and len(model.forward.inputs) > 1
    given = any(name in _fields(stmt) for name in FEED_FIELDS)
    return several or given or (data is not None and bool(data.fields))


def _given(stmt: ast.Train) -> tuple[dict[str, tuple[Key | None, Span]], tuple[Key, Span] | None]:
    fields = _fields(stmt)
    mapping: dict[str, tuple[Key | None, Span]] = {}
    feed = fields.get("inputs")
    if feed is not None and isinstance(feed.value, ast.DictExpr):
        for name, value in zip(feed.value.keys, feed.value.values, strict=True):
            mapping.setdefault(name.id, (_key(value), value.span))
    target = fields.get("target")
    key = _key(target.value) if target is not None else None
    return mapping, ((key, target.value.span) if target is not None and key is not None else None)


def given_fields(stmt: ast.Train) -> tuple[dict[str, Key], Key | None]:
    """The fields the train block names: ``inputs`` (model input: field) and ``target``."""
    mapping, target = _given(stmt)
    named = {name: key for name, (key, _) in mapping.items() if key is not None}
    return named, target[0] if target is not None else None


def data_fields(data: DataContract) -> dict[Key, Sample]:
    """A dataset's fields as keys: named fields of dict samples; ``0`` (the input) of
    ``(input, target)`` pairs, whose target is ``1``."""
    if data.fields:
        return dict(data.fields)
    return {0: data.sample}


def target_key(data: DataContract) -> Key:
    return data.target_field if data.fields and data.target_field is not None else 1


def _shown(key: Key) -> str:
    return f"'{key}'" if isinstance(key, str) else f"position {key}"


def plan(
    model: ast.Model,
    stmt: ast.Train,
    data: DataContract | None,
    where: Span,
    source: Span | None = None,
) -> tuple[FeedPlan, list[Diagnostic]]:
    """Resolve the job's feed for ``data`` (None or unknown samples: at run time).
    Diagnostics: T150 (a required input no field feeds, a named field the data lacks) and
    T151 (a field that feeds no input and is not the target), at ``where`` (the job's
    reference to the dataset) unless a train-block entry is to blame."""
    forward = model.forward
    params = forward.inputs if forward is not None else ()
    mapping, target = _given(stmt)
    known = data is not None and data.source is not None and source_spec(data.source) is not None
    if data is None or not known:
        inputs = tuple((p.name, mapping[p.name][0] if p.name in mapping else None) for p in params)
        return FeedPlan(inputs, target[0] if target else None, False), []
    available = data_fields(data)
    everything = list(dict.fromkeys([*available, target_key(data)]))
    listed = ", ".join(_shown(k) for k in everything)
    shape = "dict samples with fields" if data.fields else "(input, target) pairs:"
    there = source or data.sample.origin.span
    data_labels = (Label(there, f"dataset '{data.dataset}' yields {listed}"),) if there else ()
    out: list[Diagnostic] = []
    resolved: list[tuple[str, Key | None]] = []
    for index, param in enumerate(params):
        if param.name in mapping:
            key, span = mapping[param.name]
            if key not in everything:
                out.append(
                    diag(
                        "T150",
                        f"dataset '{data.dataset}' has no field "
                        f"{_shown(key) if key is not None else ''} for input '{param.name}' "
                        f"({shape} {listed})",
                        span,
                        hint="name one of the dataset's fields",
                        labels=data_labels,
                    )
                )
            resolved.append((param.name, key))
            continue
        by_name: Key | None = param.name if param.name in available else None
        if by_name is None and not data.fields and index in available:
            by_name = index  # pairs: the input by position
        if by_name is None and param.default is None:
            out.append(
                diag(
                    "T150",
                    f"no field of dataset '{data.dataset}' feeds the input '{param.name}' of "
                    f"model '{model.name}' ({shape} {listed})",
                    where,
                    hint=f"map it with inputs = {{{param.name}: FIELD}}, or give the input a "
                    "default in the forward",
                    labels=(
                        Label(param.name_span, "input declared here"),
                        *data_labels,
                    ),
                )
            )
        resolved.append((param.name, by_name))
    used = {key for _, key in resolved if key is not None}
    if target is not None:
        target_is: Key | None = target[0]
        if target_is not in everything:
            out.append(
                diag(
                    "T150",
                    f"dataset '{data.dataset}' has no field {_shown(target[0])} for the target "
                    f"({shape} {listed})",
                    target[1],
                    hint="name one of the dataset's fields",
                )
            )
    else:
        left = [k for k in everything if k not in used]
        default = target_key(data)
        target_is = default if default in left else (left[0] if len(left) == 1 else None)
    for key in everything:
        if key in used or key == target_is or out:  # one mistake (a misnamed field), one error
            continue
        out.append(
            diag(
                "T151",
                f"field {_shown(key)} of dataset '{data.dataset}' feeds no input of model "
                f"'{model.name}' and is not the target",
                where,
                hint=f"add it to the forward's inputs, map it with inputs = {{NAME: {key}}}, "
                "or name it with target = ...",
                labels=data_labels,
            )
        )
    return FeedPlan(tuple(resolved), target_is, True), out
