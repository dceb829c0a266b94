"""Signature help: the call around the cursor and its active argument."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from aurane import ops
from aurane.lsp.document import Document
from aurane.lsp.text import enclosing, option_spec, param_text
from aurane.syntax import ast


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
        model = enclosing(doc, line)
        graph_form = isinstance(model, ast.Model) and "->" not in prefix and "=" in prefix
        if graph_form:
            params = ["input", *params]
        label = f"{spec.name}({', '.join(params)})"
    elif isinstance(stmt, ast.Model):
        params = [p.name + ("" if p.default is None else "=…") for p in stmt.params]
        label = f"{name}({', '.join(params)})"
    elif (option := option_spec(name)) is not None:
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
