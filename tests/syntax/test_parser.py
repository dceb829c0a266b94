"""Parser: every construct, spans, every parse error code at its exact place, the corpus."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from aurane.diagnostics import Diagnostic
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.parser import MAX_DIAGNOSTICS, parse_program
from aurane.syntax.printer import dump_ast, strip_spans
from tests.conftest import CORPUS, corpus_dir, corpus_params, requires_shared

SAMPLE = """\
use torch
use torchvision.datasets as tvd  # trailing

# constants
width = 32
scaled = -2 ** 2 + 3 * (width - 1) // 2 % 5 / 1.5
pair = (1, 28)

experiment Exp:
    seed = 42
    device = "cpu"

dataset images:
    from torchvision.datasets.FakeData
    image_size = (1, 28, 28)
    transforms = [ToTensor(), Normalize((0.5,), (0.5,))]

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(width).relu
          -> dense(4).leaky_relu(0.2).residual
        h = x -> dense(8) -> relu
        out = add(x, dense(h, 8)).relu
        return out

train Net on images:
    optimizer = adam(lr=1e-3, betas=(0.9, 0.98))
    metrics = [accuracy, f1]
    early_stopping = true

train_gan Net and Net on images:
    epochs = 1
"""


def parse(source: str) -> tuple[ast.AuraneProgram, list[Diagnostic]]:
    program, diagnostics = parse_program(textwrap.dedent(source))
    assert program is not None
    return program, diagnostics


def ok(source: str) -> ast.AuraneProgram:
    program, diagnostics = parse(source)
    assert diagnostics == [], diagnostics
    return program


def found(source: str) -> list[tuple[str, int, int]]:
    _, diagnostics = parse(source)
    out = []
    for d in diagnostics:
        assert d.span is not None and d.stage == "parse"
        out.append((d.code, d.span.line, d.span.column))
    return out


def only(source: str) -> Diagnostic:
    _, diagnostics = parse(source)
    assert len(diagnostics) == 1, diagnostics
    return diagnostics[0]


def value_of(source: str) -> ast.Expr:
    statement = ok(source).statements[0]
    assert isinstance(statement, ast.Constant)
    return statement.value


def forward_of(source: str) -> tuple[ast.ForwardStmt, ...]:
    model = ok(source).statements[0]
    assert isinstance(model, ast.Model) and model.forward is not None
    return model.forward.body


# ---------------------------------------------------------------- constructs


def test_sample_program_structure() -> None:
    program = ok(SAMPLE)
    kinds = [type(s).__name__ for s in program.statements]
    assert kinds == [
        "Use",
        "Use",
        "Constant",
        "Constant",
        "Constant",
        "Experiment",
        "Dataset",
        "Model",
        "Train",
        "TrainGan",
    ]
    assert [(c.text, c.own_line) for c in program.comments] == [
        ("# trailing", False),
        ("# constants", True),
    ]
    assert program.span == Span(1, 1, SAMPLE.count("\n") + 1, 1)


def test_use_statements() -> None:
    program = ok("use torch\nuse a.b.c as d\n")
    first, second = program.statements
    assert first == ast.Use("torch", Span(1, 5, 1, 10), None, None, Span(1, 1, 1, 10))
    assert isinstance(second, ast.Use)
    assert (second.module, second.alias) == ("a.b.c", "d")
    assert second.module_span == Span(2, 5, 2, 10) and second.alias_span == Span(2, 14, 2, 15)


def test_literals() -> None:
    expr = value_of(
        "v = [1_000, 1e-4, 0.5, true, True, false, False, None, none, null, 'a', \"b\"]"
    )
    assert isinstance(expr, ast.ListExpr)
    kinds = [(type(i).__name__, getattr(i, "value", None)) for i in expr.items]
    assert kinds == [
        ("Number", 1000),
        ("Number", 1e-4),
        ("Number", 0.5),
        ("Bool", True),
        ("Bool", True),
        ("Bool", False),
        ("Bool", False),
        ("NoneLit", None),
        ("NoneLit", None),
        ("NoneLit", None),
        ("String", "a"),
        ("String", "b"),
    ]
    first = expr.items[0]
    assert isinstance(first, ast.Number) and first.text == "1_000"


def test_tuples_grouping_and_lists() -> None:
    assert value_of("t = (8,)") == ast.TupleExpr(
        (ast.Number(8, "8", Span(1, 6, 1, 7)),), Span(1, 5, 1, 9)
    )
    assert value_of("t = (8)") == ast.Number(8, "8", Span(1, 6, 1, 7))
    assert value_of("t = ()") == ast.TupleExpr((), Span(1, 5, 1, 7))
    assert value_of("t = []") == ast.ListExpr((), Span(1, 5, 1, 7))
    nested = value_of("t = [(1, 2), [3,],]")
    assert isinstance(nested, ast.ListExpr) and len(nested.items) == 2


def test_arithmetic_precedence_and_spans() -> None:
    expr = value_of("v = 1 + 2 * 3 ** -2 ** 2 - (4 - 1) // 2")
    assert strip_spans(expr) == strip_spans(_py_like("1 + 2 * 3 ** -2 ** 2 - (4 - 1) // 2"))
    assert expr.span == Span(1, 5, 1, 40)
    assert isinstance(expr, ast.BinOp) and expr.op == "-"
    assert expr.right.span == Span(1, 28, 1, 40)  # the group starts at its '('


def _py_like(text: str) -> ast.Expr:
    """The same expression written fully parenthesized, to pin down associativity."""
    del text
    return value_of("v = (1 + (2 * (3 ** (-(2 ** 2))))) - ((4 - 1) // 2)")


def test_unary_minus_is_not_evaluated() -> None:
    expr = value_of("v = -3")
    assert expr == ast.UnaryOp("-", ast.Number(3, "3", Span(1, 6, 1, 7)), Span(1, 5, 1, 7))
    assert isinstance(value_of("v = +-+3"), ast.UnaryOp)


def test_calls_keywords_and_dotted_names() -> None:
    expr = value_of("o = adam(lr=1e-3, betas=(0.9, 0.98))")
    assert isinstance(expr, ast.Call) and expr.func == "adam" and expr.args == ()
    lr, betas = expr.keywords
    assert (lr.name, lr.span, lr.name_span) == ("lr", Span(1, 10, 1, 17), Span(1, 10, 1, 12))
    assert isinstance(betas.value, ast.TupleExpr)
    dotted = value_of("t = transforms.ToTensor()")
    assert isinstance(dotted, ast.Call) and dotted.func == "transforms.ToTensor"
    assert dotted.func_span == Span(1, 5, 1, 24) and dotted.span == Span(1, 5, 1, 26)
    name = value_of("c = torchvision.datasets.FakeData")
    assert name == ast.Name("torchvision.datasets.FakeData", Span(1, 5, 1, 34))


def test_suffixes_on_calls() -> None:
    expr = value_of("v = dense(4).leaky_relu(0.2).softmax(dim=-1).residual")
    assert isinstance(expr, ast.Call) and expr.span == Span(1, 5, 1, 54)
    names = [(s.name, s.has_parens, len(s.args), len(s.keywords)) for s in expr.suffixes]
    assert names == [("leaky_relu", True, 1, 0), ("softmax", True, 0, 1), ("residual", False, 0, 0)]
    assert expr.suffixes[0].span == Span(1, 13, 1, 29)
    assert expr.suffixes[0].name_span == Span(1, 14, 1, 24)


def test_chain_statements_and_spans() -> None:
    body = forward_of("""\
        model M:
            def forward(x):
                x -> conv2d(16, kernel=3).relu
                  -> flatten()
                  -> relu
        """)
    (statement,) = body
    assert isinstance(statement, ast.ChainStmt)
    chain = statement.chain
    assert chain.source == ast.Name("x", Span(3, 9, 3, 10))
    assert [s.func for s in chain.steps] == ["conv2d", "flatten", "relu"]
    assert chain.steps[2] == ast.Call("relu", Span(5, 14, 5, 18), (), (), (), Span(5, 14, 5, 18))
    assert chain.span == statement.span == Span(3, 9, 5, 18)


def test_graph_form_assignments_and_return() -> None:
    body = forward_of("""\
        model M:
            def forward(x):
                h = x -> dense(8)
                out = add(x, dense(h, 8)).relu
                y = out
                return y -> dense(2)
        """)
    h, out, y, ret = body
    assert isinstance(h, ast.Assign) and isinstance(h.value, ast.Chain)
    assert isinstance(out, ast.Assign) and isinstance(out.value, ast.Call)
    inner = out.value.args[1]
    assert isinstance(inner, ast.Call) and inner.func == "dense"
    assert out.span == Span(4, 9, 4, 39) and out.target_span == Span(4, 9, 4, 12)
    assert isinstance(y, ast.Assign) and isinstance(y.value, ast.Name)
    assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Chain)
    assert ret.span == Span(6, 9, 6, 29)


def test_block_statements() -> None:
    program = ok(SAMPLE)
    experiment, dataset, model, train, gan = program.statements[5:]
    assert isinstance(experiment, ast.Experiment) and experiment.name == "Exp"
    assert [f.name for f in experiment.fields] == ["seed", "device"]
    assert experiment.span == Span(9, 1, 11, 19)
    assert isinstance(dataset, ast.Dataset) and dataset.source is not None
    assert dataset.source.id == "torchvision.datasets.FakeData"
    assert [f.name for f in dataset.fields] == ["image_size", "transforms"]
    assert isinstance(model, ast.Model) and model.forward is not None
    assert model.forward.param == "x" and model.forward.param_span == Span(20, 17, 20, 18)
    assert model.span == Span(18, 1, 25, 19) and model.forward.span == Span(20, 5, 25, 19)
    assert isinstance(train, ast.Train)
    assert (train.model.id, train.dataset.id) == ("Net", "images")
    assert train.model.span == Span(27, 7, 27, 10)
    assert isinstance(gan, ast.TrainGan)
    assert (gan.generator.id, gan.discriminator.id, gan.dataset.id) == ("Net", "Net", "images")


def test_model_fields_may_follow_forward() -> None:
    model = ok("model M:\n    def forward(x):\n        x -> f()\n    lr = 1\n").statements[0]
    assert isinstance(model, ast.Model) and [f.name for f in model.fields] == ["lr"]


def test_keywords_are_ordinary_names_in_values_and_fields() -> None:
    program = ok("model = 3\ntrain M on d:\n    model = on\n    from = 1\n")
    assert isinstance(program.statements[0], ast.Constant)
    train = program.statements[1]
    assert isinstance(train, ast.Train) and [f.name for f in train.fields] == ["model", "from"]


def test_blank_and_comment_lines_never_close_blocks() -> None:
    model = ok("model M:\n\n# c\n    input_shape = (8,)\n  # c\n\n    x = 1\n").statements[0]
    assert isinstance(model, ast.Model) and len(model.fields) == 2


def test_crlf_and_bom_sources_parse_the_same() -> None:
    plain = ok(SAMPLE)
    assert strip_spans(ok("\ufeff" + SAMPLE.replace("\n", "\r\n"))) == strip_spans(plain)
    assert strip_spans(ok(SAMPLE.replace("\n", "\r"))) == strip_spans(plain)


def test_empty_and_comment_only_sources() -> None:
    assert ok("").statements == ()
    assert ok("# only a comment\n\n").comments[0].own_line


# ---------------------------------------------------------------- errors, exact places


def test_p001_tab_indent() -> None:
    source = "model Net:\n    input_shape = (8,)\n    def forward(x):\n\tx -> dense(4)\n"
    assert found(source) == [("P001", 4, 1)]
    assert "tab" in only(source).message


def test_p002_unexpected_indentation() -> None:
    assert found("model M:\n    a = 1\n        b = 2\n        c = 3\n") == [("P002", 3, 9)]
    assert found("model M:\n    a = 1\n  b = 2\n") == [("P002", 3, 3)]
    _, diagnostics = parse_program("  x = 1\n")  # not dedented by the helper
    assert [(d.code, str(d.span)) for d in diagnostics] == [("P002", "1:3")]


def test_p002_recovers_the_misindented_lines() -> None:
    program, _ = parse("model M:\n    a = 1\n        b = 2\n    c = 3\n")
    model = program.statements[0]
    assert isinstance(model, ast.Model) and [f.name for f in model.fields] == ["a", "b", "c"]


def test_p003_bad_continuation() -> None:
    diag = only("model N:\n    def forward(x):\n        x -> dense(4)\n      -> dense(2)\n")
    assert (diag.code, str(diag.span)) == ("P003", "4:7")
    assert "continu" in diag.message and "indent" in diag.message


def test_p004_unterminated_string() -> None:
    diag = only('model N:\n    def forward(x):\n        x -> f()\n    lr = "0.1\n')
    assert (diag.code, str(diag.span)) == ("P004", "4:10")
    assert "unterminated" in diag.message and diag.hint


def test_p005_unclosed_bracket() -> None:
    diag = only("model N:\n    def forward(x):\n        x -> dense(4\n")
    assert (diag.code, str(diag.span)) == ("P005", "3:19")
    assert diag.message == "expected ')' to close '(' opened at 3:19"
    assert found("t = [1, 2\n") == [("P005", 1, 5)]
    assert found("t = (1, 2\n") == [("P005", 1, 5)]


def test_p005_does_not_swallow_the_following_blocks() -> None:
    source = "model A:\n    x = f(1\nmodel B:\n    y = [2\n"
    assert found(source) == [("P005", 2, 10), ("P005", 4, 9)]


@pytest.mark.parametrize(
    ("source", "line", "column", "words"),
    [
        ("x = 1 2\n", 1, 7, "after the value"),
        ("x = \n", 1, 4, "expected a value"),
        ("x = (1 2)\n", 1, 8, "expected ','"),
        ("x = f(a=1, 2)\n", 1, 12, "positional argument follows keyword"),
        ("x = f(1).\n", 1, 10, "suffix"),
        ("x = 1:\n", 1, 6, "only block headers"),
        ("model M: x = 1\n    a = 1\n", 1, 10, "after ':'"),
        ("model:\n    a = 1\n", 1, 6, "model name"),
        ("train M d:\n    a = 1\n", 1, 9, "'on'"),
        ("train_gan G D on d:\n    a = 1\n", 1, 13, "'and'"),
        ("model M:\n    def backward(x):\n        x -> f()\n", 2, 9, "forward"),
        ("model M:\n    def forward(x):\n        dense(x, 4)\n", 3, 9, "expected a chain"),
        ("model M:\n    def forward(x):\n        x -> -> f()\n", 3, 14, "operation after '->'"),
        ("model M:\n    def forward(x):\n        return\n", 3, 15, "after 'return'"),
        ("experiment E:\n    seed 1\n", 2, 5, "expected a field"),
        ("dataset d:\n    size = 1\n    from a.b\n", 3, 5, "first line"),
        ("dataset d:\n    from a.b(1)\n", 2, 13, "after the 'from' name"),
        ("(1, 2)\n", 1, 1, "expected a statement"),
        ("use\n", 1, 4, "module name"),
    ],
)
def test_p006_syntax_errors(source: str, line: int, column: int, words: str) -> None:
    diag = only(source)
    assert diag.span is not None
    assert (diag.code, diag.span.line, diag.span.column) == ("P006", line, column), diag
    assert words in diag.message


def test_p006_second_forward() -> None:
    source = (
        "model M:\n    def forward(x):\n        x -> f()\n    def forward(y):\n        y -> g()\n"
    )
    assert found(source) == [("P006", 4, 5)]
    assert "already has a forward" in only(source).message


def test_p007_unknown_statement_with_suggestion() -> None:
    diag = only("modle Net:\n    input_shape = (8,)\n")
    assert (diag.code, str(diag.span)) == ("P007", "1:1")
    assert "modle" in diag.message and diag.hint == "did you mean 'model'?"
    assert found("frobnicate\n") == [("P007", 1, 1)]
    assert "chains belong" in only("x -> f()\n").message
    assert "only allowed inside a model" in only("def forward(x):\n    x -> f()\n").message


def test_p008_bad_number() -> None:
    assert found("size = 1__0\n") == [("P008", 1, 8)]


def test_p009_bad_character_without_cascade() -> None:
    assert found("model M:\n    def forward(x):\n        x -> dense(4) $\n") == [("P009", 3, 23)]
    assert found("x = 3 $ 4\n") == [("P009", 1, 7)]  # the line is reported once


def test_p010_missing_colon_still_parses_the_block() -> None:
    program, diagnostics = parse("model Net\n    input_shape = (8,)\n")
    assert [(d.code, str(d.span)) for d in diagnostics] == [("P010", "1:10")]
    model = program.statements[0]
    assert isinstance(model, ast.Model) and model.fields[0].name == "input_shape"
    assert found("train A on b\n    epochs = 1\n") == [("P010", 1, 13)]


def test_p011_limits() -> None:
    program, diagnostics = parse_program("x = 1\n" * (1024 * 1024 // 6 + 1))
    assert program is None and [d.code for d in diagnostics] == ["P011"]
    assert found("x = " + "(" * 65 + "1" + ")" * 65) == [("P011", 1, 69)]
    assert found("x = " + "(" * 64 + "1" + ")" * 64) == []
    assert found("x = " + "a" * 257) == [("P011", 1, 5)]


def test_p011_flat_operator_chains_are_bounded_too() -> None:
    assert found("x = " + "1 + " * 64 + "1") == []
    assert found("x = " + "1 + " * 65 + "1")[0][0] == "P011"


def test_p012_statement_after_return() -> None:
    source = """\
        model M:
            def forward(x):
                return x
                extra = dense(x, 2)
                more = dense(x, 2)
        """
    assert found(source) == [("P012", 4, 9)]


def test_p013_empty_block() -> None:
    assert found("model Net:\nmodel Other:\n    def forward(x):\n        x -> f()\n") == [
        ("P013", 1, 1)
    ]
    assert found("model M:\n    def forward(x):\n    lr = 1\n") == [("P013", 2, 5)]
    assert found("dataset d:\n    # only a comment\n") == [("P013", 1, 1)]


def test_p014_bad_escape() -> None:
    assert found('name = "a\\q"\n') == [("P014", 1, 10)]


def test_p015_nul() -> None:
    assert found("x = 1\x00\n") == [("P015", 1, 6)]


def test_independent_errors_are_all_reported() -> None:
    source = """\
        modle A:
            x = 1
        model B:
            input_shape = (8,
        model C:
            def forward(x):
                x -> -> f()
        y = 1 2
        """
    assert found(source) == [("P007", 1, 1), ("P005", 4, 19), ("P006", 7, 14), ("P006", 8, 7)]


def test_partial_program_is_returned_with_errors() -> None:
    program, diagnostics = parse("a = 1\nb = (\nmodel M:\n    input_shape = (8,)\n")
    assert [d.code for d in diagnostics] == ["P005"]
    assert [type(s).__name__ for s in program.statements] == ["Constant", "Model"]


def test_diagnostics_are_capped() -> None:
    _, diagnostics = parse("x = 1 2\n" * 500)
    assert len(diagnostics) == MAX_DIAGNOSTICS + 1 and diagnostics[-1].code == "P011"


def test_messages_are_lowercase_with_hints() -> None:
    _, diagnostics = parse("modle A:\n  x = 1\nb = (1\nc = 'x\n")
    for diag in diagnostics:
        assert diag.message[0].islower() or diag.message[0] in "'", diag.message
        assert diag.hint


# ---------------------------------------------------------------- printer


def test_dump_ast_is_json_with_spans() -> None:
    dumped = dump_ast(ok(SAMPLE))
    text = json.dumps(dumped)
    assert dumped["node"] == "AuraneProgram"
    statements = dumped["statements"]
    assert isinstance(statements, list)
    first = statements[0]
    assert isinstance(first, dict)
    assert first["span"] == {"line": 1, "column": 1, "end_line": 1, "end_column": 10}
    assert '"text": "1e-3"' in text


def test_dump_ast_writes_non_finite_floats_as_strings() -> None:
    # the parser refuses 1e999 (P008); an AST built by hand may still hold one
    number = value_of("x = 1e300")
    assert isinstance(number, ast.Number)
    dumped = dump_ast(ast.Number(float("inf"), "1e999", number.span))
    assert dumped["value"] == "inf"
    json.dumps(dumped, allow_nan=False)


def test_strip_spans_ignores_layout_but_not_meaning() -> None:
    a = ok("x = [1_000, 2]  # c\n")
    b = ok("x = [\n    1000,\n    2,\n]  # c\n")
    assert strip_spans(a) == strip_spans(b)
    assert strip_spans(ok("x = 1\n")) != strip_spans(ok("x = 1.0\n"))
    assert strip_spans(ok("x = 1  # a\n")) != strip_spans(ok("x = 1  # b\n"))


# ---------------------------------------------------------------- corpus


@pytest.mark.parametrize("name", corpus_params("valid"))
def test_corpus_valid_files_parse(name: str) -> None:
    path = corpus_dir("valid") / name
    program, diagnostics = parse_program(path.read_text(encoding="utf-8"), str(path))
    assert diagnostics == [] and program is not None and program.statements


def _invalid_expectations() -> dict[str, Any]:
    path = CORPUS / "invalid" / "expected.json"
    return json.loads(path.read_text()) if path.is_file() else {}


@pytest.mark.parametrize("name", corpus_params("invalid"))
def test_corpus_invalid_files(name: str) -> None:
    path = corpus_dir("invalid") / name
    expected = _invalid_expectations()[name]
    _, diagnostics = parse_program(path.read_text(encoding="utf-8"), str(path))
    if expected["stage"] != "parse":
        assert diagnostics == [], "later-stage errors must parse cleanly"
        return
    assert len(diagnostics) == 1, diagnostics
    (diag,) = diagnostics
    assert diag.stage == "parse" and diag.span is not None
    assert diag.span.line in expected["line"]
    assert diag.span.column in expected["column"]
    assert any(w.lower() in diag.message.lower() for w in expected["contains"])


@requires_shared
def test_the_four_parse_stage_corpus_files_are_present() -> None:
    expected = _invalid_expectations()
    parse_stage = {name for name, e in expected.items() if e["stage"] == "parse"}
    assert parse_stage >= {
        "tab_indent.aur",
        "bad_continuation_indent.aur",
        "unclosed_call.aur",
        "unterminated_string.aur",
    }


# ---------------------------------------------------------------- limits: depth ladders (K-LIM)

LADDER = [1, 10, 100, 64, 65, 10**4, 10**5]
NESTING = {
    "parens": lambda n: "(" * n + "1" + ")" * n,
    "lists": lambda n: "[" * n + "1" + "]" * n,
    "tuples": lambda n: "(" * n + "1" + ",)" * n,
    "calls": lambda n: "f(" * n + "1" + ")" * n,
    "keywords": lambda n: "f(a=" * n + "1" + ")" * n,
    "suffix_args": lambda n: "f().s(" * n + "1" + ")" * n,
    "unary": lambda n: "-" * n + "1",
    "power": lambda n: "2 ** " * n + "1",
    "sum": lambda n: "1 + " * n + "1",
    "unclosed": lambda n: "(" * n,
}


@pytest.mark.parametrize("depth", LADDER)
@pytest.mark.parametrize("construct", sorted(NESTING))
def test_depth_ladder(construct: str, depth: int) -> None:
    _, diagnostics = parse_program("x = " + NESTING[construct](depth) + "\n")
    codes = [d.code for d in diagnostics]
    if construct == "unclosed":
        assert codes == (["P005"] if depth <= 64 else ["P011"])
    else:
        assert codes == ([] if depth <= 64 else ["P011"])


@pytest.mark.parametrize("depth", [1, 100, 10**4])
def test_flat_constructs_have_no_depth_limit(depth: int) -> None:
    chain = "model M:\n    def forward(x):\n        x" + " -> f()" * depth + ".relu" * depth
    assert parse_program(chain)[1] == []
    assert parse_program("x = [" + "1, " * depth + "]")[1] == []


def test_indentation_staircase_is_flat() -> None:
    staircase = "".join(" " * i + "x = 1\n" for i in range(1, 1400))
    _, diagnostics = parse_program("x = 1\n" + staircase)
    assert diagnostics and {d.code for d in diagnostics} <= {"P002", "P011"}
