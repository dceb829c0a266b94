"""optimize_ast on the AST and IR (no torch): what each rewrite removes and what it keeps."""

from __future__ import annotations

import pytest

from aurane import optimize_ast
from aurane.ir.graph import Graph
from aurane.ir.verify import verify
from aurane.optimize import LEVEL_1, LEVEL_2, REWRITES
from aurane.optimize.shapes import iter_nodes, lower_quietly
from aurane.syntax import ast
from aurane.syntax.printer import strip_spans
from tests.conftest import VALID, corpus_files
from tests.helpers import front
from tests.optimize.programs import CASES, Case


def resolved(source: str) -> ast.AuraneProgram:
    result = front(source)
    assert result.ok, result.diagnostics
    assert result.resolved is not None
    return result.resolved


def graphs_of(program: ast.AuraneProgram) -> dict[str, Graph]:
    graphs = lower_quietly(program)
    assert graphs is not None
    for graph in graphs.values():
        verify(graph)
    return graphs


def ops(program: ast.AuraneProgram, model: str = "Net") -> tuple[str, ...]:
    return tuple(node.op for node in graphs_of(program)[model].nodes)


def test_levels_are_explicit_ordered_tuples() -> None:
    level_1 = ("drop_zero_dropout", "collapse_repeated_relu")
    # shape rewrites first: dropping a reshape can make two ReLUs adjacent for level 1
    level_2 = ("drop_identity_reshape", "drop_rank1_flatten", *level_1)
    names = {level: tuple(r.__name__ for r in rewrites) for level, rewrites in REWRITES.items()}
    assert names == {0: (), 1: level_1, 2: level_2}
    assert all(isinstance(rewrites, tuple) for rewrites in REWRITES.values())
    assert REWRITES[1] == LEVEL_1 and REWRITES[2] == LEVEL_2


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_rewrites_as_expected(case: Case) -> None:
    program = resolved(case.source)
    assert ops(program) == case.ops0
    optimized = optimize_ast(program, case.level)
    assert ops(optimized) == case.ops
    assert ops(program) == case.ops0  # the input program is not modified
    # parameter counts per parametric node are untouched
    before = [(n.id, n.parameters) for n in graphs_of(program)["Net"].nodes if n.parameters]
    after = [(n.id, n.parameters) for n in graphs_of(optimized)["Net"].nodes if n.parameters]
    assert before == after


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_ir_verifies_after_each_rewrite(case: Case) -> None:
    program = resolved(case.source)
    for rewrite in REWRITES[2]:
        program = rewrite(program)
        graphs_of(program)  # lowers without errors and verifies


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_optimizing_is_idempotent(case: Case) -> None:
    once = optimize_ast(resolved(case.source), 2)
    assert strip_spans(optimize_ast(once, 2)) == strip_spans(once)


@pytest.mark.parametrize(
    "body",
    [
        "x -> dense(8) -> dropout(0.1) -> dense(2)",  # a real dropout
        "x -> dense(8) -> dropout(0).residual -> dense(2)",  # x + x, not x
        "x -> dropout(0)",  # the only step: kept, the chain must keep one
        "h = dropout(x, 0)\n    return dense(h, 2)",  # graph form: not rewritten
        "x -> dense(6).relu.residual -> relu()",  # relu of (a + relu(b)): needed
        "x -> dense(8).leaky_relu(0.2).leaky_relu(0.2)",  # not idempotent
        "x -> dense(8).relu -> dense(8) -> relu()",  # not adjacent
        "x -> dense(8) -> reshape(2, 4) -> flatten()",  # both change the shape
        "x -> dense(8).sigmoid.sigmoid",
    ],
)
def test_unproven_steps_are_kept(body: str) -> None:
    source = (
        "model Net:\n    input_shape = (6,)\n    def forward(x):\n        "
        + body.replace("\n    ", "\n        ")
        + "\n"
    )
    program = resolved(source)
    for level in (1, 2):
        assert ops(optimize_ast(program, level)) == ops(program)


def test_unresolved_names_are_not_reasoned_about() -> None:
    from aurane.syntax.parser import parse_program

    source = (
        "rate = 0\nmodel Net:\n    input_shape = (6,)\n    def forward(x):\n"
        "        x -> dense(8) -> dropout(rate) -> dense(2)\n"
    )
    parsed, _ = parse_program(source, "t.aur")
    assert parsed is not None
    assert strip_spans(optimize_ast(parsed, 1)) == strip_spans(parsed)
    assert ops(optimize_ast(resolved(source), 1)) == ("dense", "dense")


def test_block_reshape_kept_unless_identity_at_every_call() -> None:
    source = """\
        model Block:
            def forward(x):
                x -> reshape(4, 2) -> flatten()
        model Net:
            input_shape = (8,)
            def forward(x):
                a = Block(x)
                b = reshape(x, 4, 2)
                c = Block(b)
                return add(a, c)
        """
    program = resolved(source)
    optimized = optimize_ast(program, 2)
    sub_ops = sorted(
        tuple(n.op for n in node.subgraph.nodes)
        for _, node in iter_nodes(graphs_of(optimized))
        if node.subgraph is not None
    )
    # (8,) -> reshape(4, 2) changes the shape at the first call, so it stays for both
    assert sub_ops == [("reshape", "flatten"), ("reshape", "flatten")]


def test_block_reshape_removed_when_identity_at_every_call() -> None:
    source = """\
        model Block:
            def forward(x):
                x -> reshape(4, 2) -> dense(2)
        model Net:
            input_shape = (4, 2)
            def forward(x):
                x -> Block() -> Block()
        """
    optimized = optimize_ast(resolved(source), 2)
    sub_ops = {
        tuple(n.op for n in node.subgraph.nodes)
        for _, node in iter_nodes(graphs_of(optimized))
        if node.subgraph is not None
    }
    assert sub_ops == {("dense",)}


def test_program_with_errors_gets_no_shape_rewrites() -> None:
    from aurane.syntax.parser import parse_program

    source = (
        "model Net:\n    input_shape = (6,)\n    def forward(x):\n"
        "        x -> reshape(6) -> conv2d(3)\n"
    )
    parsed, _ = parse_program(source, "t.aur")
    assert parsed is not None
    assert strip_spans(optimize_ast(parsed, 2)) == strip_spans(parsed)


@pytest.mark.parametrize("level", [-1, 3, True, 1.0, "1", None])
def test_bad_levels_are_refused(level: object) -> None:
    with pytest.raises(ValueError):
        optimize_ast(resolved(CASES[0].source), level)  # type: ignore[arg-type]


def test_not_a_program_is_refused() -> None:
    with pytest.raises(TypeError):
        optimize_ast("model", 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", corpus_files("valid"))
@pytest.mark.parametrize("level", [1, 2])
def test_corpus_lowers_and_verifies_after_every_rewrite(name: str, level: int) -> None:
    program = resolved((VALID / name).read_text())
    expected = {
        model: sum(n.parameters for n in g.nodes) for model, g in graphs_of(program).items()
    }
    for rewrite in REWRITES[level]:
        program = rewrite(program)
        got = {model: sum(n.parameters for n in g.nodes) for model, g in graphs_of(program).items()}
        assert got == expected
