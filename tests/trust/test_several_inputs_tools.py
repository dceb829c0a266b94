"""Issue 23: the tools downstream of the IR with models that take and return several
tensors: profile (per input and in total), diagrams (an entry node per input, every
returned node), verify, source maps, diff and export (ONNX and pt2, named inputs and
outputs, one batch axis and the shared symbolic sizes)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from aurane.analysis.diagrams.common import build_diagram
from aurane.analysis.diff import diff_programs
from aurane.analysis.profile import profile
from aurane.analysis.report import model_json, model_text
from aurane.export import export_model
from aurane.sourcemap import class_maps
from aurane.verify import load_generated, verify_text
from tests.helpers import front
from tests.language.test_several_inputs import ENCODER, TWO_TOWER
from tests.trust.util import aurane_here

torch = pytest.importorskip("torch")
HAS_ORT = all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


def test_profile_counts_each_input_and_their_total() -> None:
    graph = front(TWO_TOWER).graphs["TwoTower"]
    p = profile(graph)
    assert p.inputs == (("query", (8,), None, 32), ("item", (12,), None, 48))
    assert p.input_bytes == 80  # both inputs, float32 guessed for an unknown dtype
    data = json.loads(json.dumps(model_json(p)))
    assert [i["bytes_per_sample"] for i in data["inputs"]] == [32, 48]
    assert data["input_bytes_per_sample"] == 80
    assert [o["name"] for o in data["outputs"]] == ["q", "i"]
    # every value counted once: the two inputs and the six layers' outputs
    layers = sum(layer.activation_bytes for layer in p.layers)
    assert p.activation_bytes_per_sample == 80 + layers
    text = model_text(p)
    assert text.splitlines()[0].startswith("model TwoTower: query (8,) dtype ? (32 B), item")
    assert "inputs per sample: 80 B in all" in text


def test_diagram_has_an_entry_per_input_and_marks_every_output() -> None:
    diagram = build_diagram(front(TWO_TOWER).graphs["TwoTower"])
    entries = [n.label for n in diagram.nodes if n.kind == "input"]
    assert entries == ["query", "item"]
    returned = [n.label for n in diagram.nodes if n.is_output]
    assert returned == ["q", "i"]
    expanded = build_diagram(front(ENCODER).graphs["Net"], expand=True)
    mask = next(n.id for n in expanded.nodes if n.label == "mask")
    # the mask flows into the pooling block's first use of it
    assert any(e.source == mask for e in expanded.edges)


def test_verify_checks_every_input_and_output() -> None:
    [net] = verify_text(ENCODER, "enc.aur", "Net")
    assert net.ok, [d.message for d in net.diagnostics]
    assert net.values_checked == net.values_expected == 17
    assert net.unmapped_classes == []


def test_source_map_covers_a_statement_binding_several_outputs() -> None:
    gen = load_generated(ENCODER, "enc.aur")
    maps = class_maps(gen.code, [(gen.class_names["Net"], gen.graphs["Net"])])
    assert maps == {name: m for name, m in gen.maps.items() if name in maps}
    statements = maps[gen.class_names["Net"]].statements
    bound = next(s for s in statements if len(s.targets) == 2)
    assert bound.targets == ("h", "pooled") and len(bound.nodes) == 1


def test_diff_of_one_tower() -> None:
    wider = TWO_TOWER.replace("i = item -> dense(16)", "i = item -> dense(32)")
    [model] = diff_programs(front(TWO_TOWER).graphs, front(wider).graphs)
    assert model.status == "changed" and model.delta("parameters") == (12 + 1) * 16 + 16 * 4
    changed = {layer.node for layer in model.layers if layer.status == "changed"}
    assert changed == {"dense3", "relu2", "dense4"}


def test_pt2_export_with_two_named_inputs_and_outputs(tmp_path: Path) -> None:
    gen = load_generated(TWO_TOWER, "tt.aur")
    result = export_model(gen, "TwoTower", "pt2", str(tmp_path / "tt.pt2"))
    assert result.input_names == ("query", "item") and result.output_names == ("q", "i")
    program = torch.export.load(str(tmp_path / "tt.pt2"))
    torch.manual_seed(0)
    net = getattr(gen.module, gen.class_names["TwoTower"])().eval()
    query, item = torch.randn(5, 8), torch.randn(5, 12)
    with torch.no_grad():
        for got, want in zip(program.module()(query, item), net(query, item), strict=True):
            torch.testing.assert_close(got, want)


@pytest.mark.skipif(not HAS_ORT, reason="onnx/onnxruntime not installed")
# torch's exporter notes that ids and mask share their axis names (the point of the test)
@pytest.mark.filterwarnings("ignore:# The axis name.*shares the same shape constraints")
def test_onnx_export_names_inputs_outputs_and_shares_dynamic_axes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnx

    (tmp_path / "enc.aur").write_text(ENCODER)
    status, out, err = aurane_here(
        tmp_path, capsys, monkeypatch, "export", "enc.aur", "--model", "Net", "--format", "onnx",
        "--json",
    )  # fmt: skip
    assert status == 0, err
    [result] = json.loads(out)["exports"]
    assert result["inputs"] == ["ids", "mask"] and result["outputs"] == ["h", "pooled"]
    assert result["dynamic"] == ["batch", "seq"]
    model = onnx.load(str(tmp_path / "enc.onnx"))
    dims = {
        v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*model.graph.input, *model.graph.output]
    }
    assert dims == {
        "ids": ["batch", "seq"],
        "mask": ["batch", "seq"],
        "h": ["batch", "seq", 16],
        "pooled": ["batch", 16],
    }


def test_playground_shows_every_input_and_output() -> None:
    from aurane.playground.analyze import analyze

    state = analyze(TWO_TOWER)
    assert state["ok"], state["diagnostics"]
    [model] = state["models"]
    assert [i["name"] for i in model["inputs"]] == ["query", "item"]
    assert [o["name"] for o in model["outputs"]] == ["q", "i"]
    assert "def forward(self, query, item):" in state["python"]
    hovers = {h["text"] for h in state["hovers"]}
    assert {"query: input (8,)", "item: input (12,)"} <= hovers


def test_budget_binds_a_size_only_a_later_input_has() -> None:
    found = [
        d
        for d in front(
            """
            seq = dim(1, 64)
            model M:
                input_shape = {x: (4,), mask: (seq,)}
                budget activations <= 10 at batch 1, seq 8
                def forward(x, mask):
                    return dense(x, 2), mask
            """
        ).diagnostics
        if d.is_error
    ]
    # x (16 B) + mask at seq = 8 (32 B) + the dense output (8 B): every input counted
    assert [d.code for d in found] == ["T115"] and "56 B > 10" in found[0].message
