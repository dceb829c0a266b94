"""Regression tests for the bugs the differential fuzzer found (docs/fuzzing.md).

Each program was accepted while torch failed on it, or refused while torch runs it.
"""

from __future__ import annotations

import pytest

from aurane.stages import CompilationError
from aurane.verify import verify_text
from tests.helpers import errors

pytest.importorskip("torch")


def _model(shape: str, body: str) -> str:
    return f"model Net:\n    input_shape = {shape}\n    def forward(x):\n        {body}\n"


def _refused(text: str) -> tuple[str, int, int]:
    with pytest.raises(CompilationError) as caught:
        verify_text(text, "found.aur")
    first = next(d for d in caught.value.diagnostics if d.is_error)
    assert first.span is not None
    return first.code, first.span.line, first.span.column


def _runs(text: str) -> None:
    for report in verify_text(text, "found.aur"):
        assert report.ok, [d.message for d in report.diagnostics]


def test_adaptive_pool_of_a_1d_input_takes_no_none() -> None:
    # torch's adaptive_*_pool1d refuses None; 2-D and 3-D pools keep the axis
    text = _model("(3, 8)", "x -> adaptive_avg_pool((none,))")
    assert _refused(text)[:2] == ("S004", 4)
    _runs(_model("(3, 8)", "x -> adaptive_max_pool((4,))"))
    _runs(_model("(3, 8, 6)", "x -> adaptive_max_pool((none, 2))"))


def test_adaptive_pool_tuple_has_one_entry_per_axis() -> None:
    # torch broadcasts a bare int only: output_size=(3,) on a 2-D input fails there
    assert _refused(_model("(3, 8, 6)", "x -> adaptive_avg_pool((3,))"))[0] == "T002"
    _runs(_model("(3, 8, 6)", "x -> adaptive_avg_pool(3)"))


def test_avgpool_3d_input_smaller_than_the_kernel() -> None:
    # avg_pool3d alone checks the unpadded input against the kernel, padding or not
    text = _model("(3, 2, 1, 3)", "x -> avgpool(2, stride=2, padding=1, ceil_mode=true)")
    assert _refused(text)[:2] == ("T005", 4)
    _runs(_model("(3, 2, 1, 3)", "x -> maxpool(2, stride=2, padding=1, ceil_mode=true)"))
    _runs(_model("(3, 2, 2, 3)", "x -> avgpool(2, stride=2, padding=1)"))


def test_pixel_shuffle_keeps_leading_axes() -> None:
    _runs(_model("(2, 8, 3, 4)", "x -> pixel_shuffle(2) -> flatten() -> dense(3)"))
    assert _refused(_model("(8, 3)", "x -> pixel_shuffle(2)"))[0] == "T002"
    # torch's pixel_shuffle of a non-contiguous 5-D tensor fails: the code makes it contiguous
    _runs(_model("(2, 3, 4, 5)", "x -> layer_norm(dim=-4) -> pixel_shuffle(1)"))


def test_pixel_shuffle_backward_takes_a_non_contiguous_gradient() -> None:
    # campaign seed 100000006287: layer_norm(dim=1) after a 5-D pixel_shuffle hands its
    # backward a permuted gradient, which torch's pixel_unshuffle of 5 axes refuses
    from aurane.tools.differential import run_accepted
    from aurane.verify import load_generated

    text = _model("(2, 8, 3, 4)", "x -> pixel_shuffle(2) -> layer_norm(dim=1)")
    gen = load_generated(text, "found.aur")
    assert run_accepted(gen, "Net", 0) is None


def test_an_argument_may_be_written_as_its_default_none() -> None:
    _runs(_model("(3, 4)", "x -> mean(dim=none) -> unsqueeze(1)"))
    _runs(_model("(3, 8, 8)", "x -> maxpool(2, stride=none)"))


def test_class_weights_must_match_the_class_count() -> None:
    text = """\
model Net:
    input_shape = (8,)
    def forward(x):
        return dense(x, 3)
dataset d:
    from aurane.data.SyntheticImages
    size = 4
    image_size = (8,)
    num_classes = 3
train Net on d:
    epochs = 1
    loss = cross_entropy(weight=(1.0, 2.0))
"""
    [found] = errors(text)
    assert found.code == "T093" and "2 class weights" in found.message
    assert not errors(text.replace("(1.0, 2.0)", "(1.0, 2.0, 3.0)"))


def test_circular_pad_wraps_around_at_most_once() -> None:
    # torch: "Padding value causes wrapping around more than once"
    assert _refused(_model("(6, 1)", 'x -> pad((1, 2), mode="circular")'))[:2] == ("T005", 4)
    _runs(_model("(6, 2)", 'x -> pad((2, 2), mode="circular")'))


