"""Operation-valued block parameters with defaults (hunt109 F1, F3). The class's signature
writes the default as the source's default call applies it: ``act = leaky_relu`` applied
``act(0.2)`` is ``act=functools.partial(F.leaky_relu, negative_slope=0.2)``, not
``F.leaky_relu`` (slope 0.01), and a call keeping the default leaves it out. Each class
built with the default left out computes what the per-call build of the source's default
call computes."""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, build, per_call, roll_notes, twin  # noqa: E402

LOOPED = """\
model P(n: int, w: int, act = leaky_relu):
    def forward(x):
        for i in range(n):
            x -> dense(w) -> act(0.2)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5, elu)
        return x
"""

PLAIN = """\
model P(w: int, act = leaky_relu):
    def forward(x):
        x -> dense(w) -> act(0.2)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(4) -> P(5, elu)
        return x
"""

FACTORY = """\
model P(n: int, w: int, act = softmax):
    def forward(x):
        for i in range(n):
            x -> dense(w) -> act(dim=1) as a{i}
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5, log_softmax)
        return x
"""


def _default_built_alike(source: str, name: str, args: tuple[int, ...]) -> None:
    """The rolled ``P`` built at ``args`` with its operation's default left out loads the
    weights of the per-call build of the source's first call (which keeps the default)
    strictly and computes the same."""
    rolled, _, _ = build(source, name)
    separate, _ = per_call(source, f"{name}_per_call")
    torch.manual_seed(0)
    theirs = separate.Net().p1
    mine = rolled.P(*args)
    mine.load_state_dict(theirs.state_dict(), strict=True)
    sample = torch.randn(2, 3, 8)
    with torch.no_grad():
        torch.testing.assert_close(mine(sample), theirs(sample), rtol=0, atol=0)


def _one_class(source: str, name: str) -> str:
    checked = twin(source, name, torch.randn(2, 3, 8))
    assert CLASS.findall(checked.gen.code) == ["P", "Net"], checked.gen.code
    return checked.gen.code


def test_looped_default_keeps_its_arguments() -> None:
    """The roller's class: the default is leaky_relu with the slope the block gives."""
    code = _one_class(LOOPED, "looped_default")
    assert (
        "def __init__(self, in_features, n, w, act=functools.partial(F.leaky_relu, "
        "negative_slope=0.2)):" in code
    ), code
    assert "self.p1 = P(8, 1, 4)\n" in code, code  # the call keeping the default
    assert "self.p2 = P(4, 2, 5, act=functools.partial(F.elu, alpha=0.2))" in code, code
    _default_built_alike(LOOPED, "looped_default_built", (8, 1, 4))


def test_default_without_loops_keeps_its_arguments() -> None:
    """``param_blocks``' class of a block without loops, likewise."""
    code = _one_class(PLAIN, "plain_default")
    assert (
        "def __init__(self, in_features, w, act=functools.partial(F.leaky_relu, "
        "negative_slope=0.2)):" in code
    ), code
    assert "self.p1 = P(8, 4)\n" in code, code
    _default_built_alike(PLAIN, "plain_default_built", (8, 4))


def test_factory_default_keeps_its_arguments() -> None:
    """A named step's module factory: ``nn.Softmax`` over the axis the block gives."""
    code = _one_class(FACTORY, "factory_default")
    assert "act=functools.partial(nn.Softmax, dim=1)):" in code, code
    assert "dim=-1" not in code, code
    assert "self.p1 = P(8, 1, 4)\n" in code, code
    _default_built_alike(FACTORY, "factory_default_built", (8, 1, 4))


def test_default_applied_without_arguments_is_the_bare_function() -> None:
    """``act()``: the operation at its own defaults, as before."""
    source = LOOPED.replace("act(0.2)", "act()").replace("P(2, 5, elu)", "P(2, 5, gelu)")
    code = _one_class(source, "bare_default")
    assert "act=nn.LeakyReLU):" in code or "act=F.leaky_relu):" in code, code
    _default_built_alike(source, "bare_default_built", (8, 1, 4))


