"""Semantic analysis: names, catalogs, fields, arguments, references and recursion."""

from __future__ import annotations

import pytest

from tests.helpers import errors, front, only_error, where

MODEL = """
model Net:
    input_shape = (8,)
    def forward(x):
        x -> {body}
"""


def model_error(body: str):  # type: ignore[no-untyped-def]
    return only_error(MODEL.format(body=body))


@pytest.mark.parametrize(
    ("body", "code", "column", "word"),
    [
        ("densee(2)", "S001", 14, "densee"),
        ("dense(2, biass=true)", "S002", 23, "biass"),
        ("dense(2, bias=1)", "S003", 28, "bool"),
        ("dropout(1.5)", "S004", 22, "[0, 1)"),
        ("dense()", "S005", 14, "features"),
        ("dense(2, true, 3)", "S006", 29, "positional"),
        ("dense(2).rellu", "S016", 23, "rellu"),
        ("dense(2, bias=true, bias=false)", "S008", 34, "twice"),
        ("add(x)", "S017", 14, "add"),
    ],
)
def test_operation_argument_errors(body: str, code: str, column: int, word: str) -> None:
    found = model_error(body)
    assert (found.code, found.span.line if found.span else None) == (code, 4)
    assert found.span is not None and found.span.column == column, found
    assert word in found.message + (found.hint or "")


def test_did_you_mean_for_operations_and_keywords() -> None:
    assert "dense" in (model_error("densee(2)").hint or "")
    assert "kernel" in (
        only_error("""
        model Net:
            input_shape = (3, 8, 8)
            def forward(x):
                x -> conv2d(4, kernal=3)
    """).hint
        or ""
    )


def test_undefined_tensor_and_definition_order() -> None:
    found = only_error("""
        model Net:
            input_shape = (8,)
            def forward(x):
                y = dense(z, 4)
                z = dense(x, 4)
                return y
    """)
    assert found.code == "S007" and where(found) == (4, 19)


def test_several_independent_errors_in_one_run() -> None:
    found = errors("""
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> densee(2)
        model Other:
            input_shape = (8,)
            def forward(x):
                x -> dense(2, kernal=3)
    """)
    assert [d.code for d in found] == ["S001", "S002"]


@pytest.mark.parametrize(
    ("block", "code", "word"),
    [
        ("train Net on data:\n    epocs = 3\n", "S010", "epocs"),
        ("train Net on data:\n    loss = cross_entrophy\n", "S011", "cross_entrophy"),
        ("train Net on data:\n    optimizer = adam(lr=0.1, betas=(0.9, 1.5))\n", "S004", "beta"),
        ("train Net on data:\n    optimizer = adam(lrr=0.1)\n", "S002", "lrr"),
        ("train Net on data:\n    metrics = [accuracy, top0_accuracy]\n", "S011", "top0"),
        ("train Net on data:\n    validate_on = missing\n", "S012", "missing"),
        ("train Net on nowhere:\n    epochs = 1\n", "S012", "nowhere"),
        ("train Nett on data:\n    epochs = 1\n", "S012", "Nett"),
        ("train Net on data:\n    mixed_precision = 1\n", "S013", "boolean"),
        ("train Net on data:\n    scheduler = step_lr(gamma=0.5)\n", "S005", "step_size"),
        ('experiment E:\n    device = "gpu"\n', "S013", "device"),
        ("experiment E:\n    seed = -1\n", "S013", "seed"),
        ("dataset more:\n    transform = Blur()\n", "S011", "Blur"),
        ("use numpy as nn\n", "S019", "nn"),
    ],
)
def test_configuration_errors(block: str, code: str, word: str) -> None:
    source = (
        # class data (the default loss is cross_entropy; data contracts are checked too)
        "dataset data:\n    from aurane.data.SyntheticImages\n    size = 8\n    image_size = (8,)\n"
        "    num_classes = 1\n\n" + MODEL.format(body="dense(1)") + "\n" + block
    )
    found = only_error(source)
    assert found.code == code, found
    assert word in found.message + (found.hint or ""), found


