"""Issue 24 item 3: further forms of a block whose calls differ in loop counts written as
one class (``rolled_block.py``, ``block_walk.py``), found by the one-class bench
(``bench/one_class_per_block.py``). Each program is executed (``run_accepted`` compares
every shape and the parameter count with the IR's), the rolled class strict-loads the
state dict of the build with one class per call (``roll_networks=False``) and computes
the same, and the classes are counted."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    roll_notes,
    rolled,
    rolls_exactly,
    same,
)

# 1. an operation with variadic arguments in a loop (fuzz seed 2000059's permute)
VARIADIC = """\
use torch

model Swap(w, n):
    def forward(x):
        for i in range(n):
            x -> conv2d(w, 3, padding=1) as convs{i} -> permute(1, 3, 2) -> reshape(w, 5, 5)
        return x

model Net:
    input_shape = (3, 5, 5)
    def forward(x):
        x -> Swap(4, 1) as a -> Swap(6, 2) as b -> flatten() -> dense(2)
"""


def test_variadic_arguments_in_a_loop_bind_as_the_compiler_binds_them() -> None:
    """``permute(1, 3, 2)`` and ``reshape(w, 5, 5)`` in the loop: their arguments are one
    tuple parameter (``dims``, ``shape``), as the compiler binds them, where the walk
    took them one parameter each (``'permute' with more arguments than parameters``)."""
    gen, flat = rolled(VARIADIC, "variadic", torch.randn(2, 3, 5, 5))
    assert CLASS.findall(gen.code) == ["Swap", "Net"], gen.code
    assert CLASS.findall(flat) == ["Swap", "Swap_2", "Net"], flat
    text = block_class(gen, "Swap")
    assert "            x = x.permute(0, 1, 3, 2)\n" in text, text
    assert "            x = x.reshape(x.shape[0], self.w, 5, 5)\n" in text, text


# 2. tensors made in a loop that only each other read, with no module (fuzz seeds
# 2000543: ``h1 = arange(p0)``, ``h2 = hardtanh(h1)``; 2000059: ``h1 = transpose(x, ...)``,
# ``h1 -> permute(...)``), at a call whose loop runs no iteration too
DEAD = """\
use torch

model Probe(w, p, n: int):
    def forward(x):
        for i in range(n):
            h1 = arange(p * 0.5)
            h2 = hardtanh(h1)
            t = transpose(x, 2, 3)
            t -> permute(2, 3, 1) -> relu()
            x -> conv2d(w, 3, padding=1) as convs{i}
        return x

model Net:
    input_shape = (3, 6, 5)
    def forward(x):
        x -> Probe(4, 5, 0) as a -> Probe(4, 5, 2) as b -> Probe(6, 5, 1) as c
          -> flatten() -> dense(2)
"""


def test_tensors_only_dead_statements_read_are_computed_and_dropped() -> None:
    """``h1``, ``h2`` and ``t`` are read by no statement that binds another tensor, nor by
    a return or a test: ``__init__`` builds nothing for them (they make no module) and
    forward computes them as each call's class did (was ``an assignment to 'h1' the
    roller does not write``). The call at ``n=0`` reads no ``self.p``; the class stores
    it for the others."""
    gen, flat = rolled(DEAD, "dead", torch.randn(2, 3, 6, 5))
    assert CLASS.findall(gen.code) == ["Probe", "Net"], gen.code
    assert CLASS.findall(flat) == ["Probe", "Probe_2", "Probe_3", "Net"], flat
    text = block_class(gen, "Probe")
    assert "        self.p = p\n" in text, text
    assert "            h2 = F.hardtanh(h1)\n" in text, text
    assert "            t = t.permute(0, 2, 3, 1)\n" in text, text
    assert '            x = getattr(self, f"convs{i}")(x)\n' in text, text


# 3. an alias joined back by a concat: DenseNet's dense layer spelled with ``r = x``
ALIAS_BOTTLENECK = """\
use torch

model Dense(growth, n):
    def forward(x):
        for i in range(n):
            r = x
            x -> batchnorm() as norms{i} -> relu() -> conv2d(4 * growth, 1) as reduce{i}
            x = x -> batchnorm() as norm2s{i} -> conv2d(growth, 3, padding=1) as convs{i}
            x = concat(r, x, dim=1)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Dense(4, 1) as a -> Dense(2, 2) as b -> Dense(3, 0) as c
          -> global_avg_pool() -> dense(2) as head
