"""The zoo's families (issue 24 item 6): every entry model of ``examples/zoo/<family>.aur``
against torchvision's builder (``weights=None``): the reference's ``state_dict()`` loads
with ``strict=True``, outputs in eval mode are equal (``rtol=1e-5``,
``atol=1e-5 x max|reference|``) after the reference's constant tensors are perturbed, and
the parameter counts of the module, the reference and ``aurane profile`` agree.

CI runs one representative variant per block kind at 64x64 (the program's ``image``
constant rewritten); ``AURANE_LONG=1`` runs every variant (the campaign, docs/zoo.md).
"""

from __future__ import annotations

import os
import re
import types
from functools import cache

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from aurane.analysis.profile import profile  # noqa: E402
from aurane.compile import compile_detailed  # noqa: E402
from tests.zoo.harness import ZOO, parameter_count, perturb_constants  # noqa: E402
from tests.zoo.zoo_table import family_row  # noqa: E402

LONG = os.environ.get("AURANE_LONG") == "1"
IMAGE = 64

# family file -> (variant, runs in CI)
FAMILIES: dict[str, list[tuple[str, bool]]] = {
    "resnet": [
        ("resnet18", True),
        ("resnet34", False),
        ("resnet50", False),
        ("resnet101", False),
        ("resnet152", False),
        ("resnext50_32x4d", True),
        ("resnext101_32x8d", False),
        ("wide_resnet50_2", False),
    ],
    "vgg": [
        ("vgg11", False),
        ("vgg11_bn", True),
        ("vgg13", False),
        ("vgg13_bn", False),
        ("vgg16", False),
        ("vgg16_bn", False),
        ("vgg19", False),
        ("vgg19_bn", False),
    ],
    "mobilenet_v3": [("mobilenet_v3_large", True), ("mobilenet_v3_small", True)],
    "efficientnet": [(f"efficientnet_b{k}", k == 0) for k in range(8)],
    "densenet": [(f"densenet{k}", k == 121) for k in (121, 161, 169, 201)],
    "convnext": [("convnext_tiny", True), ("convnext_small", False), ("convnext_base", False)],
}

CASES = [
    pytest.param(
        family,
        variant,
        id=f"{family}-{variant}",
        marks=() if ci or LONG else pytest.mark.skip(reason="AURANE_LONG=1 runs every variant"),
    )
    for family, variants in FAMILIES.items()
    for variant, ci in variants
]


@cache
def _compiled(family: str) -> tuple[types.ModuleType, dict[str, int]]:
    text = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
    text, count = re.subn(r"^image = .*$", f"image = {IMAGE}", text, flags=re.MULTILINE)
    assert count == 1, f"{family}.aur needs one top-level 'image = ...'"
    result = compile_detailed(text, validate=True, filename=f"{family}.aur")
    module = types.ModuleType(f"zoo_{family}")
    exec(compile(result.output, f"<zoo {family}>", "exec"), module.__dict__)
    params = {name: profile(graph).parameters for name, graph in result.graphs.items()}
    return module, params


@pytest.mark.parametrize(("family", "variant"), CASES)
def test_variant_equals_torchvision(family: str, variant: str) -> None:
    module, params = _compiled(family)
    torch.manual_seed(0)
    reference = getattr(torchvision.models, variant)(weights=None)
    perturb_constants(reference)
    reference.eval()
    torch.manual_seed(1)
    generated = getattr(module, variant)()
    generated.load_state_dict(reference.state_dict(), strict=True)
    generated.eval()
    assert parameter_count(generated) == parameter_count(reference) == params[variant]
    x = torch.randn(2, 3, IMAGE, IMAGE, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected, actual = reference(x), generated(x)
    scale = float(expected.abs().max())
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5 * max(scale, 1.0))


def test_every_family_variant_is_listed() -> None:
    for family, variants in FAMILIES.items():
        text = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
        entries = re.findall(r"^model (\w+) = \w+\(.*\):$", text, flags=re.MULTILINE)
        assert entries == [variant for variant, _ in variants], family


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_is_no_longer_than_torchvision(family: str) -> None:
    _, aur_lines, reference_lines, variants = family_row(family)
    assert int(aur_lines) <= int(reference_lines), family
    # docs/zoo.md lists the counts: they are the ones computed here
    docs = (ZOO.parents[1] / "docs" / "zoo.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `{family}` \| (\d+) \| (\d+) \|", docs, flags=re.MULTILINE)
    assert row is not None, f"docs/zoo.md has no row for {family}"
    assert row.groups() == (aur_lines, reference_lines), (family, row.groups())
    assert variants.split(", ") == [variant for variant, _ in FAMILIES[family]]
