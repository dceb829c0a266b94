"""``aurane lint``: every rule fires on its positive case and stays quiet on its negative one;
``--auto-fix`` output parses, keeps the IR and is idempotent."""

from __future__ import annotations

import textwrap

import pytest

from aurane.codes import CODES
from aurane.syntax.parser import parse_program
from aurane.tools.lint import FIXABLE as FIXABLE_CODES
from aurane.tools.lint import apply_fixes, fix_source, lint_source, program_ir
from tests.conftest import VALID, corpus_files

NET = """\
model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(4).relu -> dense(2)
"""

# code -> (positive source, negative source)
RULES: dict[str, tuple[str, str]] = {
    "W001": ("width = 4   \n", "width = 4\n"),
    "W002": ("model Net\n    input_shape = (8,)\n", "model Net:\n    input_shape = (8,)\n"),
    "W003": ("name = '" + "x" * 100 + "'\n", "name = '" + "x" * 80 + "'\n"),
    "E001": ("x -> dense(4\n", "width = 4\n"),
    "L101": (
        "hidden = 64\n" + NET,
        "hidden = 4\n" + NET.replace("dense(4)", "dense(hidden)"),
    ),
    "L102": (
        NET.replace("x -> dense(4).relu -> dense(2)", "extra = dense(x, 3)\n        return x"),
        NET.replace("x -> dense(4).relu -> dense(2)", "extra = dense(x, 3)\n        return extra"),
    ),
    "L103": (
        "width = 4\nmodel Net:\n    width = 2\n    input_shape = (8,)\n    def forward(x):\n"
        "        x -> dense(width)\nuse_it = width\n",
        "width = 4\nmodel Net:\n    size = 2\n    input_shape = (8,)\n    def forward(x):\n"
        "        x -> dense(size)\nuse_it = width\n",
    ),
    "L104": (
        NET.replace("dense(4).relu", "dense(4).relu -> relu()"),
        NET.replace("dense(4).relu", "dense(4).relu -> gelu()"),
    ),
    "L105": (
        NET + "dataset spare:\n    from aurane.data.SyntheticImages\n",
        NET + "dataset d:\n    from aurane.data.SyntheticImages\ntrain Net on d:\n    epochs = 1\n",
    ),
    "L201": (
        "model C:\n    input_shape = (3, 8, 8)\n    def forward(x):\n"
        "        x -> conv2d(4, kernel=3) -> batchnorm() -> flatten()\n",
        "model C:\n    input_shape = (3, 8, 8)\n    def forward(x):\n"
        "        x -> conv2d(4, kernel=3, bias=false) -> batchnorm() -> flatten()\n",
    ),
    "L202": (
        NET.replace("-> dense(2)", "-> dense(2) -> dropout(0.5)"),
        NET.replace("-> dense(2)", "-> dropout(0.5) -> dense(2)"),
    ),
    "L203": (
        NET.replace("dense(2)", "dense(2).softmax(dim=-1)")
        + "dataset d:\n    from aurane.data.SyntheticImages\n"
        "train Net on d:\n    loss = cross_entropy\n",
        NET + "dataset d:\n    from aurane.data.SyntheticImages\n"
        "train Net on d:\n    loss = cross_entropy\n",
    ),
    "L204": (
        NET.replace("dense(2)", "dense(1).sigmoid")
        + "dataset d:\n    from aurane.data.SyntheticImages\n"
        "train Net on d:\n    loss = bce_with_logits\n",
        NET.replace("dense(2)", "dense(1).sigmoid")
        + "dataset d:\n    from aurane.data.SyntheticImages\n"
        "train Net on d:\n    loss = bce\n",
    ),
    "L205": (
        NET.replace("dense(4).relu", "dense(4).relu -> batchnorm()")
        + "dataset d:\n    from aurane.data.SyntheticImages\n    batch = 1\n"
        "train Net on d:\n    epochs = 1\n",
        NET.replace("dense(4).relu", "dense(4).relu -> batchnorm()")
        + "dataset d:\n    from aurane.data.SyntheticImages\n    batch = 8\n"
        "train Net on d:\n    epochs = 1\n",
    ),
}


