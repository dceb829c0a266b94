"""Issue 24 item 3: a parameter the calls give booleans and numbers (``P(0, 4)`` beside
``P(true, 4)``) is tested and guarded as the language compares it.

The language's ``==`` never finds a boolean equal to a number (``false == 0`` is false);
Python's does (``False == 0``, ``True in (False, 1)``). A class joined over its calls'
branches wrote the source's test as Python's, and a class written out for its calls
guarded its values with Python's ``!=`` and ``in``: built with ``p=False`` beside calls
``p=0`` and ``p=true`` it took the branch of 0, and ``p=True`` passed a guard written for
``p in (False, 1)`` (fix77: the known kind of roll_check's "computes differently" for
``p3=false`` on an int parameter, seed 46000312 at an older main). Such a parameter's
comparisons with a boolean are ``is`` tests, with 0 or 1 they test the kind too, and its
guards compare ``(p, isinstance(p, bool))``.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, build, choice, one_class_alike, per_call  # noqa: E402


def test_a_joined_test_with_0_tells_false_from_it() -> None:
    source = choice("p == 0", "P(0, 4) -> P(true, 4)")
    gen, _ = one_class_alike(source, "with_zero", torch.randn(2, 3, 8))
    assert CLASS.findall(gen.code) == ["P", "Net"], gen.code
    assert "        if p == 0 and p is not False:\n" in gen.code, gen.code
    module, _, _ = build(source, "with_zero_other")
    assert module.P(8, False, 4).dense1.out_features == 5  # false == 0 is false: w + 1
    assert module.P(8, 0, 4).dense1.out_features == 4
    assert check_source(source) == []


def test_a_joined_test_with_true_is_an_identity_test() -> None:
    source = choice("p != true", "P(0, 4) -> P(true, 4)")
    gen, _ = one_class_alike(source, "with_true", torch.randn(2, 3, 8))
    assert "        if p is not True:\n" in gen.code, gen.code
    module, _, _ = build(source, "with_true_other")
    assert module.P(8, 1, 4).dense1.out_features == 4  # 1 != true holds: w
    assert check_source(source) == []


def test_a_guard_of_a_boolean_and_a_number_compares_their_types() -> None:
    """``p != true`` at ``false`` and at 1 takes one branch: one class written out for
    both, whose guard ``p not in (False, 1)`` let ``True`` through (``True == 1``)."""
    source = choice("p != true", "P(false, 4) -> P(1, 5)")
    _, code, _ = build(source, "guarded")
    assert "        if (p, isinstance(p, bool)) not in ((False, True), (1, False)):" in code, code
    module, _, _ = build(source, "guarded_other")
    module.P(8, False, 4)
    module.P(8, 1, 4)
    with pytest.raises(ValueError, match=r"P is written for p in \(False, 1\), not True"):
        module.P(8, True, 4)
    assert check_source(source) == []


def test_a_guard_of_one_value_compares_its_type_where_the_calls_mix_kinds() -> None:
    """``if p == false`` runs at no call of ``P(1, 0, 4)`` and ``P(2, true, 4)``: the
    rolled class leaves the body out and refuses other values of ``p``, and so does each
    class of one call (``--class-per-call``), whose ``p != 0`` let ``False`` through."""
    source = """\
model P(n, p, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        if p == false:
            x -> dense(w + 3)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 0, 4) -> P(2, true, 4)
        return x
"""
    module, code, _ = build(source, "one_value")
    guard = "        if (p, isinstance(p, bool)) not in ((0, False), (True, True)):\n"
    assert f"        # a body no call runs is not written\n{guard}" in code, code
    with pytest.raises(ValueError, match=r"P is written for p in \(0, True\), not False"):
        module.P(8, 1, False, 4)
    calls, code = per_call(source, "one_value_per_call", roll_networks=False)
    assert "        if p != 0 or p is False:  # written out for this value\n" in code, code
    with pytest.raises(ValueError, match="P is written for p == 0, not False"):
        calls.P(8, 1, False, 4)
    with pytest.raises(ValueError, match="P_2 is written for p == True, not 1"):
        calls.P_2(8, 2, 1, 4)
    assert check_source(source) == []


def test_a_joint_guard_compares_the_types_of_a_parameter_given_both_kinds() -> None:
    """``(w, flag) not in ((4, True), (9, 1), (6, False))`` let ``(9, True)`` through,
    where ``w >= 8 and flag == true`` builds the layer norm no call builds."""
    source = """\
