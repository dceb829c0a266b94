"""Issue 24's syntax: conditions, subscripts, if/elif/else and for in forward bodies, layer
name templates, quoted parts, '*', splicing, model variants and init rules."""

from __future__ import annotations

import textwrap

import pytest

from aurane.syntax import ast
from aurane.syntax.parser import parse_program
from aurane.syntax.printer import strip_spans
from aurane.tools.format import format_source


def parse(source: str) -> ast.AuraneProgram:
    program, found = parse_program(textwrap.dedent(source).lstrip("\n"), "t.aur")
    assert program is not None and not found, found
    return program


def errors(source: str) -> list[tuple[str, int, int, str]]:
    _, found = parse_program(textwrap.dedent(source).lstrip("\n"), "t.aur")
    return [(d.code, d.span.line, d.span.column, d.message) for d in found if d.span]


def constant(source: str) -> ast.Expr:
    return parse(f"c = {source}\n").constants[0].value


def test_conditions_follow_pythons_precedence() -> None:
    value = constant("1 if a and not b or c < 2 else 3")
    assert isinstance(value, ast.IfExp)
    test = value.test
    assert isinstance(test, ast.BoolOp) and test.op == "or"
    assert isinstance(test.left, ast.BoolOp) and test.left.op == "and"
    assert isinstance(test.left.right, ast.Not)
    assert isinstance(test.right, ast.Compare) and test.right.op == "<"
    assert isinstance(constant("a not in [1, 2]"), ast.Compare)
    assert constant("a not in [1, 2]").op == "not in"  # type: ignore[union-attr]
    power = constant("cfg[i][0] ** 2 + x.shape[-1]")
    assert isinstance(power, ast.BinOp) and isinstance(power.left, ast.BinOp)
    assert isinstance(power.left.left, ast.Subscript)
    assert isinstance(power.right, ast.Subscript)
    assert power.right.value == ast.Name("x.shape", power.right.value.span)


def test_chained_comparison_is_refused_at_the_second_operator() -> None:
    assert errors("c = 1 < 2 < 3\n") == [("P006", 1, 11, "comparisons cannot be chained")]


def test_if_elif_else_and_for_nest_in_forward_bodies() -> None:
    program = parse(
        """
        model B(n):
            def forward(x):
                if n > 1:
                    for i, (a, b) in enumerate([(1, 2)]):
                        x -> dense(a)
                elif n == 1:
                    x -> dense(2)
                else:
                    return x
                return x
        """
    )
    forward = program.models[0].forward
    assert forward is not None
    first = forward.body[0]
    assert isinstance(first, ast.If)
    assert [b.keyword for b in first.branches] == ["if", "elif", "else"]
    loop = first.branches[0].body[0]
    assert isinstance(loop, ast.For)
    assert loop.target.name is None and loop.target.items[0].name == "i"
    assert [t.name for t in loop.target.items[1].items] == ["a", "b"]
    assert len(ast.simple_statements(forward.body)) == 4


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ("elif n:\n            x -> dense(2)", "P006", "'elif' without an 'if' before it"),
        ("for i range(3):\n            x -> dense(2)", "P006", "expected 'in'"),
        ("for i, i in [1]:\n            x -> dense(2)", "P040", "'i' is bound twice"),
        ("if :\n            x -> dense(2)", "P006", "expected a condition after 'if'"),
        ("if n:\n        x -> dense(2)", "P013", "'if' has no body"),
    ],
)
def test_control_statement_errors_are_located(body: str, code: str, message: str) -> None:
    source = f"model B(n):\n    def forward(x):\n        {body}\n        return x\n"
    found = [f for f in errors(source) if f[0] == code]
    assert found and message in found[0][3], errors(source)
    assert found[0][1] == 3


def test_deep_if_nesting_is_refused_without_recursion_errors() -> None:
    lines = ["model B(n):", "    def forward(x):"]
    for depth in range(80):
        lines.append("    " * (depth + 2) + "if n:")
    lines.append("    " * 82 + "x -> dense(2)")
    _, found = parse_program("\n".join(lines) + "\n", "t.aur")
    assert [d.code for d in found] == ["P011"]


def step(source: str) -> ast.Call:
    program = parse(f"model N(i):\n    def forward(x):\n        x -> {source}\n")
    forward = program.models[0].forward
    assert forward is not None
    stmt = forward.body[0]
    assert isinstance(stmt, ast.ChainStmt)
    return stmt.chain.steps[0]


