"""K-DIFF: random programs over the whole catalog, the compiler's claims against torch.

A CI-sized differential run (fixed seeds) plus the runner's own behaviour: a wrong shape
rule, a refusal of what torch runs and an internal error are each reported as bugs, and
sizes past int64 are refused at their span. The long campaign is
``python -m aurane.tools.fuzz --programs 20000 --seed 1`` (README, Benchmarks and campaigns).
"""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest

from aurane import ops, records
from aurane.codes import CODES
from aurane.ops.spec import InferContext, OpError, TensorType
from aurane.stages import CompilationError
from aurane.tools import differential as diff
from aurane.tools.fuzz import Program, Step, generate
from aurane.verify import load_generated
from tests.conftest import REPO
from tests.ops.twins import TWINS

pytest.importorskip("torch")

# AURANE_DIFF_PROGRAMS=2000 scales the CI run (README "Long campaigns and benchmarks")
CI_SEEDS = range(7_000, 7_000 + int(os.environ.get("AURANE_DIFF_PROGRAMS", "120")))


def test_every_catalog_operation_is_generated() -> None:
    seen: Counter[str] = Counter()
    for seed in range(300):
        seen.update(generate(seed).ops)
    # cross_batch_matmul's output axis is the batch size: the random programs' per-sample
    # shapes are numbers, so the drawer (which knows no batch) refuses it
    missing = set(ops.CATALOG) - set(seen) - {"cross_batch_matmul"}
    assert not missing, f"never generated in 300 programs: {sorted(missing)}"


def test_generation_is_deterministic_and_programs_vary() -> None:
    assert generate(11).text == generate(11).text
    texts = {generate(seed).text for seed in range(40)}
    assert len(texts) == 40
    kinds = [generate(seed) for seed in range(200)]
    assert any(p.culprit is not None for p in kinds)  # rejections are exercised
    assert sum(p.expect_valid for p in kinds) > 120  # most programs are meant to pass
    text = "".join(p.text for p in kinds)
    for construct in (" -> ", "repeat(", "model Blk", " as layer", ".residual", ", h"):
        assert construct in text, construct
    for container in (" as stack.0", " as layers.l", ") as seq", " as enc"):
        assert container in text, container
    assert {"int64", "int32", "float32", "float64"} <= set(re.findall(r"input_dtype = (\w+)", text))


# what a block parameter stands for in the call it is written into
POSITIONS = {
    "axes": {"dim", "dim0", "dim1", "dims", "axes"},
    "sizes": {"features", "channels", "hidden", "shape", "sizes", "size"},
    "counts": {"chunks", "groups", "heads", "num_layers"},
    "indices": {"index"},
    "bounds": {"min_val", "max_val"},
    "constants": {"constant", "value"},
    "kernels": {"kernel", "stride", "padding", "dilation"},
    "flags and modes": {"bias", "affine", "keepdim", "mode"},
}


def test_block_parameters_reach_every_argument_position() -> None:
    """Issue 22: parameters as axes, sizes, counts, indices, bounds and constants, written
    with arithmetic (// and parentheses), model constants and min/max, in nested blocks."""
    written: set[str] = set()
    text = ""
    for seed in range(1500):
        program = generate(seed)
        text += program.text
        for step in program.steps:
            written.update(step.written)
    for position, names in POSITIONS.items():
        assert written & names, position
    for form in ("// 2", "(p", "max(1, p", "min(p", "c0 = ", "-p", "p0 / 2", "p0 + 1"):
        assert form in text, form
    definitions = [part for part in text.split("model ") if part.startswith("Blk")]
    nested = [d for d in definitions if re.search(r"\bBlk\d+\b", d.split("\n", 1)[1])]
    assert nested, "no block calls another"


def test_generated_blocks_are_called_again_with_other_values() -> None:
    """One generated class serves two calls of a block with different float arguments."""
    calls = 0
    for seed in range(600):
        found = re.findall(r"-> (Blk\d+)\((.*)\)\n", generate(seed).text)
        by_block: dict[str, set[str]] = {}
        for block, args in found:
            by_block.setdefault(block, set()).add(args)
        calls += sum(len(args) > 1 for args in by_block.values())
    assert calls > 0


def test_ci_differential_run_finds_no_bug() -> None:
    summary = diff.campaign(CI_SEEDS, TWINS)
    assert summary.programs == len(CI_SEEDS)
    assert summary.accepted > len(CI_SEEDS) // 2
    assert summary.rejected > 0
    assert summary.bugs == 0, summary.text()
    assert not summary.generator_errors, summary.generator_errors
    assert summary.verdicts["unmapped"] == 0, summary.text()


# -- the runner reports what it must ----------------------------------------------------------

NET = """\
model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> conv2d(4, kernel=3) -> flatten() -> dense(5)
"""


def _program(text: str, steps: list[Step] | None = None) -> Program:
    program = Program(seed=0, text=text, steps=steps or [], models=["Net"])
    for step in program.steps:
        assert step.line
    return program


def test_a_wrong_shape_rule_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    right = ops.CATALOG["conv2d"].infer

    def wrong(ctx: InferContext) -> TensorType:
        out = right(ctx)
        return TensorType((out.shape[0] + 1, *out.shape[1:]), out.dtype)

    spec = records.replace(ops.CATALOG["conv2d"], infer=wrong)
    monkeypatch.setitem(ops.CATALOG, "conv2d", spec)
    outcome = diff.run_program(_program(NET))
    assert outcome.verdict == "bug" and outcome.is_bug
    assert "train batch 2: compiler bug: 'conv2d1' has shape (2, 4, 6, 6)" in outcome.detail


