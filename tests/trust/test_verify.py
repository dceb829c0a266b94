"""``aurane verify``: every IR fact checked against torch, mismatches located as compiler bugs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aurane import ops, records
from aurane.ops.spec import InferContext, TensorType
from aurane.verify import verify_text
from tests.conftest import REPO, run_cli
from tests.subset import representative
from tests.trust.util import CNN, MLP, all_programs, aurane_here

pytest.importorskip("torch")


# The zoo's rolled families the default run leaves to ``-m slow`` (the costliest, about 12 s
# of 18): each is one class per block traced as each variant, as vgg, mobilenet_v3 and
# unet2d are in the default run, with operations the zoo's single models verify too
# (efficientnet_b0, resnet18, resnet50, convnext_tiny).
VERIFIED_SLOW = {"efficientnet", "densenet", "resnet", "convnext"}
PROGRAMS = all_programs()


@pytest.mark.parametrize(
    "path",
    representative(
        PROGRAMS,
        {
            str(p.relative_to(REPO))
            for p in PROGRAMS
            if not ("zoo" in p.parts and p.stem in VERIFIED_SLOW)
        },
        lambda p: str(p.relative_to(REPO)),
    ),
)
def test_verify_passes_on_every_program(path: Path) -> None:
    reports = verify_text(path.read_text(), path.name)
    for report in reports:
        assert report.ok, [d.message for d in report.diagnostics]
        assert report.values_checked > 0
        if not report.unmapped_classes:  # every value of every invocation was observed
            assert report.values_checked == report.values_expected
        if "zoo" not in path.parts:  # the zoo may use layouts the aligner learns later
            assert report.unmapped_classes == [], report.unmapped_classes


def test_every_value_of_every_class_is_checked() -> None:
    source = (REPO / "tests" / "corpus" / "valid" / "composition.aur").read_text()
    [encoder] = verify_text(source, "composition.aur", model="Encoder")
    # input + 2 nodes at the top, and input + 7 nodes in each of the 3 block copies
    assert encoder.values_checked >= 3 + 3 * 8
    assert encoder.device == "meta"


def _patch(monkeypatch: pytest.MonkeyPatch, op: str, **changes: Any) -> None:
    spec = ops.CATALOG[op]
    monkeypatch.setitem(ops.CATALOG, op, records.replace(spec, **changes))


def test_a_wrong_shape_rule_is_caught_at_its_span(monkeypatch: pytest.MonkeyPatch) -> None:
    right = ops.CATALOG["conv2d"].infer

    def wrong(ctx: InferContext) -> TensorType:
        out = right(ctx)
        return TensorType((out.shape[0], out.shape[1] - 1, out.shape[2]), out.dtype)

    _patch(monkeypatch, "conv2d", infer=wrong)
    [report] = verify_text(CNN, "cnn.aur")
    assert not report.ok
    first = report.diagnostics[0]
    assert first.code == "T110"
    assert "compiler bug" in first.message
    assert "(2, 4, 10, 10)" in first.message and "(batch, 4, 9, 10)" in first.message
    assert first.span is not None and (first.span.line, first.span.column) == (4, 14)
    assert "report" in (first.hint or "")


def test_a_wrong_parameter_rule_is_caught_at_its_span(monkeypatch: pytest.MonkeyPatch) -> None:
    _patch(monkeypatch, "dense", parameters=lambda ctx, out: 7)
    [report] = verify_text(MLP, "mlp.aur")
    codes = [(d.code, d.span.line if d.span else None) for d in report.diagnostics]
    assert ("T112", 4) in codes and ("T112", 5) in codes


def test_a_wrong_dtype_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    right = ops.CATALOG["dense"].infer

    def wrong(ctx: InferContext) -> TensorType:
        # the last layer only: a float64 input to the next dense would be refused (T003)
        out = right(ctx)
        return TensorType(out.shape, "float64" if out.shape == (3,) else out.dtype)

    _patch(monkeypatch, "dense", infer=wrong)
    [report] = verify_text(MLP, "mlp.aur")
    assert "T111" in {d.code for d in report.diagnostics}


def test_cli_verify_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "net.aur").write_text(CNN)
    status, out, err = aurane_here(tmp_path, capsys, monkeypatch, "verify", "net.aur", "--json")
    assert status == 0, err
    payload = json.loads(out)
    assert payload["ok"] is True
    [model] = payload["models"]
    assert model["name"] == "Net" and model["device"] == "meta" and model["diagnostics"] == []


def test_cli_verify_text_and_exit_statuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statuses in this process; the same through ``python -m aurane`` once (the
    status a child interpreter exits with)."""
    (tmp_path / "net.aur").write_text(CNN)
    status, out, _ = aurane_here(tmp_path, capsys, monkeypatch, "verify", "net.aur")
    assert status == 0 and "Net: ok" in out
    status, _, err = aurane_here(
        tmp_path, capsys, monkeypatch, "verify", "net.aur", "--model", "Nope"
    )
    assert status == 1 and "Nope" in err
    status, _, _ = aurane_here(tmp_path, capsys, monkeypatch, "verify", "absent.aur")
    assert status == 1
    (tmp_path / "bad.aur").write_text(CNN.replace("dense(2)", "dense(2"))
    status, out, _ = aurane_here(tmp_path, capsys, monkeypatch, "verify", "bad.aur", "--json")
    assert status == 1 and json.loads(out)["ok"] is False
    status, _, _ = aurane_here(tmp_path, capsys, monkeypatch, "verify")
    assert status == 2
    missing = run_cli("verify", "absent.aur", cwd=tmp_path)
    assert missing.returncode == 1 and "absent.aur" in missing.stderr


def test_compile_verify_writes_after_checking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "net.aur").write_text(CNN)
    status, _, err = aurane_here(
        tmp_path, capsys, monkeypatch, "compile", "net.aur", "-o", "net.py", "--verify"
    )
    assert status == 0, err
    assert "Net: ok" in err
    assert (tmp_path / "net.py").read_text().startswith("# Generated by Aurane")


def test_a_run_time_failure_is_located(monkeypatch: pytest.MonkeyPatch) -> None:
    right = ops.CATALOG["dense"].infer

    def wrong(ctx: InferContext) -> TensorType:
        out = right(ctx)
        return TensorType((*out.shape[:-1], out.shape[-1] + 1), out.dtype)

    _patch(monkeypatch, "dense", infer=wrong)  # the next layer is then built one input too wide
    [report] = verify_text(MLP, "mlp.aur")
    found = [(d.code, d.span.line if d.span else None) for d in report.diagnostics]
    assert found[0] == ("T110", 4)
    assert ("T113", 5) in found
