"""Names from one allocator (issue 11 item 5, RELIABILITY K-INJ): a model may be called
like anything the generated program binds (a class, a function, a training function's
local, parameter or nested function, a helper) and the program still trains.

The names are not a hand list: they are every name the generated code of a training
program and a GAN program with every option binds, in any scope, read from its AST.
Each one becomes a model name; the program compiles (or is refused with a located
diagnostic) and its ``__main__`` block trains one epoch on a tiny synthetic dataset.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from pathlib import Path

import pytest

from aurane import CompilationError, compile_source

torch = pytest.importorskip("torch")

TRAIN = """\
experiment E:
    seed = 1
    device = "cpu"
dataset images:
    from aurane.data.SyntheticImages
    size = 4
    image_size = (1, 2, 2)
    num_classes = 2
    batch = 2
dataset held_out:
    from aurane.data.SyntheticImages
    size = 2
    image_size = (1, 2, 2)
    num_classes = 2
    batch = 2
    train = false
model {name}:
    input_shape = (1, 2, 2)
    def forward(x):
        return dense(flatten(x), 2)
train {name} on images:
    validate_on = held_out
    test_on = held_out
    epochs = 1
    loss = cross_entropy
    optimizer = sgd(lr=0.01, momentum=0.9)
    metrics = [accuracy, top2_accuracy, f1, auc]
    scheduler = step_lr(step_size=1)
    gradient_clip = 1.0
    early_stopping = true
    patience = 1
    checkpoint_dir = {folder}
    checkpoint_every = 1
    save_best = true
"""

GAN = """\
experiment E:
    seed = 1
    device = "cpu"
dataset images:
    from aurane.data.SyntheticImages
    size = 4
    image_size = (1, 2, 2)
    num_classes = 2
    batch = 2
model {name}:
    input_shape = (3,)
    def forward(z):
        return reshape(dense(z, 4).tanh, 1, 2, 2)
model Critic:
    input_shape = (1, 2, 2)
    def forward(x):
        return dense(flatten(x), 1).sigmoid
train_gan {name} and Critic on images:
    epochs = 1
    discriminator_steps = 1
    checkpoint_dir = {folder}
    checkpoint_every = 1
    generate_samples_every = 1
    num_samples = 2
    save_dir = {samples}
    sample_format = "tensor"
"""


def program(template: str, name: str, folder: Path) -> str:
    return template.format(
        name=name, folder=repr(str(folder / "ckpt")), samples=repr(str(folder / "samples"))
    ).replace("'", '"')


def bound_names(code: str) -> set[str]:
    """Every name ``code`` binds in any scope (functions, classes, locals, parameters)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


@functools.cache
def generated_names(template: str) -> list[str]:
    code = compile_source(program(template, "Net", Path("/tmp/unused")))
    # a model name is an identifier; names Aurane refuses outright are still tried
    return sorted(n for n in bound_names(code) if n.isidentifier())


def run_program(template: str, name: str, folder: Path) -> None:
    source = program(template, name, folder)
    try:
        code = compile_source(source, validate=True)
    except CompilationError as error:  # refused: must be located at the model's name
        assert error.span is not None, error
        assert error.diagnostics[0].code.startswith("S"), error
        return
    namespace: dict[str, object] = {"__name__": "generated"}
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        exec(compile(code, "<generated>", "exec"), namespace)  # noqa: S102
        jobs = job_functions(code)
        assert jobs, code
        for job in jobs:
            namespace[job]()  # type: ignore[operator]
    finally:
        os.chdir(cwd)
    assert any((folder / "ckpt").iterdir())


def job_functions(code: str) -> list[str]:
    """The module's functions that its ``if __name__ == "__main__":`` block refers to."""
    tree = ast.parse(code)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    main = [n for n in tree.body if isinstance(n, ast.If)]
    used = [
        node.id
        for block in main
        for node in ast.walk(block)
        if isinstance(node, ast.Name) and node.id in defined
    ]
    return list(dict.fromkeys(used))


def test_the_programs_bind_the_names_of_the_issue() -> None:
    names = set(generated_names(TRAIN))
    assert {"resume_from", "validation_loader", "test_loader", "model", "optimizer"} <= names
    assert {"generator", "discriminator"} <= set(generated_names(GAN))


@pytest.mark.parametrize("name", generated_names(TRAIN))
def test_a_model_named_like_a_generated_name_trains(name: str, tmp_path: Path) -> None:
    run_program(TRAIN, name, tmp_path)


@pytest.mark.parametrize(
    "name", sorted(set(generated_names(GAN)) - set(generated_names(TRAIN)) - {"Critic"})
)
def test_a_generator_named_like_a_generated_gan_name_trains(name: str, tmp_path: Path) -> None:
    run_program(GAN, name, tmp_path)


@pytest.mark.parametrize(
    "name", ["checkpoint_state", "resume_from", "validation_loader", "test_loader"]
)
def test_issue_examples(name: str, tmp_path: Path) -> None:
    """The issue's examples: each compiled, then failed with UnboundLocalError/TypeError."""
    run_program(TRAIN, name, tmp_path)
    run_program(GAN, name, tmp_path)


USE_TRAIN = """\
use {name}
experiment E:
    seed = 1
    device = "cpu"
dataset images:
    from {name}.Data
    batch = 2
model Net:
    input_shape = (4,)
    def forward(x):
        return dense(x, 2)
train Net on images:
    epochs = 1
    checkpoint_dir = {folder}
"""
MODULE = """\
import torch
from torch.utils.data import TensorDataset


class Data(TensorDataset):
    def __init__(self):
        super().__init__(torch.randn(4, 4), torch.tensor([0, 1, 0, 1]))
"""


@pytest.mark.parametrize(
    "name", [n for n in generated_names(TRAIN) if n not in sys.modules and n.isidentifier()]
)
def test_a_use_module_named_like_a_generated_name_trains(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`use dataset` + `from dataset.Data`: the loader's local must not hide the module."""
    (tmp_path / f"{name}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        run_program(USE_TRAIN, name, tmp_path)
    finally:
        sys.modules.pop(name, None)
