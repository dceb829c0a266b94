"""Round 3's forms in the generator (``families.ROUND3_PIECES``): the forms this
session's first round fixed, so the campaigns guard them: an operation parameter with a
default applied with arguments (``act = leaky_relu``, ``act(0.2)``), a default holding
operations (``rows0 = ((4, relu), (6, tanh))``), a ``zip`` loop whose item forward does
not read, templated names (``as d{i + 1}``, ``as d{2 * i + 1}``) and ``glu``/``pad``/
``pixel_shuffle`` before a norm, and a caller whose calls get inputs of different lengths
(``reshape`` in ``Net``) calling an inner block that reads its length. The shares of the earlier rounds fill every roll of the
family generator, so a generator of its own (``round3-{seed}``) appends a second family
to ``ROUND3_FAMILIES`` of the programs: the rest of their text stays what it was, and
every other seed's program is unchanged."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from aurane.stages import CompilationError
from aurane.tools.fuzz import generate, generator
from aurane.tools.fuzz.generator import ROUND3_FAMILIES

pytest.importorskip("torch")

ROUND3_FORMS = (
    "family operation default applied",
    "family default holding operations",
    "family zip item unread",
    "family templated names",
    "family glu before a norm",
    "family pad before a norm",
    "family pixel_shuffle before a norm",
    "family lengths through a reshape",
)


def _round3_seeds(start: int, count: int) -> list[int]:
    return [
        seed
        for seed in range(start, start + 4000)
        if random.Random(f"round3-{seed}").random() < ROUND3_FAMILIES
    ][:count]


def test_the_round3_forms_appear_and_compile() -> None:
    """Every form appears among 300 such seeds, and the programs expected valid compile
    (a third of them: the suite's time)."""
    from aurane.tools.roll_check import _compiled

    seen: Counter[str] = Counter()
    for number, seed in enumerate(_round3_seeds(7_000_000, 300)):
        program = generate(seed)
        seen.update(form for form in ROUND3_FORMS if program.constructs.get(form))
        if number % 3 or not program.expect_valid or program.edge is not None:
            continue
        try:
            _compiled(program.text, roll=True)
        except CompilationError as error:
            raise AssertionError(f"seed {seed}: {error}\n{program.text}") from error
    assert set(seen) == set(ROUND3_FORMS), seen


def test_the_other_seeds_stay_what_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the share a program is the one drawn without round 3; inside it, that
    program's lines, all but its ``return`` (and the ``identity`` a forward of no step
    wrote), come first and in order."""
    seeds = range(300)
    with_round3 = {seed: generate(seed).text for seed in seeds}
    monkeypatch.setattr(generator, "ROUND3_FAMILIES", 0.0)
    for seed in seeds:
        before = generate(seed).text
        if random.Random(f"round3-{seed}").random() >= ROUND3_FAMILIES:
            assert with_round3[seed] == before, seed
            continue
        lines = iter(with_round3[seed].splitlines())
        # a forward of no step wrote ``x -> identity()``, which the family replaces
        kept = [
            line
            for line in before.splitlines()
            if not line.strip().startswith("return") and line.strip() != "x -> identity()"
        ]
        assert all(line in lines for line in kept), seed


def test_a_round3_family_is_written_as_the_generator_says() -> None:
    """The output shape each form computes is the compiler's: the calls chain on it, so
    a wrong one is a rejection (the first program of each form)."""
    from aurane.compile import prepare_program

    left = set(ROUND3_FORMS)
    for seed in _round3_seeds(8_000_000, 400):
        program = generate(seed)
        forms = {form for form in left if program.constructs.get(form)}
        if not forms or not program.expect_valid or program.edge is not None:
            continue
        prepare_program(program.text, filename=f"seed{seed}.aur")
        left -= forms
        if not left:
            break
    assert not left, left
