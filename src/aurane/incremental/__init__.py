"""The incremental front end: re-analysis after an edit reuses what the edit cannot affect.

A document is cut into top-level blocks (a block starts at a column-0 line that begins a
statement; comments and blank lines stay with the block above). Each block is parsed on its
own, once per distinct text, and its AST is moved to its place. Every block then gets a
*context*: itself, the blocks defining the names it mentions (transitively), definitions of
the same name, definitions whose names are close to a name it cannot resolve (they feed
"did you mean" hints) and the global blocks (``use``, ``experiment``). The block's
*contribution* is what the passes after parsing (``frontend.analyze_program``) report on
that context alone: diagnostics (possibly inside the blocks it calls, whose errors depend
on the caller's input) and, for a model, its graph. The full answer is the union of all
contributions, which is what ``run_front_end`` reports for the whole program (asserted by
tests on the corpus and examples, and by ``bench/editor_latency.py`` after every edit).

Contributions are cached by the context's texts, so an edit re-analyses only the edited
block and the blocks whose context contains it; a block whose context only moved (a line
inserted above) reuses its result with each span moved as the block it lies in moved.

When any block has a syntax error the program stops at parsing, as ``run_front_end`` does:
the answer is the blocks' parse diagnostics, each block parsed once per text.

Work per edit stays linear in what the edit touches (issue 21): blocks before the edit are
kept and blocks after it found again by offset; a block joins the next only where the
tokenizer joins their lines (an open bracket on a top-level line), in doubling rounds;
contexts that would grow with the square of the blocks give way to one whole-program
context; the caches are bounded by the text behind them.

Modules: ``pieces`` (cutting the text, where a block ends), ``blocks`` (one block parsed,
its names), ``spans`` (moving cached results), ``contexts`` (what each block's analysis
needs), ``engine`` (``IncrementalFrontEnd``: the caches and ``update``), ``compare``
(``same_result``, for tests and the benchmark).
"""

from __future__ import annotations

from aurane.incremental.blocks import Block
from aurane.incremental.compare import same_result
from aurane.incremental.contexts import CONTEXT_BLOCKS_PER_BLOCK, CONTEXT_CHARS_PER_CHAR
from aurane.incremental.engine import IncrementalFrontEnd, Stats
from aurane.incremental.pieces import ENDS_OPEN_LINE, WORD_WINDOW, split_blocks
from aurane.incremental.spans import remap, shift

__all__ = [
    "CONTEXT_BLOCKS_PER_BLOCK",
    "CONTEXT_CHARS_PER_CHAR",
    "ENDS_OPEN_LINE",
    "WORD_WINDOW",
    "Block",
    "IncrementalFrontEnd",
    "Stats",
    "remap",
    "same_result",
    "shift",
    "split_blocks",
]
