"""Data contracts (issue 11 item 1): dataset -> model input -> output -> loss -> metrics.

Each example of the issue is a test here, and each stands for its class: the facts come
from one table (``semantics/data_contracts.py``), checked against torchvision itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aurane.backends.torch import jobs as torch_jobs
from aurane.ir.contracts import runtime_check
from aurane.semantics import data_contracts
from aurane.semantics.data_contracts import contract
from tests.helpers import errors, front

QUICKSTART = (Path(__file__).parents[2] / "examples" / "quickstart.aur").read_text()


def codes(source: str) -> list[str]:
    return [d.code for d in errors(source)]


def dataset(source: str, name: str = "d") -> data_contracts.DataContract:
    result = front(source)
    assert result.program is not None
    found = next(d for d in (result.resolved or result.program).datasets if d.name == name)
    return contract(found)


def program(data: str, model: str, job: str = "    epochs = 1\n", shape: str = "(1, 4, 4)") -> str:
    return (
        f"dataset d:\n{data}"
        f"model Net:\n    input_shape = {shape}\n    def forward(x):\n        {model}\n"
        f"train Net on d:\n{job}"
    )


IMAGES = "    from aurane.data.SyntheticImages\n    size = 4\n    image_size = (1, 4, 4)\n"


# ------------------------------------------------------------------ the examples


def test_quickstart_with_three_channel_images_fails_check_at_the_job() -> None:
    """It said ok, then failed inside conv2d at run time."""
    source = QUICKSTART.replace("image_size = (1, 16, 16)", "image_size = (3, 16, 16)", 1)
    found = errors(source)
    assert [d.code for d in found] == ["T092"]
    d = found[0]
    job = next(i for i, line in enumerate(source.splitlines(), 1) if line.startswith("train "))
    assert d.span is not None and (d.span.line, d.span.column) == (job, 19)  # on shapes
    size = next(i for i, line in enumerate(source.splitlines(), 1) if "(3, 16, 16)" in line)
    assert f"(3, 16, 16) from `image_size` at {size}:18" in d.message
    assert "model 'ShapeNet' takes (1, 16, 16)" in d.message
    assert [label.message for label in d.labels] == [
        "(3, 16, 16) from `image_size`",
        "model 'ShapeNet' takes (1, 16, 16)",
    ]
    assert not errors(QUICKSTART)


def test_ten_classes_against_a_four_way_head() -> None:
    """It gave `IndexError: Target 6 is out of bounds` mid-epoch."""
    source = QUICKSTART.replace("num_classes = classes", "num_classes = 10")
    found = errors(source)
    assert [d.code for d in found] == ["T093", "T093"]  # shapes and shapes_val
    assert "outputs 4 class scores" in found[0].message
    assert "labels 0 to 9 (10 classes from `num_classes` at" in found[0].message
    assert found[1].span is not None and found[1].span.line == 36  # validate_on = shapes_val


def test_generated_quickstart_checks_no_batch() -> None:
    """Known data is checked by `check`; the program stays as short as it was."""
    from tests.training.helpers import compile_text

    pytest.importorskip("torch")
    assert "BatchCheck" not in compile_text(QUICKSTART, "quickstart.aur")


# ------------------------------------------------------------------ model input


@pytest.mark.parametrize(
    ("data", "shape", "dtype_line", "ok"),
    [
        (IMAGES, "(1, 4, 4)", "", True),
        (IMAGES, "(1, 4, 4)", "    input_dtype = float64\n", False),  # float32 data
        ("    from aurane.data.SyntheticTokens\n    size = 4\n    sequence_length = 16\n",
         "(16,)", "", True),  # no input_dtype: the embedding takes the int64 tokens
        ("    from aurane.data.SyntheticTokens\n    size = 4\n    sequence_length = 16\n",
         "(16,)", "    input_dtype = int32\n", True),  # int32 and int64 both index embeddings
    ],
)  # fmt: skip
def test_sample_dtype_must_fit_the_model(data: str, shape: str, dtype_line: str, ok: bool) -> None:
    body = (
        "x -> embedding(64, 4) -> flatten() -> dense(4)"
        if "16" in shape
        else ("x -> flatten() -> dense(10)")
    )
    source = program(data, body, shape=shape).replace(
        "    def forward", dtype_line + "    def forward"
    )
    found = [d for d in errors(source) if d.code == "T092"]
    assert (found == []) is ok, found


def test_unknown_input_dtype_unifies_with_the_data_and_names_the_layer_that_needs_floats() -> None:
    """Issue 22: an omitted input_dtype is unknown, not float32. Token data fits a model
    whose first layer is an embedding; it does not fit one whose first layer is dense,
    and the message names that layer instead of inventing a float32 input."""
    tokens = "    from aurane.data.SyntheticTokens\n    size = 4\n    sequence_length = 16\n"
    found = [d for d in errors(program(tokens, "x -> dense(4)", shape="(16,)")) if d.code == "T092"]
    assert len(found) == 1, found
    assert "has no input_dtype and its dense at" in found[0].message
    assert "needs float32 input" in found[0].message
    found = errors(program(tokens, "x -> flatten()", shape="(16,)"))  # no layer needs floats
    assert not [d for d in found if d.code == "T092"], found


def test_validation_data_is_checked_at_its_reference() -> None:
    source = program(IMAGES, "x -> flatten() -> dense(10)", "    validate_on = v\n") + (
        "dataset v:\n    from aurane.data.SyntheticImages\n    size = 4\n    image_size = (1, 5, 5)\n"
    )
    found = errors(source)
    assert [(d.code, d.span.line if d.span else 0) for d in found] == [("T092", 10)]


# ------------------------------------------------------------------ torchvision sets


def test_torchvision_sets_and_transforms_are_known() -> None:
    mnist = "    from torchvision.datasets.MNIST\n    root = 'data'\n"
    assert codes(program(mnist, "x -> flatten() -> dense(10)", shape="(1, 28, 28)")) == []
    assert codes(program(mnist, "x -> flatten() -> dense(10)", shape="(3, 28, 28)")) == ["T092"]
    cifar = (
        "    from torchvision.datasets.CIFAR100\n    root = 'data'\n"
        "    transforms = [RandomCrop(32, padding=4), Resize(40), CenterCrop(36), ToTensor()]\n"
    )
    assert codes(program(cifar, "x -> flatten() -> dense(100)", shape="(3, 36, 36)")) == []
    assert codes(program(cifar, "x -> flatten() -> dense(10)", shape="(3, 36, 36)")) == ["T093"]
    emnist = "    from torchvision.datasets.EMNIST\n    root = 'data'\n    split = 'letters'\n"
    found = errors(program(emnist, "x -> flatten() -> dense(26)", shape="(1, 28, 28)"))
    assert [d.code for d in found] == ["T093"] and "27 classes from `split = 'letters'`" in (
        found[0].message
    )
    folder = (
        "    from torchvision.datasets.ImageFolder\n    root = 'data'\n"
        "    transforms = [RandomResizedCrop(224), RandomHorizontalFlip(), ToTensor(),"
        " Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]\n"
    )
    assert dataset(f"dataset d:\n{folder}").sample.shape == (3, 224, 224)
    unsized = "    from torchvision.datasets.ImageFolder\n    root = 'data'\n"
    assert dataset(f"dataset d:\n{unsized}").sample.shape is None


@pytest.mark.parametrize(
    ("transforms", "problem"),
    [
        ("[Normalize((0.5,), (0.5,))]", "Normalize needs float tensors"),
        ("[ToTensor(), Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]", "3 means"),
        ("[Resize(8)]", "PIL images, which a DataLoader cannot batch"),
        ("[RandomCrop(12), ToTensor()]", "larger than the 8x8 images"),
    ],
)
def test_transforms_torch_refuses_are_located(transforms: str, problem: str) -> None:
    source = (
        "dataset d:\n    from torchvision.datasets.FakeData\n    size = 2\n"
        f"    image_size = (1, 8, 8)\n    transforms = {transforms}\n"
    )
    found = errors(source)
    assert [d.code for d in found] == ["T095"] and problem in found[0].message
    assert found[0].span is not None and found[0].span.line == 5
    torchvision = pytest.importorskip("torchvision")
    from torch.utils.data import DataLoader

    t = torchvision.transforms
    built = {
        "Normalize": t.Normalize,
        "ToTensor": t.ToTensor,
        "Resize": t.Resize,
        "RandomCrop": t.RandomCrop,
    }
    pipeline = t.Compose(eval(transforms, {}, built))  # noqa: S307 - the test's own literal
    data = torchvision.datasets.FakeData(2, (1, 8, 8), transform=pipeline)
    with pytest.raises((TypeError, ValueError, RuntimeError)):
        next(iter(DataLoader(data, batch_size=2)))


def test_tensor_sets_refuse_to_tensor() -> None:
    found = errors(f"dataset d:\n{IMAGES}    transforms = [ToTensor()]\n")
    assert [d.code for d in found] == ["T095"] and "already yields float32" in found[0].message


@pytest.mark.parametrize(
    "transforms",
    [
        "[ToTensor()]",
        "[Resize(6), ToTensor()]",
        "[Resize((5, 9)), CenterCrop(4), ToTensor()]",
        "[Pad((1, 2)), Grayscale(num_output_channels=3), ToTensor()]",
        "[Pad((1, 2, 3, 4)), RandomCrop(6), RandomVerticalFlip(), PILToTensor()]",
        "[RandomResizedCrop((7, 5)), ColorJitter(0.1), ToTensor(), Normalize((0.5,), (0.5,))]",
        "[RandomRotation(10), Grayscale(), ToTensor()]",
    ],
)
def test_known_shapes_equal_torchvision(transforms: str) -> None:
    """The table's arithmetic against the real transforms on a 3x10x14 FakeData image."""
    source = (
        "dataset d:\n    from torchvision.datasets.FakeData\n    size = 1\n"
        f"    image_size = (3, 10, 14)\n    transforms = {transforms}\n"
    )
    assert errors(source) == []
    known = dataset(source)
    torchvision = pytest.importorskip("torchvision")
    t = torchvision.transforms
    names = {n: getattr(t, n) for n in dir(t) if n[0].isupper()}
    pipeline = t.Compose(eval(transforms, {}, names))  # noqa: S307 - the test's own literal
    sample, target = torchvision.datasets.FakeData(1, (3, 10, 14), transform=pipeline)[0]
    assert known.sample.shape == tuple(sample.shape)
    assert known.sample.dtype == str(sample.dtype).removeprefix("torch.")
    assert known.targets.classes == 10 and int(target) < 10


