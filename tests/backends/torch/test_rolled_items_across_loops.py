"""Issue 24 item 3: a block with two loops over lists the calls give whose items may
build modules (``for c, a in rows0: x -> dense(c) -> a`` then the same over ``rows1``,
given ``identity`` or ``layer_norm``) kept a class per call with the note ''a' builds
'identity2', numbered on from other 'identity' modules of the block' (fuzz seeds
94000208, 97000107): the IR numbers an operation's modules over the instance, so the
second loop's go on from the first's. The rolled class counts them with one counter
started before the first loop (``identity_count = 0``). Each program runs against its
IR, its ``Net`` is built as the build of one class per call builds it (the same modules
in the same order), strict-loads it and computes the same; ``roll_check`` rebuilds the
rolled class at arguments the calls did not give."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    per_call,
    roll_notes,
    twin,
)

TWO_LOOPS = """\
model Fam(rows0, rows1):
    def forward(x):
        for c, a in rows0:
            x -> dense(c) -> a
        for c, a in rows1:
            x -> dense(c) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(8, identity)], [(3, silu), (4, layer_norm)]) as f1 -> Fam([(3, relu), (2, layer_norm), (2, identity)], [(8, layer_norm), (6, identity), (8, relu)]) as f2 -> dense(2) as head
"""

UNDER_AN_IF = """\
model Fam(rows0, rows1, deep: bool):
    def forward(x):
        if deep:
            for c, a in rows0:
                x -> dense(c) -> a
        for c, a in rows1:
            x -> dense(c) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(8, identity)], [(3, identity)], true) as f1 -> Fam([(2, identity)], [(6, identity)], false) as f2 -> dense(2) as head
"""


def test_items_of_two_loops_number_one_operation_on() -> None:
    """``f2`` builds ``layer_norm1`` in the first loop and ``layer_norm2``
    in the second; ``identity1``, ``identity2`` likewise. Both counters start once."""
    checked = twin(TWO_LOOPS, "two_loops", torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Fam", "Fam_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Fam", "Net"], gen.code
    notes, _ = roll_notes(TWO_LOOPS)
    assert notes == []
    model, _, _ = build(TWO_LOOPS, "two_loops_modules")
    theirs, _ = per_call(TWO_LOOPS, "two_loops_names")
    names = [n for n, _ in model.Net().named_modules()]
    assert names == [n for n, _ in theirs.Net().named_modules()], names
    assert "f2.layer_norm2" in names and "f2.identity2" in names, names
    counts: Counter[str] = Counter()
    assert check_source(TWO_LOOPS, counts) == []
    assert counts["calls"] == 2, counts
    fam = block_class(gen, "Fam")
    init, forward = fam.split("    def forward")
    for method in (init, forward):
        assert method.count("identity_count = 0") == 1, method
        assert method.count("layer_norm_count = 0") == 1, method
        assert method.index("identity_count = 0") < method.index(" in enumerate(")
    assert (
        "            if a is nn.Identity:\n"
        "                identity_count += 1\n"
        '                setattr(self, f"identity{identity_count}", a())\n'
        "            elif a is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                setattr(self, f"layer_norm{layer_norm_count}", a(channels))\n'
    ) in init, init


def test_a_loop_under_an_if_counts_its_iterations_for_the_loop_after() -> None:
    """The second loop's ``dense`` are numbered on from the loop under the ``if``, which
    only the branch taken runs: a running count started before the if, which each of
    that loop's iterations adds to (``block_walk.branch_counts``), names them
    (``dense{n + i + 1}``); the item counter starts before the if too. It kept a class
    per call with the note 'numbered on from the loop in an if's branch'."""
    checked = twin(UNDER_AN_IF, "under_an_if", torch.randn(3, 4))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    init, forward = fam.split("    def forward")
    for method in (init, forward):
        assert method.count("identity_count = 0") == 1, method
        assert method.index("identity_count = 0") < method.index("if ")
        assert "                n += 1\n" in method, method
    assert 'setattr(self, f"dense{n + i + 1}", nn.Linear(channels, c))' in init, init
    assert 'x = getattr(self, f"dense{n + i + 1}")(x)' in forward, forward


TWO_STEPS = """\
model Stage(n, norm = relu):
    def forward(x):
        for i in range(n):
            x -> dense(4) -> norm -> dense(4) -> norm
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(2, layer_norm) as s1 -> Stage(3) as s2 -> dense(2) as head
"""


