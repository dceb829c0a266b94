"""``aurane diff``: layers added, removed and changed, with parameter and MAC deltas."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from aurane.analysis.diff import diff_programs
from aurane.analysis.profile import profile
from aurane.ops import lookup
from tests.conftest import run_cli
from tests.helpers import front

BEFORE = """\
model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        x -> conv2d(8, kernel=3).relu
          -> maxpool(2)
          -> flatten()
          -> dense(10)
"""

AFTER = """\
model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        x -> conv2d(16, kernel=3).relu
          -> flatten()
          -> dense(10)

model Extra:
    input_shape = (4,)
    def forward(x):
        x -> dense(2)
"""


def test_layers_and_totals_come_from_the_ir_and_profile() -> None:
    before, after = front(BEFORE).graphs, front(AFTER).graphs
    [net, extra] = diff_programs(before, after)
    assert (net.name, net.status, extra.status) == ("Net", "changed", "added")
    status = {layer.node: layer.status for layer in net.layers}
    assert status == {
        "conv2d1": "changed",
        "relu1": "changed",
        "flatten1": "changed",
        "dense1": "changed",
        "maxpool1": "removed",
    }
    assert net.before is not None and net.after is not None
    assert net.before.parameters == profile(before["Net"]).parameters
    assert net.after.macs == profile(after["Net"]).macs
    conv = next(layer for layer in net.layers if layer.node == "conv2d1")
    assert "channels: 8 -> 16" in conv.changes and conv.delta("parameters") == 224
    assert sum(layer.delta("parameters") for layer in net.layers) == net.delta("parameters")


@pytest.fixture
def pair(tmp_path: Path) -> Path:
    (tmp_path / "a.aur").write_text(BEFORE)
    (tmp_path / "b.aur").write_text(AFTER)
    return tmp_path


def test_cli_json(pair: Path) -> None:
    done = run_cli("diff", "a.aur", "b.aur", "--format", "json", cwd=pair)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["changed"] is True
    net = payload["models"][0]
    assert net["delta"]["parameters"] == net["after"]["parameters"] - net["before"]["parameters"]
    removed = [layer for layer in net["layers"] if layer["status"] == "removed"]
    assert [layer["node"] for layer in removed] == ["maxpool1"]
    assert removed[0]["before"]["output_shape"] == [8, 7, 7] and removed[0]["after"] is None


def test_cli_text_and_diagrams(pair: Path) -> None:
    text = run_cli("diff", "a.aur", "b.aur", cwd=pair)
    assert text.returncode == 0
    assert "~ model Net (changed)" in text.stdout and "- maxpool1" in text.stdout
    assert "+ model Extra (added)" in text.stdout
    mermaid = run_cli("diff", "a.aur", "b.aur", "--format", "mermaid", cwd=pair).stdout
    assert mermaid.startswith("flowchart TB") and ":::removed" in mermaid
    assert ":::changed" in mermaid and ":::added" in mermaid
    dot = run_cli("diff", "a.aur", "b.aur", "--format", "dot", cwd=pair).stdout
    assert dot.startswith("digraph diff {") and 'fillcolor="#f7c5c5"' in dot


def test_cli_exit_statuses(pair: Path) -> None:
    same = run_cli("diff", "a.aur", "a.aur", "--exit-code", cwd=pair)
    assert same.returncode == 0 and "(unchanged)" in same.stdout
    assert run_cli("diff", "a.aur", "b.aur", "--exit-code", cwd=pair).returncode == 1
    assert run_cli("diff", "a.aur", cwd=pair).returncode == 2
    (pair / "bad.aur").write_text(BEFORE.replace("dense(10)", "dense(10"))
    assert run_cli("diff", "a.aur", "bad.aur", cwd=pair).returncode == 1
    assert run_cli("diff", "a.aur", "missing.aur", cwd=pair).returncode == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_revisions(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (tmp_path / "net.aur").write_text(BEFORE)
    git("add", "net.aur")
    git("commit", "-q", "-m", "one")
    (tmp_path / "net.aur").write_text(AFTER)
    git("commit", "-q", "-am", "two")
    both = run_cli("diff", "net.aur", "--rev", "HEAD~1", "--rev", "HEAD", "--format", "json",
                   cwd=tmp_path)  # fmt: skip
    assert both.returncode == 0, both.stderr
    payload = json.loads(both.stdout)
    assert payload["before"] == "net.aur@HEAD~1" and payload["changed"] is True
    working = run_cli("diff", "net.aur", "--rev", "HEAD", "--exit-code", cwd=tmp_path)
    assert working.returncode == 0, working.stderr
    missing = run_cli("diff", "net.aur", "--rev", "nope", cwd=tmp_path)
    assert missing.returncode == 1 and "git show" in missing.stderr


# the same network written inline and grouped into a block:
# `--flat` compares the layers themselves, the default the block calls
INLINE = """\
model Net:
    input_shape = (8, 6, 6)
    def forward(x):
        h = x -> conv2d(8, kernel=3, padding=1) as stage.conv -> batchnorm() as stage.bn
        x = add(h, x).relu
        return x -> flatten() -> dense(4) as head
