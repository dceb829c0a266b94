"""Block- and operation-valued parameters as constructor arguments (issue 24 item 3).

``model Stage(width, block = Basic)`` called with ``Basic`` and with ``Wide`` is one class
taking the block class (``Stage(16, 16, block=Wide)``, ``self.block1 = block(in_features,
width)``), where it was one class per block given. Each case compiles, runs under the
differential check (shapes, dtypes and parameter counts against the IR), and is compared
with a twin program that writes each value's class by hand (the fold, with the layers named
as the one class names them): the same state_dict keys, a strict load of the twin's
weights, the same outputs, and the IR's parameter count. The IR names a call through the
parameter after it (``block1``, whichever block a call gave), so its layer paths, which
``aurane ir``, ``profile --detailed``, the diagrams and the JSON export show, are the
generated module's parameter names.
"""

from __future__ import annotations

import re
import textwrap
import types

import pytest

from aurane import ops, records
from aurane.analysis.profile import profile, walk
from aurane.ir.printer import graph_to_text
from aurane.tools.differential import run_accepted
from aurane.verify import Generated, ModelReport, load_generated, verify_model

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import ir_paths as _ir_paths  # noqa: E402
from tests.backends.torch.one_class import module_paths as _module_paths  # noqa: E402

CLASS = re.compile(r"^class (\w+)\(nn\.Module\):", re.MULTILINE)


def _proved(source: str) -> Generated:
    gen = load_generated(textwrap.dedent(source), "blocks.aur")
    assert run_accepted(gen, "Net", 0) is None, gen.code
    return gen


def _class(gen: Generated, name: str) -> str:
    start = gen.code.index(f"class {name}(nn.Module):")
    end = gen.code.find("\nclass ", start + 1)
    return gen.code[start:end]


def _paths_agree(gen: Generated) -> None:
    """The IR's layer paths are the state_dict's: what every consumer shows is the module."""
    assert _ir_paths(gen.graphs["Net"]) == _module_paths(gen.module.Net())


def _same_as_twin(
    gen: Generated, twin: Generated, x: torch.Tensor
) -> tuple[ModelReport, ModelReport]:
    """The one-class program and its hand-folded twin: keys, a strict load, outputs, the
    IR's parameter count, and as many layers' parameter counts checked at run time."""
    torch.manual_seed(0)
    model, folded = gen.module.Net().eval(), twin.module.Net().eval()
    assert list(model.state_dict()) == list(folded.state_dict())
    _paths_agree(gen)
    _paths_agree(twin)
    model.load_state_dict(folded.state_dict(), strict=True)
    assert torch.allclose(model(x), folded(x), atol=1e-6)
    counted = sum(p.numel() for p in model.parameters())
    assert counted == gen.graphs["Net"].parameters == twin.graphs["Net"].parameters
    mine = verify_model(gen, "Net", device="cpu", train=False, batch=2, seed=0)
    theirs = verify_model(twin, "Net", device="cpu", train=False, batch=2, seed=0)
    assert not mine.diagnostics
    # the layers named after the parameter (block1, act2) are found at every call (an
    # activation module, self.act, is counted too: at least the twin's layers)
    assert mine.values_checked == mine.values_expected == theirs.values_checked
    assert mine.parameters_checked >= theirs.parameters_checked
    return mine, theirs


BLOCKS = """
    model Basic(width):
        def forward(x):
            x -> dense(width).relu

    model Wide(width):
        def forward(x):
            x -> dense(2 * width) -> dense(width).relu
"""


def test_a_block_given_as_an_argument_is_one_class_taking_the_block_class() -> None:
    gen = _proved(
        BLOCKS
        + """
    model Stage(width, block = Basic):
        def forward(x):
            return x -> block(width) -> block(width)

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(16, Basic) as a -> Stage(16, Wide) as b -> Stage(4) as c
    """
    )
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "Stage", "Net"]
    stage = _class(gen, "Stage")
    assert "def __init__(self, in_features, width, block=Basic):" in stage
    assert "self.block1 = block(in_features, width)" in stage
    assert "self.block2 = block(width, width)" in stage
    net = _class(gen, "Net")
    assert "self.a = Stage(8, 16)" in net  # the default, left out
    assert "self.b = Stage(16, 16, block=Wide)" in net
    assert "self.c = Stage(16, 4)" in net
    assert isinstance(gen.module.Net().b.block2, gen.module.Wide)
    twin = load_generated(
        textwrap.dedent(
            BLOCKS
            + """
    model StageBasic(width):
        def forward(x):
            return x -> Basic(width) as block1 -> Basic(width) as block2

    model StageWide(width):
        def forward(x):
            return x -> Wide(width) as block1 -> Wide(width) as block2

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> StageBasic(16) as a -> StageWide(16) as b -> StageBasic(4) as c
    """
        ),
        "twin.aur",
    )
    _same_as_twin(gen, twin, torch.randn(3, 8))