def test_aurane_data_sets_equal_their_contracts() -> None:
    pytest.importorskip("torch")
    import aurane.data

    tokens = dataset(
        "dataset d:\n    from aurane.data.SyntheticTokens\n    size = 2\n    vocab_size = 9\n"
    )
    x, y = aurane.data.SyntheticTokens(2, vocab_size=9)[0]
    assert tokens.sample.shape == tuple(x.shape) and tokens.targets.shape == tuple(y.shape)
    assert tokens.sample.dtype == "int64" and tokens.targets.classes == 9
    regression = dataset(
        "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 2\n    targets = 3\n"
    )
    x, y = aurane.data.SyntheticRegression(2, targets=3)[0]
    assert regression.sample.shape == tuple(x.shape) and regression.targets.shape == (3,)
    assert regression.targets.kind == "regression"


def test_every_source_in_the_table_is_an_allowed_source() -> None:
    from aurane.semantics import sources

    for dotted, doc in data_contracts.known_sources():
        assert sources.allowed_source(dotted, ()), dotted
        assert doc


# ------------------------------------------------------------------ output -> loss -> metrics


REGRESSION = "    from aurane.data.SyntheticRegression\n    size = 4\n    features = 4\n"


@pytest.mark.parametrize(
    ("data", "head", "loss", "code"),
    [
        (REGRESSION + "    targets = 3\n", "dense(2)", "mse", "T093"),  # never broadcast
        (REGRESSION + "    targets = 2\n", "dense(2)", "huber", None),
        (REGRESSION, "dense(1)", "cross_entropy", "T093"),  # float targets
        (IMAGES.replace("(1, 4, 4)", "(4,)") + "    num_classes = 2\n", "dense(1)", "bce", None),
        (IMAGES.replace("(1, 4, 4)", "(4,)") + "    num_classes = 10\n", "dense(1)", "bce",
         "T093"),  # labels past 1
        (IMAGES.replace("(1, 4, 4)", "(4,)") + "    num_classes = 2\n", "dense(2)",
         "bce_with_logits", "T093"),  # (2,) outputs, scalar targets
    ],
)  # fmt: skip
def test_targets_fit_the_output_under_the_loss(
    data: str, head: str, loss: str, code: str | None
) -> None:
    body = f"x -> {head}.sigmoid" if loss == "bce" else f"x -> {head}"
    source = program(data, body, f"    loss = {loss}\n", shape="(4,)")
    assert codes(source) == ([code] if code else [])