def codes(source: str) -> list[str]:
    return [d.code for d in lint_source(source, "t.aur")]


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_positive(code: str) -> None:
    found = [d for d in lint_source(RULES[code][0], "t.aur") if d.code == code]
    assert found, codes(RULES[code][0])
    for diag in found:
        assert diag.span is not None and diag.hint and diag.stage == "lint"
        assert diag.severity == CODES[code].severity


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_negative(code: str) -> None:
    assert code not in codes(RULES[code][1])


def test_every_lint_code_has_a_test_and_a_table_entry() -> None:
    lint_codes = {c for c, entry in CODES.items() if entry.stage == "lint"}
    assert lint_codes == set(RULES)
    for code in lint_codes:
        entry = CODES[code]
        assert entry.slug and entry.summary and entry.explanation and entry.example and entry.fix


def test_graph_form_and_constants_are_seen_through() -> None:
    source = (
        "bias = true\nmodel G:\n    input_shape = (3, 8, 8)\n    def forward(x):\n"
        "        h = conv2d(x, 4, kernel=3, bias=bias)\n        n = batchnorm(h)\n"
        "        return flatten(n)\n"
    )
    assert "L201" in codes(source)


def test_bias_kept_when_the_layer_output_is_also_used_elsewhere() -> None:
    source = (
        "model G:\n    input_shape = (8,)\n    def forward(x):\n        h = dense(x, 8)\n"
        "        n = batchnorm(h)\n        return add(h, n)\n"
    )
    assert "L201" not in codes(source)


def test_only_errors_fail() -> None:
    assert all(d.severity != "error" for d in lint_source(RULES["L101"][0]))
    assert any(d.is_error for d in lint_source(RULES["E001"][0]))


def test_corpus_valid_programs_have_no_warnings() -> None:
    for name in corpus_files("valid"):
        text = (VALID / name).read_text()
        found = [d for d in lint_source(text, name) if d.severity != "info"]
        assert not found, (name, found)


# ---------------------------------------------------------------- auto-fix

FIXABLE = textwrap.dedent(
    """\
    width = 4{blanks}
    model Net   # the colon is missing
        input_shape = (8,)\t
        def forward(x)
            x -> dense(width).relu -> dense(2)
    """
).format(blanks="   ")


def test_auto_fix_parses_keeps_the_ir_and_is_idempotent() -> None:
    result = fix_source(FIXABLE, "t.aur")
    assert result.error is None and result.changed and result.output is not None
    fixed = result.output
    assert "model Net:   # the colon" in fixed and "def forward(x):\n" in fixed
    program, diagnostics = parse_program(fixed)
    assert program is not None and diagnostics == []
    original, _ = parse_program(FIXABLE)
    assert original is not None and program_ir(original) == program_ir(program)
    assert not {"W001", "W002"} & set(codes(fixed))
    again = fix_source(fixed, "t.aur")
    assert again.output == fixed and not again.changed


def test_auto_fix_refuses_a_result_that_does_not_parse() -> None:
    source = "width = 4   \nx -> dense(4\n"
    result = fix_source(source)
    assert result.output is None and result.error is not None


def test_auto_fix_keeps_crlf_line_endings() -> None:
    result = fix_source("a = 1  \r\nb = 2\r\n")
    assert result.output == "a = 1\r\nb = 2\r\n"


def test_auto_fix_reuses_the_lint_result() -> None:
    found = lint_source(FIXABLE, "t.aur")
    given = fix_source(FIXABLE, "t.aur", found)
    alone = fix_source(FIXABLE, "t.aur")
    assert given.output == alone.output and given.output is not None
    assert [d.code for d in given.fixed] == [d.code for d in alone.fixed]
    assert {"W001", "W002"} <= {d.code for d in given.fixed}
    # the W002 spans are exactly the colons the parser reports missing
    colons = [d.span for d in found if d.code == "W002" and d.span is not None]
    assert apply_fixes(FIXABLE, "t.aur", colon_spans=colons) == apply_fixes(FIXABLE, "t.aur")
    # nothing fixable in the given result: the text comes back untouched, unfixed
    clean = fix_source(FIXABLE, "t.aur", [d for d in found if d.code not in FIXABLE_CODES])
    assert clean.output == FIXABLE and not clean.changed and clean.fixed == []
