"""Issue 24 item 3: a rolled block class takes the block's parameters as constructor
arguments, so it must compute what the source says at any arguments, not only at the
program's calls. A flag a parameter gives (``causal=p1``, fuzz seed 68000233) is
written as the parameter (``causal=self.p1``) and rolls; a norm's ``axes`` a parameter
gives (``rms_norm(x, axes=p0)``, once ``nn.RMSNorm((8,))`` folded, fuzz seed 36000088's
``axes=2 * p0``) is the input's sizes cut to the last ``p0`` and rolls; a literal stays a
literal and rolls. Each
program is also checked by ``aurane.tools.roll_check``: the rolled class built with the
arguments of each call and with a literal argument of a call changed, against the class
of one call of the program calling it that way."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    generated,
    roll_notes,
    rolled,
    same,
)

CAUSAL = """\
model Attend(causal: bool, n: int):
    def forward(x):
        for i in range(n):
            r = x
            x -> multihead_attention(2, 6, causal=causal)
            x = add(x, r)
        return x

model Net:
    input_shape = (8, 6)
    def forward(x):
        x -> Attend(true, 1) as a -> Attend(true, 2) as b
        return x
"""


def test_a_causal_a_parameter_gives_is_written_as_the_parameter_and_rolls() -> None:
    """The calls' classes write ``causal=self.causal``, not ``causal=True``: one class
    (was one class per call, with the note that ``causal`` is written as its value)."""
    gen, flat = rolled(CAUSAL, "causal", torch.randn(2, 8, 6))
    assert CLASS.findall(gen.code) == ["Attend", "Net"], gen.code
    assert CLASS.findall(flat) == ["Attend", "Attend_2", "Net"], flat
    assert "causal=self.causal" in block_class(gen, "Attend"), gen.code
    mine, _, _ = build(CAUSAL, "causal_one")
    theirs, _, _ = build(CAUSAL, "causal_per_call", roll=False)
    one, per_call = built_alike(mine, theirs, "Net")
    x = torch.randn(2, 8, 6)
    with torch.no_grad():
        torch.testing.assert_close(one.eval()(x), per_call.eval()(x), rtol=0, atol=0)


def test_attend_built_with_another_causal_computes_that_calls_class() -> None:
    """The one class built as ``Attend(False, 2)`` strict-loads and computes the class of
    ``Attend(false, 2)`` compiled one class per call, which no longer masks; and
    ``roll_check`` finds nothing with each literal changed."""
    mine, code, _ = build(CAUSAL, "causal_rolled")
    assert CLASS.findall(code) == ["Attend", "Net"], code
    other = CAUSAL.replace("Attend(true, 2)", "Attend(false, 2)")
    theirs, _, _ = build(other, "causal_false", roll=False)
    torch.manual_seed(0)
    target = theirs.Net().b
    torch.manual_seed(0)
    built = mine.Attend(False, 2)
    same(target, built, torch.randn(2, 8, 6))
    masking = mine.Attend(True, 2)
    masking.load_state_dict(target.state_dict(), strict=True)
    x = torch.randn(2, 8, 6)
    with torch.no_grad():
        assert not torch.allclose(masking.eval()(x), built(x))  # the flag is read
    counts: Counter[str] = Counter()
    assert check_source(CAUSAL, counts) == []
    assert counts["other arguments"] > 0, counts


def test_a_literal_causal_stays_a_literal_and_rolls() -> None:
    """``causal=true`` written in the block: one class writes ``causal=True``."""
    source = CAUSAL.replace("causal=causal", "causal=true")
    gen, flat = rolled(source, "literal_causal", torch.randn(2, 8, 6))
    assert CLASS.findall(gen.code) == ["Attend", "Net"], gen.code
    assert CLASS.findall(flat) == ["Attend", "Attend_2", "Net"], flat
    assert "causal=True" in gen.code
    assert check_source(source) == []


AXES = """\
model Norms(p0, n: int):
    def forward(x):
        for i in range(n):
            h1 = rms_norm(x, axes=p0) as norms{i}
            x = add(x, h1)
        return x

