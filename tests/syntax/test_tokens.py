"""Tokenizer: token kinds, values, code-point spans, logical lines and lexical diagnostics."""

from __future__ import annotations

import pytest

from aurane.source import Span
from aurane.syntax.tokens import MAX_IDENTIFIER, Kind, Token, tokenize


def toks(text: str) -> list[Token]:
    return [t for line in tokenize(text).lines for t in line.tokens]


def texts(text: str) -> list[str]:
    return [t.text for t in toks(text)]


def diags(text: str) -> list[tuple[str, int, int]]:
    out = []
    for d in tokenize(text).diagnostics:
        assert d.span is not None
        out.append((d.code, d.span.line, d.span.column))
    return out


def test_kinds_and_operators() -> None:
    tokens = toks("x -> f(1, 'a') // 2 ** 3 % [4] {5} : = . + - * /")
    assert [t.kind for t in tokens[:3]] == [Kind.NAME, Kind.OP, Kind.NAME]
    assert [t.text for t in tokens if t.kind is Kind.OP] == [
        "->",
        "(",
        ",",
        ")",
        "//",
        "**",
        "%",
        "[",
        "]",
        "{",
        "}",
        ":",
        "=",
        ".",
        "+",
        "-",
        "*",
        "/",
    ]
    assert tokens[6].kind is Kind.STRING and tokens[6].value == "a"


def test_spans_count_code_points() -> None:
    tokens = toks("größe = 'ü' + ü")
    assert tokens[0].span == Span(1, 1, 1, 6)
    assert tokens[1].span == Span(1, 7, 1, 8)
    assert tokens[2].span == Span(1, 9, 1, 12)
    assert tokens[4].span == Span(1, 15, 1, 16)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("1_000", 1000),
        ("0", 0),
        ("00", 0),
        ("0.5", 0.5),
        (".5", 0.5),
        ("1.", 1.0),
        ("1e-4", 1e-4),
        ("2E+3", 2000.0),
        ("1_0.2_5e1_0", 10.25e10),
    ],
)
def test_numbers(text: str, value: float) -> None:
    (token,) = toks(text)
    assert token.kind is Kind.NUMBER and token.value == value and token.text == text
    assert type(token.value) is type(value)


@pytest.mark.parametrize("text", ["1__0", "1_", "1e", "1e+", "01", "1abc", "0x10", "1._5"])
def test_invalid_numbers_are_p008(text: str) -> None:
    assert diags(f"n = {text}") == [("P008", 1, 5)]
    assert toks(f"n = {text}")[-1].value == 0  # a placeholder keeps the parser going


def test_huge_integer_is_p008_not_a_crash() -> None:
    assert diags("n = " + "9" * 5000) == [("P008", 1, 5)]


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (r"'a\\b'", "a\\b"),
        (r"'\''", "'"),
        (r'"\""', '"'),
        (r"'\n\t\r\0'", "\n\t\r\0"),
        (r"'\x41'", "A"),
        (r"'\u00e9'", "é"),
        (r"'\U0001F600'", "\U0001f600"),
        ('"it\'s"', "it's"),
        ("'a # not a comment'", "a # not a comment"),
        ("'\u2028'", "\u2028"),
    ],
)
def test_string_escapes(source: str, value: str) -> None:
    (token,) = toks(source)
    assert token.kind is Kind.STRING and token.value == value
    assert diags(source) == []


@pytest.mark.parametrize("escape", [r"\q", r"\x4", r"\u12", r"\U00110000", r"\8"])
def test_invalid_escape_is_p014_at_the_backslash(escape: str) -> None:
    assert diags(f"s = 'ab{escape}'") == [("P014", 1, 8)]


def test_unterminated_string_points_at_the_opening_quote() -> None:
    assert diags('x = 1\nlr = "0.1') == [("P004", 2, 6)]
    assert diags("s = 'abc\\'") == [("P004", 1, 5)]  # an escaped quote does not close it
    (line,) = tokenize("s = 'abc").lines
    assert line.tokens[-1].value == "abc"


def test_comments_are_collected_with_placement() -> None:
    result = tokenize("# head\nx = 1  # tail\n    # indented\n")
    assert [(c.text, c.own_line) for c in result.comments] == [
        ("# head", True),
        ("# tail", False),
        ("# indented", True),
    ]
    assert result.comments[1].span == Span(2, 8, 2, 14)
    assert [t.text for t in result.lines[0].tokens] == ["x", "=", "1"]


def test_leading_bom_is_ignored_but_a_later_one_is_p009() -> None:
    assert texts("\ufeffx = 1") == ["x", "=", "1"]
    assert toks("\ufeffx = 1")[0].span == Span(1, 1, 1, 2)
    assert diags("x = \ufeff1") == [("P009", 1, 5)]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings(newline: str) -> None:
    result = tokenize(newline.join(["a = 1", "b = 2", ""]))
    assert [line.tokens[0].span.line for line in result.lines] == [1, 2]
    assert result.diagnostics == ()