def test_a_block_passed_on_through_an_outer_block_and_named_with_as() -> None:
    """No default, the tensor first (``block(x, width) as first``), and an outer block
    passing its own parameter on (``Stage(in_features, 8, block)``): one class each."""
    gen = _proved(
        BLOCKS
        + """
    model Stage(width, block):
        def forward(x):
            h = block(x, width) as first
            return h -> block(width)

    model Outer(block):
        def forward(x):
            x -> Stage(8, block) -> dense(4)

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Outer(Basic) as a -> Outer(Wide) as b
    """
    )
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "Stage", "Outer", "Net"]
    assert "def __init__(self, in_features, width, block):" in _class(gen, "Stage")
    assert "self.first = block(in_features, width)" in _class(gen, "Stage")
    assert "self.stage1 = Stage(in_features, 8, block)" in _class(gen, "Outer")
    assert "self.a = Outer(8, Basic)" in gen.code and "self.b = Outer(4, Wide)" in gen.code
    twin = load_generated(
        textwrap.dedent(
            BLOCKS
            + """
    model StageBasic(width):
        def forward(x):
            x -> Basic(width) as first -> Basic(width) as block2

    model StageWide(width):
        def forward(x):
            x -> Wide(width) as first -> Wide(width) as block2

    model OuterBasic:
        def forward(x):
            x -> StageBasic(8) as stage1 -> dense(4) as dense1

    model OuterWide:
        def forward(x):
            x -> StageWide(8) as stage1 -> dense(4) as dense1

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> OuterBasic as a -> OuterWide as b
    """
        ),
        "twin.aur",
    )
    _same_as_twin(gen, twin, torch.randn(3, 8))


def test_blocks_whose_constructors_differ_stay_folded() -> None:
    """``Gate`` needs no input size, so ``block(width)`` in its instance reads differently
    from ``block(in_features, width)`` in the others': no class could build both. The
    ``Gate`` instance keeps the fold (its own class, the block by its class, no ``block``
    argument whose default ``Basic`` it could not build); ``Basic`` and ``Wide`` share one.
    The layers are ``block1`` in every class, as the IR names them."""
    gen = _proved(
        BLOCKS
        + """
    model Gate(width):
        def forward(x):
            x -> dropout(0.1).relu

    model Stage(width, block = Basic):
        def forward(x):
            return x -> block(width) -> block(width)

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(8, Basic) as a -> Stage(8, Gate) as b -> Stage(8, Wide) as c
    """
    )
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "Gate", "Stage", "Stage_2", "Net"]
    assert "def __init__(self, in_features, width, block=Basic):" in _class(gen, "Stage")
    folded = _class(gen, "Stage_2")
    assert "def __init__(self, width):" in folded and "self.block1 = Gate(width)" in folded
    assert "self.b = Stage_2(8)" in gen.code and "self.c = Stage(8, 8, block=Wide)" in gen.code
    _paths_agree(gen)
    model = gen.module.Net().eval()
    x = torch.randn(2, 8)
    h = torch.relu(model.a.block2.dense1(torch.relu(model.a.block1.dense1(x))))
    for wide in (model.c.block1, model.c.block2):
        h = torch.relu(wide.dense2(wide.dense1(h)))
    assert torch.allclose(model(x), h, atol=1e-6)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        # alone, with nothing to share: the block written by its class
        ("x -> block(width)", "every call gives Basic"),
        # a default none of the class's blocks (Gate, called elsewhere, takes no size)
        ("x -> block(width)", "default Gate"),
        # the default is defined after the block: Stage's signature could not name it
        ("x -> block(width)", "default defined later"),
    ],
)
def test_a_block_argument_the_class_cannot_take_stays_folded(body: str, why: str) -> None:
    calls = (
        "Stage(8) as a -> Stage(8) as b"
        if why.startswith("every")
        else ("Stage(8, Basic) as a -> Stage(8, Wide) as b -> Gate(8) as g")
    )
    default = "Gate" if why == "default Gate" else "Basic"
    stage = f"""
    model Gate(width):
        def forward(x):
            x -> dropout(0.1).relu

    model Stage(width, block = {default}):
        def forward(x):
            {body}
    """
    blocks, after = (BLOCKS, "") if why != "default defined later" else ("", BLOCKS)
    gen = _proved(
        blocks
        + stage
        + after
        + f"""
    model Net:
        input_shape = (8,)
        def forward(x):
            x -> {calls}
    """
    )
    stage = _class(gen, "Stage")
    assert "block=" not in stage and "= block(" not in stage, why
    # named after the parameter, as the IR names it, whichever block the call gave
    assert "self.block1 = Basic(in_features, width)" in stage
    _paths_agree(gen)


