"""Issue 24 item 1: compile-time control. Loops unroll, branches choose, constants compute,
operation-valued parameters apply; every misuse is a located error that names the
iteration or branch (and the call) it happened in."""

from __future__ import annotations

import textwrap

import pytest
import torch

from aurane.semantics.functions import make_divisible
from aurane.verify import verify_text
from tests.backends.torch.util import generate, load
from tests.helpers import front


def errors(source: str) -> list[tuple[str, int, int, str]]:
    fe = front(source)
    return [(d.code, d.span.line, d.span.column, d.message) for d in fe.diagnostics if d.is_error]


def only_error(source: str) -> object:
    fe = front(source)
    found = [d for d in fe.diagnostics if d.is_error]
    assert len(found) == 1, [(d.code, d.message) for d in found]
    return found[0]


def layers(source: str, model: str = "Net") -> list[tuple[str, str | None]]:
    fe = front(source)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    return [(n.op, n.layer) for n in fe.graphs[model].nodes]


DENSE = """
model DenseLayer(growth):
    def forward(x):
        h = x -> batchnorm().relu -> conv2d(growth, kernel=3, padding=1, bias=false)
        return concat(x, h, dim=1)

model Net:
    input_shape = (8, 8, 8)
    def forward(x):
        for i in range(3):
            x -> DenseLayer(4) as denseblock.denselayer{i + 1}
        return x
"""


def test_loop_unrolls_with_templated_names_and_growing_widths() -> None:
    fe = front(DENSE)
    assert fe.ok
    graph = fe.graphs["Net"]
    assert [n.layer for n in graph.nodes] == [f"denseblock.denselayer{i}" for i in (1, 2, 3)]
    assert graph.output_value.shape == ("batch", 20, 8, 8)  # 8 + 3 * 4: DenseNet's growth
    origins = [n.origin[0].text for n in graph.nodes]
    assert origins[2] == "in iteration i = 2 of the loop at 9:9"
    assert [n.origin[0].index for n in graph.nodes] == [0, 1, 2]


def test_unrolled_program_runs_with_the_irs_shapes() -> None:
    (report,) = verify_text(DENSE, "t.aur")
    assert report.ok, report.diagnostics
    _, _, code = generate(DENSE)
    net = load(code).Net()
    keys = list(net.state_dict())
    assert "denseblock.denselayer3.conv2d1.weight" in keys
    assert net(torch.zeros(2, 8, 8, 8)).shape == (2, 20, 8, 8)


def test_branches_choose_by_parameter_and_input_size() -> None:
    source = """
    model Unit(width, expand: bool = true):
        def forward(x):
            if x.shape[1] != width and expand:
                x -> conv2d(width, kernel=1) as proj
            elif x.shape[-1] > 4:
                x -> maxpool(2) as pool
            else:
                x -> identity() as keep
            return x

    model Net:
        input_shape = (8, 8, 8)
        def forward(x):
            x -> Unit(16) as a -> Unit(16) as b -> Unit(16, expand=false) as c
            return x
    """
    fe = front(source)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    subs = [n.subgraph for n in fe.graphs["Net"].nodes]
    assert [[m.layer for m in s.nodes] for s in subs if s] == [["proj"], ["pool"], ["keep"]]
    proj = subs[0].nodes[0] if subs[0] else None
    assert proj is not None and proj.origin[0].kind == "branch"
    assert "'if x.shape[1] != width and expand' at 3:9" in proj.origin[0].text


def test_tuple_targets_enumerate_zip_and_subscripts() -> None:
    source = """
    cfg = [(16, 3, 1), (24, 3, 2), (32, 5, 2)]
    widths = [4, 6]

    model Net:
        input_shape = (3, 32, 32)
        def forward(x):
            for i, (c, k, s) in enumerate(cfg):
                x -> conv2d(c, kernel=k, stride=s, padding=k // 2) as features.{i}
            for a, b in zip(widths, [1, 2]):
                x -> conv2d(a * b, kernel=1) as head{a}
            x -> conv2d(cfg[-1][0] if len(cfg) > 2 else 1, kernel=1) as last
            return x
    """
    assert layers(source) == [
        ("conv2d", "features.0"),
        ("conv2d", "features.1"),
        ("conv2d", "features.2"),
        ("conv2d", "head4"),
        ("conv2d", "head6"),
        ("conv2d", "last"),
    ]
    fe = front(source)
    assert fe.graphs["Net"].nodes[2].args["kernel"] == 5
    assert fe.graphs["Net"].nodes[4].args["channels"] == 12
    assert fe.graphs["Net"].nodes[5].args["channels"] == 32


