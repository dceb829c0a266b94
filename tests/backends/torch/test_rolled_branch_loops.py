"""Issue 24 item 3: a class may take an argument only if it builds what the source says at
any value the source accepts. A block joined over its calls' ``if`` branches
(``param_blocks.ParamClasses._join``) writes each call's loops unrolled, so it took the loop
count ``n`` or the rows ``rows`` as constructor arguments and built the calls' layers at any
other value (campaign findings 2); and a rolled loop of ``dense`` layers on the last axis of
an image, threading the channels, wrote the first iteration's input width as a number
(``nn.Linear(4, g)``: finding 6). Now the joined class folds a loop count its calls give
alike (keeping it in its signature, with a guard that refuses another value, so a rolled
caller writing the source's arguments builds it: review59 P1), calls that give different
ones are left to the roller (which names why it keeps their classes: a located note), an
operation a loop runs over is never taken for its count (review59 P2), and the rolled
loop tracks the width on the last axis.
Each program is built against the build with one class per call (``per_call=True``) and
checked by ``roll_check.check_source`` (other arguments built by hand, against the class
of one call that a program calling it so compiles to)."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, build, built_alike, per_call, twin  # noqa: E402


def _alike(source: str, name: str, *inputs: torch.Tensor) -> str:
    """The generated code, built alike with the build of one class per call, the calls
    that took different ``if`` branches too (the same modules in the same order, equal
    outputs); ``check_source`` finds no problem (``one_class.twin``)."""
    against = ("per_call",)
    return twin(source, name, *inputs, against=against, roll_networks=False, named=False).code


FAMILY = """\
model Fam(n, flag):
    def forward(x):
        for i in range(n):
            x -> conv1d(4, 3, padding=1) as layers.{i}
        if flag:
            x -> conv1d(4, 3, padding=1)
        else:
            x -> batchnorm()
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Fam(2, true) -> Fam(COUNT, false)
        return x
"""


def test_a_loop_count_the_calls_give_alike_is_folded_into_the_joined_class() -> None:
    """``Fam(2, true)`` and ``Fam(2, false)``: one class joined over the branch, which
    writes the two layers out (``Fam(4, 3, True)`` built two); it keeps ``n`` in its
    signature, so every caller passes the source's arguments, and refuses another count."""
    source = FAMILY.replace("COUNT", "2")
    module, _, notes = build(source, "folded_count")
    assert notes == []
    code = _alike(source, "folded_count", torch.randn(2, 4, 8))
    assert CLASS.findall(code) == ["Fam", "Net"], code
    assert (
        "    def __init__(self, in_channels, n, flag):\n"
        "        super().__init__()\n"
        "        if n != 2:  # its loops are written out for this value\n"
        '            raise ValueError(f"Fam is written for n == 2, not {n}")\n'
    ) in code, code
    assert "self.fam1 = Fam(4, 2, True)" in code and "self.fam2 = Fam(4, 2, False)" in code, code
    with pytest.raises(ValueError, match="Fam is written for n == 2, not 3"):
        module.Fam(4, 3, True)


def test_calls_at_different_loop_counts_roll_into_one_class_with_the_if() -> None:
    """``Fam(2, true)`` and ``Fam(3, false)``: the joined class built the calls' layers
    whatever ``n`` it was given; now the roller writes the loop and the ``if`` outside it
    (``test_rolled_top_branches.py``)."""
    source = FAMILY.replace("COUNT", "3")
    _, code, notes = build(source, "counts_apart")
    assert notes == []
    assert CLASS.findall(code) == ["Fam", "Net"], code
    _alike(source, "counts_apart", torch.randn(2, 4, 8))


ROWS = """\
model Fam(flag, rows):
    def forward(x):
        if flag:
            x -> dense(4).relu
        else:
            x -> layer_norm()
        for c in rows:
            x -> dense(c)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(true, [4, 2]) -> Fam(false, [8])
        return x
"""


def test_calls_giving_different_rows_over_their_branches_read_a_running_count() -> None:
    """The joined class took ``rows`` and built the calls' ``dense`` layers whatever rows
    it was given (``Fam(3, False, (4, 2))`` built one); then the calls kept their classes
    (``numbered on across the branch taken``); now the loop's modules are numbered on
    from the count of the branch's (``dense{n + i + 1}``: ``test_rolled_running_counts.py``)."""
    _, code, notes = build(ROWS, "rows_apart")
    assert notes == []
    assert CLASS.findall(code) == ["Fam", "Net"], code
    assert 'setattr(self, f"dense{n + i + 1}", nn.Linear(channels, c))' in code, code
    _alike(ROWS, "rows_apart", torch.randn(2, 3))


