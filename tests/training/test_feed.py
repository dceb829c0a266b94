"""Issue 23 item 4: data to several inputs.

Samples of several fields (dicts, as Hugging Face ``datasets`` yields; tuples) feed a
model's inputs by name, by position or as ``inputs = {...}`` says; ``target`` names the
target field, ``output`` the model output the loss reads. Each misfit is a located error
(T150, T151, T092 per input, S190, S191, S192); the generated ``rt.Feed`` is executed on
dict and tuple loaders; the two examples train under ``aurane run`` and resume.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from aurane.compile import compile_source
from aurane.data import SyntheticDenoising, SyntheticMaskedText
from aurane.runtime.contracts import DataMismatch, Feed
from tests.conftest import EXAMPLES
from tests.helpers import errors, where
from tests.training.helpers import main_here, run_here

# line numbers matter: the tests below point at them
TEXT = """\
dataset reviews:
    from aurane.data.SyntheticMaskedText
    size = 32
    sequence_length = 8
    batch = 8

model Net:
    input_shape = {input_ids: (8,), attention_mask: (8,)}
    input_dtype = {input_ids: int64, attention_mask: int64}
    def forward(input_ids, attention_mask=ones):
        h = input_ids -> embedding(64, 8)
        m = to(attention_mask, "float32") -> unsqueeze(-1)
        pooled = multiply(h, m) -> sum(dim=1)
        logits = pooled -> dense(2)
        return logits, pooled

train Net on reviews:
    output = logits
    loss = cross_entropy
