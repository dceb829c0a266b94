"""Issue 25, item 6: trained weights out. ``aurane export --checkpoint`` exports the weights a
training run wrote (ONNX and pt2, each checked against the checkpoint's module) and
``aurane verify --checkpoint`` runs the model with them; a checkpoint without the model's
weights, or a file that is no checkpoint, is refused (exit 1) without unpickling code."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.training.helpers import main_here

PROGRAM = (
    "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 32\n    features = 4\n"
    "    batch = 8\n\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    "        x -> dense(8) -> relu -> dense(1)\n\ntrain M on d:\n    epochs = 2\n"
    "    lr = 0.05\n    loss = mse\n    optimizer = sgd\n"
    '    checkpoint_dir = "ck"\n'
)
OTHER = PROGRAM.replace("dense(8)", "dense(6)")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("trained")
    (folder / "prog.aur").write_text(PROGRAM)
    (folder / "other.aur").write_text(OTHER)
    with pytest.MonkeyPatch.context() as patch:  # the run's command line, in this process
        patch.chdir(folder)
        main_here(PROGRAM, job="train_m", name="prog")
    assert (folder / "ck" / "latest").exists()
    return folder


def _module(folder: Path, weights: dict[str, Any] | None) -> Any:
    from aurane.verify import load_generated

    gen = load_generated((folder / "prog.aur").read_text(), "prog.aur")
    torch.manual_seed(0)
    net = getattr(gen.module, gen.class_names["M"])()
    if weights is not None:
        net.load_state_dict(weights)
    return net.eval()


def _main(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    """``aurane ARGS`` in this process (no interpreter start): status, stdout, stderr."""
    from aurane.cli.main import main

    monkeypatch.chdir(folder)
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_trained_checkpoint_exported_to_onnx_reproduces_the_trained_module(
    trained: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    status, _, err = _main(
        trained, capsys, monkeypatch,
        "export", "prog.aur", "--format", "onnx", "--checkpoint", "ck", "-o", "m.onnx",
    )  # fmt: skip
    assert status == 0, err
    assert "trained weights: ck/run_0001/last.pt" in err
    checkpoint = torch.load(trained / "ck" / "run_0001" / "last.pt", weights_only=True)
    net = _module(trained, checkpoint["model"])
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = net(x).numpy()
        fresh = _module(trained, None)(x).numpy()
    session = onnxruntime.InferenceSession(str(trained / "m.onnx"))
    (actual,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    torch.testing.assert_close(torch.from_numpy(actual), torch.from_numpy(expected))
    # the trained weights, not the fresh ones `aurane export` used before
    assert abs(expected - fresh).max() > 1e-3


def test_pt2_export_of_a_run_folder_holds_the_trained_weights(
    trained: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, _, err = _main(
        trained, capsys, monkeypatch,
        "export", "prog.aur", "--format", "pt2", "--checkpoint", "ck/run_0001", "-o", "m.pt2",
    )  # fmt: skip
    assert status == 0, err
    checkpoint = torch.load(trained / "ck" / "run_0001" / "last.pt", weights_only=True)
    program = torch.export.load(str(trained / "m.pt2"))
    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(program.module()(x), _module(trained, checkpoint["model"])(x))


def test_verify_runs_the_model_with_the_checkpoints_weights(
    trained: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    status, out, err = _main(
        trained, capsys, monkeypatch, "verify", "prog.aur", "--checkpoint", "ck", "--json"
    )
    assert status == 0, err
    (report,) = json.loads(out)["models"]
    assert report["ok"] and report["device"] == "cpu"
    assert report["checkpoint"].endswith("last.pt") and report["weights_entry"] == "model"


@pytest.mark.parametrize("command", ["export", "verify"])
def test_a_checkpoint_of_another_model_is_refused(
    trained: Path, command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = ["--format", "pt2", "-o", "x.pt2"] if command == "export" else []
    status, _, err = _main(
        trained, capsys, monkeypatch, command, "other.aur", *extra, "--checkpoint", "ck"
    )
    assert status == 1, err
    assert "holds no weights for model M" in err and "names or shapes differ" in err
    assert not (trained / "x.pt2").exists()


class _Payload:
    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.mkdir, ("pwned",))


def test_a_hostile_pickle_as_checkpoint_is_refused_unexecuted(
    trained: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (trained / "evil.pt").write_bytes(pickle.dumps({"model": _Payload()}))
    for command in ("export", "verify"):
        extra = ["--format", "pt2", "-o", "y.pt2"] if command == "export" else []
        status, _, err = _main(
            trained, capsys, monkeypatch, command, "prog.aur", *extra, "--checkpoint", "evil.pt"
        )
        assert status == 1, err
        assert "not a readable checkpoint" in err
    assert not (trained / "pwned").exists()
    status, _, err = _main(trained, capsys, monkeypatch, "verify", "prog.aur", "--checkpoint", "no")
    assert status == 1 and "no checkpoint at 'no'" in err
