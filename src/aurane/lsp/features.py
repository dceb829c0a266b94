"""Answers to LSP requests, computed from a ``Document`` (no protocol plumbing here)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lsprotocol import types as lsp

from aurane import ops
from aurane.analysis.profile import LayerProfile, profile_layers
from aurane.diagnostics import Diagnostic
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.lsp.document import GLOBAL, LOCAL, Document, Occurrence, walk_graphs
from aurane.lsp.positions import LineIndex, contains, size
from aurane.ops.spec import REQUIRED, OpSpec, Param
from aurane.semantics import config, sources
from aurane.source import Span
from aurane.syntax import ast

SOURCE = "aurane"
_HINT_NAME = re.compile(r"did you mean '([^']+)'")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}
TOP_LEVEL_KEYWORDS = ("model", "dataset", "experiment", "train", "train_gan", "use")

# ---------------------------------------------------------------- diagnostics


def to_lsp_diagnostic(d: Diagnostic, lines: LineIndex, uri: str) -> lsp.Diagnostic:
    span = d.span or Span(1, 1, 1, 1)
    message = d.message if d.hint is None else f"{d.message}\nhelp: {d.hint}"
    related = [
        lsp.DiagnosticRelatedInformation(lsp.Location(uri, lines.range(lab.span)), lab.message)
        for lab in d.labels
    ]
    return lsp.Diagnostic(
        range=lines.range(span),
        message=message,
        severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error),
        code=d.code,
        source=SOURCE,
        related_information=related or None,
        data={"hint": d.hint, "stage": d.stage},
    )


def diagnostics(doc: Document, extra: Iterable[Diagnostic] = ()) -> list[lsp.Diagnostic]:
    found = list(doc.front.diagnostics) if doc.front is not None else []
    return front_diagnostics(found, doc.lines, doc.uri, extra)


def front_diagnostics(
    found: Iterable[Diagnostic], lines: LineIndex, uri: str, extra: Iterable[Diagnostic] = ()
) -> list[lsp.Diagnostic]:
    return [to_lsp_diagnostic(d, lines, uri) for d in [*found, *extra]]


# ---------------------------------------------------------------- formatting helpers


def shape_text(shape: tuple[Any, ...] | None) -> str:
    if shape is None:
        return "?"
    dims = ["B" if dim == BATCH else str(dim) for dim in shape]
    return "(" + ", ".join(dims) + ")"


def param_text(param: Param) -> str:
    if param.default is REQUIRED:
        return param.name
    return f"{param.name}={_literal(param.default)}"


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def op_signature(name: str, params: Iterable[Param]) -> str:
    return f"{name}({', '.join(param_text(p) for p in params)})"


def model_signature(model: ast.Model, lines: LineIndex) -> str:
    if not model.params:
        return f"model {model.name}"
    parts = []
    for param in model.params:
        text = param.name + (f": {param.annotation}" if param.annotation else "")
        if param.default is not None:
            text += " = " + span_text(lines, param.default.span)
        parts.append(text)
    return f"model {model.name}({', '.join(parts)})"


def span_text(lines: LineIndex, span: Span) -> str:
    if span.line == span.end_line:
        return lines.line(span.line)[span.column - 1 : span.end_column - 1]
    out = [lines.line(span.line)[span.column - 1 :]]
    out += [lines.line(n) for n in range(span.line + 1, span.end_line)]
    out.append(lines.line(span.end_line)[: span.end_column - 1])
    return "\n".join(out)


def word_at(lines: LineIndex, line: int, column: int) -> tuple[str, Span] | None:
    text = lines.line(line)
    for match in _IDENT.finditer(text):
        if match.start() + 1 <= column <= match.end() + 1:
            return match.group(0), Span(line, match.start() + 1, line, match.end() + 1)
    return None


# ---------------------------------------------------------------- hover


def _profiles(graphs: dict[str, Graph]) -> dict[tuple[str, str], LayerProfile]:
    """(graph name, node id) -> the node's profile, blocks' layers included."""
    out: dict[tuple[str, str], LayerProfile] = {}

    def visit(graph: Graph) -> None:
        try:
            layers = profile_layers(graph)
        except Exception:  # a partial graph may not profile; hover still shows shapes
            return
        by_id = {layer.node: layer for layer in layers}
        for node in graph.nodes:
            if node.id in by_id:
                out[(graph.name, node.id)] = by_id[node.id]
            if node.subgraph is not None:
                visit(node.subgraph)

    for graph in graphs.values():
        visit(graph)
    return out


def node_at(doc: Document, line: int, column: int) -> tuple[Graph, Node] | None:
    best: tuple[Graph, Node] | None = None
    for graph, node in walk_graphs(doc.graphs):
        if contains(node.span, line, column) and (
            best is None or size(node.span) < size(best[1].span)
        ):
            best = (graph, node)
    return best


def _value(graph: Graph, name: str) -> Value | None:
    return next((v for v in graph.values if v.name == name), None)


def hover(doc: Document, line: int, column: int) -> lsp.Hover | None:
    word = word_at(doc.lines, line, column)
    occurrence = doc.index.at(line, column)
    parts: list[str] = []
    found = node_at(doc, line, column)
    on_call = (
        found is not None
        and word is not None
        # the call's own name, or the block inside ``repeat(Block(64), 2)``
        and (_on_node_name(found[1], word[1]) or found[1].block == word[0])
    )
    if occurrence is not None and not on_call:
        parts += _symbol_hover(doc, occurrence)
    elif found is not None and word is not None:
        parts += _node_hover(doc, *found)
    if not parts and word is not None:
        spec = ops.lookup(word[0])
        if spec is not None:
            parts += [f"```aurane\n{op_signature(spec.name, spec.params)}\n```", spec.doc]
        option = _option(word[0])
        if option is not None:
            parts += [f"```aurane\n{op_signature(option.name, option.params)}\n```", option.doc]
    if not parts:
        return None
    span = word[1] if word is not None else Span(line, column, line, column)
    return lsp.Hover(
        contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n\n".join(parts)),
        range=doc.lines.range(span),
    )


def _on_node_name(node: Node, word: Span) -> bool:
    """Whether ``word`` is the call's own name (a node's span starts at its operation or
    block name), not an argument inside it such as ``h`` in ``add(h, x)``."""
    return (word.line, word.column) == (node.span.line, node.span.column)


def _node_hover(doc: Document, graph: Graph, node: Node) -> list[str]:
    output = _value(graph, node.output)
    shape = shape_text(output.shape if output else None)
    dtype = output.dtype if output and output.dtype else "?"
    title = node.block if node.block else node.op
    lines = [f"**{title}** → `{shape}` {dtype}"]
    profile = _profiles({graph.name: graph}).get((graph.name, node.id))
    parameters = profile.parameters if profile else node.parameters
    facts = [f"parameters: {parameters:,}"]
    if profile is not None:
        facts.append(f"MACs: {profile.macs:,}")
    lines.append(" · ".join(facts))
    if node.block is not None:
        model = doc.index.statements.get(node.block)
        if isinstance(model, ast.Model):
            lines.append(f"```aurane\n{model_signature(model, doc.lines)}\n```")
        if node.repeat > 1:
            lines.append(f"repeated {node.repeat} times")
    else:
        spec = ops.lookup(node.op)
        if spec is not None:
            lines.append(f"```aurane\n{op_signature(spec.name, spec.params)}\n```")
            lines.append(spec.doc)
    return lines


def _symbol_hover(doc: Document, occurrence: Occurrence) -> list[str]:
    if occurrence.key[0] == LOCAL:
        model, name = occurrence.key[1], occurrence.key[2]
        head = f"**{name}** ({occurrence.kind} in `{model}`)"
        found = _bound_values(doc, model, name, occurrence)
        facts = sorted(
            {(shape_text(value.shape), value.dtype or "?") for value, _ in found},
            key=str,
        )
        if not facts:
            return [head]
        if len(facts) == 1:
            shape, dtype = facts[0]
            return [head, f"shape `{shape}` · dtype {dtype}"]
        lines = [head]  # a block called with different inputs: one line per call
        for value, call in found:
            where = f" (the call at {call.span.line}:{call.span.column})" if call else ""
            lines.append(f"shape `{shape_text(value.shape)}` · dtype {value.dtype or '?'}{where}")
        return lines
    stmt = doc.index.statements.get(occurrence.name)
    if isinstance(stmt, ast.Constant):
        return [f"```aurane\n{stmt.name} = {span_text(doc.lines, stmt.value.span)}\n```"]
    if isinstance(stmt, ast.Dataset):
        source = f" from {stmt.source.id}" if stmt.source else ""
        return [f"**dataset {stmt.name}**{source}"]
    if isinstance(stmt, ast.Model):
        parts = [f"```aurane\n{model_signature(stmt, doc.lines)}\n```"]
        graph = doc.graphs.get(stmt.name)
        if graph is not None:
            parts.append(
                f"input `{shape_text(graph.input_value.shape)}` → output "
                f"`{shape_text(graph.output_value.shape)}` · parameters: {graph.parameters:,}"
            )
            try:
                macs = sum(layer.macs for layer in profile_layers(graph))
                parts.append(f"MACs per sample: {macs:,}")
            except Exception:
                pass
        return parts
    return []


def _bindings(model: ast.Model) -> list[tuple[str, Span, Span]]:
    """(name, name span, statement span) of every tensor binding in the forward body."""
    if model.forward is None:
        return []
    forward = model.forward
    out = [(forward.param, forward.param_span, forward.param_span)]
    for stmt in forward.body:
        if isinstance(stmt, ast.Assign):
            for name, span in stmt.targets or ((stmt.target, stmt.target_span),):
                out.append((name, span, stmt.span))
    return out


def _bound_values(
    doc: Document, model: str, name: str, occurrence: Occurrence
) -> list[tuple[Value, Node | None]]:
    """The value ``occurrence`` denotes in each graph of ``model`` (with the block call).

    A definition denotes what its statement binds; a use denotes the latest binding whose
    statement ends before it (``h = dense(h, 4)`` reads the previous ``h``).
    """
    stmt = doc.index.statements.get(model)
    if not isinstance(stmt, ast.Model):
        return []
    at = occurrence.span
    bindings = [b for b in _bindings(stmt) if b[0] == name]
    if occurrence.definition:
        chosen = next((b for b in bindings if b[1] == at), None)
    else:
        before = [b for b in bindings if (b[2].end_line, b[2].end_column) <= (at.line, at.column)]
        chosen = before[-1] if before else None
    if chosen is None:
        return []
    out: list[tuple[Value, Node | None]] = []
    for graph, call in _graphs_of(doc, model):
        if chosen[1] == chosen[2]:  # the forward parameter: the graph's input
            out.append((graph.input_value, call))
            continue
        inside = [
            v
            for v in graph.values
            if (v.source_name or v.name) == name and _within(v.span, chosen[2])
        ]
        if inside:
            out.append((max(inside, key=lambda v: (v.span.line, v.span.column)), call))
    return out


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _graphs_of(doc: Document, model: str) -> list[tuple[Graph, Node | None]]:
    out: list[tuple[Graph, Node | None]] = [
        (g, None) for g in doc.graphs.values() if g.name == model
    ]
    out += [(n.subgraph, n) for _, n in walk_graphs(doc.graphs) if n.subgraph and n.block == model]
    return out


def _option(name: str) -> config.OptionSpec | None:
    for table in (
        config.LOSS_TABLE,
        config.OPTIMIZER_TABLE,
        config.SCHEDULER_TABLE,
        config.CALLBACK_TABLE,
    ):
        if name in table:
            return table[name]
    return None


# ---------------------------------------------------------------- inlay hints


def inlay_hints(doc: Document, start: int, end: int) -> list[lsp.InlayHint]:
    """The output shape after each chain step and graph statement, lines start..end (1-based)."""
    at: dict[tuple[int, int], list[str]] = {}
    for graph, node in walk_graphs(doc.graphs):
        span = node.span
        if not start <= span.end_line <= end:
            continue
        value = _value(graph, node.output)
        if value is None:
            continue
        key = (span.end_line, span.end_column)
        shapes = at.setdefault(key, [])
        text = shape_text(value.shape)
        if node.suffix_of is not None and shapes:
            shapes[-1] = text  # the suffix's output is the step's output
        elif text not in shapes:
            shapes.append(text)
    hints = []
    for (line, column), shapes in sorted(at.items()):
        label = " | ".join(shapes)
        hints.append(
            lsp.InlayHint(
                position=doc.lines.position(line, column),
                label=f": {label}",
                kind=lsp.InlayHintKind.Type,
                padding_left=True,
            )
        )
    return hints


# ---------------------------------------------------------------- navigation


def _occurrence(doc: Document, line: int, column: int) -> Occurrence | None:
    return doc.index.at(line, column)


def definition(doc: Document, line: int, column: int) -> list[lsp.Location]:
    occurrence = _occurrence(doc, line, column)
    if occurrence is None:
        return []
    defs = doc.index.definitions(occurrence.key)
    if occurrence.key[0] == LOCAL and not occurrence.definition:
        # the latest binding on an earlier line (``h = f(h)`` reads the previous ``h``)
        before = [d for d in defs if d.span.line < occurrence.span.line]
        defs = before[-1:] or defs[:1]
    return [lsp.Location(doc.uri, doc.lines.range(d.span)) for d in defs]


def references(doc: Document, line: int, column: int, declaration: bool) -> list[lsp.Location]:
    occurrence = _occurrence(doc, line, column)
    if occurrence is None:
        return []
    return [
        lsp.Location(doc.uri, doc.lines.range(o.span))
        for o in doc.index.all(occurrence.key)
        if declaration or not o.definition
    ]


def prepare_rename(doc: Document, line: int, column: int) -> lsp.Range | None:
    occurrence = _occurrence(doc, line, column)
    return doc.lines.range(occurrence.span) if occurrence is not None else None


def rename(doc: Document, line: int, column: int, new_name: str) -> lsp.WorkspaceEdit | None:
    occurrence = _occurrence(doc, line, column)
    if occurrence is None or not _IDENT.fullmatch(new_name):
        return None
    edits = [lsp.TextEdit(doc.lines.range(o.span), new_name) for o in doc.index.all(occurrence.key)]
    return lsp.WorkspaceEdit(changes={doc.uri: edits})


# ---------------------------------------------------------------- completion


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


def _enclosing(doc: Document, line: int) -> ast.Statement | None:
    program = doc.front.program if doc.front is not None else None
    if program is None:
        return None
    for stmt in program.statements:
        if stmt.span.line <= line <= stmt.span.end_line:
            return stmt
    # a line being typed below a block's last line still belongs to it when indented
    before = [s for s in program.statements if s.span.line <= line]
    text = doc.lines.line(line)
    if before and text[:1] in (" ", "\t"):
        return before[-1]
    return None


_TABLE_FOR: dict[type, dict[str, config.FieldSpec]] = {
    ast.Experiment: config.EXPERIMENT_TABLE,
    ast.Dataset: config.DATASET_TABLE,
    ast.Train: config.TRAIN_TABLE,
    ast.TrainGan: config.GAN_TABLE,
    ast.Model: config.MODEL_TABLE,
}


def completion(doc: Document, line: int, column: int) -> list[lsp.CompletionItem]:
    prefix = doc.lines.line(line)[: column - 1]
    stmt = _enclosing(doc, line)
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


# ---------------------------------------------------------------- signature help


def _open_call(prefix: str) -> tuple[str, int, str | None] | None:
    """The innermost unclosed call before the cursor: (function, argument index, keyword)."""
    depth = 0
    commas = 0
    for index in range(len(prefix) - 1, -1, -1):
        char = prefix[index]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth == 0:
                if char == "[":
                    return None
                name = re.search(r"([A-Za-z_][\w.]*)\s*$", prefix[:index])
                if name is None:
                    return None
                current = prefix[index + 1 :].rsplit(",", 1)[-1]
                keyword = re.match(r"\s*([A-Za-z_]\w*)\s*=", current)
                return name.group(1), commas, keyword.group(1) if keyword else None
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
    return None


def signature_help(doc: Document, line: int, column: int) -> lsp.SignatureHelp | None:
    prefix = doc.lines.line(line)[: column - 1]
    found = _open_call(prefix)
    if found is None:
        return None
    name, argument, keyword = found
    params: list[str]
    doc_text: str | None = None
    spec = ops.lookup(name)
    stmt = doc.index.statements.get(name)
    graph_form = False
    if spec is not None:
        params = [param_text(p) for p in spec.params]
        doc_text = spec.doc
        model = _enclosing(doc, line)
        graph_form = isinstance(model, ast.Model) and "->" not in prefix and "=" in prefix
        if graph_form:
            params = ["input", *params]
        label = f"{spec.name}({', '.join(params)})"
    elif isinstance(stmt, ast.Model):
        params = [p.name + ("" if p.default is None else "=…") for p in stmt.params]
        label = f"{name}({', '.join(params)})"
    elif (option := _option(name)) is not None:
        params = [param_text(p) for p in option.params]
        doc_text = option.doc
        label = f"{option.name}({', '.join(params)})"
    else:
        return None
    active = argument
    if keyword is not None:
        bare = [p.split("=")[0] for p in params]
        active = bare.index(keyword) if keyword in bare else argument
    information = lsp.SignatureInformation(
        label=label,
        documentation=doc_text,
        parameters=[lsp.ParameterInformation(label=p) for p in params],
    )
    return lsp.SignatureHelp(
        signatures=[information],
        active_signature=0,
        active_parameter=min(active, max(len(params) - 1, 0)),
    )


# ---------------------------------------------------------------- outline, folding


def document_symbols(doc: Document) -> list[lsp.DocumentSymbol]:
    program = doc.front.program if doc.front is not None else None
    if program is None:
        return []
    out: list[lsp.DocumentSymbol] = []
    r = doc.lines.range
    for stmt in program.statements:
        match stmt:
            case ast.Model():
                children = [
                    lsp.DocumentSymbol(f.name, lsp.SymbolKind.Field, r(f.span), r(f.name_span))
                    for f in stmt.fields
                ]
                if stmt.forward is not None:
                    for body in stmt.forward.body:
                        if isinstance(body, ast.Assign):
                            children.append(
                                lsp.DocumentSymbol(
                                    body.target,
                                    lsp.SymbolKind.Variable,
                                    r(body.span),
                                    r(body.target_span),
                                )
                            )
                kind = doc.index.kinds.get(stmt.name, "model")
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name,
                        lsp.SymbolKind.Class,
                        r(stmt.span),
                        r(stmt.name_span),
                        detail=kind,
                        children=children,
                    )
                )
            case ast.Constant():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name, lsp.SymbolKind.Constant, r(stmt.span), r(stmt.name_span)
                    )
                )
            case ast.Dataset():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name,
                        lsp.SymbolKind.Struct,
                        r(stmt.span),
                        r(stmt.name_span),
                        detail="dataset",
                    )
                )
            case ast.Experiment():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.name,
                        lsp.SymbolKind.Namespace,
                        r(stmt.span),
                        r(stmt.name_span),
                        detail="experiment",
                    )
                )
            case ast.Train():
                name = f"train {stmt.model.id} on {stmt.dataset.id}"
                out.append(
                    lsp.DocumentSymbol(name, lsp.SymbolKind.Event, r(stmt.span), r(stmt.model.span))
                )
            case ast.TrainGan():
                name = f"train_gan {stmt.generator.id}, {stmt.discriminator.id}"
                out.append(
                    lsp.DocumentSymbol(
                        name, lsp.SymbolKind.Event, r(stmt.span), r(stmt.generator.span)
                    )
                )
            case ast.Use():
                out.append(
                    lsp.DocumentSymbol(
                        stmt.module, lsp.SymbolKind.Module, r(stmt.span), r(stmt.module_span)
                    )
                )
    return out


def folding_ranges(doc: Document) -> list[lsp.FoldingRange]:
    program = doc.front.program if doc.front is not None else None
    if program is None:
        return []
    out: list[lsp.FoldingRange] = []
    for stmt in program.statements:
        spans = [stmt.span]
        if isinstance(stmt, ast.Model) and stmt.forward is not None:
            spans.append(stmt.forward.span)
        for span in spans:
            if span.end_line > span.line:
                out.append(
                    lsp.FoldingRange(
                        start_line=span.line - 1,
                        end_line=span.end_line - 1,
                        kind=lsp.FoldingRangeKind.Region,
                    )
                )
    return out


# ---------------------------------------------------------------- formatting, code actions


def _whole(doc: Document) -> lsp.Range:
    last = len(doc.lines.lines)
    return lsp.Range(lsp.Position(0, 0), doc.lines.position(last, len(doc.lines.line(last)) + 1))


def formatting(doc: Document) -> list[lsp.TextEdit]:
    from aurane.tools.format import format_source

    result = format_source(doc.text, doc.uri)
    if result.output is None or result.output == doc.text:
        return []
    return [lsp.TextEdit(_whole(doc), result.output)]


def _overlaps(span: Span | None, start: int, end: int) -> bool:
    return span is not None and span.line <= end and span.end_line >= start


def code_actions(doc: Document, start: int, end: int) -> list[lsp.CodeAction]:
    from aurane.tools.lint import FIXABLE, fix_source, lint_source

    actions: list[lsp.CodeAction] = []
    front = list(doc.front.diagnostics) if doc.front is not None else []
    linted = lint_source(doc.text, doc.uri)
    for d in [*front, *linted]:
        if not _overlaps(d.span, start, end) or d.span is None:
            continue
        diagnostic = to_lsp_diagnostic(d, doc.lines, doc.uri)
        match = _HINT_NAME.search(d.hint or "")
        if match is not None:
            edit = _rename_in_span(doc, d.span, match.group(1))
            if edit is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Replace with '{match.group(1)}'",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        is_preferred=True,
                        edit=lsp.WorkspaceEdit(changes={doc.uri: [edit]}),
                    )
                )
        if d.code in FIXABLE:
            fix = _lint_fix(doc, d)
            if fix is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Fix {d.code}: {d.message}",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=lsp.WorkspaceEdit(changes={doc.uri: [fix]}),
                    )
                )
    if any(d.code in FIXABLE for d in linted):
        fixed = fix_source(doc.text, doc.uri, linted)
        if fixed.output is not None and fixed.output != doc.text:
            actions.append(
                lsp.CodeAction(
                    title="Fix all auto-fixable lint problems",
                    kind=lsp.CodeActionKind.SourceFixAll,
                    edit=lsp.WorkspaceEdit(
                        changes={doc.uri: [lsp.TextEdit(_whole(doc), fixed.output)]}
                    ),
                )
            )
    return actions


def _rename_in_span(doc: Document, span: Span, name: str) -> lsp.TextEdit | None:
    """Replace the identifier in ``span`` closest to ``name`` (the misspelt one)."""
    import difflib

    text = span_text(doc.lines, span)
    if span.line != span.end_line:
        text = text.split("\n", 1)[0]
    best: tuple[float, re.Match[str]] | None = None
    for match in _IDENT.finditer(text):
        score = difflib.SequenceMatcher(None, match.group(0), name).ratio()
        if match.group(0) != name and (best is None or score > best[0]):
            best = (score, match)
    if best is None:
        return None
    column = span.column + best[1].start()
    target = Span(span.line, column, span.line, column + len(best[1].group(0)))
    return lsp.TextEdit(doc.lines.range(target), name)


def _lint_fix(doc: Document, d: Diagnostic) -> lsp.TextEdit | None:
    if d.span is None:
        return None
    if d.code == "W001":  # trailing whitespace
        return lsp.TextEdit(doc.lines.range(d.span), "")
    if d.code == "W002":  # missing colon
        point = doc.lines.position(d.span.line, d.span.column)
        return lsp.TextEdit(lsp.Range(point, point), ":")
    return None


def local_key(model: str, name: str) -> tuple[str, str, str]:
    return (LOCAL, model, name)


def global_key(name: str) -> tuple[str, str]:
    return (GLOBAL, name)
