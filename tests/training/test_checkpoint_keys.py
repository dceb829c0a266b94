"""K-CKPT: every checkpoint entry is needed; resume at k=1 and right after a scheduler step.

Dropping any entry (top level, or inside the Aurane-owned dicts ``versions``,
``fingerprint``, ``monitor``, ``rng`` and ``rng.numpy``) must make the resume fail with a
message naming the entry and the file, or make the run diverge from an uninterrupted
one; an entry that changes nothing and is not checked is dead. The load checks that
every entry is present, so each drop is refused. To show that the state entries are also
*used* (a presence check alone would hide an entry the resume ignores), each is then
replaced by its value in the epoch-0 checkpoint, which is what a resume that ignored it
would start from, and the run must diverge.

One driver process per job imports torch once and forks a child per resume (as in
test_sigkill: a fresh process for the training state without paying for an interpreter
each time). The children inject a training loader whose transform draws from Python's
and NumPy's RNGs, so those states matter too, and each runs in its own folder, so its
final last.pt and best.pt are compared along with its weights and history.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.training.helpers import python_here, run_python, write_program
from tests.training.programs import CLASSIFIER, GAN
from tests.training.test_resume import _assert_equal_runs, _load, _runs

# Dropout, shuffling, a scheduler whose state matters (cosine annealing; a chainable
# step_lr(step_size=1) would recompute the same rate from the optimizer's), AMP for a
# scaler entry (disabled on CPU), and early stopping that fires: min_delta is so large
# that only epoch 1 improves, so the 5-epoch run stops after epoch 4 (patience 3). A
# split at K=2 then trains epochs 3 and 4, where the scheduler and the monitor both act.
STANDARD = (
    CLASSIFIER.replace("step_lr(step_size=1, gamma=0.7)", "cosine_annealing(T_max=5)")
    .replace("checkpoint_every = 2", "mixed_precision = true")
    .replace(
        "gradient_clip = 1.0", "early_stopping = true\n    patience = 3\n    min_delta = 1000.0"
    )
)
GAN_BEST = GAN.replace(
    'checkpoint_dir = "{folder}"', 'checkpoint_dir = "{folder}"\n    save_best = true'
)

COMMON = ["format", "kind", "job", "versions", "fingerprint", "epoch", "history", "rng"]
# issue 25: the run's position in steps, its length, a mid-epoch position (None at an
# epoch's end), and the seconds and sessions so far
COMMON += ["steps", "budget", "partial", "elapsed", "sessions"]
NESTED = [
    "versions.aurane",
    "versions.torch",
    "fingerprint.model",
    "fingerprint.config",
    "rng.python",
    "rng.numpy",
    "rng.torch",
    "rng.cuda",
    "rng.loaders",
    "rng.numpy.keys",
    "rng.numpy.position",
    "rng.numpy.has_gauss",
    "rng.numpy.cached",
    "steps.count",
    "steps.rows",
    "budget.epochs",
    "budget.max_steps",
    "budget.accumulate",
    "budget.batches_per_epoch",
    "budget.steps",
]
# rng.cuda and the (disabled) scaler cannot change a CPU run: they are only checked.
USED_RNG = ["rng.python", "rng.numpy", "rng.torch", "rng.loaders"]
JOBS: dict[str, dict[str, Any]] = {
    "standard": {
        "source": STANDARD,
        "factory": "_make_points_loader",
        "function": "train_net",
        "seed": 3,
        "top": [*COMMON, "model", "optimizer", "scheduler", "scaler", "monitor"],
        "nested": [*NESTED, "monitor.best", "monitor.bad_epochs", "monitor.stopped"],
        "swap": ["epoch", "model", "optimizer", "scheduler", "history", "monitor"]
        + ["monitor.best", "monitor.bad_epochs", *USED_RNG],
    },
    "gan": {
        "source": GAN_BEST,
        "factory": "_make_pictures_loader",
        "function": "train_gan_maker",
        "seed": 5,
        "top": [*COMMON, "generator", "discriminator", "generator_optimizer"]
        + ["discriminator_optimizer", "best"],
        "nested": NESTED,
        "swap": ["epoch", "generator", "discriminator", "generator_optimizer"]
        + ["discriminator_optimizer", "history", "best", *USED_RNG],
    },
}
K, N = 2, 5
# Replacements where the epoch-0 value would not show that an entry is read: the GAN's
# lowest generator loss keeps falling here, so a fresh inf would pick the same best.pt.
SWAP_VALUES = {"best": "-inf"}

DRIVER = """
import json, os, random, shutil, sys, traceback
import numpy as np
import torch
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
import job, part