model Net:
    input_shape = (2, 8, 8)
    def forward(x):
        x -> Norms(1, 1) as a -> Norms(1, 2) as b
        return x
"""


def test_norm_axes_a_parameter_gives_roll_into_one_class() -> None:
    """``rms_norm(x, axes=p0)`` is the last ``p0`` sizes of the input (``nn.RMSNorm(8)``
    at these calls), which the class cuts from the input's sizes: one class, taking the
    channels it reads (was a class per call: a rolled one normalised one axis at any
    ``p0``). The twin checks are ``test_rolled_norm_axes.py``'s."""
    notes, code = roll_notes(AXES)
    assert notes == [], notes
    assert CLASS.findall(code) == ["Norms", "Net"], code
    assert 'setattr(self, f"norms{i}", nn.RMSNorm((channels, 8, 8)[-p0:]))' in code, code
    generated(AXES, "axes.aur")


def test_norms_built_with_another_p0_computes_that_calls_class() -> None:
    """``roll_check``: ``Norms(2, 1)`` against the class of ``Norms(2, 1)``: two axes."""
    assert check_source(AXES) == []


def test_literal_axes_stay_a_literal_and_roll() -> None:
    source = AXES.replace("axes=p0", "axes=2")
    gen, flat = rolled(source, "literal_axes", torch.randn(2, 2, 8, 8))
    assert CLASS.findall(gen.code) == ["Norms", "Net"], gen.code
    assert CLASS.findall(flat) == ["Norms", "Norms_2", "Net"], flat
    assert "nn.RMSNorm((8, 8))" in gen.code
    assert check_source(source) == []


# fuzz seed 1000089: the calls' classes write ``x.transpose(-self.p0, self.p1 // 2)``,
# the source's expressions, which the check of folded values took for ``-1`` (its ``-``)
TRANSPOSE = """\
model Swap(p0, p1, n):
    c0 = -p0
    def forward(x):
        for i in range(n):
            r = x
            x -> transpose(c0, p1 // 2).residual
            x = add(x, r)
        return x

model Net:
    input_shape = (4, 4)
    def forward(x):
        x -> Swap(1, 3, 2) as a -> Swap(1, 3, n=1) as b -> flatten() -> dense(2)
"""


def test_a_forward_argument_written_as_the_source_expression_rolls() -> None:
    gen, flat = rolled(TRANSPOSE, "transpose", torch.randn(2, 4, 4))
    assert CLASS.findall(gen.code) == ["Swap", "Net"], gen.code
    assert CLASS.findall(flat) == ["Swap", "Swap_2", "Net"], flat
    assert "x.transpose(-self.p0, self.p1 // 2)" in gen.code, gen.code
    assert check_source(TRANSPOSE) == []


# fuzz seed 76000229: the calls' classes write ``x.chunk((self.p0 + 1) // 2, dim=1)``, the
# source's expression, whose ``2`` the check of folded values took for the count's value
CHUNKS = """\
model Split(p0, n: int):
    def forward(x):
        for i in range(n):
            x -> chunk((p0 + 1) // 2, dim=1, index=0) -> dense(6).relu
        return x

model Net:
    input_shape = (16, 6)
    def forward(x):
        x -> Split(3, 1) as a -> Split(3, 2) as b -> flatten() -> dense(2)
        return x
"""


def test_a_number_of_the_source_expression_equal_to_its_value_rolls() -> None:
    """Was one class per call: 'the chunks of 'chunk1' is written as its value ('2')'."""
    gen, flat = rolled(CHUNKS, "chunks", torch.randn(2, 16, 6))
    assert CLASS.findall(gen.code) == ["Split", "Net"], gen.code
    assert CLASS.findall(flat) == ["Split", "Split_2", "Net"], flat
    assert "x.chunk((self.p0 + 1) // 2, dim=1)[0]" in gen.code, gen.code
    assert check_source(CHUNKS) == []