def test_split_into_too_many_pieces_is_refused_without_building_them() -> None:
    # input (2**62,) split by 4: the compiler built a tuple of 2**60 sizes (16 GB, then OOM)
    text = _model("(4611686018427387904,)", "h = split(x, 4, dim=1, index=0)")
    assert _refused(text)[:2] == ("T007", 4)
    assert _refused(_model("(8,)", "h = chunk(x, 1099511627776, dim=1, index=0)"))[0] == "T007"


def test_ceil_mode_pool_may_overhang_a_short_input() -> None:
    # campaign seed 300001487: with ceil_mode torch keeps one window larger than the input
    _runs(_model("(1, 1)", "x -> maxpool((4,), ceil_mode=true)"))
    _runs(_model("(2, 3, 3)", "x -> avgpool(4, stride=2, ceil_mode=true)"))
    assert _refused(_model("(1, 1)", "x -> maxpool((4,))"))[:2] == ("T005", 4)


def test_seed_1008367_circular_pad_with_a_value_is_refused_like_torch() -> None:
    """Campaign seed 1008367: `pad(h, (1, 1), mode="circular", value=0.5)` is S004, and
    torch refuses it too; the pad twin dropped the value outside constant mode, so the
    runner called the rejection a bug."""
    import torch

    from tests.ops.twins import TWINS

    args = {"padding": (1, 1), "mode": "circular"}
    x = torch.randn(2, 2, 1)
    with pytest.raises(RuntimeError, match="circular"):
        TWINS["pad"]({**args, "value": 0.5}, [(2, 1)])(x)
    assert TWINS["pad"]({**args, "value": 0.0}, [(2, 1)])(x).shape == (2, 2, 3)
    text = _model("(4, 8)", 'x -> pad((1, 1), mode="circular", value=0.5)')
    assert _refused(text)[:2] == ("S004", 4)


def test_seed_1016402_divide_by_a_tensor_and_a_constant_is_a_deliberate_rejection() -> None:
    """Campaign seed 1016402: `divide(h, h, constant=0.5)` is S004 (a second tensor or a
    constant, not both); the twin ran x / y dropping the constant, so the runner called it
    a bug. It is listed as deliberate, with its reason."""
    from aurane.tools.differential import DELIBERATE

    text = _model("(1, 1, 3)", "h = divide(x, x, constant=0.5)\n        return h")
    code, line, _ = _refused(text)
    assert (code, line) == ("S004", 4)
    message = "divide takes a second tensor or a constant, not both"
    assert any(entry.matches("S004", "divide", message) for entry in DELIBERATE)


def test_seed_3000190_parameter_init_mode_from_a_block_parameter() -> None:
    # issue 24's call form (init=normal(0.02)) read a block parameter holding "normal" as an
    # initialiser name and refused it (S127); the name is a value, as a literal mode is
    block = (
        "model Scale(mode):\n    def forward(x):\n"
        "        s = parameter((5, 8), init=mode, std=0.5)\n        return add(x, s)\n\n"
    )
    _runs(block + _model("(5, 8)", 'x -> Scale("normal")'))
    _runs(block.replace("std=0.5", "value=1e-6") + _model("(5, 8)", 'x -> Scale("full")'))
    _runs(_model("(5, 8)", "s = parameter((5, 8), init=normal(0.02))\n        y = add(x, s)"))
    assert _refused(_model("(5, 8)", "s = parameter((5, 8), init=xavier_uniform)"))[0] == "S127"


def test_seed_24100064_one_name_tuple_loop_target() -> None:
    # `for a0, in cfg:` (a one-name tuple target, as Python reads it) was P006 "'in' cannot
    # be a loop variable", and `(b,)` inside a target did not parse; the formatter wrote
    # such a target without its comma (another loop)
    from aurane.tools.format import format_text

    body = "for a, in cfg:\n            x -> dense(a)\n"
    body += (
        "        for i, (b,) in enumerate(cfg):\n            x -> dense(b + i)\n        return x"
    )
    text = "cfg = [(4,), (6,)]\n\n" + _model("(3,)", body)
    reports = verify_text(text, "found.aur")
    assert all(r.ok for r in reports)
    assert "for a, in cfg:" in format_text(text) and "for i, (b,) in" in format_text(text)


# -- issue 23's campaign (masks, constructors, buffers) ----------------------------------------