# -- an operation reaching an inner block or a step through a loop variable ----------------

INNER = """
    model Inner(width, act):
        def forward(x):
            x -> dense(width).act
"""


def _stage(table: str, ops: str = "act") -> str:
    return f"""
    model Stage({ops}):
        table = {table}
        def forward(x):
            for a in [act, gelu]:
                x = Inner(x, 8, a)
            for w, b in table:
                x = x -> dense(w).b
                if w > 5:
                    x = x -> dropout(0.0)
            return x
    """


def test_an_operation_reaching_an_inner_block_through_a_loop_variable() -> None:
    """``for a in [act, gelu]: Inner(x, 8, a)`` passes the class's own parameter on in the
    first iteration (``Inner(in_features, 8, act)``) and the module class of ``gelu`` in the
    second; ``for w, b in table`` over a block constant holding ``act`` applies it as
    ``self.act`` where the iteration binds it, inside an ``if`` too. One ``Stage`` for
    ``relu``, ``tanh`` and ``silu``, where it was three."""
    gen = _proved(
        INNER
        + _stage("[(6, act), (4, sigmoid), (3, act)]")
        + """
    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(relu) as s -> Stage(tanh) as t -> Stage(silu) as u
    """
    )
    assert CLASS.findall(gen.code) == ["Inner", "Stage", "Net"]
    stage = _class(gen, "Stage")
    assert "self.inner1 = Inner(in_features, 8, act)" in stage
    assert "self.inner2 = Inner(8, 8, nn.GELU)" in stage
    assert stage.count("self.act(x)") == 2 and "torch.sigmoid(x)" in stage
    assert "Stage(8, nn.ReLU)" in gen.code and "Stage(3, nn.SiLU)" in gen.code
    twins = "".join(
        f"""
    model Stage{op.title()}:
        table = [(6, {op}), (4, sigmoid), (3, {op})]
        def forward(x):
            for a in [{op}, gelu]:
                x = Inner(x, 8, a)
            for w, b in table:
                x = x -> dense(w).b
                if w > 5:
                    x = x -> dropout(0.0)
            return x
    """
        for op in ("relu", "tanh", "silu")
    )
    twin = load_generated(
        textwrap.dedent(
            INNER
            + twins
            + """
    model Net:
        input_shape = (8,)
        def forward(x):
            x -> StageRelu as s -> StageTanh as t -> StageSilu as u
    """
        ),
        "twin.aur",
    )
    assert CLASS.findall(twin.code) == ["Inner", "StageRelu", "StageTanh", "StageSilu", "Net"]
    _same_as_twin(gen, twin, torch.randn(3, 8))


def test_a_loop_variable_holding_another_value_is_written_as_its_value() -> None:
    """Only a loop item that names the parameter passes it on: ``gelu`` in ``[act, gelu]``
    is ``nn.GELU`` even where ``act`` is ``gelu``, so both calls share one class."""
    gen = _proved(
        INNER
        + _stage("[(6, relu)]")
        + """
    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(gelu) as s -> Stage(hardswish) as t
    """
    )
    assert CLASS.findall(gen.code) == ["Inner", "Stage", "Net"]
    assert "self.inner2 = Inner(8, 8, nn.GELU)" in _class(gen, "Stage")
    model = gen.module.Net()
    assert isinstance(model.t.inner1.act, torch.nn.Hardswish)
    assert isinstance(model.t.inner2.act, torch.nn.GELU)


