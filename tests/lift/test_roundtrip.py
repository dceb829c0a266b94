"""Round trip (issue 26): every zoo program, compiled to PyTorch and imported back, is a
program ``aurane diff --flat`` reports as structurally identical (the same layers, shapes
and names inside every block) and the plain ``aurane diff`` as the same block calls (where
BLOCKS_DIFFER does not say why not), and the import is exact. Programs are compared at small sizes (their
top-level constants rewritten, as tests/zoo does): the two sides are the same program."""

from __future__ import annotations

import functools
import types
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from aurane.analysis.diff import diff_programs, render_text  # noqa: E402
from aurane.compile import compile_detailed  # noqa: E402
from aurane.frontend import run_front_end  # noqa: E402
from aurane.lift.pipeline import lift_module  # noqa: E402
from aurane.lift.spec import call_recording  # noqa: E402
from tests.helpers import resized  # noqa: E402

ZOO = Path(__file__).resolve().parents[2] / "examples" / "zoo"
SMALL_IMAGE = {"(3, 224, 224)": "(3, 32, 32)"}
# per program: top-level constants and literal texts rewritten to CI sizes
SIZES: dict[str, dict[str, str]] = {
    "resnet18": {"image": "32", "classes": "10"},
    "resnet50": {"classes": "10", **SMALL_IMAGE},
    "mobilenet_v2": {"image": "32", "classes": "10"},
    "efficientnet_b0": {"classes": "10", **SMALL_IMAGE},
    "convnext_tiny": {"classes": "10", **SMALL_IMAGE},
    "vit_b_16": {"image": "32", "classes": "10"},
    "gpt2": {"vocab": "97", "block": "16", "n_layer": "2", "n_head": "4", "n_embd": "64"},
    "llama": {
        "vocab": "101",
        "seq": "12",
        "n_layer": "2",
        "n_embd": "64",
        "n_head": "8",
        "n_kv_head": "2",
        "hidden": "176",
    },
    "unet": {"image": "32", "base": "8"},
    "dcgan": {"ngf": "8", "ndf": "8"},
    "maxvit_t": {
        "image": "64",
        "classes": "10",
        "stem_width": "8",
        "widths": "[8, 16, 16, 32]",
        "depths": "[1, 1, 1, 1]",
        "head_dim": "8",
        "partition": "2",
    },
}


# issue 24's families (several entry models each; tests/zoo/test_zoo_families.py checks
# them against torchvision): a representative set of entry models per family, at 32x32
FAMILY_MODELS: dict[str, list[str]] = {
    "convnext": ["convnext_tiny"],
    "vgg": ["vgg11_bn"],
    "densenet": ["densenet121"],
    "resnet": ["resnet18", "resnext50_32x4d"],
    "efficientnet": ["efficientnet_b0"],
    "mobilenet_v3": ["mobilenet_v3_small"],
}
FAMILIES = set(FAMILY_MODELS)
# programs whose blocks choose their structure with a compile-time `if` (and take arguments
# their bodies do not read): the import writes one block per structure and only the
# parameters the layers show, so the block calls differ; `diff --flat` (the layers inside
# the blocks, by module path, operation, arguments and shape) finds them identical
BLOCKS_DIFFER = {
    "resnet": "Bottleneck/BasicBlock choose the downsample with `if`: the import writes "
    "BottleneckDownsample, and groups/base_width (read only through int(planes * "
    "(base_width / 64)) * groups) are not parameters of the imported block",
    "efficientnet": "MBConv chooses its expansion and residual with `if` (one block per "
    "structure on import) and takes ratio/eps/momentum the import folds into numbers",
    "mobilenet_v3": "InvertedResidual chooses expansion, squeeze-excitation and residual "
    "with `if` and numbers its layers block.* per branch; the import writes one block per "
    "structure (InvertedResidual_2, ...) without the se flag",
    "t5": "SelfAttention computes the relative position bias only `if relative` (the first "
    "layer of each stack: EncoderLayer/DecoderLayer(first=true)) and RelativeBuckets its "
    "direction with `if bidirectional`: the import writes one block per structure "
    "(SelfAttentionRelativeAttentionBias, EncoderLayer_2, DecoderLayer_2, ...) without the "
    "flags, RelativeBuckets (no weights) inline, and a SelfAttention without the bias "
    "returns one value",
    "maxvit_t": "MaxVitLayer's PartitionAttention chooses window or grid attention with "
    "`if grid` and MBConv its projection with `if`: the import writes one block per "
    "structure (MaxVitLayer_2, RelativeAttention_2, ...) and passes the attention scale and "
    "each grid's group count as numbers",
    "unet2d": "the levels choose their downsampler/upsampler with `if down`/`if up` and "
    "ResnetBlock2D its conv_shortcut with `if`: the import writes one block per structure "
    "(AttnDownBlock2D_2, ResnetBlock2D_2, ...) without the flags, groups nor head_dim, and "
    "takes an up level's inputs in the order it reads them",
}
# issue 23's models take several inputs and return several outputs: they round-trip in
# test_several_input_programs_round_trip below, at a concrete length for each symbolic one
SEVERAL_INPUTS = {"bert", "t5", "clip", "unet2d"}


