"""Upstream 3.0's examples (issue 22): an embedding model with no input_dtype trained on
synthetic tokens, and an MLP GAN whose job lists the GAN metrics, pass ``check`` and
compile; their models build and run against the IR. The files are rewritten from the
issue's description of the upstream programs (the constructs each uses), not copied."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aurane.semantics import config
from aurane.tools.differential import run_accepted
from aurane.verify import load_generated

HERE = Path(__file__).resolve().parent
EXAMPLES = ("transformer.aur", "gan.aur")


@pytest.mark.parametrize("name", EXAMPLES)
def test_upstream_example_passes_check(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "aurane", "check", str(HERE / name)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in done.stdout


@pytest.mark.parametrize("name", EXAMPLES)
def test_upstream_example_compiles_and_its_models_run_as_the_ir_says(name: str) -> None:
    pytest.importorskip("torch")
    gen = load_generated((HERE / name).read_text(encoding="utf-8"), name)
    for model in gen.graphs:
        assert run_accepted(gen, model, 0) is None, model


def test_transformer_without_input_dtype_takes_the_token_data() -> None:
    """No input_dtype is unknown: the int64 tokens fit the embedding, and the generated
    job casts nothing (no float32 is invented)."""
    pytest.importorskip("torch")
    gen = load_generated((HERE / "transformer.aur").read_text(encoding="utf-8"), "t.aur")
    assert gen.graphs["LanguageModel"].input_dtype is None
    assert "expects float32" not in gen.code


def test_gan_metrics_are_the_ones_the_job_logs() -> None:
    text = (HERE / "gan.aur").read_text(encoding="utf-8")
    for metric in config.GAN_METRICS:
        assert metric in text
    pytest.importorskip("torch")
    gen = load_generated(text, "gan.aur")
    assert "(generator_loss, discriminator_loss, real_score, fake_score per epoch)" in gen.code
