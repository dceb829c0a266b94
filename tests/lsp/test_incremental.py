"""The incremental front end agrees with ``run_front_end`` and reuses what an edit cannot affect."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from aurane.frontend import FrontEnd, run_front_end
from aurane.incremental import IncrementalFrontEnd, same_result, shift, split_blocks
from aurane.source import Span
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
# the project's copy of the conformance corpus, and the shared one beside the checkout
# (AURANE_SHARED, as tests/conftest.py reads it)
CORPORA = [ROOT / "tests" / "corpus", CORPUS]
EXAMPLES = sorted((ROOT / "examples").rglob("*.aur"))


def _distinct(paths: list[Path]) -> list[Path]:
    """One file of each text, the first given (the project's copy before the shared one):
    the shared valid programs are that copy, file for file (tests/test_corpus.py), and
    were replayed twice where ../shared is beside the checkout."""
    seen: dict[bytes, Path] = {}
    for path in paths:
        seen.setdefault(path.read_bytes(), path)
    return sorted(seen.values())


CORPUS_FILES = _distinct([p for c in CORPORA if c.is_dir() for p in sorted(c.rglob("*.aur"))])
EDIT_CHARS = "ax1(),:= \n#-.\t"


def _check(
    engine: IncrementalFrontEnd, text: str, name: str, fulls: dict[str, FrontEnd] | None = None
) -> None:
    """The engine's answer for ``text`` equals a full run's; ``fulls`` keeps the full runs
    of a replay by text (an undo returns to the original: its full run is computed once)."""
    got = engine.update(text)
    full = fulls.get(text) if fulls is not None else None
    if full is None:
        full = run_front_end(text, name)
        if fulls is not None:
            fulls[text] = full
    problems = same_result(got, full)
    assert problems == [], f"{name}: {problems}\n--- text ---\n{text}"
    if full.failed_stage != "parse" and not engine.stats.full:
        assert got.program == full.program


def _replay(path: Path, edits: int, seed: int) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    engine = IncrementalFrontEnd(str(path))
    fulls: dict[str, FrontEnd] = {}
    _check(engine, text, str(path), fulls)
    rng = random.Random(seed)
    original = text
    for _ in range(edits):
        where = rng.randrange(len(text) + 1)
        if text and rng.random() < 0.3:
            where = min(where, len(text) - 1)
            text = text[:where] + text[where + 1 :]
        else:
            text = text[:where] + rng.choice(EDIT_CHARS) + text[where:]
        _check(engine, text, str(path), fulls)
        if rng.random() < 0.3:
            text = original  # an undo: the caches must give the first answer back
            _check(engine, text, str(path), fulls)


# Known gap: an error inside a parameterised block is reported by the full front end when it
# lowers a call (failed stage "type", labelled with the call), but the incremental engine
# analyses the block without its callers (stage "semantic", no call label). The seed's edit
# in efficientnet.aur lands in such a block; same diagnostic, same span, same message.
KNOWN_CALL_LABEL_GAP = {"efficientnet.aur"}


# The costliest examples (6 s of the 11 s), left to ``-m slow``: the same edits replayed
# on the same kinds of statements as the smaller examples of their families (efficientnet_b0
# stays as efficientnet's rolled blocks' sibling, convnext and vgg as rolled families, unet
# as unet2d's, vit_b_16 and clip as maxvit_t's attention).
EDITED_SLOW = {"maxvit_t.aur", "densenet.aur", "unet2d.aur", "efficientnet_b0.aur"}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            marks=pytest.mark.xfail(
                reason="errors in a parameterised block lack the call label incrementally",
                strict=True,
            ),
        )
        if p.name in KNOWN_CALL_LABEL_GAP
        else pytest.param(p, marks=pytest.mark.slow if p.name in EDITED_SLOW else ())
        for p in EXAMPLES
    ],
    ids=lambda p: p.name,
)
def test_examples_agree_after_random_edits(path: Path) -> None:
    _replay(path, edits=12, seed=1)


@pytest.mark.skipif(not CORPUS_FILES, reason="no corpus (tests/corpus, ../shared/corpus)")
def test_corpus_agrees_after_random_edits() -> None:
    for index, path in enumerate(CORPUS_FILES):
        _replay(path, edits=6, seed=index)


def _program(models: int) -> str:
    parts = ["hidden = 8\n", "\n"]
    parts += [
        "model Unit:\n    def forward(x):\n        h = dense(x, hidden).relu\n"
        "        return add(x, h)\n\n"
    ]
    for i in range(models):
        parts.append(
            f"model Net{i}:\n    input_shape = (hidden,)\n    def forward(x):\n"
            f"        x -> dense(hidden).relu\n          -> Unit()\n          -> dense({i + 2})\n\n"
        )
    return "".join(parts)


def test_an_edit_reanalyses_only_what_it_can_affect() -> None:
    text = _program(20)
    engine = IncrementalFrontEnd()
    _check(engine, text, "<input>")
    assert engine.stats.analysed == 22  # every block with statements, once
    edited = text.replace("dense(7)", "dense(70)")
    _check(engine, edited, "<input>")
    assert engine.stats.parsed == 1 and engine.stats.analysed == 1
    # a block used by every model: they all depend on it
    edited = edited.replace("h = dense(x, hidden).relu", "h = dense(x, hidden).gelu")
    _check(engine, edited, "<input>")
    assert engine.stats.analysed == 21
    # a line inserted at the top moves everything: reused, shifted
    _check(engine, "\n" + edited, "<input>")
    assert engine.stats.analysed <= 1 and engine.stats.reused >= 20
    # a syntax error stops at parsing, as the full front end does
    _check(engine, edited.replace("dense(70)", "dense(70"), "<input>")
    assert engine.stats.analysed == 0


def test_cached_results_stay_within_max_chars() -> None:
    """docs/limits.md, "cached analysis results": past ``max_chars`` of source behind the
    cached results, the caches keep only what the current document uses, and every answer
    still equals a full analysis."""
    engine = IncrementalFrontEnd(max_chars=3_000)
    peak = 0
    for step in range(40):  # each edit leaves one more block's results behind
        text = _program(6).replace("dense(2)", f"dense({step + 100})")
        _check(engine, text, "<input>")
        peak = max(peak, engine.cached_chars)
        # trimmed before the update that would pass the bound: at most the bound plus what
        # one update adds (its parses and contexts, each a few times its text)
        assert engine.cached_chars <= engine.max_chars + 8 * len(text), (step, engine.cached_chars)
    assert peak > engine.max_chars // 2  # the bound was reached, so the trimming ran
    unbounded = IncrementalFrontEnd()
    for step in range(40):
        unbounded.update(_program(6).replace("dense(2)", f"dense({step + 100})"))
    assert unbounded.cached_chars > engine.max_chars  # without the bound the caches grow


def test_blocks_and_shift() -> None:
    text = "# c\nx = 1\n\nmodel A:\n    def forward(x):\n        x -> dense(2)\ny = 2\n"
    blocks = split_blocks(text)
    assert [start for start, _ in blocks] == [1, 2, 4, 7]
    assert "".join(body for _, body in blocks) == text
    assert split_blocks(text.replace("\n", "\r\n")) == [
        (s, b.replace("\n", "\r\n")) for s, b in blocks
    ]
    assert shift((Span(1, 2, 3, 4), [Span(2, 1, 2, 5)]), 2) == (
        Span(3, 2, 5, 4),
        [Span(4, 1, 4, 5)],
    )


def test_latency_bench_program_is_valid() -> None:
    """``bench/editor_latency.py``'s generated program stays valid as the checks grow."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "editor_latency", ROOT / "bench/editor_latency.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    text, operations = bench.generate(40)  # asserts the program has no errors
    assert operations >= 40
    engine = IncrementalFrontEnd("bench.aur")
    _check(engine, text, "bench.aur")
    edited = text.replace("classes = 10", "classes = 1O", 1)  # one keystroke
    _check(engine, edited, "bench.aur")
    # at the benchmark's size the contexts stay per block (a budget too tight made every
    # keystroke a whole-program analysis)
    text, _ = bench.generate(10000)
    engine = IncrementalFrontEnd("bench.aur")
    engine.update(text)
    assert not engine.stats.whole and engine.stats.analysed == engine.stats.blocks - 1


# ---------------------------------------------------------------- issue 21 item 4: linear work


def _constants(count: int) -> str:
    return "".join(f"c{i}=1\n" for i in range(count))


@pytest.mark.parametrize("count", [1000, 2000])
def test_issue21_4_one_space_indent_edit_parses_only_its_block(count: int) -> None:
    """N lines of ``c{i}=1``, one space inserted at line 2: the work does not grow with N
    (it re-parsed the rest of the file once per block: 6.6 s at 1,000 lines, 27 s at 2,000)."""
    text = _constants(count)
    engine = IncrementalFrontEnd()
    _check(engine, text, "<input>")
    cached = engine.cached_chars
    lines = text.splitlines(keepends=True)
    lines[1] = " " + lines[1]
    edited = "".join(lines)
    _check(engine, edited, "<input>")
    assert engine.stats.parsed == 1 and engine.stats.parsed_chars == len("c0=1\n c1=1\n")
    assert engine.cached_chars - cached <= 4 * len("c0=1\n c1=1\n")
    _check(engine, text, "<input>")  # the undo: everything cached
    assert engine.stats.parsed == 0 and engine.stats.analysed == 0


@pytest.mark.parametrize("count", [1000, 4000])
@pytest.mark.parametrize("where", ["top", "middle"])
def test_issue21_4_open_bracket_edit_parses_linearly(count: int, where: str) -> None:
    """A bracket left open joins the following column-0 lines into one statement: the
    blocks are parsed together in doubling rounds, linear in the text, not once per line."""
    text = _constants(count)
    engine = IncrementalFrontEnd()
    _check(engine, text, "<input>")
    cut = 0 if where == "top" else text.index(f"c{count // 2}=")
    edited = text[:cut] + "x = f(1,\n" + text[cut:]
    _check(engine, edited, "<input>")
    assert engine.stats.parsed_chars <= 3 * len(edited)
    closed = text[:cut] + "x = f(1,\n)\n" + text[cut:]
    _check(engine, closed, "<input>")
    assert engine.stats.parsed_chars <= 3 * len(closed)


def test_a_chain_of_constants_is_analysed_as_one_context() -> None:
    """Each constant uses the one before: per-block contexts would hold N**2 / 2 blocks."""
    count = 2000
    text = "c0 = 1\n" + "".join(f"c{i} = c{i - 1} + 1\n" for i in range(1, count))
    engine = IncrementalFrontEnd()
    _check(engine, text, "<input>")
    assert engine.stats.whole and engine.stats.analysed == 1
    _check(engine, text.replace("c7 = c6 + 1", "c7 = c6 + 2"), "<input>")
    assert engine.stats.whole and engine.stats.analysed == 1 and engine.stats.parsed == 1


def test_ends_open_line_is_the_tokenizers_set() -> None:
    from aurane.incremental import ENDS_OPEN_LINE
    from aurane.syntax import tokens

    assert ENDS_OPEN_LINE == tokens._STATEMENT_WORDS


FRAGMENTS = [
    "x = (",
    "x = f(1,",
    "a)",
    "b = 1",
    "b = [1,",
    "  2]",
    ")",
    "]",
    "def",
    "return x",
    "use torch",
    "model M:",
    "model é:",
    "modelé = (",
    "    input_shape = (4,)",
    "    def forward(x):",
    "        x -> dense(2",
    "        x -> dense(2)",
    "          -> dense(3)",
    "-> dense(3)",
    "    y = (",
    "\tz = 1",
    "# comment (",
    "",
]


def test_random_bracket_layouts_agree_with_a_full_parse() -> None:
    rng = random.Random(4)
    engine = IncrementalFrontEnd()
    for _ in range(300):
        text = "\n".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 25))) + "\n"
        _check(engine, text, "<input>")


@pytest.mark.skipif(not CORPUS_FILES, reason="no corpus (tests/corpus, ../shared/corpus)")
def test_every_line_prefix_of_the_corpus_agrees() -> None:
    """K-LSP: every document state while a corpus program is typed line by line."""
    for path in CORPUS_FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines(keepends=True)
        engine = IncrementalFrontEnd(str(path))
        for end in range(len(lines) + 1):
            _check(engine, "".join(lines[:end]), str(path))


def test_editing_the_word_after_an_open_bracket_rejoins_the_lines() -> None:
    """``x = (`` before ``model M:``: the statement word ends the open line; edit the word
    into a name and the two lines join (the block before the edit must not be kept)."""
    from aurane.incremental import ENDS_OPEN_LINE

    for word in sorted(ENDS_OPEN_LINE):
        text = f"a = 1\nx = (\n{word} M:\n    b = 2\nc = 3\n"
        engine = IncrementalFrontEnd()
        _check(engine, text, "<input>")
        at = text.index(word) + len(word)
        _check(engine, text[:at] + "x" + text[at:], "<input>")
        _check(engine, text, "<input>")
        _check(engine, text[: at - 1] + text[at:], "<input>")
