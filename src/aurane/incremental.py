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
"""

from __future__ import annotations

import bisect
import difflib
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
from aurane.syntax.tokens import MAX_FILE_BYTES

__all__ = ["Block", "IncrementalFrontEnd", "Stats", "shift", "split_blocks"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_STARTS_BLOCK = re.compile(r"[A-Za-z_]")
_BLOCK_START = re.compile(r"^[A-Za-z_]", re.MULTILINE)
_STATEMENT_WORDS = frozenset({"model", "dataset", "experiment", "train", "train_gan", "use"})
_POSITION = re.compile(r"\b(\d+):(\d+)\b")
_STAGES = ("resolve", "semantic", "type")
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
    match = re.match(r"[A-Za-z_][A-Za-z_0-9]*", text)
    return match.group(0) if match else ""


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
    analysed: int = 0  # contributions computed
    reused: int = 0  # contributions taken from the cache (shifted or not)
    full: bool = False  # fell back to a whole-document run


@record
class _Contribution:
    starts: list[int]  # the context blocks' first lines when computed
    diagnostics: tuple[Diagnostic, ...]
    graph: Graph | None
    failed_stage: str | None = None


@record
class IncrementalFrontEnd:
    """Holds the caches of one document; ``update(text)`` returns a ``FrontEnd``."""

    filename: str = "<input>"
    max_entries: int = 20000
    stats: Stats = field(default_factory=Stats)
    _parsed: dict[str, _Parsed] = field(default_factory=dict)
    _placed: dict[tuple[str, int], Block] = field(default_factory=dict)
    _contributions: dict[tuple[Any, ...], _Contribution] = field(default_factory=dict)
    _close: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    _known_contexts: dict[tuple[Any, ...], list[list[int] | None]] = field(default_factory=dict)

    def update(self, text: str) -> FrontEnd:
        with paused_gc():
            return self._update(text)

    def _update(self, text: str) -> FrontEnd:
        self.stats = Stats()
        if len(text) * 4 > MAX_FILE_BYTES and len(text.encode("utf-8", "surrogatepass")) > (
            MAX_FILE_BYTES
        ):
            return self._full(text)
        self._trim()
        if _indented_start(text):
            return self._full(text)  # the first code line sets the top level's indentation
        blocks = self._blocks(text)
        self.blocks = blocks
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
        self._analyse(blocks, result)
        return result

    def _full(self, text: str) -> FrontEnd:
        self.stats.full = True
        self.blocks = []
        return run_front_end(text, self.filename)

    def _trim(self) -> None:
        for cache in (self._parsed, self._placed, self._contributions, self._close):
            if len(cache) > self.max_entries:
                cache.clear()

    # ---- blocks

    def _blocks(self, text: str) -> list[Block]:
        pieces = split_blocks(text)
        blocks: list[Block] = []
        index = 0
        while index < len(pieces):
            start, body = pieces[index]
            parsed = self._parse(body)
            # a block with a syntax error (an unclosed bracket, say) may continue on the
            # next column-0 line when that does not begin a statement: parse them together
            while (
                parsed.diagnostics
                and index + 1 < len(pieces)
                and _first_word(pieces[index + 1][1]) not in _STATEMENT_WORDS
            ):
                index += 1
                body += pieces[index][1]
                parsed = self._parse(body)
            blocks.append(self._place(body, start, parsed))
            index += 1
        return blocks

    def _parse(self, body: str) -> _Parsed:
        parsed = self._parsed.get(body)
        if parsed is None:
            parsed = self._parsed[body] = _parse_block(body)
            self.stats.parsed += 1
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
        return block

    # ---- analysis

    def _analyse(self, blocks: list[Block], result: FrontEnd) -> None:
        contexts = self._contexts(blocks)
        diagnostics: list[Diagnostic] = [d for b in blocks for d in b.diagnostics]
        graphs: dict[str, Graph] = {}
        failed: set[str] = set()
        for i, block in enumerate(blocks):
            context = contexts[i]
            if context is None:
                continue
            contribution = self._contribution(blocks, i, context)
            if contribution.failed_stage is not None:
                failed.add(contribution.failed_stage)
            diagnostics.extend(contribution.diagnostics)
            if contribution.graph is not None and block.parsed.is_model is not None:
                graphs.setdefault(block.parsed.is_model, contribution.graph)
        result.diagnostics = sorted_unique(diagnostics)
        result.graphs = graphs
        result.failed_stage = next((stage for stage in _STAGES if stage in failed), None)

    def _contexts(self, blocks: list[Block]) -> list[list[int] | None]:
        """Each block's context (sorted indices), or None for a block without statements."""
        structure = tuple(
            (p.defines, p.mentions, p.unknown, p.is_global, bool(p.statements))
            for p in (b.parsed for b in blocks)
        )
        known = self._known_contexts.get(structure)
        if known is not None:
            return known
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
                    out.update(definers.get(name, ()))
                for name in parsed.unknown:
                    if name not in definers:
                        for close in self._close_names(name, names_key, all_names):
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
                    seen |= known
                else:
                    stack.extend(deps(j))
            memo[start] = seen
            return seen

        base: set[int] = set()
        for i, block in enumerate(blocks):
            if block.parsed.is_global:
                base |= closure(i)
        contexts: list[list[int] | None] = [
            sorted(base | closure(i)) if block.statements else None
            for i, block in enumerate(blocks)
        ]
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

    def _contribution(self, blocks: list[Block], i: int, context: list[int]) -> _Contribution:
        """Block ``i``'s contribution, cached by its context's texts (positions aside)."""
        own = blocks[i]
        key = (context.index(i), *[blocks[j].text for j in context])
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
                remap(cached.graph, move),
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
        graph = sub.graphs.get(own.parsed.is_model) if own.parsed.is_model else None
        found = tuple(sub.diagnostics)
        contribution = _Contribution(starts, found, graph, sub.failed_stage)
        self._contributions[key] = contribution
        return contribution


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
