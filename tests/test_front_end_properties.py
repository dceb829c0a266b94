"""K-ERR and K-LIM through the whole front end (parse, resolve, check, lower).

Mutated corpus and example programs must give diagnostics, never an exception, and every
diagnostic's span must lie inside the input. ``AURANE_FUZZ_EXAMPLES=N`` scales the campaign.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aurane.frontend import run_front_end
from aurane.ir.verify import verify
from aurane.source import split_lines
from tests.conftest import EXAMPLES, corpus_paths
from tests.helpers import calls_made

EXAMPLES_PER_TEST = int(os.environ.get("AURANE_FUZZ_EXAMPLES", "700"))
SEEDS = [p.read_text() for p in [*corpus_paths(), *sorted(EXAMPLES.glob("*.aur"))]] or [
    (EXAMPLES / "quickstart.aur").read_text()
]
INSERTS = [
    "\ufeff",
    "\x00",
    "\r",
    "\u2028",
    "\ud800",
    "\t",
    "(",
    ")",
    "->",
    ":",
    "\n",
    "'",
    '"',
    "[",
    "]",
    ".",
    ",",
    "=",
    "#",
    "\\",
    " ",
    "    ",
    "x",
    "1e309",
    "-",
    "**",
    "/ 0",
]


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Turns a hang into a failure instead of a stuck suite. Not a speed limit: a call takes
    milliseconds, the guard minutes; growth is bounded as work by test_front_end_work_is_linear."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"front end still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check_input(text: str) -> None:
    with hang_guard(300):
        result = run_front_end(text, "fuzz.aur")
    lines = len(split_lines(text))
    for diagnostic in result.diagnostics:
        span = diagnostic.span
        assert span is not None, diagnostic
        assert 1 <= span.line <= lines + 1, (diagnostic, lines)
        assert span.column >= 1 and (span.end_line, span.end_column) >= (span.line, span.column)
    if result.ok:
        for graph in result.graphs.values():
            verify(graph)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "delete", "duplicate", "insert", "truncate", "swap"]))
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        if kind == "flip":
            text = text[:at] + chr(ord(text[at]) ^ (1 << draw(st.integers(0, 6)))) + text[at + 1 :]
        elif kind == "delete":
            width = draw(st.integers(1, 8))
            text = text[:at] + text[at + width :]
        elif kind == "duplicate":
            width = draw(st.integers(1, 12))
            text = text[:at] + text[at : at + width] * 2 + text[at + width :]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(INSERTS)) + text[at:]
        elif kind == "truncate":
            text = text[:at]
        else:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


FUZZ = settings(
    max_examples=EXAMPLES_PER_TEST,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


@FUZZ
@given(mutated())
def test_mutated_programs_give_diagnostics_never_exceptions(text: str) -> None:
    check_input(text)


@pytest.mark.parametrize("index", range(len(SEEDS)))
def test_every_truncation_of_a_seed(index: int) -> None:
    text = SEEDS[index]
    step = max(1, len(text) // 150)
    for cut in range(0, len(text), step):
        check_input(text[:cut])


NESTING = {
    "parentheses": lambda n: "n = " + "(" * n + "1" + ")" * n + "\n",
    "lists": lambda n: "n = " + "[" * n + "1" + "]" * n + "\n",
    "unary": lambda n: "n = " + "-" * n + "1\n",
    "power": lambda n: "n = " + "2 ** " * n + "1\n",
    "calls": lambda n: (
        "model M:\n    input_shape = (4,)\n    def forward(x):\n        y = "
        + "relu(" * n
        + "x"
        + ")" * n
        + "\n"
    ),
    "chain": lambda n: (
        "model M:\n    input_shape = (4,)\n    def forward(x):\n        x -> "
        + " -> ".join(["relu()"] * n)
        + "\n"
    ),
    "statements": lambda n: (
        "model M:\n    input_shape = (4,)\n    def forward(x):\n" + "        x -> relu()\n" * n
    ),
    "indentation": lambda n: "".join("    " * i + f"model M{i}:\n" for i in range(min(n, 2000))),
    # issue 23: two inputs, a block with two inputs and two outputs destructured n times
    "several inputs": lambda n: (
        "model Pair:\n    def forward(a, b):\n        return add(a, b), b\n"
        "model M:\n    input_shape = {x: (4,), m: (4,)}\n    def forward(x, m=ones):\n"
        + "        x, m = Pair(x, m)\n" * n
        + "        return x, m\n"
    ),
}


@pytest.mark.parametrize("construct", sorted(NESTING))
@pytest.mark.parametrize("depth", [1, 10, 63, 64, 65, 100, 10_000, 100_000])
def test_depth_ladder(construct: str, depth: int) -> None:
    source = NESTING[construct](depth)
    if len(source.encode()) > 1024 * 1024:
        source = source[: 1024 * 1024 + 10]  # past the size limit: must be P011, not a crash
    check_input(source)


@pytest.mark.parametrize("construct", sorted(NESTING))
def test_front_end_work_is_linear(construct: str) -> None:
    # a work limit, not a time limit: ten times the depth or length may cost at most 11 times
    # the function calls (a quadratic step would cost about 100 times)
    small, large = (NESTING[construct](n) for n in (1_000, 10_000))
    ratio = calls_made(lambda: run_front_end(large, "l.aur")) / calls_made(
        lambda: run_front_end(small, "s.aur")
    )
    assert ratio <= 11, f"{construct}: 10x the size made {ratio:.1f}x the calls"


def test_limits_are_diagnostics() -> None:
    too_deep = run_front_end(NESTING["parentheses"](65), "deep.aur")
    assert [d.code for d in too_deep.diagnostics] == ["P011"]
    big = run_front_end("n = 1\n" * 200_000, "big.aur")
    assert [d.code for d in big.diagnostics] == ["P011"]
    long_name = run_front_end("a" * 300 + " = 1\n", "long.aur")
    assert [d.code for d in long_name.diagnostics] == ["P011"]
    chain = run_front_end(NESTING["chain"](10_000), "chain.aur")
    assert chain.ok and len(chain.graphs["M"].nodes) == 10_000


def test_examples_check_clean() -> None:
    for path in Path(EXAMPLES).glob("*.aur"):
        result = run_front_end(path.read_text(), str(path))
        assert result.ok, (path, result.diagnostics)
