"""Issue 24 item 3: an unnamed module after a loop in a block whose calls run the loop a
different number of times. Its IR name counts the loop's unnamed modules of the same
operation (``dense3`` after two iterations, ``dense4`` after three), so the calls' classes
named it apart; the rolled class names it by the loop's count (``setattr(self,
f"dense{n + 1}", ...)``, read as ``getattr(self, f"dense{self.n + 1}")``), keeping the
state-dict keys of the build with one class per call (``roll_networks=False``). Each
program runs against its IR, strict-loads that build's state dict and computes the same."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    roll_notes,
    rolled,
)

MLP = """\
model MLP(width, n):
    def forward(x):
        for i in range(n):
            x -> dense(width).relu
        return x -> dense(4)

model Net:
    input_shape = (8,)
    def forward(x):
        x -> MLP(16, 2) as a -> MLP(16, 3) as b -> dense(2) as head
"""


def test_a_head_after_an_unnamed_loop_is_named_by_the_count() -> None:
    """The common MLP: hidden layers unnamed in the loop, the output layer after it."""
    gen, flat = rolled(MLP, "mlp_head", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["MLP", "Net"], gen.code
    assert CLASS.findall(flat) == ["MLP", "MLP_2", "Net"], flat
    text = block_class(gen, "MLP")
    assert '        setattr(self, f"dense{n + 1}", nn.Linear(channels, 4))\n' in text, text
    assert '        return getattr(self, f"dense{self.n + 1}")(x)\n' in text, text
    one, _, _ = build(MLP, "mlp_head_one")
    per_call, _, _ = build(MLP, "mlp_head_flat", roll=False)
    mine, _ = built_alike(one, per_call, "Net")
    assert "b.dense4.weight" in mine.state_dict()


TWO_PER_ITERATION = """\
model Tower(width, n):
    def forward(x):
        for i in range(n):
            x -> dense(width).relu -> dense(width).gelu
        x -> dense(width) -> layer_norm()
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1) as a -> Tower(8, 3) as b -> dense(2) as head
"""


def test_two_unnamed_modules_per_iteration_and_a_threaded_one_after() -> None:
    """Two ``dense`` per iteration: the one after is ``dense{2 * n + 1}``; it threads
    ``x`` on (``x = getattr(...)(x)``) and an unnamed ``layer_norm`` follows, whose name no
    count changes (``self.layer_norm1``)."""
    gen, flat = rolled(TWO_PER_ITERATION, "two_per", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Tower", "Net"], gen.code
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    text = block_class(gen, "Tower")
    assert 'setattr(self, f"dense{2 * n + 1}", nn.Linear(channels, width))' in text, text
    assert 'x = getattr(self, f"dense{2 * self.n + 1}")(x)' in text, text
    assert "self.layer_norm1 = nn.LayerNorm(width)" in text, text
    one, _, _ = build(TWO_PER_ITERATION, "two_per_one")
    per_call, _, _ = build(TWO_PER_ITERATION, "two_per_flat", roll=False)
    built_alike(one, per_call, "Net")


OVER_A_LIST = """\
model Stack(widths):
    def forward(x):
        for i in range(len(widths)):
            x -> dense(widths[i]).relu
        return x -> dense(3)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Stack([8, 8]) as a -> Stack([6, 6, 6]) as b -> dense(2) as head
"""


def test_a_loop_over_a_list_counts_by_its_length() -> None:
    """``for i in range(len(widths))``: the count is ``len(widths)``
    (``len(self.widths)`` in forward)."""
    gen, flat = rolled(OVER_A_LIST, "over_list", torch.randn(2, 5))
    assert CLASS.findall(flat) == ["Stack", "Stack_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    text = block_class(gen, "Stack")
    assert 'setattr(self, f"dense{len(widths) + 1}", nn.Linear(channels, 3))' in text, text
    assert 'return getattr(self, f"dense{len(self.widths) + 1}")(x)' in text, text


SAME_COUNT = MLP.replace("MLP(16, 3) as b", "MLP(8, 2) as b")


def test_calls_at_one_count_still_run_the_loop() -> None:
    """Every call runs the loop twice, and the one class still takes ``n``: it runs the
    source's loop (written out for two, ``MLP(8, 16, 3)`` silently built two layers),
    naming the module after it by the count (``dense3`` at the calls' count, as before)."""
    notes, code = roll_notes(SAME_COUNT)
    assert notes == [], notes
    assert '        setattr(self, f"dense{n + 1}", nn.Linear(channels, 4))\n' in code, code
    one, _, _ = build(SAME_COUNT, "same_count_one")
    per_call, _, _ = build(SAME_COUNT, "same_count_flat", roll=False)
    mine, _ = built_alike(one, per_call, "Net")
    assert "b.dense3.weight" in mine.state_dict()


READ_LATER = MLP.replace(
    "        return x -> dense(4)\n", "        h = x -> dense(width)\n        return add(x, h)\n"
).replace("x -> MLP(16, 2)", "x -> dense(16) as stem -> MLP(16, 2)")


def test_a_second_tensor_after_the_loop_is_named_by_the_count() -> None:
    """``h = x -> dense(width)`` after the loop, joined back: ``h`` is the source's name,
    so the calls' forwards read alike with the module named by the count."""
    gen, flat = rolled(READ_LATER, "read_later", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["MLP", "Net"], gen.code
    assert CLASS.findall(flat) == ["MLP", "MLP_2", "Net"], flat
    text = block_class(gen, "MLP")
    assert '        h = getattr(self, f"dense{self.n + 1}")(x)\n' in text, text


SUM_COUNT = """\
model Tower(width, n):
    def forward(x):
        for i in range(max(n, 1) + len([1, 2])):
            x -> dense(width).relu -> dense(width)
        return x -> dense(4)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1) as a -> Tower(8, 2) as b -> dense(2) as head
"""


def test_a_count_of_several_terms_is_parenthesised() -> None:
    """``range(max(n, 1) + len([1, 2]))`` with two ``dense`` per iteration: the name is
    ``dense{2 * (max(n, 1) + len([1, 2])) + 1}``, not ``2 * max(n, 1) + len(...) + 1``."""
    gen, flat = rolled(SUM_COUNT, "sum_count", torch.randn(2, 6))
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    text = block_class(gen, "Tower")
    assert 'f"dense{2 * (max(n, 1) + len([1, 2])) + 1}"' in text, text
    assert 'f"dense{2 * (max(self.n, 1) + len([1, 2])) + 1}"' in text, text