def test_metrics_fit_the_task() -> None:
    source = program(
        REGRESSION, "x -> dense(1)", "    loss = mse\n    metrics = [mae, accuracy]\n", "(4,)"
    )
    found = errors(source)
    assert [d.code for d in found] == ["T094"] and "metric accuracy" in found[0].message
    assert found[0].span is not None and (found[0].span.line, found[0].span.column) == (11, 21)


def test_tables_equal_the_runtime_and_code_generator() -> None:
    pytest.importorskip("torch")
    from aurane.ir import contracts
    from aurane.runtime import metrics, tasks

    # one table (runtime/tasks.py, torch-free): the checker and EpochStats read the same
    # object; tests/fuzz/test_config_metrics.py runs both on every metric and task
    assert contracts.METRICS_BY_TASK is tasks.METRICS_BY_TASK is metrics.METRICS_BY_TASK
    assert {k: v[0] for k, v in torch_jobs._TASKS.items()} == data_contracts.LOSS_TASKS


# ------------------------------------------------------------------ GAN and unknown sources


def test_gan_real_data_must_fit_the_discriminator() -> None:
    source = """\
dataset d:
    from torchvision.datasets.FakeData
    image_size = (3, 8, 8)
model G:
    input_shape = (4,)
    def forward(z):
        z -> dense(64).tanh -> reshape(1, 8, 8)
model D:
    input_shape = (1, 8, 8)
    def forward(x):
        x -> flatten() -> dense(1).sigmoid
train_gan G and D on d:
    epochs = 1
"""
    found = errors(source)
    assert [(d.code, d.span.line if d.span else 0) for d in found] == [("T092", 12)]
    assert "discriminator 'D' takes (1, 8, 8)" in found[0].message


