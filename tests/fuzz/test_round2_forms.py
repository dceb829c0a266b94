"""Round 2's forms in the generator (``families._round2_pieces``, drawn past
``generator.ROUND_FAMILIES`` where no family was drawn before): an unnamed module under
an ``if`` on the loop's target (``if i > 0:``, ``i % 2 == 0``, ``i == n - 1``, ``i <
k``), kernel rows with ``padding=k // 2`` and even kernels changing the spatial sizes
before a step reading them, and networks used through variants with a buffer no step
reads, a loop tensor returned after a side branch, or two loops over ``i``. Where the
rollers do not write a form yet, it keeps its located fallback: the campaigns' claim is
that a rolled class is never silently wrong, not that every form rolls."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from aurane.stages import CompilationError
from aurane.tools.fuzz import generate
from aurane.tools.fuzz.generator import FAMILIES, NEW_FAMILIES, ROUND_FAMILIES

pytest.importorskip("torch")

ROUND2_FORMS = (
    "family if on the loop count",
    "if on the count (i > 0)",
    "if on the count (i % 2 == 0)",
    "if on the count (i == n - 1)",
    "if on the count (i < k)",
    "family kernel sizes",
    "kernel sizes then flatten",
    "kernel sizes then norm",
    "kernel sizes then norm axes",
    "kernel sizes then inner",
    "family network (buffer)",
    "family network (side branch)",
    "family network (two loops)",
)
FIRST = FAMILIES + NEW_FAMILIES + ROUND_FAMILIES  # where round 2's share starts


def _round2_seeds(start: int, count: int) -> list[int]:
    return [
        seed
        for seed in range(start, start + 4000)
        if random.Random(f"family-{seed}").random() >= FIRST
    ][:count]


def test_the_round2_forms_appear_and_compile() -> None:
    """Every form appears among 120 such seeds, and each program expected valid compiles
    (rolled, or one class per call with a located note)."""
    from aurane.tools.roll_check import _compiled

    seen: Counter[str] = Counter()
    for number, seed in enumerate(_round2_seeds(7_000_000, 120)):
        program = generate(seed)
        seen.update(form for form in ROUND2_FORMS if program.constructs.get(form))
        if number % 3 or not program.expect_valid:
            continue  # a third compiled: the suite's time
        try:
            _compiled(program.text, roll=True)
        except CompilationError as error:
            raise AssertionError(f"seed {seed}: {error}\n{program.text}") from error
    assert set(seen) == set(ROUND2_FORMS), seen


def test_the_earlier_seeds_draw_no_round2_form() -> None:
    """Below the share, the families are the ones drawn before (the generator's other
    draws are untouched): none holds a round 2 form."""
    for seed in range(300):
        if random.Random(f"family-{seed}").random() < FIRST:
            assert not generate(seed).features & set(ROUND2_FORMS), seed


def test_an_if_on_the_count_family_is_written_as_the_generator_says() -> None:
    """The output shape the piece computes is the compiler's: the program's calls chain
    on it, so a wrong one is a rejection (tried on the first 8 such families)."""
    from aurane.compile import prepare_program

    found = 0
    for seed in _round2_seeds(8_000_000, 200):
        program = generate(seed)
        if not program.constructs.get("family if on the loop count") or not program.expect_valid:
            continue
        prepare_program(program.text, filename=f"seed{seed}.aur")
        found += 1
        if found == 8:
            break
    assert found == 8


def test_kernel_sizes_make_the_lengths_the_compiler_infers() -> None:
    """Even kernels with ``padding=k // 2`` lengthen each spatial axis by one: the shape
    the piece computes is the compiler's (the calls chain on it)."""
    from aurane.compile import prepare_program

    found = 0
    for seed in _round2_seeds(9_000_000, 400):
        program = generate(seed)
        if not program.constructs.get("family kernel sizes") or not program.expect_valid:
            continue
        if not any("k // 2" in line for line in program.text.splitlines()):
            continue
        prepare_program(program.text, filename=f"seed{seed}.aur")
        found += 1
        if found == 6:
            break
    assert found == 6
