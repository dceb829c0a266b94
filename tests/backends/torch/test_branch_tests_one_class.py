"""Issue 24 item 3: a block whose calls took different ``if`` branches is one class where
the branch's test reads any axis of the input (``x.shape[-1]``, not only ``x.shape[1]``)
and where one branch builds a layer with ``init=`` (an ``_init_weights`` the other
branch's instances have not). Both split the fuzz generator's ``Sel0`` (seeds 1000411 and
1000955 of ``bench/one_class_per_block.py --seed 1``). The generated code is executed
(``run_accepted`` compares every shape and the parameter count with the IR's) and
strict-loaded into hand-written twins of the per-call classes, with equal outputs."""

from __future__ import annotations

import types

import pytest

from aurane.verify import Generated

torch = pytest.importorskip("torch")
nn = torch.nn

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    generated,
    roll_notes,
    same,
)


def _generated(source: str) -> Generated:
    return generated(source, "branch_tests.aur")


WIDTH = """
model Sel(w, q: int = 4):
    def forward(x):
        if x.shape[-1] == 8 and q > 1:
            return x -> dense(w)
        else:
            return x -> dense(w, bias=false).relu

model Net:
    input_shape = (4, 6, 8)
    def forward(x):
        x -> Sel(6) as a -> Sel(6) as b -> Sel(5, q=1) as c
        return x
"""


