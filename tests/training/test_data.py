"""The offline datasets: deterministic per seed, (input, target) pairs, learnable."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from aurane.data import SyntheticImages, SyntheticRegression, SyntheticTokens
from tests.training.helpers import env


def test_images_are_deterministic_float_with_int64_labels() -> None:
    a, b = SyntheticImages(10, (3, 4, 4), 5, seed=2), SyntheticImages(10, (3, 4, 4), 5, seed=2)
    image, label = a[3]
    assert image.shape == (3, 4, 4) and image.dtype == torch.float32
    assert label.dtype == torch.int64 and 0 <= int(label) < 5
    assert all(torch.equal(x, y) for x, y in zip(a[7], b[7], strict=True))
    assert not torch.equal(a[0][0], SyntheticImages(10, (3, 4, 4), 5, seed=3)[0][0])
    assert len(a) == 10


def test_images_carry_a_learnable_class_signal() -> None:
    train = SyntheticImages(400, (1, 6, 6), 4, seed=0)
    test = SyntheticImages(200, (1, 6, 6), 4, seed=0, train=False)
    assert not torch.equal(train.inputs[:200], test.inputs)  # disjoint streams, same task
    means = torch.stack([train.inputs[train.targets == c].mean(0) for c in range(4)])
    distances = ((test.inputs[:, None] - means[None]) ** 2).flatten(2).sum(2)
    accuracy = (distances.argmin(1) == test.targets).float().mean()
    assert accuracy > 0.9  # nearest class mean, far above the 0.25 of chance


def test_tokens_are_next_token_pairs() -> None:
    data = SyntheticTokens(6, sequence_length=8, vocab_size=11, seed=1)
    inputs, targets = data[2]
    assert inputs.shape == targets.shape == (8,)
    assert inputs.dtype == targets.dtype == torch.int64
    assert torch.equal(inputs[1:], targets[:-1])
    assert int(inputs.max()) < 11 and int(inputs.min()) >= 0


def test_regression_follows_a_fixed_linear_map() -> None:
    data = SyntheticRegression(500, features=3, targets=2, noise=0.0, seed=4)
    x, y = data[0]
    assert x.shape == (3,) and y.shape == (2,) and y.dtype == torch.float32
    assert torch.allclose(data.inputs @ data.weight + data.bias, data.targets)
    noisy = SyntheticRegression(500, features=3, targets=2, noise=0.1, seed=4)
    assert torch.equal(noisy.weight, data.weight)


def test_transforms_and_bad_arguments() -> None:
    data = SyntheticImages(4, (1, 2, 2), 2, transform=lambda t: t * 0, target_transform=int)
    image, label = data[0]
    assert float(image.abs().sum()) == 0 and isinstance(label, int)
    with pytest.raises(ValueError, match="size"):
        SyntheticImages(0, (1, 2, 2), 2)
    with pytest.raises(ValueError, match="seed"):
        SyntheticTokens(4, seed=-1)


def test_import_aurane_does_not_import_the_datasets_or_torch() -> None:
    code = "import sys, aurane; print('aurane.data' in sys.modules, 'torch' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env(), check=True
    )
    assert done.stdout.strip() == "False False"
