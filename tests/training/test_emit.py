"""Generated training code: readable, formatted, deterministic, only the imports it needs."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import VALID
from tests.training.helpers import compile_text, python_here, write_program
from tests.training.programs import CLASSIFIER, GAN

SOURCES = {
    "classifier": CLASSIFIER.format(epochs=2, folder="ck"),
    "gan": GAN.format(epochs=1, folder="ck"),
    # many metrics and an ignore_index: the _EpochStats call must wrap at 100 columns
    "many_metrics": CLASSIFIER.format(epochs=1, folder="ck")
    .replace(
        "metrics = [accuracy, f1]",
        "metrics = [accuracy, top2_accuracy, precision, recall, f1, auc, perplexity]",
    )
    .replace(
        "optimizer = adam(lr=0.01)",
        "optimizer = adam(lr=0.01)\n    loss = cross_entropy(ignore_index=2)",
    ),
}
for corpus_name in ("training", "gan"):
    corpus_path = VALID / f"{corpus_name}.aur"
    if corpus_path.is_file():
        SOURCES[f"corpus_{corpus_name}"] = corpus_path.read_text()

ALLOWED_ROOTS = {
    "__future__",
    "contextlib",
    "argparse",
    "csv",
    "fcntl",  # the checkpoint folder's lock (flock); absent on Windows, where the pid decides
    "io",
    "json",
    "shlex",
    "signal",
    "socket",
    "threading",
    "hashlib",
    "math",
    "os",
    "random",
    "struct",
    "sys",
    "time",
    "zlib",
    "torch",
    "torchvision",
    "aurane",
    "numpy",
    # optional, imported inside the function that uses them, only when installed
    "matplotlib",
    "tqdm",
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_generated_code_is_ruff_clean_and_formatted(tmp_path: Path, name: str) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed")
    path = tmp_path / "program.py"
    path.write_text(compile_text(SOURCES[name]))
    fmt = subprocess.run(
        [ruff, "format", "--line-length", "100", "--diff", str(path)],
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    lint = subprocess.run(
        [
            ruff,
            "check",
            "--isolated",
            "--select",
            "E,F,W,B,UP,SIM",
            "--ignore",
            "E501",
            "--target-version",
            "py310",
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout


@pytest.mark.parametrize("standalone", [False, True], ids=["default", "standalone"])
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_generated_code_is_deterministic_and_imports_only_what_it_needs(
    name: str, standalone: bool
) -> None:
    text = compile_text(SOURCES[name], standalone=standalone)
    assert text == compile_text(SOURCES[name], standalone=standalone)
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots = {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots = {(node.module or "").split(".")[0]}
        else:
            continue
        assert roots <= ALLOWED_ROOTS, roots
        if "aurane" in roots:  # the offline datasets and the runtime, never the compiler
            if isinstance(node, ast.ImportFrom):
                assert not standalone
                assert ast.unparse(node) == "from aurane import runtime as rt"
            else:
                assert node.names[0].name == "aurane.data"
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not calls & {"eval", "exec", "__import__", "compile"}


def test_job_and_factory_names_follow_the_source() -> None:
    source = (
        CLASSIFIER.format(epochs=1, folder="ck")
        + """
train Net on points:
    epochs = 1

train Net on held_out:
    epochs = 1
"""
    )
    tree = ast.parse(compile_text(source))
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert {
        "train_net",
        "train_net_2",
        "train_net_3",
        "_make_points_loader",
        "_make_held_out_loader",
    } <= set(functions)
    main = next(n for n in tree.body if isinstance(n, ast.If))
    calls = [ast.unparse(stmt) for stmt in main.body]
    assert calls == ["rt.main(train_net, train_net_2, train_net_3)"]
    signature = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train_net"
    ).args
    assert [a.arg for a in signature.args] == [
        "train_loader",
        "validation_loader",
        "model",
        "resume_from",
        "test_loader",
    ]
    assert "train_gan_maker" in compile_text(GAN.format(epochs=1, folder="ck"))


DATASETS = """
use torchvision

dataset mnist:
    from torchvision.datasets.MNIST
    root = "./data"
    train = false
    batch = 4
    num_workers = 0
    pin_memory = false
    drop_last = true
    transforms = [RandomCrop(28, padding=2), RandomHorizontalFlip(), ToTensor(), Normalize((0.1307,), (0.3081,))]
    target_transform = Compose([])

dataset fetched:
    from torchvision.datasets.MNIST
    root = "./data"
    download = true
    transform = Compose([Resize(32), CenterCrop(28), Grayscale(), ToTensor()])

dataset plain:
    from torchvision.datasets.FakeData
    size = 4
"""


def test_dataset_fields_split_between_constructor_and_loader() -> None:
    text = compile_text(DATASETS)
    tree = ast.parse(text)
    factory = {n.name: ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    mnist = factory["_make_mnist_loader"]
    assert "torchvision.datasets.MNIST(root='./data', train=False, target_transform=" in mnist
    assert "torchvision.transforms.RandomCrop(28, padding=2)" in mnist
    assert "transform=torchvision.transforms.Compose([torchvision.transforms.RandomCrop" in mnist
    assert (
        "rt.data_loader(dataset, batch_size=4, shuffle=False, seed=seed, num_workers=0, "
        "pin_memory=False, drop_last=True)"
    ) in mnist  # shuffle follows train
    assert "download" not in mnist  # downloads only when asked for
    assert "download=True" in factory["_make_fetched_loader"]
    assert "batch_size=1, shuffle=True" in factory["_make_fetched_loader"]  # PyTorch defaults
    assert "transform=torchvision.transforms.ToTensor()" in factory["_make_plain_loader"]


def test_importing_a_program_builds_and_downloads_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_program(tmp_path, DATASETS, "lazy")
    code = "import lazy, os; print(sorted(os.listdir('.'))); print(len(lazy._make_plain_loader(0)))"
    python_here(code, tmp_path)  # in this process, as a child would run it
    listing, length = capsys.readouterr().out.strip().splitlines()
    assert "data" not in listing  # importing built nothing
    assert length == "4"  # the factory builds the loader when called


def test_user_strings_reach_the_output_only_through_repr() -> None:
    source = CLASSIFIER.format(epochs=1, folder='x\\"\\nimport os #')
    text = compile_text(source)
    tree = ast.parse(text)
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert 'x"\nimport os #' in strings
    assert "\nimport os #" not in text


def test_gan_progress_bar_shows_the_generator_loss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a terminal the GAN bar shows a running loss, not a constant 'loss nan'. The
    program runs in this process (``python_here``), its stderr a terminal for the run."""
    write_program(tmp_path, GAN.format(epochs=1, folder=str(tmp_path / "ck")))
    python_here(
        """
        import io, sys

        class Terminal(io.StringIO):
            def isatty(self):
                return True

        bar = Terminal()
        stderr, sys.stderr = sys.stderr, bar
        try:
            import job

            job.train_gan_maker()
        finally:
            sys.stderr = stderr
        print(repr(bar.getvalue()))
        """,
        tmp_path,
    )
    drawn = capsys.readouterr().out.strip().splitlines()[-1]
    assert "loss " in drawn and "loss nan" not in drawn