def test_a_table_of_operations_and_blocks_given_to_a_block_is_written_by_class() -> None:
    """A list or table argument holding operations or blocks (``[(8, relu), (4, gelu)]``,
    ``[Basic, Wide]``) crashed the generator (no literal for an operation); the class folds
    those values, and the call passes them as the classes a call would (``nn.ReLU``,
    ``Basic``), an operation whose module takes keywords by its factory
    (``functools.partial(nn.Softmax, dim=-1)``), one without a module by its name."""
    gen = _proved(
        BLOCKS
        + INNER
        + """
    model Stage(cfg, blocks, names):
        def forward(x):
            for w, a in cfg:
                x = Inner(x, w, a)
            for b in blocks:
                x = b(x, 4)
            return x

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage([(8, relu), (6, gelu)], [Basic, Wide], [softmax]) as s
    """
    )
    assert (
        "            8, ((8, nn.ReLU), (6, nn.GELU)), (Basic, Wide), "
        "(functools.partial(nn.Softmax, dim=-1),)\n"
    ) in gen.code
    model = gen.module.Net()
    assert isinstance(model.s.inner2.act, torch.nn.GELU)
    assert isinstance(model.s.wide1, gen.module.Wide)
    _paths_agree(gen)


def test_a_block_argument_in_a_class_joined_over_branches() -> None:
    """``block(width)`` in both branches of an ``if``, named into a container in one: the
    branch a call does not take makes no call, so the parameter is followed in each
    branch taken and all four calls are one class with the branch in ``__init__``."""
    gen = _proved(
        BLOCKS
        + """
    model B(width, block, flag: bool = false):
        def forward(x):
            if flag:
                x = x -> block(width) as layers.0 -> block(width) as layers.1
            else:
                x = x -> dense(width) -> block(width)
            return x

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> B(8, Basic, true) as c -> B(8, Wide, true) as d -> B(8, Wide) as e -> B(6, Basic) as f
    """
    )
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "B", "Net"]
    cls = _class(gen, "B")
    assert "self.layers = nn.Sequential(block(in_features, width), block(width, width))" in cls
    assert "self.block1 = block(width, width)" in cls
    model = gen.module.Net().eval()
    assert isinstance(model.d.layers[1], gen.module.Wide)
    assert isinstance(model.f.block1, gen.module.Basic)
    _paths_agree(gen)
    x = torch.randn(2, 8)
    h = x
    for layer in (*model.c.layers, *model.d.layers):
        h = layer(h)
    for stage in (model.e, model.f):
        h = stage.block1(stage.dense1(h))
    assert torch.allclose(model(x), h, atol=1e-6)


def test_a_block_argument_copied_by_repeat() -> None:
    """``repeat(block(width), 2)`` is the repeat of the block the parameter gives:
    ``nn.Sequential(*[block(width, width) for _ in range(2)])``, one class for both."""
    gen = _proved(
        BLOCKS
        + """
    model Stage(width, block = Basic):
        def forward(x):
            return x -> block(width) -> repeat(block(width), 2) as tail

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(8, Basic) as a -> Stage(8, Wide) as b
    """
    )
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "Stage", "Net"]
    assert "self.tail = nn.Sequential(*[block(width, width) for _ in range(2)])" in gen.code
    twin = load_generated(
        textwrap.dedent(
            BLOCKS
            + """
    model StageBasic:
        def forward(x):
            return x -> Basic(8) as block1 -> repeat(Basic(8), 2) as tail

    model StageWide:
        def forward(x):
            return x -> Wide(8) as block1 -> repeat(Wide(8), 2) as tail

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> StageBasic as a -> StageWide as b
    """
        ),
        "twin.aur",
    )
    _same_as_twin(gen, twin, torch.randn(3, 8))