"""


def test_alias_joined_by_a_concat_grows_the_width_by_both() -> None:
    """``r = x``, ``x`` going on through a bottleneck, ``x = concat(r, x, dim=1)``: the
    local keeps the alias's width while the threaded tensor's widths are texts of their
    own (``nn.BatchNorm2d(4 * growth)``, no line), and the join grows it
    (``channels = channels + growth``), where the join was taken to change the width
    (``the join 'concat' changes the width``) and each call kept a class."""
    gen, flat = rolled(ALIAS_BOTTLENECK, "alias_bottleneck", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Dense", "Net"], gen.code
    assert CLASS.findall(flat) == ["Dense", "Dense_2", "Dense_3", "Net"], flat
    text = block_class(gen, "Dense")
    assert 'setattr(self, f"norm2s{i}", nn.BatchNorm2d(4 * growth))' in text, text
    assert "            channels = channels + growth\n" in text, text
    assert "            x = torch.cat([x, conv2d], dim=1)\n" in text, text
    assert text.count("channels = ") == 2, text  # no line while the threaded tensor goes on


# 4. a loop on the last axis where the calls' inputs are alike (fuzz seed 4000021): no
# call's class takes an input size, so nothing said which axis the loop threads
LAST_ALIKE = """\
use torch

model Grow(g: int, n):
    def forward(x):
        for i in range(n):
            h = dense(x, g) as dl{i + 1}
            x = concat(x, h, dim=-1)
        return x

model Net:
    input_shape = (2, 5, 10)
    def forward(x):
        h = Grow(x, 1, 0) as a
        h -> Grow(2, 3) as b -> flatten() -> dense(2) as head
        return h
"""


def test_loop_on_the_last_axis_of_alike_inputs_takes_in_features() -> None:
    """``Grow(x, 1, 0)`` and ``Grow(2, 3)`` at one input shape: the channels' walk fails
    (``nn.Linear(10, g)`` against ``nn.Linear(12, g)``: the iterations differ) and the
    last axis is tried, where a call's class that takes a size would have said so."""
    gen, flat = rolled(LAST_ALIKE, "last_alike", torch.randn(2, 2, 5, 10))
    assert CLASS.findall(gen.code) == ["Grow", "Net"], gen.code
    assert CLASS.findall(flat) == ["Grow", "Grow_2", "Net"], flat
    text = block_class(gen, "Grow")
    assert "    def __init__(self, in_features, g, n):\n" in text, text
    assert 'setattr(self, f"dl{i + 1}", nn.Linear(channels, g))' in text, text
    assert "Grow(10, 1, 0)" in gen.code and "Grow(10, 2, 3)" in gen.code, gen.code


# 5. a float parameter given to rotary_embedding's base or attention's scale (fuzz seed
# 4000115): the emitter wrote the number of each call (``base=20000.0``)
ATTEND = """\
use torch

model Attend(b: float, s: float):
    def forward(x):
        h = rotary_embedding(x, base=-b)
        return scaled_dot_product_attention(h, h, x, scale=s / 2)

model Net:
    input_shape = (3, 4, 6)
    def forward(x):
        x -> Attend(-20000.0, 0.5) as a -> Attend(-10000.0, 0.25) as b
"""


def test_rotary_base_and_attention_scale_of_a_parameter_write_its_text() -> None:
    """``base=-b`` and ``scale=s / 2`` read the block's parameters (``-self.b``,
    ``self.s / 2``), where each call's class wrote its numbers (``Attend``, ``Attend_2``:
    ``a block without loops whose calls write ...``); at ``b = -10000.0`` the base is
    still written (left out as the default only where it is a number)."""
    gen, flat = rolled(ATTEND, "attend", torch.randn(2, 3, 4, 6))
    assert CLASS.findall(gen.code) == ["Attend", "Net"], gen.code
    assert CLASS.findall(flat) == ["Attend", "Net"], flat  # no loop: one class there too
    text = block_class(gen, "Attend")
    assert "h = rotary_embedding(x, base=-self.b)" in text, text
    assert "F.scaled_dot_product_attention(h, h, x, scale=self.s / 2)" in text, text