def test_every_zoo_program_is_covered() -> None:
    left_out = FAMILIES | SEVERAL_INPUTS
    assert sorted(SIZES) == sorted(p.stem for p in ZOO.glob("*.aur") if p.stem not in left_out)
    assert all((ZOO / f"{family}.aur").exists() for family in FAMILIES)


def _small(name: str) -> str:
    return resized((ZOO / f"{name}.aur").read_text(encoding="utf-8"), SIZES[name], name)


def _assert_same_program(key: str, name: str, original: Any, imported: Any) -> None:
    """``diff --flat`` finds the same layers, shapes and names; the block calls are the
    same too unless ``key`` is listed in BLOCKS_DIFFER (and then they must differ, so the
    list stays true)."""
    flat = diff_programs({name: original}, {name: imported}, flat=True)
    report = render_text(flat, f"{key}.aur", "imported.aur")
    assert [d.status for d in flat] == ["unchanged"], report
    assert len(flat[0].layers) > 3 and all(d.status == "unchanged" for d in flat[0].layers)
    blocks = diff_programs({name: original}, {name: imported})
    status = "changed" if key in BLOCKS_DIFFER else "unchanged"
    assert [d.status for d in blocks] == [status], render_text(blocks, key, "imported")


def _lift_back(module: types.ModuleType, model_name: str, graph: Any) -> Any:
    """Import ``model_name``'s generated class back, with every input by name (at the
    program's shapes and dtypes) where it has several; the imported IR."""
    torch.manual_seed(0)
    model, recorder = call_recording(getattr(module, model_name))
    inputs = graph.inputs
    several = len(inputs) > 1
    result = lift_module(
        model,
        input_shape={v.name: tuple(v.sample_shape or ()) for v in inputs}
        if several
        else tuple(graph.input_value.sample_shape or ()),
        input_dtype={v.name: v.dtype or "float32" for v in inputs}
        if several
        else graph.input_dtype or "float32",
        constructors=recorder.arguments,
        name=model_name,
    )
    assert result.exact and result.text is not None, result.problem
    assert len(result.output_names) == len(graph.outputs)
    imported = run_front_end(result.text, "imported.aur")
    assert imported.ok, [d.message for d in imported.diagnostics]
    return imported.graphs[model_name]


@pytest.mark.parametrize("name", sorted(SIZES))
def test_compile_then_import_gives_the_same_program(name: str) -> None:
    _round_trip(_small(name), f"{name}.aur")


@functools.cache
def _family(family: str) -> tuple[str, types.ModuleType, dict[str, Any]]:
    text = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
    text = resized(text, {"image": "32", "classes": "10"}, family)
    compiled = compile_detailed(text, filename=f"{family}.aur")
    module = types.ModuleType(f"zoo_{family}")
    exec(compile(compiled.output, f"<zoo {family}>", "exec"), module.__dict__)
    return text, module, dict(compiled.graphs)


# The families the default run leaves to ``-m slow`` (6.5 s of 10): their layers are lifted
# exactly in the default run from torchvision (tests/lift/test_torchvision.py: densenet121,
# efficientnet_b0, convnext_tiny) and round-trip there from the zoo's single programs
# (efficientnet_b0, convnext_tiny); the family path itself (a rolled family compiled, lifted
# back, blocks that differ by an `if`) runs for vgg, resnet and mobilenet_v3.
FAMILIES_SLOW = {"efficientnet", "densenet", "convnext"}


@pytest.mark.parametrize(
    ("family", "model_name"),
    [
        pytest.param(
            family,
            model_name,
            id=f"{family}-{model_name}",
            marks=pytest.mark.slow if family in FAMILIES_SLOW else (),
        )
        for family, models in FAMILY_MODELS.items()
        for model_name in models
    ],
)
def test_family_entry_model_round_trips(family: str, model_name: str) -> None:
    torch.set_num_threads(1)
    text, module, graphs = _family(family)
    graph = graphs[model_name]
    imported = _lift_back(module, model_name, graph)
    original = run_front_end(text, f"{family}.aur").graphs[model_name]
    _assert_same_program(family, model_name, original, imported)