def noisy(image):  # a user augmentation that draws from Python's and NumPy's RNGs
    return image + 0.01 * random.random() + 0.01 * float(np.random.rand())

def run(module, folder, resume=None):
    pid = os.fork()
    if pid == 0:
        code = 0
        os.makedirs(folder)
        if resume is not None:  # resume in place, beside the split run's best.pt
            shutil.copytree("part/ck", os.path.join(folder, "ck"), symlinks=True)
            shutil.copyfile(resume, os.path.join(folder, "ck", "run_0001", "last.pt"))
            resume = "ck"  # the job's folder: its latest run, run_0001
        os.chdir(folder)
        output = os.open("stdout.txt", os.O_WRONLY | os.O_CREAT)
        os.dup2(output, 1)
        try:
            loader = module.{factory}(seed={seed})
            loader.dataset.transform = noisy
            result = module.{function}(train_loader=loader, resume_from=resume)
            models = result if isinstance(result, tuple) else (result,)
            final = torch.load("ck/latest/last.pt", weights_only=True)
            outcome = {{
                "states": [m.state_dict() for m in models],
                "history": models[0].training_history,
                "best_epoch": torch.load("ck/latest/best.pt", weights_only=True)["epoch"],
                "final": {{k: final[k] for k in ("epoch", "monitor", "best") if k in final}},
            }}
            torch.save(outcome, "outcome.pt")
        except BaseException:
            with open("error.txt", "w") as handle:
                handle.write(traceback.format_exc())
            code = 1
        sys.stdout.flush()
        os._exit(code)
    os.waitpid(pid, 0)

owner, attribute = (
    (part, "_save_checkpoints")  # --standalone
    if hasattr(part, "_save_checkpoints")
    else (__import__("aurane.runtime.run", fromlist=["run"]), "save_checkpoints")
)
save = getattr(owner, attribute)

def keep_epoch_zero(folder, checkpoint, **options):  # what a run starts from
    if checkpoint["epoch"] == 0:
        torch.save(checkpoint, "epoch0.pt")
    return save(folder, checkpoint, **options)

setattr(owner, attribute, keep_epoch_zero)
run(job, "whole")
run(part, "part")
last = os.path.abspath("part/ck/run_0001/last.pt")
checkpoint = torch.load(last, weights_only=True)
fresh = torch.load("part/epoch0.pt", weights_only=True)
variants = {{"exact": last}}
os.makedirs("variants")

def edited(label, name, edit):
    copy = torch.load(last, weights_only=True)
    *parents, leaf = name.split(".")
    target, source = copy, fresh
    for key in parents:
        target, source = target[key], source[key]
    edit(target, source, leaf)
    path = os.path.abspath(f"variants/{{len(variants)}}.pt")
    torch.save(copy, path)
    variants[label] = path

for name in {drops!r}:
    edited("drop:" + name, name, lambda target, source, leaf: target.pop(leaf))
special = {{name: float(value) for name, value in {special!r}.items()}}
for name in {swaps!r}:
    swap = lambda target, source, leaf: target.update({{leaf: special.get(name, source[leaf])}})
    edited("swap:" + name, name, swap)
edited("edit:versions.torch", "versions.torch", lambda t, s, leaf: t.update({{leaf: "0.0"}}))
folders = {{}}
for index, (label, path) in enumerate(variants.items()):
    folders[label] = f"v{{index}}"
    run(job, folders[label], path)
manifest = {{"keys": sorted(checkpoint), "epoch": checkpoint["epoch"]}}
# the resumed file, as the runs name it: the variant, copied over the run's last.pt
manifest["variants"] = {{label: [folders[label], "ck/run_0001/last.pt"] for label in variants}}
with open("manifest.json", "w") as handle:
    json.dump(manifest, handle)