# 6. a second tensor that goes on under new names before its join (fuzz seed 5000103)
RENAMED = """\
use torch

model Mix(n):
    def forward(x):
        for i in range(n):
            h1 = tanh(x)
            h2 = gelu(h1, approximate="tanh")
            x = add(x, h2)
        return x

model Net:
    input_shape = (3, 4)
    def forward(x):
        x -> Mix(0) as a -> Mix(3) as b -> flatten() -> dense(2) as head
"""

RENAMED_GROWTH = """\
use torch

model Dense(growth, n):
    def forward(x):
        for i in range(n):
            h1 = x -> batchnorm() as norms{i}
            h2 = conv2d(h1, growth, 3, padding=1) as convs{i}
            h3 = relu(h2)
            x = concat(x, h3, dim=1)
        return x

model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> Dense(4, 2) as a -> Dense(2, 0) as b -> Dense(3, 3) as c
          -> global_avg_pool() -> dense(2) as head
"""


def test_second_tensor_going_on_under_new_names_is_joined_by_its_last() -> None:
    """``h1 = tanh(x)``, ``h2 = gelu(h1)``, ``x = add(x, h2)``: the second tensor goes on
    as ``h2``, which the join names (was ``an assignment to 'h2' the roller does not
    write``)."""
    gen, flat = rolled(RENAMED, "renamed", torch.randn(2, 3, 4))
    assert CLASS.findall(gen.code) == ["Mix", "Net"], gen.code
    assert CLASS.findall(flat) == ["Mix", "Mix_2", "Net"], flat
    text = block_class(gen, "Mix")
    assert '            h2 = F.gelu(h1, approximate="tanh")\n' in text, text
    assert "            x = x + h2\n" in text, text


def test_second_tensor_going_on_under_new_names_grows_by_a_concat() -> None:
    """The same with modules and a concat join: the width grows by the last name's
    (``channels = channels + growth``)."""
    gen, flat = rolled(RENAMED_GROWTH, "renamed_growth", torch.randn(2, 3, 8, 8))
    assert CLASS.findall(gen.code) == ["Dense", "Net"], gen.code
    assert CLASS.findall(flat) == ["Dense", "Dense_2", "Dense_3", "Net"], flat
    text = block_class(gen, "Dense")
    assert 'setattr(self, f"convs{i}", nn.Conv2d(channels, growth, kernel_size=3, padding=1))' in (
        text
    ), text
    assert "            channels = channels + growth\n" in text, text
    assert "            x = torch.cat([x, h3], dim=1)\n" in text, text


# 7. an unnamed parameter in a loop that forward indexes (fuzz seed 7000241)
INDEXED = """\
use torch

model Pos(w, n):
    def forward(x):
        for i in range(n):
            x -> positional_encoding(8) -> dense(w) as fcs{i}
        return x

model Net:
    input_shape = (6, 4)
    def forward(x):
        x -> Pos(4, 1) as a -> Pos(5, 2) as b -> flatten() -> dense(2) as head
"""


def test_unnamed_parameter_in_a_loop_that_forward_indexes_is_its_iterations() -> None:
    """``positional_encoding(8)`` in the loop: an ``nn.Parameter`` per iteration, which
    forward reads indexed (``self.positional_encoding1[:, : x.shape[1]]``); the name is
    templated there too (``getattr(self, f"positional_encoding{i + 1}")[...]``), where
    only a module's call was (the iterations differed)."""
    gen, flat = rolled(INDEXED, "indexed", torch.randn(2, 6, 4))
    assert CLASS.findall(gen.code) == ["Pos", "Net"], gen.code
    assert CLASS.findall(flat) == ["Pos", "Pos_2", "Net"], flat
    text = block_class(gen, "Pos")
    assert 'f"positional_encoding{i + 1}", nn.Parameter(torch.zeros(1, 8, channels))' in text
    assert (
        '            x = x + getattr(self, f"positional_encoding{i + 1}")[:, : x.shape[1]]\n'
        in text
    ), text


# 8. a second tensor made by an operation given the threaded tensor twice (fuzz seed
# 7000167: ``h1 = subtract(x, x)``)
TWICE = """\
use torch

model Square(w, n):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1) as convs{i}
            h = multiply(x, x)
            x = add(x, h)
        return x

model Net:
    input_shape = (3, 12)
    def forward(x):
        x -> Square(4, 1) as a -> Square(5, 2) as b -> flatten() -> dense(2) as head
"""