@pytest.mark.parametrize(
    ("v", "divisor", "min_value"),
    [(16 * 0.75, 8, None), (37.5, 8, None), (3.0, 8, None), (100, 16, 64), (91, 8, None)],
)
def test_make_divisible_is_torchvisions(v: float, divisor: int, min_value: int | None) -> None:
    def reference(v: float, divisor: int, min_value: int | None = None) -> int:
        # torchvision.ops.misc._make_divisible
        if min_value is None:
            min_value = divisor
        new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
        if new_v < 0.9 * v:
            new_v += divisor
        return new_v

    assert make_divisible(v, divisor, min_value) == reference(v, divisor, min_value)


def test_constant_functions() -> None:
    source = """
    a = max(3, 7, 5)
    b = min([4, 2, 9])
    c = round(2.6) + ceil(1.2) + floor(1.8) + abs(-2) + int(3.9)
    d = sqrt(16)
    e = make_divisible(37.5, 8)
    f = len(range(2, 10, 3))
    g = float(3)
    h = round(2.5) + 10 * round(3.5) + 100 * round(-0.5)

    model Net:
        input_shape = (4,)
        def forward(x):
            x -> dense(a + b + c + e + f) -> dense(int(d * g)) -> dense(h)
            return x
    """
    fe = front(source)
    assert fe.ok
    nodes = fe.graphs["Net"].nodes
    assert nodes[0].args["features"] == 7 + 2 + (3 + 2 + 1 + 2 + 3) + 40 + 3
    assert nodes[1].args["features"] == 12
    assert nodes[2].args["features"] == 2 + 10 * 4 + 100 * 0  # Python's: half to even


def test_operation_and_block_valued_parameters() -> None:
    source = """
    model Basic(width):
        def forward(x):
            x -> dense(width) as fc
            return x

    model Wide(width):
        def forward(x):
            x -> dense(2 * width) as fc
            return x

    model Body(block, widths, act = relu, norm = none):
        def forward(x):
            for i, w in enumerate(widths):
                x -> block(w) as layer{i + 1} -> act() -> norm()
            x -> dense(4).act
            return x

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Body(Basic, [8, 8]) as a -> Body(Wide, [4], act=gelu) as b
            return x
    """
    fe = front(source)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    a, b = fe.graphs["Net"].nodes
    assert a.subgraph is not None and b.subgraph is not None
    assert [(n.op, n.layer) for n in a.subgraph.nodes] == [
        ("block", "layer1"),
        ("relu", None),
        ("block", "layer2"),
        ("relu", None),
        ("dense", None),
        ("relu", None),
    ]
    assert [n.op for n in b.subgraph.nodes] == ["block", "gelu", "dense", "gelu"]
    assert b.subgraph.nodes[0].block == "Wide"
    (report,) = verify_text(textwrap.dedent(source), "t.aur")
    assert report.ok, report.diagnostics


def test_graph_form_none_passes_the_input_through() -> None:
    source = """
    model B(act = none):
        def forward(x):
            h = act(x)
            return dense(h, 4)

    model Net:
        input_shape = (8,)
        def forward(x):
            return B(x)
    """
    fe = front(source)
    assert fe.ok
    sub = fe.graphs["Net"].nodes[0].subgraph
    assert sub is not None and [n.op for n in sub.nodes] == ["dense"]


def test_if_on_a_tensor_is_located() -> None:
    found = only_error(
        """
        model Net:
            input_shape = (4,)
            def forward(x):
                h = dense(x, 4)
                if h:
                    x -> relu()
                return x
        """
    )
    assert (found.code, found.span.line, found.span.column) == ("S120", 5, 12)  # type: ignore[attr-defined]
    assert "decided at compile time" in found.message  # type: ignore[attr-defined]


def test_loop_bound_that_is_no_constant_is_located() -> None:
    found = errors(
        """
        model Net:
            input_shape = (4,)
            def forward(x):
                for i in range(x):
                    x -> relu()
                return x
        """
    )
    assert found[0][:3] == ("S121", 4, 24)
    assert "unrolled at compile time" in found[0][3] and "'x' is a tensor" in found[0][3]