def test_default_no_call_gives_with_arguments_is_not_guessed() -> None:
    """No call keeps the default, which the block applies with an argument: the class
    does not write the default at its operation's defaults (slope 0.01); the calls keep
    their classes, with a located note where the roller was asked."""
    source = LOOPED.replace("P(1, 4)", "P(1, 4, softplus)")
    notes, code = roll_notes(source)
    assert "act=F.leaky_relu" not in code, code
    assert notes == ["block 'P' at 1:7: the default of 'act' is no function"]
    module: types.ModuleType = build(source, "guessed")[0]
    assert module.Net()(torch.randn(2, 3, 8)).shape == (2, 3, 5)


ROWS_DEFAULT = """\
model P(w: int, cfg = ((4, relu), (6, tanh))):
    def forward(x):
        for c, a in cfg:
            x -> dense(c) -> a()
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(4) -> P(5, ((3, gelu),))
        return x
"""

LIST_DEFAULT = """\
model P(w: int, acts = [relu, tanh]):
    def forward(x):
        for a in acts:
            x -> dense(w) -> a()
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(4) -> P(5)
        return x
"""

BLOCK_ROWS_DEFAULT = """\
model Unit(w):
    def forward(x):
        return x -> dense(w).relu

model P(w: int, cfg = ((4, Unit), (6, Unit))):
    def forward(x):
        for c, b in cfg:
            x = b(x, c)
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(4) -> P(5, ((3, Unit),))
        return x
"""


def test_rows_default_with_operations_is_written_as_calls_pass_them() -> None:
    """F3: ``lit`` could not write an operation inside a default (``aurane compile``
    crashed where ``aurane check`` passed); the signature writes the rows as a call passes
    them, and the call keeping them leaves them out."""
    code = _one_class(ROWS_DEFAULT, "rows_default")
    assert "def __init__(self, in_features, w, cfg=((4, nn.ReLU), (6, nn.Tanh))):" in code, code
    assert "self.p1 = P(8, 4)\n" in code, code
    _default_built_alike(ROWS_DEFAULT, "rows_default_built", (8, 4))


def test_list_default_with_operations_is_written_as_calls_pass_it() -> None:
    code = _one_class(LIST_DEFAULT, "list_default")
    assert "def __init__(self, in_features, w, acts=(nn.ReLU, nn.Tanh)):" in code, code
    _default_built_alike(LIST_DEFAULT, "list_default_built", (8, 4))


@pytest.mark.parametrize("roll", [True, False])
def test_rows_default_with_blocks_compiles(roll: bool) -> None:
    """Rows of blocks in a default: the classes of one call write them by the block's
    class (``((4, Unit), (6, Unit))``) and the program builds and runs."""
    module, code, _ = build(BLOCK_ROWS_DEFAULT, f"block_rows_{roll}", roll=roll)
    assert "cfg=((4, Unit), (6, Unit))):" in code, code
    assert module.Net()(torch.randn(2, 3, 8)).shape == (2, 3, 5)


PICKED_BLOCK = """\
model Unit0(w):
    def forward(x):
        return x -> dense(w).relu

model Unit1(w):
    def forward(x):
        return x -> dense(w, bias=false)

model Pick0(w, block = Unit0):
    def forward(x):
        return x -> block(w) as b1 -> block(w) as b2

model Net:
    input_shape = (1, 2, 4)
    def forward(x):
        x -> Pick0(4)
        x -> Pick0(4, Unit1)
        return x
"""


@pytest.mark.parametrize("given", [True, False])
def test_inner_block_takes_the_width_an_argument_of_its_caller_changes(given: bool) -> None:
    """F6: on a ``(C, H, W)`` sample the last axis is a spatial one, which the class of a
    block folds where every call gives it alike (4); but ``b2``'s input is the caller's
    ``w`` wide, so ``Pick0(5)`` built ``nn.Linear(4, 5)`` and loaded no weights. The
    inner block's class takes that size and the caller passes ``w``: a block given as a
    parameter (``block(w, w)``) or called by name (``Unit0(w, w)``)."""
    source = PICKED_BLOCK if given else PICKED_BLOCK.replace("block(w)", "Unit0(w)")
    if not given:
        source = source.replace("x -> Pick0(4, Unit1)", "x -> Pick0(4)")
    checked = twin(source, f"picked_{given}", torch.randn(2, 1, 2, 4))
    code = checked.gen.code
    assert "class Unit0(nn.Module):\n    def __init__(self, in_features, w):" in code, code
    callee = "block" if given else "Unit0"
    assert f"self.b1 = {callee}(4, w)\n        self.b2 = {callee}(w, w)\n" in code, code
    rolled, _, _ = build(source, f"picked_other_{given}")
    other = rolled.Pick0(5)  # a width no call gives: the source's Pick0(5)
    assert other(torch.randn(2, 1, 2, 4)).shape == (2, 1, 2, 5)


