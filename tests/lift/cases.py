"""The coverage set of ``aurane import`` (issue 26), shared by the tests and
``bench/import_coverage.py``: every classification builder of ``torchvision.models`` and
three Hugging Face models at small configurations.

Each case says how to build the model and at what input; CI-sized inputs are the smallest
the architecture accepts (32x32 for most, 75x75 for Inception v3, 64x64 where pooling
needs it). ``expected`` is what the lift gives: exact, or the gap that stops it (the
reason is in docs/import.md). Builders of hundreds of millions of parameters run in the
benchmark only (``ci=False``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXACT = "exact"
GAP = "gap"

# builders whose weights alone are over 1 GB: the benchmark runs them, CI does not
EXPENSIVE = {
    "vit_h_14": "632M parameters (2.5 GB of weights)",
    "regnet_y_128gf": "645M parameters (2.6 GB), and RegNet cannot be built on meta",
}
# Swin folds its windows into the batch axis; MaxViT computes its relative position bias
# outside the batch (a table indexed by a buffer, then viewed): docs/import.md, gaps
WINDOWED = ("swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b", "maxvit_t")
BIG_INPUT = {"inception_v3": 75, "googlenet": 64, "alexnet": 64, "maxvit_t": 224}


@dataclass(frozen=True)
class Case:
    name: str
    module: str  # where the builder lives
    builder: str
    kwargs: tuple[tuple[str, Any], ...]
    input_shape: tuple[int, ...]
    input_dtype: str = "float32"
    expected: str = EXACT
    ci: bool = True
    why: str = ""  # why not in CI, or why not exact
    reference_lines: int = 0  # lines of the original's source (filled by the benchmark)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs)
        return f"{self.module}:{self.builder}({args})"


def torchvision_cases() -> list[Case]:
    import torchvision.models as models

    cases = []
    for name in models.list_models(module=models):
        kwargs: dict[str, Any] = {"weights": None, "num_classes": 10}
        size = BIG_INPUT.get(name, 32)
        if name.startswith("vit_"):
            patch = int(name.split("_")[-1])
            size = 2 * patch
            kwargs["image_size"] = size
        if name in ("googlenet", "inception_v3"):
            kwargs.update(aux_logits=False, init_weights=True)
        expected, why = EXACT, ""
        if name in WINDOWED:
            expected, why = GAP, "windows folded into the batch axis"
            if name == "maxvit_t":
                why = "relative position bias computed outside the batch"
        ci = name not in EXPENSIVE and name != "maxvit_t"
        if name in EXPENSIVE:
            why = EXPENSIVE[name]
        cases.append(
            Case(
                name,
                "torchvision.models",
                name,
                tuple(kwargs.items()),
                (3, size, size),
                "float32",
                expected,
                ci,
                why,
            )
        )
    return cases


HF_SEQUENCE = 8
HF_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "bert": (
        "BertModel",
        dict(
            vocab_size=99,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=64,
        ),
    ),
    "gpt2": (
        "GPT2LMHeadModel",
        dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64, use_cache=False),
    ),
    "llama": (
        "LlamaForCausalLM",
        dict(
            vocab_size=99,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
            use_cache=False,
        ),
    ),
}


def huggingface_cases() -> list[Case]:
    return [
        Case(key, "transformers", cls, tuple(config.items()), (HF_SEQUENCE,), "int64")
        for key, (cls, config) in HF_CONFIGS.items()
    ]


def build_case(case: Case) -> tuple[Any, Any]:
    """The case's model (eval mode) and its constructor arguments."""
    import importlib

    from tests.lift.models import build

    target = getattr(importlib.import_module(case.module), case.builder)
    kwargs = dict(case.kwargs)
    if case.module == "transformers":
        config = target.config_class(**kwargs)
        return build(target, config)
    return build(target, **kwargs)