def test_a_constructor_takes_the_model_float_dtype_and_layers_refuse_another() -> None:
    # seed 7000028: full(...) made float32 in a float64 model and a GRU failed in torch
    made = "h = full(2, 3, value=7)\n        y = gru(h, 8)\n        return y"
    float64 = "model Net:\n    input_shape = (3,)\n    input_dtype = float64\n    def forward(x):\n"
    _runs(float64 + "        " + made + "\n")
    cast = 'h = to(x, "float32")\n        y = dense(h, 4)\n        return y'
    assert _refused(float64 + "        " + cast + "\n")[:2] == ("T003", 6)


def test_a_buffer_is_the_dtype_it_declares() -> None:
    # seed 3000211: a causal_mask buffer of dtype float32 was made bool
    body = 'm = buffer((3, 3), init="causal_mask", dtype="float32")\n        return m'
    _runs(_model("(3,)", body))


def test_arange_of_bool_is_refused() -> None:
    # seed 11000070: torch has no arange of booleans
    body = 'p = arange(4, dtype="bool")\n        return p'
    assert _refused(_model("(3,)", body))[:2] == ("S004", 4)


def test_seed_2222000228_graph_form_repeat_in_a_block_reaches_its_block() -> None:
    """``repeat(x, Inner(8), 2)`` inside a parameterised block: the repeated block is
    called (was taken for uncalled and checked with the placeholder ``p0 = 1``, so
    ``dense(p0 // 2)`` was a wrong S004)."""
    text = """model Outer(q):
    def forward(x):
        h = repeat(x, Inner(8), 2)
        return h

model Inner(p0):
    c0 = p0 // 2
    def forward(x):
        x -> dense(c0)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Outer(3)
        return x
"""
    _runs(text)
    assert not errors(text)


def test_seed_78000560_input_shape_of_several_inputs_gives_x_shape() -> None:
    """``x.shape[k]`` in a model whose ``input_shape`` is a dict of inputs: the first
    input's sizes are known (was S126 "the sizes of 'x' are not known here")."""
    text = """model Net:
    input_shape = {x: (1, 4, 3, 3), y: (8,)}
    def forward(x, y):
        h = avgpool(x, x.shape[-4], count_include_pad=true)
        return dense(flatten(h), 6), dense(y, 5)
"""
    _runs(text)
    assert not errors(text)


def test_seed_1000041_a_rolled_block_loop_that_builds_nothing_writes_no_loop() -> None:
    """A block whose loop applies only functions, called with two counts: the rolled class
    wrote ``for i in range(n):`` with no body in ``__init__`` (an IndentationError)."""
    text = (
        "model Loop0(p0: int, n: int):\n"
        "    def forward(x):\n"
        "        for i in range(n):\n"
        "            x -> clamp(min=-1, max=max(1, p0 // 2))\n"
        "        return x\n\n"
        "model Net:\n"
        "    input_shape = (6, 8, 5)\n"
        "    def forward(x):\n"
        "        h1 = Loop0(x, 2, 3)\n"
        "        return h1 -> Loop0(2, n=2)\n"
    )
    _runs(text)
    import torch

    from aurane.compile import compile_source

    code = compile_source(text, filename="found.aur")
    assert code.count("class Loop0(") == 1 and "class Loop0_2(" not in code, code
    namespace: dict[str, object] = {}
    exec(compile(code, "found.py", "exec"), namespace)
    x = torch.randn(2, 6, 8, 5)
    out = namespace["Net"]()(x)  # type: ignore[operator]
    assert torch.equal(out, x.clamp(min=-1, max=1))


def test_seed_37000471_a_drop_probability_of_one_is_a_deliberate_rejection() -> None:
    """``drop_path(p=1.0)`` is refused (torch accepts it); the campaign counts it as one of
    the documented deliberate rejections, not as a bug."""
    from aurane.tools.differential import DELIBERATE

    code, line, _ = _refused(_model("(3, 2, 6)", "x -> drop_path(1.0)"))
    assert (code, line) == ("S004", 4)
    message = "argument 'p' of drop_path must be in [0, 1), got 1.0"
    assert any(entry.matches("S004", "drop_path", message) for entry in DELIBERATE)
    assert not any(entry.matches("S004", "drop_path", message[:-3] + "1.5") for entry in DELIBERATE)


def test_seed_131000080_select_writes_its_index() -> None:
    """The generator dropped ``select``'s index as it does the piece of ``split`` and
    ``chunk`` (drawn apart), writing ``select(x, 1)`` and claiming it valid; S005
    refuses it. Each select it writes now gives the index, and that program compiles."""
    from aurane.compile import prepare_program
    from aurane.tools.fuzz import generate

    program = generate(131000080)
    assert "select(x, 1, " in program.text and program.expect_valid
    prepare_program(program.text, filename="seed131000080.aur")
    for seed in range(131000000, 131000300):
        for step in generate(seed).steps:
            if step.op == "select" and step.valid:
                assert "index" in step.args, (seed, step)
