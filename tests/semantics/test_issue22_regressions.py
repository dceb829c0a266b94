"""Issue 22 ("nothing that check accepts fails when it runs"), item 1: one named test per
case of the issue. An accepted program must compile and run as the IR says (the
differential runner's property: train mode with backward at batch 2, eval at batch 1,
every value's shape and dtype and every parameter count compared through verify); a
refused one must be refused at its span with help that names the right fix."""

from __future__ import annotations

import textwrap

import pytest

from aurane.tools.differential import run_accepted
from aurane.verify import load_generated
from tests.helpers import errors

torch = pytest.importorskip("torch")


def net(body: str, shape: str = "(3, 8, 8)", dtype: str = "", blocks: str = "") -> str:
    lines = ["model Net:", f"    input_shape = {shape}"]
    if dtype:
        lines.append(f"    input_dtype = {dtype}")
    lines.append("    def forward(x):")
    lines += ["        " + line for line in textwrap.dedent(body).strip().splitlines()]
    return textwrap.dedent(blocks).lstrip() + "\n".join(lines) + "\n"


def runs(source: str) -> str:
    """The generated code of an accepted program that ran as the IR says."""
    gen = load_generated(source, "issue22.aur")
    assert run_accepted(gen, "Net", 0) is None, gen.code
    return gen.code


def refused(source: str) -> tuple[str, int, str, str]:
    found = errors(source)
    assert found, "accepted"
    first = found[0]
    assert first.span is not None
    return first.code, first.span.line, first.message, first.hint or ""


# -- internal errors (exit 123) are diagnostics now --------------------------------------


@pytest.mark.parametrize(
    ("op", "count"), [("scaled_dot_product_attention", 3), ("matmul", 2)]
)  # fmt: skip
def test_attention_and_matmul_as_chain_steps_are_s017_not_internal_errors(
    op: str, count: int
) -> None:
    code, line, message, hint = refused(net(f"x -> {op}()", shape="(2, 4, 8)"))
    assert (code, line) == ("S017", 4)
    assert f"takes {count} input tensors and cannot be a chain step" in message
    assert hint.startswith(f"write it in graph form: y = {op}(")


def test_positional_encoding_in_a_numbered_container_is_s045_not_a_compile_crash() -> None:
    code, line, message, _ = refused(net("x -> positional_encoding(4) as pe.0", shape="(4, 8)"))
    assert (code, line) == ("S045", 4) and "cannot have the numbered child 'pe.0'" in message
    runs(net("x -> positional_encoding(4) as enc.pe -> dense(8) as enc.proj", shape="(4, 8)"))


# -- accepted though torch fails: refused now ---------------------------------------------


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_reflect_and_replicate_pad_of_a_bool_input_is_t003(mode: str) -> None:
    source = net(f'x -> pad((1, 1, 1, 1), mode="{mode}")', dtype="bool")
    code, line, message, hint = refused(source)
    assert (code, line) == ("T003", 5) and "needs a numeric input, got bool" in message
    assert 'mode="constant"' in hint
    runs(net('x -> pad((1, 1, 1, 1), mode="circular")', dtype="bool"))  # torch has this one


# -- refused though torch runs it: accepted now ---------------------------------------------


def test_repeat_of_a_block_adding_a_parameter_without_input_dtype() -> None:
    """The first copy makes the parameters' dtype of an unknown one; the message that
    refused it said 'shape (1, 8) became (1, 8)'."""
    block = """
    model B:
        def forward(x):
            p = parameter((1, 8))
            return add(x, p)

    """
    runs(net("x -> repeat(B, 3)", shape="(1, 8)", blocks=block))
    scale = """
    model B:
        def forward(x):
            x -> multiply(0.5)

    """
    code, _, message, _ = refused(net("x -> repeat(B, 2)", "(8,)", "int64", scale))
    assert code == "T001" and "dtype to itself: int64 became float32" in message


def test_float_block_parameter_as_a_tensor_constant() -> None:
    block = """
    model B(sc: float):
        def forward(x):
            return multiply(x, sc)

    """
    code = runs(net("x -> B(0.5)", shape="(8,)", blocks=block))
    assert "x * self.sc" in code


def test_glu_as_a_suffix() -> None:
    code = runs(net("x -> dense(8).glu", shape="(8,)"))
    assert "F.glu(" in code


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_non_constant_pad_of_every_axis_of_a_one_dimensional_sample(mode: str) -> None:
    runs(net(f'x -> pad((1, 2), mode="{mode}")', shape="(8,)"))
    runs(net(f'x -> pad((1, 1, 2, 2, 1, 1), mode="{mode}")', shape="(3, 5, 5)"))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_negative_pads_in_non_constant_modes(mode: str) -> None:
    runs(net(f'x -> pad((-1, 2, 1, -2), mode="{mode}")'))