"""


class Runs:
    """The driver's results for one job: the uninterrupted run and every resumed variant."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest = json.loads((folder / "manifest.json").read_text())
        self.whole = self.outcome_of("whole")

    def outcome_of(self, folder: str) -> dict[str, Any]:
        error = self.folder / folder / "error.txt"
        assert not error.exists(), error.read_text()
        return _load(self.folder / folder / "outcome.pt")

    def variant(self, label: str) -> tuple[str, str]:
        folder, path = self.manifest["variants"][label]
        return folder, path

    def result(self, label: str) -> tuple[dict[str, Any] | None, str | None]:
        """(outcome, None) when the resume finished, (None, traceback) when it failed."""
        folder, _ = self.variant(label)
        error = self.folder / folder / "error.txt"
        if error.exists():
            return None, error.read_text()
        return self.outcome_of(folder), None

    def diverged(self, outcome: dict[str, Any], reference: str = "whole") -> bool:
        """Whether ``outcome`` differs from the uninterrupted run's or a variant's."""
        other = self.whole if reference == "whole" else self.outcome_of(self.variant(reference)[0])
        for left, right in zip(outcome["states"], other["states"], strict=True):
            if left.keys() != right.keys() or not all(torch.equal(left[k], right[k]) for k in left):
                return True
        return any(outcome[field] != other[field] for field in ("history", "best_epoch", "final"))


def _drive(folder: Path, job: dict[str, Any]) -> Runs:
    source: str = job["source"]
    write_program(folder, source.format(epochs=K, folder="ck"), "part")
    write_program(folder, source.format(epochs=N, folder="ck"), "job")
    code = DRIVER.format(
        factory=job["factory"],
        function=job["function"],
        seed=job["seed"],
        drops=[*job["top"], *job["nested"]],
        swaps=job["swap"],
        special=SWAP_VALUES,
    )
    done = run_python(code, folder, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return Runs(folder)


fork_only = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
    pytest.mark.skipif(
        sys.platform == "darwin", reason="fork after torch import is unsafe on macOS"
    ),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Runs]]:
    done: dict[str, Runs] = {}

    def get(name: str) -> Runs:
        if name not in done:
            done[name] = _drive(tmp_path_factory.mktemp(name), JOBS[name])
        return done[name]

    yield get


def _cases(field: str) -> list[Any]:
    return [
        pytest.param(name, key, id=f"{name}-{key}", marks=fork_only)
        for name, job in JOBS.items()
        for key in (job[field] if field == "swap" else [*job["top"], *job["nested"]])
    ]


@pytest.mark.parametrize("name", [pytest.param(n, marks=fork_only) for n in JOBS])
def test_every_top_level_key_is_tested_and_an_unedited_resume_is_exact(
    runs: Callable[[str], Runs], name: str
) -> None:
    result = runs(name)
    assert result.manifest["epoch"] == K
    assert result.manifest["keys"] == sorted(JOBS[name]["top"]), "a new key needs a test here"
    outcome, error = result.result("exact")
    assert error is None, error
    assert outcome is not None and not result.diverged(outcome)
    if name == "standard":  # early stopping fired in the resumed part
        assert len(outcome["history"]) == N - 1 and outcome["final"]["monitor"]["stopped"]


@pytest.mark.parametrize(("name", "key"), _cases("drop"))
def test_dropping_an_entry_is_refused_clearly_or_diverges(
    runs: Callable[[str], Runs], name: str, key: str
) -> None:
    result = runs(name)
    outcome, error = result.result("drop:" + key)
    if outcome is not None:
        dead = f"{key!r} is dead: dropping it changes nothing"
        assert result.diverged(outcome) and result.diverged(outcome, "exact"), dead
        return
    assert error is not None
    message = error.strip().splitlines()[-1]
    assert not message.startswith("KeyError"), f"a bare KeyError for {key!r}:\n{error}"
    assert key in message, message
    assert result.variant("drop:" + key)[1] in message, message


@pytest.mark.parametrize(("name", "key"), _cases("swap"))
def test_every_state_entry_is_used_by_the_resume(
    runs: Callable[[str], Runs], name: str, key: str
) -> None:
    result = runs(name)
    outcome, error = result.result("swap:" + key)
    assert error is None, error
    assert outcome is not None
    # against the unedited resume: a resume that ignored the entry would match it
    unused = f"{key!r} is not restored: another value changes nothing"
    assert result.diverged(outcome, "exact"), unused


