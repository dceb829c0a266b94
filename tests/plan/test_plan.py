"""``aurane.analysis.plan`` from the IR: each strategy's rule, the largest batch, the
dominant layers, mixed precision, GAN jobs and the JSON schema (no torch needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aurane.analysis.plan import (
    STRATEGIES,
    JobPlan,
    format_bytes,
    parse_size,
    plan_job,
    plan_jobs,
    plan_json,
)
from aurane.analysis.saved import step_memory
from aurane.frontend import FrontEnd, run_front_end
from aurane.ir.graph import Graph

ZOO = Path(__file__).resolve().parents[2] / "examples" / "zoo"
GIB = 2**30


def zoo(program: str, **constants: str) -> FrontEnd:
    text = (ZOO / f"{program}.aur").read_text(encoding="utf-8")
    for name, value in constants.items():
        lines = [
            f"{name} = {value}" if line.startswith(f"{name} = ") else line
            for line in text.splitlines()
        ]
        text = "\n".join(lines) + "\n"
    front = run_front_end(text, f"{program}.aur")
    assert front.ok and front.resolved is not None, front.diagnostics
    return front


def plan_of(front: FrontEnd, **kwargs: object) -> JobPlan:
    assert front.resolved is not None
    return plan_job(plan_jobs(front.resolved)[0], front.graphs, **kwargs)  # type: ignore[arg-type]


def rows(plan: JobPlan) -> dict[str, object]:
    return {row.strategy.name: row for row in plan.strategies}


def units(graph: Graph) -> tuple[int, int]:
    """(parameters outside blocks, the largest block copy's parameters)."""
    root = sum(n.parameters for n in graph.nodes if n.subgraph is None)
    copies = [n.parameters // n.repeat for n in graph.nodes if n.subgraph is not None]
    return root, max(copies, default=0)


def test_gpt2_state_and_every_strategy_rule() -> None:
    front = zoo("gpt2")
    plan = plan_of(front, devices=8)
    state = plan.state
    assert state.parameters == 124_439_808  # nanoGPT's count, the tied head once
    assert state.parameter_bytes == state.gradient_bytes == 4 * state.parameters
    assert state.optimizer_bytes == 2 * state.parameter_bytes  # adamw: two moments
    assert state.step_counter_bytes == 4 * state.parameter_tensors
    by = rows(plan)
    single, ddp, fsdp = by["single"], by["ddp"], by["fsdp"]
    assert (single.parameter_bytes, single.gradient_bytes, single.optimizer_bytes) == (
        state.parameter_bytes,
        state.gradient_bytes,
        state.optimizer_bytes,
    )
    assert single.activation_bytes == plan.activation_bytes
    # DDP: a full replica plus its gradient buckets, one more copy of the gradients, always
    assert ddp.gradient_bytes == 2 * state.gradient_bytes
    assert ddp.peak_bytes - single.peak_bytes == state.gradient_bytes
    # FSDP: a shard of everything plus the unsharded root and largest block
    root, block = units(front.graphs["GPT"])
    working = 4 * (root + block)
    assert fsdp.parameter_bytes == -(-state.parameter_bytes // 8) + working
    assert fsdp.gradient_bytes == -(-state.gradient_bytes // 8) + working
    assert fsdp.optimizer_bytes == -(-state.optimizer_bytes // 8)
    offload = by["fsdp+offload"]
    assert (offload.parameter_bytes, offload.optimizer_bytes) == (working, 0)
    assert offload.host_bytes == sum(
        -(-b // 8) for b in (state.parameter_bytes, state.gradient_bytes, state.optimizer_bytes)
    )
    checkpoint = by["fsdp+checkpoint"]
    assert checkpoint.activation_bytes == plan.checkpointed_bytes < plan.activation_bytes
    assert plan.units == 13  # the Positions block and 12 transformer blocks
    mixed = by["fsdp+mixed"]
    assert 0.45 * plan.activation_bytes < mixed.activation_bytes < 0.55 * plan.activation_bytes
    for row in plan.strategies:
        assert row.peak_bytes >= row.steady_bytes - row.gradient_bytes
        assert row.peak_bytes == max(row.phases.values())
        assert row.temporary_bytes == max(0, row.peak_bytes - row.phases["forward"])


def test_fsdp_on_one_device_computes_on_its_shard() -> None:
    by = rows(plan_of(zoo("resnet50")))
    single, fsdp, mixed = by["single"], by["fsdp"], by["fsdp+mixed"]
    assert fsdp.parameter_bytes == single.parameter_bytes  # type: ignore[attr-defined]
    assert fsdp.peak_bytes == single.peak_bytes  # type: ignore[attr-defined]
    assert mixed.parameter_bytes > single.parameter_bytes  # type: ignore[attr-defined]


def test_largest_batch_takes_a_few_walks_and_plain_ints() -> None:
    """Regression: sizes computed from constants carry their expression's text; left in,
    a 1 TiB search on ResNet-50 built ever longer strings for minutes. Now the bytes are
    plain ints and each candidate moment of the peak is a line in the batch: a handful of
    walks find the boundary."""
    front = zoo("resnet50")
    plan = plan_of(front, memory_limit=2**40)
    # per dtype policy batches 1, 2, 3, and per strategy its answer and one more
    assert plan.walks <= 2 * 3 + 2 * len(STRATEGIES)
    walk = step_memory(front.graphs["ResNet50"], 3, "cross_entropy")
    assert all(type(s.bytes) is int for s in walk.storages)
    largest = plan.largest_batch["single"]
    assert largest is not None and largest > 10_000


def test_every_strategy_is_generated_and_names_its_train_fields() -> None:
    from aurane.semantics.config import STRATEGIES as FIELD_VALUES
    from aurane.semantics.config import TRAIN_TABLE

    assert all(s.generated for s in STRATEGIES)
    # each FSDP row names the train fields that generate it, and they exist (issue 27)
    assert {s.name.split("+")[0] for s in STRATEGIES} - {"single"} == set(FIELD_VALUES)
    for strategy, field in (
        ("fsdp+checkpoint", "activation_checkpointing"),
        ("fsdp+offload", "cpu_offload"),
        ("fsdp+mixed", "fsdp_precision"),
    ):
        summary = next(s.summary for s in STRATEGIES if s.name == strategy)
        assert field in summary and field in TRAIN_TABLE, strategy


def test_largest_batch_is_the_boundary() -> None:
    front = zoo("gpt2")
    limit = 24 * GIB
    plan = plan_of(front, memory_limit=limit)
    for row in plan.strategies:
        largest = plan.largest_batch[row.strategy.name]
        assert largest is not None and largest >= 1
        at = rows(plan_of(front, batch=largest))[row.strategy.name]
        above = rows(plan_of(front, batch=largest + 1))[row.strategy.name]
        assert at.peak_bytes <= limit < above.peak_bytes, row.strategy.name  # type: ignore[attr-defined]
    tiny = plan_of(front, memory_limit=GIB)
    assert all(value is None for value in tiny.largest_batch.values())


def test_activations_grow_with_the_batch_and_checkpointing_helps_deep_models() -> None:
    front = zoo("resnet50")
    small, large = plan_of(front, batch=2), plan_of(front, batch=4)
    assert large.activation_bytes > small.activation_bytes
    assert large.checkpointed_bytes < large.activation_bytes
    assert large.state == small.state


def test_largest_layers_name_the_blocks_that_dominate() -> None:
    plan = plan_of(zoo("gpt2"))
    assert [share.layer for share in plan.layers[:3]] == ["transformer.h", "loss", "lm_head"]
    assert plan.layers[0].bytes > plan.layers[1].bytes >= plan.layers[2].bytes


def test_mixed_precision_job_keeps_half_precision_activations_and_weight_copies() -> None:
    text = (ZOO / "gpt2.aur").read_text(encoding="utf-8")
    amp = run_front_end(
        text.replace("    epochs = 1\n", "    epochs = 1\n    mixed_precision = true\n"), "a.aur"
    )
    assert amp.ok
    fp32 = plan_of(zoo("gpt2"))
    half = plan_of(amp)
    assert half.state == fp32.state  # parameters, gradients and moments stay float32
    assert half.activation_bytes < 0.9 * fp32.activation_bytes
    graph = amp.graphs["GPT"]
    with_copies = step_memory(graph, 4, "cross_entropy", policy="autocast").activation_bytes
    assert with_copies == half.activation_bytes
    # on the CPU the generated loop runs in full precision
    assert (
        plan_of(amp, device="cpu").activation_bytes
        == plan_of(zoo("gpt2"), device="cpu").activation_bytes
    )


def test_gan_job_holds_both_models() -> None:
    front = zoo("dcgan")
    plan = plan_of(front)
    assert plan.job.kind == "train_gan"
    generator, discriminator = front.graphs["Generator"], front.graphs["Discriminator"]
    assert plan.state.parameters == generator.parameters + discriminator.parameters
    alone = step_memory(discriminator, 16, "bce").activation_bytes
    assert plan.activation_bytes > alone  # G's phase keeps G's and D's activations


def test_json_schema() -> None:
    payload = plan_json(plan_of(zoo("resnet18"), memory_limit=8 * GIB, devices=2))
    assert set(payload) >= {
        "job", "kind", "models", "dataset", "optimizers", "losses", "mixed_precision",
        "batch_size", "devices", "device", "memory_limit", "parameters", "parameter_tensors",
        "state", "activations", "largest_layers", "strategies",
    }  # fmt: skip
    assert set(payload["state"]) == {
        "parameter_bytes", "buffer_bytes", "gradient_bytes", "optimizer_bytes",
        "step_counter_bytes", "optimizer",
    }  # fmt: skip
    assert len(payload["largest_layers"]) == 3
    for row in payload["strategies"]:
        assert row["peak_bytes"] == max(row["phases"].values())
        assert row["fits"] == (row["peak_bytes"] <= 8 * GIB)
        assert isinstance(row["largest_batch"], int)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("24GiB", 24 * GIB), ("512MiB", 512 * 2**20), ("80GB", 80 * 10**9), ("1000", 1000)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["24", "24G", "lots", "0B", "-1GiB", "1.5.2GiB"])
def test_parse_size_refuses(text: str) -> None:
    if text == "24":
        assert parse_size(text) == 24  # a plain number is bytes
        return
    with pytest.raises(ValueError, match="memory size"):
        parse_size(text)


def test_format_bytes() -> None:
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * GIB // 2) == "1.50 GiB"