def test_integer_arithmetic() -> None:
    code = runs(
        net(
            """
            a = multiply(x, x)
            b = subtract(a, 3)
            c = divide(b, 2)
            return multiply(c, 0.5)
            """,
            shape="(8,)",
            dtype="int64",
        )
    )
    assert "a = x * x" in code
    gen = load_generated(net("x -> multiply(2) -> divide(2)", "(8,)", "int64"), "ints.aur")
    dtypes = [v.dtype for v in gen.graphs["Net"].values]
    assert dtypes == ["int64", "int64", "float32"]
    code, _, message, _ = refused(net("x -> subtract(1)", "(8,)", "bool"))
    assert code == "T003" and "no subtraction of booleans" in message


def test_drop_path_of_a_per_sample_scalar() -> None:
    runs(net("x -> sum(dim=1) -> drop_path(0.5)", shape="(8,)"))


# -- item 4: help that names the right fix -------------------------------------------------


def test_max_of_a_block_parameter_is_computed_not_r005() -> None:
    """`conv2d(max(8, c // 4), ...)` was R005 "write the call where it is used" (it is)."""
    block = """
    model B(c):
        def forward(x):
            h = x -> conv2d(max(8, c // 4), kernel=1)
            return multiply(h, min(2, c))

    """
    code = runs(net("x -> B(16) -> B(64)", shape="(3, 4, 4)", blocks=block))
    assert "nn.Conv2d(in_channels, max(8, c // 4), kernel_size=1)" in code
    assert "h * min(2, self.c)" in code


def test_r005_names_what_the_call_is() -> None:
    code, _, message, hint = refused("w = foo(3)\n" + net("x -> dense(w)", "(8,)"))
    assert code == "R005" and "cannot call 'foo'" in message and "min" in hint
    code, _, message, hint = refused("w = dense(3)\n" + net("x -> dense(w)", "(8,)"))
    assert code == "R005" and "'dense' is an operation" in message and "in forward" in hint


def test_a_constant_computed_inside_forward_says_where_constants_go() -> None:
    """It was S017 "graph calls take their input tensor first", and R001 at each use."""
    found = errors(net("k = 3 * 2\nx -> dense(k)", "(8,)"))
    assert [d.code for d in found] == ["S017"], found
    assert "'k' is computed from constants" in found[0].message
    assert "before 'def forward'" in (found[0].hint or "")


def test_an_undefined_tensor_in_a_chain_is_not_told_to_be_a_constant() -> None:
    code, _, message, hint = refused(net("h = dense(x, 8)\nx -> multiply(h)", "(8,)"))
    assert (code, message) == ("R001", "'h' is a tensor, not a constant")
    assert hint == "pass a tensor as an input, in graph form: y = multiply(x, h)"
    code, _, message, hint = refused(net("x -> multiply(hh)", "(8,)"))
    assert code == "R001" and "a tensor assigned earlier in forward" in hint


def test_s001_help_points_at_the_catalog() -> None:
    code, _, _, hint = refused(net("x -> zzzz()", "(8,)"))
    assert code == "S001" and hint == "see docs/catalog.md for the operations"


def test_acc_suggests_accuracy() -> None:
    source = (
        "dataset d:\n    from aurane.data.SyntheticImages\n    size = 8\n"
        "    image_size = (1, 4, 4)\n\n"
        + net("x -> flatten() -> dense(10)", "(1, 4, 4)")
        + "\ntrain Net on d:\n    metrics = [acc]\n"
    )
    code, _, _, hint = refused(source)
    assert code == "S011" and hint == "did you mean 'accuracy'?"


def test_t001_on_a_convolution_residual_suggests_a_convolution() -> None:
    code, _, _, hint = refused(net("h = conv2d(x, 8, kernel=3, padding=1)\nreturn add(h, x)"))
    assert code == "T001" and "1x1 convolution on the shortcut: conv2d(8, kernel=1)" in hint
    _, _, _, hint = refused(net("h = dense(x, 4)\nreturn add(h, x)", "(8,)"))
    assert "dense layer" in hint


def test_verify_reports_no_shape_for_a_value_forward_never_computed() -> None:
    """Forward raised at the statement; verify compared the stale value the statement's
    name still held (T110) besides reporting the error."""
    from aurane.verify import verify_model

    gen = load_generated(net("x -> dense(4) -> dense(6)", "(8,)"), "v.aur")
    broken = gen.code.replace("x = self.dense2(x)", "x = self.dense2(x[:, :3])")
    module = type(gen.module)("broken")
    exec(compile(broken, "<aurane:v.aur>", "exec"), module.__dict__)
    gen.module, gen.code = module, broken
    report = verify_model(gen, "Net")
    assert [d.code for d in report.diagnostics] == ["T113"], report.diagnostics