KINDS = """\
model P(k: int, w: int, a1, a2):
    sizes = [4, 8, 16]
    def forward(x):
        for i in range(k):
            if sizes[i] > 4:
                x -> dense(sizes[i]) -> a1()
            else:
                x -> dense(sizes[i]) -> a2()
        x -> dense(w) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4, relu, tanh) -> P(3, 5, gelu, sigmoid)
        return x
"""


def test_operation_kind_does_not_hang_on_which_calls_ran() -> None:
    """F9: ``P(1, ...)`` never reaches ``a1()``, and the class took ``a1`` as a function
    (``F.relu``) beside ``a2`` as a module class (``nn.Tanh``); a user passing
    ``nn.GELU`` for both got ``nn.GELU(x)``. Both are module classes now, the rolled
    class building ``a1()`` for a call that applies it nowhere as the other calls do (a
    module without state, which only the named modules show: left out of that check)."""
    checked = twin(KINDS, "kinds", torch.randn(2, 3, 8), stateless=False)
    code = checked.gen.code
    assert CLASS.findall(code) == ["P", "Net"], code
    assert "        self.a2 = a2()\n        self.a1 = a1()\n" in code, code
    assert "self.p1 = P(8, 1, 4, nn.ReLU, nn.Tanh)" in code, code
    assert "self.p2 = P(4, 3, 5, nn.GELU, nn.Sigmoid)" in code, code
    assert "F.relu" not in code, code


LAYER = """\
model P(n: int, w: int, norm = layer_norm):
    def forward(x):
        for i in range(n):
            x -> dense(w) -> norm(eps=0.1) as n{i}
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5, rms_norm)
        return x
"""


def test_layer_factory_default_keeps_the_steps_arguments_in_the_class() -> None:
    """A layer's factory: the keyword arguments the step gives stay in the class's call
    (``norm(channels, eps=0.1)``), so the default is the bare class."""
    code = _one_class(LAYER, "layer_default")
    assert "def __init__(self, in_features, n, w, norm=nn.LayerNorm):" in code, code
    assert 'setattr(self, f"n{i}", norm(channels, eps=0.1))' in code, code
    assert "self.p1 = P(8, 1, 4)\n" in code, code
    _default_built_alike(LAYER, "layer_default_built", (8, 1, 4))


APPLIED_BY_NO_CALL = """\
model Fam(w, n, op = relu):
    def forward(x):
        x -> dense(w)
        for i in range(n):
            x -> dense(w).op as layers.{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Fam(4, 0, op=silu) -> Fam(3, 0, op=gelu)
        return x
"""


def test_default_no_call_applies_is_known_from_the_source() -> None:
    """No call runs the loop applying ``op`` (fuzz seed 170000031): the source applies it
    with no argument (``.op``: ``OperationParam.bare``), so the default is ``F.relu``;
    the class reads it as the calls do (a function: ``self.op = op``), not as a module
    class that a phantom at ``n = 1`` applies, which the calls would pass ``F.silu`` to."""
    # (the rolled class's empty ``layers`` container holds no state: left out)
    checked = twin(APPLIED_BY_NO_CALL, "applied_by_no_call", torch.randn(2, 8), stateless=False)
    code = checked.gen.code
    assert "def __init__(self, in_features, w, n, op=F.relu):" in code, code
    assert "self.op = op\n" in code, code
    assert "self.fam1 = Fam(8, 4, 0, op=F.silu)" in code, code
