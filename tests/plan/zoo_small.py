"""The zoo at small sizes for the plan's measured tests: every program with its top-level
constants (or its 224x224 input) rewritten so one CPU training step takes milliseconds."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import resized

REPO = Path(__file__).resolve().parents[2]
ZOO = REPO / "examples" / "zoo"

# program -> (model, rewrites of "name = value" lines or whole text fragments)
SMALL: dict[str, tuple[str, dict[str, str]]] = {
    "resnet18": ("ResNet18", {"image": "64", "classes": "10"}),
    "gpt2": ("GPT", {"vocab": "64", "block": "16", "n_layer": "2", "n_embd": "32", "n_head": "4"}),
    "llama": (
        "Llama",
        {
            "vocab": "64",
            "seq": "16",
            "n_layer": "2",
            "n_embd": "32",
            "n_head": "4",
            "n_kv_head": "2",
            "hidden": "48",
        },
    ),
    "dcgan": ("Discriminator", {"ngf": "4", "ndf": "4"}),
}


def small_source(program: str) -> str:
    text = (ZOO / f"{program}.aur").read_text(encoding="utf-8")
    return resized(text, SMALL[program][1], program)