model Fam(w, flag):
    def forward(x):
        x -> dense(w) as stem
        if w >= 8 and flag == true:
            x -> layer_norm() as ln
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(4, true) -> Fam(9, 1) -> Fam(6, false) -> dense(2) as head
"""
    _, code, _ = build(source, "joint")
    assert (
        "if (w, (flag, isinstance(flag, bool))) not in ((4, (True, True)), (9, (1, False)), (6, (False, True))):"
    ) in code, code
    module, _, _ = build(source, "joint_other")
    module.Fam(4, 9, 1)
    with pytest.raises(ValueError, match=r"in \(\(4, True\), \(9, 1\), \(6, False\)\), not"):
        module.Fam(4, 9, True)
    assert check_source(source) == []


def test_a_rollers_refusal_compares_the_types_of_a_parameter_given_both_kinds() -> None:
    """A rolled class written without a body no call runs refuses the other values:
    ``p not in (0, True)`` let ``False`` (``False == 0``) and ``1`` through."""
    from aurane.backends.torch.untaken import refusal_lines

    lines = refusal_lines("Fam", ("n", "p"), [{"n": 2, "p": 0}, {"n": 1, "p": True}])
    assert lines is not None
    # the writer puts a comment that does not fit on the line above the test
    tested = next(line for line in lines if line.strip().startswith("if "))
    test = tested.strip().split(":  #")[0].removesuffix(":")
    assert test == "if (n, (p, isinstance(p, bool))) not in ((2, (0, False)), (1, (True, True)))", (
        lines
    )
    assert "Fam is written for (n, p) in ((2, 0), (1, True))" in lines[-1], lines
    refused = {"n": 2, "p": False}
    assert eval(test[3:], {}, refused)  # noqa: S307 - the line as the class runs it
    assert not eval(test[3:], {}, {"n": 1, "p": True})  # noqa: S307


def test_a_rolled_classs_test_with_0_tells_false_from_it() -> None:
    """The rolled class (a loop over ``n``) writes the source's ``if`` in its constructor
    and forward alike."""
    source = """\
model P(n, p, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        if p == 0:
            x -> dense(w + 1)
        else:
            x -> dense(w + 2)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 0, 4) -> P(2, true, 4) -> P(1, 1, 4)
        return x
"""
    gen, _ = one_class_alike(source, "rolled_zero", torch.randn(2, 3, 8))
    assert CLASS.findall(gen.code) == ["P", "Net"], gen.code
    assert "        if p == 0 and p is not False:\n" in gen.code, gen.code
    assert "        if self.p == 0 and self.p is not False:\n" in gen.code, gen.code
    module, _, _ = build(source, "rolled_zero_other")
    assert module.P(8, 1, False, 4).dense2.out_features == 6  # false == 0 is false: w + 2
    assert check_source(source) == []


def test_a_network_rolled_over_variants_tests_its_parameter_by_kind() -> None:
    """Variants ``Net(4, 0)`` and ``Net(6, true)``: the network's class built with
    ``p=False`` took ``if p == 0`` and built ``a``, where the source builds ``b``."""
    source = """\
model Net(w, p):
    def forward(x):
        x -> dense(w) as stem
        if p == 0:
            x -> relu()
            x -> dense(3) as a
        else:
            x -> dense(4) as b
        return x -> dense(3) as head

model small = Net(4, 0):
    input_shape = (5,)

model wide = Net(6, true):
    input_shape = (5,)
"""
    module, code, notes = build(source, "variants")
    assert notes == [], notes
    assert "        if p == 0 and p is not False:\n" in code, code
    assert "        if self.p == 0 and self.p is not False:\n" in code, code
    assert hasattr(module.Net(4, False), "b")
    assert check_source(source) == []


NUMBERS_ONLY = """\
model C(k):
    def forward(x):
        if k == 1:
            x -> dense(4)
        else:
            x -> dense(4).relu
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> C(1) -> dense(2)
        return x
"""


def test_a_guard_of_numbers_an_if_test_reads_refuses_a_boolean() -> None:
    """The calls give ``k`` only 1: the class is written for the ``if k == 1:`` branch,
    and ``k != 1`` let ``True`` through, where the language takes the other branch (its
    ``true == 1`` is false: ``C(true)`` applies the relu). Counts and sizes keep their
    plain guards (``n1 != 0``): the language refuses a boolean for them at the call."""
    module, code, notes = build(NUMBERS_ONLY, "numbers_only")
    assert notes == [], notes
    assert "        if k != 1 or k is True:  # written out for this value\n" in code, code
    with pytest.raises(ValueError, match="C is written for k == 1, not True"):
        module.C(4, True)
    module.C(4, 1)
    _, other, _ = build(NUMBERS_ONLY.replace("C(1)", "C(true)"), "numbers_only_true")
    assert "F.relu(x)" in other, other  # the branch ``true`` takes in the language
    assert check_source(NUMBERS_ONLY) == []
