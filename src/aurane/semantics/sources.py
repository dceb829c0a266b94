"""Dataset sources (``from``): an allowlist, so a program cannot name arbitrary callables.

A dataset's ``from`` line becomes a call in the generated loader factory
(``dataset = torchvision.datasets.MNIST(...)``). ``check`` and ``compile`` never run it,
but the generated program does, so a ``from`` must name a dataset class from

- ``aurane.data.<Class>`` for the synthetic sets of :mod:`aurane.data`;
- ``torchvision.datasets.<Class>`` for the dataset classes listed in
  ``TORCHVISION_DATASETS`` (the classes torchvision exports, minus its base class and
  helper functions);
- ``<module>.<...>.<Class>`` under a module the program itself declares with ``use``:
  the author vouches for that module by importing it (docs/security.md).

Everything else is refused at the ``from`` span (S080): ``os.system``, ``posix.system``,
``io.open``, ``eval``, builtins, dunders. The dotted name is NFKC-normalised first, as
Python normalises identifiers, so ``ｏｓ.system`` is checked (and emitted) as ``os.system``.
"""

from __future__ import annotations

import keyword
import unicodedata
from collections.abc import Iterable

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.semantics.suggest import did_you_mean
from aurane.syntax import ast

# aurane.data.__all__ (a test keeps the two equal; the front end does not import torch).
AURANE_DATASETS = frozenset(
    {
        "SyntheticImages",
        "SyntheticRegression",
        "SyntheticSegmentation",
        "SyntheticTokens",
        "HFDataset",
        "Shards",
        "Table",
        "TokenFile",
    }
)

# torchvision.datasets' dataset classes (torchvision 0.29). Not listed: VisionDataset (the
# abstract base) and wrap_dataset_for_transforms_v2 (a function, not a data source).
TORCHVISION_DATASETS = frozenset(
    {
        "CIFAR10",
        "CIFAR100",
        "CLEVRClassification",
        "CREStereo",
        "Caltech101",
        "Caltech256",
        "CarlaStereo",
        "CelebA",
        "Cityscapes",
        "CocoCaptions",
        "CocoDetection",
        "Country211",
        "DTD",
        "DatasetFolder",
        "EMNIST",
        "ETH3DStereo",
        "EuroSAT",
        "FER2013",
        "FGVCAircraft",
        "FakeData",
        "FallingThingsStereo",
        "FashionMNIST",
        "Flickr30k",
        "Flickr8k",
        "Flowers102",
        "FlyingChairs",
        "FlyingThings3D",
        "Food101",
        "GTSRB",
        "HD1K",
        "HMDB51",
        "INaturalist",
        "ImageFolder",
        "ImageNet",
        "Imagenette",
        "InStereo2k",
        "KMNIST",
        "Kinetics",
        "Kitti",
        "Kitti2012Stereo",
        "Kitti2015Stereo",
        "KittiFlow",
        "LFWPairs",
        "LFWPeople",
        "LSUN",
        "LSUNClass",
        "MNIST",
        "Middlebury2014Stereo",
        "MovingMNIST",
        "Omniglot",
        "OxfordIIITPet",
        "PCAM",
        "PhotoTour",
        "Places365",
        "QMNIST",
        "RenderedSST2",
        "SBDataset",
        "SBU",
        "SEMEION",
        "STL10",
        "SUN397",
        "SVHN",
        "SceneFlowStereo",
        "Sintel",
        "SintelStereo",
        "StanfordCars",
        "UCF101",
        "USPS",
        "VOCDetection",
        "VOCSegmentation",
        "WIDERFace",
    }
)
BUILTIN_FAMILIES = {"aurane.data": AURANE_DATASETS, "torchvision.datasets": TORCHVISION_DATASETS}
EXAMPLES = "torchvision.datasets.MNIST or aurane.data.SyntheticImages"


def normalized(dotted: str) -> str:
    """The dotted name as Python reads it: NFKC, like every Python identifier."""
    return unicodedata.normalize("NFKC", dotted)


def declared_modules(program: ast.AuraneProgram) -> frozenset[str]:
    """The (normalised) module paths the program imports with ``use``."""
    return frozenset(normalized(s.module) for s in program.statements if isinstance(s, ast.Use))


def allowed_source(dotted: str, modules: Iterable[str]) -> bool:
    """True when ``dotted`` (already normalised) may be a dataset ``from``."""
    module, _, name = dotted.rpartition(".")
    if not module or not _plain(dotted):
        return False
    family = BUILTIN_FAMILIES.get(module)
    if family is not None:
        return name in family
    return any(dotted.startswith(m + ".") for m in modules)


def _plain(dotted: str) -> bool:
    """Importable parts, none private to Python (dunders) nor a keyword."""
    return all(
        p.isidentifier() and not p.startswith("__") and not keyword.iskeyword(p)
        for p in dotted.split(".")
    )


def check_source(source: ast.Name, modules: frozenset[str]) -> Diagnostic | None:
    """S080 unless ``source`` names an allowlisted dataset class (see the module docstring)."""
    dotted = normalized(source.id)
    if allowed_source(dotted, modules):
        return None
    shown = f"'{dotted}'" if dotted == source.id else f"'{source.id}' (Python reads '{dotted}')"
    module, _, name = dotted.rpartition(".")
    family = BUILTIN_FAMILIES.get(module)
    if family is not None and _plain(dotted):
        hint = did_you_mean(name, family) or f"one of the dataset classes of {module}"
        message = f"{shown} is not a dataset class of {module}"
    else:
        hint = (
            f"name a dataset class such as {EXAMPLES}, or a class of a module "
            "the program imports with 'use'"
        )
        message = f"{shown} is not an allowed dataset source"
    return diag("S080", message, source.span, hint=hint)
