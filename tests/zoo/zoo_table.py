"""Print the table of docs/zoo.md: lines, parameters, MACs and `aurane check` time per model.

Run from the repository root: ``python -m tests.zoo.zoo_table`` (needs torch and
torchvision for the reference line counts). Lines are *code lines*: not blank, not only a
comment, not a docstring; the same rule for the ``.aur`` program and the reference source.
``aurane check`` time is the wall time of ``python -m aurane check FILE`` (interpreter start
and imports included), best of three, and the front end alone (in process, best of three).
"""

from __future__ import annotations

import ast
import inspect
import io
import subprocess
import sys
import time
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aurane.analysis.profile import profile
from aurane.compile import compile_detailed
from aurane.frontend import run_front_end

REPO = Path(__file__).resolve().parents[2]
ZOO = REPO / "examples" / "zoo"


def code_lines(text: str, python: bool) -> int:
    """Lines that hold code: not blank, not only a comment, not a docstring; for ``.aur``
    text, not in a dataset, experiment or training job either."""
    skip: set[int] = set()
    if python:
        tree = ast.parse(text)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                value = body[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    end = body[0].end_lineno or body[0].lineno
                    skip.update(range(body[0].lineno, end + 1))
        counted: set[int] = set()
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
                continue
            if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            counted.update(range(token.start[0], token.end[0] + 1))
        return len(counted - skip)
    count, job = 0, False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not line[0].isspace():  # a top-level statement: is it a job or a dataset?
            job = stripped.split()[0] in JOB_WORDS
        count += not job
    return count


# Top-level blocks left out of the .aur count: the reference has no data or training code.
JOB_WORDS = frozenset({"dataset", "train", "train_gan", "experiment"})


def _source(objects: list[Any]) -> str:
    return "\n".join(inspect.getsource(obj) for obj in objects)


def references() -> dict[str, tuple[str, Callable[[], list[Any]]]]:
    """file -> (what the reference is, the classes and functions its builder uses)."""

    def tv() -> Any:
        import torchvision.models as models

        return models

    def resnet(blocks: str) -> list[Any]:
        m = tv().resnet
        return [m.conv3x3, m.conv1x1, getattr(m, blocks), m.ResNet]

    def misc() -> list[Any]:
        from torchvision.ops import misc as ops_misc

        return [ops_misc.ConvNormActivation, ops_misc.Conv2dNormActivation]

    def mobilenet() -> list[Any]:
        m = tv().mobilenetv2
        return [m.InvertedResidual, m.MobileNetV2, *misc()]

    def vit() -> list[Any]:
        m = tv().vision_transformer
        return [m.MLPBlock, m.EncoderBlock, m.Encoder, m.VisionTransformer]

    def convnext() -> list[Any]:
        m = tv().convnext
        from torchvision.ops.stochastic_depth import StochasticDepth, stochastic_depth

        return [
            m.LayerNorm2d,
            m.CNBlock,
            m.CNBlockConfig,
            m.ConvNeXt,
            StochasticDepth,
            stochastic_depth,
            *misc(),
        ]

    def efficientnet() -> list[Any]:
        m = tv().efficientnet
        from torchvision.ops import misc as ops_misc
        from torchvision.ops.stochastic_depth import StochasticDepth, stochastic_depth

        return [
            m.MBConvConfig,
            m.MBConv,
            m.EfficientNet,
            ops_misc.SqueezeExcitation,
            StochasticDepth,
            stochastic_depth,
            *misc(),
        ]

    def bert() -> list[Any]:  # what BertModel(BertConfig()) runs (no cross-attention)
        from transformers.models.bert import modeling_bert as m

        return [
            m.BertEmbeddings,
            m.eager_attention_forward,
            m.BertSelfAttention,
            m.BertSelfOutput,
            m.BertAttention,
            m.BertIntermediate,
            m.BertOutput,
            m.BertLayer,
            m.BertEncoder,
            m.BertPooler,
            m.BertModel,
        ]

    def twin(*names: str) -> Callable[[], list[Any]]:
        def objects() -> list[Any]:
            from tests.zoo import twins

            return [getattr(twins, name) for name in names]

        return objects

    return {
        "resnet18": ("torchvision ResNet, BasicBlock", lambda: resnet("BasicBlock")),
        "resnet50": ("torchvision ResNet, Bottleneck", lambda: resnet("Bottleneck")),
        "mobilenet_v2": ("torchvision MobileNetV2", mobilenet),
        "vit_b_16": ("torchvision VisionTransformer", vit),
        "convnext_tiny": ("torchvision ConvNeXt", convnext),
        "efficientnet_b0": ("torchvision EfficientNet", efficientnet),
        "gpt2": (
            "twin: nanoGPT",
            twin("GPTConfig", "CausalSelfAttention", "MLP", "Block", "GPT"),
        ),
        "llama": (
            "twin: HF Llama",
            twin(
                "LlamaConfig",
                "LlamaRMSNorm",
                "rotate_half",
                "LlamaRotaryEmbedding",
                "apply_rotary_pos_emb",
                "repeat_kv",
                "LlamaAttention",
                "LlamaMLP",
                "LlamaDecoderLayer",
                "LlamaModel",
                "LlamaForCausalLM",
            ),
        ),
        "unet": ("twin: milesial U-Net", twin("DoubleConv", "Down", "Up", "OutConv", "UNet")),
        "dcgan": ("twin: PyTorch DCGAN tutorial", twin("Generator", "Discriminator")),
        "bert": ("HF transformers BertModel", bert),
    }


# The model(s) of each program whose figures the table shows.
MODELS = {
    "resnet18": ["ResNet18"],
    "resnet50": ["ResNet50"],
    "mobilenet_v2": ["MobileNetV2"],
    "vit_b_16": ["ViT_B_16"],
    "convnext_tiny": ["ConvNeXtTiny"],
    "efficientnet_b0": ["EfficientNetB0"],
    "gpt2": ["GPT"],
    "llama": ["Llama"],
    "unet": ["UNet"],
    "dcgan": ["Generator", "Discriminator"],
    "bert": ["BertModel"],
}


def _si(count: int) -> str:
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if count >= scale / 10:
            return f"{count / scale:.3g} {unit}"
    return f"{count:,}"


def _best(work: Callable[[], object], times: int = 3) -> float:
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def _macs(result: Any, model: str, macs: object) -> str:
    """MACs per sample; a formula of symbolic sizes (``seq = dim(1, 512)``) is evaluated at
    each size's declared maximum, named after the figure (``48.3 G at seq 512``)."""
    if isinstance(macs, int):
        return _si(macs)
    from aurane.analysis.bind import bind_sizes, symbols_of

    graph = result.graphs[model]
    sizes = {name: high for name, (_, high) in symbols_of([graph]).items() if high is not None}
    (bound,), _ = bind_sizes(result.program, [graph], sizes)
    at = ", ".join(f"{name} {value}" for name, value in sizes.items())
    return f"{_si(profile(bound).macs)} at {at}"


def row(file: str) -> list[str]:
    path = ZOO / f"{file}.aur"
    text = path.read_text(encoding="utf-8")
    what, objects = references()[file]
    reference_lines = code_lines(_source(objects()), python=True)
    result = compile_detailed(text, filename=path.name)
    params, macs = [], []
    for model in MODELS[file]:
        p = profile(result.graphs[model])
        params.append(f"{p.parameters:,}")
        macs.append(_macs(result, model, p.macs))
    front = _best(lambda: run_front_end(text, path.name))
    command = [sys.executable, "-m", "aurane", "check", str(path)]
    cli = _best(lambda: subprocess.run(command, check=True, capture_output=True))
    return [
        f"`{file}`",
        str(code_lines(text, python=False)),
        f"{reference_lines} ({what})",
        " / ".join(params),
        " / ".join(macs),
        f"{cli:.2f} s ({front * 1000:.0f} ms)",
    ]


def main() -> None:
    header = ["program", ".aur lines", "reference lines", "parameters", "MACs", "aurane check"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    for file in MODELS:
        if (ZOO / f"{file}.aur").exists():
            print("| " + " | ".join(row(file)) + " |")


def _module_parts(module: Any, names: set[str]) -> str:
    """The top-level statements of ``module`` that define ``names`` (functions, classes and
    assignments such as VGG's ``cfgs``), in source order."""
    text = inspect.getsource(module)
    lines = text.splitlines()
    parts = []
    for node in ast.parse(text).body:
        targets: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            targets = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            nodes = node.targets if isinstance(node, ast.Assign) else [node.target]
            targets = [t.id for t in nodes if isinstance(t, ast.Name)]
        if names.intersection(targets):
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            parts.append("\n".join(lines[start - 1 : node.end_lineno]))
    return "\n".join(parts)


# family -> (torchvision module, what its builders use besides torchvision.ops); the
# reference counts those classes, functions and tables plus the builder of every variant
# (decorators included), not the weights enums.
FAMILY_REFERENCES: dict[str, tuple[str, list[str]]] = {
    "resnet": ("resnet", ["conv3x3", "conv1x1", "BasicBlock", "Bottleneck", "ResNet", "_resnet"]),
    "vgg": ("vgg", ["VGG", "make_layers", "cfgs", "_vgg"]),
    "mobilenet_v3": (
        "mobilenetv3",
        ["InvertedResidualConfig", "InvertedResidual", "MobileNetV3", "_mobilenet_v3_conf"],
    ),
    "efficientnet": (
        "efficientnet",
        ["_MBConvConfig", "MBConvConfig", "MBConv", "EfficientNet", "_efficientnet_conf"],
    ),
    "densenet": (
        "densenet",
        ["_DenseLayer", "_DenseBlock", "_Transition", "DenseNet", "_densenet"],
    ),
    "convnext": ("convnext", ["LayerNorm2d", "CNBlock", "CNBlockConfig", "ConvNeXt", "_convnext"]),
}


def family_row(family: str) -> list[str]:
    import importlib
    import re

    from torchvision.ops import misc
    from torchvision.ops.stochastic_depth import StochasticDepth, stochastic_depth

    text = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
    variants = re.findall(r"^model (\w+) = ", text, flags=re.MULTILINE)
    name, parts = FAMILY_REFERENCES[family]
    module = importlib.import_module(f"torchvision.models.{name}")
    source = _module_parts(module, {*parts, *variants})
    ops: list[Any] = []
    if family in ("mobilenet_v3", "efficientnet", "convnext"):
        ops += [misc.ConvNormActivation, misc.Conv2dNormActivation]
    if family in ("mobilenet_v3", "efficientnet"):
        ops += [misc.SqueezeExcitation]
    if family in ("efficientnet", "convnext"):
        ops += [StochasticDepth, stochastic_depth]
    if ops:
        source += "\n" + _source(ops)
    return [
        f"`{family}`",
        str(code_lines(text, python=False)),
        str(code_lines(source, python=True)),
        ", ".join(variants),
    ]


def families() -> None:
    header = ["family", ".aur lines", "torchvision lines", "variants"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    for family in FAMILY_REFERENCES:
        print("| " + " | ".join(family_row(family)) + " |")


def classes() -> None:
    """Generated classes and lines per zoo program (issue 24 item 3's measurement)."""
    import re

    from aurane.compile import compile_detailed

    print("| program | block definitions | classes | generated lines |")
    print("| --- | --- | --- | --- |")
    for path in sorted(ZOO.glob("*.aur")):
        source = path.read_text(encoding="utf-8")
        code = compile_detailed(source, filename=path.name).output
        models = len(re.findall(r"^model \w+", source, re.MULTILINE))
        count = len(re.findall(r"^class \w+\(", code, re.MULTILINE))
        print(f"| `{path.stem}` | {models} | {count} | {len(code.splitlines())} |")


if __name__ == "__main__":
    if sys.argv[1:] == ["families"]:
        families()
    elif sys.argv[1:] == ["classes"]:
        classes()
    else:
        main()
