"""Subprocess tests of ``aurane profile`` and ``aurane visualize``: flags, exit codes, the
§11.1 ``profile --json`` contract, corpus equality, output files, no torch import."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import VALID, corpus_expected, corpus_files, run_cli

TWO = """model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(4).relu -> dense(2)

model Other:
    input_shape = (3,)
    def forward(x):
        x -> dense(1)
"""
ONE = """model Solo:
    input_shape = (8,)
    def forward(x):
        left = dense(x, 4)
        right = dense(x, 4)
        return add(left, right)
"""
BAD = """model Net:
    input_shape = (8,)
    def forward(x):
        x -> densee(4)
"""
HAS_DOT = shutil.which("dot") is not None


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name, text in (("two", TWO), ("one", ONE), ("bad", BAD)):
        paths[name] = tmp_path / f"{name}.aur"
        paths[name].write_text(text)
    return paths


def test_help() -> None:
    for command in ("profile", "visualize"):
        res = run_cli(command, "--help")
        assert res.returncode == 0 and "usage:" in res.stdout
    assert "--batch-size" in run_cli("profile", "--help").stdout
    assert "--expand" in run_cli("visualize", "--help").stdout


@pytest.mark.parametrize("name", corpus_files("valid") or ["<absent>"])
def test_profile_json_equals_expected(name: str) -> None:
    expected = corpus_expected("valid").get(name)
    if expected is None:
        pytest.skip(f"{name} has no expected facts")
    res = run_cli("profile", "--json", str(VALID / name))
    assert res.returncode == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["batch_size"] == 1
    models = {m["name"]: m for m in payload["models"]}
    assert set(models) == set(expected)
    for model, facts in expected.items():
        assert models[model]["parameters"] == facts["parameters"]
        assert models[model]["flops_per_sample"] == facts["flops_per_sample"]


def test_profile_json_contract(files: dict[str, Path]) -> None:
    res = run_cli("profile", "--json", "--batch-size", "8", str(files["two"]))
    assert res.returncode == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["batch_size"] == 8 and payload["estimate"] is True
    net = payload["models"][0]
    assert net["name"] == "Net"
    for key, kind in (
        ("parameters", int),
        ("trainable_parameters", int),
        ("flops_per_sample", int),
        ("other_flops_per_sample", int),
        ("activation_bytes", int),
        ("layers", list),
        ("macs_per_sample", int),
    ):
        assert isinstance(net[key], kind), key
    assert net["parameters"] == 36 + 10 and net["flops_per_sample"] == 2 * (32 + 8)
    # (8 + 4 + 4 + 2) values x 4-byte guess x batch 8
    assert net["activation_bytes"] == 8 * 18 * 4
    layers = net["layers"]
    assert [layer["node"] for layer in layers] == ["dense1", "relu1", "dense2"]
    assert layers[0] == {
        **layers[0],
        "op": "dense",
        "output_shape": [4],
        "parameters": 36,
        "flops_per_sample": 64,
    }
    assert net["training_memory"] is None
    one = json.loads(run_cli("profile", "--json", str(files["two"])).stdout)
    assert one["models"][0]["activation_bytes"] * 8 == net["activation_bytes"]


def test_profile_text_flags(files: dict[str, Path]) -> None:
    plain = run_cli("profile", str(files["two"]))
    assert plain.returncode == 0
    for words in (
        "model Net",
        "not latency",
        "MACs",
        "FLOPs",
        "output shape",
        "total",
        "activation memory at batch 1",
        "model Other",
    ):
        assert words in plain.stdout, words
    detailed = run_cli("profile", "--detailed", "--explain", "--model", "Net", str(files["two"]))
    assert detailed.returncode == 0
    assert "by operation" in detailed.stdout and "formulas" in detailed.stdout
    assert "model Other" not in detailed.stdout
    assert "MACs = output elements x input features = 4 \u00b7 8 = 32" in detailed.stdout


def test_profile_training_memory() -> None:
    path = VALID / "training.aur"
    if not path.exists():
        pytest.skip("corpus not present")
    payload = json.loads(run_cli("profile", "--json", str(path)).stdout)
    memory = payload["models"][0]["training_memory"]
    assert memory["optimizer"] == "adamw" and memory["batch_size"] == 16
    assert memory["optimizer_bytes"] == 2 * memory["parameter_bytes"]
    text = run_cli("profile", "--batch-size", "4", str(path)).stdout
    assert "training memory estimate" in text and "batch 4" in text


def test_profile_exit_codes(files: dict[str, Path], tmp_path: Path) -> None:
    assert run_cli("profile", str(files["bad"])).returncode == 1
    missing = run_cli("profile", str(tmp_path / "nope.aur"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    unknown = run_cli("profile", "--model", "Nope", str(files["two"]))
    assert unknown.returncode == 1 and "no model 'Nope'" in unknown.stderr
    for bad in ("0", "-2", "many"):
        res = run_cli("profile", "--batch-size", bad, str(files["two"]))
        assert res.returncode == 2 and "positive integer" in res.stderr
    assert run_cli("profile").returncode == 2
    assert "Traceback" not in run_cli("profile", str(files["bad"])).stderr


def test_profile_and_diagrams_never_import_torch(files: dict[str, Path]) -> None:
    src = str(files["two"])
    code = (
        "import sys\nfrom aurane.cli.main import main\n"
        f"rc = main(['profile', '--json', '--detailed', {src!r}])\n"
        f"rc2 = main(['visualize', '--format', 'mermaid', {src!r}])\n"
        "assert 'torch' not in sys.modules, 'torch imported'\nsys.exit(rc or rc2)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("fmt", ["rich", "mermaid", "dot"])
def test_visualize_formats(files: dict[str, Path], fmt: str) -> None:
    res = run_cli("visualize", "--format", fmt, str(files["two"]))
    assert res.returncode == 0, res.stderr
    assert "Net" in res.stdout and "Other" in res.stdout  # both models to stdout
    assert "returned" in res.stdout


def test_visualize_output_file(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "solo.mmd"
    res = run_cli("visualize", str(files["one"]), "--output", str(out))
    assert res.returncode == 0 and res.stdout == ""
    assert out.read_text().startswith("flowchart TB")  # format from the suffix
    dot = tmp_path / "solo.txt"
    assert (
        run_cli("visualize", "--format", "dot", str(files["one"]), "-o", str(dot)).returncode == 0
    )
    assert dot.read_text().startswith('digraph "Solo"')


def test_ambiguous_model_with_output_writes_nothing(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "diagram.dot"
    res = run_cli("visualize", "--format", "dot", str(files["two"]), "--output", str(out))
    assert res.returncode == 2 and "--model" in res.stderr and "Net, Other" in res.stderr
    assert not out.exists()
    out.write_text("keep me")
    assert run_cli("visualize", str(files["two"]), "-o", str(out)).returncode == 2
    assert out.read_text() == "keep me"
    ok = run_cli("visualize", "--model", "Other", str(files["two"]), "-o", str(out))
    assert ok.returncode == 0 and 'digraph "Other"' in out.read_text()


def test_visualize_errors(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "x.dot"
    bad = run_cli("visualize", str(files["bad"]), "-o", str(out))
    assert bad.returncode == 1 and not out.exists()
    assert run_cli("visualize", "--format", "png", str(files["one"])).returncode == 2
    assert run_cli("visualize", "--model", "Nope", str(files["two"])).returncode == 1
    same = run_cli("visualize", "--format", "dot", str(files["one"]), "-o", str(files["one"]))
    assert same.returncode == 2 and files["one"].read_text() == ONE


@pytest.mark.parametrize("kind", ["symlink", "hard link", "dotted"])
def test_visualize_never_overwrites_the_source(
    files: dict[str, Path], tmp_path: Path, kind: str
) -> None:
    target = tmp_path / "alias.aur"
    if kind == "symlink":
        target.symlink_to(files["one"])
    elif kind == "hard link":
        os.link(files["one"], target)
    else:
        target = tmp_path / "sub" / ".." / "one.aur"
        (tmp_path / "sub").mkdir()
    same = run_cli("visualize", "--format", "dot", str(files["one"]), "-o", str(target))
    assert same.returncode == 2 and "refusing to overwrite the source" in same.stderr
    assert files["one"].read_text() == ONE


def test_visualize_expand() -> None:
    path = VALID / "composition.aur"
    if not path.exists():
        pytest.skip("corpus not present")
    collapsed = run_cli("visualize", "--format", "dot", "--model", "SmallResNet", str(path))
    expanded = run_cli(
        "visualize", "--format", "dot", "--model", "SmallResNet", "--expand", str(path)
    )
    # input, conv2d+relu (folded), 2 blocks, pool, dense; clusters: only the legend
    nodes = re.compile(r"^\s*n\d+ \[label=", re.M)
    assert len(nodes.findall(collapsed.stdout)) == 6
    assert collapsed.stdout.count("subgraph cluster") == 1 and "cluster_legend" in collapsed.stdout
    # each ResidualUnit: conv2d+relu, conv2d, add+relu inside its cluster
    assert len(nodes.findall(expanded.stdout)) == 10
    assert expanded.stdout.count("subgraph cluster") == 3
    block = ["--expand-block", "residualunit2"]
    one = run_cli("visualize", "--format", "dot", "--model", "SmallResNet", *block, str(path))
    assert len(nodes.findall(one.stdout)) == 8 and one.stdout.count("subgraph cluster") == 2


def test_visualize_svg(files: dict[str, Path], tmp_path: Path) -> None:
    res = run_cli("visualize", "--format", "svg", str(files["one"]))
    assert res.returncode == 0 and "<svg" in res.stdout
    out = tmp_path / "solo.svg"
    assert run_cli("visualize", str(files["one"]), "-o", str(out)).returncode == 0
    assert "</svg>" in out.read_text()
    several = run_cli("visualize", "--format", "svg", str(files["two"]))
    assert several.returncode == 2 and "--model" in several.stderr


def test_visualize_svg_without_graphviz(files: dict[str, Path], tmp_path: Path) -> None:
    # Aurane draws the SVG itself: no 'dot' on PATH is no problem
    empty = tmp_path / "bin"
    empty.mkdir()
    out = tmp_path / "solo.svg"
    res = run_cli(
        "visualize", "--format", "svg", str(files["one"]), "-o", str(out), env={"PATH": str(empty)}
    )
    assert res.returncode == 0, res.stderr
    svg = out.read_text()
    assert svg.startswith("<?xml") and svg.rstrip().endswith("</svg>")
    assert 'class="legend"' in svg and 'class="node' in svg
