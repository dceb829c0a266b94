"""Round 1's rolled forms in the generator (``families.ROUND_PIECES``), and the bugs the
campaigns found with them (each program embedded, as the seeds' programs move whenever a
construct is added).

The forms: a constant table a parameter indexes (``dense(sizes[k])``), a norm's ``axes``
and a buffer's ``init`` a parameter gives, a loop in an ``if``'s branch with an unnamed
module of its operation after the ``if``, a tensor the loop binds last returned, an inner
block called once in a rolled loop; the calls disagree on the parameter, so the roller
has to roll them.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from aurane.stages import CompilationError
from aurane.tools.fuzz import generate
from aurane.tools.fuzz.generator import FAMILIES, NEW_FAMILIES

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, block_class, build, twin  # noqa: E402

ROUND_FORMS = (
    "family table index",
    "family norm axes",
    "family buffer init",
    "family loop in an if",
    "family returned loop tensor",
    "family inner block once",
    "family network variants",
)


def _round_seeds(start: int, count: int) -> list[int]:
    """Seeds whose family draws one of round 1's forms (past the other families' shares)."""
    first = FAMILIES + NEW_FAMILIES
    return [
        seed
        for seed in range(start, start + 400)
        if random.Random(f"family-{seed}").random() >= first
    ][:count]


def test_the_round_forms_appear_and_compile() -> None:
    """Every form appears among 60 such seeds, and each program expected valid compiles."""
    from aurane.tools.roll_check import _compiled

    seen: Counter[str] = Counter()
    for seed in _round_seeds(5_000_000, 60):
        program = generate(seed)
        for feature, count in program.constructs.items():
            seen.update({form: count for form in ROUND_FORMS if feature.startswith(form)})
        if not program.expect_valid or not any(f in program.constructs for f in ROUND_FORMS):
            continue
        try:
            _compiled(program.text, roll=True)
        except CompilationError as error:
            # another construct's call the catalog refuses is no finding here; one in
            # the family's block is
            lines = program.text.split("\n")
            line = error.diagnostics[0].span.line if error.diagnostics[0].span else 0
            block = next(t for t in reversed(lines[:line]) if t.startswith("model "))
            assert not block.startswith("model Fam"), f"seed {seed}: {error}\n{program.text}"
    assert set(seen) == set(ROUND_FORMS), seen


def test_a_table_index_family_is_written_as_the_generator_says() -> None:
    """The table is a block's constant or a global one, and the calls give ``k`` in turn."""
    texts = [generate(seed).text for seed in _round_seeds(5_000_000, 80)]
    indexed = [t for t in texts if "[k0" in t or "[min(k0" in t or "[-k0" in t]
    assert indexed, "no table indexed by a parameter"
    assert any("    sizes0 = [" in t or "    cfg0 = [" in t for t in indexed)


# -- found by the campaigns ---------------------------------------------------------------

# roll_check seed 130000271 (``family loop in an if`` after a ``family flag``): the loop in
# the branch named its modules ``dense{m + i + 1}`` while each iteration added to ``m``,
# so a class built at ``n=2`` made ``dense2`` and ``dense4`` where the source makes
# ``dense2`` and ``dense3`` (no strict load of a per-call build's weights)
LOOP_IN_AN_IF_AFTER_AN_IF = """\
model Fam(flag, w1, deep, w, n, v):
    def forward(x):
        if flag:
            x -> dense(w1).relu
        else:
            x -> layer_norm()
        if deep:
            for i in range(n):
                x -> dense(w).relu
        x -> dense(v)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(true, 8, true, 8, 1, 4) -> Fam(false, 2, false, 6, 2, 4)
        x -> Fam(false, 2, true, 8, 0, 3)
        return x
"""


