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


# F11 (e), (d): the notes of a form kept one class per call say what the user can act on

BEFORE_AND_IN_LOOP = """\
model Proj(dim):
    def forward(x):
        x -> dense(dim).relu
        return x

model P(w: int, n: int):
    def forward(x):
        x -> Proj(w)
        for i in range(n):
            x -> Proj(w) -> layer_norm()
        x -> dense(3) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(8, 1) -> dense(8) as mid -> P(8, 2)
        return x
"""


def test_a_block_called_before_its_loop_says_so() -> None:
    """There are no rows of blocks: the note said the numbering was 'not the rows' blocks'
    alone'; the block is called before the loop too, which numbers the loop's on."""
    module, _, notes = build(BEFORE_AND_IN_LOOP, "before_and_in_loop")
    assert len(notes) == 1, notes
    assert "'Proj' in the loop builds 'proj2', not 'proj1'" in notes[0], notes
    assert "the block is also called outside the loop" in notes[0], notes
    assert "rows" not in notes[0], notes
    assert module.Net()(torch.randn(2, 3, 8)).shape == (2, 3, 3)


REPEAT_IN_LOOP = """\
model Res(w):
    def forward(x):
        h = x -> dense(w).relu
        return add(x, h)

model P(n: int, k: int, w: int):
    def forward(x):
        x -> dense(w) as stem
        for i in range(k):
            x -> repeat(Res(w), n + i)
        return x -> dense(3) as head

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 1, 4) -> P(2, 2, 5)
        return x
"""


def test_a_block_built_inside_an_argument_says_how_to_roll() -> None:
    """``repeat(Res(w), n + i)`` in a loop: the note was 'the function 'Res' is not
    written in Python here'."""
    module, _, notes = build(REPEAT_IN_LOOP, "repeat_in_loop")
    assert len(notes) == 1, notes
    assert "'Res(...)' at 10:25 is called inside an argument" in notes[0], notes
    assert "call it in a chain of its own ('x -> Res(...)'), in a loop to repeat it" in notes[0]
    assert "Python" not in notes[0], notes
    assert module.Net()(torch.randn(2, 3, 8)).shape == (2, 3, 3)


OPERATION_WITH_ARGUMENTS = """\
model Fam(n: int, w: int, act = softmax):
    def forward(x):
        for i in range(n):
            x -> dense(w) -> act(dim=1) as a{i}
        return x -> dense(3) as head

model small = Fam(1, 4):
    input_shape = (5,)

model big = Fam(2, 6, log_softmax):
    input_shape = (5,)
"""


def test_an_operation_with_no_argument_free_module_says_so() -> None:
    """The network roller's note was 'the name 'softmax' has no Python value here'."""
    module, _, notes = build(OPERATION_WITH_ARGUMENTS, "operation_with_arguments")
    assert len(notes) == 1, notes
    assert (
        "the operation 'softmax' has no module class built without arguments to pass as a"
        " value (functools.partial(nn.Softmax, dim=-1))"
    ) in notes[0], notes
    assert module.small()(torch.randn(2, 5)).shape == (2, 3)


# F11 (b) and F10 in a rolled network: the variants' numbered locals and their numbers

GLU_FAMILY = """\
model Fam(n: int, w: int = 4):
    def forward(x):
        for i in range(n):
            x -> dense(8).relu
        x -> dense(2 * w) -> glu()
        return x -> layer_norm() -> dense(3) as head

model small = Fam(1):
    input_shape = (5,)

model big = Fam(2):
    input_shape = (5,)
"""


def test_a_rolled_network_threads_its_input_and_states_no_variant_number() -> None:
    """The variants' locals ``dense3``/``dense4`` (the head's id after loops of 1 and 2
    iterations) were one local ``dense``: ``dense = self.layer_norm1(x)``, ``dense =
    self.head(dense)``, a local named after a module it is not; the chain goes on as
    ``x``. ``x = F.glu(x)  # (batch, 4)`` stated ``w``'s 4 in a class taking ``w``."""
    module, code, notes = build(GLU_FAMILY, "glu_family")
    assert notes == [], notes
    fam = _class_text(code, "Fam")
    assert "def __init__(self, n, w=4):" in fam
    assert (
        "        x = F.glu(x)\n"
        "        x = self.layer_norm1(x)\n"
        "        x = self.head(x)\n"
        "        return x\n"
    ) in fam, fam
    assert "dense = " not in fam and "(batch, 4)" not in fam, fam
    assert "# x: (batch, 5)" in fam  # the variants' input, which the class does not take
    flat, _, _ = build(GLU_FAMILY, "glu_family_flat", roll=False)
    for variant in ("small", "big"):
        torch.manual_seed(0)
        mine = getattr(module, variant)()
        torch.manual_seed(0)
        theirs = getattr(flat, variant)()
        mine.load_state_dict(theirs.state_dict(), strict=True)
        inputs = torch.randn(2, 5)
        torch.testing.assert_close(mine(inputs), theirs(inputs), rtol=0, atol=0)
    # built at another w, the class computes a width the dropped comment would not say
    assert module.Fam(1, 6)(torch.randn(2, 5)).shape == (2, 3)
