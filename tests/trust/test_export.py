"""``aurane export``: ONNX and torch.export programs, checked numerically after a round trip."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from aurane.export import export_model, names
from aurane.verify import load_generated, sample_input
from tests.conftest import run_cli
from tests.trust.util import CNN, MLP, aurane_here

torch = pytest.importorskip("torch")
HAS_ORT = all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))
needs_ort = pytest.mark.skipif(
    not HAS_ORT, reason="onnx/onnxruntime not installed (pip install 'aurane[export]')"
)


def _module(source: str, model: str = "Net") -> Any:
    gen = load_generated(source, "net.aur")
    torch.manual_seed(0)  # export_model builds its module the same way
    net = getattr(gen.module, gen.class_names[model])().eval()
    return net


def test_names_come_from_the_source() -> None:
    gen = load_generated(MLP, "mlp.aur")
    assert names(gen, "Net") == ("features", "logits")
    assert names(load_generated(CNN, "cnn.aur"), "Net") == ("x", "output")


def test_pt2_round_trip_with_a_dynamic_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mlp.aur").write_text(MLP)
    status, out, err = aurane_here(
        tmp_path, capsys, monkeypatch, "export", "mlp.aur", "--format", "pt2", "--json"
    )
    assert status == 0, err
    [result] = json.loads(out)["exports"]
    assert result["input"] == "features" and result["output"] == "logits"
    program = torch.export.load(str(tmp_path / "mlp.pt2"))
    for batch in (1, 5):
        x = torch.randn(batch, 4)
        with torch.no_grad():
            torch.testing.assert_close(program.module()(x), _module(MLP)(x))


@needs_ort
def test_onnx_round_trip_with_names_and_dynamic_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    (tmp_path / "cnn.aur").write_text(CNN)
    status, out, err = aurane_here(
        tmp_path, capsys, monkeypatch, "export", "cnn.aur", "--format", "onnx", "-o", "net.onnx"
    )
    assert status == 0, err
    assert "checked" in err and out == ""
    session = onnxruntime.InferenceSession(str(tmp_path / "net.onnx"))
    assert [i.name for i in session.get_inputs()] == ["x"]
    assert [o.name for o in session.get_outputs()] == ["output"]
    x = torch.randn(4, 3, 12, 12)
    [out] = session.run(None, {"x": x.numpy()})
    with torch.no_grad():
        torch.testing.assert_close(torch.from_numpy(out), _module(CNN)(x), rtol=1e-4, atol=1e-5)


def test_export_api_reports_the_checked_difference(tmp_path: Path) -> None:
    gen = load_generated(CNN, "cnn.aur")
    result = export_model(gen, "Net", "pt2", str(tmp_path / "a.pt2"))
    assert result.max_abs_difference < 1e-5 and (tmp_path / "a.pt2").is_file()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    assert sample_input(gen.graphs["Net"], "cpu", 3).shape == (3, 3, 12, 12)


def test_export_exit_statuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statuses in this process; a child interpreter's exit status once (a usage
    error, which imports no torch)."""
    (tmp_path / "cnn.aur").write_text(CNN)
    assert run_cli("export", "cnn.aur", cwd=tmp_path).returncode == 2  # --format is required
    status, _, _ = aurane_here(tmp_path, capsys, monkeypatch, "export", "cnn.aur")
    assert status == 2
    status, _, _ = aurane_here(
        tmp_path, capsys, monkeypatch, "export", "cnn.aur", "--format", "tflite"
    )
    assert status == 2
    status, _, err = aurane_here(
        tmp_path, capsys, monkeypatch, "export", "cnn.aur", "--format", "pt2", "--model", "Nope"
    )
    assert status == 1 and "Nope" in err
    (tmp_path / "bad.aur").write_text(CNN.replace("dense(2)", "dense(two)"))
    status, _, err = aurane_here(
        tmp_path, capsys, monkeypatch, "export", "bad.aur", "--format", "pt2"
    )
    assert status == 1 and "error" in err
    assert not (tmp_path / "bad.pt2").exists()
