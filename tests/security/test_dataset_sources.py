"""Dataset sources (issue 21 case 2, RELIABILITY K-SRC): a `from` line names a dataset
class, never another callable, whatever the program's `use` lines say.

`use torch` (the quickstart and every zoo program) made every `torch.*` callable a
source: `torch.load`, `torch.hub.load`, `torch.utils.cpp_extension.load_inline` and
`torch.utils.collect_env.run` passed `check`, and `aurane run` ran `collect_env.run`'s
command. Now the packages Aurane knows have static allowlists (docs/security.md), a class
of the program's own module is checked at run time before it is called, and compiling
imports nothing.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aurane import CompilationError, compile_source
from tests.conftest import REPO, run_cli
from tests.helpers import errors

QUICKSTART = (REPO / "examples" / "quickstart.aur").read_text(encoding="utf-8")
FROM = "from aurane.data.SyntheticImages\n    size = 256"
SOURCE_AT = (11, 10)  # line and column of the first dataset's `from` target


def with_source(target: str, use: str = "use torch", extra: str = "") -> str:
    """The quickstart (which says `use torch`) with its first dataset built from ``target``."""
    source = QUICKSTART.replace("use torch", use).replace(FROM, f"from {target}{extra}")
    assert f"from {target}" in source
    return source


def refused_at_source(source: str) -> None:
    """`check` reports S080 at the `from` target, and `compile` refuses the same."""
    found = [d for d in errors(source) if d.code == "S080"]
    assert found, errors(source)
    assert found[0].span is not None
    assert (found[0].span.line, found[0].span.column) == SOURCE_AT
    assert found[0].hint
    with pytest.raises(CompilationError) as info:
        compile_source(source)
    assert "S080" in [d.code for d in info.value.diagnostics]


# ------------------------------------------------------------------ the examples

TORCH_CALLABLES = [
    "torch.load",
    "torch.hub.load",
    "torch.utils.cpp_extension.load_inline",
    "torch.utils.collect_env.run",
    "torch.jit.load",
    "torch.serialization.load",
    "torch.utils.model_zoo.load_url",
    "torch.package.PackageImporter",
    "torch.ops.load_library",
    "torch.utils.data.TensorDataset",  # a dataset, but of tensors no literal can give
]


@pytest.mark.parametrize("target", TORCH_CALLABLES)
@pytest.mark.parametrize("use", ["use torch", "use torch.utils", "use torch.hub", "use math"])
def test_case2_use_torch_does_not_make_torch_callables_sources(target: str, use: str) -> None:
    refused_at_source(with_source(target, use))


PWN = """\
use torch

dataset shapes:
    from torch.utils.collect_env.run
    command = "id > PWNED"
    batch = 4

model Net:
    input_shape = (4,)
    def forward(x):
        x -> dense(2)

train Net on shapes:
    epochs = 1