def test_seed_130000271_a_loop_in_a_branch_after_a_branch_count_names_by_the_count() -> None:
    """The running count holds the loop's earlier iterations: ``dense{m + 1}``."""
    checked = twin(LOOP_IN_AN_IF_AFTER_AN_IF, "loop_in_if_after_if", torch.randn(2, 3))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert 'setattr(self, f"dense{m + 1}", nn.Linear(channels, w))' in fam, fam
    assert "m + i + 1" not in fam, fam
    keys = [k for k in checked.gen.module.Fam(3, True, 8, True, 8, 2, 4).state_dict()]
    assert keys == [f"dense{i}.{p}" for i in (1, 2, 3, 4) for p in ("weight", "bias")], keys
    assert check_source(LOOP_IN_AN_IF_AFTER_AN_IF) == []


def test_two_modules_an_iteration_in_a_branch_after_a_branch_count() -> None:
    """Two of the operation an iteration: ``dense{m + 1}``, ``dense{m + 2}``, ``m += 2``."""
    source = LOOP_IN_AN_IF_AFTER_AN_IF.replace(
        "x -> dense(w).relu\n", "x -> dense(w).relu -> dense(w)\n"
    )
    checked = twin(source, "loop_in_if_two", torch.randn(2, 3))
    fam = block_class(checked.gen, "Fam")
    assert 'setattr(self, f"dense{m + 2}", nn.Linear(channels, w))' in fam, fam
    assert check_source(source) == []


# roll_check seed 130000162 (``family norm axes`` after ``family rows (kernels)``): the
# norm's shape read the length the calls' kernels keep (``nn.RMSNorm((w0, 8)[-(p0 +
# 1):])``); a row of kernel 4 (``padding=k // 2``) makes a length of 9, and the class
# built there cannot load the per-call build's weights (loud in forward, not silent).
# The block now rolls, its norm reading the length the class carries as a running local
# (``length = length + 2 * (k // 2) - k + 1``); the network still falls back to its
# variants' classes, noted (``folded_sizes.resizing_args``)
NORM_AFTER_KERNEL_ROWS = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k in rows1:
            x -> conv1d(c, k, padding=k // 2)
        x -> conv1d(w0, 3, padding=1)
        x -> rms_norm(axes=p0 + 1)
        return x

model Net:
    input_shape = (1, 8)
    def forward(x):
        x -> Fam([(8, 3)], 6, 1) -> Fam([(8, 1)], 6, 1) -> Fam([(2, 3), (4, 3)], 3, 1)
        return x
"""


# bench seed 134000535, the same in a network used through variants (``family network
# variants``): ``nn.RMSNorm((w0, 2, 8)[-(p0 + 1):])`` where a kernel of 2 makes ``(3, 9)``
NETWORK_NORM_AFTER_KERNEL_ROWS = """\
model Fam0(rows1, w0, p0):
    def forward(x):
        x -> conv2d(6, 3, padding=1) as stem
        for c, k in rows1:
            x -> conv2d(c, k, padding=k // 2)
        x -> conv2d(w0, 3, padding=1)
        x -> rms_norm(axes=p0 + 1)
        return x

model Fam0V0 = Fam0([(8, 1), (8, 1)], 6, 1):
    input_shape = (4, 2, 8)

model Fam0V1 = Fam0([(2, 1), (4, 1)], 6, 2):
    input_shape = (4, 2, 8)

model Net:
    input_shape = (3,)
    def forward(x):
        return x -> dense(2)
"""


def test_seed_130000162_a_norm_after_kernel_rows_reads_the_running_length() -> None:
    checked = twin(NORM_AFTER_KERNEL_ROWS, "kernel_rows_norm", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "nn.RMSNorm((w0, length)[-(p0 + 1):])" in fam, fam
    assert "(w0, 8)" not in fam, fam  # the calls' length is written nowhere


def test_seed_130000162_a_networks_norm_after_kernel_rows_falls_back() -> None:
    source = NETWORK_NORM_AFTER_KERNEL_ROWS
    _, code, notes = build(source, "kernel_rows_norm")
    assert notes and "reads an input size a parameter changes on an axis" in notes[0], notes
    # the calls' length is written in no class built for other rows
    assert "(w0, 2, 8)" not in code, code
    assert check_source(source) == []
