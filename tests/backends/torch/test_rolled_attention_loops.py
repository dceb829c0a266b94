"""Issue 24 item 3: a block whose loop applies attention is one class, also where a call
runs the loop no time (its class has no attention, so its forward takes no
``padding_mask``): the rolled forward takes ``padding_mask=None``, which the calls without
attention leave out. A width that no layer reads (attention given its ``dim``) is no
constructor argument. Fuzz seed 68000233's ``Loop0`` (``bench/one_class_per_block.py
--seed 68``). The program is run against its IR and its ``Net`` compared with the build
of one class per call (the same modules built in the same order, a strict load, equal
outputs)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    one_class_alike,
    roll_notes,
    rolled,
)

ATTEND = """
model Attend(heads, n: int):
    def forward(x):
        for i in range(n):
            r = x
            x -> multihead_attention(heads, 6, causal=true)
            x = add(x, r)
        return x

model Net:
    input_shape = (8, 6)
    def forward(x):
        x -> Attend(2, n=2) as a -> Attend(3, n=3) as b -> Attend(3, n=0) as c
        return x
"""


def test_attention_in_a_loop_is_one_class_taking_the_mask() -> None:
    """Was ``Attend``, ``Attend_2`` and ``Attend_3`` with the note "a forward whose inputs
    are written 'def forward(self, x, padding_mask=None):'"."""
    notes, _ = roll_notes(ATTEND)
    assert notes == [], notes
    x = torch.randn(2, 8, 6)
    gen, flat = rolled(ATTEND, "attend", x)
    assert CLASS.findall(gen.code) == ["Attend", "Net"], gen.code
    assert CLASS.findall(flat) == ["Attend", "Attend_2", "Attend_3", "Net"], flat
    text = block_class(gen, "Attend")
    assert "    def __init__(self, heads, n):\n" in text, text
    assert "channels" not in text, text
    assert "    def forward(self, x, padding_mask=None):\n" in text, text
    assert 'getattr(self, f"multihead_attention{i + 1}"), x, padding_mask, causal=True' in text
    assert "self.a = Attend(2, 2)\n" in gen.code and "self.c = Attend(3, 0)\n" in gen.code
    assert "x = self.b(x, padding_mask)\n" in gen.code and "x = self.c(x)\n" in gen.code
    mine, _, _ = build(ATTEND, "attend_mask")
    theirs, _, _ = build(ATTEND, "attend_mask_flat", roll=False)
    one, per_call = built_alike(mine, theirs, "Net")
    one.eval()
    per_call.eval()
    mask = torch.zeros(2, 8, dtype=torch.bool)
    mask[1, 5:] = True
    with torch.no_grad():
        torch.testing.assert_close(one(x, mask), per_call(x, mask), rtol=0, atol=0)


SELF_ATTEND = """
model Loop0(p0, p1: int, n):
    def forward(x):
        for i in range(n):
            h1 = multihead_attention(x, x, (min(p0, 8)), p1 + 1, kdim=4, vdim=4)
            h2 = elu(h1, alpha=2.0)
            x = add(x, h2)
        return x

model Net:
    input_shape = (5,)
    input_dtype = int64
    def forward(x):
        h1 = embedding(x, 16, 4).gelu
        h2 = Loop0(h1, 2, 3, 1)
        h2 -> Loop0(2, 3, 3)
        return h2
"""


def test_attention_given_the_tensor_twice_is_a_step_of_it() -> None:
    """``h1 = multihead_attention(x, x, heads, dim)``: a module of the threaded tensor
    alone, given it as query and key, is a step of it like ``x -> multihead_attention``.
    Was ``Loop0`` and ``Loop0_2`` with the note "an assignment to 'h1' the roller does not
    write" (fuzz seed 1001869)."""
    gen, flat = one_class_alike(SELF_ATTEND, "self_attend", torch.randint(0, 16, (2, 5)))
    assert CLASS.findall(gen.code) == ["Loop0", "Net"], gen.code
    assert CLASS.findall(flat) == ["Loop0", "Loop0_2", "Net"], flat
    text = block_class(gen, "Loop0")
    assert 'getattr(self, f"multihead_attention{i + 1}")(x, x, x, need_weights=False)' in text
