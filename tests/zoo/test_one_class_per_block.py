"""One generated class per block (issue 10): sizes that depend on a block's parameters stay
expressions of its constructor parameters, through nested block calls and their outputs,
and boolean/string parameters are passed through instead of splitting the class."""

from __future__ import annotations

import ast as pyast
import functools
import re
import types
from pathlib import Path

import pytest

from aurane.compile import compile_detailed
from aurane.ir.graph import Graph
from aurane.syntax import ast

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import built_alike  # noqa: E402

ZOO = Path(__file__).resolve().parents[2] / "examples" / "zoo"
CLASS = re.compile(r"^class (\w+)\(nn\.Module\):", re.MULTILINE)
MODEL = re.compile(r"^model (\w+)", re.MULTILINE)


@functools.cache
def _zoo_code(stem: str) -> str:
    """The generated Python of ``examples/zoo/<stem>.aur``, compiled once per process:
    several tests read the same program's code (EfficientNet's takes seconds)."""
    source = (ZOO / f"{stem}.aur").read_text(encoding="utf-8")
    return compile_detailed(source, filename=f"{stem}.aur").output


def _module(source: str, name: str) -> tuple[types.ModuleType, str]:
    result = compile_detailed(source, validate=True, filename=f"{name}.aur")
    module = types.ModuleType(name)
    exec(compile(result.output, f"<{name}>", "exec"), module.__dict__)
    return module, result.output


# The family programs (issue 24 item 6) build their network block only through variants
# (``model resnet50 = ResNet(...)``). A network whose body the roller writes (ROLLED,
# backends/torch/rolled.py) is one class with Python loops and each variant a small class
# passing its arguments; the others keep one class per variant with the network's layers
# written out, the network having no class (docs/codegen.md lists why), checked below.
FAMILIES = {"resnet", "vgg", "mobilenet_v3", "efficientnet", "densenet", "convnext"}
ROLLED = {"convnext", "densenet", "efficientnet", "mobilenet_v3", "resnet", "vgg"}
VARIANT = re.compile(r"^model (\w+) = (\w+)\(", re.MULTILINE)
ENTRY = re.compile(r"^class (\w+)\((\w+)\):\n((?:    .*\n|\n)*)", re.MULTILINE)
ANY_CLASS = re.compile(r"^class (\w+)\((?:nn\.Module|\w+)\):", re.MULTILINE)
# the other zoo programs whose network block only variants use, each rolled the same way
# (unet2d: UNet2D, used by UNet2DModel, with two inputs and tuple-assigned block outputs)
ROLLED_NETWORKS = ROLLED | {"unet2d"}
# blocks a family splits into several classes (none since an operation-valued argument,
# act=relu / act=hardswish, became a constructor argument: act=nn.ReLU)
SPLIT: dict[tuple[str, str], int] = {}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_has_one_class_per_block_definition(family: str) -> None:
    """Issue 24 item 3: each block a family defines is one class whatever its calls' input
    shapes, arguments and if branches; each variant is one class (a small subclass of the
    network's class where the network is rolled)."""
    source = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
    code = _zoo_code(family)
    classes = CLASS.findall(code)
    variants = dict(VARIANT.findall(source))
    networks = set(variants.values())
    entries = {m[1]: (m[2], m[3].strip()) for m in ENTRY.finditer(code)}
    expected: list[str] = []
    for model in MODEL.findall(source):
        if model in networks:
            assert classes.count(model) == (family in ROLLED), classes
            expected += [model] if family in ROLLED else []
            continue
        if model in variants and family in ROLLED:
            base, body = entries[model]
            assert base == variants[model], (model, base)
            # the entry passes the variant's arguments and nothing else
            assert body.splitlines()[0] == "def __init__(self):", body
            (init,) = pyast.parse(body).body
            assert isinstance(init, pyast.FunctionDef) and len(init.body) == 1, body
            assert pyast.unparse(init.body[0]).startswith("super().__init__("), body
            continue
        copies = [c for c in classes if c == model or re.fullmatch(rf"{model}_\d+", c)]
        assert len(copies) == SPLIT.get((family, model), 1), (model, copies)
        expected += copies
    helpers = [c for c in classes if c not in expected]
    assert set(helpers) <= {"DropPath", "LayerNorm2d"}, helpers
    # every block definition that is not a network has a class, every variant one
    blocks = [m for m in MODEL.findall(source) if m not in networks and m not in variants]
    rolled = len(networks) if family in ROLLED else 0
    assert len(classes) - len(helpers) == sum(SPLIT.get((family, b), 1) for b in blocks) + (
        rolled or len(variants)
    )
    if family in ROLLED:
        assert sorted(entries) == sorted(variants)


def test_vgg_family_reads_like_torchvision() -> None:
    """The rolled VGG: the config loop appends to ``features`` as torchvision's
    ``make_layers``, ``batch_norm`` a Python ``if``, the classifier one ``nn.Sequential``."""
    code = _zoo_code("vgg")
    assert "    def __init__(self, cfg, batch_norm=False):" in code
    assert (
        "        for v, n in cfg:\n            for _ in range(n):\n                if batch_norm:"
        in code
    )
    assert "self.features.append(nn.Conv2d(channels, v, kernel_size=3, padding=1))" in code
    assert "            self.features.append(nn.MaxPool2d(2, stride=2))" in code
    assert "class vgg16_bn(VGG):" in code
    assert (
        "super().__init__([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], batch_norm=True)"
        in code
    )


def test_densenet_family_reads_like_torchvision() -> None:
    """The rolled DenseNet: ``features`` an ``nn.Sequential`` filled by name as
    torchvision's (``add_module("conv0", ...)``, a stage of ``denselayer{j + 1}`` per dense
    block), the width grown by each layer in the call's terms, one forward applying
    ``features`` whole."""
    code = _zoo_code("densenet")
    assert "    def __init__(self, growth, blocks, init_features, bn_size=4):" in code
    assert '        self.features.add_module("relu0", nn.ReLU())' in code
    assert (
        "            for j in range(n):\n"
        '                stage.add_module(f"denselayer{j + 1}", DenseLayer(channels, growth, bn_size))\n'
        "                channels = channels + growth\n"
        '            self.features.add_module(f"denseblock{i + 1}", stage)\n'
    ) in code
    assert '        self.features.add_module(f"transition{i + 1}", Transition(channels))' in code
    assert "        x = self.features(x)\n        x = F.relu(x)\n" in code
    assert "class densenet161(DenseNet):" in code
    assert "        super().__init__(48, [6, 12, 36, 24], 96)" in code


