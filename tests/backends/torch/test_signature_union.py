"""Issue 24 item 3: the classes of a block whose calls took different ``if`` branches,
where one branch applies an operation-valued parameter (``act``) and the other leaves it
unused, are one class with the union signature: every call passes ``act`` (the unused one
as the module class of the operation it gave), and only the branch that applies it builds
``self.act``. The generated code is executed (``run_accepted`` compares every shape and
the parameter count with the IR's) and strict-loaded into hand-written twins of the
per-call classes written before (``Sel`` with ``act``, ``Sel_2`` without), with equal
outputs. Where an unused operation has no module form, or the classes differ in a
block-valued parameter, the classes stay apart."""

from __future__ import annotations

import pytest

from aurane.verify import Generated

torch = pytest.importorskip("torch")
nn = torch.nn

from tests.backends.torch.one_class import CLASS, block_class, generated, same  # noqa: E402


def _generated(source: str) -> Generated:
    return generated(source, "signature_union.aur")


_block_class, _same = block_class, same


SEL = """
model Sel(w, act, mode: int = 0):
    def forward(x):
        if mode == 0:
            return x -> dense(w) -> act()
        else:
            return x -> dense(w, bias=false)
"""


class _SelAct(nn.Module):
    """The class of the calls that take the first branch (``Sel`` before)."""

    def __init__(self, in_features: int, w: int, act: type[nn.Module]) -> None:
        super().__init__()
        self.act = act()
        self.dense1 = nn.Linear(in_features, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.dense1(x))