def test_bad_characters_are_p009_and_skipped() -> None:
    assert diags("x = 1 $") == [("P009", 1, 7)]
    assert texts("x = 1 $") == ["x", "=", "1"]
    assert diags("x = 1 $$$ ; 2") == [("P009", 1, 7)]  # one run, one diagnostic
    assert diags("x = \u2028 1") == [("P009", 1, 5)]
    assert diags("x = 1 \\") == [("P009", 1, 7)]
    assert diags("x = \x01") == [("P009", 1, 5)]


def test_line_separator_is_fine_in_comments_and_not_a_line_break() -> None:
    result = tokenize("x = 1  # a\u2028b\ny = 2")
    assert result.diagnostics == ()
    assert result.comments[0].text == "# a\u2028b"
    assert [line.tokens[0].span.line for line in result.lines] == [1, 2]


def test_nul_and_lone_surrogates_are_p015_everywhere() -> None:
    assert diags("x = \x00") == [("P015", 1, 5)]
    assert diags("x = 'a\x00'") == [("P015", 1, 7)]
    assert diags("# \ud800") == [("P015", 1, 3)]
    assert diags("x = \udfff") == [("P015", 1, 5)]


def test_runs_of_bad_characters_give_one_diagnostic() -> None:
    assert len(tokenize("\x00" * 10_000).diagnostics) == 1


def test_tab_in_indentation_is_p001_at_the_tab() -> None:
    assert diags("model A:\n\tx = 1") == [("P001", 2, 1)]
    assert diags("model A:\n  \tx = 1") == [("P001", 2, 3)]
    assert diags("x =\t1\t# tabs between tokens are fine") == []


def test_tab_indented_line_sits_under_the_header() -> None:
    lines = tokenize("model A:\n    def forward(x):\n\tx -> f()").lines
    assert [line.indent for line in lines] == [0, 4, 8]
    assert lines[2].lexical_error and lines[2].tab_indent


def test_identifier_length_limit() -> None:
    ok = "a" * MAX_IDENTIFIER
    assert diags(f"{ok} = 1") == []
    assert diags(f"{ok}b = 1") == [("P011", 1, 1)]


def test_unicode_identifiers() -> None:
    assert [t.kind for t in toks("π_2 = ñ")] == [Kind.NAME, Kind.OP, Kind.NAME]
    assert toks("_x")[0].kind is Kind.NAME


def test_open_brackets_join_physical_lines() -> None:
    result = tokenize("t = [\n  1,\n  # c\n\n  2,\n]\nu = 3")
    assert len(result.lines) == 2
    assert [t.text for t in result.lines[0].tokens] == ["t", "=", "[", "1", ",", "2", ",", "]"]
    assert result.comments[0].own_line


def test_arrow_lines_continue_the_previous_line() -> None:
    source = "    x -> f()\n    # note\n      -> g()\n    y = 1"
    result = tokenize(source)
    assert [len(line.tokens) for line in result.lines] == [9, 3]
    assert result.diagnostics == ()


def test_arrow_line_not_deeper_than_its_statement_is_p003() -> None:
    assert diags("        x -> f()\n      -> g()") == [("P003", 2, 7)]
    assert diags("  x -> f()\n  -> g()") == [("P003", 2, 3)]
    lines = tokenize("  x -> f()\n  -> g()").lines
    assert len(lines) == 1 and lines[0].lexical_error


def test_unclosed_bracket_stops_at_a_dedented_statement() -> None:
    source = "model A:\n    x = f(1\nmodel B:\n    y = 2\n"
    lines = tokenize(source).lines
    assert [line.tokens[0].text for line in lines] == ["model", "x", "model", "y"]


def test_unclosed_bracket_stops_at_a_statement_keyword_at_the_same_level() -> None:
    lines = tokenize("a = f(1\nmodel B:\n").lines
    assert [line.tokens[0].text for line in lines] == ["a", "model"]


def test_closing_bracket_at_statement_level_still_continues() -> None:
    lines = tokenize("    t = [\n        1,\n    ]\n    u = 1").lines
    assert len(lines) == 2


def test_stray_and_mismatched_closers_do_not_break_joining() -> None:
    lines = tokenize("a = ())\nb = )\nc = ([)\nd = 1").lines
    assert [line.tokens[0].text for line in lines] == ["a", "b", "c", "d"]


def test_line_count_and_end_point() -> None:
    result = tokenize("x = 1\n\n")
    assert result.line_count == 3
    assert result.lines[0].end == Span(1, 6, 1, 7)
