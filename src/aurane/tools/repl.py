"""Line input for ``aurane interactive``: when typed lines form an entry, and line editing.

An entry is one top-level statement. A first line whose last token is ':' (a header; a
comment may follow it) opens a block that continues until an empty line; otherwise an open
bracket continues the entry until it closes. Aurane has neither backslash continuation nor
multi-line strings, so nothing else spans lines; a line the tokenizer refuses (an unclosed
string, say) ends the entry at once so that its error is shown, not waited on.

What an entry does to the program is ``aurane.cli.interactive_cmd.Session``'s job.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from aurane.syntax.tokens import Kind, tokenize


def is_entry_complete(lines: Sequence[str]) -> bool:
    """Whether ``lines`` (typed since the last entry, first one non-empty) form a whole entry."""
    if _opens_block(lines[0]):
        return len(lines) > 1 and not lines[-1].strip()
    return _depth("\n".join(lines)) <= 0


def enable_line_editing() -> None:
    """Line editing and in-session history for ``input()``, where readline exists."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it is what enables them)


def _opens_block(line: str) -> bool:
    tokens = [t for logical in tokenize(line).lines for t in logical.tokens]
    return bool(tokens) and tokens[-1].is_op(":")


def _depth(text: str) -> int:
    """Brackets opened minus brackets closed (strings and comments do not count)."""
    depth = 0
    for logical in tokenize(text).lines:
        for token in logical.tokens:
            if token.kind is Kind.OP and token.text in "([{":
                depth += 1
            elif token.kind is Kind.OP and token.text in ")]}":
                depth -= 1
    return depth
