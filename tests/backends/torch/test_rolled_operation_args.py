"""Issue 24 item 3: a block whose calls give an operation-valued parameter operations of
which one has no argument-free module class (``act=exp``, ``act=log_softmax``) is one
class taking a function (``act=F.relu``, a call passing ``torch.exp``), also without
loops, and also where the block passes its parameter on to an inner block (``Inner(width,
act=act)``), whose class then takes the function too. Each program is run against its IR
and its ``Net`` compared with the build of one class per call (the same modules built in
the same order, a strict load, equal outputs)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    one_class_alike,
)

INNER = """\
use torch

model Inner(width, act = relu):
    def forward(x):
        return x -> dense(width) as fc -> act()
"""

LOOPLESS = (
    INNER
    + """
model Net:
    input_shape = (8,)
    def forward(x):
        x -> Inner(16, act=gelu) as a -> Inner(16, act=exp) as b -> dense(4) as head
"""
)


def test_block_without_loops_given_an_operation_without_a_module_class() -> None:
    """``act=gelu`` beside ``act=exp``: one class taking a function (was ``Inner`` and
    ``Inner_2`` with the note ``a block without loops whose calls write ...``)."""
    gen, flat = one_class_alike(LOOPLESS, "loopless", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Net"], gen.code
    assert CLASS.findall(flat) == ["Inner", "Inner_2", "Net"], flat
    text = block_class(gen, "Inner")
    assert "    def __init__(self, in_features, width, act=F.relu):\n" in text, text
    assert "        self.act = act\n" in text, text
    assert "        act1 = self.act(act1)\n" in text, text
    assert "self.a = Inner(8, 16, act=F.gelu)\n" in gen.code, gen.code
    assert "self.b = Inner(16, 16, act=torch.exp)\n" in gen.code, gen.code


PASSED_ON = (
    INNER
    + """
model Outer(width, act = relu):
    def forward(x):
        return x -> Inner(width, act=act) as inner -> dense(width) as out

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Outer(16, act=gelu) as a -> Outer(16, act=exp) as b -> dense(4) as head
"""
)


def test_operation_passed_on_to_an_inner_block_is_a_function_of_both() -> None:
    """``Outer`` passes its ``act`` on to ``Inner``: the inner class's kind is decided
    first (a function), so the outer takes a function too and passes its own parameter
    on (``Inner(in_features, width, act=act)``); one class each (was two each)."""
    gen, flat = one_class_alike(PASSED_ON, "passed_on", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Outer", "Net"], gen.code
    assert CLASS.findall(flat) == ["Inner", "Inner_2", "Outer", "Outer_2", "Net"], flat
    text = block_class(gen, "Outer")
    assert "    def __init__(self, in_features, width, act=F.relu):\n" in text, text
    assert "        self.inner = Inner(in_features, width, act=act)\n" in text, text
    assert "self.act" not in text, text  # applied by the inner class only
    assert "self.a = Outer(8, 16, act=F.gelu)\n" in gen.code, gen.code
    assert "self.b = Outer(16, 16, act=torch.exp)\n" in gen.code, gen.code


THREE_LEVELS = (
    INNER
    + """
model Mid(width, act):
    def forward(x):
        return x -> Inner(width, act) as inner -> act()

model Outer(width, act = relu):
    def forward(x):
        return x -> Mid(width, act) as mid -> dense(width) as out

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Outer(16, act=gelu) as a -> Outer(16, act=exp) as b -> Outer(16) as c
          -> Outer(16, act=log_softmax) as d -> dense(4) as head
"""
)


def test_operation_passed_on_through_two_levels() -> None:
    """``Outer`` to ``Mid`` (which applies it too) to ``Inner``: each one class; a call
    giving the default leaves it out, ``log_softmax`` is passed with its ``dim``."""
    gen, flat = one_class_alike(THREE_LEVELS, "three_levels", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Mid", "Outer", "Net"], gen.code
    # one class per block for each of gelu, exp, relu and log_softmax (each folded, as
    # the classes here take a function: no module for it in either build); and Net
    assert len(CLASS.findall(flat)) == 13, flat
    mid = block_class(gen, "Mid")
    assert "    def __init__(self, in_features, width, act):\n" in mid, mid
    assert "        self.act = act\n        self.inner = Inner(in_features, width, act=act)\n" in (
        mid
    )
    assert "        self.mid = Mid(in_features, width, act)\n" in block_class(gen, "Outer")
    assert "self.c = Outer(16, 16)\n" in gen.code, gen.code
    assert "self.d = Outer(16, 16, act=functools.partial(F.log_softmax, dim=-1))\n" in gen.code


MIXED = (
    INNER
    + """