def test_layer_name_templates_quotes_and_star() -> None:
    call = step('dense(4) as layer{i + 1}.{i}."blk{i}-0".*')
    assert call.layer == 'layer{}.{}."blk{}-0".*'
    assert len(call.layer_holes) == 3
    hole = call.layer_holes[2]
    assert isinstance(hole, ast.Name) and hole.id == "i"
    assert (hole.span.line, hole.span.column) == (3, 48)  # inside the string, located
    assert step("dense(4) as denselayer{i}").layer == "denselayer{}"
    assert step("dense(4) as features.*").layer == "features.*"
    assert step("dense(4) as a.0.b").layer == "a.0.b"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("features.*.conv", "P006"),
        ("*", "P006"),
        ('a."b.c"', "S045"),
        ('a.""', "S045"),
        ("a{}", "P006"),
    ],
)
def test_bad_layer_names_are_located(name: str, code: str) -> None:
    found = errors(f"model N:\n    def forward(x):\n        x -> dense(4) as {name}\n")
    assert found and found[0][0] == code and found[0][1] == 3


def test_splice_marks_a_chain_step() -> None:
    call = step("*Stem(64) as features")
    assert call.splice and call.func == "Stem" and call.layer == "features"


def test_variants_and_init_rules() -> None:
    program = parse(
        """
        model resnet50 = ResNet(Bottleneck, [3, 4, 6, 3]):
            input_shape = (3, 224, 224)
            init dense: normal(0.02)
            init *.c_proj.weight: normal(0.02 / sqrt(2 * 12))
            init transformer.h.0.attn.bias: zeros
        model resnet18 = ResNet(BasicBlock, [2, 2, 2, 2])
        """
    )
    first, second = program.models
    assert first.base is not None and first.base.func == "ResNet" and first.forward is None
    assert [r.target for r in first.inits] == [
        "dense",
        "*.c_proj.weight",
        "transformer.h.0.attn.bias",
    ]
    assert second.base is not None and not second.fields


def test_variant_with_a_forward_is_refused() -> None:
    source = "model v = B(2):\n    def forward(x):\n        return x\n"
    assert [f[0] for f in errors(source)] == ["S128"]


FORMAT_CASES = {
    "conditions": (
        "c = (1 if a else 2)if not(b)else[x  for_ ]\n"
        if False
        else "c = (1 if a else 2)if not(b)else 3\n",
        "c = (1 if a else 2) if not b else 3\n",
    ),
    "parentheses stay where the grammar needs them": (
        "c = -(a<b) + (a or b) * cfg [0]\nd = (a and b) or (not a) or (a if b else c)\n",
        "c = -(a < b) + (a or b) * cfg[0]\nd = a and b or not a or (a if b else c)\n",
    ),
    "control statements and templates": (
        "model B(n, act=relu):\n    init  dense :normal( 0.02 )\n    def forward(x):\n"
        "        for i,(a ,b) in enumerate( [(1,2)] ):\n"
        '            if a>1 :\n                x -> dense(a).act as l{i+1}."b{ i }-0"\n'
        "            elif b:\n                x -> *Stem( a )as features.*\n"
        "            else :\n                x -> act()\n        return x\n",
        "model B(n, act=relu):\n    init dense: normal(0.02)\n    def forward(x):\n"
        "        for i, (a, b) in enumerate([(1, 2)]):\n"
        '            if a > 1:\n                x -> dense(a).act as l{i + 1}."b{i}-0"\n'
        "            elif b:\n                x -> *Stem(a) as features.*\n"
        "            else:\n                x -> act()\n        return x\n",
    ),
    "variants": (
        "model r = R( B,[2,2] ):\n    input_shape=(3,8,8)\nmodel s = R(B, [1])\n",
        "model r = R(B, [2, 2]):\n    input_shape = (3, 8, 8)\nmodel s = R(B, [1])\n",
    ),
}


@pytest.mark.parametrize("case", FORMAT_CASES)
def test_format_lays_out_the_new_syntax(case: str) -> None:
    source, expected = FORMAT_CASES[case]
    result = format_source(source)
    assert result.error is None and result.output == expected, (result.error, result.output)
    assert format_source(expected).output == expected
    before, _ = parse_program(source)
    after, _ = parse_program(expected)
    assert strip_spans(before) == strip_spans(after)
