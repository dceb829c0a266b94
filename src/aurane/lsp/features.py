"""Answers to LSP requests, computed from a ``Document`` (no protocol plumbing here).

One module per feature; this index is what ``server`` calls:

| module | features |
| --- | --- |
| ``diagnostics`` | diagnostics as published (ranges, help text, related labels) |
| ``hover`` | hover: shapes, dtypes, parameters, MACs |
| ``inlay_hints`` | the shape after each chain step and graph statement |
| ``navigation`` | definition, references, prepare rename, rename |
| ``completion`` | completion items |
| ``signature_help`` | the call around the cursor, its active argument |
| ``outline`` | document symbols, folding ranges |
| ``edits`` | formatting, code actions |
| ``text`` | what they share: shape and signature text, snippets, the word at a point |
"""

from __future__ import annotations

from aurane.lsp.completion import completion
from aurane.lsp.diagnostics import diagnostics, front_diagnostics, to_lsp_diagnostic
from aurane.lsp.edits import code_actions, formatting
from aurane.lsp.hover import hover
from aurane.lsp.inlay_hints import inlay_hints
from aurane.lsp.navigation import definition, prepare_rename, references, rename
from aurane.lsp.outline import document_symbols, folding_ranges
from aurane.lsp.signature_help import signature_help

__all__ = [
    "code_actions",
    "completion",
    "definition",
    "diagnostics",
    "document_symbols",
    "folding_ranges",
    "formatting",
    "front_diagnostics",
    "hover",
    "inlay_hints",
    "prepare_rename",
    "references",
    "rename",
    "signature_help",
    "to_lsp_diagnostic",
]
