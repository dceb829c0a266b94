"""Dataset sources (``from``): only dataset classes, so a program cannot call anything else.

A dataset's ``from`` line becomes a call in the generated loader factory
(``dataset = torchvision.datasets.MNIST(...)``). ``check`` and ``compile`` never import or
run it (nothing here imports a module the program names), but the generated program calls
it, so a ``from`` must name a dataset class (a ``torch.utils.data.Dataset`` or
``IterableDataset`` subclass):

- in the packages Aurane knows (``KNOWN_ROOTS``), only the classes of their static
  allowlists, ``use`` line or not: ``aurane.data.<Class>`` (the synthetic sets),
  ``torchvision.datasets.<Class>`` (``TORCHVISION_DATASETS``); torch itself, the Python
  standard library and the well-known packages in ``NO_DATASETS`` have none a ``from``
  line can build, so ``torch.load``, ``torch.hub.load``, ``torch.utils.collect_env.run``,
  ``os.system`` and ``pickle.loads`` are refused even after ``use torch`` or ``use os``;
- ``<module>.<...>.<Class>`` under a module the program itself declares with ``use``,
  when the module is none of those: its classes cannot be known without importing it,
  which compiling never does, so the generated loader factory checks at run time, before
  calling it, that the object is a dataset class (``aurane.runtime.dataset_class``), and
  stops with a clear error otherwise.

Everything else is refused at the ``from`` span (S080): builtins, dunders, keywords. The
dotted name is NFKC-normalised first, as Python normalises identifiers, so ``ｏｓ.system``
is checked (and emitted) as ``os.system``; what is left must be ASCII, so a look-alike
(``оs.system`` with a Cyrillic ``о``) never passes for the module it imitates.
"""

from __future__ import annotations

import keyword
import sys
import unicodedata
from collections.abc import Iterable

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.semantics.suggest import did_you_mean
from aurane.syntax import ast

# aurane.data.__all__ (a test keeps the two equal; the front end does not import torch).
AURANE_DATASETS = frozenset(
    {
        "SyntheticDenoising",
        "SyntheticImages",
        "SyntheticMaskedText",
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
# Well-known packages without a torch dataset class a literal-argument call could build:
# their callables load pickles, run processes, open files or sockets.
NO_DATASETS = frozenset(
    {
        "torch",
        "numpy",
        "pandas",
        "scipy",
        "sklearn",
        "joblib",
        "dill",
        "cloudpickle",
        "yaml",
        "h5py",
        "PIL",
        "matplotlib",
        "requests",
        "urllib3",
        "httpx",
        "IPython",
        "setuptools",
        "pkg_resources",
        "pip",
    }
)
# Roots whose dataset classes are known statically: a source under one of them must be in
# BUILTIN_FAMILIES, whatever the program's ``use`` lines say.
KNOWN_ROOTS = (
    frozenset({"aurane", "torchvision"}) | NO_DATASETS | frozenset(sys.stdlib_module_names)
)


def normalized(dotted: str) -> str:
    """The dotted name as Python reads it: NFKC, like every Python identifier."""
    return unicodedata.normalize("NFKC", dotted)


def declared_modules(program: ast.AuraneProgram) -> frozenset[str]:
    """The (normalised) module paths the program imports with ``use``."""
    return frozenset(normalized(s.module) for s in program.statements if isinstance(s, ast.Use))


def non_ascii(dotted: str) -> str | None:
    """The first non-ASCII character of ``dotted`` (already normalised), named; None if none."""
    for char in dotted:
        if not char.isascii():
            return f"{char} (U+{ord(char):04X} {unicodedata.name(char, 'unnamed')})"
    return None


def allowed_source(dotted: str, modules: Iterable[str]) -> bool:
    """True when ``dotted`` (already normalised) may be a dataset ``from``."""
    module, _, name = dotted.rpartition(".")
    if not module or not _plain(dotted) or not dotted.isascii():
        return False
    family = BUILTIN_FAMILIES.get(module)
    if family is not None:
        return name in family
    if dotted.split(".")[0] in KNOWN_ROOTS:
        return False
    return any(dotted.startswith(m + ".") for m in modules)


def checked_at_run_time(dotted: str) -> bool:
    """True for an allowed source outside the static allowlists: a class of a ``use``
    module, which the generated program checks is a dataset class before calling it."""
    return dotted.rpartition(".")[0] not in BUILTIN_FAMILIES


def _plain(dotted: str) -> bool:
    """Importable parts, none private to Python (dunders) nor a keyword."""
    return all(
        p.isidentifier() and not p.startswith("__") and not keyword.iskeyword(p)
        for p in dotted.split(".")
    )


def check_source(source: ast.Name, modules: frozenset[str]) -> Diagnostic | None:
    """S080 unless ``source`` names an allowed dataset class (see the module docstring)."""
    dotted = normalized(source.id)
    shown = f"'{dotted}'" if dotted == source.id else f"'{source.id}' (Python reads '{dotted}')"
    foreign = non_ascii(dotted)
    if foreign is not None:
        return diag(
            "S080",
            f"{shown} is not an allowed dataset source: it has the non-ASCII letter {foreign}",
            source.span,
            hint="module and class names of a 'from' line are ASCII; "
            "retype the name if it was pasted",
        )
    if allowed_source(dotted, modules):
        return None
    module, _, name = dotted.rpartition(".")
    root = dotted.split(".")[0]
    family = BUILTIN_FAMILIES.get(module)
    if family is not None and _plain(dotted):
        hint = did_you_mean(name, family) or f"one of the dataset classes of {module}"
        message = f"{shown} is not a dataset class of {module}"
    elif root in KNOWN_ROOTS and _plain(dotted):
        where = next((m for m in BUILTIN_FAMILIES if m.split(".")[0] == root), None)
        if where is not None:
            message = f"{shown} is not a dataset class: {root}'s are {where}.<Class>"
            hint = f"name one of the dataset classes of {where}"
        else:
            owner = "the Python standard library" if root in sys.stdlib_module_names else root
            message = f"{shown} is not a dataset class: {owner} has none a 'from' line may call"
            hint = f"name a dataset class such as {EXAMPLES}, or a class of your own module"
        message += f", 'use {root}' or not"
    else:
        hint = (
            f"name a dataset class such as {EXAMPLES}, or a class of a module "
            "the program imports with 'use'"
        )
        message = f"{shown} is not an allowed dataset source"
    return diag("S080", message, source.span, hint=hint)