def test_non_iterable_and_bad_unpacking() -> None:
    head = "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
    found = errors(head + "        for i in 3:\n            x -> relu()\n        return x\n")
    assert found[0][:3] == ("S121", 4, 18) and "got integer 3" in found[0][3]
    found = errors(
        head + "        for a, b in [(1, 2), (3,)]:\n            x -> dense(a)\n        return x\n"
    )
    assert found[0][:3] == ("S122", 4, 13) and "iteration 1" in found[0][3]


def test_template_collision_names_both_iterations() -> None:
    found = errors(
        """
        model Net:
            input_shape = (4,)
            def forward(x):
                for i in range(3):
                    x -> dense(4) as fc{i // 2}
                return x
        """
    )
    assert found[0][:3] == ("S124", 5, 30)
    assert "in iteration i = 0 of the loop at 4:9" in found[0][3]
    assert "in iteration i = 1 of the loop at 4:9" in found[0][3]


def test_function_not_in_the_list_and_limits() -> None:
    head = "model Net:\n    input_shape = (4,)\n    def forward(x):\n"
    found = errors(head + "        x -> dense(pow(2, 3))\n")
    assert found[0][:3] == ("R005", 4, 20) and "not a constant function" in found[0][3]
    found = errors(
        head + "        for i in range(20000):\n            x -> relu()\n        return x\n"
    )
    assert found[0][:3] == ("S123", 4, 18)
    found = errors(
        head
        + "        for i in range(200):\n            for j in range(200):\n"
        + "                x -> relu()\n        return x\n"
    )
    assert found[0][0] == "S123" and "20,000 statements" in found[0][3]


def test_operation_valued_misuse_is_located() -> None:
    found = errors(
        """
        model B(act = 3):
            def forward(x):
                x -> act()
                return x

        model Net:
            input_shape = (4,)
            def forward(x):
                return B(x)
        """
    )
    assert found[0][:3] == ("S125", 3, 14) and "integer 3" in found[0][3]
    found = errors(
        """
        model Net:
            input_shape = (4,)
            def forward(x):
                h = dense(x, 4)
                x -> dense(h)
                return x
        """
    )
    assert found[0][:3] == ("S125", 5, 20)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("x.shape[0]", "is the batch size"),
        ("x.shape[3]", "outside it"),
        ("h.shape[1]", "only the forward input's sizes"),
    ],
)
def test_input_size_misuse_is_located(expr: str, message: str) -> None:
    found = errors(
        f"""
        model Net:
            input_shape = (4, 2)
            def forward(x):
                h = dense(x, 4)
                return dense(h, {expr})
        """
    )
    assert found[0][0] == "S126" and message in found[0][3], found


def test_errors_inside_a_body_name_the_iteration_and_the_call() -> None:
    fe = front(
        """
        model Stage(widths):
            def forward(x):
                for w in widths:
                    x -> dense(w) -> reshape((w, 1))
                return x

        model Net:
            input_shape = (4,)
            def forward(x):
                return Stage(x, [2, 3])
        """
    )
    (error,) = [d for d in fe.diagnostics if d.is_error]
    notes = [label.message for label in error.labels]
    assert "in iteration w = 3 of the loop at 3:9" in notes
    assert any(note.startswith("in the call Stage([2, 3])") for note in notes)


def test_return_inside_a_branch_ends_the_body() -> None:
    source = """
    model B(head: bool):
        def forward(x):
            if head:
                return dense(x, 2)
            x -> dense(3)
            return x

    model Net:
        input_shape = (4,)
        def forward(x):
            return B(x, true) -> B(false)
    """
    fe = front(source)
    assert fe.ok
    first, second = (n.subgraph for n in fe.graphs["Net"].nodes)
    assert first is not None and second is not None
    assert first.output_value.shape == ("batch", 2)
    assert second.output_value.shape == ("batch", 3)


def test_block_valued_argument_cycle_is_refused_not_recursed() -> None:
    found = errors(
        """
        model A(blk):
            def forward(x):
                return x -> blk(blk)

        model Net:
            input_shape = (4,)
            def forward(x):
                return x -> A(A)
        """
    )
    assert found[0][:3] == ("S009", 3, 21) and "A -> A" in found[0][3]


def test_a_symbolic_input_size_cannot_decide() -> None:
    found = errors(
        """
        seq = dim(1, 64)

        model Net:
            input_shape = (seq, 4)
            def forward(x):
                if x.shape[1] > 4:
                    x -> relu()
                return x
        """
    )
    assert found[0][:3] == ("S126", 6, 12) and "symbolic size 'seq'" in found[0][3]


