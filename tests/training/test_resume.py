"""A run split at epoch k and resumed to n equals an uninterrupted n-epoch run, bitwise."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.training.helpers import job_here, run_python, write_program
from tests.training.programs import CLASSIFIER, GAN

# One driver imports torch (and torch._dynamo, which the first optimizer pulls in) once, then
# forks a fresh child per run: each run starts from a clean process state without paying two
# interpreters' start-up, and the runs happen one after another, in the order given.
DRIVER = """
import importlib, os, sys, traceback
import torch
torch.use_deterministic_algorithms(True)
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

for module, function, resume, out in {runs!r}:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            result = getattr(importlib.import_module(module), function)(resume_from=resume)
            models = result if isinstance(result, tuple) else (result,)
            states = [m.state_dict() for m in models]
            torch.save({{"states": states, "history": models[0].training_history}}, out)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    if os.waitpid(pid, 0)[1] != 0:
        sys.exit(f"{{module}}.{{function}} failed")
"""


def _runs(folder: Path, *runs: tuple[str, str, str | None, str]) -> None:
    """Each (module, function, resume_from, output file) in a fresh forked process, in order."""
    done = run_python(DRIVER.format(runs=list(runs)), folder)
    assert done.returncode == 0, done.stderr


def _run(folder: Path, module: str, function: str, out: str, resume: str | None = None) -> None:
    _runs(folder, (module, function, resume, out))


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    return torch.load(path, weights_only=True)  # type: ignore[no-any-return]


def _assert_equal_runs(a: dict, b: dict) -> None:  # type: ignore[type-arg]
    assert a["history"] == b["history"]
    for left, right in zip(a["states"], b["states"], strict=True):
        assert left.keys() == right.keys()
        for key in left:
            assert torch.equal(left[key], right[key]), key


# case: (program, job, k, n); both cases' runs share one driver (one interpreter start)
SPLITS = {"standard": (CLASSIFIER, "train_net", 2, 4), "gan": (GAN, "train_gan_maker", 1, 3)}
MODES = ("default", "standalone")


@pytest.fixture(scope="module")
def split_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For each case and mode: the part to epoch k, the rest resumed to n, and the
    uninterrupted n-epoch run, each in a fresh forked process of one driver, in this order."""
    folder = tmp_path_factory.mktemp("split")
    runs: list[tuple[str, str, str | None, str]] = []
    for case, (source, function, k, n) in SPLITS.items():
        for mode in MODES:
            options = {"standalone": mode == "standalone"}
            split, name = f"{case}_split_{mode}", f"{case}_whole_{mode}"
            for program, epochs, into in (("part", k, split), ("rest", n, split)):
                text = source.format(epochs=epochs, folder=into)
                write_program(folder, text, f"{case}_{program}_{mode}", **options)
            write_program(folder, source.format(epochs=n, folder=name), name, **options)
        runs += [(f"{case}_part_{m}", function, None, f"{case}_part_{m}.pt") for m in MODES]
        runs += [
            (f"{case}_rest_{m}", function, f"{case}_split_{m}", f"{case}_rest_{m}.pt")
            for m in MODES
        ]
        runs += [(f"{case}_whole_{m}", function, None, f"{case}_whole_{m}.pt") for m in MODES]
    _runs(folder, *runs)
    return folder


@pytest.mark.parametrize("case", list(SPLITS))
def test_split_run_equals_uninterrupted(split_runs: Path, case: str) -> None:
    """In each mode (default and --standalone), a run split at epoch k and resumed to n
    equals the uninterrupted n-epoch run of the other mode, bitwise."""
    _, _, k, n = SPLITS[case]
    for mode, other in (("default", "standalone"), ("standalone", "default")):
        assert len(_load(split_runs / f"{case}_part_{mode}.pt")["history"]) == k
        assert [p.name for p in (split_runs / f"{case}_split_{mode}").glob("run_*")] == ["run_0001"]
        last = split_runs / f"{case}_split_{mode}" / "latest" / "last.pt"
        assert _load(last)["epoch"] == n  # in place
        rest = _load(split_runs / f"{case}_rest_{other}.pt")
        whole = _load(split_runs / f"{case}_whole_{mode}.pt")
        assert len(whole["history"]) == n
        _assert_equal_runs(rest, whole)


def test_incompatible_configuration_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both runs in this process (no interpreter start): the second's resume is refused."""
    monkeypatch.chdir(tmp_path)
    job_here(CLASSIFIER.format(epochs=1, folder="ck"), "first")["train_net"]()
    changed = CLASSIFIER.replace("adam(lr=0.01)", "adam(lr=0.02)")
    second = job_here(changed.format(epochs=2, folder="ck"), "second")
    with pytest.raises(ValueError) as refused:
        second["train_net"](resume_from="ck")
    message = str(refused.value)
    assert "training configuration differs (optimizer:" in message
    assert "0.01" in message and "0.02" in message