def test_unknown_sources_are_left_to_the_first_batch() -> None:
    use = "use mydata\n" + program(
        "    from mydata.Pictures\n    size = 4\n", "x -> flatten() -> dense(3)"
    )
    assert errors(use) == []
    result = front(use)
    assert result.resolved is not None
    (d,) = result.resolved.datasets
    assert runtime_check(d)
    known = front(program(IMAGES + "    num_classes = 3\n", "x -> flatten() -> dense(3)"))
    assert known.resolved is not None and not runtime_check(known.resolved.datasets[0])
    folder = front("dataset f:\n    from torchvision.datasets.ImageFolder\n    root = 'x'\n")
    assert folder.resolved is not None and runtime_check(folder.resolved.datasets[0])


# ------------------------------------------------------------------ attention padding


def test_padding_mask_must_keep_the_sequence_length() -> None:
    """The mask of the input tokens had the wrong length at run time."""
    body = "x -> embedding(100, 16) -> {middle} -> multihead_attention(heads=2, dim=16)"
    head = (
        "model Net:\n    input_shape = (8,)\n    input_dtype = int64\n    input_padding_idx = 0\n"
    )
    source = head + "    def forward(x):\n        " + body.format(middle="reshape(4, 32)")
    found = errors(source.replace("-> multihead", "-> dense(16) -> multihead"))
    assert [d.code for d in found] == ["T096"] and "reads a sequence of 4" in found[0].message
    assert [label.span.line for label in found[0].labels] == [4]
    assert errors(source.replace("reshape(4, 32)", "dropout(0.1)")) == []
