"""Each valid corpus model rebuilt by hand through the catalog: shapes, parameters, FLOPs.

The sums of ``parameters`` and ``2 * macs`` over a model's operations must equal the
figures of its hand-written PyTorch twin in corpus/valid/expected.json.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from aurane.ops import argument_errors, bind_defaults, lookup
from aurane.ops.spec import InferContext, TensorType
from tests.conftest import VALID

EXPECTED = VALID / "expected.json"  # the project's copy of the corpus facts (tests/corpus)


class Tally:
    """Runs catalog ops on static types and sums their parameters and MACs."""

    def __init__(self) -> None:
        self.parameters = 0
        self.macs = 0

    def __call__(self, op: str, *inputs: TensorType, **args: Any) -> TensorType:
        spec = lookup(op)
        assert spec is not None, op
        assert argument_errors(spec, args) == []
        ctx = InferContext(bind_defaults(spec, args), inputs, "float32")
        out = spec.infer(ctx)
        self.parameters += spec.parameters(ctx, out)
        self.macs += spec.macs(ctx, out)
        return out


Model = Callable[[Tally, TensorType], TensorType]


def tiny_net(t: Tally, x: TensorType) -> TensorType:
    x = t("relu", t("conv2d", x, channels=16, kernel=3))
    x = t("flatten", t("maxpool", x, kernel=2))
    return t("dense", t("relu", t("dense", x, features=64)), features=10)


def branched(t: Tally, x: TensorType) -> TensorType:
    joined = t("concat", t("dense", x, features=4), t("dense", x, features=2), dim=1)
    return t("relu", t("add", x, t("dense", joined, features=8)))


def scoped(t: Tally, x: TensorType) -> TensorType:
    x = t("dropout", t("gelu", t("dense", x, features=16)), p=0.1)
    return t("dense", x, features=5)


def uses_global(t: Tally, x: TensorType) -> TensorType:
    x = t("relu", t("dense", x, features=32))
    return t("log_softmax", t("dense", x, features=5), dim=-1)


def tiny_lm(t: Tally, x: TensorType) -> TensorType:
    x = t("embedding", x, vocabulary=1000, width=64, padding_idx=0)
    x = t("dropout", t("positional_encoding", x, max_len=32), p=0.1)
    x = t("add", x, t("multihead_attention", x, heads=4, dim=64, causal=True))
    x = t("layer_norm", x)
    x = t("dense", t("gelu", t("dense", x, features=256)), features=64)
    return t("dense", t("layer_norm", x), features=1000)


def tagger(t: Tally, x: TensorType) -> TensorType:
    x = t("lstm", x, hidden=32, bidirectional=True)
    x = t("gru", x, hidden=16, num_layers=2, dropout=0.2)
    return t("dense", x, features=5)


def signal(t: Tally, x: TensorType) -> TensorType:
    x = t("relu", t("conv1d", x, channels=8, kernel=5, stride=2, padding=2))
    x = t("relu", t("conv1d", x, channels=16, kernel=3, dilation=2, groups=8))
    return t("dense", t("global_avg_pool", t("batchnorm", x)), features=3)


def tiny_unet(t: Tally, x: TensorType) -> TensorType:
    down = t("relu", t("conv2d", x, channels=16, kernel=3, padding=1))
    mid = t("relu", t("conv2d", t("maxpool", down, kernel=2), channels=32, kernel=3, padding=1))
    skip = t("concat", t("upsample", mid, scale_factor=2, mode="nearest"), down, dim=1)
    out = t("relu", t("conv2d", skip, channels=16, kernel=(3, 3), padding=1))
    return t("sigmoid", t("conv2d", out, channels=1, kernel=1))


def odd_pools(t: Tally, x: TensorType) -> TensorType:
    x = t("avgpool", t("maxpool", x, kernel=3, stride=2), kernel=2)
    x = t("elu", t("conv2d", x, channels=6, kernel=(2, 3), stride=(1, 2), bias=False))
    x = t("flatten", t("layer_norm", t("reshape", x, shape=(6, -1))))
    return t("softmax", t("dense", x, features=2), dim=-1)


def encoder_block(t: Tally, x: TensorType) -> TensorType:
    x = t("layer_norm", t("add", x, t("multihead_attention", x, heads=4, dim=48)))
    x = t("dense", t("gelu", t("dense", x, features=4 * 48)), features=48)
    return t("layer_norm", x)


def encoder(t: Tally, x: TensorType) -> TensorType:
    for _ in range(3):  # repeat(EncoderBlock, 3)
        block_out = encoder_block(t, x)
        assert block_out == x  # repeat needs a shape-preserving block
        x = block_out
    return t("dense", x, features=10)


def residual_unit(t: Tally, x: TensorType) -> TensorType:
    h = t("relu", t("conv2d", x, channels=8, kernel=3, padding=1))
    h = t("conv2d", h, channels=8, kernel=3, padding=1)
    return t("relu", t("add", x, h))


def small_resnet(t: Tally, x: TensorType) -> TensorType:
    x = t("relu", t("conv2d", x, channels=8, kernel=3, padding=1))
    x = residual_unit(t, residual_unit(t, x))
    return t("dense", t("global_avg_pool", x), features=4)


def digits(t: Tally, x: TensorType) -> TensorType:
    x = t("flatten", t("maxpool", t("relu", t("conv2d", x, channels=8, kernel=3)), kernel=2))
    x = t("dropout", t("relu", t("dense", x, features=32)), p=0.25)
    return t("dense", x, features=10)


def generator(t: Tally, z: TensorType) -> TensorType:
    z = t("batch_norm", t("relu", t("dense", z, features=64)))
    return t("reshape", t("tanh", t("dense", z, features=256)), shape=(1, 16, 16))


def critic(t: Tally, x: TensorType) -> TensorType:
    x = t("leaky_relu", t("dense", t("flatten", x), features=64), slope=0.2)
    return t("sigmoid", t("dense", t("dropout", x, p=0.3), features=1))


MODELS: dict[tuple[str, str], tuple[Model, str | None]] = {
    ("tiny_cnn.aur", "TinyNet"): (tiny_net, None),
    ("branched.aur", "Branched"): (branched, None),
    ("constants.aur", "Scoped"): (scoped, None),
    ("constants.aur", "UsesGlobal"): (uses_global, None),
    ("sequence_lm.aur", "TinyLM"): (tiny_lm, "int64"),
    ("recurrent.aur", "Tagger"): (tagger, None),
    ("recurrent.aur", "Signal"): (signal, None),
    ("unet_like.aur", "TinyUNet"): (tiny_unet, "float32"),
    ("pooling_shapes.aur", "OddPools"): (odd_pools, None),
    ("composition.aur", "Encoder"): (encoder, None),
    ("composition.aur", "SmallResNet"): (small_resnet, None),
    ("training.aur", "Digits"): (digits, None),
    ("gan.aur", "Generator"): (generator, None),
    ("gan.aur", "Critic"): (critic, None),
}


@pytest.mark.parametrize("key", list(MODELS), ids=[name for _, name in MODELS])
def test_corpus_model_totals(key: tuple[str, str]) -> None:
    facts = json.loads(EXPECTED.read_text())[key[0]][key[1]]
    model, dtype = MODELS[key]
    tally = Tally()
    out = model(tally, TensorType(tuple(facts["input_shape"]), dtype))
    assert list(out.shape) == facts["output_shape"]
    assert tally.parameters == facts["parameters"]
    assert 2 * tally.macs == facts["flops_per_sample"]


def test_every_corpus_model_is_covered() -> None:
    expected = json.loads(EXPECTED.read_text())
    assert {(f, m) for f, models in expected.items() for m in models} == set(MODELS)
