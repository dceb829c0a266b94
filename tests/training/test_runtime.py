"""The runtime library (``aurane.runtime``) on its own, and ``--standalone`` inlining."""

from __future__ import annotations

import ast
import importlib.util
import json
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import aurane
from aurane.backends.torch.runtime import inlined_name, standalone, symbols
from aurane.runtime import history, version
from tests.training.helpers import compile_text, env, run_python

# torchvision's FakeData: a program that needs nothing from Aurane once standalone
FAKE = """
dataset pictures:
    from torchvision.datasets.FakeData
    size = 24
    image_size = (1, 8, 8)
    num_classes = 3
    batch = 8

model Tiny:
    input_shape = (1, 8, 8)
    def forward(x):
        x -> flatten() -> dense(3)

train Tiny on pictures:
    epochs = 2
    loss = cross_entropy
    metrics = [accuracy]
    checkpoint_dir = "ck"
"""


def test_the_runtime_states_its_version_and_refuses_another() -> None:
    assert aurane.__version__ == version.AURANE_VERSION
    version.require(version.RUNTIME_VERSION)
    with pytest.raises(ImportError, match="compiled for Aurane runtime 99"):
        version.require(99)


def test_importing_the_runtime_package_does_not_import_torch() -> None:
    code = "import sys, aurane.runtime, aurane.runtime.version; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_no_runtime_function_shadows_a_runtime_name() -> None:
    """--standalone renames runtime names in place; a parameter or local of the same name
    would be renamed at its uses but not at its definition."""
    table = symbols()
    for symbol in {id(s): s for s in table.values()}.values():
        for node in ast.walk(symbol.node):
            if isinstance(node, ast.arg):
                assert node.arg not in table, (symbol.names, node.arg)
    publics = {name for name in table if not name.startswith("_")}
    renamed = {inlined_name(name) for name in publics} - publics
    assert not renamed & set(table)  # no _x beside x


def test_history_files_and_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    rows = [
        {"epoch": 1, "loss": 1.0, "accuracy": 0.5, "val_loss": 1.1, "val_accuracy": 0.4, "lr": 0.1},
        {"epoch": 2, "loss": 0.5, "accuracy": 0.8, "val_loss": 0.7, "val_accuracy": 0.6, "lr": 0.1},
    ]
    history.write_history(str(tmp_path / "a"), rows)
    history.write_history(str(tmp_path / "b"), rows[:1])
    assert (tmp_path / "a" / "metrics.csv").read_text().splitlines()[0] == (
        "epoch,loss,accuracy,val_loss,val_accuracy,lr"
    )
    assert history.read_history(str(tmp_path / "a")) == rows
    runs = [(name, history.read_history(str(tmp_path / name))) for name in ("a", "b")]
    figure = history.plot_runs(runs, str(tmp_path / "runs.png"))
    panels = [axis for axis in figure.axes if axis.get_title()]
    assert [axis.get_title() for axis in panels] == ["loss", "accuracy"]
    # per panel: train and validation for each of the two runs
    assert [len(axis.get_lines()) for axis in panels] == [4, 4]
    assert (tmp_path / "runs.png").read_bytes().startswith(b"\x89PNG")


