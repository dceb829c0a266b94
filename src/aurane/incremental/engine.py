"""The incremental front end itself: caches per document, ``update(text)`` to an answer."""

from __future__ import annotations

import bisect
import difflib
import itertools
from collections.abc import Callable
from typing import Any

from aurane.diagnostics import Diagnostic, has_errors, sorted_unique
from aurane.frontend import FrontEnd, analyze_program, run_front_end
from aurane.incremental.blocks import Block, Parsed, parse_block
from aurane.incremental.contexts import affordable, build_contexts
from aurane.incremental.pieces import (
    WORD_WINDOW,
    Pieces,
    common_prefix,
    common_suffix,
    indented_start,
)
from aurane.incremental.spans import mover, remap, shift
from aurane.ir.graph import Graph
from aurane.records import field, record
from aurane.source import Source, Span
from aurane.syntax import ast
from aurane.syntax.gc_pause import paused_gc
from aurane.syntax.parser import MAX_DIAGNOSTICS
from aurane.syntax.tokens import MAX_FILE_BYTES

_STAGES = ("resolve", "semantic", "type")


@record
class Stats:
    """What the last update did."""

    blocks: int = 0
    parsed: int = 0  # blocks parsed (new texts)
    parsed_chars: int = 0  # their characters: the parsing work of this update
    analysed: int = 0  # contributions computed
    reused: int = 0  # contributions taken from the cache (shifted or not)
    full: bool = False  # fell back to a whole-document run
    whole: bool = False  # analysed as one context (too entangled for per-block contexts)
    recent: bool = False  # the answer to a recent text, given back as it was


@record
class _Contribution:
    starts: list[int]  # the context blocks' first lines when computed
    diagnostics: tuple[Diagnostic, ...]
    graphs: dict[str, Graph]  # the block's model's graph, or every graph (whole program)
    failed_stage: str | None = None


