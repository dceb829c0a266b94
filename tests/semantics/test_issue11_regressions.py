"""The examples of issue 11 that `check` let through to a run-time failure, one named test
each; each stands for its class (the rule lives in a catalog, not in a special case)."""

from __future__ import annotations

import pytest

from tests.helpers import errors, front


def model(body: str, shape: str = "(3, 8, 8)", extra: str = "") -> str:
    return f"model Net:\n    input_shape = {shape}\n{extra}    def forward(x):\n        {body}\n"


def only(source: str) -> tuple[str, int, int]:
    found = errors(source)
    assert len(found) == 1, found
    d = found[0]
    assert d.span is not None
    return d.code, d.span.line, d.span.column


# ------------------------------------------------------------------ layers


def test_layer_norm_positional_is_not_eps() -> None:
    """layer_norm(3) compiled as eps=3; its size comes from the input, eps is keyword-only."""
    assert only(model("return layer_norm(x, 3)", "(8,)")) == ("S006", 4, 30)
    assert not errors(model("return layer_norm(x, eps=0.001)", "(8,)"))


def test_embedding_sparse_with_scale_grad_by_freq() -> None:
    """Forward ran, backward failed: torch refuses the pair in embedding_backward."""
    torch = pytest.importorskip("torch")
    layer = torch.nn.Embedding(10, 4, sparse=True, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq"):
        layer(torch.tensor([[1, 2, 2]])).sum().backward()
    source = model(
        "return embedding(x, 10, 4, sparse=true, scale_grad_by_freq=true)",
        "(3,)",
        "    input_dtype = int64\n",
    )
    assert only(source) == ("S081", 5, 49)
    assert not errors(source.replace("sparse=true", "sparse=false"))


def test_input_padding_idx_without_attention() -> None:
    source = model(
        "return dense(embedding(x, 10, 4), 2)",
        "(3,)",
        ("    input_dtype = int64\n    input_padding_idx = 0\n"),
    )
    assert only(source) == ("T091", 4, 25)


def test_input_padding_idx_with_a_float_input() -> None:
    source = model("return dense(x, 2)", "(3,)", "    input_padding_idx = 0\n")
    assert only(source) == ("T003", 3, 25)


def test_gan_float64_generator_into_float32_discriminator() -> None:
    source = """\
dataset d:
    from aurane.data.SyntheticImages
    size = 4
    image_size = (1, 2, 2)
model G:
    input_shape = (3,)
    input_dtype = float64
    def forward(z):
        return reshape(dense(z, 4).tanh, 1, 2, 2)
model D:
    input_shape = (1, 2, 2)
    def forward(x):
        return dense(flatten(x), 1).sigmoid
train_gan G and D on d:
    epochs = 1
"""
    found = errors(source)
    assert [(d.code, d.span.line) for d in found if d.span] == [("T008", 14)]
    assert "float64" in found[0].message


# ------------------------------------------------------------------ shapes


@pytest.mark.parametrize(
    ("body", "column"),
    [
        ("return conv2d(x, 4, kernel=(3,))", 29),
        ("return upsample(x, size=(5,))", 28),
        ("return upsample(x, scale_factor=(2,))", 28),
        ("return maxpool(x, kernel=(2,))", 27),
    ],
)
def test_one_element_tuples_on_a_2d_image(body: str, column: int) -> None:
    """torch takes a 1-tuple as written (a 1-D kernel), never as 3x3: refused like torch."""
    assert only(model(body)) == ("T002", 4, column)


def test_torch_refuses_one_element_tuples_too() -> None:
    torch = pytest.importorskip("torch")
    image = torch.randn(1, 3, 8, 8)
    with pytest.raises(RuntimeError):
        torch.nn.Conv2d(3, 4, kernel_size=(3,))(image)
    with pytest.raises(ValueError):
        torch.nn.functional.interpolate(image, size=(5,))


def test_upsample_scale_factor_past_int64() -> None:
    """It exited 123 with an OverflowError."""
    assert only(model("return upsample(x, scale_factor=1e308)")) == ("T090", 4, 28)
    result = front(model("return upsample(x, scale_factor=1e308)"))
    assert result.failed_stage == "type"


def test_input_shape_past_int64() -> None:
    """It compiled to nn.Linear(79228162514264337593543950336, 2)."""
    source = model("return dense(flatten(x), 2)", "(4294967296, 4294967296, 4294967296)")
    code, line, column = only(source)
    assert (code, line, column) == ("S013", 2, 19)


def test_layer_sizes_past_int64() -> None:
    assert only(model("return dense(x, 4611686018427387904)", "(8,)")) == ("T090", 4, 16)
    source = model("return dense(flatten(x), 2)", "(2147483648, 2147483648, 2)")
    assert only(source) == ("S013", 2, 19)
    assert not errors(model("return dense(flatten(x), 2)", "(2147483648, 2)"))