def test_resnet_family_reads_like_torchvision() -> None:
    """The rolled ResNet: the source's loops in ``__init__``, the width carried from each
    block (``layer.out_channels``, which the block classes store), one forward."""
    code = _zoo_code("resnet")
    assert "    def __init__(self, block, layers, groups=1, width=64):" in code
    assert "        for i, (n, s) in enumerate(zip(layers, [1, 2, 2, 2])):" in code
    assert (
        "                layer = block(channels, 64 * 2 ** i, s if j == 0 else 1, groups, width)"
        in code
    )
    assert '            setattr(self, f"layer{i + 1}", stage)' in code
    assert "        self.fc = nn.Linear(channels, 1000)" in code
    assert code.count("    def forward(self, x):\n        # x: (batch, 3, 224, 224)") == 1
    assert "        self.out_channels = 4 * planes" in code
    assert "        self.out_channels = planes" in code
    assert "class resnet50(ResNet):\n    def __init__(self):\n" in code
    assert "        super().__init__(Bottleneck, [3, 4, 6, 3], groups=32, width=4)" in code


@pytest.mark.parametrize("path", sorted(ZOO.glob("*.aur")), ids=lambda p: p.stem)
def test_zoo_has_one_class_per_model(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    code = _zoo_code(path.stem)
    models = MODEL.findall(source)
    classes = ANY_CLASS.findall(code)
    for model in models:
        assert classes.count(model) == 1, f"{model}: {classes}"
        assert not [c for c in classes if re.fullmatch(rf"{model}_\d+", c)], classes
    helpers = [c for c in classes if c not in models]
    assert set(helpers) <= {"DropPath", "LayerNorm2d", "Positions"}, helpers


def test_unet2d_blocks_are_one_class_each() -> None:
    """AttnUpBlock2D takes three skip tensors whose channel counts differ per call: their
    sizes are constructor arguments named after the inputs, so it is one class (its
    Attention, which reshapes by x.shape, is one class since spatial sizes are read in
    forward). The network UNet2D is one class too, UNet2DModel a subclass passing its
    arguments."""
    source = (ZOO / "unet2d.aur").read_text(encoding="utf-8")
    code = _zoo_code("unet2d")
    classes = ANY_CLASS.findall(code)
    for model in MODEL.findall(source):
        assert classes.count(model) == 1, f"{model}: {classes}"
    assert not [c for c in classes if re.fullmatch(r"\w+_\d+", c)], classes
    assert (
        "self, in_channels, s0_channels, s1_channels, s2_channels, width, up, groups, head_dim"
        in code
    )
    assert "ResnetBlock2D(in_channels + s0_channels, width, groups=groups)" in code


NESTED = """\
use torch

model Gate(channels, squeeze):
    def forward(x):
        g = x -> adaptive_avg_pool(1) -> conv2d(squeeze, kernel=1).silu
              -> conv2d(channels, kernel=1).sigmoid
        return multiply(x, g)

model Unit(width, use_bias=true, mode="constant"):
    def forward(x):
        h = conv2d(x, width, kernel=3, padding=1, bias=use_bias)
        h = pad(h, (1, 1, 1, 1), mode=mode)
        return h

model Stage(hidden, out, flag=true):
    def forward(x):
        h = x -> conv2d(hidden, kernel=1) -> Unit(hidden, use_bias=flag)
        h = Gate(h, hidden, hidden // 2)
        h -> Unit(out, mode="reflect") -> batchnorm(affine=flag)

model Net:
    input_shape = (3, 6, 6)
    def forward(x):
        x -> Stage(8, 4) -> Stage(12, 6, flag=false) -> Unit(5, use_bias=false, mode="replicate")
          -> flatten() -> dense(3)
"""


def test_nested_blocks_and_bool_str_parameters_share_one_class() -> None:
    module, code = _module(NESTED, "nested")
    assert CLASS.findall(code) == ["Gate", "Unit", "Stage", "Net"], code
    # the conv after Gate reads Gate's output channels as the caller's parameter
    assert 'Unit(hidden, out, mode="reflect")' in code
    assert "nn.BatchNorm2d(out, affine=flag)" in code
    assert "bias=use_bias" in code and "mode=self.mode" in code and "self.mode = mode" in code
    assert "Unit(hidden, hidden, use_bias=flag)" in code
    assert "Stage(4, 12, 6, flag=False)" in code
    torch.manual_seed(0)
    net = module.Net()
    # one class, each instance built with its own values
    stage1, stage2 = net.stage1, net.stage2
    assert type(stage1) is type(stage2)
    assert stage1.unit1.conv2d1.bias is not None and stage2.unit1.conv2d1.bias is None
    assert stage1.batchnorm1.affine and not stage2.batchnorm1.affine
    out = net(torch.randn(2, 3, 6, 6))
    assert out.shape == (2, 3)
    out.sum().backward()
    result = compile_detailed(NESTED, filename="nested.aur")
    assert sum(p.numel() for p in net.parameters()) == result.graphs["Net"].parameters


def test_string_parameter_reaches_the_module() -> None:
    module, _ = _module(NESTED, "nested_str")
    net = module.Net()
    x = torch.randn(2, 6, 6, 6)
    unit = net.unit1  # mode="replicate": padded border repeats the edge
    padded = torch.nn.functional.pad(unit.conv2d1(x), (1, 1, 1, 1), mode="replicate")
    assert torch.equal(unit(x), padded)


BRANCHED = """\
use torch

model Unit(planes, stride=1, ratio=1.5):
    wide = make_divisible(ratio * planes, 8)
    def forward(x):
        h = x -> conv2d(int(wide), 3, stride=stride, padding=1) -> conv2d(planes, 1)
        if stride != 1 or x.shape[1] != planes:
            x = (x -> conv2d(planes, 1, stride=stride) -> batchnorm()) as downsample
        return add(h, x).relu

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Unit(8) -> Unit(8) -> Unit(16, stride=2, ratio=2.0) -> Unit(16)
          -> flatten() -> dense(2)
"""


def test_branches_on_parameters_are_one_class_with_python_if() -> None:
    """Issue 24 item 3: calls that take different ``if`` branches (a downsample or not) and
    sizes rounded by ``make_divisible``/``int`` share one class; each call builds its own
    layers, and the parameter count is the IR's."""
    module, code = _module(BRANCHED, "branched")
    assert CLASS.findall(code) == ["Unit", "Net"], code
    assert "        if stride != 1 or in_channels != planes:" in code
    assert "        if self.stride != 1 or self.in_channels != self.planes:" in code
    assert "int(make_divisible(ratio * planes, 8))" in code
    assert code.count("def make_divisible(") == 1
    torch.manual_seed(0)
    net = module.Net()
    assert hasattr(net.unit1, "downsample") and not hasattr(net.unit2, "downsample")
    assert hasattr(net.unit3, "downsample") and not hasattr(net.unit4, "downsample")
    result = compile_detailed(BRANCHED, filename="branched.aur")
    assert sum(p.numel() for p in net.parameters()) == result.graphs["Net"].parameters
    assert net(torch.randn(2, 3, 8, 8)).shape == (2, 2)


def test_generated_make_divisible_is_the_compilers() -> None:
    from aurane.backends.torch.inline import inlined_source
    from aurane.semantics.functions import make_divisible

    space: dict[str, object] = {}
    exec(inlined_source("functions", "make_divisible"), space)
    generated = space["make_divisible"]
    for value in [0.5, 1, 7, 8, 9.6, 12, 37.5, 100, 1001.3]:
        for divisor in (1, 4, 8, 16):
            for floor in (None, 1, 16):
                assert generated(value, divisor, floor) == make_divisible(value, divisor, floor)  # type: ignore[operator]


GROWING = """\
use torch

model DenseLayer:
    def forward(x):
        h = x -> batchnorm().relu -> conv2d(32, 1, bias=false) -> batchnorm().relu
              -> conv2d(8, 3, padding=1, bias=false)
        return concat(x, h, dim=1)

model Net:
    input_shape = (16, 6, 6)
    def forward(x):
        for i in range(12):
            x -> DenseLayer() as layer{i}
        return x -> global_avg_pool() -> dense(3)
"""


def test_parameterless_block_at_many_shapes_is_one_class() -> None:
    """Issue 24 item 3: a block without parameters called at 12 input widths (DenseNet's
    growing input) is one class taking ``in_channels``, not one class per shape."""
    module, code = _module(GROWING, "growing")
    assert CLASS.findall(code) == ["DenseLayer", "Net"], CLASS.findall(code)
    assert "def __init__(self, in_channels):" in code
    assert "self.layer0 = DenseLayer(16)" in code and "self.layer11 = DenseLayer(104)" in code
    net = module.Net()
    result = compile_detailed(GROWING, filename="growing.aur")
    assert sum(p.numel() for p in net.parameters()) == result.graphs["Net"].parameters
    assert net(torch.randn(2, 16, 6, 6)).shape == (2, 3)
    # the IR the tools see keeps its per-shape block graphs (no parameters)
    assert all(n.subgraph.block_params is None for n in result.graphs["Net"].nodes if n.subgraph)


CONSTANT_TEST = """\
use torch

base = 8

model Unit(planes):
    def forward(x):
        h = x -> conv2d(planes, 3, padding=1)
        if planes > base:
            h = h -> batchnorm() as norm
        elif planes < base // 2:
            h = h -> dropout(0.1)
        return relu(h)

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Unit(8) -> Unit(16) -> Unit(2) -> flatten() -> dense(2)
"""


def test_branch_test_reads_program_constants_and_elif() -> None:
    """A test on a program constant prints its value; an ``elif`` is the ``else`` side's
    own ``if``; each instance builds exactly its branch."""
    module, code = _module(CONSTANT_TEST, "constant_test")
    assert CLASS.findall(code) == ["Unit", "Net"], code
    assert "if planes > 8:" in code and "elif planes < 8 // 2:" in code
    net = module.Net().eval()
    assert hasattr(net.unit2, "norm") and not hasattr(net.unit1, "norm")
    result = compile_detailed(CONSTANT_TEST, filename="constant_test.aur")
    assert sum(p.numel() for p in net.parameters()) == result.graphs["Net"].parameters
    assert net(torch.randn(2, 3, 8, 8)).shape == (2, 2)


LOOPED = """\
use torch

model Stage(width, n):
    def forward(x):
        for i in range(n):
            x -> dense(width).relu as layers{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3) as b -> dense(4) as head
"""

# an if inside the loop, on the loop's target and on a bool parameter: each branch is
# taken by some call (the first iteration, last_act, not last_act)
LOOPED_BRANCHES = """\
use torch

model Stage(width, n, last_act: bool = true):
    def forward(x):
        for i in range(n):
            if i == 0:
                x -> dense(width).relu as layers{i}
            elif last_act:
                x -> dense(width) as layers{i} -> layernorm() as norms{i}
            else:
                x -> dense(width).tanh as layers{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3, false) as b -> Stage(12, 1) as c -> dense(4) as head
"""


def _same_modules(source: str, name: str, entry: str, x: torch.Tensor) -> tuple[str, str]:
    """The program with its blocks rolled and with each call's class written out
    (``roll_networks=False``): the same state-dict keys, shapes and initial weights (the
    modules are built in the same order), a strict load, equal outputs; and the generated
    codes."""
    rolled, code = _generated(source, name, True)
    unrolled, flat = _generated(source, f"{name}_flat", False)
    mine, theirs = built_alike(rolled, unrolled, entry)
    torch.manual_seed(1)
    fresh = getattr(rolled, entry)()
    fresh.load_state_dict(theirs.state_dict(), strict=True)
    torch.testing.assert_close(fresh(x), theirs(x))
    graph = compile_detailed(source, filename=f"{name}.aur").graphs[entry]
    assert sum(p.numel() for p in fresh.parameters()) == graph.parameters
    return code, flat


def test_loop_count_on_a_parameter_is_one_class_with_python_loops() -> None:
    """Issue 24 item 3: a block whose calls differ only in a loop count is one class whose
    ``__init__`` and ``forward`` run the source's loop, ``n`` a constructor argument; the
    state-dict keys are the program's names (``a.layers0.weight``)."""
    code, flat = _same_modules(LOOPED, "looped", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert "    def __init__(self, in_features, width, n):\n" in code
    assert (
        "        channels = in_features\n"
        "        for i in range(n):\n"
        '            setattr(self, f"layers{i}", nn.Linear(channels, width))\n'
        "            channels = width\n"
    ) in code, code
    assert (
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"layers{i}")(x)\n'
        "            x = F.relu(x)\n"
        "        return x\n"
    ) in code, code
    assert "self.a = Stage(8, 16, 2)" in code and "self.b = Stage(16, 16, 3)" in code
    module, _ = _generated(LOOPED, "looped_keys", True)
    keys = list(module.Net().state_dict())
    assert keys[:4] == ["a.layers0.weight", "a.layers0.bias", "a.layers1.weight", "a.layers1.bias"]
    assert "b.layers2.weight" in keys


ZERO_COUNT = """\
use torch

model Stage(width, n: int):
    def forward(x):
        for i in range(n):
            x -> dense(width).relu as layers{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 0) as a -> Stage(16, 2) as b -> Stage(16, 0) as c -> dense(4) as head
"""


def test_block_call_whose_loop_runs_no_iteration_shares_the_rolled_class() -> None:
    """Issue 24 item 3: a call running the loop zero times (``Stage(16, 0)``) uses the
    class another call's iterations wrote, the loop in both methods; the rolled class is
    the identity there, as the class written for that call alone."""
    code, flat = _same_modules(ZERO_COUNT, "zero_count", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert (
        "        for i in range(n):\n"
        '            setattr(self, f"layers{i}", nn.Linear(channels, width))\n'
        "            channels = width\n"
    ) in code, code
    assert (
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"layers{i}")(x)\n'
        "            x = F.relu(x)\n"
        "        return x\n"
    ) in code, code
    assert "self.a = Stage(8, 16, 0)" in code and "self.c = Stage(16, 16, 0)" in code, code
    module, _ = _generated(ZERO_COUNT, "zero_count_identity", True)
    net = module.Net()
    assert type(net.a) is type(net.b) is type(net.c)
    assert list(net.a.state_dict()) == [] and list(net.c.state_dict()) == []
    x = torch.randn(3, 8)
    assert torch.equal(net.a(x), x)
    y = torch.randn(3, 16)
    assert torch.equal(net.c(y), y)


def test_block_loop_filling_a_numbered_container_is_one_class() -> None:
    """``as layers.{i}``: the loop fills an ``nn.Sequential`` (keys ``a.layers.0.weight``)
    and forward indexes it with the loop's target."""
    source = LOOPED.replace("as layers{i}", "as layers.{i}")
    code, flat = _same_modules(source, "container", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert "            stage.append(nn.Linear(channels, width))\n" in code
    assert "        self.layers = stage\n" in code, code  # a plain name: no setattr
    assert "            x = self.layers[i](x)\n" in code, code
    module, _ = _generated(source, "container_keys", True)
    assert "b.layers.2.weight" in module.Net().state_dict()


NESTED_LOOPS = """\
use torch

model Grid(width, n, m):
    def forward(x):
        for i in range(n):
            for j in range(m):
                x -> dense(width + j).relu as l{i}x{j}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Grid(4, 1, 2) as a -> Grid(4, 2, 2) as b -> dense(2) as head
"""

LIST_LOOP = """\
use torch

model Widths(widths):
    def forward(x):
        for k, w in enumerate(widths):
            x -> dense(w).relu as fc{k}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Widths([16, 8]) as a -> Widths([4, 4, 6]) as b -> dense(2) as head
"""

# two numbered containers filled by one loop: no ``stage`` the roller could fill (it
# wrote ``stage.append`` without one), so each call keeps its class
TWO_CONTAINERS = """\
use torch

model ConvStage(width, n, stride=1):
    def forward(x):
        for i in range(n):
            x -> conv2d(width, 3, stride=stride if i == 0 else 1, padding=1) as convs.{i}
              -> batchnorm().relu as norms.{i}
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> ConvStage(4, 1) as s1 -> ConvStage(8, 2, stride=2) as s2 -> global_avg_pool()
          -> dense(2) as head
"""


@pytest.mark.parametrize(
    ("source", "shape", "classes"),
    [
        (NESTED_LOOPS, (2, 8), ["Grid", "Net"]),
        (LIST_LOOP, (2, 8), ["Widths", "Net"]),
        (TWO_CONTAINERS, (2, 3, 8, 8), ["ConvStage", "ConvStage_2", "Net"]),
        # an inner loop running no iteration at one call: the other call's body fills it
        (NESTED_LOOPS.replace("Grid(4, 1, 2)", "Grid(4, 1, 0)"), (2, 8), ["Grid", "Net"]),
        # a loop that runs no iteration and fills a numbered container: an empty one
        (ZERO_COUNT.replace("as layers{i}", "as layers.{i}"), (2, 8), ["Stage", "Net"]),
    ],
    ids=["nested", "list", "two-containers", "nested-zero", "zero-container"],
)
def test_block_loops_roll_or_fall_back_exactly(
    source: str, shape: tuple[int, ...], classes: list[str]
) -> None:
    """Nested loops and a loop over a list parameter are one class; a loop the roller
    cannot write keeps a class per call. Either way the modules and outputs are those of
    the classes written out."""
    code, _ = _same_modules(source, "loops", "Net", torch.randn(*shape))
    assert CLASS.findall(code) == classes, code


def test_if_inside_a_block_loop_is_a_python_if_in_both_methods() -> None:
    """An ``if`` in the loop is a Python ``if``/``elif``/``else`` on the source's tests in
    ``__init__`` and ``forward`` (forward reads ``self.last_act``), each branch written
    from a call that takes it: three calls, one class."""
    code, flat = _same_modules(LOOPED_BRANCHES, "branches", "Net", torch.randn(3, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Stage_3", "Net"], flat
    assert "    def __init__(self, in_features, width, n, last_act=True):\n" in code
    assert "        self.last_act = last_act\n        self.n = n\n" in code
    assert (
        "            elif self.last_act:\n"
        '                x = getattr(self, f"layers{i}")(x)\n'
        '                x = getattr(self, f"norms{i}")(x)\n'
        "            else:\n"
        '                x = getattr(self, f"layers{i}")(x)\n'
        "                x = torch.tanh(x)\n"
    ) in code, code
    assert '                setattr(self, f"norms{i}", nn.LayerNorm(channels))\n' in code


# the first call's forward (one unit, then the multiply) has as many statements as the
# rolled forward (the loop, then the multiply): a map made from it would be wrong
UNITS = """\
use torch

model Unit(width, scale=1.0):
    def forward(x):
        h = x -> dense(width).relu as fc
        return add(x, multiply(h, scale))

model Stage(width, n, scale=1.0):
    def forward(x):
        for i in range(n):
            x -> Unit(width, scale) as units{i}
        x = multiply(x, scale)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(8, 1) as a -> Stage(8, 3, 0.5) as b -> dense(2) as head
"""


def test_verify_names_a_rolled_block_as_not_traced() -> None:
    """``aurane verify`` checks the program around a rolled block and names the block's
    class as not traced (its forward lines up with no single call's graph), never a false
    mismatch; the source-map table has no entries for it."""
    from aurane.verify import load_generated, verify_model

    code, _ = _same_modules(UNITS, "units", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Unit", "Stage", "Net"], code
    gen = load_generated(UNITS, "units.aur")
    report = verify_model(gen, "Net", device="meta")
    assert not report.diagnostics, report.diagnostics
    assert report.unmapped_classes == ["Stage"], report.unmapped_classes
    assert report.values_checked >= 3, report
    table = gen.code[gen.code.index("# aurane-source-map") :]
    stage = re.search(r"^class Stage.*?^class Net", gen.code, re.MULTILINE | re.DOTALL)
    assert stage is not None
    first = gen.code[: stage.start()].count("\n") + 1
    last = gen.code[: stage.end()].count("\n")
    mapped = {int(m) for m in re.findall(r"(\d+)(?:-\d+)?=", table)}
    assert not {line for line in mapped if first <= line < last}, table


UNNAMED_IN_LOOP = """\
use torch

model Stack(n, width):
    def forward(x):
        for h in range(2):
            x -> dense(width)
            for i in range(n):
                for j in range(i + 1):
                    x -> dense(width).relu
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stack(2, 8) -> Stack(3, 8) -> dense(2)
"""


def test_block_loop_the_roller_cannot_write_keeps_a_class_per_call() -> None:
    """The documented fallback: an unnamed module in a loop whose IR names follow no
    progression the roller writes (a triangle of loops, ``range(i + 1)``, inside another
    loop that makes one outside it too: one running count of the inner iterations does
    not number both) is not rolled; the reason names the block, its line and the step,
    and each call keeps its exact class. (The examples were a second loop numbering on
    from the first, which rolls since ``dense{n + j + 1}``, a triangle alone, which rolls
    since its running count, and a triangle inside another loop making none outside it,
    which rolls since that count goes on across the outer loop.)"""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(UNNAMED_IN_LOOP, filename="unnamed.aur")
    generator = TorchCodeGenerator(program, graphs)
    code = generator.generate()
    module = types.ModuleType("unnamed")
    exec(compile(code, "<unnamed>", "exec"), module.__dict__)
    reasons = generator.roll_fallbacks
    assert CLASS.findall(code) == ["Stack", "Stack_2", "Net"], code
    assert [str(r) for r in reasons] == [
        "block 'Stack' at 3:7: an unnamed 'dense' module in a loop at 6:18"
    ], reasons
    assert reasons[0].note == (  # what aurane compile prints after "note: "
        "block 'Stack' at 3:7 stays one class per call: an unnamed 'dense' module in a loop at 6:18"
    )
    net = module.Net()
    graph = compile_detailed(UNNAMED_IN_LOOP, filename="unnamed.aur").graphs["Net"]
    assert sum(p.numel() for p in net.parameters()) == graph.parameters
    assert net(torch.randn(2, 4)).shape == (2, 2)


# block constants: ``hidden`` sizes the layers, ``reps`` bounds the loop (forward reads it)
CONSTANTS = """\
use torch

model Stage(width, n):
    hidden = 4 * width
    reps = n + 1
    def forward(x):
        for i in range(reps):
            x -> dense(hidden).relu as up{i} -> dense(width) as down{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 1) as a -> Stage(8, 2) as b -> dense(4) as head
"""


def test_block_constants_are_locals_of_the_rolled_class() -> None:
    """Issue 24 item 3: a block's constants are locals of the rolled ``__init__`` written
    as the source's expressions; one forward reads is stored (``range(self.reps)``)."""
    code, flat = _same_modules(CONSTANTS, "constants", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert (
        "        super().__init__()\n"
        "        hidden = 4 * width\n"
        "        reps = n + 1\n"
        "        self.reps = reps\n"
        "        channels = in_features\n"
        "        for i in range(reps):\n"
        '            setattr(self, f"up{i}", nn.Linear(channels, hidden))\n'
    ) in code, code
    assert "        for i in range(self.reps):\n" in code, code


# a residual MLP stage: a second tensor made from the threaded one and added back
RESIDUAL = """\
use torch

model Stage(width, n):
    hidden = 2 * width
    def forward(x):
        for i in range(n):
            h = x -> layernorm() as norms{i} -> dense(hidden).gelu as up{i}
                  -> dense(width) as down{i}
            x = add(x, h)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(16) as stem -> Stage(16, 2) as a -> Stage(16, 3) as b -> dense(4) as head
"""


def test_inline_residual_in_a_block_loop_is_one_class() -> None:
    """Issue 24 item 3: ``h = x -> ...`` then ``x = add(x, h)`` in the loop: ``__init__``
    builds the second tensor's layers from the running width, forward threads both."""
    code, flat = _same_modules(RESIDUAL, "residual", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert (
        "        for i in range(self.n):\n"
        '            h = getattr(self, f"norms{i}")(x)\n'
        '            h = getattr(self, f"up{i}")(h)\n'
        "            h = F.gelu(h)\n"
        '            h = getattr(self, f"down{i}")(h)\n'
        "            x = x + h\n"
        "        return x\n"
    ) in code, code
    assert '            setattr(self, f"down{i}", nn.Linear(channels, width))\n' in code


# the other residual spelling: the loop keeps its input under a second name, then adds it
ALIAS = """\
use torch

model Stage(width, n):
    def forward(x):
        for i in range(n):
            r = x
            x -> layernorm() as norms{i} -> dense(width).gelu as fc{i}
            x = add(x, r)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(16) as stem -> Stage(16, 2) as a -> Stage(16, 3) as b -> dense(4) as head
"""


@pytest.mark.parametrize(
    ("join", "added"), [("add(x, r)", "gelu + x"), ("add(r, x)", "x + gelu")], ids=["x-r", "r-x"]
)
def test_aliased_residual_in_a_block_loop_is_one_class(join: str, added: str) -> None:
    """Issue 24 item 3: ``r = x`` (no module, no statement of forward) then a body that
    rebinds ``x`` and ``x = add(x, r)`` in either order: one class, its forward the loop of
    what each call's forward writes per iteration."""
    source = ALIAS.replace("add(x, r)", join)
    code, flat = _same_modules(source, f"alias_{join[4]}", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert (
        "        for i in range(self.n):\n"
        '            layer_norm = getattr(self, f"norms{i}")(x)\n'
        '            dense = getattr(self, f"fc{i}")(layer_norm)\n'
        "            gelu = F.gelu(dense)\n"
        f"            x = {added}\n"
        "        return x\n"
    ) in code, code
    assert '            setattr(self, f"fc{i}", nn.Linear(channels, width))\n' in code, code
    assert "self.a = Stage(16, 16, 2)" in code and "self.b = Stage(16, 16, 3)" in code


# an operation-valued parameter: a module class argument, as a class of one call takes it
ACTIVATION = """\
use torch

model Stage(width, n, act = relu):
    def forward(x):
        for i in range(n):
            x -> dense(width) as fc{i} -> act()
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(16, 2) as a -> Stage(16, 3, act=tanh) as b -> dense(4) as head
"""


def test_operation_valued_argument_of_a_rolled_block_is_a_module_class() -> None:
    """Issue 24 item 3: ``act = relu`` is ``act=nn.ReLU`` in the rolled constructor, built
    once as ``self.act = act()``; the call giving tanh passes ``act=nn.Tanh``."""
    code, flat = _same_modules(ACTIVATION, "activation", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert "    def __init__(self, in_features, width, n, act=nn.ReLU):\n" in code, code
    assert "        self.n = n\n        self.act = act()\n" in code, code
    assert "            x = self.act(x)\n" in code, code
    assert "self.b = Stage(16, 16, 3, act=nn.Tanh)" in code, code
    module, _ = _generated(ACTIVATION, "activation_tanh", True)
    assert isinstance(module.Net().b.act, torch.nn.Tanh)


# ``.residual``: forward numbers its temporary per node (dense1, dense2, ...)
RESIDUAL_SUFFIX = """\
use torch

model Stage(width, n):
    def forward(x):
        for i in range(n):
            x -> dense(width).residual as fc{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(16) as stem -> Stage(16, 2) as a -> Stage(16, 3) as b -> dense(4) as head
"""


def test_residual_suffix_in_a_block_loop_names_its_temporary_once() -> None:
    """The temporary each iteration's ``.residual`` makes (``dense1``, ``dense2``) is one
    local of the loop's body, ``dense``, read only there."""
    code, flat = _same_modules(RESIDUAL_SUFFIX, "residual_suffix", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert (
        "        for i in range(self.n):\n"
        '            dense = getattr(self, f"fc{i}")(x)\n'
        "            x = x + dense\n"
        "        return x\n"
    ) in code, code


# all three at once: a constant, an operation argument inside the residual and on the join
RESIDUAL_ACT = """\
use torch

model Stage(width, n, act = relu):
    hidden = 2 * width
    def forward(x):
        for i in range(n):
            h = x -> dense(hidden) as up{i} -> act() -> dense(width) as down{i}
            x = add(x, h).act
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> dense(16) as stem -> Stage(16, 2) as a -> Stage(16, 3, act=gelu) as b
          -> dense(4) as head
"""


def test_residual_stage_with_a_constant_and_an_operation_argument_is_one_class() -> None:
    code, flat = _same_modules(RESIDUAL_ACT, "residual_act", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert "            x = x + h\n            x = self.act(x)\n" in code, code
    assert "self.b = Stage(16, 16, 3, act=nn.GELU)" in code, code


# what stays one class per call: an operation argument that is no function of the tensor
# (layer_norm, a module with weights); a join that grows the width and an operation
# without an argument-free module class (exp) roll (tests/backends/torch/
# test_rolled_block_forms.py)


@pytest.mark.parametrize(
    ("source", "classes", "reason"),
    [
        (
            ACTIVATION.replace("act=tanh", "act=layer_norm").replace(
                "Stage(16, 2) as a", "Stage(16, 2, act=exp) as a"
            ),
            ["Stage", "Stage_2", "Net"],
            "block 'Stage' at 3:7: an operation given for 'act' that is no function",
        ),
        (
            RESIDUAL.replace(  # the second's width is the local's, which x changes
                "h = x -> layernorm() as norms{i} -> dense(hidden).gelu as up{i}\n"
                "                  -> dense(width) as down{i}\n"
                "            x = add(x, h)\n",
                "h = x -> layernorm() as norms{i}\n"
                "            x -> dense(width) as skips{i}\n"
                "            x = concat(x, h, dim=1)\n",
            ),
            ["Stage", "Stage_2", "Net"],
            "block 'Stage' at 3:7: 'x' goes on before 'h' is joined",
        ),
        (
            ALIAS.replace(
                "            x = add(x, r)\n",
                "            x = add(x, r)\n            x = add(x, r)\n",
            ),
            ["Stage", "Stage_2", "Net"],
            "block 'Stage' at 3:7: a use of 'r' other than its join",
        ),
        (
            ALIAS.replace(
                "            x = add(x, r)\n",
                "            x = multiply(x, r)\n            x = add(x, r)\n",
            ),
            ["Stage", "Stage_2", "Net"],
            "block 'Stage' at 3:7: a use of 'r' other than its join",
        ),
    ],
    ids=[
        "norm-argument",
        "threaded-before-join",
        "alias-read-after-join",
        "alias-read-before-join",
    ],
)
def test_block_loops_that_stay_one_class_per_call_say_why(
    source: str, classes: list[str], reason: str
) -> None:
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(source, filename="kept.aur")
    generator = TorchCodeGenerator(program, graphs)
    code = generator.generate()
    assert CLASS.findall(code) == classes, code
    assert [str(r) for r in generator.roll_fallbacks] == [reason]
    _same_modules(source, "kept", "Net", torch.randn(2, 8))


def test_alias_that_nothing_reads_is_one_class() -> None:
    """``r = x`` never joined back: nothing reads ``r`` and it makes no module, so the
    loop rolls as without it (was ``the tensor 'r' is not joined back``)."""
    source = ALIAS.replace("            x = add(x, r)\n", "")
    code, flat = _same_modules(source, "alias_unread", "Net", torch.randn(2, 8))
    assert CLASS.findall(code) == ["Stage", "Net"], code
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert " r = " not in code, code


ROLLING = """\
use torch

model Basic(planes, stride=1):
    def forward(x):
        h = x -> conv2d(planes, kernel=3, stride=stride, padding=1, bias=false) as conv1
              -> batchnorm().relu as bn1
        if stride != 1 or x.shape[1] != planes:
            x = (x -> conv2d(planes, 1, stride=stride, bias=false) -> batchnorm()) as downsample
        return add(h, x).relu

model Wide(planes, stride=1):
    def forward(x):
        h = x -> conv2d(2 * planes, kernel=1, stride=stride, bias=false) as conv1
        if stride != 1 or x.shape[1] != 2 * planes:
            x = conv2d(x, 2 * planes, 1, stride=stride, bias=false) as downsample
        return add(h, x).relu

model Grow(growth):
    def forward(x):
        h = conv2d(x, growth, 3, padding=1) as conv
        return concat(x, h, dim=1)

model Net(block, layers, width=4):
    def forward(x):
        x -> conv2d(width, kernel=3, padding=1, bias=false) as stem
        for i, n in enumerate(layers):
            for j in range(n):
                x -> block(width * 2 ** i, 2 if j == 0 and i > 0 else 1) as stage{i + 1}.{j}
        for k in range(2):
            x -> Grow(width + k) as grow{k}
        for k in range(2):
            if width > 3:
                x -> conv2d(width, 1) as tail.* -> batchnorm() as tail.*
            else:
                x -> conv2d(width, 1) as tail.* -> relu() as tail.*
        x -> global_avg_pool()
        return (x -> dense(6).relu -> dropout(0.1) -> dense(5)) as head

model small = Net(Basic, [1, 2]):
    input_shape = (3, 8, 8)

model wide = Net(Wide, [2, 1], width=3):
    input_shape = (3, 8, 8)
"""


def _generated(
    source: str, name: str, roll: bool, filename: str | None = None
) -> tuple[types.ModuleType, str]:
    from aurane.backends.torch import TorchCodeGenerator

    program, graphs = _prepared(source, filename or f"{name}.aur")
    code = TorchCodeGenerator(program, graphs, roll_networks=roll).generate()
    module = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module, code


@functools.cache
def _prepared(source: str, filename: str) -> tuple[ast.AuraneProgram, dict[str, Graph]]:
    """The front end's program and graphs, once per source: the rolled and the unrolled
    generation read them without changing them (the same code as from a fresh front end)."""
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(source, filename=filename)
    return program, graphs


def test_network_used_through_variants_is_one_class_with_loops() -> None:
    """Issue 24 item 3: the network block is one class whose ``__init__`` runs the source's
    loops; each variant's module has the state-dict keys, shapes and outputs of the class
    with its layers written out (``roll_networks=False``)."""
    rolled, code = _generated(ROLLING, "rolling", True)
    unrolled, flat = _generated(ROLLING, "unrolled", False)
    assert CLASS.findall(code) == ["Basic", "Wide", "Grow", "Net"], code
    assert (
        "class small(Net):\n    def __init__(self):\n        super().__init__(Basic, [1, 2])"
        in code
    )
    assert "super().__init__(Wide, [2, 1], width=3)" in code
    # a block the network names writes its width in the call's terms; a block parameter's
    # class stores it
    assert "            channels = channels + (width + k)" in code, code
    assert "                channels = layer.out_channels" in code
    assert "self.out_channels = 2 * planes" in code
    assert "self.out_channels" not in flat
    # an if in a loop is a Python if, each branch written from the variant that takes it
    assert "            if width > 3:\n                self.tail.append(nn.Conv2d(" in code
    assert "            else:\n                self.tail.append(nn.Conv2d(" in code
    assert "nn.Linear(channels, 6), nn.ReLU(), nn.Dropout(0.1), nn.Linear(6, 5)" in code
    assert len(code.splitlines()) < len(flat.splitlines())
    for variant in ("small", "wide"):
        torch.manual_seed(0)
        mine = getattr(rolled, variant)()
        torch.manual_seed(0)
        theirs = getattr(unrolled, variant)()
        # the same modules, built in the same order: the same keys and initial weights
        assert list(mine.state_dict()) == list(theirs.state_dict())
        for key, value in theirs.state_dict().items():
            assert torch.equal(mine.state_dict()[key], value), key
        mine.load_state_dict(theirs.state_dict(), strict=True)
        mine.eval()
        theirs.eval()
        x = torch.randn(2, 3, 8, 8)
        torch.testing.assert_close(mine(x), theirs(x))
        graph = compile_detailed(ROLLING, filename="rolling.aur").graphs[variant]
        assert sum(p.numel() for p in mine.parameters()) == graph.parameters


def test_variants_whose_forward_differs_keep_their_classes() -> None:
    """The documented fallback: the variants' forwards apply different containers (three
    stages and two), so each variant keeps its class; the program is still exact."""
    source = ROLLING.replace("Net(Wide, [2, 1], width=3)", "Net(Wide, [2, 1, 1], width=3)")
    module, code = _generated(source, "uneven", True)
    assert CLASS.findall(code) == ["Basic", "Wide", "Grow", "small", "wide"], code
    assert module.wide()(torch.randn(2, 3, 8, 8)).shape == (2, 5)


def test_verify_traces_a_rolled_network_as_each_variant() -> None:
    """``aurane verify`` maps each variant's entry class to its network's forward, with
    the variant's own graph: every statement is checked, none is unmapped."""
    from aurane.verify import load_generated, verify_model

    gen = load_generated(ROLLING, "rolling.aur")
    for variant in ("small", "wide"):
        report = verify_model(gen, variant, device="meta")
        assert not report.diagnostics, report.diagnostics
        assert variant not in report.unmapped_classes and "Net" not in report.unmapped_classes
        assert report.values_checked >= 10, report


def _attributes(module: torch.nn.Module) -> dict[str, dict[str, object]]:
    """Every submodule's type and plain attributes (sizes, strides, the values a block
    stores), by path; ``out_channels`` of a block is the rolled class's own."""
    out: dict[str, dict[str, object]] = {}
    for path, sub in module.named_modules():
        plain = {
            k: v
            for k, v in vars(sub).items()
            if isinstance(v, int | float | bool | str | tuple) and k != "training"
        }
        if not isinstance(sub, torch.nn.Conv2d | torch.nn.Linear):
            plain.pop("out_channels", None)
        out[path] = {"type": type(sub).__name__, **plain}
    return out


@pytest.mark.parametrize("family", sorted(ROLLED_NETWORKS))
def test_rolled_family_builds_the_unrolled_modules(family: str) -> None:
    """Every variant of a rolled family builds, on the meta device, the modules of the
    classes with the layers written out: the same paths, types, sizes and stored values
    (a block's ``in_channels`` included, which no parameter shape shows)."""
    source = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
    # one front end for both (the code does not depend on it: _prepared)
    rolled, _ = _generated(source, f"{family}_rolled", True, f"{family}.aur")
    unrolled, _ = _generated(source, f"{family}_unrolled", False, f"{family}.aur")
    for variant in VARIANT.findall(source):
        with torch.device("meta"):
            mine, theirs = getattr(rolled, variant[0])(), getattr(unrolled, variant[0])()
        assert _attributes(mine) == _attributes(theirs), variant[0]
        shapes = {k: v.shape for k, v in theirs.state_dict().items()}
        assert {k: v.shape for k, v in mine.state_dict().items()} == shapes


def test_unet2d_network_reads_like_its_source() -> None:
    """UNet2D, used only through UNet2DModel, is one class written from the source's
    expressions: the model-valued locals (``down0 = down[0]``) called as classes, a skip's
    width passed from the tensor the call names, ``time_embedding`` a ``ModuleDict`` filled
    by name; the forward is the variant's, its dtype check naming the instance's class."""
    code = _zoo_code("unet2d")
    assert (
        "class UNet2D(nn.Module):\n    def __init__(self, ch, down, up, groups=32, head_dim=8, out=3):\n"
        in code
    )
    assert "        down0 = down[0]\n" in code
    assert "        self.conv_in = nn.Conv2d(3, ch[0], kernel_size=3, padding=1)\n" in code
    assert "        self.time_embedding = nn.ModuleDict()\n" in code
    assert "        self.down_blocks.append(down1(ch[0], ch[1], True, groups, head_dim))\n" in code
    assert "        self.mid_block = UNetMidBlock2D(ch[3], groups, head_dim)\n" in code
    assert (
        "        self.up_blocks.append(up0(ch[3], ch[3], ch[3], ch[2], ch[3], True, groups, head_dim))\n"
        in code
    )
    assert "        self.conv_out = nn.Conv2d(ch[0], out, kernel_size=3, padding=1)\n" in code
    assert "        a0, b0, d0 = self.down_blocks[0](h, temb)\n" in code
    assert "{type(self).__name__} expects int64 input" in code
    assert (
        "class UNet2DModel(UNet2D):\n    def __init__(self):\n        super().__init__(\n" in code
    )


def test_rolled_unet2d_loads_the_unrolled_weights() -> None:
    """At a small size (widths 32 to 128, 8 groups, 16 x 16 samples) the rolled UNet2D
    builds the modules and initial weights of the class written out, strict-loads its
    weights and computes the same."""
    source = (ZOO / "unet2d.aur").read_text(encoding="utf-8")
    source = source.replace(
        "UNet2D(block_out_channels, down_block_types, up_block_types)",
        "UNet2D((32, 64, 96, 128), down_block_types, up_block_types, groups=8)",
    ).replace("(3, 64, 64)", "(3, 16, 16)")
    rolled, code = _generated(source, "unet_rolled", True)
    unrolled, flat = _generated(source, "unet_unrolled", False)
    assert "class UNet2DModel(UNet2D):" in code and "class UNet2D(" not in flat
    torch.manual_seed(0)
    mine = rolled.UNet2DModel()
    torch.manual_seed(0)
    theirs = unrolled.UNet2DModel()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert torch.equal(mine.state_dict()[key], value), key
    torch.manual_seed(1)
    fresh = rolled.UNet2DModel().eval()
    fresh.load_state_dict(theirs.state_dict(), strict=True)
    sample, timestep = torch.randn(2, 3, 16, 16), torch.tensor([3, 700])
    with torch.no_grad():
        torch.testing.assert_close(fresh(sample, timestep), theirs.eval()(sample, timestep))


RESIDUAL_CALLER = """\
model Res(out):
    def forward(x):
        h = conv2d(x, out, kernel=3, padding=1).relu as conv1
        if x.shape[1] != out:
            x = conv2d(x, out, kernel=1) as shortcut
        return add(x, h)

model Pair(width):
    def forward(x):
        x -> Res(width) as first -> Res(width) as second -> conv2d(width, kernel=1) as proj
        return x

model Net:
    input_shape = (4, 6, 6)
    def forward(x):
        x -> Pair(4) as a -> Pair(8) as b
        return x
"""


def test_caller_of_a_residual_that_skips_its_shortcut_is_one_class() -> None:
    """Issue 24 item 3: ``Pair(4)`` on 4 channels calls ``Res`` without its shortcut, where
    the residual's width equals both the input's and ``out``; ``Pair(8)`` on 4 channels
    calls it with one. The residual's width is ``out`` in both, so ``Pair`` is one class
    (it was ``Pair`` and ``Pair_2``, the first reading ``in_channels`` after the residual),
    and each call builds its own layers and computes its source."""
    module, code = _module(RESIDUAL_CALLER, "residual_caller")
    assert CLASS.findall(code) == ["Res", "Pair", "Net"], code
    assert "Res(width, width)" in code and "nn.Conv2d(width, width, kernel_size=1)" in code
    net = module.Net().eval()
    assert "shortcut" not in dict(net.a.first.named_children())
    assert net.b.first.shortcut.in_channels == 4
    assert not hasattr(net.b.second, "shortcut")

    def res(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(block.conv1(x))
        return (block.shortcut(x) if hasattr(block, "shortcut") else x) + h

    x = torch.randn(2, 4, 6, 6)
    expected = x
    for pair in (net.a, net.b):
        expected = pair.proj(res(pair.second, res(pair.first, expected)))
    with torch.no_grad():
        torch.testing.assert_close(net(x), expected)


# other sizes of the rolled families: each still has one class per block and rolls
OTHER_SIZES = {
    "vgg": "VGG([(8, 1), (8, 2), (16, 1), (16, 1), (16, 1)], batch_norm=true)",
    "convnext": "ConvNeXt([32, 32, 64, 64], [1, 1, 1, 1], 0.1)",
    "unet2d": "UNet2D((32, 64, 64, 64), down_block_types, up_block_types, groups=8)",
}


def _other_size(family: str) -> str:
    source = (ZOO / f"{family}.aur").read_text(encoding="utf-8")
    if family == "unet2d":
        shape = "    input_shape = {sample: (3, 16, 16), timestep: ()}\n"
        shape += "    input_dtype = {sample: float32, timestep: int64}\n"
    else:
        shape = "    input_shape = (3, 32, 32)\n"
    return f"{source}\nmodel other = {OTHER_SIZES[family]}:\n{shape}"


@pytest.mark.parametrize("family", sorted(OTHER_SIZES))
def test_family_at_other_sizes_rolls_with_one_class_per_block(family: str) -> None:
    """Issue 24 item 3: a variant at widths the program's own do not use (equal widths
    in a row, a VGG whose classifier reads 16 * 7 * 7 features) keeps one class per
    block and rolls into the network's class: no located fallback."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    source = _other_size(family)
    program, graphs, _ = prepare_program(source, filename=f"{family}.aur")
    generator = TorchCodeGenerator(program, graphs)
    code = generator.generate()
    assert generator.roll_fallbacks == []
    assert "class other(" in code and "class other(nn.Module)" not in code
    classes = ANY_CLASS.findall(code)
    assert not [c for c in classes if re.fullmatch(r"\w+_\d+", c)], classes


def test_vgg_at_other_widths_loads_the_unrolled_weights() -> None:
    """The rolled VGG's classifier reads ``channels * 7 * 7`` features, as torchvision
    writes ``512 * 7 * 7``: at widths up to 16 it builds the unrolled class's modules and
    initial weights, strict-loads its state dict and computes the same."""
    source = _other_size("vgg")
    rolled, code = _generated(source, "vgg_other_rolled", True)
    unrolled, _ = _generated(source, "vgg_other_flat", False)
    assert "nn.Linear(channels * 7 * 7, 4096)" in code
    torch.manual_seed(0)
    mine = rolled.other()
    torch.manual_seed(0)
    theirs = unrolled.other().eval()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert torch.equal(mine.state_dict()[key], value), key
    torch.manual_seed(1)
    fresh = rolled.other().eval()
    fresh.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(fresh(x), theirs(x))