GROW = """\
model Grow(g, n):
    def forward(x):
        for i in range(n):
            x -> dense(g)
        return x

model Net:
    input_shape = (3, 2, 4)
    def forward(x):
        x -> Grow(2, 0) -> Grow(2, 1)
        return x
"""


def test_a_loop_of_dense_layers_on_an_images_last_axis_tracks_the_width() -> None:
    """No call runs the loop twice, so the channels' walk wrote the first iteration's
    width as a number (``nn.Linear(4, g)``) and ``Grow(2, 2)`` built a second layer of 4
    inputs; the class threads the last axis instead."""
    code = _alike(GROW, "grow", torch.randn(2, 3, 2, 4))
    assert CLASS.findall(code) == ["Grow", "Net"], code
    assert (
        "    def __init__(self, in_features, g, n):\n"
        "        super().__init__()\n"
        "        self.n = n\n"
        "        channels = in_features\n"
        "        for i in range(n):\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, g))\n'
        "            channels = g\n"
    ) in code, code
    module, _, _ = build(GROW, "grow_by_hand")
    assert module.Grow(4, 2, 2).dense2.in_features == 2


# bench/one_class_per_block.py --seed 85 (seeds 85000143 and 85000234): the branch joiner
# joined two calls and kept the third apart, and no note said so
SPLIT = """\
model Fam0(flag0, w0, w1, n1, op1 = relu):
    def forward(x):
        if flag0:
            x -> dense(w0).relu
        else:
            x -> layer_norm()
        for i in range(n1):
            x -> dense(w1) as layers1.{i} -> op1
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam0(true, 8, 4, 3, op1=gelu)
        x -> Fam0(true, 8, w1=2, n1=0, op1=silu)
        x -> Fam0(false, 8, 6, n1=1)
        return x
"""


def test_a_block_the_joiner_split_is_rolled_into_one_class() -> None:
    """It kept three classes with a located note; the roller now writes the ``if``
    before the loop (``test_rolled_top_branches.py``)."""
    _, code, notes = build(SPLIT, "split_noted")
    assert notes == []
    assert CLASS.findall(code) == ["Fam0", "Net"], code
    _alike(SPLIT, "split_noted", torch.randn(2, 4))


def _variants_alike(source: str, name: str, *variants: str) -> str:
    """``_alike`` for a network's variants (``small``, ``wide``): each built alike with
    the build of one class per call, on the input its graph takes."""
    from aurane.compile import prepare_program
    from aurane.verify import sample_inputs

    mine, code, _ = build(source, name)
    theirs, _ = per_call(source, f"{name}_flat", roll_networks=False)
    _, graphs, _ = prepare_program(textwrap.dedent(source), filename=f"{name}.aur")
    for variant in variants:
        one, separate = built_alike(mine, theirs, variant)
        one.eval()
        separate.eval()
        inputs = sample_inputs(graphs[variant], "cpu", batch=2)
        with torch.no_grad():
            torch.testing.assert_close(one(*inputs), separate(*inputs), rtol=0, atol=0)
    assert check_source(source) == []
    return code


# review59 P1 (probe j1): the joined class dropped the count it folds from its signature
# (Inner(in_features, w, up)), but the rolled Outer writes the source's arguments
# (Inner(channels, w, 2, i == 0)): building Net() raised a TypeError
ROLLED_CALLER = """\
model Inner(w, n, up):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        if up:
            x -> relu()
        else:
            x -> dense(w).tanh
        return x

model Outer(w, k):
    def forward(x):
        for i in range(k):
            x -> Inner(w, 2, i == 0)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Outer(8, 2) as p -> Outer(8, 3) as q -> dense(2) as head
"""


def test_a_rolled_caller_builds_the_joined_class_with_its_folded_count() -> None:
    module, code, notes = build(ROLLED_CALLER, "rolled_caller")
    assert notes == []
    assert CLASS.findall(code) == ["Inner", "Outer", "Net"], code
    assert (
        "    def __init__(self, in_features, w, n, up):\n"
        "        super().__init__()\n"
        "        if n != 2:  # its loops are written out for this value\n"
        '            raise ValueError(f"Inner is written for n == 2, not {n}")\n'
    ) in code, code
    assert 'setattr(self, f"inner{i + 1}", Inner(channels, w, 2, i == 0))' in code, code
    _alike(ROLLED_CALLER, "rolled_caller", torch.randn(2, 4))
    with pytest.raises(ValueError, match="Inner is written for n == 2, not 3"):
        module.Inner(8, 8, 3, True)