@pytest.mark.parametrize("name", [pytest.param(n, marks=fork_only) for n in JOBS])
def test_other_versions_are_noted_and_resume_exactly(
    runs: Callable[[str], Runs], name: str
) -> None:
    result = runs(name)
    outcome, error = result.result("edit:versions.torch")
    assert error is None, error
    assert outcome is not None and not result.diverged(outcome)
    folder, path = result.variant("edit:versions.torch")
    printed = (result.folder / folder / "stdout.txt").read_text()
    assert f"note: {path!r} was written by aurane" in printed, printed
    assert "torch 0.0" in printed, printed


# step_size=2: after epoch 1 the rate is unchanged and only the scheduler's counter knows
# a step is due; after epoch 2 the scheduler has just decayed it. warmup_cosine steps
# after every optimizer step, so any epoch boundary follows one of its steps.
# checkpoint_every=1 keeps epoch_0001.pt beside epoch_0002.pt (not part of the fingerprint).
SCHEDULED = {
    "stepped": CLASSIFIER.replace("step_size=1", "step_size=2"),
    "warmup": CLASSIFIER.replace(
        "step_lr(step_size=1, gamma=0.7)", "warmup_cosine(warmup_steps=4, max_steps=20)"
    ),
}
FRESH_N = 4

# The uninterrupted runs and the split runs share one process, the test's own (each job
# reseeds every RNG); only the resumes, the runs under test, need a fresh interpreter each.
REFERENCES = """
import torch
torch.use_deterministic_algorithms(True)
{imports}
for name in {names!r}:
    model = getattr(globals()[name + "_whole"], "train_net")()
    torch.save(
        {{"states": [model.state_dict()], "history": model.training_history}}, name + "_whole.pt"
    )
    getattr(globals()[name + "_part"], "train_net")()
"""


@pytest.fixture(scope="module")
def split_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scheduled")
    for name, source in SCHEDULED.items():
        every = source.replace("checkpoint_every = 2", "checkpoint_every = 1")
        write_program(
            folder, source.format(epochs=FRESH_N, folder="whole_" + name), name + "_whole"
        )
        write_program(folder, every.format(epochs=2, folder=name), name + "_part")
    imports = "\n".join(f"import {name}_whole, {name}_part" for name in SCHEDULED)
    deterministic = torch.are_deterministic_algorithms_enabled()
    try:  # in this process: the fresh interpreters are the resumes'
        python_here(REFERENCES.format(imports=imports, names=list(SCHEDULED)), folder)
    finally:
        torch.use_deterministic_algorithms(deterministic)
    return folder


RESUMES = [
    ("stepped", 1, 0.01),
    ("stepped", 2, 0.007),
    ("warmup", 1, 0.01 * 0.5 * (1 + math.cos(math.pi * 2 / 16))),
]


def _resume_from(name: str, k: int) -> str:
    return f"{name}/run_0001/epoch_{k:04d}.pt"  # an epoch's file: a new run from it


@pytest.fixture(scope="module")
def fresh_resumes(split_runs: Path) -> Path:
    """Every case's resume, each in a fresh forked process of one new interpreter (as
    test_resume's runs): the runs under test share no state with the ones that wrote their
    checkpoints, and pay one interpreter start, not one each."""
    runs = []
    for name, k, _ in RESUMES:
        rest = f"{name}_rest{k}"
        write_program(split_runs, SCHEDULED[name].format(epochs=FRESH_N, folder=rest), rest)
        runs.append((rest, "train_net", _resume_from(name, k), rest + ".pt"))
    _runs(split_runs, *runs)
    return split_runs


@pytest.mark.parametrize(
    ("name", "k", "lr"),
    RESUMES,
    ids=["epoch_boundary_k1", "right_after_epoch_scheduler_step", "after_per_step_scheduler"],
)
def test_resume_in_a_fresh_process(fresh_resumes: Path, name: str, k: int, lr: float) -> None:
    checkpoint = _load(fresh_resumes / _resume_from(name, k))
    assert checkpoint["epoch"] == k
    steps = 6 * k if name == "warmup" else k  # 43 samples in batches of 8: 6 steps an epoch
    assert checkpoint["scheduler"]["last_epoch"] == steps
    assert checkpoint["optimizer"]["param_groups"][0]["lr"] == pytest.approx(lr)
    whole = _load(fresh_resumes / f"{name}_whole.pt")
    assert len(whole["history"]) == FRESH_N
    _assert_equal_runs(_load(fresh_resumes / f"{name}_rest{k}.pt"), whole)
