"""Operation-valued block parameters as constructor arguments (issue 24 item 3).

``model Unit(width, act):`` called with ``relu`` and with ``gelu`` is one class taking the
module class (``Unit(8, 16, nn.ReLU)``), as torchvision passes ``activation_layer``: each
use of ``act`` is ``act()`` in a container and ``self.act(x)`` in forward. Every case
compiles, runs under the differential check (shapes, dtypes and parameter counts against
the IR) and compares numbers with torch's own functions. Last, the other class argument of
this step: spatial sizes read in forward (``height, width = x.shape[2:]``)."""

from __future__ import annotations

import re
import textwrap

import pytest

from aurane.tools.differential import run_accepted
from aurane.verify import Generated, load_generated

torch = pytest.importorskip("torch")
F = torch.nn.functional

CLASS = re.compile(r"^class (\w+)\(nn\.Module\):", re.MULTILINE)


def _proved(source: str) -> Generated:
    gen = load_generated(textwrap.dedent(source), "ops.aur")
    assert run_accepted(gen, "Net", 0) is None, gen.code
    return gen


def _class(gen: Generated, name: str) -> str:
    start = gen.code.index(f"class {name}(nn.Module):")
    end = gen.code.find("\nclass ", start + 1)
    return gen.code[start:end]


def _dense(layer: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return F.linear(x, layer.weight, layer.bias)


def test_one_class_for_every_operation_given_as_suffix_step_and_call() -> None:
    gen = _proved(
        """
        model Unit(width, act):
            def forward(x):
                h = x -> dense(width).act -> dense(width) as proj
                h = act(h)
                return h -> act

        model Net:
            input_shape = (8,)
            def forward(x):
                x = Unit(x, 16, relu) as a
                x = Unit(x, 16, gelu) as b
                return Unit(x, 4, hardswish) as c
        """
    )
    assert CLASS.findall(gen.code) == ["Unit", "Net"]
    unit = _class(gen, "Unit")
    assert "def __init__(self, in_features, width, act):" in unit
    assert "self.act = act()" in unit
    assert unit.count("self.act(") == 3 and "F.relu" not in unit and "F.gelu" not in unit
    net = _class(gen, "Net")
    for call in ("Unit(8, 16, nn.ReLU)", "Unit(16, 16, nn.GELU)", "Unit(16, 4, nn.Hardswish)"):
        assert call in net
    model = gen.module.Net()
    x = torch.randn(3, 8)
    expected = x
    for block, act in ((model.a, F.relu), (model.b, F.gelu), (model.c, F.hardswish)):
        h = act(_dense(block.dense1, expected))
        expected = act(act(_dense(block.proj, h)))
    assert torch.allclose(model(x), expected, atol=1e-6)


def test_a_default_operation_is_the_signature_default_and_is_left_out_of_calls() -> None:
    gen = _proved(
        """
        model Unit(width, act = relu):
            def forward(x):
                x -> dense(width).act

        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Unit(16) -> Unit(8, act=silu) -> Unit(4, relu)
        """
    )
    assert CLASS.findall(gen.code) == ["Unit", "Net"]
    assert "def __init__(self, in_features, width, act=nn.ReLU):" in _class(gen, "Unit")
    net = _class(gen, "Net")
    assert "Unit(8, 16)" in net and "Unit(16, 8, act=nn.SiLU)" in net and "Unit(8, 4)" in net


def test_in_a_named_container_the_parameter_builds_the_module() -> None:
    """``batchnorm().act`` inside ``as block.*``: ``act()`` sits in the ``nn.Sequential``,
    so the state_dict keys are those of torchvision's Conv2dNormActivation."""
    gen = _proved(
        """
        model ConvAct(out, act):
            def forward(x):
                x = (x -> conv2d(out, 3, padding=1, bias=false) -> batchnorm().act) as block.*
                return x

        model Net:
            input_shape = (3, 8, 8)
            def forward(x):
                x -> ConvAct(8, relu) as first -> ConvAct(8, hardswish) as second
        """
    )
    unit = _class(gen, "ConvAct")
    assert CLASS.findall(gen.code) == ["ConvAct", "Net"]
    assert "act()," in unit and "self.act" not in unit
    model = gen.module.Net().eval()
    assert sorted(model.state_dict()) == sorted(
        f"{b}.block.0.{k}"
        for b in ("first", "second")
        for k in (
            "0.weight",
            "1.weight",
            "1.bias",
            "1.running_mean",
            "1.running_var",
            "1.num_batches_tracked",
        )
    )
    first, second = model.first.block[0], model.second.block[0]
    assert isinstance(first[2], torch.nn.ReLU) and isinstance(second[2], torch.nn.Hardswish)
    x = torch.randn(2, 3, 8, 8)
    h = F.relu(first[1](first[0](x)))
    expected = F.hardswish(second[1](second[0](h)))
    assert torch.allclose(model(x), expected, atol=1e-6)


def test_an_operation_given_arguments_is_a_function_argument() -> None:
    """``act(0.2)`` has no argument-free module form: the class takes a function, each call
    passing its operation with the argument (``functools.partial(F.leaky_relu,
    negative_slope=0.2)``); one class (was one per operation given, with a note)."""
    gen = _proved(
        """
        model Unit(width, act):
            def forward(x):
                x -> dense(width) -> act(0.2)

        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Unit(16, leaky_relu) -> Unit(4, elu)
        """
    )
    assert CLASS.findall(gen.code) == ["Unit", "Net"], gen.code
    assert "        self.act = act\n" in _class(gen, "Unit")
    assert "Unit(8, 16, functools.partial(F.leaky_relu, negative_slope=0.2))" in gen.code
    assert "Unit(16, 4, functools.partial(F.elu, alpha=0.2))" in gen.code
    model = gen.module.Net()
    x = torch.randn(2, 8)
    first, second = model.unit1.dense1, model.unit2.dense1
    expected = F.elu(_dense(second, F.leaky_relu(_dense(first, x), 0.2)), 0.2)
    assert torch.allclose(model(x), expected, atol=1e-6)


def test_a_block_giving_its_operation_to_an_inner_block() -> None:
    """Issue 24 item 3: the inner block takes the class and so does the outer, which passes
    its own parameter on (``Inner(in_features, 8, act)``): one ``Outer`` class for every
    operation given (one per operation before), and every call still runs its own."""
    gen = _proved(
        """
        model Inner(width, act):
            def forward(x):
                x -> dense(width).act

        model Outer(act):
            def forward(x):
                x -> Inner(8, act) -> dense(4)

        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Outer(relu) as a -> Outer(tanh) as b
        """
    )
    assert CLASS.findall(gen.code) == ["Inner", "Outer", "Net"]
    outer = _class(gen, "Outer")
    assert "def __init__(self, in_features, act):" in outer
    assert "Inner(in_features, 8, act)" in outer
    assert "self.a = Outer(8, nn.ReLU)" in gen.code and "self.b = Outer(4, nn.Tanh)" in gen.code
    model = gen.module.Net()
    x = torch.randn(5, 8)
    h = x
    for outer_block, act in ((model.a, torch.relu), (model.b, torch.tanh)):
        inner = outer_block.inner1
        h = _dense(outer_block.dense1, act(_dense(inner.dense1, h)))
    assert torch.allclose(model(x), h, atol=1e-6)


def test_an_operation_passed_on_by_keyword_through_two_blocks_with_defaults() -> None:
    """A call-form block call (the tensor first, ``Inner(h, 8, act=act)``), a default on
    both sides, two levels: one class each, the default left out where it is given."""
    gen = _proved(
        """
        model Inner(width, act = relu):
            def forward(x):
                h = dense(x, width)
                return act(h)

        model Middle(act = relu):
            def forward(x):
                h = Inner(x, 8, act=act)
                return h -> dense(6).act

        model Outer(act):
            def forward(x):
                x -> Middle(act) -> dense(4)

        model Net:
            input_shape = (8,)
            def forward(x):
                x -> Outer(relu) as a -> Outer(gelu) as b
        """
    )
    assert CLASS.findall(gen.code) == ["Inner", "Middle", "Outer", "Net"]
    assert "def __init__(self, in_features, act=nn.ReLU):" in _class(gen, "Middle")
    assert "Inner(in_features, 8, act=act)" in _class(gen, "Middle")
    assert "Middle(in_features, act=act)" in _class(gen, "Outer")
    assert "Outer(8, nn.ReLU)" in gen.code and "Outer(4, nn.GELU)" in gen.code
    model = gen.module.Net()
    x = torch.randn(5, 8)
    h = x
    for outer, act in ((model.a, F.relu), (model.b, F.gelu)):
        middle = outer.middle1
        h = act(_dense(middle.inner1.dense1, h))
        h = _dense(outer.dense1, act(_dense(middle.dense1, h)))
    assert torch.allclose(model(x), h, atol=1e-6)


def test_spatial_sizes_are_read_in_forward_so_one_class_serves_every_resolution() -> None:
    """Issue 24 item 3: a block that reshapes by its input's height and width (diffusers'
    attention) is one class at every resolution, reading ``height, width = x.shape[2:]``;
    a spatial size its constructor needs (``dense`` after ``flatten``) is written as a number,
    so those calls keep one class per resolution."""
    gen = _proved(
        """
        model Mix(c):
            def forward(x):
                h = reshape(x, c, x.shape[2] * x.shape[3])
                h = dense(transpose(h, 1, 2), c) as proj
                h = transpose(h, 1, 2)
                return add(reshape(h, c, x.shape[2], x.shape[3]), x)

        model Head(c):
            def forward(x):
                x -> flatten() -> dense(c) as fc

        model Net:
            input_shape = (4, 8, 8)
            def forward(x):
                x = Mix(x, 4) as big
                x = maxpool(x, 2)
                x = Mix(x, 4) as small
                a = Head(x, 3) as head
                return a
        """
    )
    assert CLASS.findall(gen.code) == ["Mix", "Head", "Net"]
    mix = _class(gen, "Mix")
    assert "height, width = x.shape[2:]" in mix and "height * width" in mix
    assert "nn.Linear(64, c)" in _class(gen, "Head")  # 4 x 4 x 4: folded
    model = gen.module.Net()
    x = torch.randn(2, 4, 8, 8)

    def mix(block: torch.nn.Module, t: torch.Tensor) -> torch.Tensor:
        b, c, hh, ww = t.shape
        h = _dense(block.proj, t.reshape(b, c, hh * ww).transpose(1, 2)).transpose(1, 2)
        return h.reshape(b, c, hh, ww) + t

    h = F.max_pool2d(mix(model.big, x), 2)
    expected = _dense(model.head.fc, mix(model.small, h).flatten(1))
    assert torch.allclose(model(x), expected, atol=1e-5)