def test_second_tensor_of_the_threaded_one_given_twice_is_joined_back() -> None:
    """``h = multiply(x, x)``: a step of ``x`` alone that makes no module, its width the
    IR's (was ``an assignment to 'h' the roller does not write``: a call of several
    tensors)."""
    gen, flat = rolled(TWICE, "twice", torch.randn(2, 3, 12))
    assert CLASS.findall(gen.code) == ["Square", "Net"], gen.code
    assert CLASS.findall(flat) == ["Square", "Square_2", "Net"], flat
    text = block_class(gen, "Square")
    assert "            h = x * x\n" in text, text
    assert "            x = x + h\n" in text, text


# 9. a container filled in order (``as stack.*``) inside the loop (fuzz seed 9000255)
NEXT_CHILD = """\
use torch

model Tower(w, n):
    def forward(x):
        x -> dense(w) as stack.*
        for i in range(n):
            x -> relu() -> dense(w) as stack.*
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Tower(8, 1) as a -> Tower(4, 3) as b -> dense(2) as head
"""


def test_next_child_of_a_container_in_a_loop_is_indexed_by_the_count() -> None:
    """``as stack.*`` in the loop after one child made before it: forward reads
    ``self.stack[i + 1]`` (the loop's count plus the children before), where only a
    ``stack.{i}`` was indexed (``the layer 'stack.1' in a loop is not a numbered
    child``)."""
    gen, flat = rolled(NEXT_CHILD, "next_child", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Tower", "Net"], gen.code
    assert CLASS.findall(flat) == ["Tower", "Tower_2", "Net"], flat
    text = block_class(gen, "Tower")
    assert "            self.stack.append(nn.Linear(channels, w))\n" in text, text
    assert "            x = self.stack[i + 1](x)\n" in text, text


# 10. a child named by its loop in a container (fuzz seed 11000047: ``as layers.l1_{i + 1}``)
KEYED = """\
use torch

model Norms(n, m = 0.1):
    def forward(x):
        for i in range(n):
            x -> softmax()
            x -> batchnorm(momentum=m) as norms.bn_{i + 1}
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Norms(0) as a -> Norms(2) as b -> Norms(3, m=0.2) as c -> dense(2) as head
"""


def test_child_named_by_its_loop_is_a_key_of_a_module_dict() -> None:
    """``as norms.bn_{i + 1}``, the loop's one module: the loop fills an ``nn.ModuleDict``
    by name and forward reads ``self.norms[f"bn_{i + 1}"]`` (was ``the layer 'norms.bn_1'
    in a loop is not a numbered child``). ``self.norms`` is made once, by the loop: no
    dead ``nn.Sequential`` before it, and the state dict's keys are the classes' of one
    call (``norms.bn_1.weight``, ...)."""
    gen, flat = rolled(KEYED, "keyed", torch.randn(4, 6))
    assert CLASS.findall(gen.code) == ["Norms", "Net"], gen.code
    assert CLASS.findall(flat) == ["Norms", "Norms_2", "Norms_3", "Net"], flat
    text = block_class(gen, "Norms")
    assert text.count("self.norms = ") == 1, text
    assert "nn.Sequential" not in text, text
    assert "        stage = nn.ModuleDict()\n" in text, text
    assert (
        '            stage.add_module(f"bn_{i + 1}", nn.BatchNorm1d(channels, momentum=m))\n'
        in text
    )
    assert '            x = self.norms[f"bn_{i + 1}"](x)\n' in text, text


KEYED_FIRST = """\
use torch

model Norms(w, n):
    def forward(x):
        for i in range(n):
            x -> batchnorm() as norms.bn_{i + 1}
            x -> conv1d(w, 3, padding=1) as convs{i} -> relu()
        return x

model Net:
    input_shape = (3, 10)
    def forward(x):
        x -> Norms(4, 0) as a -> Norms(4, 2) as b -> Norms(6, 3) as c
          -> flatten() -> dense(2) as head
"""


def test_keyed_container_beside_other_modules_is_made_before_the_loop() -> None:
    """The keyed child beside another module of the loop: the container is made before
    the loop (``self.norms = nn.ModuleDict()``) and filled by name in it; its first child
    is the first module made, so the state dict's order is the classes' of one call."""
    gen, flat = rolled(KEYED_FIRST, "keyed_first", torch.randn(2, 3, 10))
    assert CLASS.findall(gen.code) == ["Norms", "Net"], gen.code
    assert CLASS.findall(flat) == ["Norms", "Norms_2", "Norms_3", "Net"], flat
    text = block_class(gen, "Norms")
    assert "        self.norms = nn.ModuleDict()\n" in text, text
    assert '            self.norms.add_module(f"bn_{i + 1}", nn.BatchNorm1d(channels))\n' in text
    assert '            x = self.norms[f"bn_{i + 1}"](x)\n' in text, text


def test_keyed_container_after_another_module_stays_one_class_per_call() -> None:
    """A module made before the container's first child (``convs0``, then ``norms``):
    the classes of one call register ``norms`` after ``convs0``, which a container made
    before the loop cannot; a located note, one class per call."""
    source = KEYED_FIRST.replace("            x -> batchnorm() as norms.bn_{i + 1}\n", "").replace(
        "-> relu()\n", "-> relu()\n            x -> batchnorm() as norms.bn_{i + 1}\n"
    )
    notes, code = roll_notes(source)
    assert CLASS.findall(code) == ["Norms", "Norms_2", "Norms_3", "Net"], code
    assert any("a module made before the first child of 'norms'" in n for n in notes), notes


NETWORK_KEYED = """\
use torch

model Net(w, n):
    def forward(x):
        x -> dense(w) as stem
        for i in range(n):
            x -> dense(w) as layers.l_{i + 1} -> relu()
        x -> dense(2) as head

model small = Net(4, 2):
    input_shape = (6,)

model wide = Net(6, 2):
    input_shape = (6,)
"""


@pytest.mark.parametrize("wide", ["Net(6, 2)", "Net(6, 3)"], ids=["agree", "differ"])
def test_network_loop_making_its_keyed_container_writes_it_once(wide: str) -> None:
    """The network roller, same form: the loop's ``stage`` becomes ``self.layers``, and no
    ``self.layers = nn.Sequential()`` comes before it (it was written, then replaced).
    Forward's loop indexes it by key, so it is an ``nn.ModuleDict`` (an ``nn.Sequential``
    there raised ``TypeError`` on ``self.layers[f"l_{i + 1}"]``)."""
    source = NETWORK_KEYED.replace("model wide = Net(6, 2):", f"model wide = {wide}:")
    code = rolls_exactly(source, "network_keyed", torch.randn(2, 6))
    assert code.count("self.layers = ") == 1, code
    assert "        stage = nn.ModuleDict()\n" in code, code
    assert "        self.layers = stage\n" in code, code
    assert '            x = self.layers[f"l_{i + 1}"](x)\n' in code, code


# 11. a chain of tensors nothing kept reads that makes modules (fuzz seed 1000175 at an
# older generator): the per-call classes build the modules and compute the tensors
UNREAD = """\
use torch

model Probe(w, n):
    def forward(x):
        s = dense(x, w) as stem_probe
        t = relu(s)
        for i in range(n):
            h1 = x -> dense(w) as probe{i} -> relu()
            h2 = h1 -> dense(3) as more{i}
            h3 = sigmoid(h2)
            x -> dense(w) as layers{i}
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Probe(4, 0) as a -> Probe(4, 2) as b -> Probe(5, 1) as c -> dense(2) as head
"""


def test_unread_chain_that_makes_modules_is_built_and_computed() -> None:
    """``s``, ``t``, ``h1``, ``h2`` and ``h3`` are read by nothing kept (only by each
    other): their modules are built from the width where they start (``nn.Linear(channels,
    w)``, then ``nn.Linear(w, 3)``), the running width is the threaded tensor's again
    after them, and forward computes them as each call's class does (was ``the tensor
    'h1' is not joined back``, and before the loop ``'x' goes on before 's' is
    joined``)."""
    gen, flat = rolled(UNREAD, "unread", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Probe", "Net"], gen.code
    assert CLASS.findall(flat) == ["Probe", "Probe_2", "Probe_3", "Net"], flat
    text = block_class(gen, "Probe")
    assert "        self.stem_probe = nn.Linear(in_features, w)\n" in text, text
    assert (
        '            setattr(self, f"probe{i}", nn.Linear(channels, w))\n'
        '            setattr(self, f"more{i}", nn.Linear(w, 3))\n'
        '            setattr(self, f"layers{i}", nn.Linear(channels, w))\n'
        "            channels = w\n"
    ) in text, text
    assert '            h2 = getattr(self, f"more{i}")(h1)\n' in text, text


# 12. the pieces of a chunk bound by one statement in a loop (fuzz seed 17000207)
PIECES = """\
use torch

model Halves(w, n):
    def forward(x):
        for i in range(n):
            x -> dense(2 * w) as fc{i}
            a, b = chunk(x, 2)
            g = multiply(a, b).sigmoid
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Halves(4, 0) as a -> Halves(4, 2) as b -> Halves(5, 1) as c -> dense(2) as head
"""


def test_pieces_bound_by_one_statement_are_one_statement_of_forward() -> None:
    """``a, b = chunk(x, 2)``: two IR nodes, one statement of each call's forward (``a, b
    = x.chunk(2, dim=-1)``), given to the first piece (was ``a forward that is not one
    statement per layer``)."""
    gen, flat = rolled(PIECES, "pieces", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Halves", "Net"], gen.code
    assert CLASS.findall(flat) == ["Halves", "Halves_2", "Halves_3", "Net"], flat
    text = block_class(gen, "Halves")
    assert (
        '            x = getattr(self, f"fc{i}")(x)\n'
        "            a, b = x.chunk(2, dim=-1)\n"
        "            g = a * b\n"
    ) in text, text


# 13. blocks at a sample of five axes with a dense on the last (fuzz seed 4000215)
FIVE_AXES = """\
use torch

model Unit(w):
    def forward(x):
        return x -> dense(w, bias=false) as fc

model Grow(g, n):
    def forward(x):
        for i in range(n):
            h = x -> dense(g) as fcs{i}
            x = concat(x, h, dim=-1)
        return x

model Net:
    input_shape = (2, 3, 4, 1, 5)
    def forward(x):
        x -> Unit(8) as a -> Unit(3) as b -> Grow(2, 1) as c -> Grow(3, 2) as d
          -> flatten() -> dense(2) as head
"""


def test_last_axis_of_a_five_axis_sample_is_a_constructor_argument() -> None:
    """A block's input of five axes has its last one symbolic, as a sequence's features
    (``ir/blocks.symbolic_input``), named ``in_features``: ``Unit`` at 5 and 8 features is
    one class (``nn.Linear(in_features, w, bias=False)``, was ``Unit`` and ``Unit_2``
    with the numbers), and ``Grow``'s loop on that axis rolls (the roller's retry on the
    last axis indexed two names and crashed: ``IndexError``)."""
    gen, flat = rolled(FIVE_AXES, "five_axes", torch.randn(2, 2, 3, 4, 1, 5))
    assert CLASS.findall(gen.code) == ["Unit", "Grow", "Net"], gen.code
    assert CLASS.findall(flat) == ["Unit", "Grow", "Grow_2", "Net"], flat
    assert "        self.fc = nn.Linear(in_features, w, bias=False)\n" in gen.code, gen.code
    assert "        self.a = Unit(5, 8)\n        self.b = Unit(8, 3)\n" in gen.code, gen.code
    assert "            channels = channels + g\n" in block_class(gen, "Grow")


# 14. a block whose input has no axis but the batch's (fuzz seed 20000005: after a ``max``)
NO_AXES = """\
use torch

model Square(n):
    def forward(x):
        for i in range(n):
            h = multiply(x, x)
            x -> tanh()
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> dense(4) as fc -> max(dim=-1, keepdim=false) -> Square(0) as a -> Square(2) as b
"""


def test_block_at_a_sample_without_axes_takes_no_input_size() -> None:
    """A ``(batch,)`` input: no width to thread, and nothing the class builds reads one, so
    the class takes no input size (``def __init__(self, n)``, called ``Square(2)``) and
    ``__init__`` builds nothing (was ``a block input without a channel or feature
    axis``)."""
    gen, flat = rolled(NO_AXES, "no_axes", torch.randn(2, 6))
    assert CLASS.findall(gen.code) == ["Square", "Net"], gen.code
    assert CLASS.findall(flat) == ["Square", "Square_2", "Net"], flat
    assert "    def __init__(self, n):\n" in block_class(gen, "Square"), gen.code
    assert "        self.b = Square(2)\n" in gen.code, gen.code


# 15. an unread chain whose first statement makes no module and a later one does (fuzz
# seed 38000102: ``h1 = unsqueeze(x, ...)``, ``h2 = rms_norm(h1, ...)``)
FEEDS = """\
use torch

model Probe(w, n):
    def forward(x):
        for i in range(n):
            h1 = unsqueeze(x, 1)
            h2 = h1 -> conv2d(w, 1) as probes{i}
            x -> conv1d(w, 3, padding=1) as convs{i}
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> Probe(4, 0) as a -> Probe(4, 2) as b -> Probe(5, 1) as c
          -> flatten() -> dense(2) as head
"""


def test_unread_tensor_that_feeds_a_module_starts_a_second_tensor() -> None:
    """``h1 = unsqueeze(x, 1)`` makes no module but ``h2 = h1 -> conv2d(...)`` does: ``h1``
    is the second tensor, so the conv is built from its width (``nn.Conv2d(1, w,
    kernel_size=1)``), where ``h1`` was passed over and ``h2`` was ``an assignment to 'h2'
    the roller does not write``."""
    gen, flat = rolled(FEEDS, "feeds", torch.randn(2, 3, 8))
    assert CLASS.findall(gen.code) == ["Probe", "Net"], gen.code
    assert CLASS.findall(flat) == ["Probe", "Probe_2", "Probe_3", "Net"], flat
    text = block_class(gen, "Probe")
    assert 'setattr(self, f"probes{i}", nn.Conv2d(1, w, kernel_size=1))' in text, text
    assert "            h1 = x.unsqueeze(1)\n" in text, text


# 16. a shape comment on a line of its own, above a long statement in the loop (fuzz seed
# 34000181): it was read as one of forward's input comments
COMMENT_ABOVE = """\
use torch

model Count(w, start: float, stop: float, n: int):
    def forward(x):
        for i in range(n):
            h1 = arange(start / 2, end=stop * 2, dtype="int32")
            x -> dense(w) as fcs{i}
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Count(4, 1.0, 0.5, 0) as a -> Count(4, 1.0, 0.5, 2) as b -> dense(2) as head
"""


def test_shape_comment_above_a_statement_is_not_an_input_comment() -> None:
    """Each call's class writes ``# (batch, 1)`` above the long ``arange`` line; the first
    such comment followed forward's ``# x: ...`` and was taken for one of its input
    comments, so the calls' forwards differed (``the calls' forward methods differ``).
    It goes with the statement after it, and the loop's body drops it."""
    gen, flat = rolled(COMMENT_ABOVE, "comment_above", torch.randn(2, 6))
    assert "        # (batch, 1)\n" in flat, flat
    assert CLASS.findall(gen.code) == ["Count", "Net"], gen.code
    assert CLASS.findall(flat) == ["Count", "Count_2", "Net"], flat
    text = block_class(gen, "Count")
    assert "# (batch, 1)" not in text, text
    # the class takes the input's width: no input comment states the calls' 6
    assert "    def forward(self, x):\n        for i in range(self.n):\n" in text, text


# 17. a local whose name is a builtin's (``abs1 = x.abs()``) in a loop without modules
# (fuzz seed 39000190): it kept the IR's number per iteration
BUILTIN_LOCAL = """\
use torch

model Loop0(n):
    def forward(x):
        for i in range(n):
            r = x
            x -> abs().silu
            x = add(x, r)
        return x

model Net:
    input_shape = (2, 3)
    def forward(x):
        x -> Loop0(n=3) as a -> Loop0(n=2) as b -> dense(2) as head
"""


def test_a_local_named_after_a_builtin_reads_alike_at_every_iteration() -> None:
    """``abs1``/``abs2`` kept their numbers, as ``abs`` would shadow the builtin, so the
    iterations differed (``the iterations of 'i' differ``); they share ``abs_``."""
    gen, flat = rolled(BUILTIN_LOCAL, "builtin_local", torch.randn(2, 2, 3))
    assert CLASS.findall(gen.code) == ["Loop0", "Net"], gen.code
    assert CLASS.findall(flat) == ["Loop0", "Loop0_2", "Net"], flat
    text = block_class(gen, "Loop0")
    assert "            abs_ = x.abs()\n            silu = F.silu(abs_)\n" in text, text
    mine, theirs = built_alike(
        build(BUILTIN_LOCAL, "builtin_local_one")[0],
        build(BUILTIN_LOCAL, "builtin_local_per_call", roll=False)[0],
        "Net",
    )
    same(theirs, mine, torch.randn(2, 2, 3))


# 18. the second tensor going on by an operation that also reads the threaded one (fuzz
# seed 36000088): ``h2 = matmul(h1, x)`` before the join ``x = add(x, h2)``
SECOND_WITH_THREADED = """\
use torch

model Mix(n):
    def forward(x):
        for i in range(n):
            h1 = rms_norm(x, axes=2) as stack.*
            h2 = matmul(h1, x)
            x = add(x, h2)
        return x

model Net:
    input_shape = (2, 4, 4)
    def forward(x):
        x -> Mix(1) as a -> Mix(2) as b -> flatten() -> dense(2) as head
"""


def test_the_second_tensor_goes_on_by_an_operation_of_both_tensors() -> None:
    """``h2 = matmul(h1, x)`` reads the second tensor and the threaded one and makes no
    module; it was refused (``an assignment to 'h2' the roller does not write``). The
    second tensor goes on as ``h2``, the width kept (checked at every visit)."""
    gen, flat = rolled(SECOND_WITH_THREADED, "second_with_threaded", torch.randn(2, 2, 4, 4))
    assert CLASS.findall(gen.code) == ["Mix", "Net"], gen.code
    assert CLASS.findall(flat) == ["Mix", "Mix_2", "Net"], flat
    text = block_class(gen, "Mix")
    assert "            h2 = h1 @ x\n            x = x + h2\n" in text, text
    mine, theirs = built_alike(
        build(SECOND_WITH_THREADED, "second_with_threaded_one")[0],
        build(SECOND_WITH_THREADED, "second_with_threaded_per_call", roll=False)[0],
        "Net",
    )
    same(theirs, mine, torch.randn(2, 2, 4, 4))


def test_an_operation_of_both_tensors_before_a_concat_join_is_refused() -> None:
    """Before a ``concat`` join the two tensors' widths are texts apart, so an operation
    of both has no one width to keep: refused with a note, each call its own class."""
    source = SECOND_WITH_THREADED.replace("matmul(h1, x)", "concat(h1, x, dim=1)")
    notes, code = roll_notes(source.replace("add(x, h2)", "concat(x, h2, dim=1)"))
    assert CLASS.findall(code) == ["Mix", "Mix_2", "Net"], code
    assert any("an assignment to 'h2' the roller does not write" in n for n in notes), notes


# 19. a parameter named by its loop and indexed in forward (fuzz seed 53000285's
# ``positional_encoding(8) as layer1_{i + 1}``): ``self.pes0[:, : x.shape[1]]``
INDEXED_PARAMETER = """\
use torch

model Enc(n: int):
    def forward(x):
        for i in range(n):
            x -> positional_encoding(8) as pes{i} -> relu()
        return x

model Net:
    input_shape = (4, 6)
    def forward(x):
        x -> Enc(1) as a -> Enc(2) as b -> flatten() -> dense(2) as head
"""


def test_a_parameter_named_by_its_loop_is_indexed_as_the_iterations_one() -> None:
    """The iteration's parameter is indexed (``self.pes1[:, : x.shape[1]]``), which the
    pattern for a named module left alone (a ``[`` after the name), so the iterations
    differed; it is ``getattr(self, f"pes{i}")[:, : x.shape[1]]``."""
    gen, flat = rolled(INDEXED_PARAMETER, "indexed_parameter", torch.randn(2, 4, 6))
    assert CLASS.findall(gen.code) == ["Enc", "Net"], gen.code
    assert CLASS.findall(flat) == ["Enc", "Enc_2", "Net"], flat
    text = block_class(gen, "Enc")
    assert 'setattr(self, f"pes{i}", nn.Parameter(torch.zeros(1, 8, channels)))' in text, text
    assert 'x = x + getattr(self, f"pes{i}")[:, : x.shape[1]]\n' in text, text
    mine, theirs = built_alike(
        build(INDEXED_PARAMETER, "indexed_parameter_one")[0],
        build(INDEXED_PARAMETER, "indexed_parameter_per_call", roll=False)[0],
        "Net",
    )
    same(theirs, mine, torch.randn(2, 4, 6))