def test_trained_block_needs_input_shape() -> None:
    found = only_error("""
        dataset d:
            from aurane.data.SyntheticRegression
        model Block:
            def forward(x):
                x -> dense(2)
        train Block on d:
            epochs = 1
    """)
    assert found.code == "S014" and where(found) == (3, 7)


def test_recursion_is_reported_at_a_call_site() -> None:
    found = errors("""
        model A:
            def forward(x):
                x -> B()
        model B:
            def forward(x):
                x -> A()
        model Top:
            input_shape = (4,)
            def forward(x):
                x -> A()
    """)
    assert [d.code for d in found] == ["S009"]
    assert "A -> B -> A" in found[0].message


def test_duplicate_model_and_dataset() -> None:
    found = errors("""
        dataset d:
            from aurane.data.SyntheticRegression
        dataset d:
            from aurane.data.SyntheticRegression
        model M:
            input_shape = (2,)
            def forward(x):
                x -> dense(1)
        model M:
            input_shape = (2,)
            def forward(x):
                x -> dense(1)
    """)
    assert [(d.code, where(d)) for d in found] == [("S008", (3, 9)), ("S008", (9, 7))]
    assert found[0].labels and found[0].labels[0].span.line == 1


@pytest.mark.parametrize("name", ["class", "__init__", "nn", "dense"])
def test_reserved_model_names(name: str) -> None:
    found = errors(
        f"model {name}:\n    input_shape = (2,)\n    def forward(x):\n        x -> dense(1)\n"
    )
    reserved = [d for d in found if d.code == "S015"]
    assert len(reserved) == 1 and f"'{name}'" in reserved[0].message, found


def test_old_compiler_forms_are_accepted() -> None:
    result = front("""
        dataset d:
            from aurane.data.SyntheticTokens
            size = 8
            sequence_length = 4
            vocab_size = 10
        model LM:
            input_shape = (4,)
            input_dtype = "int64"
            def forward(t):
                t -> embedding(10, 8)
                t -> dense(10)
        train LM on d:
            loss = "cross_entropy"
            optimizer = "adam"
            metrics = ["accuracy", perplexity]
    """)
    assert result.ok, result.diagnostics
    assert result.graphs["LM"].output_value.sample_shape == (4, 10)


def test_dataset_transforms_and_nested_calls_resolve() -> None:
    result = front("""
        mean = 0.5
        dataset d:
            from torchvision.datasets.FakeData
            size = 8
            transform = Compose([ToTensor(), Normalize((mean,), (0.5,))])
            target_transform = Compose([])
    """)
    assert result.ok, result.diagnostics


def test_transform_and_transforms_are_exclusive_and_names_checked() -> None:
    found = errors("""
        dataset d:
            from torchvision.datasets.FakeData
            transform = Compose([ToTensor()])
            transforms = [ToTensr()]
    """)
    assert sorted(d.code for d in found) == ["S008", "S011"]
    assert any("ToTensor" in (d.hint or "") for d in found)


def test_callback_and_scheduler_arguments_are_checked() -> None:
    found = errors("""
        dataset d:
            from aurane.data.SyntheticRegression
        model Net:
            input_shape = (8,)
            def forward(x):
                x -> dense(1)
        train Net on d:
            loss = mse
            scheduler = step_lr(step_size=0)
            callbacks = [early_stopping(patience=2), checkpoint(checkpoint_dirr="x")]
    """)
    assert [d.code for d in found] == ["S004", "S002"]


def test_gan_jobs_refuse_mixed_precision_rather_than_ignore_it() -> None:
    found = only_error("""
        dataset d:
            from aurane.data.SyntheticRegression
            features = 4
        model G:
            input_shape = (4,)
            def forward(z):
                z -> dense(4)
        model D:
            input_shape = (4,)
            def forward(x):
                x -> dense(1).sigmoid
        train_gan G and D on d:
            mixed_precision = true
    """)
    assert found.code == "S010" and where(found) == (13, 5)
