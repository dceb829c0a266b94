"""Constant resolution: scoping, forward references, cycles, arithmetic."""

from __future__ import annotations

import pytest

from tests.helpers import codes, errors, front, only_error, where


def test_global_and_model_scopes_and_forward_reference() -> None:
    result = front("""
        width = 32
        model A:
            width = 16
            input_shape = (n,)
            n = 12
            def forward(x):
                x -> dense(width)
        model B:
            input_shape = (4,)
            def forward(x):
                x -> dense(width)
    """)
    assert result.ok, result.diagnostics
    assert result.graphs["A"].output_value.sample_shape == (16,)
    assert result.graphs["A"].input_value.sample_shape == (12,)
    assert result.graphs["B"].output_value.sample_shape == (32,)


def test_model_constants_do_not_leak() -> None:
    found = only_error("""
        model A:
            hidden = 8
            input_shape = (4,)
            def forward(x):
                x -> dense(hidden)
        model B:
            input_shape = (4,)
            def forward(x):
                x -> dense(hidden)
    """)
    assert found.code == "R001" and where(found) == (9, 20)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("4 * 8", 32),
        ("2 ** 5", 32),
        ("70 // 2 - 3", 32),
        ("-(-32)", 32),
        ("1_0 * 3 + 2", 32),
        ("(40 % 8) + 32", 32),
    ],
)
def test_arithmetic(expr: str, expected: int) -> None:
    result = front(f"""
        n = {expr}
        model A:
            input_shape = (2,)
            def forward(x):
                x -> dense(n)
    """)
    assert result.ok, result.diagnostics
    assert result.graphs["A"].output_value.sample_shape == (expected,)


def test_true_division_gives_float_and_integer_argument_refuses_it() -> None:
    found = only_error("""
        model A:
            input_shape = (2,)
            def forward(x):
                x -> dense(8 / 2)
    """)
    assert found.code == "S003" and where(found) == (4, 20)
    assert "//" in (found.hint or "")


def test_cycle_is_reported_once() -> None:
    found = errors("""
        a = b
        b = a
        model A:
            input_shape = (a,)
            def forward(x):
                x -> dense(2)
    """)
    assert [d.code for d in found] == ["R003"]
    assert "cycl" in found[0].message


def test_duplicate_constant() -> None:
    found = only_error("""
        a = 1
        a = 2
    """)
    assert found.code == "R002" and where(found) == (2, 1)


@pytest.mark.parametrize("expr", ["1 / 0", "2 ** 100000", "'a' * 2", "1e308 * 10", "0 ** -1"])
def test_bad_arithmetic_is_located(expr: str) -> None:
    found = only_error(f"n = {expr}\n")
    assert found.code == "R004"
    assert found.span is not None and found.span.line == 1


def test_undefined_constant_hint() -> None:
    found = only_error("""
        width = 8
        model A:
            input_shape = (2,)
            def forward(x):
                x -> dense(widht)
    """)
    assert found.code == "R001" and "width" in (found.hint or "")


def test_catalog_fields_take_bare_names() -> None:
    assert "R001" not in codes("""
        dataset d:
            from aurane.data.SyntheticRegression
            size = 8
            features = 2
        model M:
            input_shape = (2,)
            input_dtype = float32
            def forward(x):
                x -> dense(1)
        train M on d:
            loss = mse
            optimizer = sgd(lr=0.1, momentum=0.9)
            metrics = [mae]
    """)


def test_resolution_shares_unchanged_nodes_and_rewrites_only_references() -> None:
    from aurane.semantics.constants import resolve_program
    from aurane.syntax import ast
    from aurane.syntax.parser import parse_program

    source = (
        "width = 8\n"
        "model A:\n"
        "    input_shape = (4,)\n"
        "    def forward(x):\n"
        "        x -> dense(16).relu\n"
        "        y = dense(x, width, bias=false).leaky_relu(0.2)\n"
        "        return y\n"
    )
    program, found = parse_program(source, "a.aur")
    assert program is not None and not found
    resolved, found = resolve_program(program)
    assert not found
    (model,) = program.models
    (new_model,) = resolved.models
    assert model.forward is not None and new_model.forward is not None
    plain, with_constant, returned = model.forward.body
    new_plain, new_with_constant, new_returned = new_model.forward.body
    # nothing to resolve: the very same objects, not copies
    assert new_plain is plain and new_returned is returned
    assert new_model.fields == model.fields
    # a constant reference becomes a literal at the reference's span; its siblings are shared
    assert isinstance(with_constant, ast.Assign) and isinstance(new_with_constant, ast.Assign)
    call, new_call = with_constant.value, new_with_constant.value
    assert isinstance(call, ast.Call) and isinstance(new_call, ast.Call)
    reference, literal = call.args[1], new_call.args[1]
    assert isinstance(reference, ast.Name) and isinstance(literal, ast.Number)
    assert (literal.value, literal.span) == (8, reference.span)
    assert new_call.args[0] is call.args[0]
    assert new_call.keywords is call.keywords and new_call.suffixes is call.suffixes
    # resolving the resolved program changes nothing at all
    again, _ = resolve_program(resolved)
    assert again.models[0].forward is new_model.forward