class _SelPlain(nn.Module):
    """The class of the calls that take the second branch (``Sel_2`` before)."""

    def __init__(self, in_features: int, w: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, w, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense1(x)


class _TwoSelTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sel1 = _SelAct(6, 5, nn.GELU)
        self.sel2 = _SelPlain(5, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sel2(self.sel1(x))


def test_an_operation_one_branch_leaves_unused_is_still_taken() -> None:
    gen = _generated(
        SEL
        + """
model Net:
    input_shape = (6,)
    def forward(x):
        x -> Sel(5, gelu) -> Sel(4, relu, mode=1)
        return x
"""
    )
    assert CLASS.findall(gen.code) == ["Sel", "Net"], gen.code
    text = _block_class(gen, "Sel")
    assert "def __init__(self, in_features, w, act, mode=0):" in text, text
    assert "        if mode == 0:\n            self.act = act()\n" in text, text
    assert "self.sel1 = Sel(6, 5, nn.GELU)" in gen.code, gen.code
    # the call whose branch applies no act still passes the operation it gave
    assert "self.sel2 = Sel(5, 4, nn.ReLU, mode=1)" in gen.code, gen.code
    net = gen.module.Net()
    assert not hasattr(net.sel2, "act")  # the unused branch builds nothing from it
    _same(net, _TwoSelTwin(), torch.randn(2, 6))


class _OuterTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sel1 = _SelAct(6, 5, nn.GELU)
        self.sel2 = _SelPlain(5, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sel2(self.sel1(x))


class _OuterNetTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.outer1 = _OuterTwin()
        self.sel1 = _SelPlain(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sel1(self.outer1(x))


def test_an_operation_passed_on_by_a_caller_is_taken_by_both_branches() -> None:
    gen = _generated(
        SEL
        + """
model Outer(act):
    def forward(x):
        return x -> Sel(5, act) -> Sel(4, act, mode=1)

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Outer(gelu) -> Sel(3, relu, mode=1)
        return x
"""
    )
    assert CLASS.findall(gen.code) == ["Sel", "Outer", "Net"], gen.code
    assert "self.sel2 = Sel(5, 4, nn.GELU, mode=1)" in gen.code, gen.code
    assert "self.sel1 = Sel(4, 3, nn.ReLU, mode=1)" in gen.code, gen.code
    _same(gen.module.Net(), _OuterNetTwin(), torch.randn(2, 6))


def test_an_unused_operation_without_a_module_form_keeps_the_split() -> None:
    # softmax has no module class without its dim: nothing to pass for act, so two classes
    gen = _generated(
        SEL
        + """
model Net:
    input_shape = (6,)
    def forward(x):
        x -> Sel(5, gelu) -> Sel(4, softmax, mode=1)
        return x
"""
    )
    assert CLASS.findall(gen.code) == ["Sel", "Sel_2", "Net"], gen.code
    assert "def __init__(self, in_features, w, mode=0):" in _block_class(gen, "Sel_2")
    _same(gen.module.Net(), _TwoSelTwin(), torch.randn(2, 6))


# the fuzz campaign's program that found the split (bench/one_class_per_block.py, seed
# 1000035): the first branch is decided away for both calls
FUZZ = """
model Sel0(p1, p3: int, p4, p5: bool, act, p0: int = 6, p2: int = 3, q6: int = 2):
    c0 = max(1, p1 // 2)
    c1 = min(p2, 8)
    def forward(x):
        if not (q6 > 0 or 2 * q6 + 1 <= 0):
            x -> dense(x.shape[-4] * 2)
            h1 = maxpool(x, ((p0 + 1) // 2, c0, 1))
            h1 -> act()
            return h1
        elif not (q6 in (6, 0)):
            x -> slice(c1, step=min(p3, 8)).residual
            return x
        else:
            x -> dense((max(1, p4 // 2)), bias=p5, transposed=true) as layers.l1
            h1 = act(x)
            return h1

model Net:
    input_shape = (4, 5, 3, 6)
    input_dtype = float32
    def forward(x):
        x -> Sel0(6, 1, 12, true, mish, p2=3, q6=2)
        x -> Sel0(6, p3=1, p4=12, p5=true, act=mish, p2=3, q6=6)
        h1 = rms_norm(x, eps=0.5, elementwise_affine=true, axes=2).relu
        h1 -> rotary_embedding()
        return h1
"""


class _Sel0Residual(nn.Module):
    """``Sel0`` before: the residual branch, no layer."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + x[:, :, :, :]


class _Sel0Dense(nn.Module):
    """``Sel0_2`` before: a transposed dense (weight stored (in, out)), then mish."""

    def __init__(self) -> None:
        super().__init__()
        self.act = nn.Mish()
        self.layers = nn.ModuleDict(dict(l1=_TransposedLinear(6, 6)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.layers.l1(x))


class _TransposedLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight + self.bias


def test_the_fuzz_program_writes_one_class_for_sel0() -> None:
    gen = _generated(FUZZ)
    assert CLASS.findall(gen.code).count("Sel0") == 1, gen.code
    assert "Sel0_2" not in gen.code, gen.code
    text = _block_class(gen, "Sel0")
    assert "def __init__(self, p1, p3, p4, p5, act, p0=6, p2=3, q6=2):" in text, text
    assert "self.sel01 = Sel0(6, 1, 12, True, nn.Mish)" in gen.code, gen.code
    assert "self.sel02 = Sel0(6, 1, 12, True, nn.Mish, q6=6)" in gen.code, gen.code
    torch.manual_seed(0)
    net = gen.module.Net()
    x = torch.randn(2, 4, 5, 3, 6)
    _same(net.sel01, _Sel0Residual(), x)
    _same(net.sel02, _Sel0Dense(), x)


def test_blocks_given_as_an_argument_take_the_same_constructor_arguments() -> None:
    # Unit0 takes its input width (its calls give 8 and 6); Unit1, given to the same
    # parameter, takes it too (was `nn.Linear(6, w)`): Pick0 is one class (was two)
    gen = _generated(
        """
model Unit0(w):
    def forward(x):
        return x -> dense(w, bias=false)

model Unit1(w):
    def forward(x):
        return x -> dense(w).relu

model Pick0(w, block = Unit0):
    def forward(x):
        return x -> block(w) as b1 -> block(w) as b2

model Net:
    input_shape = (1, 6, 8, 8)
    def forward(x):
        x -> Pick0(6)
        x -> Pick0(6, Unit1)
        return x
"""
    )
    assert CLASS.findall(gen.code) == ["Unit0", "Unit1", "Pick0", "Net"], gen.code
    assert "def __init__(self, in_features, w, block=Unit0):" in _block_class(gen, "Pick0")
    assert "def __init__(self, in_features, w):" in _block_class(gen, "Unit1")
    assert "self.pick02 = Pick0(6, 6, block=Unit1)" in gen.code, gen.code