class _Dense(nn.Module):
    """The class of the calls that take the first branch."""

    def __init__(self, in_features: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense1(x)


class _Relu(nn.Module):
    """The class of the calls that take the other branch."""

    def __init__(self, in_features: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, w, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.dense1(x))


class _WidthTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = _Dense(8, 6)
        self.b = _Relu(6, 6)
        self.c = _Relu(6, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c(self.b(self.a(x)))


def test_a_test_on_the_last_axis_of_the_input_is_one_class() -> None:
    """``x.shape[-1]`` of an image is its width: the constructor takes it (``in_features``,
    as a dense on the last axis names it) and forward tests the stored size; it was
    ``Sel`` and ``Sel_2`` with the note "a block without loops whose calls write ..."."""
    gen = _generated(WIDTH)
    assert CLASS.findall(gen.code) == ["Sel", "Net"], gen.code
    text = block_class(gen, "Sel")
    assert "def __init__(self, in_features, w, q=4):" in text, text
    assert "if in_features == 8 and q > 1:" in text, text
    assert "if self.in_features == 8 and self.q > 1:" in text, text
    assert "self.a = Sel(8, 6)" in gen.code and "self.c = Sel(6, 5, q=1)" in gen.code
    torch.manual_seed(0)
    same(gen.module.Net(), _WidthTwin(), torch.randn(2, 4, 6, 8))


INIT = """
model Sel(w, fan: bool):
    def forward(x):
        if fan:
            return x -> dense(w, init=kaiming_normal(mode="fan_out", nonlinearity="relu")).relu
        else:
            return x -> dense(w, bias=false)

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Sel(6, true) as a -> Sel(4, false) as b
        return x
"""


class _Fan(nn.Module):
    def __init__(self, in_features: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, w)
        nn.init.kaiming_normal_(self.dense1.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.dense1(x))


class _Plain(nn.Module):
    def __init__(self, in_features: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, w, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense1(x)


class _InitTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = _Fan(8, 6)
        self.b = _Plain(6, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


def test_an_init_in_one_branch_only_is_one_class() -> None:
    """The branch with ``init=`` calls ``self._init_weights()`` after building its layer;
    the other builds no such layer and calls nothing (was ``Sel`` and ``Sel_2``: the
    classes differed between ``__init__`` and forward)."""
    gen = _generated(INIT)
    assert CLASS.findall(gen.code) == ["Sel", "Net"], gen.code
    text = block_class(gen, "Sel")
    assert "        if fan:\n            self.dense1 = nn.Linear(" in text, text
    assert "            self._init_weights()\n" in text, text
    assert text.count("self._init_weights()") == 1, text
    assert "    def _init_weights(self):\n        nn.init.kaiming_normal_(" in text, text
    torch.manual_seed(0)
    net = gen.module.Net()
    # the init ran where the branch built its layer: fan_out kaiming, not nn.Linear's own
    std = net.a.dense1.weight.std().item()
    assert 0.3 < std < 0.9, std  # sqrt(2 / 6) ~ 0.58; the default uniform gives ~ 0.2
    same(net, _InitTwin(), torch.randn(3, 8))


MEMBERSHIP = """
model Unit(w, k):
    def forward(x):
        if k in [5, 1]:
            x = x -> dense(w).relu
        else:
            x = x -> dense(w) -> dense(w)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        return x -> Unit(8, 5) as a -> Unit(8, 3) as b -> dense(2) as head
"""


def test_a_layer_only_the_else_branch_builds_is_tested_as_one_would_write_it() -> None:
    """The ``__init__`` test of a layer only the ``else`` branch makes is the negated
    condition written as Python writes it (``k not in [5, 1]``, not ``not (k in [5, 1])``),
    and the class computes as the calls' own twins do."""
    gen = _generated(MEMBERSHIP)
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    text = block_class(gen, "Unit")
    assert "        if k not in [5, 1]:\n            self.dense2 = nn.Linear(w, w)\n" in text, text
    assert "        if self.k in [5, 1]:\n" in text, text
    for k, layers in ((5, 1), (1, 1), (3, 2)):
        assert len(gen.module.Unit(6, 8, k).state_dict()) == 2 * layers


@pytest.mark.parametrize(
    ("condition", "negation"),
    [
        ("k in [5, 1]", "k not in [5, 1]"),
        ("k not in (6, 0)", "k in (6, 0)"),
        ("self.k == 3", "self.k != 3"),
        ("x.shape[1] != w", "x.shape[1] == w"),
        ("k is None", "k is not None"),
        ("not self.expand", "self.expand"),
        ("self.expand", "not self.expand"),
        ("k < 3", "not (k < 3)"),
        ("k > 1 and k in [5, 1]", "not (k > 1 and k in [5, 1])"),
        ("1 < k < 4", "not (1 < k < 4)"),
    ],
)
def test_negated_conditions_mean_the_opposite(condition: str, negation: str) -> None:
    from aurane.backends.torch.pyexpr import negation as negated

    assert negated(condition) == negation
    for k in (None, 0, 1, 3, 5) if "None" in condition else (0, 1, 3, 5):
        scope = {
            "k": k,
            "w": 4,
            "x": types.SimpleNamespace(shape=(2, k)),
            "self": types.SimpleNamespace(k=k, expand=k == 1),
        }
        assert eval(negation, {}, scope) is (not eval(condition, {}, scope))


SIZE_OR_ARGUMENT = """
model Sel(heads, q):
    def forward(x):
        if x.shape[2] >= 4 or 2 * q + 1 <= 1:
            h = multihead_attention(x, heads, x.shape[2])
            return h -> relu
        else:
            return x -> group_norm(2, eps=0.001)

model Net:
    input_shape = (6, 2)
    def forward(x):
        x -> Sel(2, 3) as a -> dense(8) as up -> Sel(2, 3) as b -> Sel(4, 0) as c
        return x
"""


class _Attend(nn.Module):
    """The class of the calls whose input is wide or whose ``q`` is small."""

    def __init__(self, in_features: int, heads: int) -> None:
        super().__init__()
        self.multihead_attention1 = nn.MultiheadAttention(in_features, heads, batch_first=True)

    def forward(self, x: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        h = self.multihead_attention1(x, x, x, need_weights=False)[0]
        return torch.relu(h)


class _Norm(nn.Module):
    """The class of the other calls: no attention, so forward takes no mask."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.group_norm1 = nn.GroupNorm(2, in_channels, eps=0.001)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.group_norm1(x)


class _SizeOrArgumentTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = _Norm(6)
        self.up = nn.Linear(2, 8)
        self.b = _Attend(8, 2)
        self.c = _Attend(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c(self.b(self.up(self.a(x))))


def test_a_test_on_an_input_size_or_an_argument_is_one_class_with_the_mask_of_either() -> None:
    """Seed 57000260's ``Sel0``: the test mixes the input's width and an argument, and the
    calls take branches building different modules, one of them attention. The branch with
    attention's forward takes ``padding_mask=None``, the other's does not; the class takes
    it (the other branch never reads it). It was ``Sel`` and ``Sel_2`` with the note "a
    block without loops whose calls write ..."."""
    notes, _ = roll_notes(SIZE_OR_ARGUMENT)
    assert notes == [], notes
    gen = _generated(SIZE_OR_ARGUMENT)
    assert CLASS.findall(gen.code) == ["Sel", "Net"], gen.code
    text = block_class(gen, "Sel")
    assert "    def __init__(self, in_channels, in_features, heads, q):\n" in text, text
    assert "        if in_features >= 4 or 2 * q + 1 <= 1:\n" in text, text
    assert "    def forward(self, x, padding_mask=None):\n" in text, text
    assert "        if self.in_features >= 4 or 2 * self.q + 1 <= 1:\n" in text, text
    assert "self.a = Sel(6, 2, 2, 3)" in gen.code and "self.c = Sel(6, 8, 4, 0)" in gen.code
    assert "        x = self.a(x)\n" in gen.code and "x = self.b(x, padding_mask)\n" in gen.code
    torch.manual_seed(0)
    same(gen.module.Net(), _SizeOrArgumentTwin(), torch.randn(3, 6, 2))
