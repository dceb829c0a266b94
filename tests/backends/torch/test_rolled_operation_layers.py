"""Issue 24 item 3: an operation-valued parameter that gives a layer with weights (``norm``
given ``layer_norm``, ``rms_norm`` or ``batchnorm``) is one class taking the layer's class
as a factory (``norm=nn.LayerNorm``, built ``norm(width)``, as torchvision's
``norm_layer``) where the step is named (its state-dict key is then one); unnamed, the
layer is named after each call's operation and the calls keep their classes with a note
saying so. An ``identity`` default beside operations without a module class is
``act=None`` in the signature (a default ``nn.Identity()`` would be one module shared by
every instance), built where it is None. Each program is run against its IR and its
``Net`` compared with the build of one class per call (the same modules built in the same
order, a strict load, equal outputs)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    one_class_alike,
    roll_notes,
)

NORMS = """
model Unit(width, norm = layer_norm):
    def forward(x):
        return x -> dense(width) as fc -> norm() as norm -> relu

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Unit(16) as a -> Unit(16, norm=rms_norm) as b -> Unit(12, norm=batchnorm) as c
        return x
"""


def test_a_named_layer_given_as_an_operation_is_built_by_its_class() -> None:
    """``norm`` given ``layer_norm``, ``rms_norm`` and ``batchnorm``: one class taking the
    layer's class, built with the width (was ``Unit``, ``Unit_2`` and ``Unit_3`` with the
    note "a block without loops whose calls write 'self.norm = nn.LayerNorm(width)'
    against 'self.norm = nn.RMSNorm(width)'")."""
    gen, flat = one_class_alike(NORMS, "norms", torch.randn(3, 8))
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert CLASS.findall(flat) == ["Unit", "Unit_2", "Unit_3", "Net"], flat
    text = block_class(gen, "Unit")
    assert "    def __init__(self, in_features, width, norm=nn.LayerNorm):\n" in text, text
    assert "        self.norm = norm(width)\n" in text, text
    assert "        relu1 = self.norm(relu1)\n" in text, text
    assert "self.a = Unit(8, 16)\n" in gen.code, gen.code
    assert "self.b = Unit(16, 16, norm=nn.RMSNorm)\n" in gen.code, gen.code
    assert "self.c = Unit(16, 12, norm=nn.BatchNorm1d)\n" in gen.code, gen.code


OPTIONS = """
model Unit(width, norm = batchnorm, e = 0.001):
    def forward(x):
        return x -> conv2d(width, 3, padding=1) as conv -> norm(eps=e) as norm -> relu

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Unit(16) as a -> Unit(16, norm=instance_norm, e=0.01) as b -> Unit(8, e=0.1) as c
        return x
"""