"""

GROUPED = """\
model Unit(width):
    def forward(x):
        h = x -> conv2d(width, kernel=3, padding=1) as conv -> batchnorm() as bn
        return add(h, x).relu

model Net:
    input_shape = (8, 6, 6)
    def forward(x):
        x -> Unit(8) as stage -> flatten() -> dense(4) as head
"""


def test_flat_compares_the_layers_whatever_blocks_group_them(tmp_path: Path) -> None:
    inline, grouped = front(INLINE).graphs, front(GROUPED).graphs
    [blocks] = diff_programs(inline, grouped)
    assert blocks.status == "changed"  # a block call where there were layers
    [flat] = diff_programs(inline, grouped, flat=True)
    assert flat.status == "unchanged", [(d.node, d.changes) for d in flat.layers]
    assert {"stage.conv", "stage.bn", "head"} <= {d.node for d in flat.layers}
    # a wider convolution, a renamed layer and a missing activation are each found
    for edit, node, status in (
        ("kernel=3, padding=1) as stage.conv", "stage.conv", "changed"),
        ("as stage.bn", "stage.norm", "removed"),  # the edited program is the "before"
        ("add(h, x).relu", "relu (8, 6, 6)", "added"),
    ):
        changed = INLINE.replace(
            edit,
            {
                "stage.conv": "kernel=3, padding=1, bias=false) as stage.conv",
                "stage.norm": "as stage.norm",
                "relu (8, 6, 6)": "add(h, x)",
            }[node],
        )
        [model] = diff_programs(front(changed).graphs, grouped, flat=True)
        found = {d.node: d.status for d in model.layers if d.status != "unchanged"}
        assert model.status == "changed" and found.get(node) == status, found
    (tmp_path / "a.aur").write_text(INLINE)
    (tmp_path / "b.aur").write_text(GROUPED)
    assert run_cli("diff", "a.aur", "b.aur", "--exit-code", cwd=tmp_path).returncode == 1
    same = run_cli("diff", "a.aur", "b.aur", "--flat", "--exit-code", cwd=tmp_path)
    assert same.returncode == 0 and "(unchanged)" in same.stdout, same.stdout


def test_flat_reads_a_pool_stride_left_out_as_its_kernel() -> None:
    """The catalog says a pool's ``stride=None`` is its kernel (``Param.none_means``)."""
    pooled = INLINE.replace("-> flatten() -> dense(4)", "-> maxpool(2) -> flatten() -> dense(4)")
    assert lookup("maxpool").effective({"kernel": 2, "stride": None}) == {"kernel": 2, "stride": 2}
    for written, status in (("maxpool(2, stride=2)", "unchanged"), ("maxpool(2, 1)", "changed")):
        [model] = diff_programs(
            front(pooled).graphs, front(pooled.replace("maxpool(2)", written)).graphs, flat=True
        )
        assert model.status == status, [(d.node, d.changes) for d in model.layers]


