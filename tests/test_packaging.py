"""The wheel a user installs: built from a clean copy of the checkout, installed into a fresh
virtual environment, its ``aurane`` works outside the repository (init, check, compile, run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

# About 20-40 s, in the default run: the ``slow`` marker now selects the rest of the
# exhaustive parametrizations out of it (tests/subset.py), not whole capabilities.


_NOT_SOURCE = (".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")


def _clean_copy(target: Path) -> Path:
    """What a fresh clone holds: the tracked files plus new ones git does not ignore."""
    listed = subprocess.run(
        [
            shutil.which("git") or "false",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:  # not a git checkout (a copy, an sdist): copy all but builds
        junk = shutil.ignore_patterns(*_NOT_SOURCE)
        shutil.copytree(REPO, target, ignore=junk, symlinks=True, dirs_exist_ok=True)
        return target
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _run(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _clean_env(**extra: str) -> dict[str, str]:
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = _clean_copy(tmp_path_factory.mktemp("checkout"))
    dist = tmp_path_factory.mktemp("dist")
    _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "-q", "-w", dist, source, cwd=dist, env=_clean_env(),
    )  # fmt: skip
    (built,) = dist.glob("aurane-*.whl")
    return built


def test_wheel_carries_licence_metadata_and_package_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "aurane/py.typed" in names
    # the playground page is served from the package: works offline and from a wheel
    for asset in ("index.html", "playground.js", "playground.css"):
        assert f"aurane/playground/static/{asset}" in names, asset
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]
    licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert licence, names
    (metadata,) = (n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text and "License-File: LICENSE" in text
    assert "Classifier: Programming Language :: Python :: 3" in text
    assert "Project-URL: Changelog, " in text
    # every module in the source tree is in the wheel
    shipped = {n for n in names if n.startswith("aurane/")}
    local = {
        p.relative_to(REPO / "src").as_posix()
        for p in (REPO / "src" / "aurane").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in {".py", ".typed"}
    }
    assert local <= shipped, sorted(local - shipped)


def test_installed_wheel_works_outside_the_repository(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=_clean_env())
    python = venv / "bin" / "python"
    _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
        "-q", wheel, cwd=tmp_path, env=_clean_env(),
    )  # fmt: skip
    aurane = venv / "bin" / "aurane"
    home = tmp_path / "user"
    home.mkdir()
    env = _clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    where = _run(python, "-c", "import aurane; print(aurane.__file__)", cwd=home, env=env)
    assert where.stdout.strip().startswith(str(venv)), where.stdout
    _run(aurane, "--version", cwd=home, env=env)
    _run(aurane, "init", "starter", cwd=home, env=env)
    project = home / "starter"
    _run(aurane, "check", "model.aur", cwd=project, env=env)
    _run(aurane, "compile", "model.aur", "-o", "model.py", cwd=project, env=env)
    assert "class Classifier(nn.Module)" in (project / "model.py").read_text()
    # ``run`` needs torch, which the wheel does not pull in (an extra): borrow this
    # interpreter's site-packages (a plain path entry: its .pth files, an editable aurane
    # among them, are not read, so aurane still comes from the wheel)
    if not _has_torch():
        pytest.skip("torch is not installed here: `aurane run` not tried")
    env = {**env, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    where = _run(python, "-c", "import aurane; print(aurane.__file__)", cwd=home, env=env)
    assert where.stdout.strip().startswith(str(venv)), where.stdout
    ran = _run(aurane, "run", "model.aur", cwd=project, env=env)
    assert "epoch" in (ran.stdout + ran.stderr).lower()
    assert any((project / "checkpoints").iterdir())


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def test_extra_all_installs_every_extra_the_docs_name() -> None:
    """`pip install 'aurane[all]'` brings every extra a doc tells users to install (issue 25
    item 8): plot, export and lsp were each found through an error message before."""
    import re

    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    (spec,) = extras["all"]
    bundled = set(re.fullmatch(r"aurane\[([a-z,]+)\]", spec).group(1).split(","))  # type: ignore[union-attr]
    assert bundled <= set(extras)
    texts = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *REPO.glob("src/**/*.py")]
    named = set()
    for path in texts:
        text = path.read_text(encoding="utf-8")
        for group in re.findall(r"aurane\[([a-z,]+)\]", text):
            named |= set(group.split(","))
        named |= set(re.findall(r"'\.\[([a-z]+)\]'", text))
    # the test suite's and the benchmarks' extras are not for users of the docs
    assert named - {"dev", "bench", "all"} <= bundled, named
    assert set(extras) - {"dev", "bench", "all"} == bundled
