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
kept and blocks after it found again by offset (``_unchanged``); a block joins the next
only where the tokenizer joins their lines (an open bracket on a top-level line), in
doubling rounds; contexts that would grow with the square of the blocks give way to one
whole-program context; the caches are bounded by the text behind them.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Any

from aurane import ops, records
from aurane.diagnostics import Diagnostic, Label, has_errors, sorted_unique
from aurane.frontend import FrontEnd, analyze_program, run_front_end
from aurane.ir.graph import Graph
from aurane.records import field, record
from aurane.semantics import config
from aurane.source import Source, Span
from aurane.syntax import ast
from aurane.syntax.gc_pause import paused_gc
from aurane.syntax.parser import MAX_DIAGNOSTICS, parse_program
from aurane.syntax.tokens import MAX_FILE_BYTES, Kind, tokenize

__all__ = ["Block", "IncrementalFrontEnd", "Stats", "shift", "split_blocks"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_STARTS_BLOCK = re.compile(r"[A-Za-z_]")
_BLOCK_START = re.compile(r"^[A-Za-z_]", re.MULTILINE)
# The words that end a logical line left open by a bracket when they begin a column-0 line
# (the tokenizer's joiner; a test keeps the two sets equal): such a line always starts a
# new top-level item, so a block never needs to continue past it.
ENDS_OPEN_LINE = frozenset(
    {"model", "dataset", "experiment", "train", "train_gan", "use", "def", "return"}
)
# A line's first word decides whether it ends an open line: these many characters show it
# (the longest word and the character after it).
WORD_WINDOW = max(len(word) for word in ENDS_OPEN_LINE) + 1
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_POSITION = re.compile(r"\b(\d+):(\d+)\b")
_STAGES = ("resolve", "semantic", "type")
# Per-block contexts pay while they stay near the size of the program; past these bounds
# the program is analysed as one context (the work of one full analysis per edit).
CONTEXT_BLOCKS_PER_BLOCK = 16  # blocks in all contexts together, per block
CONTEXT_CHARS_PER_CHAR = 8  # characters in all contexts together, per character of text
_KNOWN_WORDS = frozenset(
    {
        *ops.CATALOG,
        *ops.ALIASES,
        *config.LOSS_TABLE,
        *config.OPTIMIZER_TABLE,
        *config.SCHEDULER_TABLE,
        *config.CALLBACK_TABLE,
        *config.METRICS,
        *config.TRANSFORMS,
        *config.DTYPES,
        "true",
        "false",
        "none",
        "True",
        "False",
        "None",
    }
)


# ---------------------------------------------------------------- splitting


def split_lines_keep(text: str) -> list[str]:
    """Physical lines with their endings (\\n, \\r\\n, \\r: the tokenizer's line breaks)."""
    return _LINE.findall(text)


def split_blocks(text: str) -> list[tuple[int, str]]:
    """``(first line, text)`` of each top-level block; the texts concatenate to ``text``."""
    if "\r" in text:
        return _split_blocks_slow(text)
    starts = [m.start() for m in _BLOCK_START.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    blocks: list[tuple[int, str]] = []
    line = 1
    for index, begin in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        blocks.append((line, text[begin:end]))
        line += text.count("\n", begin, end)
    return blocks


def _split_blocks_slow(text: str) -> list[tuple[int, str]]:
    lines = split_lines_keep(text)
    blocks: list[tuple[int, str]] = []
    start = 0
    for number, line in enumerate(lines):
        if number and _STARTS_BLOCK.match(line) is not None:
            blocks.append((start + 1, "".join(lines[start:number])))
            start = number
    if lines or not blocks:
        blocks.append((start + 1, "".join(lines[start:])))
    return blocks


_CODE_LINE = re.compile(r"^[ \t\f]*[^ \t\f\r\n#]", re.MULTILINE)


def _indented_start(text: str) -> bool:
    """Whether the first line with code is indented (the parser then nests differently)."""
    match = _CODE_LINE.search(text.lstrip("\ufeff"))
    return match is not None and match.group(0)[0] in " \t\f"


def _first_word(text: str) -> str:
    match = re.match(r"[^\W\d]\w*", text)  # the tokenizer's name pattern
    return match.group(0) if match else ""


def _open_at_end(text: str) -> bool:
    """Whether ``text``'s last logical line is a top-level one with a bracket still open.

    The tokenizer then joins the next column-0 line to it (unless that line begins with one
    of ``ENDS_OPEN_LINE``), so the block continues into the next one. The bracket stack is
    the joiner's: a closer pops back to its opener, a stray closer changes nothing.
    """
    lines = tokenize(text).lines
    if not lines or lines[-1].indent != 0:
        return False  # a deeper line ends where a column-0 line begins
    stack: list[str] = []
    open_count = dict.fromkeys(_OPENERS, 0)  # counts keep stray closers O(1)
    for token in lines[-1].tokens:
        if token.kind is not Kind.OP:
            continue
        if token.text in _OPENERS:
            stack.append(token.text)
            open_count[token.text] += 1
        elif token.text in _CLOSERS and open_count[_CLOSERS[token.text]]:
            while True:
                popped = stack.pop()
                open_count[popped] -= 1
                if popped == _CLOSERS[token.text]:
                    break
    return bool(stack)


class _Pieces:
    """``split_blocks`` from ``offset`` (a piece's start, on line ``line``), found lazily:
    an edit needs the pieces up to where the old blocks resume, not all of them."""

    def __init__(self, text: str, offset: int, line: int) -> None:
        self.text = text
        self.starts = [offset]  # the pieces' starts found so far; complete: then len(text)
        self.lines = [line]
        self.complete = bool(text) and offset >= len(text)
        self._found = _BLOCK_START.finditer(text, offset + 1)
        if "\r" in text:  # the line breaks \r and \r\n: split it all, the careful way
            pieces = split_blocks(text)
            self.lines = [first for first, _ in pieces]
            self.starts = list(itertools.accumulate((len(b) for _, b in pieces), initial=0))
            self.complete = True

    def _more(self) -> bool:
        if self.complete:
            return False
        match = next(self._found, None)
        end = len(self.text) if match is None else match.start()
        self.lines.append(self.lines[-1] + self.text.count("\n", self.starts[-1], end))
        self.starts.append(end)
        self.complete = match is None
        return True

    def has(self, k: int) -> bool:
        """Whether piece ``k`` exists (finding the pieces up to its end)."""
        while len(self.starts) <= k + 1 and self._more():
            pass
        return k + 1 < len(self.starts)

    def start(self, k: int) -> int:
        return self.starts[k]

    def line(self, k: int) -> int:
        return self.lines[k]

    def body(self, first: int, stop: int) -> str:
        """The text of pieces ``first`` up to, not including, ``stop`` (all found)."""
        return self.text[self.starts[first] : self.starts[stop]]

    def ends_open_line(self, k: int) -> bool:
        begin = self.starts[k]
        return _first_word(self.text[begin : begin + WORD_WINDOW]) in ENDS_OPEN_LINE


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (compared in chunks, then narrowed)."""
    limit = min(len(a), len(b))
    step = 4096
    at = 0
    while at < limit and a[at : at + step] == b[at : at + step]:
        at += step
    if at >= limit:
        return limit
    low, high = at, min(at + step, limit)
    while low < high:  # a[:low] == b[:low]; a[:high + 1] != b[:high + 1]
        middle = (low + high + 1) // 2
        if a[at:middle] == b[at:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix, at most ``limit``."""
    size = 0
    step = 4096
    while size < limit:
        take = min(step, limit - size)
        if a[len(a) - size - take : len(a) - size] != b[len(b) - size - take : len(b) - size]:
            low, high = size, size + take - 1
            while low < high:
                middle = (low + high + 1) // 2
                if a[len(a) - middle : len(a) - size] == b[len(b) - middle : len(b) - size]:
                    low = middle
                else:
                    high = middle - 1
            return low
        size += take
    return limit


# ---------------------------------------------------------------- moving spans


_FIELDS: dict[type, tuple[str, ...]] = {}


def shift(obj: Any, delta: int) -> Any:
    """``obj`` with every ``Span`` (and every ``line:column`` in messages) moved ``delta`` lines."""
    if delta == 0:
        return obj
    return remap(obj, lambda line: line + delta)


_ATOMIC = frozenset({str, int, float, bool, type(None), bytes})


def remap(obj: Any, move: Callable[[int], int]) -> Any:
    """``obj`` with every line number ``n`` (spans, ``line:column`` in messages) now ``move(n)``."""
    kind = type(obj)
    if kind in _ATOMIC:
        return obj
    if kind is Span:
        return Span(move(obj.line), obj.column, move(obj.end_line), obj.end_column)
    if kind is tuple:
        return tuple([remap(item, move) for item in obj])
    if kind is list:
        return [remap(item, move) for item in obj]
    if kind is dict:
        return {key: remap(value, move) for key, value in obj.items()}
    if kind is MappingProxyType:
        return MappingProxyType({key: remap(value, move) for key, value in obj.items()})
    if kind is Diagnostic:
        return records.replace(
            obj,
            message=_move_text(obj.message, move),
            span=remap(obj.span, move),
            labels=tuple(
                Label(remap(lab.span, move), _move_text(lab.message, move)) for lab in obj.labels
            ),
        )
    names = _FIELDS.get(kind)
    if names is None:
        if records.is_record(obj) and not isinstance(obj, type):
            names = tuple(f.name for f in records.fields(obj) if f.init)
        else:
            names = ()  # not a dataclass: kept as it is
        _FIELDS[kind] = names
    if not names:
        return obj
    return kind(**{name: remap(getattr(obj, name), move) for name in names})


def _move_text(text: str, move: Callable[[int], int]) -> str:
    if ":" not in text:
        return text
    return _POSITION.sub(lambda m: f"{move(int(m.group(1)))}:{m.group(2)}", text)


def _mover(old: list[tuple[int, int, int]]) -> Callable[[int], int]:
    """Lines of blocks that moved: ``old`` holds (old first line, line count, delta) sorted."""
    firsts = [first for first, _, _ in old]

    def move(line: int) -> int:
        index = bisect.bisect_right(firsts, line) - 1
        return line + old[max(index, 0)][2]

    return move


# ---------------------------------------------------------------- one block


@record(frozen=True)
class _Parsed:
    """A block parsed alone at line 1, with the names it defines and mentions."""

    statements: tuple[ast.Statement, ...]
    comments: tuple[ast.Comment, ...]
    diagnostics: tuple[Diagnostic, ...]
    defines: frozenset[str]
    mentions: frozenset[str]
    unknown: frozenset[str]  # mentions that are neither local nor a catalog word
    is_global: bool
    is_model: str | None
    open_end: bool  # the last line leaves a bracket open: see ``_open_at_end``


@record(frozen=True)
class Block:
    start: int  # first line (1-based)
    text: str
    parsed: _Parsed
    statements: tuple[ast.Statement, ...]  # at their place in the document
    comments: tuple[ast.Comment, ...]
    diagnostics: tuple[Diagnostic, ...]


def _parse_block(text: str) -> _Parsed:
    program, found = parse_program(text)
    statements = program.statements if program is not None else ()
    comments = program.comments if program is not None else ()
    defines: set[str] = set()
    mentions: set[str] = set()
    local: set[str] = set()
    is_global = False
    model: str | None = None
    for stmt in statements:
        match stmt:
            case ast.Constant() | ast.Dataset():
                defines.add(stmt.name)
            case ast.Model():
                defines.add(stmt.name)
                model = stmt.name
            case ast.Use() | ast.Experiment():
                is_global = True
        _names(stmt, mentions, local)
    unknown = frozenset(
        n for n in mentions - local - defines if n not in _KNOWN_WORDS and "." not in n
    )
    return _Parsed(
        statements,
        comments,
        tuple(found),
        frozenset(defines),
        frozenset(mentions),
        unknown,
        is_global,
        model,
        # an open bracket at the end is always a syntax error: error-free blocks skip this
        bool(found) and _open_at_end(text),
    )


def _names(node: Any, mentions: set[str], local: set[str]) -> None:
    """Every name ``node`` refers to (``mentions``) and binds locally (``local``)."""
    kind = type(node)
    if kind is tuple:
        for item in node:
            _names(item, mentions, local)
        return
    if kind is ast.Name:
        mentions.add(node.id)
        mentions.add(node.id.split(".", 1)[0])
        return
    if kind is ast.Call:
        mentions.add(node.func)
        mentions.add(node.func.split(".", 1)[0])
    elif kind is ast.Suffix:
        mentions.add(node.name)
    elif kind is ast.Assign:
        local.add(node.target)
        local.update(name for name, _ in node.targets)
    elif kind is ast.Field or kind is ast.ModelParam:
        local.add(node.name)
    elif kind is ast.Forward:
        local.add(node.param)
    elif kind in (ast.Number, ast.String, ast.Bool, ast.NoneLit) or kind is Span:
        return
    if records.is_record(node):
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in records.fields(node) if f.init)
        for name in names:
            value = getattr(node, name)
            if isinstance(value, tuple) or records.is_record(value):
                _names(value, mentions, local)


# ---------------------------------------------------------------- the front end


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
    _parsed: dict[str, _Parsed] = field(default_factory=dict)
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
        if _indented_start(text):
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
        pieces = _Pieces(text, offset, line)
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
        prefix = _common_prefix(old, text)
        suffix = _common_suffix(old, text, min(len(old), len(text)) - prefix)
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

    def _parse(self, body: str) -> _Parsed:
        parsed = self._parsed.get(body)
        if parsed is None:
            parsed = self._parsed[body] = _parse_block(body)
            self.stats.parsed += 1
            self.stats.parsed_chars += len(body)
            self._cached_chars += len(body)
        return parsed

    def _place(self, body: str, start: int, parsed: _Parsed) -> Block:
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
        if contexts is not None and not _affordable(blocks, contexts, len(text)):
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
        try:
            contexts: list[list[int] | None] | None = self._build_contexts(blocks)
        except _TooEntangled:
            contexts = None
        if len(self._known_contexts) >= 8:  # the last few layouts: an undo finds its own
            self._known_contexts.pop(next(iter(self._known_contexts)))
        self._known_contexts[structure] = contexts
        return contexts

    def _build_contexts(self, blocks: list[Block]) -> list[list[int] | None]:
        budget = CONTEXT_BLOCKS_PER_BLOCK * len(blocks) + 256
        spent = 0

        def spend(amount: int) -> None:
            nonlocal spent
            spent += amount
            if spent > budget:
                raise _TooEntangled

        definers: dict[str, list[int]] = {}
        for i, block in enumerate(blocks):
            for name in block.parsed.defines:
                definers.setdefault(name, []).append(i)
        names_key = hash(frozenset(definers))
        all_names = sorted(definers)
        direct: dict[int, list[int]] = {}

        def deps(i: int) -> list[int]:
            found = direct.get(i)
            if found is None:
                parsed = blocks[i].parsed
                out: set[int] = set()
                for name in parsed.mentions | parsed.defines:
                    spend(len(definers.get(name, ())))
                    out.update(definers.get(name, ()))
                for name in parsed.unknown:
                    if name not in definers:
                        for close in self._close_names(name, names_key, all_names):
                            spend(len(definers[close]))
                            out.update(definers[close])
                out.discard(i)
                found = direct[i] = sorted(out)
            return found

        memo: dict[int, set[int]] = {}

        def closure(start: int) -> set[int]:
            done = memo.get(start)
            if done is not None:
                return done
            seen: set[int] = {start}
            stack = list(deps(start))
            while stack:
                j = stack.pop()
                if j in seen:
                    continue
                seen.add(j)
                known = memo.get(j)
                if known is not None:
                    spend(len(known))
                    seen |= known
                else:
                    stack.extend(deps(j))
            memo[start] = seen
            return seen

        base: set[int] = set()
        for i, block in enumerate(blocks):
            if block.parsed.is_global:
                base |= closure(i)
        contexts: list[list[int] | None] = []
        for i, block in enumerate(blocks):
            if not block.statements:
                contexts.append(None)
                continue
            context = base | closure(i)
            spend(len(context))
            contexts.append(sorted(context))
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
            move = _mover(moves)
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


class _TooEntangled(Exception):
    """The contexts outgrew their budget (``CONTEXT_BLOCKS_PER_BLOCK``)."""


def _affordable(blocks: list[Block], contexts: list[list[int] | None], size: int) -> bool:
    """Whether analysing every context costs at most ``CONTEXT_CHARS_PER_CHAR`` times the
    text (one block used by many, each analysed with it, multiplies its size)."""
    budget = CONTEXT_CHARS_PER_CHAR * size + 65536
    spent = 0
    for context in contexts:
        if context is not None:
            spent += sum(len(blocks[j].text) for j in context)
            if spent > budget:
                return False
    return True


def _program_span(text: str) -> Span:
    """As the parser computes it: from the start to the end of the last line."""
    line_count = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    last_start = max(text.rfind("\n"), text.rfind("\r")) + 1
    if last_start == 0 and text.startswith("\ufeff"):
        last_start = 1
    return Span(1, 1, line_count, len(text) - last_start + 1)


def same_result(left: FrontEnd, right: FrontEnd) -> list[str]:
    """Differences between two front-end results (empty when they agree); for tests."""
    problems: list[str] = []

    def key(d: Diagnostic) -> tuple[Any, ...]:
        return (*d.sort_key(), d.message, d.hint, d.labels, d.stage)

    a, b = sorted(left.diagnostics, key=key), sorted(right.diagnostics, key=key)
    if a != b:
        problems.append(f"diagnostics differ:\n  {_show(a, b)}\n  {_show(b, a)}")
    if list(left.graphs) != list(right.graphs):
        problems.append(f"graph names differ: {list(left.graphs)} != {list(right.graphs)}")
    for name in left.graphs.keys() & right.graphs.keys():
        if left.graphs[name] != right.graphs[name]:
            problems.append(f"graph {name} differs")
    if left.failed_stage != right.failed_stage:
        problems.append(f"failed stage {left.failed_stage} != {right.failed_stage}")
    return problems


def _show(a: Iterable[Diagnostic], b: Iterable[Diagnostic]) -> str:
    extra = [d for d in a if d not in set(b)]
    return "; ".join(f"{d.code} {d.span} {d.message} [{d.hint}]" for d in extra[:5])
