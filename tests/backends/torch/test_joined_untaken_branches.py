"""A class joined over the ``if`` branches its calls take (``branches.py``) writes a way
through an ``if`` no call takes where a phantom call takes it (the calls' arguments with
a deciding one changed: ``ParamClasses._untaken_phantoms``), and refuses the arguments
that take it where none does (``branches.untaken_ways``).

Before, ``Sel`` called at ``q=3`` (the ``else``) and ``q=5`` (the ``if``) was one class
``if q == 5: ... else: ...``: built by hand at ``q=4``, which the source sends down the
``elif``, it silently built and ran the ``else`` (fuzz seed 70000033, found by
``aurane.tools.roll_check``); then it refused ``q=4``; now the phantom ``Sel(4)`` writes
the ``elif``. The program builds what it built (the twin check: the same modules in the
same order, a strict load, equal outputs)."""

from __future__ import annotations

import pytest
import torch

from aurane.tools.roll_check import check_source
from tests.backends.torch.one_class import CLASS, build, twin

SEL = """
model Sel(q):
    def forward(x):
        if q == 5:
            x -> dense(4)
        elif not (q in (3, 0)):
            x -> dense(4) -> relu()
        else:
            x -> layer_norm() -> dense(4)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Sel(3) as a -> Sel(5) as b
"""

NESTED = """
model Blk(flag, k):
    def forward(x):
        if flag:
            if k == 1:
                x -> dense(4)
            elif k == 2:
                x -> dense(5)
        else:
            x -> dense(6)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Blk(true, 1) as a -> Blk(true, 2) as b
"""

ALWAYS = """
model Blk(a, b):
    def forward(x):
        if a:
            x -> dense(4)
        else:
            x -> dense(5)
        if b > 1:
            x -> relu()
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Blk(true, 2) as one -> Blk(false, 3) as two
"""


def _one_class(source: str, name: str, block: str) -> tuple[object, str]:
    module, code, notes = build(source, name)
    assert notes == [], notes
    assert CLASS.findall(code).count(block) == 1, code
    return module, code


def _twin(source: str, name: str, block: str) -> tuple[object, str]:
    """``_one_class``, the program checked against its builds of a class per call."""
    twin(source, name, torch.randn(3, 6))
    return _one_class(source, name, block)


def test_an_elif_no_call_takes_is_written_from_a_phantom_call() -> None:
    """``q=4`` takes the ``elif``: written, and ``Sel(6, 4)`` computes it."""
    module, code = _twin(SEL, "sel", "Sel")
    assert "raise" not in code, code
    assert (
        "        x = self.dense1(x)\n"
        "        if self.q != 5:\n"
        "            if self.q not in (3, 0):\n"
        "                x = F.relu(x)\n"
    ) in code, code
    net = module.Sel(6, 4)  # type: ignore[attr-defined]
    assert bool((net(torch.randn(2, 6)) >= 0).all())  # the relu of the elif
    for q in (0, 3, 5):  # the branches the calls take, at any value that takes them
        out = module.Sel(6, q)(torch.randn(2, 6))  # type: ignore[attr-defined]
        assert out.shape == (2, 4)


# the elif reshapes 4 features to 7 x 7: no phantom call lowers it
UNLOWERED = SEL.replace("x -> dense(4) -> relu()", "x -> dense(4) -> reshape(7, 7)")


def test_an_elif_no_phantom_lowers_is_refused_not_run_as_the_else() -> None:
    module, code = _one_class(UNLOWERED, "sel_unlowered", "Sel")
    assert "if q != 5 and q not in (3, 0):  # no call takes it: not written" in code, code
    with pytest.raises(ValueError, match="Sel is written without the branch at 6:9"):
        module.Sel(6, 4)  # type: ignore[attr-defined]
    assert check_source(UNLOWERED) == []


def test_an_if_inside_a_branch_is_written_under_the_tests_that_lead_there() -> None:
    """``flag=false`` (the phantom ``Blk(false, 1)``) takes the else: written; ``k=3``
    runs no branch of the inner if and makes no layer, so no phantom shows it taken:
    refused under ``flag``."""
    module, code = _twin(NESTED, "nested", "Blk")
    assert "if not flag:  # no call takes it: not written" not in code, code
    assert "if flag and (k != 1 or k is True) and k != 2:" in code, code
    assert "        else:\n            self.dense1 = nn.Linear(in_features, 6)\n" in code, code
    with pytest.raises(ValueError, match="the way past every branch of the if at 5:13"):
        module.Blk(6, True, 3)  # type: ignore[attr-defined]
    for flag, k, width in ((True, 1, 4), (True, 2, 5), (False, 1, 6), (False, 3, 6)):
        out = module.Blk(6, flag, k)(torch.randn(2, 6))  # type: ignore[attr-defined]
        assert out.shape == (2, width)