def test_a_rejection_torch_runs_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(ctx: InferContext) -> TensorType:
        raise OpError("T002", "dense refuses everything today")

    monkeypatch.setitem(ops.CATALOG, "dense", records.replace(ops.CATALOG["dense"], infer=refuse))
    step = Step("dense", {"features": 5}, ((192,),), "float32", line=4)
    outcome = diff.run_program(_program(NET, [step]), TWINS)
    assert outcome.verdict == "rejected-bug", outcome
    assert outcome.op == "dense" and outcome.line == 4


def test_rejections_torch_agrees_with_and_deliberate_ones() -> None:
    head = "model Net:\n    input_shape = (3, 8, 8)\n    def forward(x):\n"
    conv1d = Step("conv1d", {"channels": 2}, ((3, 8, 8),), "float32", line=4)
    outcome = diff.run_program(_program(head + "        x -> conv1d(2)\n", [conv1d]), TWINS)
    assert outcome.verdict == "agreed", outcome
    squeeze = Step("squeeze", {"dim": 1}, ((3, 8, 8),), "float32", line=4)
    outcome = diff.run_program(_program(head + "        x -> squeeze(1)\n", [squeeze]), TWINS)
    assert outcome.verdict == "deliberate", outcome
    assert diff.deliberate(outcome.code or "", "squeeze", outcome.detail) is not None


def test_a_precision_mismatch_inside_a_block_of_several_inputs_is_deliberate() -> None:
    """The block's statements map to no step (seed 77000020 of a campaign was unmapped): a
    rule for any operation still classifies the refusal."""
    text = (
        "model Pair:\n    def forward(a, b):\n        c = dense(b, 2)\n        return a, c\n\n"
        "model Net:\n    input_shape = {x: (2,), y: (1,)}\n"
        "    input_dtype = {x: float32, y: float32}\n    def forward(x, y):\n"
        '        x -> to("float16")\n        h2, h3 = Pair(x, y)\n        return h2, h3\n'
    )
    outcome = diff.run_program(_program(text, []), TWINS)
    assert (outcome.verdict, outcome.code, outcome.line) == ("deliberate", "T003", 3), outcome
    # bfloat16 is a precision of its own too (seed 78000327 was a rejected-bug)
    assert diff.deliberate("T003", "dense", "dense has float32 parameters but a bfloat16 input")


@pytest.mark.parametrize(
    "shape_or_call",
    [
        ("(4294967296, 4294967296, 4294967296)", "flatten() -> dense(2)"),
        ("(8,)", "dense(18446744073709551616)"),
        ("(8,)", "dense(4611686018427387904)"),  # 2**62 * 9 parameters: past int64
        ("(3, 8, 8)", "conv2d(9223372036854775808)"),
    ],
)
def test_sizes_past_int64_are_refused_at_their_span(shape_or_call: tuple[str, str]) -> None:
    shape, call = shape_or_call
    text = f"model Net:\n    input_shape = {shape}\n    def forward(x):\n        x -> {call}\n"
    with pytest.raises(CompilationError) as caught:
        load_generated(text, "huge.aur")
    first = next(d for d in caught.value.diagnostics if d.is_error)
    assert first.span is not None and first.span.line in (2, 4), first


def test_edge_programs_are_judged() -> None:
    edges = [p for p in (generate(seed, edge=1.0) for seed in range(12)) if p.edge]
    assert edges
    for program in edges:
        outcome = diff.run_program(program, TWINS)
        assert not outcome.is_bug, (program.text, outcome)


def test_deliberate_rejections_are_documented() -> None:
    doc = (REPO / "docs" / "fuzzing.md").read_text(encoding="utf-8")
    assert diff.deliberate_table() in doc, "docs/fuzzing.md: copy diff.deliberate_table()"
    for entry in diff.DELIBERATE:
        assert entry.code in CODES


def test_cli_shows_one_program(capsys: pytest.CaptureFixture[str]) -> None:
    from aurane.tools.differential import main

    assert main(["--show", "3"]) == 0
    out = capsys.readouterr().out
    assert "model Net:" in out and "'verdict'" in out


def test_the_documented_campaign_command_starts() -> None:
    """``python -m aurane.tools.fuzz`` (a package: its ``__main__`` runs the differential
    runner, which the generator itself never imports)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "aurane.tools.fuzz", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m aurane.tools.fuzz")


def test_some_programs_take_two_inputs_and_return_two_outputs() -> None:
    """Issue 23: about one program in seven has two inputs (a dict input_shape), two
    outputs (``return h, h2``), sometimes through a block with two of each; the programs of
    one input are the same as before for their seeds (their generator is untouched)."""
    programs = [generate(seed) for seed in range(200)]
    several = [p for p in programs if "def forward(x, y" in p.text]
    assert 10 <= len(several) <= 60
    assert any("= Pair(" in p.text for p in several)
    assert any("def forward(x, y=" in p.text for p in several)
    assert all(p.text.count("return ") >= 1 for p in several)
    for program in several[:6]:
        if program.expect_valid:
            assert diff.run_program(program, TWINS).verdict in ("ok", "batch-dependent")
