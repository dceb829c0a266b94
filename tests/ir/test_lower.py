"""Lowering: shapes and dtypes on every value, suffix nodes, merges, composition, diagnostics."""

from __future__ import annotations

import json

import pytest

from aurane.ir.printer import graph_to_text, graphs_to_json
from aurane.ir.verify import verify
from tests.helpers import errors, front, only_error, where


def graph(source: str, name: str):  # type: ignore[no-untyped-def]
    result = front(source)
    assert result.ok, result.diagnostics
    g = result.graphs[name]
    verify(g)
    return g


def test_chain_values_have_batch_first_shapes_dtypes_and_spans() -> None:
    g = graph(
        """
        model Net:
            input_shape = (3, 8, 8)
            input_dtype = float32
            def forward(x):
                x -> conv2d(4, kernel=3).relu
                  -> flatten()
                  -> dense(10)
    """,
        "Net",
    )
    assert [n.id for n in g.nodes] == ["conv2d1", "relu1", "flatten1", "dense1"]
    shapes = [g.value(n.output).shape for n in g.nodes]
    assert shapes == [("batch", 4, 6, 6), ("batch", 4, 6, 6), ("batch", 144), ("batch", 10)]
    assert all(g.value(n.output).dtype == "float32" for n in g.nodes)
    relu = g.nodes[1]
    assert relu.suffix_of == "conv2d1" and relu.span.line == 5
    assert g.nodes[0].parameters == 4 * 3 * 9 + 4
    assert g.output == "dense1"


def test_unknown_dtype_is_null_in_json_and_parameters_default_float32() -> None:
    result = front("""
        model Net:
            input_shape = (4,)
            def forward(x):
                x -> dense(2)
    """)
    payload = json.loads(graphs_to_json(list(result.graphs.values())))
    model = payload["models"][0]
    assert model["values"][0]["dtype"] is None
    assert model["values"][0]["shape"] == ["batch", 4]
    assert set(model["nodes"][0]) >= {"id", "op", "inputs", "output", "args", "parameters", "span"}
    assert model["nodes"][0]["args"]["features"] == 2
    assert result.graphs["Net"].param_dtype == "float32"


def test_graph_branches_merge_and_reassignment_creates_new_values() -> None:
    g = graph(
        """
        model Branched:
            input_shape = (8,)
            def forward(x):
                left = dense(x, 4)
                right = dense(x, 2)
                joined = concat(left, right, dim=1)
                result = dense(joined, 8)
                result = add(x, result).relu
                return result
    """,
        "Branched",
    )
    assert g.value(g.output).shape == ("batch", 8)
    concat = next(n for n in g.nodes if n.op == "concat")
    assert concat.inputs == ("dense1", "dense2")
    add = next(n for n in g.nodes if n.op == "add")
    assert add.inputs == ("x", "dense3")
    assert g.parameters == 110


def test_nested_graph_call_and_mixed_chain_binding() -> None:
    g = graph(
        """
        model Net:
            input_shape = (8,)
            def forward(x):
                h = x -> dense(8).relu -> dense(8)
                out = add(x, dense(h, 8)).relu
                return out
    """,
        "Net",
    )
    assert [n.op for n in g.nodes] == ["dense", "relu", "dense", "dense", "add", "relu"]


def test_residual_suffix_adds_the_operation_input() -> None:
    g = graph(
        """
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> dense(8).relu.residual
    """,
        "Net",
    )
    residual = g.nodes[-1]
    assert residual.op == "add" and residual.inputs == ("x", "relu1")


def test_residual_shape_mismatch_is_located_at_the_suffix() -> None:
    found = only_error("""
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> dense(8).residual -> dense(4).residual
    """)
    assert found.code == "T001" and found.span is not None
    assert found.span.line == 4 and found.span.column in (43, 44)
    assert "residual" in found.message or "shape" in found.message


def test_shape_mismatch_names_where_each_side_came_from() -> None:
    found = only_error("""
        model Net:
            input_shape = (1, 28, 28)
            def forward(x):
                a = flatten(x)
                b = dense(x, 4)
                c = add(a, dense(b, 10))
                return c
    """)
    assert found.code in ("T001", "T002")


def test_flatten_origin_label() -> None:
    found = only_error("""
        model Net:
            input_shape = (1, 28, 28)
            def forward(x):
                a = flatten(x)
                b = dense(a, 10)
                c = add(a, b)
                return c
    """)
    assert found.code == "T001" and where(found) == (6, 13)
    notes = [label.message for label in found.labels]
    assert any("784 = 1·28·28 from `flatten` at 4:13" in n for n in notes), notes
    assert any("from `dense` at 5:13" in n for n in notes), notes


def test_one_mistake_gives_one_error_no_cascade() -> None:
    found = errors("""
        model Net:
            input_shape = (3, 4, 4)
            def forward(x):
                x -> conv2d(8, kernel=5)
                  -> flatten()
                  -> dense(10)
                  -> dense(2)
    """)
    assert [d.code for d in found] == ["T005"]
    assert found[0].span is not None and found[0].span.column == 24  # kernel=5


def test_embedding_needs_integer_input() -> None:
    found = only_error("""
        model Net:
            input_shape = (16,)
            input_dtype = float32
            def forward(x):
                x -> embedding(100, 8)
    """)
    assert found.code == "T003" and "int" in found.message


def test_integer_input_into_dense_is_refused() -> None:
    found = only_error("""
        model Net:
            input_shape = (16,)
            input_dtype = int64
            def forward(x):
                x -> dense(8)
    """)
    assert found.code == "T003"