@record
class IncrementalFrontEnd:
    """Holds the caches of one document; ``update(text)`` returns a ``FrontEnd``."""

    filename: str = "<input>"
    max_entries: int = 20000  # per cache
    max_chars: int = 4 * MAX_FILE_BYTES  # the texts behind all cached results together
    stats: Stats = field(default_factory=Stats)
    _parsed: dict[str, Parsed] = field(default_factory=dict)
    _placed: dict[tuple[str, int], Block] = field(default_factory=dict)
    _contributions: dict[tuple[Any, ...], _Contribution] = field(default_factory=dict)
    _close: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    _known_contexts: dict[tuple[Any, ...], list[list[int] | None] | None] = field(
        default_factory=dict
    )
    _cached_chars: int = 0
    _used: list[tuple[Any, ...]] = field(default_factory=list)  # the last update's results
    _text: str = ""  # the text of ``blocks``
    _offsets: list[int] = field(default_factory=list)  # where each of ``blocks`` begins
    # the last few answers by text: an undo gets its answer back at once (the same objects:
    # callers treat a FrontEnd as read-only)
    _recent: dict[str, tuple[FrontEnd, list[Block]]] = field(default_factory=dict)

    @property
    def cached_chars(self) -> int:
        """The texts behind the cached results (bounded by ``max_chars``, then trimmed)."""
        return self._cached_chars

    def update(self, text: str) -> FrontEnd:
        recent = self._recent.pop(text, None)
        if recent is not None:
            self._recent[text] = recent  # now the newest
            front, blocks = recent
            self.stats = Stats(blocks=len(blocks), recent=True, full=not blocks)
            self._remember(text, blocks)
            return front
        with paused_gc():
            front = self._update(text)
        if len(self._recent) >= 4:
            self._recent.pop(next(iter(self._recent)))
        self._recent[text] = (front, self.blocks)
        return front

    def _remember(self, text: str, blocks: list[Block]) -> None:
        self.blocks, self._text = blocks, text
        self._offsets = list(itertools.accumulate((len(b.text) for b in blocks), initial=0))

    def _update(self, text: str) -> FrontEnd:
        self.stats = Stats()
        if len(text) * 4 > MAX_FILE_BYTES and len(text.encode("utf-8", "surrogatepass")) > (
            MAX_FILE_BYTES
        ):
            return self._full(text)
        self._trim()
        self._used = []
        if indented_start(text):
            return self._full(text)  # the first code line sets the top level's indentation
        blocks = self._blocks(text)
        self._remember(text, blocks)
        self.stats.blocks = len(blocks)
        result = FrontEnd(Source(text, self.filename))
        statements = tuple(s for b in blocks for s in b.statements)
        comments = tuple(c for b in blocks for c in b.comments)
        result.program = ast.AuraneProgram(statements, comments, self.filename, _program_span(text))
        parse_errors = [d for b in blocks for d in b.diagnostics]
        if parse_errors:
            if len(parse_errors) > MAX_DIAGNOSTICS:
                return self._full(text)
            result.diagnostics = sorted_unique(parse_errors)
            if has_errors(parse_errors):
                result.failed_stage = "parse"
                return result
        self._analyse(blocks, result, text)
        return result

    def _full(self, text: str) -> FrontEnd:
        self.stats.full = True
        self._remember(text, [])
        return run_front_end(text, self.filename)

    def _trim(self) -> None:
        """Past a cache's bounds keep only what the last update used (an undo still finds
        its results; a merge of many blocks, re-parsed as the user types, does not pile up)."""
        if len(self._close) > self.max_entries:
            self._close.clear()
        caches = (self._parsed, self._placed, self._contributions)
        if self._cached_chars <= self.max_chars and all(
            len(cache) <= self.max_entries for cache in caches
        ):
            return
        self._parsed = {block.text: block.parsed for block in self.blocks}
        self._placed = {(block.text, block.start): block for block in self.blocks}
        self._contributions = {
            key: self._contributions[key] for key in self._used if key in self._contributions
        }
        self._cached_chars = 3 * sum(len(block.text) for block in self.blocks)

    # ---- blocks

    def _blocks(self, text: str) -> list[Block]:
        blocks, offset, line, reuse = self._unchanged(text)
        pieces = Pieces(text, offset, line)
        k = 0
        while pieces.has(k):
            if reuse is not None and (rest := reuse(pieces.start(k))) is not None:
                blocks += rest
                break
            start, body = pieces.line(k), pieces.body(k, k + 1)
            parsed = self._parse(body)
            end, step = k + 1, 1
            # A bracket left open on a top-level line continues on the next column-0 line
            # (the tokenizer's rule): parse the pieces together. Each round takes twice as
            # many pieces as the last, so a long run costs a linear number of characters;
            # a round stops before a piece beginning with ``ENDS_OPEN_LINE``, which always
            # starts a new item (a block may then hold several whole items: still exact).
            while parsed.open_end and pieces.has(end) and not pieces.ends_open_line(end):
                stop = end + 1
                while stop < end + step and pieces.has(stop) and not pieces.ends_open_line(stop):
                    stop += 1
                body = pieces.body(k, stop)
                end, step = stop, step * 2
                parsed = self._parse(body)
            blocks.append(self._place(body, start, parsed))
            k = end
        return blocks

    def _unchanged(
        self, text: str
    ) -> tuple[list[Block], int, int, Callable[[int], list[Block] | None] | None]:
        """The last update's blocks an edit cannot have changed: those before it (kept as
        they are), and a lookup for those after it (moved by the lines it added). Returns the
        kept blocks, the offset and line where the rest begins, and the lookup: from an
        offset in ``text`` where a block begins to the blocks from there to the end."""
        old, previous = self._text, self.blocks
        if not previous or "\r" in text or "\r" in old:
            return [], 0, 1, None
        prefix = common_prefix(old, text)
        suffix = common_suffix(old, text, min(len(old), len(text)) - prefix)
        offsets = self._offsets
        # the boundary after a block stands when its text and, after an open bracket, the
        # next line's first word (WORD_WINDOW) are untouched
        count = bisect.bisect_left(offsets, prefix) - 1  # blocks ending before the edit
        while (
            count > 0
            and previous[count - 1].parsed.open_end
            and offsets[count] + WORD_WINDOW >= prefix
        ):
            count -= 1
        count = max(count, 0)
        kept = previous[:count]
        tail_start = len(old) - suffix  # old[tail_start:] == text[-suffix:]
        moved = len(text) - len(old)
        lines = text.count("\n", prefix, len(text) - suffix) - old.count("\n", prefix, tail_start)

        def reuse(position: int) -> list[Block] | None:
            at = position - moved
            if at <= tail_start:  # the line break before the block must be untouched too
                return None
            index = bisect.bisect_left(offsets, at)
            if index >= len(previous) or offsets[index] != at:
                return None
            rest = previous[index:]
            if lines:
                rest = [self._place(b.text, b.start + lines, b.parsed) for b in rest]
            return rest

        return kept, offsets[count], previous[count].start, reuse

    def _parse(self, body: str) -> Parsed:
        parsed = self._parsed.get(body)
        if parsed is None:
            parsed = self._parsed[body] = parse_block(body)
            self.stats.parsed += 1
            self.stats.parsed_chars += len(body)
            self._cached_chars += len(body)
        return parsed

    def _place(self, body: str, start: int, parsed: Parsed) -> Block:
        key = (body, start)
        block = self._placed.get(key)
        if block is None:
            delta = start - 1
            block = Block(
                start,
                body,
                parsed,
                shift(parsed.statements, delta),
                shift(parsed.comments, delta),
                shift(parsed.diagnostics, delta),
            )
            self._placed[key] = block
            self._cached_chars += len(body)
        return block

    # ---- analysis

    def _analyse(self, blocks: list[Block], result: FrontEnd, text: str) -> None:
        contexts = self._contexts(blocks)
        if contexts is not None and not affordable(blocks, contexts, len(text)):
            contexts = None
        diagnostics: list[Diagnostic] = [d for b in blocks for d in b.diagnostics]
        graphs: dict[str, Graph] = {}
        failed: set[str] = set()
        if contexts is None:
            # so entangled that per-block contexts would cost more than the whole program
            # many times over (a chain of constants, each using the one before): one
            # contribution for everything, the work of one full analysis
            self.stats.whole = True
            everything = [i for i, block in enumerate(blocks) if block.statements]
            parts = [self._contribution(blocks, None, everything)] if everything else []
        else:
            parts = [
                self._contribution(blocks, i, context)
                for i, context in enumerate(contexts)
                if context is not None
            ]
        for contribution in parts:
            if contribution.failed_stage is not None:
                failed.add(contribution.failed_stage)
            diagnostics.extend(contribution.diagnostics)
            for name, graph in contribution.graphs.items():
                graphs.setdefault(name, graph)
        result.diagnostics = sorted_unique(diagnostics)
        result.graphs = graphs
        result.failed_stage = next((stage for stage in _STAGES if stage in failed), None)

    def _contexts(self, blocks: list[Block]) -> list[list[int] | None] | None:
        """Each block's context (sorted indices; None for a block without statements), or
        None when the contexts together hold more than ``CONTEXT_BLOCKS_PER_BLOCK`` blocks per
        block (then they are not worth building: they grow with the square of the blocks)."""
        structure = tuple(
            (p.defines, p.mentions, p.unknown, p.is_global, bool(p.statements))
            for p in (b.parsed for b in blocks)
        )
        if structure in self._known_contexts:
            return self._known_contexts[structure]
        contexts = build_contexts(blocks, self._close_names)
        if len(self._known_contexts) >= 8:  # the last few layouts: an undo finds its own
            self._known_contexts.pop(next(iter(self._known_contexts)))
        self._known_contexts[structure] = contexts
        return contexts

    def _close_names(self, name: str, names_key: int, names: list[str]) -> tuple[str, ...]:
        key = (name, names_key)
        found = self._close.get(key)
        if found is None:
            found = self._close[key] = tuple(
                difflib.get_close_matches(name, names, n=len(names) or 1, cutoff=0.6)
            )
        return found

    def _contribution(
        self, blocks: list[Block], own: int | None, context: list[int]
    ) -> _Contribution:
        """Block ``own``'s contribution (``None``: the whole program's), cached by its
        context's texts (positions aside)."""
        key = (-1 if own is None else context.index(own), *[blocks[j].text for j in context])
        self._used.append(key)
        starts = [blocks[j].start for j in context]
        cached = self._contributions.get(key)
        if cached is not None:
            self.stats.reused += 1
            if cached.starts == starts:
                return cached
            moves = sorted(
                (old, blocks[j].text.count("\n") + 1, new - old)
                for old, new, j in zip(cached.starts, starts, context, strict=True)
            )
            move = mover(moves)
            return _Contribution(
                starts,
                remap(cached.diagnostics, move),
                remap(cached.graphs, move),
                cached.failed_stage,
            )
        self.stats.analysed += 1
        program = ast.AuraneProgram(
            tuple(s for j in context for s in blocks[j].statements),
            (),
            self.filename,
            Span(1, 1, 1, 1),
        )
        sub = analyze_program(FrontEnd(Source("", self.filename)), program)
        if own is None:
            graphs = dict(sub.graphs)
        else:
            model = blocks[own].parsed.is_model
            graph = sub.graphs.get(model) if model is not None else None
            graphs = {} if model is None or graph is None else {model: graph}
        contribution = _Contribution(starts, tuple(sub.diagnostics), graphs, sub.failed_stage)
        self._contributions[key] = contribution
        self._cached_chars += sum(len(blocks[j].text) for j in context if own in (None, j))
        return contribution


def _program_span(text: str) -> Span:
    """As the parser computes it: from the start to the end of the last line."""
    line_count = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    last_start = max(text.rfind("\n"), text.rfind("\r")) + 1
    if last_start == 0 and text.startswith("\ufeff"):
        last_start = 1
    return Span(1, 1, line_count, len(text) - last_start + 1)
