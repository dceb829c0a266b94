"""``aurane format``: expected layouts, safety, comments, blank lines and the corpus (K-FMT)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from aurane.diagnostics import has_errors
from aurane.syntax.parser import parse_program
from aurane.tools.format import equivalence_problem, format_source, format_text, program_structure
from aurane.tools.lint import lint_source
from tests.conftest import REPO, corpus_dir, corpus_files


def fmt(source: str) -> str:
    text = textwrap.dedent(source).lstrip("\n")
    result = format_source(text)
    assert result.error is None and result.output is not None, (result.error, result.diagnostics)
    again = format_source(result.output)
    assert again.output == result.output, "not stable under one more pass"
    return result.output


def same(source: str) -> None:
    text = textwrap.dedent(source).lstrip("\n")
    assert fmt(text) == text


CASES = {
    "spacing": (
        "w=4*(2+3)\nuse   torch.nn   as   tnn\n",
        "w = 4 * (2 + 3)\nuse torch.nn as tnn\n",
    ),
    "literals": (
        "a = 1E+5\nb = .5\nc = 5.\nd = True\ne = none\nf = 1_000\ng = 2.E-3\n",
        "a = 1e5\nb = 0.5\nc = 5.0\nd = true\ne = None\nf = 1_000\ng = 2.0e-3\n",
    ),
    "strings untouched": (
        "s = 'it\\'s'\nt = \"a  # not a comment\"\nu = '\\u00e9'\n",
        "s = 'it\\'s'\nt = \"a  # not a comment\"\nu = '\\u00e9'\n",
    ),
    "tuples": ("t = ( 1 , )\nu = (1,2)\nv = ()\n", "t = (1,)\nu = (1, 2)\nv = ()\n"),
    "precedence": (
        "a = (1 + 2) * 3\nb = 1 - (2 - 3)\nc = 2 ** (3 ** 4)\nd = (2 ** 3) ** 4\n"
        "e = -(1 + 2)\nf = (-2) ** 2\ng = -2 ** 2\nh = (1 * 2) + 3\n",
        "a = (1 + 2) * 3\nb = 1 - (2 - 3)\nc = 2 ** 3 ** 4\nd = (2 ** 3) ** 4\n"
        "e = -(1 + 2)\nf = (-2) ** 2\ng = -2 ** 2\nh = 1 * 2 + 3\n",
    ),
    "blocks reindented": (
        "model Net :\n  input_shape=( 8, )\n  def forward( x ):\n      x->dense( 4 ).relu->dense(2)\n",
        "model Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(4).relu -> dense(2)\n",
    ),
    "continuation arrows aligned under the first": (
        "model N:\n    def forward(tokens):\n        tokens->dense(4)\n            ->dense(2)\n"
        "        h = tokens -> dense(3)\n          -> dense(1)\n",
        "model N:\n    def forward(tokens):\n        tokens -> dense(4)\n               -> dense(2)\n"
        "        h = tokens -> dense(3)\n                   -> dense(1)\n",
    ),
    "joined brackets": (
        "t = [1,\n      2,\n   3]\n",
        "t = [1, 2, 3]\n",
    ),
    "blank lines capped": (
        "a = 1\n\n\n\n\nb = 2\nmodel M:\n\n    x = 1\n\n\n    y = 2\n\n\n",
        "a = 1\n\n\nb = 2\nmodel M:\n    x = 1\n\n    y = 2\n",
    ),
    "trailing whitespace": ("a = 1   \n# c  \n\n   \nb = 2\t\n", "a = 1\n# c\n\n\nb = 2\n"),
    "header spacing": (
        "train   Net   on   data :\n  epochs=2\ntrain_gan G  and D on d:\n  epochs = 1\n",
        "train Net on data:\n    epochs = 2\ntrain_gan G and D on d:\n    epochs = 1\n",
    ),
    "dataset from line": (
        "dataset d:\n  from   torchvision.datasets.FakeData\n  size=4\n",
        "dataset d:\n    from torchvision.datasets.FakeData\n    size = 4\n",
    ),
    "suffixes and keywords": (
        "model M:\n    def forward(x):\n        x -> dense( 4 , bias = false ) . leaky_relu( 0.2 )\n",
        "model M:\n    def forward(x):\n        x -> dense(4, bias=false).leaky_relu(0.2)\n",
    ),
    "empty input": ("", ""),
    "only blank lines": ("\n\n   \n", ""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_expected_layout(name: str) -> None:
    source, expected = CASES[name]
    assert fmt(source) == expected


def test_comments_kept_in_place() -> None:
    source = """\
        # header
        width = 4   # trailing
        model Net:
              # about the shape
              input_shape = (8,)
              def forward(x):
                  x -> dense(width).relu  # first step
                    # between steps
                    -> dense(2)
                  # end of body
        # footer
        """
    assert fmt(source) == textwrap.dedent(
        """\
        # header
        width = 4  # trailing
        model Net:
            # about the shape
            input_shape = (8,)
            def forward(x):
                x -> dense(width).relu  # first step
                  # between steps
                  -> dense(2)
                # end of body
        # footer
        """
    )


def test_comments_inside_brackets_explode_them() -> None:
    source = """\
        dataset d:
            transforms = [ToTensor(),  # first
                # own line
                Normalize((0.5,), (0.5,))]
        """
    assert fmt(source) == textwrap.dedent(
        """\
        dataset d:
            transforms = [
                ToTensor(),  # first
                # own line
                Normalize((0.5,), (0.5,)),
            ]
        """
    )


def test_long_lines_are_broken_and_stay_under_the_limit() -> None:
    args = ", ".join(f"argument_{i}={i}" for i in range(12))
    chain = " -> ".join(f"dense({i * 100}).relu" for i in range(1, 12))
    source = f"opt = adam({args})\nmodel M:\n    def forward(x):\n        x -> {chain}\n"
    out = fmt(source)
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "    argument_0=0,\n" in out and out.count("\n          -> dense(") == 10
    assert not {d.code for d in lint_source(out)} & {"W001", "W002", "W003"}


def test_unplaceable_comment_keeps_the_statement_verbatim() -> None:
    # A comment between two operands has no structural place: the statement is kept as
    # written (re-indented, trailing blanks stripped), so the comment survives.
    source = "model M:\n  x = f(1 +  # why\n        2)   \n"
    assert fmt(source) == "model M:\n    x = f(1 +  # why\n          2)\n"


def test_crlf_and_bom_are_kept() -> None:
    text = "\ufeffa=1\r\nb = 2\r\n"
    assert format_text(text) == "\ufeffa = 1\r\nb = 2\r\n"


def test_fields_after_forward_keep_their_order() -> None:
    same(
        """\
        model M:
            def forward(x):
                x -> dense(w)
            w = 3
        """
    )


@pytest.mark.parametrize("source", ["model M\n    x = 1\n", "x -> dense(4\n", "a = 'open\n"])
def test_unparseable_input_is_not_formatted(source: str) -> None:
    result = format_source(source)
    assert result.output is None and result.diagnostics and not result.changed


def test_safety_check_detects_a_changed_program() -> None:
    assert equivalence_problem("a = 1\n", "a = 2\n") is not None
    assert equivalence_problem("a = 1\n", "a = (1\n") is not None
    assert equivalence_problem("a = 1 # x\n", "a = 1  # x\n") is None


def test_safety_check_names_the_problem() -> None:
    unparsed = equivalence_problem("a = 1\n", "a = (1\n")
    assert unparsed == "the formatted text does not parse (this is a formatter bug)"
    changed = equivalence_problem("a = 1\n", "a = 2\n")
    assert changed == "the formatted text parses to a different AST (this is a formatter bug)"
    # the before text with front-end errors (not parse errors) still compares
    broken = "model M:\n    def forward(x):\n        x -> nope(4)\n"
    assert equivalence_problem(broken, broken.replace("->", " -> ")) is None


def test_a_refused_result_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import aurane.tools.format as module

    monkeypatch.setattr(module, "layout_program", lambda program, text: "a = 2\n")
    result = module.format_source("a = 1\n")
    assert result.output is None and result.error is not None and "refusing" in result.error


# ---------------------------------------------------------------- the corpus


def _corpus() -> list[str]:
    return [f"{kind}/{name}" for kind in ("valid", "invalid") for name in corpus_files(kind)]


@pytest.mark.parametrize("name", _corpus())
def test_corpus_idempotent_and_ir_preserving(name: str) -> None:
    kind, _, file = name.partition("/")
    text = (corpus_dir(kind) / file).read_text(encoding="utf-8")
    result = format_source(text, name)
    if result.output is None and result.error is None:
        assert result.diagnostics  # does not parse: never formatted
        return
    assert result.error is None
    out = result.output
    assert out is not None
    assert equivalence_problem(text, out, name) is None
    assert format_source(out, name).output == out
    before = {d.code for d in lint_source(text, name)}
    assert {d.code for d in lint_source(out, name)} <= before


def test_regression_chain_comment_counts_toward_the_width() -> None:
    # Found by the 5,000-program campaign: re-indenting 2 -> 4 spaces pushed a chain line
    # with a trailing comment past 100 columns; the comment now counts when deciding breaks.
    source = (
        "model M:\n  input_shape = (8,)\n  def forward(x):\n"
        "    x -> dense((_000000 + 1) // 2, bias=true).relu -> layer_norm().leaky_relu(0.2)"
        "  # note 16  #x\n     -> dense(_000000)\n"
    )
    out = fmt(source)
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "          -> layer_norm().leaky_relu(0.2)  # note 16  #x\n" in out


# ------------------------------------------------- statements moved (issue 22, K-FMT)


def test_issue22_multiline_layer_name_before_unpacked_pieces_is_formatted() -> None:
    """The formatter refused this valid file ("parses to a different AST"): joining the
    call onto one line moved the names of `q, k = ...`, and the check compared their
    source positions."""
    out = fmt(
        """
        model Net:
            input_shape = (4, 8)
            def forward(x):
                h = dense(
                    x, 16
                ) as proj
                q, k = chunk(h, 2, dim=-1)
                return add(q, k)
        """
    )
    assert "h = dense(x, 16) as proj\n        q, k = chunk(h, 2, dim=-1)" in out


def _shipped_and_test_programs() -> list[Path]:
    roots = [REPO / "examples", REPO / "bench", REPO / "tests"]
    found = sorted(p for root in roots for p in root.rglob("*.aur"))
    return [p for p in found if parse_program(p.read_text(encoding="utf-8"), p.name)[0]]


def _moved_variants(text: str) -> list[str]:
    """The program with each top-level statement moved to the end, and with each forward
    statement moved down a line (a blank line before it): every later position shifts."""
    program, _ = parse_program(text, "moved.aur")
    assert program is not None
    lines = text.splitlines(keepends=True)
    variants = []
    for stmt in program.statements:
        first, last = stmt.span.line - 1, stmt.span.end_line
        rest = lines[:first] + lines[last:]
        tail = "" if not rest or rest[-1].endswith("\n") else "\n"
        variants.append("".join(rest) + tail + "".join(lines[first:last]))
        forward = getattr(stmt, "forward", None)
        for inner in forward.body if forward is not None else ():
            at = inner.span.line - 1
            variants.append("".join(lines[:at] + ["\n"] + lines[at:]))
    return variants


@pytest.mark.parametrize(
    "path", _shipped_and_test_programs(), ids=lambda p: str(p.relative_to(REPO))
)
def test_round_trip_holds_after_moving_each_statement(path: Path) -> None:
    """Formatting keeps the program (the structure without positions) and is stable, for
    every shipped and test program with each statement moved (issue 22)."""
    for variant in _moved_variants(path.read_text(encoding="utf-8")):
        before, diagnostics = parse_program(variant, path.name)
        if before is None or has_errors(diagnostics):
            continue  # a forward statement moved past the chain it continues, say
        out = format_text(variant, path.name)
        after, _ = parse_program(out, path.name)
        assert after is not None and program_structure(after) == program_structure(before)
        assert format_text(out, path.name) == out