def test_parameter_takes_the_initialiser_form() -> None:
    source = """
    model Net:
        input_shape = (4,)
        def forward(x):
            p = parameter((4,), init=normal(0.5)) as a
            q = parameter((4,), init=constant(2.0)) as b
            return add(add(x, p), q)
    """
    _, _, code = generate(textwrap.dedent(source))
    assert "torch.empty(1, 4).normal_(std=0.5)" in code and "torch.full((1, 4), 2.0)" in code
    found = errors(source.replace("constant(2.0)", "xavier_uniform"))
    assert found[0][0] == "S127"


def test_repeat_start_needs_a_name() -> None:
    found = errors(
        """
        model B:
            def forward(x):
                return x -> dense(4)

        model Net:
            input_shape = (4,)
            def forward(x):
                return x -> repeat(B, 2, start=3)
        """
    )
    assert found[0][0] == "S045" and "start=" in found[0][3]


BRANCHES = """
model Unit(width, mode: int = 0):
    def forward(x):
        if mode == 0 and not width < 8:
            x -> dense(width) as wide
        elif mode == 1 or width > 64:
            x -> dense(width) as column -> reshape((width, 1))
        else:
            x -> relu() as plain
        return x

pairs = [(8, 0), (4, 0), (100, 2)]

model Net:
    input_shape = (4,)
    def forward(x):
        for w, m in pairs:
            x -> Unit(w, mode=m) -> flatten()
        return x
"""


def test_conditions_with_not_and_or_choose_as_python_would() -> None:
    """``not``, ``or`` and ``and`` decide as Python's would, and ``for a, b in LIST`` unpacks
    a list constant's pairs: ``Unit(8)`` takes the ``if``, ``Unit(4)`` (``not 4 < 8`` is
    false) the ``else``, ``Unit(100, mode=2)`` the ``elif`` (``width > 64``)."""
    fe = front(BRANCHES)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    chosen = [
        [m.layer for m in n.subgraph.nodes if m.layer]
        for n in fe.graphs["Net"].nodes
        if n.subgraph is not None
    ]
    assert chosen == [["wide"], ["plain"], ["column"]]
    assert fe.graphs["Net"].output_value.shape == ("batch", 100)
    (report,) = verify_text(textwrap.dedent(BRANCHES), "t.aur")
    assert report.ok, report.diagnostics


def test_errors_inside_a_chosen_branch_name_the_branch_and_the_call() -> None:
    """Item 1: a diagnostic raised in a chosen branch carries a label naming that branch
    (its condition and header) and one naming the call that chose it."""
    fe = front(BRANCHES.replace("reshape((width, 1))", "reshape((width, 3))"))
    (error,) = [d for d in fe.diagnostics if d.is_error]
    assert (error.code, error.span.line) == ("T006", 6)  # type: ignore[union-attr]
    notes = [label.message for label in error.labels]
    assert "in the branch 'elif mode == 1 or width > 64' at 5:9" in notes, notes
    assert "in the call Unit(100, mode=2), input (8,)" in notes, notes
    assert "in iteration w = 100, m = 2 of the loop at 16:9" in notes, notes


def test_the_documented_example_compiles_and_runs() -> None:
    """docs/language.md's compile-time example (MobileNetV2's inverted residual: ``if`` on a
    parameter and on the input's width, an operation-valued ``act``, a config loop with
    ``features.*``) is a program that builds and computes what its IR says."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "language.md").read_text(encoding="utf-8")
    section = text[text.index("## Compile-time control") :]
    source = section[section.index("```aur\n") + 7 : section.index("```\n", 10)]
    assert source.startswith("model InvertedResidual(")
    fe = front(source)
    assert fe.ok, [(d.code, d.message) for d in fe.diagnostics]
    blocks = [n for n in fe.graphs["Net"].nodes if n.block == "InvertedResidual"]
    assert [n.layer for n in blocks] == [f"features.{k}" for k in range(1, 7)]  # 1 + 2 + 3
    first = blocks[0].subgraph
    assert first is not None and "add" not in [m.op for m in first.nodes]  # 32 -> 16
    third = blocks[2].subgraph  # (6, 24, 2, 2), second iteration: stride 1, 24 -> 24
    assert third is not None and third.nodes[-1].op == "add"
    (report,) = verify_text(source, "t.aur")
    assert report.ok, report.diagnostics