def test_blocks_without_parameters_given_as_an_argument() -> None:
    """Blocks without parameters have a class of their own per input shape (no
    constructor arguments): ``block()`` builds either, one ``A`` for both."""
    gen = _proved(
        """
    model Plain:
        def forward(x):
            x -> dense(4).relu

    model Plain2:
        def forward(x):
            x -> dense(8) -> dense(4)

    model A(block):
        def forward(x):
            x -> block() -> block()

    model Net:
        input_shape = (4,)
        def forward(x):
            x -> A(Plain) as a -> A(Plain2) as b
    """
    )
    assert CLASS.findall(gen.code) == ["Plain", "Plain2", "A", "Net"]
    assert "self.block2 = block()" in _class(gen, "A")
    assert "self.a = A(Plain)" in gen.code and "self.b = A(Plain2)" in gen.code
    _paths_agree(gen)
    model = gen.module.Net().eval()
    x = torch.randn(2, 4)
    h = x
    for plain in (model.a.block1, model.a.block2):
        h = torch.relu(plain.dense1(h))
    for plain in (model.b.block1, model.b.block2):
        h = plain.dense2(plain.dense1(h))
    assert torch.allclose(model(x), h, atol=1e-6)


# -- blocks given to one parameter take their input sizes alike (fuzz seed 1000108) --------

UNITS = """
    model Unit0(w):
        def forward(x):
            return x -> dense(w, bias=false)

    model Unit1(w):
        def forward(x):
            return x -> dense(w).relu
"""


def test_blocks_given_to_one_parameter_take_the_width_one_of_them_takes() -> None:
    """``Unit0`` is called at images 8 and 6 wide, so its class takes ``in_features``;
    ``Unit1``, called at 6 only, wrote ``nn.Linear(6, w)``: ``block(in_features, w)`` and
    ``block(w)`` read differently and ``Pick`` was two classes (a located note). A block
    given to the same parameter now takes every spatial axis another one takes, so both
    are ``Unit(in_features, w)`` and ``Pick`` is one class."""
    gen = _proved(
        UNITS
        + """
    model Pick(w, block = Unit0):
        def forward(x):
            return x -> block(w) as b1 -> block(w) as b2

    model Net:
        input_shape = (3, 8, 8)
        def forward(x):
            x -> Pick(6) as a -> Pick(6, Unit1) as b
    """
    )
    assert CLASS.findall(gen.code) == ["Unit0", "Unit1", "Pick", "Net"], gen.code
    assert "def __init__(self, in_features, w):" in _class(gen, "Unit1")
    assert "nn.Linear(in_features, w)" in _class(gen, "Unit1")
    pick = _class(gen, "Pick")
    assert "def __init__(self, in_features, w, block=Unit0):" in pick
    assert "self.b1 = block(in_features, w)" in pick and "self.b2 = block(w, w)" in pick
    assert "self.a = Pick(8, 6)" in gen.code and "self.b = Pick(6, 6, block=Unit1)" in gen.code
    twin = load_generated(
        textwrap.dedent(
            UNITS
            + """
    model PickA(w):
        def forward(x):
            return x -> Unit0(w) as b1 -> Unit0(w) as b2

    model PickB(w):
        def forward(x):
            return x -> Unit1(w) as b1 -> Unit1(w) as b2

    model Net:
        input_shape = (3, 8, 8)
        def forward(x):
            x -> PickA(6) as a -> PickB(6) as b
    """
        ),
        "twin.aur",
    )
    _same_as_twin(gen, twin, torch.randn(2, 3, 8, 8))


