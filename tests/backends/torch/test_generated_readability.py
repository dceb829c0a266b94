"""Generated code a PyTorch engineer would write (hunt109's F10, F11).

F10: a class whose constructor takes a size (an input size, or a parameter a size is
computed from) wrote its shape comments with the numbers of its calls (``# x: (batch, 3,
8)`` in ``P(in_features, w, s, k)``): wrong as soon as it is built otherwise. Such a
comment now names the sizes as the class does (``# (batch, 3, w)``), or is left out; a
class written for one call keeps its numbers. Each program is still built and run."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, build, twin  # noqa: E402


def _class_text(code: str, name: str) -> str:
    """The lines of the class ``name`` in ``code``."""
    start = code.index(f"class {name}(nn.Module):")
    end = code.find("\nclass ", start + 1)
    return code[start : end if end >= 0 else len(code)]


SHARED = """\
model P(w: int, s: float, k: int):
    def forward(x):
        x -> dense(w) -> leaky_relu(slope=s) -> dense(w * k)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(4, 0.2, 2) -> P(5, 0.2, 2)
        return x
"""


def test_shape_comments_of_a_shared_class_name_its_sizes() -> None:
    module, code, _ = build(SHARED, "shared_comments")
    assert CLASS.findall(code) == ["P", "Net"]
    p = _class_text(code, "P")
    assert "def __init__(self, in_features, w, s, k):" in p
    assert "# x: (batch, 3, in_features)" in p
    assert "x = self.dense1(x)  # (batch, 3, w)" in p
    assert "x = self.dense2(x)  # (batch, 3, w * k)" in p
    assert "(batch, 3, 8)" not in p and "(batch, 3, 4)" not in p
    # the network's class is written for its one call: its numbers stay
    assert "# x: (batch, 3, 8)" in _class_text(code, "Net")
    assert module.Net()(torch.randn(2, 3, 8)).shape == (2, 3, 10)
    # built at other arguments, the class computes what its comments say
    other = module.P(6, 3, 0.1, 3)
    assert other(torch.randn(2, 3, 6)).shape == (2, 3, 9)


JOINED = """\
model P(a: bool, b: bool, w: int):
    def forward(x):
        if a:
            x -> dense(w) as first
        if b:
            x -> dense(w + 1) as second
        else:
            x -> layer_norm() as norm
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(true, false, 4) -> P(false, true, 5)
        return x
"""


def test_shape_comments_of_a_class_joined_over_branches_name_its_sizes() -> None:
    module, code, _ = build(JOINED, "joined_comments")
    p = _class_text(code, "P")
    assert "x = self.first(x)  # (batch, 3, w)" in p
    assert "x = self.second(x)  # (batch, 3, w + 1)" in p
    assert "# (batch, 3, 4)" not in p and "# (batch, 3, 6)" not in p
    assert module.Net()(torch.randn(2, 3, 8)).shape == (2, 3, 5)


TOWER = """\
model Tower(w, a, b):
    def forward(x):
        x -> dense(w) as stem
        for i in range(a):
            for j in range(i + b):
                x -> dense(w).relu
        return x -> dense(3)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1, 2) as t1 -> Tower(8, 2, 3) as t2 -> dense(2) as head
"""


def test_shape_comments_of_a_rolled_class_name_its_sizes() -> None:
    made = twin(TOWER, "tower_comments", torch.randn(2, 6))
    tower = _class_text(made.code, "Tower")
    assert "def __init__(self, in_features, w, a, b):" in tower
    assert "# x: (batch, in_features)" in tower
    assert "x = self.stem(x)  # (batch, w)" in tower
    assert "(batch, 8)" not in tower and "(batch, 6)" not in tower
