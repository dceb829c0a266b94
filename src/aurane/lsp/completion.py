"""Completion: what may be typed at the cursor, from the catalogs and the document."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from aurane import ops
from aurane.lsp.document import LOCAL, Document
from aurane.lsp.text import enclosing, model_signature, op_signature
from aurane.ops.spec import OpSpec
from aurane.semantics import config, sources
from aurane.syntax import ast

TOP_LEVEL_KEYWORDS = ("model", "dataset", "experiment", "train", "train_gan", "use")


def _op_item(spec: OpSpec) -> lsp.CompletionItem:
    required = [p for p in spec.positional_params if p.required and p.kind.name != "TENSOR"]
    placeholders = ", ".join(f"${{{i}:{p.name}}}" for i, p in enumerate(required, start=1))
    return lsp.CompletionItem(
        label=spec.name,
        kind=lsp.CompletionItemKind.Function,
        detail=op_signature(spec.name, spec.params),
        documentation=spec.doc,
        insert_text=f"{spec.name}({placeholders})$0",
        insert_text_format=lsp.InsertTextFormat.Snippet,
    )


def _option_item(spec: config.OptionSpec, kind: lsp.CompletionItemKind) -> lsp.CompletionItem:
    return lsp.CompletionItem(
        label=spec.name,
        kind=kind,
        detail=op_signature(spec.name, spec.params),
        documentation=spec.doc,
    )


def _field_items(table: dict[str, config.FieldSpec]) -> list[lsp.CompletionItem]:
    seen: dict[str, config.FieldSpec] = {}
    for spec in table.values():
        seen.setdefault(spec.name, spec)
    return [
        lsp.CompletionItem(
            label=spec.name,
            kind=lsp.CompletionItemKind.Field,
            detail=spec.kind.value,
            documentation=spec.doc or None,
            insert_text=f"{spec.name} = ",
        )
        for spec in seen.values()
    ]


_TABLE_FOR: dict[type, dict[str, config.FieldSpec]] = {
    ast.Experiment: config.EXPERIMENT_TABLE,
    ast.Dataset: config.DATASET_TABLE,
    ast.Train: config.TRAIN_TABLE,
    ast.TrainGan: config.GAN_TABLE,
    ast.Model: config.MODEL_TABLE,
}


def completion(doc: Document, line: int, column: int) -> list[lsp.CompletionItem]:
    prefix = doc.lines.line(line)[: column - 1]
    stmt = enclosing(doc, line)
    stripped = prefix.strip()
    if not prefix.startswith((" ", "\t")) and "=" not in prefix:
        items = [
            lsp.CompletionItem(label=word, kind=lsp.CompletionItemKind.Keyword)
            for word in TOP_LEVEL_KEYWORDS
        ]
        return items + _global_items(doc)
    value = re.match(r"\s*([A-Za-z_]\w*)\s*=\s*(.*)$", prefix)
    if isinstance(stmt, ast.Dataset) and re.match(r"\s*from\s+[\w.]*$", prefix):
        return _source_items()
    if value is not None and not isinstance(stmt, ast.Model):
        return _value_items(doc, value.group(1))
    if isinstance(stmt, ast.Model) and (
        stmt.forward is not None and line >= stmt.forward.span.line or "->" in prefix
    ):
        return _forward_items(doc, stmt)
    if stmt is not None and re.fullmatch(r"\w*", stripped):
        return _field_items(_TABLE_FOR.get(type(stmt), {}))
    return _global_items(doc)


def _source_items() -> list[lsp.CompletionItem]:
    return [
        lsp.CompletionItem(label=f"{family}.{name}", kind=lsp.CompletionItemKind.Class)
        for family, names in sources.BUILTIN_FAMILIES.items()
        for name in sorted(names)
    ]


def _value_items(doc: Document, field_name: str) -> list[lsp.CompletionItem]:
    options: list[lsp.CompletionItem] = []
    kinds = {
        "loss": (config.LOSSES, lsp.CompletionItemKind.Function),
        "optimizer": (config.OPTIMIZERS, lsp.CompletionItemKind.Function),
        "scheduler": (config.SCHEDULERS, lsp.CompletionItemKind.Function),
        "callbacks": (config.CALLBACKS, lsp.CompletionItemKind.Function),
    }
    for suffix, (specs, kind) in kinds.items():
        if field_name == suffix or field_name.endswith("_" + suffix):
            options += [_option_item(spec, kind) for spec in specs]
    if field_name == "metrics":
        options += [
            lsp.CompletionItem(label=m, kind=lsp.CompletionItemKind.EnumMember)
            for m in config.METRICS
        ]
    if field_name in ("transform", "transforms", "target_transform"):
        options += [
            lsp.CompletionItem(label=t, kind=lsp.CompletionItemKind.EnumMember)
            for t in config.TRANSFORMS
        ]
    if field_name == "input_dtype":
        options += [
            lsp.CompletionItem(label=t, kind=lsp.CompletionItemKind.EnumMember)
            for t in config.DTYPES
        ]
    return options + _global_items(doc)


def _global_items(doc: Document) -> list[lsp.CompletionItem]:
    kinds = {
        "model": lsp.CompletionItemKind.Class,
        "block": lsp.CompletionItemKind.Class,
        "constant": lsp.CompletionItemKind.Constant,
        "dataset": lsp.CompletionItemKind.Struct,
    }
    return [
        lsp.CompletionItem(label=name, kind=kinds.get(kind), detail=kind)
        for name, kind in doc.index.kinds.items()
    ]


def _forward_items(doc: Document, model: ast.Model) -> list[lsp.CompletionItem]:
    items = [_op_item(spec) for spec in ops.CATALOG.values()]
    for name, stmt in doc.index.statements.items():
        if isinstance(stmt, ast.Model) and name != model.name:
            snippet = name
            if stmt.params:
                holes = [
                    f"${{{i}:{p.name}}}"
                    for i, p in enumerate(stmt.params, start=1)
                    if p.default is None
                ]
                snippet = f"{name}({', '.join(holes)})$0"
            items.append(
                lsp.CompletionItem(
                    label=name,
                    kind=lsp.CompletionItemKind.Class,
                    detail=model_signature(stmt, doc.lines),
                    insert_text=snippet,
                    insert_text_format=lsp.InsertTextFormat.Snippet,
                )
            )
    locals_ = {o.name for o in doc.index.occurrences if o.key[:2] == (LOCAL, model.name)}
    items += [lsp.CompletionItem(label=n, kind=lsp.CompletionItemKind.Variable) for n in locals_]
    items += [
        lsp.CompletionItem(label=n, kind=lsp.CompletionItemKind.Constant)
        for n, k in doc.index.kinds.items()
        if k == "constant"
    ]
    return items
