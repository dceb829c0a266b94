"""A class joined over the ``if`` branches its calls take (``branches.py``) refuses the
arguments that take a way through an ``if`` no call takes (``branches.untaken_ways``).

Before, ``Sel`` called at ``q=3`` (the ``else``) and ``q=5`` (the ``if``) was one class
``if q == 5: ... else: ...``: built by hand at ``q=4``, which the source sends down the
``elif``, it silently built and ran the ``else`` (fuzz seed 70000033, found by
``aurane.tools.roll_check``)."""

from __future__ import annotations

import pytest
import torch

from aurane.tools.roll_check import check_source
from tests.backends.torch.one_class import CLASS, build

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


def test_an_elif_no_call_takes_is_refused_not_run_as_the_else() -> None:
    module, code = _one_class(SEL, "sel", "Sel")
    assert "if q != 5 and not q in (3, 0):  # no call takes it: not written" in code, code
    with pytest.raises(ValueError, match="Sel is written without the branch at 6:9"):
        module.Sel(6, 4)  # type: ignore[attr-defined]
    for q in (0, 3, 5):  # the branches the calls take, at any value that takes them
        out = module.Sel(6, q)(torch.randn(2, 6))  # type: ignore[attr-defined]
        assert out.shape == (2, 4)
    assert check_source(SEL) == []


def test_an_if_inside_a_branch_is_refused_under_the_tests_that_lead_there() -> None:
    module, code = _one_class(NESTED, "nested", "Blk")
    assert "if not flag:  # no call takes it: not written" in code, code
    # True is not 1 in the language (a boolean may reach k): k == 1 tells the kinds apart
    refused = "if flag and not (not isinstance(k, bool) and k == 1) and k != 2:"
    assert f"        # no call takes it: not written\n        {refused}\n" in code, code
    with pytest.raises(ValueError, match="Blk is written without the branch at 9:9"):
        module.Blk(6, False, 1)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="the way past every branch of the if at 5:13"):
        module.Blk(6, True, 3)  # type: ignore[attr-defined]
    for k, width in ((1, 4), (2, 5)):
        out = module.Blk(6, True, k)(torch.randn(2, 6))  # type: ignore[attr-defined]
        assert out.shape == (2, width)
    assert check_source(NESTED) == []


def test_an_if_without_else_that_every_call_runs_refuses_running_none() -> None:
    module, code = _one_class(ALWAYS, "always", "Blk")
    assert "Blk is written without no branch" not in code
    with pytest.raises(ValueError, match="the way past every branch of the if at 8:9"):
        module.Blk(6, True, 1)  # type: ignore[attr-defined]
    net = module.Blk(6, False, 5)  # type: ignore[attr-defined]
    assert bool((net(torch.randn(3, 6)) >= 0).all())  # the relu the source applies at b > 1
    assert check_source(ALWAYS) == []


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
    written ``not p and q == 0 or q == 5`` the guard refused the call ``Sel(true, 5)``."""
    module, code = _one_class(GROUPED, "grouped", "Sel")
    assert "if not p and (not isinstance(q, bool) and q == 0 or q == 5):" in code, code
    assert module.Sel(6, True, 5)(torch.randn(2, 6)).shape == (2, 4)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Sel is written without the branch at 8:9"):
        module.Sel(6, False, 0)  # type: ignore[attr-defined]
    assert check_source(GROUPED) == []


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
