"""1,000 hostile programs (issue 21; K-SRC, K-GEN, K-ERR, K-LIM), judged in this process.

Each is refused with located errors, or compiles to Python that parses and passes the AST
audit against its benign program; never an internal error, never `compile` refusing what
`check` accepted, never accepted when its hostile part must be refused. The generator and
the judge are `tests/fuzz/hostile.py`; a bigger campaign is in docs/fuzzing.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from tests.fuzz import hostile
from tests.helpers import errors

pytest.importorskip("torch")

PROGRAMS = 1000
CHUNKS = 4


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_hostile_programs_find_nothing(chunk: int) -> None:
    size = PROGRAMS // CHUNKS
    counts, findings = hostile.run(range(chunk * size, (chunk + 1) * size))
    assert not findings, "\n".join(f"seed {p.seed} {p.note!a}: {d}" for p, d in findings)
    assert sum(counts.values()) == size


def test_the_generator_covers_every_kind_both_ways() -> None:
    """Not a degenerate campaign: every kind drawn, refusals expected and acceptances left."""
    programs = [hostile.generate(seed) for seed in range(PROGRAMS)]
    kinds = Counter(p.kind for p in programs)
    assert set(kinds) == set(hostile.KINDS) and min(kinds.values()) >= PROGRAMS // 7
    must = Counter(p.kind for p in programs if p.must_refuse)
    assert must["from"] == kinds["from"]  # every drawn source is a refused one
    for kind in ("numbers", "repeats", "budgets"):
        assert 0 < must[kind] < kinds[kind], kind
    assert len({p.source for p in programs}) > 0.8 * PROGRAMS
    assert hostile.generate(123).source == hostile.generate(123).source  # deterministic


def test_the_judge_is_not_vacuous() -> None:
    """A benign program marked must-refuse is a finding; the benign one is accepted."""
    benign = hostile.Program(0, "numbers", hostile.Parts(), "benign")
    assert hostile.judge(benign) == ("accepted", "")
    verdict, detail = hostile.judge(replace(benign, must_refuse=True))
    assert verdict == "bug" and "must be refused" in detail
    leaky = replace(benign, parts=replace(benign.parts, use=("use os",)))  # not in `uses`
    verdict, detail = hostile.judge(leaky)
    assert verdict == "bug" and "import os" in detail


@pytest.mark.parametrize("line", ["use os as model", "use mylib as train_net", "use os as seed"])
def test_found_an_alias_named_like_a_training_function_or_local(line: str) -> None:
    """Found by this campaign: `def train_net` replaced the module imported as train_net,
    and the job's parameter `model` hid the one imported as model (S019 now)."""
    source = line + "\n" + hostile.Parts().render()
    found = errors(source)
    assert [d.code for d in found] == ["S019"]
    assert found[0].span is not None and found[0].span.line == 1
    model_only = line + "\nmodel M:\n    input_shape = (4,)\n    def forward(x):\n"
    assert not errors(model_only + "        x -> dense(2)\n")  # no training code: no clash


@pytest.mark.parametrize("header", ["Wide(w)", "Wide(w=4)", "Wide(rt)"])
def test_found_a_parameterised_block_with_its_own_input_shape(header: str) -> None:
    """Found by the campaign: the block was lowered on its own with its parameters unbound,
    and `check` exited 123 (KeyError 'features'). It is S040 at input_shape now."""
    block = f"model {header}:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(w)\n"
    source = block.replace("dense(w)", "dense(rt)") if "rt" in header else block
    source += "model Net:\n    input_shape = (8,)\n    def forward(x):\n        x -> Wide(8)\n"
    found = errors(source)
    assert [d.code for d in found] == ["S040"]
    assert found[0].span is not None and (found[0].span.line, found[0].span.column) == (2, 5)
    assert not errors(source.replace("    input_shape = (8,)\n", "", 1))