def test_a_layer_given_as_an_operation_keeps_the_steps_keywords() -> None:
    """The step's own keyword arguments stay in the class (``norm(width, eps=e)``, as the
    source writes ``norm(eps=e)``); the call gives the layer's class."""
    gen, flat = one_class_alike(OPTIONS, "options", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert CLASS.findall(flat) == ["Unit", "Unit_2", "Net"], flat
    text = block_class(gen, "Unit")
    assert "    def __init__(self, in_channels, width, norm=nn.BatchNorm2d, e=0.001):\n" in text
    assert "        self.norm = norm(width, eps=e)\n" in text, text
    assert "self.a = Unit(3, 16)\n" in gen.code, gen.code
    assert "self.b = Unit(16, 16, norm=nn.InstanceNorm2d, e=0.01)\n" in gen.code, gen.code
    assert "self.c = Unit(16, 8, e=0.1)\n" in gen.code, gen.code


def test_an_unnamed_layer_given_as_an_operation_keeps_its_classes_with_a_note() -> None:
    """Unnamed, the layer's attribute is its operation's (``layer_norm1``, ``rms_norm1``):
    no one class has every call's state-dict keys, so the note says to name it."""
    notes, code = roll_notes(NORMS.replace("-> norm() as norm ->", "-> norm() ->"))
    assert CLASS.findall(code) == ["Unit", "Unit_2", "Unit_3", "Net"], code
    assert notes == [
        "block 'Unit' at 2:7: operation-valued parameter 'norm' builds a layer with weights"
        " named after the operation each call gives (layer_norm1, rms_norm1, batchnorm1);"
        " name it with `as` (`-> norm() as norm`) for one class"
    ], notes


def test_a_default_layer_that_would_build_otherwise_is_not_a_signature_default() -> None:
    """``norm = layer_norm`` on an image normalises its last axis (``nn.LayerNorm(8)``), not
    the channels that ``nn.BatchNorm2d(width)`` takes: a signature ``norm=nn.LayerNorm``
    would build another layer, so the calls keep their classes."""
    source = OPTIONS.replace("norm = batchnorm", "norm = layer_norm").replace(
        "Unit(16) as a", "Unit(16, norm=batchnorm) as a"
    )
    _, code = roll_notes(source)
    assert "norm=nn.LayerNorm" not in code and "norm(width)" not in code, code


IDENTITY = """
use torch

model Inner(width, act = identity):
    def forward(x):
        return x -> dense(width) as fc -> act()

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Inner(16, act=exp) as a -> Inner(16) as b -> Inner(4, act=gelu) as c
"""


def test_an_identity_default_beside_functions_is_none_in_the_signature() -> None:
    """``act = identity`` beside ``exp`` (a function only): ``act=None``, built as
    ``nn.Identity()`` where it is None, so no two instances share a default module (was
    ``Inner`` and ``Inner_2`` with the note "a block without loops whose calls write
    ..."; ``Inner_2`` also built an unused ``self.act1 = nn.Identity()``)."""
    gen, flat = one_class_alike(IDENTITY, "identity", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Inner", "Net"], gen.code
    text = block_class(gen, "Inner")
    assert "    def __init__(self, in_features, width, act=None):\n" in text, text
    assert "        self.act = act if act is not None else nn.Identity()\n" in text, text
    assert "nn.Identity()" not in text.replace("else nn.Identity()", ""), text
    assert "self.b = Inner(16, 16)\n" in gen.code, gen.code
    assert "self.a = Inner(8, 16, act=torch.exp)\n" in gen.code, gen.code
    one, two = gen.module.Inner(8, 16), gen.module.Inner(8, 16)
    assert one.act is not two.act


LOOPED = """
use torch

model Stack(width, n, act = identity):
    def forward(x):
        for i in range(n):
            x -> dense(width) -> act()
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stack(16, 2, act=exp) as a -> Stack(16, 3) as b -> Stack(4, 1, act=gelu) as c
"""


def test_an_identity_default_of_a_rolled_block_is_none_in_the_signature() -> None:
    """The same in a block with a loop (the roller's class)."""
    gen, _ = one_class_alike(LOOPED, "looped", torch.randn(2, 8))
    assert CLASS.findall(gen.code) == ["Stack", "Net"], gen.code
    text = block_class(gen, "Stack")
    assert "    def __init__(self, in_features, width, n, act=None):\n" in text, text
    assert "        self.act = act if act is not None else nn.Identity()\n" in text, text


LOOPED_NORMS = """
model Unit(width, n, norm = batchnorm, e = 0.001):
    def forward(x):
        for i in range(n):
            x -> conv2d(width, 3, padding=1) as conv{i} -> norm(eps=e) as norm{i} -> relu
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Unit(8, 2) as a -> Unit(8, 3, norm=instance_norm, e=0.01) as b -> Unit(4, 1) as c
"""


def test_a_layer_given_as_an_operation_in_a_loop_is_built_with_the_running_width() -> None:
    """In the roller's class the factory is given the width the loop threads
    (``norm(channels, eps=e)``), not called bare (``norm()`` would build no layer)."""
    gen, flat = one_class_alike(LOOPED_NORMS, "looped_norms", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert CLASS.findall(flat) == ["Unit", "Unit_2", "Unit_3", "Net"], flat
    text = block_class(gen, "Unit")
    assert '            setattr(self, f"norm{i}", norm(channels, eps=e))\n' in text, text
    assert "self.b = Unit(8, 8, 3, norm=nn.InstanceNorm2d, e=0.01)\n" in gen.code, gen.code