def test_a_parameter_applied_at_two_steps_of_a_loop_counts_on() -> None:
    """``norm`` given ``layer_norm`` at two steps of one loop: the IR numbers the modules
    ``layer_norm1`` to ``layer_norm4`` over the visits of both, which one counter
    writes; it was 'norm' builds 'layer_norm2', numbered on from other 'layer_norm'
    modules of the block."""
    checked = twin(TWO_STEPS, "two_steps", torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    model, _, _ = build(TWO_STEPS, "two_steps_modules")
    theirs, _ = per_call(TWO_STEPS, "two_steps_names")
    names = [n for n, _ in model.Net().named_modules()]
    assert names == [n for n, _ in theirs.Net().named_modules()], names
    assert "s1.layer_norm4" in names, names
    counts: Counter[str] = Counter()
    assert check_source(TWO_STEPS, counts) == []
    stage = block_class(gen, "Stage")
    assert stage.count("layer_norm_count = 0") == 2, stage  # __init__'s and forward's
    assert stage.count("layer_norm_count += 1") == 4, stage


NO_LOOP = """\
model Block(w, norm = relu):
    def forward(x):
        x -> dense(w) -> norm -> dense(w)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Block(8, layer_norm) as b1 -> Block(6) as b2 -> dense(2) as head
"""


def test_a_parameter_given_a_module_in_a_block_without_loops() -> None:
    """A norm layer parameter outside loops (``x -> dense(w) -> norm``, a call giving
    ``layer_norm``, another the default ``relu``): one class testing the class it was
    given, as in a loop; it kept ``Block`` and ``Block_2`` ('a block without loops whose
    calls write 'def __init__(self, in_features, w):' against ...')."""
    checked = twin(NO_LOOP, "no_loop", torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Block", "Block_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Block", "Net"], gen.code
    notes, _ = roll_notes(NO_LOOP)
    assert notes == []
    model, _, _ = build(NO_LOOP, "no_loop_modules")
    theirs, _ = per_call(NO_LOOP, "no_loop_names")
    names = [n for n, _ in model.Net().named_modules()]
    assert names == [n for n, _ in theirs.Net().named_modules()], names
    counts: Counter[str] = Counter()
    assert check_source(NO_LOOP, counts) == []
    assert counts["calls"] == 2, counts
    block = block_class(gen, "Block")
    assert (
        "        if norm is nn.LayerNorm:\n"
        "            layer_norm_count += 1\n"
        '            setattr(self, f"layer_norm{layer_norm_count}", norm(w))\n'
    ) in block, block
    assert (
        "        if self.norm_class is nn.LayerNorm:\n"
        "            layer_norm_count += 1\n"
        '            x = getattr(self, f"layer_norm{layer_norm_count}")(x)\n'
        "        else:\n"
        "            x = self.norm(x)\n"
    ) in block, block


NESTED = """\
model Nest(cfg, m):
    def forward(x):
        for k in range(m):
            for w, a in cfg:
                x -> dense(w) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Nest([(4, layer_norm)], 2) as n1 -> Nest([(4, relu), (4, identity)], 1) as n2 -> dense(2) as head
"""


def test_items_in_loops_nested_in_each_other() -> None:
    """``for k in range(m): for w, a in cfg``: the counters start before the outer loop
    (``layer_norm1``, ``layer_norm2`` over ``k``); they kept a class per call ('the
    'layer_norm' module that 'a' builds at 13:34 in loops nested in each other')."""
    checked = twin(NESTED, "nested", torch.randn(3, 4))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Nest", "Nest_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Nest", "Net"], gen.code
    notes, _ = roll_notes(NESTED)
    assert notes == []
    model, _, _ = build(NESTED, "nested_modules")
    theirs, _ = per_call(NESTED, "nested_names")
    names = [n for n, _ in model.Net().named_modules()]
    assert names == [n for n, _ in theirs.Net().named_modules()], names
    assert "n1.layer_norm2" in names, names
    counts: Counter[str] = Counter()
    assert check_source(NESTED, counts) == []
    nest = block_class(gen, "Nest")
    assert (
        "        identity_count = 0\n"
        "        layer_norm_count = 0\n"
        "        for k in range(m):\n"
        "            for i, (w, a) in enumerate(cfg):\n"
    ) in nest, nest