model Outer(width, act = relu):
    def forward(x):
        return x -> Inner(width, act=act) as inner -> dense(width) as out

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Outer(16, act=gelu) as a -> Inner(16, act=exp) as b -> dense(4) as head
"""
)


def test_outer_block_of_one_call_folds_the_function_it_passes_on() -> None:
    """``Outer`` is called once (with ``gelu``), ``Inner`` also directly with ``exp``: the
    inner class takes a function, and the outer class, one call's, passes ``F.gelu``
    itself and takes no ``act`` it would not use (a module class ``act=nn.GELU`` passed
    on where a function is taken: the reverted attempt's fault)."""
    gen, _ = one_class_alike(MIXED, "mixed", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Outer", "Net"], gen.code
    text = block_class(gen, "Outer")
    assert "    def __init__(self, in_features, width):\n" in text, text
    assert "        self.inner = Inner(in_features, width, act=F.gelu)\n" in text, text
    assert "self.b = Inner(16, 16, act=torch.exp)\n" in gen.code, gen.code


IDENTITY = """\
use torch

model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> dense(width) as fc{i} -> act()
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3, act=exp) as b -> Stage(16, 1, act=identity) as c
          -> dense(4) as head
"""


def test_identity_beside_a_function_is_its_module_instance() -> None:
    """``identity`` applies its module, which has no state: the call passes its instance
    (``act=nn.Identity()``) to the class taking functions (was a class per call with
    ``an operation given for 'act' that is no function``)."""
    gen, flat = one_class_alike(IDENTITY, "identity", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Stage_3", "Net"], flat
    assert "        self.act = act\n" in block_class(gen, "Stage")
    assert "self.c = Stage(16, 16, 1, act=nn.Identity())\n" in gen.code, gen.code


def test_identity_as_a_default_is_none_in_the_signature() -> None:
    """An ``identity`` default would be one ``nn.Identity()`` shared by every instance:
    the signature says ``act=None`` and the constructor builds the module where it is None
    (the calls kept their classes, with the note "the default of 'act' is no function");
    the call giving ``identity`` leaves it out."""
    source = IDENTITY.replace("act = relu", "act = identity").replace(
        "Stage(16, 2) as a", "Stage(16, 2, act=relu) as a"
    )
    gen, _ = one_class_alike(source, "identity_default", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    text = block_class(gen, "Stage")
    assert "    def __init__(self, in_features, width, n, act=None):\n" in text, text
    assert "        self.act = act if act is not None else nn.Identity()\n" in text, text
    assert "self.c = Stage(16, 16, 1)\n" in gen.code, gen.code


NAMED = """\
use torch

model Unit(width, act = relu):
    def forward(x):
        return x -> dense(width) as fc -> act as a1

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Unit(16, act=gelu) as a -> Unit(16, act=log_softmax) as b -> dense(4) as head
"""


def test_named_step_given_a_module_with_arguments_takes_a_factory() -> None:
    """``-> act as a1`` builds a module (``self.a1 = act()``), so no function will do:
    a call whose module takes arguments passes a factory,
    ``functools.partial(nn.LogSoftmax, dim=-1)``, beside ``nn.GELU``; forward applies the
    module built (``self.a1(act1)``), where it wrote each call's function (``F.gelu``,
    ``F.log_softmax``) and the calls were two classes."""
    gen, flat = one_class_alike(NAMED, "named", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert CLASS.findall(flat) == ["Unit", "Unit_2", "Net"], flat
    text = block_class(gen, "Unit")
    assert "    def __init__(self, in_features, width, act=nn.ReLU):\n" in text, text
    assert "        self.a1 = act()\n" in text, text
    assert "        act1 = self.a1(act1)\n" in text, text
    assert "self.a = Unit(8, 16, act=nn.GELU)\n" in gen.code, gen.code
    assert "self.b = Unit(16, 16, act=functools.partial(nn.LogSoftmax, dim=-1))\n" in gen.code


def test_named_step_given_module_classes_isone_class_alike() -> None:
    """``gelu`` beside ``tanh`` through a named step: forward applies ``self.a1``, so the
    calls' classes read alike (they wrote ``F.gelu`` and ``torch.tanh``: two classes)."""
    gen, _ = one_class_alike(
        NAMED.replace("act=log_softmax", "act=tanh"), "named_classes", torch.randn(2, 8)
    )
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert "self.b = Unit(16, 16, act=nn.Tanh)\n" in gen.code, gen.code


NAMED_LOOP = """\
use torch

model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> dense(width) as fc{i} -> act as a{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3, act=log_softmax) as b -> dense(4) as head
"""


def test_named_step_in_a_loop_takes_a_factory() -> None:
    """The same in a loop (was ``an operation-valued argument without a module class``):
    ``setattr(self, f"a{i}", act())``, applied as ``getattr(self, f"a{i}")(x)``."""
    gen, flat = one_class_alike(NAMED_LOOP, "named_loop", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    text = block_class(gen, "Stage")
    assert '            setattr(self, f"a{i}", act())\n' in text, text
    assert '            x = getattr(self, f"a{i}")(x)\n' in text, text
    assert "self.b = Stage(16, 16, 3, act=functools.partial(nn.LogSoftmax, dim=-1))\n" in (gen.code)


OUTER_OF_A_LOOP = """\
use torch

model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> dense(width) as fc{i} -> act()
        return x

model Outer(width, act = relu):
    def forward(x):
        return x -> Stage(width, 2, act=act) as stage -> dense(width) as out

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Outer(16) as a -> Outer(16, act=exp) as b -> Stage(16, 3, act=tanh) as c
          -> dense(4) as head
"""


def test_block_without_loops_passing_a_function_on_to_a_rolled_block() -> None:
    """``Outer`` passes ``act`` on to ``Stage``, whose calls differ in loop counts: the
    rolled class takes a function, and so does ``Outer`` (a loop passing it on to an
    inner block still keeps a class per call: codegen.md)."""
    gen, flat = one_class_alike(OUTER_OF_A_LOOP, "outer_of_a_loop", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stage", "Outer", "Net"], gen.code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Stage_3", "Outer", "Outer_2", "Net"]
    outer = block_class(gen, "Outer")
    assert "        self.stage = Stage(in_features, width, 2, act=act)\n" in outer, outer
    assert "self.b = Outer(16, 16, act=torch.exp)\n" in gen.code, gen.code


PASSED_IN_A_LOOP = (
    INNER
    + """
model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> Inner(width, act=act) as units{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2, act=gelu) as a -> Stage(16, 3, act=exp) as b -> Stage(16, 1) as c
          -> dense(4) as head
"""
)


def test_function_argument_passed_on_in_a_loop() -> None:
    """A block with loops passing its ``act`` on to an inner block: the walk checks the
    inner call's argument against the function the inner class takes (it checked module
    classes only: ``an operation-valued argument without a module class``)."""
    gen, flat = one_class_alike(PASSED_IN_A_LOOP, "passed_in_a_loop", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Stage", "Net"], gen.code
    # per call: a class per operation given, each folding it (the classes here take a
    # function: no module for it in either build)
    inner = ["Inner", "Inner_2", "Inner_3"]
    assert CLASS.findall(flat) == [*inner, "Stage", "Stage_2", "Stage_3", "Net"], flat
    text = block_class(gen, "Stage")
    assert "    def __init__(self, in_features, width, n, act=F.relu):\n" in text, text
    assert 'setattr(self, f"units{i}", Inner(channels, width, act=act))' in text, text
    assert "self.act" not in text, text  # applied by the inner class only
    assert "self.b = Stage(16, 16, 3, act=torch.exp)\n" in gen.code, gen.code