def test_plot_command_draws_one_figure_for_several_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figure drawn by ``aurane plot`` in this process; a child interpreter's exit
    status for the run that is not there."""
    pytest.importorskip("matplotlib")
    from aurane.cli.main import main
    from tests.conftest import run_cli

    for name, loss in (("one", 1.0), ("two", 2.0)):
        rows = [{"epoch": e, "loss": loss / e, "val_loss": loss / e + 0.1} for e in (1, 2, 3)]
        history.write_history(str(tmp_path / name), rows)
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "one", "two", "-o", "both.png"]) == 0
    assert (tmp_path / "both.png").read_bytes().startswith(b"\x89PNG")
    missing = run_cli("plot", "nowhere", cwd=tmp_path)
    assert missing.returncode == 1 and "metrics.jsonl" in missing.stderr


def test_default_output_is_short_and_imports_the_runtime() -> None:
    quickstart = Path(__file__).parents[2] / "examples" / "quickstart.aur"
    code = compile_text(quickstart.read_text(), "quickstart.aur")
    assert len(code.splitlines()) <= 120
    assert "from aurane import runtime as rt" in code and "rt.require(3)" in code
    assert "_auc" not in code and "amp_dtype" not in code  # only what the program uses


def test_standalone_output_runs_with_aurane_hidden(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    code = compile_text(FAKE, "fake.aur", standalone=True)
    assert "aurane" not in {
        (node.module or "") if isinstance(node, ast.ImportFrom) else node.names[0].name
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Import | ast.ImportFrom)
    }
    assert standalone(code) == code  # nothing left to inline
    # the metrics each task allows (runtime/tasks.py, which the checker reads too) came along
    assert code.count("_METRICS_BY_TASK: dict[str, frozenset[str]] = {") == 1
    (tmp_path / "fake.py").write_text(code)
    # -S -I: no site processing (so no editable install of aurane), no PYTHONPATH; then the
    # site-packages folder alone, where torch lives but aurane is only a .pth entry.
    driver = (
        "import sys, runpy\n"
        f"sys.path.append({sysconfig.get_paths()['purelib']!r})\n"
        "try:\n    import aurane\nexcept ImportError:\n    pass\n"
        "else:\n    raise SystemExit('aurane is importable: the test hides nothing')\n"
        "sys.argv = ['fake.py']\n"
        "runpy.run_path('fake.py', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-I", "-c", driver],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "epoch 2/2" in done.stdout and "train_tiny: 2 epochs" in done.stdout
    rows = [
        json.loads(line)
        for line in (tmp_path / "ck" / "latest" / "metrics.jsonl").read_text().splitlines()
    ]
    assert [row["epoch"] for row in rows] == [1, 2]


class _Writer:
    """Stands in for torch.utils.tensorboard.SummaryWriter."""

    logged: list[tuple[str, float, int]] = []

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.logged.append((tag, value, step))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _tiny_run(folder: Path, epochs: int, **options: object) -> tuple[object, object]:
    import torch

    from aurane import runtime as rt

    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.ones(4, 2), torch.zeros(4, 1))] * 3
    run = rt.Run(
        "train_tiny",
        epochs=epochs,
        config={"model": "Tiny"},
        state={"model": model, "optimizer": optimizer},
        loaders=[loader],
        checkpoint_dir=str(folder),
        **options,  # type: ignore[arg-type]
    )
    return run, model


def test_run_in_process_logs_to_tensorboard_and_summarises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    monkeypatch.setenv("AURANE_PLOT", "1")  # the automatic plot, checked below
    fake = types.ModuleType("torch.utils.tensorboard")
    fake.SummaryWriter = _Writer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", fake)
    run, model = _tiny_run(tmp_path / "ck", 2)
    with run as active:  # type: ignore[attr-defined]
        for epoch in active.epochs():
            for _ in active.batches(active.loaders[0], lambda: 0.0):
                pass
            active.end_epoch(epoch, {"loss": 1.0 / epoch})
        assert (tmp_path / "ck" / "run_0001" / ".aurane-run.lock").is_file()
        active.finish(model)
    assert not (tmp_path / "ck" / "run_0001" / ".aurane-run.lock").exists()
    assert ("loss", 0.5, 2) in _Writer.logged and ("lr", 0.1, 1) in _Writer.logged
    summary = active.summary()
    assert "train_tiny: 2 epochs" in summary and "best epoch 2: loss 0.5" in summary
    if importlib.util.find_spec("matplotlib") is not None:  # the automatic plot
        assert (tmp_path / "ck" / "run_0001" / "metrics.png").read_bytes()[:4] == b"\x89PNG"
        assert "metrics.png" in summary


def test_the_automatic_plot_can_be_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AURANE_PLOT", "0")
    assert history.plot_history(str(tmp_path), [{"epoch": 1, "loss": 1.0}]) is None
    assert not (tmp_path / "metrics.png").exists()


def test_a_pending_signal_stops_the_run_between_batches(tmp_path: Path) -> None:
    from aurane.runtime import run as run_module

    run, _ = _tiny_run(tmp_path / "ck", 5)
    with pytest.raises(run_module.Interrupted) as caught, run:  # type: ignore[attr-defined]
        for epoch in run.epochs():  # type: ignore[attr-defined]
            for index, _ in enumerate(run.batches(run.loaders[0], lambda: 0.0)):  # type: ignore[attr-defined]
                if epoch == 2 and index == 1:
                    run_module._PENDING.append(signal.SIGTERM)
            run.end_epoch(epoch, {"loss": 1.0})  # type: ignore[attr-defined]
    assert caught.value.signum == signal.SIGTERM
    message = str(caught.value)
    # the stats of this loop (a function) cannot be kept: the last epoch's checkpoint
    assert message.startswith("interrupted in epoch 2 at step 5; last complete checkpoint ")
    assert "(epoch 1); resume with: " in message
    lock = tmp_path / "ck" / "run_0001" / ".aurane-run.lock"
    assert not run_module._PENDING and not lock.exists()


def test_a_run_restores_the_signal_handlers_it_replaced(tmp_path: Path) -> None:
    from aurane.runtime import run as run_module

    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    run, _ = _tiny_run(tmp_path / "ck", 1)
    with run:  # type: ignore[attr-defined]
        assert signal.getsignal(signal.SIGTERM) is run_module._on_signal
        inner, _ = _tiny_run(tmp_path / "inner", 1)
        with inner:  # type: ignore[attr-defined]
            pass
        assert signal.getsignal(signal.SIGINT) is run_module._on_signal  # the outer run's
    assert {number: signal.getsignal(number) for number in before} == before


def test_to_device_moves_a_model_only_when_a_tensor_is_elsewhere() -> None:
    import torch

    from aurane import runtime as rt

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
            self.register_buffer("scale", torch.ones(1), persistent=False)
            self.moves = 0

        def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]
            self.moves += 1
            return super()._apply(fn, recurse)

    net, cpu, meta = Net(), torch.device("cpu"), torch.device("meta")
    assert rt.to_device(net, cpu) is net and net.moves == 0
    assert rt.to_device(net, meta) is net and net.moves == 1
    assert {t.device for t in [*net.parameters(), *net.buffers()]} == {meta}
    rt.to_device(net, meta)
    assert net.moves == 1
    net.inner[1].running_mean = torch.zeros(2)  # one buffer on the CPU, deep inside
    rt.to_device(net, meta)
    assert net.moves == 2 and net.inner[1].running_mean.device == meta
    net.scale = torch.ones(1)  # a non-persistent buffer counts too
    rt.to_device(net, meta)
    assert net.moves == 3 and net.scale.device == meta


def test_job_locals_lists_every_name_a_job_function_binds() -> None:
    from aurane.backends.torch.jobs import JOB_LOCALS
    from tests.training.programs import CLASSIFIER, GAN

    for source in (CLASSIFIER.format(epochs=1, folder="ck"), GAN.format(epochs=1, folder="ck")):
        tree = ast.parse(compile_text(source))
        for function in tree.body:
            if isinstance(function, ast.FunctionDef) and function.name.startswith("train_"):
                parameters = {a.arg for a in function.args.args}
                bound = {
                    node.id
                    for node in ast.walk(function)
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                }
                assert bound - parameters - {"_"} <= JOB_LOCALS, bound - JOB_LOCALS


ALONE = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 16\n    features = 4\n"
    "    batch = 8\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    "        x -> dense(1)\n\ntrain M on d:\n    epochs = 1\n    loss = mse\n"
)
# every import of aurane (the package and its submodules) fails, wherever it is installed
_BLOCK_AURANE = (
    "import sys, runpy\n"
    "class Blocker:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'aurane' or name.startswith('aurane.'):\n"
    "            raise ModuleNotFoundError(f'blocked: {name}')\n"
    "        return None\n"
    "sys.meta_path.insert(0, Blocker())\n"
    "try:\n    import aurane.data\nexcept ImportError:\n    pass\n"
    "else:\n    raise SystemExit('aurane is importable: the test hides nothing')\n"
    "sys.argv = ['alone.py']\n"
    "runpy.run_path('alone.py', run_name='__main__')\n"
    "assert not [m for m in sys.modules if m.split('.')[0] == 'aurane']\n"
)


def test_standalone_output_copies_aurane_data_in(tmp_path: Path) -> None:
    """Issue 25 item 6: a program training on aurane.data.SyntheticRegression, compiled with
    --standalone, runs where every import of aurane fails (the dataset copied in)."""
    code = compile_text(ALONE, "alone.aur", standalone=True)
    assert "_SyntheticRegression(" in code and "import aurane" not in code
    assert standalone(code) == code
    (tmp_path / "alone.py").write_text(code)
    done = run_python(_BLOCK_AURANE, tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "train_m: 1 epoch" in done.stdout