def test_flat_leaves_out_what_computes_nothing() -> None:
    """A reshape to its input's shape and ``broadcast=true`` between equal shapes compute
    nothing (the generated file writes the first, an import drops it): ``--flat`` leaves
    them out. A reshape that changes the shape, or a broadcast that stretches, still counts."""
    noop = INLINE.replace(
        "x = add(h, x).relu", "x = add(reshape(h, 8, 6, 6), x, broadcast=true).relu"
    )
    [model] = diff_programs(front(INLINE).graphs, front(noop).graphs, flat=True)
    assert model.status == "unchanged", [(d.node, d.changes) for d in model.layers]
    [blocks] = diff_programs(front(INLINE).graphs, front(noop).graphs)
    assert blocks.status == "changed"  # the plain diff still shows the steps as written
    reshaped = INLINE.replace("flatten() -> dense(4)", "reshape(6, 6, 8) -> flatten() -> dense(4)")
    [model] = diff_programs(front(INLINE).graphs, front(reshaped).graphs, flat=True)
    assert [d.node for d in model.layers if d.status == "added"] == ["reshape (6, 6, 8)"]


SCORES = """\
model Scores:
    input_shape = (8,)
    def forward(x):
        a = dense(x, 4) as a
        b = dense(x, 4) as b
        return cross_batch_matmul(a, b)
"""


def test_work_that_grows_with_the_batch_is_diffed_as_a_formula(tmp_path: Path) -> None:
    """cross_batch_matmul's MACs and output shape hold the batch (CLIP's logits): every
    format renders them as the formula, as ``aurane profile`` does (a TypeError before)."""
    (tmp_path / "a.aur").write_text(SCORES)
    (tmp_path / "b.aur").write_text(SCORES.replace("4)", "6)"))
    same = run_cli("diff", "a.aur", "a.aur", cwd=tmp_path)
    assert same.returncode == 0 and "MACs: 4*batch + 64 -> 4*batch + 64 (0)" in same.stdout, (
        same.stdout + same.stderr
    )
    text = run_cli("diff", "a.aur", "b.aur", cwd=tmp_path)
    assert text.returncode == 0 and "4*batch + 64 -> 6*batch + 96" in text.stdout, text.stderr
    payload = json.loads(run_cli("diff", "a.aur", "b.aur", "--format", "json", cwd=tmp_path).stdout)
    [model] = payload["models"]
    assert model["after"]["macs"] == "6*batch + 96" and model["delta"]["macs"] == "2*batch + 32"
    scores = next(layer for layer in model["layers"] if layer["op"] == "cross_batch_matmul")
    assert scores["after"]["output_shape"] == ["batch"]
    assert run_cli("diff", "a.aur", "b.aur", "--format", "mermaid", cwd=tmp_path).returncode == 0


def test_flat_reads_permute_with_or_without_the_batch_axis_alike() -> None:
    """``permute(h, 0, 2, 1)`` names the batch axis that ``permute(h, 2, 1)`` leaves out
    (the catalog's ``OpSpec.canonical``); another order is still a change."""
    program = "model Net:\n    input_shape = (4, 6)\n    def forward(x):\n" + (
        "        return x -> dense(6) as proj -> permute(0, 2, 1)\n"
    )
    assert lookup("permute").effective({"dims": (0, 2, 1)}) == {"dims": (2, 1)}
    for written, status in (("permute(2, 1)", "unchanged"), ("permute(1, 2)", "changed")):
        [model] = diff_programs(
            front(program).graphs,
            front(program.replace("permute(0, 2, 1)", written)).graphs,
            flat=True,
        )
        assert model.status == status, [(d.node, d.changes) for d in model.layers]
