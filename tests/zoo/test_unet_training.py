"""The U-Net zoo program is also a training program: per-pixel cross-entropy on
``aurane.data.SyntheticSegmentation`` (issue 10), run for one epoch at a tiny size."""

from __future__ import annotations

import math
import re
import types
from pathlib import Path

import pytest

from aurane.compile import compile_detailed

torch = pytest.importorskip("torch")

from aurane.data import SyntheticSegmentation  # noqa: E402

UNET = Path(__file__).resolve().parents[2] / "examples" / "zoo" / "unet.aur"
TINY = {"image": "16", "base": "4"}


def _tiny_source() -> str:
    text = UNET.read_text(encoding="utf-8")
    for name, value in TINY.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.MULTILINE)
        assert count == 1
    return text


def test_segmentation_dataset_masks_match_images() -> None:
    data = SyntheticSegmentation(6, image_size=(2, 9, 11), num_classes=3, seed=4)
    image, mask = data[0]
    assert image.shape == (2, 9, 11) and image.dtype == torch.float32
    assert mask.shape == (9, 11) and mask.dtype == torch.int64
    assert int(data.targets.min()) >= 0 and int(data.targets.max()) < 3
    again = SyntheticSegmentation(6, image_size=(2, 9, 11), num_classes=3, seed=4)
    assert torch.equal(again.inputs, data.inputs) and torch.equal(again.targets, data.targets)
    other = SyntheticSegmentation(6, image_size=(2, 9, 11), num_classes=3, seed=4, train=False)
    assert not torch.equal(other.targets, data.targets)
    with pytest.raises(ValueError):
        SyntheticSegmentation(2, image_size=(9, 11))  # type: ignore[arg-type]


def test_unet_program_trains_one_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = compile_detailed(_tiny_source(), validate=True, filename="unet.aur")
    assert "aurane.data.SyntheticSegmentation(" in result.output
    assert "def train_unet(" in result.output
    module = types.ModuleType("unet_train")
    exec(compile(result.output, "<unet>", "exec"), module.__dict__)
    monkeypatch.chdir(tmp_path)
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is faster on a shared machine
    try:
        model = module.train_unet()
    finally:
        torch.set_num_threads(threads)
    history = model.training_history
    assert len(history) == 1
    assert math.isfinite(history[0]["loss"])
    logits = model.eval()(torch.randn(2, 3, 16, 16))
    assert logits.shape == (2, 2, 16, 16)