"""


def _edit(old: str, new: str, text: str = TEXT) -> str:
    assert old in text
    return text.replace(old, new, 1)


def _load(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "generated"}
    exec(compile(compile_source(source, filename="t.aur"), "t.py", "exec"), namespace)
    return namespace


def test_the_text_program_checks_and_feeds_its_inputs_by_name() -> None:
    assert errors(TEXT) == []
    code = compile_source(TEXT, filename="t.aur")
    wanted = (
        'rt.Feed({"input_ids": "input_ids", "attention_mask": "attention_mask"}, target="label")'
    )
    assert wanted in code
    assert "inputs, targets = feed(batch, device, \"training data 'reviews'\")" in code
    assert "outputs = net(*inputs)[0]  # output = logits" in code


# ---------------------------------------------------------------- located errors


def test_a_required_input_no_field_feeds_is_t150_at_the_dataset_reference() -> None:
    source = TEXT.replace("attention_mask=ones", "attention_mask")
    source = source.replace("input_ids", "ids").replace("input_ids", "ids")
    found = [d for d in errors(source) if d.code == "T150"]
    assert len(found) == 1 and where(found[0]) == (17, 14)  # `on reviews`
    assert "input 'ids'" in found[0].message and "'input_ids'" in found[0].message
    assert [label.span.line for label in found[0].labels] == [10, 2]  # the input, the source


def test_a_named_field_the_data_lacks_is_t150_at_the_name() -> None:
    source = _edit(
        "    output = logits\n", "    output = logits\n    inputs = {input_ids: tokens}\n"
    )
    (found,) = errors(source)
    assert found.code == "T150" and where(found) == (19, 26)
    assert "no field 'tokens' for input 'input_ids'" in found.message


def test_an_input_of_the_wrong_dtype_from_the_data_is_t092() -> None:
    source = _edit("attention_mask: int64}", "attention_mask: float32}")
    (found,) = errors(source)
    assert found.code == "T092" and where(found) == (17, 14)
    assert "field 'attention_mask' yields int64" in found.message and "float32" in found.message


def test_an_output_name_the_model_does_not_have_is_s190_at_the_name() -> None:
    (found,) = errors(_edit("output = logits", "output = logit"))
    assert found.code == "S190" and where(found) == (18, 14)
    assert "(it returns logits, pooled)" in found.message and found.hint == "write output = logits"


def test_several_outputs_without_output_is_s191_at_the_model() -> None:
    (found,) = errors(_edit("    output = logits\n", ""))
    assert found.code == "S191" and where(found) == (17, 7)


def test_an_inputs_key_that_is_no_input_is_s192_at_the_key() -> None:
    (found,) = errors(
        _edit("    output = logits\n", "    output = logits\n    inputs = {mask: x}\n")
    )
    assert found.code == "S192" and where(found) == (19, 15)


def test_a_dataset_field_with_no_input_is_t151() -> None:
    source = _edit("def forward(input_ids, attention_mask=ones):", "def forward(input_ids):")
    source = _edit(
        "input_shape = {input_ids: (8,), attention_mask: (8,)}", "input_shape = (8,)", source
    )
    source = _edit(
        "input_dtype = {input_ids: int64, attention_mask: int64}", "input_dtype = int64", source
    )
    source = _edit('to(attention_mask, "float32")', 'ones_like(input_ids, dtype="float32")', source)
    (found,) = errors(source)
    assert found.code == "T151" and where(found) == (17, 14)
    assert "field 'attention_mask'" in found.message
    assert found.labels[0].span.line == 2


def test_the_target_field_can_be_named_and_must_exist() -> None:
    source = _edit("    output = logits\n", "    output = logits\n    target = labels\n")
    (found,) = errors(source)
    assert found.code == "T150" and where(found) == (19, 14) and "target" in found.message
    assert errors(source.replace("target = labels", "target = label")) == []


# ---------------------------------------------------------------- generated code runs


def _renamed() -> str:
    """The same model with inputs named ids and mask, fed by whatever the data has."""
    source = TEXT.replace("input_ids", "ids").replace("attention_mask", "mask")
    return source.replace("    from aurane.data.SyntheticMaskedText\n", "")  # injected loader


def test_unknown_data_is_fed_by_name_or_position_at_run_time() -> None:
    code = compile_source(_renamed(), filename="t.aur")
    assert 'feed = rt.Feed(["ids", "mask"], optional=["mask"])' in code
    train = _load(_renamed())["train_net"]
    data = SyntheticMaskedText(32, sequence_length=8).fields
    ids, mask, label = data["input_ids"], data["attention_mask"], data["label"]
    torch.manual_seed(0)
    three = train(train_loader=DataLoader(TensorDataset(ids, mask, label), batch_size=8))
    assert len(three.training_history) == 1
    # (ids, label): the mask is left to its default (ones)
    two = train(train_loader=DataLoader(TensorDataset(ids, label), batch_size=8))
    assert torch.isfinite(torch.tensor(two.training_history[0]["loss"]))
    named = [{"ids": a, "mask": b, "label": c} for a, b, c in zip(ids, mask, label, strict=True)]
    assert len(train(train_loader=DataLoader(named, batch_size=8)).training_history) == 1
    hf = SyntheticMaskedText(32, sequence_length=8)  # input_ids: no field for ids
    with pytest.raises(DataMismatch, match="no field 'ids' for the model's input 'ids'"):
        train(train_loader=DataLoader(hf, batch_size=8))


def test_a_mapped_feed_trains_on_hugging_face_names_and_validates() -> None:
    source = _renamed().replace(
        "    output = logits\n",
        "    output = logits\n    inputs = {ids: input_ids, mask: attention_mask}\n"
        "    validate_on = reviews\n",
    )
    source = source.replace(
        "    size = 32\n", "    from aurane.data.SyntheticMaskedText\n    size = 32\n"
    )
    assert errors(source) == []
    code = compile_source(source, filename="t.aur")
    assert 'rt.Feed({"ids": "input_ids", "mask": "attention_mask"}, target="label")' in code
    assert "feed=feed" in code and "output=0" in code
    model = _load(source)["train_net"]()
    assert {"loss", "val_loss"} <= set(model.training_history[0])


def test_feed_reports_a_missing_target_and_an_ambiguous_one() -> None:
    batch = {"a": torch.zeros(2), "b": torch.zeros(2), "c": torch.zeros(2)}
    device = torch.device("cpu")
    with pytest.raises(DataMismatch, match="cannot tell the target"):
        Feed(["a"])(batch, device, "data 'd'")
    with pytest.raises(DataMismatch, match="no field 'z' for the target"):
        Feed({"a": "a"}, target="z")(batch, device, "data 'd'")
    inputs, target = Feed({"a": "b", "x": None}, target="c")(batch, device, "data 'd'")
    assert inputs[1] is None and inputs[0] is batch["b"] and target is batch["c"]
    # by name at run time, one input's field named, an optional input without a field
    feed = Feed(["x", "a", "m"], fields={"x": "b"}, optional=["m"])
    inputs, target = feed(batch, device, "data 'd'")
    assert inputs[0] is batch["b"] and inputs[1] is batch["a"] and inputs[2] is None
    assert target is batch["c"]
    # tuples: by position, the target last
    pair = (torch.ones(2), torch.zeros(2))
    inputs, target = Feed(["x", "m"], optional=["m"])(pair, device, "data 'd'")
    assert inputs[0] is pair[0] and inputs[1] is None and target is pair[1]


def test_the_datasets_yield_what_their_contracts_say() -> None:
    text = SyntheticMaskedText(4, sequence_length=6, num_classes=3)[0]
    assert {k: (tuple(v.shape), v.dtype) for k, v in text.items()} == {
        "input_ids": ((6,), torch.int64),
        "attention_mask": ((6,), torch.int64),
        "label": ((), torch.int64),
    }
    padded = text["input_ids"][text["attention_mask"] == 0]
    assert bool((padded == 0).all())
    noised = SyntheticDenoising(3, image_size=(2, 4, 4), timesteps=10)[1]
    assert {k: (tuple(v.shape), v.dtype) for k, v in noised.items()} == {
        "image": ((2, 4, 4), torch.float32),
        "timestep": ((), torch.int64),
        "noise": ((2, 4, 4), torch.float32),
    }
    assert 0 <= int(noised["timestep"]) < 10


# ---------------------------------------------------------------- the examples, end to end


@pytest.mark.parametrize(
    ("name", "job"),
    [("text_classifier_masked", "train_textclassifier"), ("denoiser_timestep", "train_denoiser")],
)
def test_example_trains_with_aurane_run_and_resumes(
    name: str,
    job: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``aurane run`` trains the example (run_here: the command and its program in this
    process); the resume runs the program's command line in this process (main_here)."""
    source = tmp_path / f"{name}.aur"
    source.write_text((EXAMPLES / f"{name}.aur").read_text(encoding="utf-8"), encoding="utf-8")
    first = run_here(source.name, "--epochs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"{job}: 1 epoch, 4 steps" in first.stdout, first.stdout
    if name == "denoiser_timestep":
        return  # the resume below is the same code for both (one subprocess less)
    (folder,) = (tmp_path / "checkpoints" / name).glob("run_*")
    monkeypatch.chdir(tmp_path)
    main_here(source.read_text(encoding="utf-8"), "--resume", "--epochs", "2", job=job, name=name)
    resumed = capsys.readouterr().out
    assert "resumed at" in resumed, resumed
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    assert rows and all(torch.isfinite(torch.tensor(row["loss"])) for row in rows if "loss" in row)
    checkpoint = torch.load(folder / "last.pt", weights_only=True)
    assert checkpoint["steps"]["count"] == 8 and len(rows) == 2


def test_one_input_and_two_outputs_train_on_pairs_with_amp_and_accumulation() -> None:
    source = """\
dataset d:
    from aurane.data.SyntheticRegression
    size = 32
    features = 4
    batch = 8

model Two:
    input_shape = (4,)
    def forward(x):
        h = x -> dense(8).relu
        y = h -> dense(1)
        return h, y

train Two on d:
    output = y
    loss = mse
    accumulate = 2
    mixed_precision = true
"""
    assert errors(source) == []
    code = compile_source(source, filename="t.aur")
    assert "rt.Feed" not in code  # (input, target) pairs, as before
    assert "outputs = net(inputs)[1]  # output = y" in code
    model = _load(source)["train_two"]()
    assert torch.isfinite(torch.tensor(model.training_history[0]["loss"]))


def test_without_input_dtype_each_input_is_held_to_its_own_first_layers() -> None:
    # the timestep's embedding needs int64 of the timestep, not of the float image
    source = (EXAMPLES / "denoiser_timestep.aur").read_text(encoding="utf-8")
    source = _edit("    input_dtype = {image: float32, timestep: int64}\n", "", source)
    assert errors(source) == []


def test_a_field_of_the_wrong_shape_for_its_input_is_t092() -> None:
    swapped = _edit(
        "    output = logits\n", "    output = logits\n    inputs = {input_ids: label}\n"
    )
    (found,) = errors(swapped)
    assert found.code == "T092" and where(found) == (17, 14)
    assert "field 'label' for input 'input_ids' yields samples of shape ()" in found.message


def test_a_hugging_face_dataset_feeds_the_generated_job() -> None:
    """A ``datasets.Dataset`` in torch format yields dicts: the compiled job trains on it
    as an injected loader, each input by its column's name."""
    datasets = pytest.importorskip("datasets")
    columns = SyntheticMaskedText(32, sequence_length=8).fields
    table = datasets.Dataset.from_dict({k: v.tolist() for k, v in columns.items()})
    source = TEXT.replace("    from aurane.data.SyntheticMaskedText\n", "")
    train = _load(source)["train_net"]
    torch.manual_seed(0)
    model = train(train_loader=DataLoader(table.with_format("torch"), batch_size=8))
    assert len(model.training_history) == 1
    assert torch.isfinite(torch.tensor(model.training_history[0]["loss"]))