def test_maxvit_t_imports_exactly() -> None:
    """The zoo's MaxViT (its relative position bias: a buffer of relative positions that
    looks up rows of a learned table) lifts to an exact program that says so."""
    torch.set_num_threads(1)
    compiled = compile_detailed(_small("maxvit_t"), filename="maxvit_t.aur")
    module = types.ModuleType("zoo_maxvit_t")
    exec(compile(compiled.output, "<zoo maxvit_t>", "exec"), module.__dict__)
    (model_name, graph), *_ = compiled.graphs.items()
    torch.manual_seed(0)
    model, recorder = call_recording(getattr(module, model_name))
    result = lift_module(
        model,
        input_shape=tuple(graph.input_value.sample_shape or ()),
        constructors=recorder.arguments,
        name=model_name,
    )
    assert result.exact and result.text is not None, result.problem
    assert 'init="relative_position_index"' in result.text
    # the generated file's gather_rows helper is traced as one call: the zoo's lookup
    assert "lookup(relative_position_bias_table, index=" in result.text
    assert "gather(" not in result.text


# -- several inputs and outputs (issue 26 item 4, issue 23's programs) -------------------------

# Sizes as SIZES above; symbolic lengths (bert's seq, t5's src and tgt) become numbers: the
# import traces at one size, so the round trip compares both programs at that size. Literal
# texts are rewritten where a program's sizes are not top-level constants (unet2d).
SEVERAL_SIZES: dict[str, dict[str, str]] = {
    "bert": {
        "vocab": "99",
        "max_positions": "64",
        "hidden": "32",
        "n_layer": "2",
        "n_head": "4",
        "intermediate": "64",
        "seq": "8",
    },
    "t5": {
        "vocab": "100",
        "d_model": "32",
        "d_kv": "8",
        "d_ff": "64",
        "n_layer": "2",
        "n_decoder_layer": "2",
        "n_head": "4",
        "src": "10",
        "tgt": "6",
    },
    "clip": {
        "vocab": "99",
        "seq": "12",
        "text_width": "32",
        "text_heads": "4",
        "text_hidden": "37",
        "text_layers": "2",
        "eos": "98",
        "image": "32",
        "patch": "8",
        "vision_width": "48",
        "vision_heads": "4",
        "vision_hidden": "64",
        "vision_layers": "2",
        "projection": "16",
    },
    "unet2d": {
        "(224, 448, 672, 896)": "(32, 32, 64, 64)",
        "groups: int = 32": "groups: int = 8",
        "(3, 64, 64)": "(3, 16, 16)",
    },
}


def _several_small(name: str) -> str:
    text = (ZOO / f"{name}.aur").read_text(encoding="utf-8")
    return resized(text, SEVERAL_SIZES[name], name)


def _round_trip(text: str, filename: str) -> None:
    """Compile ``text``, import each model's class back with every input (by name, at the
    program's shapes and dtypes), and require an exact import that ``diff`` calls unchanged
    (flat, and the block calls unless BLOCKS_DIFFER says why not)."""
    torch.set_num_threads(1)
    compiled = compile_detailed(text, filename=filename)
    module = types.ModuleType(Path(filename).stem)
    exec(compile(compiled.output, f"<{filename}>", "exec"), module.__dict__)
    original = run_front_end(text, filename).graphs
    assert compiled.graphs
    for model_name, graph in compiled.graphs.items():
        imported = _lift_back(module, model_name, graph)
        _assert_same_program(Path(filename).stem, model_name, original[model_name], imported)


@pytest.mark.parametrize("name", sorted(SEVERAL_SIZES))
def test_several_input_programs_round_trip(name: str) -> None:
    _round_trip(_several_small(name), f"{name}.aur")


TAGGED = """use torch

# a block of two inputs and two outputs, called in graph form
model Mix(width):
    def forward(x, y):
        a = dense(x, width) as a
        b = dense(y, width) as b
        h = add(a, b)
        return h, relu(h)

model Tagged:
    input_shape = {image: (3, 8, 8), label: (), weight: (4,)}
    input_dtype = {image: float32, label: int64, weight: float32}
    def forward(image, label, weight):
        h = image -> conv2d(8, kernel=3, padding=1) as conv -> batchnorm().relu as bn
        e = embedding(label, 10, 8) as emb
        h = global_avg_pool(h)
        h, g = Mix(h, e, 8) as mix1
        h, g = Mix(g, h, 16) as mix2
        s = add(h, g)
        logits = dense(s, 4) as head
        return h, multiply(logits, weight)
"""


def test_a_program_of_several_inputs_and_outputs_round_trips() -> None:
    """The several-input path end to end on a program whose operations the import maps:
    three inputs (one a number per sample, int64), two outputs, and a block of two inputs
    and two outputs called at two widths (one parameterised block)."""
    assert sorted(SEVERAL_SIZES) == sorted(SEVERAL_INPUTS)
    _round_trip(TAGGED, "tagged.aur")
