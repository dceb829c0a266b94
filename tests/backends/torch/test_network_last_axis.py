"""Issue 24 item 3: a network whose width is its last axis (token ids through an
embedding, or ``(seq, features)`` samples) in variants of different widths. The walk
threaded the channels (axis 1), the sequence here, so the head's width after
``mean(dim=1)`` was 'no expression of the source' and each variant kept its class. The
network roller now tries the last axis where the channels fail; and the head after a loop
whose layers the variants count differently, ``dense3`` in one forward and ``dense4`` in
the other, is one local (``dense``). Each variant builds the modules of its class written
out (``roll_networks=False``), strict-loads its weights and computes the same
(``one_class.rolls_exactly``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import rolls_exactly  # noqa: E402

TOKENS = """\
model Net(vocab, width, n):
    def forward(x):
        x -> embedding(vocab, width)
        for i in range(n):
            x -> dense(width).relu as blocks.{i}
        return x -> mean(dim=1) -> dense(2) as head

model small = Net(100, 16, 2):
    input_shape = (5,)
    input_dtype = int64

model large = Net(100, 32, 3):
    input_shape = (5,)
    input_dtype = int64
"""

FEATURES = """\
model Net(width, n):
    def forward(x):
        x -> dense(width)
        for i in range(n):
            x -> dense(width).relu as blocks.{i}
        return x -> mean(dim=1) -> dense(2) as head

model small = Net(16, 2):
    input_shape = (5, 8)

model large = Net(32, 3):
    input_shape = (5, 8)
"""


def test_a_token_network_of_two_widths_is_one_class() -> None:
    code = rolls_exactly(TOKENS, "tokens_last_axis", torch.randint(0, 100, (2, 5)))
    assert "        self.embedding1 = nn.Embedding(vocab, width)\n" in code, code
    assert "        self.head = nn.Linear(channels, 2)\n" in code, code
    # the variants' dense3/dense4 go on as the input: no local named after a module
    assert "        x = x.mean(dim=1)\n        x = self.head(x)" in code, code


def test_a_features_last_network_of_two_widths_is_one_class() -> None:
    code = rolls_exactly(FEATURES, "features_last_axis", torch.randn(2, 5, 8))
    assert "        self.dense1 = nn.Linear(8, width)\n" in code, code
