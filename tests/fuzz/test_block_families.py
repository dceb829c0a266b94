"""The ``block family`` construct (``aurane.tools.fuzz.families``): one block called two or
three times with different arguments and input sizes, so the one-class-per-block campaigns
(issue 24 item 3) compare rolled classes over calls that differ."""

from __future__ import annotations

import random
import re
import textwrap

import pytest

from aurane.backends.torch import TorchCodeGenerator
from aurane.compile import prepare_program
from aurane.tools import differential as diff
from aurane.tools.fuzz import CONSTRUCTS, generate
from aurane.tools.fuzz.generator import FAMILIES
from aurane.tools.roll_check import block_call_sets, check_source
from tests.ops.twins import TWINS

pytest.importorskip("torch")


def _family_seeds(count: int) -> list[int]:
    return [
        seed
        for seed in range(400)
        if "block family" in generate(seed).features and generate(seed).expect_valid
    ][:count]


def test_block_families_are_drawn_with_their_forms() -> None:
    assert "block family" in {c.name for c in CONSTRUCTS}
    seen: set[str] = set()
    for seed in range(400):
        seen |= generate(seed).features
    forms = ("family count loop", "family rows (ops)", "family rows (widths)", "family flag",
             "family residual", "family growing width", "family inner block",
             "family input sizes differ", "family channel axis", *NEW_FORMS)  # fmt: skip
    assert not [f for f in forms if f not in seen], sorted(f for f in seen if "family" in f)


# this stop's parts (``families.NEW_PIECES``), drawn past ``generator.FAMILIES``
NEW_FORMS = ("family block parameter", "family block rows", "family module items",
             "family untaken count", "family untaken flag", "family untaken list",
             "family running count", "family if in a loop")  # fmt: skip


def test_the_families_of_this_stop_leave_the_earlier_seeds_as_they_were() -> None:
    """A family of this stop's parts is drawn where no family was (past ``FAMILIES``, a
    share of its own), so the seeds below it draw their families as before: none holds
    a new part."""
    for seed in range(200):
        program = generate(seed)
        roll = random.Random(f"family-{seed}").random()
        if roll < FAMILIES:
            assert not program.features & set(NEW_FORMS), (seed, program.features)


def test_the_new_parts_roll_to_one_class_and_check_clean() -> None:
    """The first accepted program of each new part (seeds 0-399): each family block is
    one class (no ``Fam0_2``), called at 2+ argument sets, and ``roll_check`` rebuilding
    the rolled classes at other arguments finds nothing."""
    firsts: dict[str, int] = {}
    for seed in range(400):
        program = generate(seed)
        for form in NEW_FORMS:
            if form in program.features and program.expect_valid:
                firsts.setdefault(form, seed)
    assert sorted(firsts) == sorted(NEW_FORMS), firsts
    for form, seed in firsts.items():
        program = generate(seed)
        ir, graphs, _ = prepare_program(program.text, filename=f"seed{seed}.aur")
        sets = block_call_sets(graphs)
        families = [name for name in sets if name.startswith("Fam")]
        assert families and all(len(sets[name]) > 1 for name in families), (form, seed)
        code = TorchCodeGenerator(ir, graphs).generate()
        assert not re.search(r"^class Fam\d+_2\(", code, re.M), (form, seed, code)
        assert check_source(program.text) == [], (form, seed)


def test_a_family_calls_its_block_at_several_argument_sets_and_runs_clean() -> None:
    """A few accepted programs: each family block is called at 2+ distinct arguments and
    input shapes (read from the IR's block calls), and the program runs against its IR."""
    seeds = _family_seeds(4)
    assert len(seeds) == 4
    for seed in seeds:
        program = generate(seed)
        _, graphs, _ = prepare_program(program.text, filename=f"seed{seed}.aur")
        sets = block_call_sets(graphs)
        families = [name for name in sets if name.startswith("Fam")]
        assert families, program.text
        assert all(len(sets[name]) > 1 for name in families), (program.text, sets)
        outcome = diff.run_program(program, TWINS)
        assert outcome.verdict in ("ok", "batch-dependent"), (program.text, outcome)


def test_an_operation_parameter_after_a_loop_no_call_runs_compiles() -> None:
    """Two operation-valued parameters, one applied in a loop that a call runs no time and
    one after it: the block roller crashed (KeyError: 'b' in
    ``rolled_forward.with_applied``: ``b``, applied at every call, is taken as a module
    class, not among the applied functions); it rolls (the twin:
    ``tests/backends/torch/test_rolled_family_findings.py``)."""
    source = textwrap.dedent(
        """\
        model Fam(n, a = relu, b = relu):
            def forward(x):
                for i in range(n):
                    x -> a
                x -> b
                return x

        model Net:
            input_shape = (3,)
            def forward(x):
                x -> Fam(1) -> Fam(0)
                return x
        """
    )
    program, graphs, _ = prepare_program(source, filename="family.aur")
    assert "class Fam(" in TorchCodeGenerator(program, graphs).generate()