def test_an_if_without_else_that_every_call_runs_is_written_as_the_source_says() -> None:
    """Every call runs ``if b > 1``; the phantom ``Blk(true, 1)`` runs none, so forward
    tests it (``if self.b > 1:``) rather than refusing ``b <= 1``."""
    module, code = _twin(ALWAYS, "always", "Blk")
    assert "raise" not in code, code
    assert "        if self.b > 1:\n            x = F.relu(x)\n" in code, code
    net = module.Blk(6, True, 1)  # type: ignore[attr-defined]
    assert bool((net(torch.randn(50, 6)) < 0).any())  # no relu at b <= 1
    net = module.Blk(6, False, 5)  # type: ignore[attr-defined]
    assert bool((net(torch.randn(3, 6)) >= 0).all())  # the relu the source applies at b > 1


GROUPED = """
model Sel(p, q):
    def forward(x):
        if p:
            x -> dense(4)
        elif not (q == 0 or q == 5):
            x -> dense(5)
        else:
            x -> dense(6)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Sel(true, 5) as a -> dense(6) -> Sel(false, 2) as b
"""


def test_a_negated_or_keeps_its_parentheses_beside_the_other_tests() -> None:
    """Fuzz seed 97000005: ``not (q == 0 or q == 5)`` negated reads ``q == 0 or q == 5``;
    written ``not p and q == 0 or q == 5`` the guard refused the call ``Sel(true, 5)``.
    The else no call takes is refused where no phantom lowers it."""
    source = GROUPED.replace("x -> dense(6)", "x -> dense(6) -> reshape(7, 7)")
    module, code = _one_class(source, "grouped", "Sel")
    assert "if not p and q in (0, 5) and q is not False:" in code, code
    assert module.Sel(6, True, 5)(torch.randn(2, 6)).shape == (2, 4)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Sel is written without the branch at 8:9"):
        module.Sel(6, False, 0)  # type: ignore[attr-defined]
    assert check_source(source) == []


def test_an_else_a_phantom_of_the_second_call_takes_is_written() -> None:
    """The calls ``(true, 5)`` and ``(false, 2)``: only the second's arguments changed
    (``q=0``) take the else; the class reads as torchvision writes a choice of layers."""
    module, code = _twin(GROUPED, "grouped_written", "Sel")
    assert (
        "        if p:\n"
        "            self.dense1 = nn.Linear(in_features, 4)\n"
        "        elif q not in (0, 5) or q is False:\n"
        "            self.dense1 = nn.Linear(in_features, 5)\n"
        "        else:\n"
        "            self.dense1 = nn.Linear(in_features, 6)\n"
    ) in code, code
    assert module.Sel(6, False, 0)(torch.randn(2, 6)).shape == (2, 6)  # type: ignore[attr-defined]


TWO_IFS = """
model Fam(a, b):
    def forward(x):
        if a:
            x -> dense(4)
        else:
            x -> layer_norm()
        if b:
            x -> dense(3)
        else:
            x -> layer_norm()
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Fam(true, false) as p -> Fam(false, false) as q -> Fam(true, true) as r
"""


def test_branches_no_call_takes_together_are_refused() -> None:
    """camp76 (fuzz seeds 98000127, 47000349): every branch of each ``if`` is taken by
    some call, but not ``not a`` with ``b``; the join tests ``b`` only under ``a``, so
    ``Fam(6, False, True)`` silently built ``(false, false)``'s two layer norms."""
    module, code = _one_class(TWO_IFS, "two_ifs", "Fam")
    assert "if not a and b:  # no call takes it: not written" in code, code
    with pytest.raises(ValueError, match="Fam is written without the ways at 6:9, 8:9 together"):
        module.Fam(6, False, True)  # type: ignore[attr-defined]
    for a, b in ((True, False), (False, False), (True, True)):
        module.Fam(6, a, b)(torch.randn(2, 6))  # type: ignore[attr-defined]
    assert check_source(TWO_IFS) == []


ALIKE = """
model Fam(a, b):
    def forward(x):
        if a:
            x -> dense(4) -> dense(6)
        else:
            x -> tanh()
        if b:
            x -> dense(6)
        else:
            x -> tanh()
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Fam(false, false) as p -> Fam(true, true) as q
"""


def test_an_if_the_join_never_tests_is_refused_where_the_calls_give_it_apart() -> None:
    """camp76: calls giving ``a == b`` were joined on ``if a:`` alone, ``b`` going with it:
    ``Fam(6, True, False)`` built the third layer the source only builds for ``b``."""
    module, code = _one_class(ALIKE, "alike", "Fam")
    with pytest.raises(ValueError, match="Fam is written without the ways at .* together"):
        module.Fam(6, True, False)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Fam is written without the ways at .* together"):
        module.Fam(6, False, True)  # type: ignore[attr-defined]
    assert check_source(ALIKE) == []