def test_blocks_without_parameters_given_to_one_parameter_take_their_width_alike() -> None:
    """``Plain`` is called at 8 and 6 features, so it is one class taking ``in_features``;
    ``Plain2``, called at 6 only, had a no-argument class (``nn.Linear(6, 6)``), and ``A``
    was two classes (``block(in_features)`` against ``block()``). A block without
    parameters given to the same parameter as one lowered per call is lowered per call
    too: ``Plain2(in_features)``, one ``A``."""
    gen = _proved(
        """
    model Plain:
        def forward(x):
            x -> dense(6, bias=false)

    model Plain2:
        def forward(x):
            x -> dense(6).relu

    model A(block = Plain):
        def forward(x):
            x -> block() as b1 -> block() as b2

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> A() as a -> A(Plain2) as b
    """
    )
    assert CLASS.findall(gen.code) == ["Plain", "Plain2", "A", "Net"], gen.code
    assert "def __init__(self, in_features):" in _class(gen, "Plain2")
    a = _class(gen, "A")
    assert "def __init__(self, in_features, block=Plain):" in a
    assert "self.b1 = block(in_features)" in a and "self.b2 = block(6)" in a
    assert "self.a = A(8)" in gen.code and "self.b = A(6, block=Plain2)" in gen.code
    twin = load_generated(
        textwrap.dedent(
            """
    model Plain:
        def forward(x):
            x -> dense(6, bias=false)

    model Plain2:
        def forward(x):
            x -> dense(6).relu

    model A1:
        def forward(x):
            x -> Plain as b1 -> Plain as b2

    model A2:
        def forward(x):
            x -> Plain2 as b1 -> Plain2 as b2

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> A1 as a -> A2 as b
    """
        ),
        "twin.aur",
    )
    _same_as_twin(gen, twin, torch.randn(3, 8))


# -- the IR names a call through the parameter after it: every consumer shows the module ----

UNNAMED = """
    model Stage(width, block = Basic):
        def forward(x):
            return x -> block(width) -> block(width) -> repeat(block(width), 2)

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(16, Basic) -> Stage(16, Wide)
"""


def test_the_ir_names_calls_through_the_parameter_after_it() -> None:
    """``block(width)`` is ``block1``, ``block2`` in the IR whichever block a call gave
    (it was ``basic1`` and ``wide1``, renamed by the backend alone), so ``aurane ir``,
    ``profile --detailed`` and the module's state_dict name the same layers; an unnamed
    ``repeat(block(width), 2)`` is ``repeat1``, as any repeat."""
    gen = _proved(BLOCKS + UNNAMED)
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "Stage", "Net"]
    stage = _class(gen, "Stage")
    assert "self.block1 = block(in_features, width)" in stage
    assert "self.repeat1 = nn.Sequential(*[block(width, width) for _ in range(2)])" in stage
    graph = gen.graphs["Net"]
    for node, block in zip(graph.nodes, ("Basic", "Wide"), strict=True):
        assert node.subgraph is not None
        assert [n.id for n in node.subgraph.nodes] == ["block1", "block2", "repeat1"]
        assert {n.block for n in node.subgraph.nodes} == {block}
    text = graph_to_text(graph)
    assert "block1: (batch, 16) ? = block[Wide](x" in text
    assert "wide1" not in text and "basic1" not in text
    shown = {path for path, _, layer in walk(profile(graph).layers) if not layer.children}
    assert {"stage1/block2/dense1", "stage2/block1/dense2", "stage2/repeat1/dense2"} <= shown
    twin = load_generated(
        textwrap.dedent(
            BLOCKS
            + """
    model StageBasic:
        def forward(x):
            return x -> Basic(16) as block1 -> Basic(16) as block2 -> repeat(Basic(16), 2)

    model StageWide:
        def forward(x):
            return x -> Wide(16) as block1 -> Wide(16) as block2 -> repeat(Wide(16), 2)

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> StageBasic as stage1 -> StageWide as stage2
    """
        ),
        "twin.aur",
    )
    mine, theirs = _same_as_twin(gen, twin, torch.randn(3, 8))
    # verify counts the parameters of every layer the hand-named twin has, no fewer
    assert mine.parameters_checked == theirs.parameters_checked