def test_block_lowered_at_each_call_site_shape() -> None:
    result = front("""
        model Proj:
            def forward(x):
                x -> dense(4)
        model Net:
            input_shape = (8,)
            def forward(x):
                a = Proj(x)
                b = x -> dense(16) -> Proj()
                return concat(a, b, dim=1)
    """)
    assert result.ok, result.diagnostics
    g = result.graphs["Net"]
    blocks = [n for n in g.nodes if n.op == "block"]
    assert [b.parameters for b in blocks] == [8 * 4 + 4, 16 * 4 + 4]
    assert "Proj" not in result.graphs
    verify(g)


def test_repeat_requires_shape_preserving_block() -> None:
    found = only_error("""
        model Grow:
            def forward(x):
                x -> dense(16)
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> repeat(Grow, 3)
    """)
    assert found.code == "T001" and "repeat" in found.message


def test_repeat_multiplies_parameters() -> None:
    g = graph(
        """
        model Unit:
            def forward(x):
                x -> dense(8).relu
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> repeat(Unit, 3)
    """,
        "Net",
    )
    assert g.nodes[0].op == "repeat" and g.nodes[0].repeat == 3
    assert g.parameters == 3 * 72


def test_block_error_points_into_block_and_at_the_call() -> None:
    found = only_error("""
        model Bad:
            def forward(x):
                x -> conv2d(4)
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Bad()
    """)
    assert found.code == "T002" and found.span is not None and found.span.line == 3
    assert any(label.span.line == 7 for label in found.labels)


def test_block_input_shape_must_agree() -> None:
    found = only_error("""
        model Block:
            input_shape = (4,)
            def forward(x):
                x -> dense(4)
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Block()
    """)
    assert found.code == "T010" and where(found) == (8, 14)


def test_unused_value_warning() -> None:
    result = front("""
        model Net:
            input_shape = (8,)
            def forward(x):
                extra = dense(x, 4)
                out = dense(x, 2)
                return out
    """)
    assert result.ok
    warnings = [d for d in result.diagnostics if d.severity == "warning"]
    assert [(d.code, where(d)) for d in warnings] == [("S018", (4, 9))]


def test_gan_boundary_mismatch() -> None:
    found = only_error("""
        model G:
            input_shape = (4,)
            def forward(z):
                z -> dense(12) -> reshape(3, 2, 2)
        model D:
            input_shape = (1, 2, 2)
            def forward(x):
                x -> flatten() -> dense(1).sigmoid
        dataset data:
            from torchvision.datasets.FakeData
            image_size = (1, 2, 2)
        train_gan G and D on data:
            epochs = 1
    """)
    assert found.code == "T008" and where(found) == (4, 14)
    assert [label.span.line for label in found.labels] == [12, 12, 6]


@pytest.mark.parametrize(
    ("loss", "end", "ok"),
    [
        ("bce", ".sigmoid", True),
        ("bce", "", False),
        ("bce_with_logits", "", True),
        ("bce_with_logits", ".sigmoid", False),
        ("mse", "", True),
    ],
)
def test_gan_loss_fits_discriminator_output(loss: str, end: str, ok: bool) -> None:
    source = f"""
        model G:
            input_shape = (4,)
            def forward(z):
                z -> dense(4)
        model D:
            input_shape = (4,)
            def forward(x):
                x -> dense(1){end}
        dataset data:
            from aurane.data.SyntheticRegression
            features = 4
        train_gan G and D on data:
            discriminator_loss = {loss}
    """
    found = errors(source)
    if ok:
        assert found == []
    else:  # bce without a final sigmoid, or bce_with_logits after one
        assert [d.code for d in found] == ["T009"], found


def test_text_printer_lists_every_node() -> None:
    g = graph(
        """
        model Unit:
            def forward(x):
                x -> dense(8)
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Unit() -> dense(2)
    """,
        "Net",
    )
    text = graph_to_text(g)
    assert "block[Unit]" in text and "dense1" in text and "return dense1" in text


@pytest.mark.parametrize(("fmt", "ok"), [('"png"', False), ('"both"', False), ('"tensor"', True)])
def test_png_samples_need_image_shaped_generator_output(fmt: str, ok: bool) -> None:
    source = f"""
        model G:
            input_shape = (4,)
            def forward(z):
                z -> dense(6)
        model D:
            input_shape = (6,)
            def forward(x):
                x -> dense(1).sigmoid
        dataset data:
            from aurane.data.SyntheticRegression
            features = 6
        train_gan G and D on data:
            sample_format = {fmt}
    """
    found = errors(source)
    assert (found == []) is ok
    if not ok:
        assert found[0].code == "T008" and "image" in found[0].message


def test_residual_shape_mismatch_names_the_suffix_not_add() -> None:
    found = only_error("""
        model Net:
            input_shape = (3, 8, 8)
            def forward(x):
                x -> conv2d(3, kernel=3).relu.residual
    """)
    assert found.code == "T001"
    assert found.message.startswith("'.residual' adds the operation's input to its result")
    assert "the input is (3, 8, 8), the result (3, 6, 6)" in found.message
    assert found.hint is not None and "'.residual'" in found.hint
    assert where(found) == (4, 38)


def test_gan_generator_and_discriminator_dtypes_must_agree() -> None:
    found = only_error("""
        model G:
            input_shape = (4,)
            input_dtype = float64
            def forward(z):
                z -> dense(4)
        model D:
            input_shape = (4,)
            input_dtype = float32
            def forward(x):
                x -> dense(1).sigmoid
        dataset data:
            from aurane.data.SyntheticRegression
            features = 4
        train_gan G and D on data:
            epochs = 1
    """)
    assert found.code == "T008" and "float64" in found.message and where(found) == (14, 11)