# review59 P1 (probe n7): the same through a network rolled over its variants
NETWORK_CALLER = """\
model Inner(w, n, up):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        if up:
            x -> relu()
        else:
            x -> dense(w).tanh
        return x

model Net(width, k):
    def forward(x):
        x -> dense(width) as stem
        for i in range(k):
            x -> Inner(width, 2, i == 0) as blocks{i}
        return x -> dense(3) as head

model small = Net(4, 2):
    input_shape = (5,)

model wide = Net(6, 3):
    input_shape = (5,)
"""


def test_a_rolled_network_builds_the_joined_class_with_its_folded_count() -> None:
    _, code, notes = build(NETWORK_CALLER, "network_caller")
    assert notes == []
    assert "    def __init__(self, in_features, w, n, up):\n" in code, code
    assert 'setattr(self, f"blocks{i}", Inner(channels, width, 2, i == 0))' in code, code
    _variants_alike(NETWORK_CALLER, "network_caller", "small", "wide")


# review59 P2 (probe j2): the joiner took the operation parameter ``act`` that a list
# written out reads for a loop count and folded it: KeyError: 'act' in the compiler
OPERATION_ITEMS = """\
model Inner(w, act, up):
    def forward(x):
        for a in [act, gelu]:
            x -> dense(w) -> a
        if up:
            x -> relu()
        else:
            x -> dense(w).tanh
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Inner(8, silu, true) as p -> Inner(8, silu, false) as q -> dense(2) as head
"""


def test_an_operation_a_loop_runs_over_is_not_folded_as_its_count() -> None:
    _, code, notes = build(OPERATION_ITEMS, "operation_items")
    assert notes == []
    assert CLASS.findall(code) == ["Inner", "Net"], code
    assert "    def __init__(self, in_features, w, act, up):\n" in code, code
    assert "written for" not in code, code
    assert "self.p = Inner(4, 8, nn.SiLU, True)" in code, code
    _alike(OPERATION_ITEMS, "operation_items", torch.randn(2, 4))


# a list of operations the loop runs over, given alike: no guard can check it, so it is
# not folded, and the calls keep their classes with the roller's note
OPERATION_LIST = """\
model Inner(w, acts, up):
    def forward(x):
        for a in acts:
            x -> dense(w) -> a
        if up:
            x -> relu()
        else:
            x -> dense(w).tanh
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Inner(8, [silu, gelu], true) -> Inner(8, [silu, gelu], false)
        return x
"""


def test_a_list_of_operations_a_loop_runs_over_is_never_folded() -> None:
    """No guard can check a list of operations, so it is never folded: the calls differ
    in the branch, and the roller writes the ``if`` outside the loop (an empty first
    branch reads ``if not up:``); it kept a class per call with 'an if outside a loop'."""
    _, code, notes = build(OPERATION_LIST, "operation_list")
    assert notes == []
    assert "written for acts" not in code and "written out" not in code, code
    assert CLASS.findall(code) == ["Inner", "Net"], code
    assert "        if not up:\n" in code and "pass" not in code, code
    # the one refusal: an item no call gives, which forward would build as applied
    assert code.count("written for") == 1 and "written for a in (nn.SiLU, nn.GELU)" in code
    _alike(OPERATION_LIST, "operation_list", torch.randn(2, 4))


def test_rows_the_calls_give_alike_are_guarded_as_a_tuple() -> None:
    """Rows are folded like a count; the guard compares them as tuples, so a caller may
    pass a list or a tuple."""
    source = ROWS.replace("Fam(false, [8])", "Fam(false, [4, 2])")
    module, code, notes = build(source, "rows_folded")
    assert notes == []
    assert CLASS.findall(code) == ["Fam", "Net"], code
    assert (
        "        if tuple(rows) != (4, 2):  # its loops are written out for this value\n"
        '            raise ValueError(f"Fam is written for rows == (4, 2), not {rows}")\n'
    ) in code, code
    _alike(source, "rows_folded", torch.randn(2, 3))
    assert module.Fam(3, True, [4, 2]).dense3.out_features == 2
    with pytest.raises(ValueError, match=r"Fam is written for rows == \(4, 2\), not \[4, 3\]"):
        module.Fam(3, True, [4, 3])