def test_verify_checks_the_layers_named_after_the_parameter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A wrong parameter rule is caught at the calls through the parameter, at each call
    (``block1`` with ``Basic`` and with ``Wide``): verify finds them by their IR name."""
    spec = ops.CATALOG["dense"]
    monkeypatch.setitem(ops.CATALOG, "dense", records.replace(spec, parameters=lambda c, o: 7))
    gen = load_generated(textwrap.dedent(BLOCKS + UNNAMED), "blocks.aur")
    report = verify_model(gen, "Net", device="cpu", train=False, batch=2, seed=0)
    found = {(d.span.line, d.message.split(" has ")[0]) for d in report.diagnostics if d.span}
    called = [m for line, m in sorted(found) if "'block" in m]
    assert called == ["compiler bug: 'block1'", "compiler bug: 'block2'"], report.diagnostics
    runtime = [d.message for d in report.diagnostics if "'block1' has" in d.message]
    assert len(runtime) == 2  # Stage with Basic, Stage with Wide
    assert all("(self.block1)" in m for m in runtime)


def test_a_block_also_called_by_its_own_name_beside_the_parameter_is_one_class() -> None:
    """``block(width) -> Basic(width)``: the parameter's call is ``block1`` and the named
    block's ``basic1`` whichever block a call gave (they were ``basic1``/``basic2`` after a
    ``Basic`` and ``wide1``/``basic1`` after a ``Wide``, two classes), so one class."""
    gen = _proved(
        BLOCKS
        + """
    model Stage(width, block = Basic):
        def forward(x):
            return x -> block(width) -> Basic(width)

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> Stage(16, Basic) as a -> Stage(16, Wide) as b
    """
    )
    assert CLASS.findall(gen.code) == ["Basic", "Wide", "Stage", "Net"]
    stage = _class(gen, "Stage")
    assert "self.block1 = block(in_features, width)" in stage
    assert "self.basic1 = Basic(width, width)" in stage
    assert "self.b = Stage(16, 16, block=Wide)" in gen.code
    for node in gen.graphs["Net"].nodes:
        assert node.subgraph is not None
        assert [n.id for n in node.subgraph.nodes] == ["block1", "basic1"]
    twin = load_generated(
        textwrap.dedent(
            BLOCKS
            + """
    model StageBasic(width):
        def forward(x):
            return x -> Basic(width) as block1 -> Basic(width) as basic1

    model StageWide(width):
        def forward(x):
            return x -> Wide(width) as block1 -> Basic(width) as basic1

    model Net:
        input_shape = (8,)
        def forward(x):
            x -> StageBasic(16) as a -> StageWide(16) as b
    """
        ),
        "twin.aur",
    )
    _same_as_twin(gen, twin, torch.randn(3, 8))


def test_a_network_through_variants_calling_its_block_parameter_outside_loops() -> None:
    """Variants of a network calling its block parameter unnamed outside any loop: the IR
    names the calls ``block1``, ``block2`` in both, so they share the network's class; the
    second call reads its input width from the first (``layer.out_channels``), which the
    roller now binds before storing it (it wrote ``self.basic1 = block(...)`` and read an
    undefined ``layer``, with a variant of one block only). The modules, keys and outputs
    are those of each variant written out."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    source = textwrap.dedent(
        BLOCKS
        + """
    model Stage(width, block = Basic):
        def forward(x):
            return x -> dense(width) -> block(width) -> block(width)

    model small = Stage(16, Basic):
        input_shape = (8,)

    model wide = Stage(8, Wide):
        input_shape = (8,)
    """
    )
    program, graphs, _ = prepare_program(source, filename="variants.aur")
    modules = []
    for roll in (True, False):
        code = TorchCodeGenerator(program, graphs, roll_networks=roll).generate()
        module = types.ModuleType("variants")
        exec(compile(code, "<variants>", "exec"), module.__dict__)
        modules.append((module, code))
    (rolled, code), (unrolled, _) = modules
    assert CLASS.findall(code) == ["Basic", "Wide", "Stage"], code
    assert "        layer = block(width, width)\n        self.block1 = layer\n" in code
    assert "        layer = block(layer.out_channels, width)\n        self.block2 = layer\n" in code
    for variant in ("small", "wide"):
        torch.manual_seed(0)
        mine = getattr(rolled, variant)().eval()
        torch.manual_seed(0)
        theirs = getattr(unrolled, variant)().eval()
        assert list(mine.state_dict()) == list(theirs.state_dict())
        mine.load_state_dict(theirs.state_dict(), strict=True)
        x = torch.randn(2, 8)
        torch.testing.assert_close(mine(x), theirs(x))
        assert _ir_paths(graphs[variant]) == _module_paths(mine)
    gen = load_generated(source, "variants.aur")
    for variant in ("small", "wide"):
        report = verify_model(gen, variant, device="cpu", train=False, batch=2, seed=0)
        assert report.ok and report.values_checked == report.values_expected, report