"""


def test_case2_collect_env_run_never_runs_under_aurane_run(tmp_path: Path) -> None:
    """The issue's program: `aurane run` ran `id > PWNED` when it built the loader."""
    (tmp_path / "pwn.aur").write_text(PWN, encoding="utf-8")
    result = run_cli("run", "pwn.aur", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "pwn.aur:4:10: error[S080]" in result.stderr
    assert not (tmp_path / "PWNED").exists()


# ------------------------------------------------------------------ K-SRC: adversarial from lines

# Standard-library callables with file, process, network or code-loading powers.
STDLIB_POWERS = [
    "os.system",
    "os.popen",
    "os.execv",
    "os.remove",
    "posix.system",
    "subprocess.run",
    "subprocess.Popen",
    "pty.spawn",
    "socket.socket",
    "socket.create_connection",
    "urllib.request.urlopen",
    "http.client.HTTPSConnection",
    "ftplib.FTP",
    "smtplib.SMTP",
    "shutil.rmtree",
    "tempfile.mkstemp",
    "pathlib.Path",
    "io.open",
    "codecs.open",
    "shelve.open",
    "pickle.load",
    "marshal.loads",
    "ctypes.CDLL",
    "multiprocessing.Process",
    "runpy.run_path",
    "importlib.import_module",
    "webbrowser.open",
    "asyncio.create_subprocess_shell",
    "zipfile.ZipFile",
    "tarfile.open",
    "sqlite3.connect",
    "code.interact",
    "pdb.run",
    "signal.raise_signal",
    "builtins.exec",
    "sys.exit",
]
# Well-known packages whose callables load pickles or reach the network.
PACKAGE_POWERS = [
    "numpy.load",
    "pandas.read_pickle",
    "joblib.load",
    "dill.load",
    "yaml.unsafe_load",
    "requests.get",
    "torchvision.io.read_file",
    "torchvision.datasets.utils.download_url",
    "torchvision.datasets.folder.default_loader",
    "aurane.runtime.save_file",
]


@pytest.mark.parametrize("target", STDLIB_POWERS + PACKAGE_POWERS)
@pytest.mark.parametrize("declared", [False, True], ids=["plain", "declared"])
def test_k_src_powerful_callables_are_refused_even_when_their_module_is_used(
    target: str, declared: bool
) -> None:
    use = f"use {target.rpartition('.')[0]}" if declared else "use torch"
    refused_at_source(with_source(target, use))


LOOK_ALIKES = [
    ("ｔｏｒｃｈ.load", "use torch"),  # fullwidth: Python reads torch.load
    ("torch.ｌｏａｄ", "use torch"),
    ("ｏｓ.system", "use os"),
    ("𝐨𝐬.system", "use os"),  # mathematical bold: NFKC os
    ("оs.system", "use os"),  # Cyrillic о: not os, and not ASCII
    ("оs.system", "use оs"),  # a look-alike module of one's own: refused too
    ("torchvision.datasets.ＭＮＩＳＴ.__init__", "use torch"),
    ("torchvision.dаtasets.MNIST", "use torch"),  # Cyrillic а
    ("ａｕｒａｎｅ.runtime.save_file", "use aurane.runtime"),
]


@pytest.mark.parametrize(("target", "use"), LOOK_ALIKES, ids=ascii)
def test_k_src_homoglyphs_and_fullwidth_letters(target: str, use: str) -> None:
    source = with_source(target, use)
    found = [d for d in errors(source) if d.code in ("S080", "S019")]
    assert found, errors(source)
    source_errors = [d for d in found if d.code == "S080"]
    assert source_errors and source_errors[0].span is not None
    assert (source_errors[0].span.line, source_errors[0].span.column) == SOURCE_AT


DUNDERS = [
    ("torchvision.datasets.MNIST.__init__", "use torch"),
    ("torchvision.datasets.__builtins__", "use torch"),
    ("mylib.__builtins__", "use mylib"),
    ("mylib.Data.__init__", "use mylib"),
    ("mylib.__loader__.load_module", "use mylib"),
    ("mylib.Data.__class__", "use mylib"),
    ("__import__", "use mylib"),
    ("mylib.__dict__", "use mylib"),
]


@pytest.mark.parametrize(("target", "use"), DUNDERS, ids=ascii)
def test_k_src_dunders(target: str, use: str) -> None:
    refused_at_source(with_source(target, use))


def test_k_src_the_known_dataset_classes_still_work() -> None:
    for target in ("aurane.data.SyntheticImages", "torchvision.datasets.FakeData"):
        code = compile_source(with_source(target), validate=True)
        assert f"{target}(" in code
        assert "rt.dataset_class" not in code  # statically known: no run-time check needed


# ------------------------------------------------------------------ a program's own module

MODULE = """\
import os
from pathlib import Path

import torch
from os import system
from torch.utils.data import Dataset, TensorDataset

CALLED = Path(os.environ["AURANE_TEST_MARKER"])


class Data(TensorDataset):
    def __init__(self, **kwargs):
        super().__init__(torch.randn(4, 1, 16, 16), torch.tensor([0, 1, 2, 3]))


class Stream(torch.utils.data.IterableDataset):
    def __init__(self, **kwargs):
        super().__init__()

    def __iter__(self):
        return iter([(torch.randn(1, 16, 16), 0)])


def make(**kwargs):
    CALLED.write_text("called")


class NotData:
    def __init__(self, **kwargs):
        CALLED.write_text("called")


class Fake:
    __class__ = property(lambda self: type)  # claims to be a class
    __bases__ = (Dataset,)

    def __call__(self, **kwargs):
        CALLED.write_text("called")


fake = Fake()
"""


def loader_factory(
    target: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> object:
    """The generated `_make_shapes_loader` of the quickstart built from ``target``."""
    (tmp_path / f"{name}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("AURANE_TEST_MARKER", str(tmp_path / "CALLED"))
    # not shuffled: torch's DataLoader refuses shuffle=True for an IterableDataset
    source = with_source(target, f"use {name}", "\n    shuffle = false\n    size = 256")
    code = compile_source(source, validate=True)
    namespace: dict[str, object] = {"__name__": "generated"}
    exec(compile(code, "<generated>", "exec"), namespace)  # noqa: S102
    return namespace["_make_shapes_loader"]


@pytest.fixture
def module_name(request: pytest.FixtureRequest) -> Iterator[str]:
    """A module name of this test's own, dropped from sys.modules after it."""
    name = "user_sets_" + re.sub(r"\W", "_", request.node.name)
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("attribute", ["make", "NotData", "fake", "system", "Path", "torch"])
def test_k_src_a_use_module_callable_that_is_no_dataset_class_is_never_called(
    attribute: str, module_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aurane.runtime.contracts import DataMismatch

    make_loader = loader_factory(f"{module_name}.{attribute}", module_name, tmp_path, monkeypatch)
    with pytest.raises(DataMismatch, match="must name a dataset class"):
        make_loader()  # type: ignore[operator]
    assert not (tmp_path / "CALLED").exists()


@pytest.mark.parametrize("attribute", ["Data", "Stream"])
def test_k_src_a_use_module_dataset_class_is_built(
    attribute: str, module_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_loader = loader_factory(f"{module_name}.{attribute}", module_name, tmp_path, monkeypatch)
    images, labels = next(iter(make_loader()))  # type: ignore[operator]
    assert tuple(images.shape[1:]) == (1, 16, 16)


def test_k_src_compiling_imports_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check, compile and every tool that reads the front end never import a `use` module."""
    marker = tmp_path / "IMPORTED"
    (tmp_path / "evil_sets.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nclass Data: pass\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    source = with_source("evil_sets.Data", "use evil_sets")
    assert not errors(source)
    code = compile_source(source, validate=True)
    assert "import evil_sets" in code
    ast.parse(code)
    assert not marker.exists()
    assert "evil_sets" not in sys.modules
