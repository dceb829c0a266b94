"""Issue 24 item 3: unnamed modules in a loop over items (``for w in widths``, ``for w, k
in cfg``) whose calls' lists differ in length. The IR numbers such modules on across the
iterations (``dense1``, ``dense2``, ...), and the loop's target is no count, so each
call kept its class with the note 'an unnamed 'dense' module in a loop'. The rolled
class counts the iterations as a PyTorch engineer does (``for i, w in
enumerate(widths): setattr(self, f"dense{i + 1}", nn.Linear(channels, w))``, forward
``for i in range(len(self.widths)): x = getattr(self, f"dense{i + 1}")(x)``), keeping
the state-dict keys of the build with one class per call. Each program runs against its
IR, is built as that build builds it (the same modules in the same order), computes the
same, and its rolled class rebuilt at its calls' arguments builds each call's class."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    rolls_exactly,
    twin,
)


def _checked(source: str, name: str, *, other: bool = False) -> str:
    """The block's rolled class, after the checks of the module docstring; ``other``: it
    is also rebuilt at arguments no call gives (``roll_check``)."""
    checked = twin(source, name, torch.randn(2, 5), against=("flat",))
    gen, flat, counts = checked.gen, checked.flat, checked.counts
    assert CLASS.findall(flat) == ["Mlp", "Mlp_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Mlp", "Net"], gen.code
    assert counts["calls"] == 2, counts
    if other:
        assert counts["other arguments"] > 0, counts
    return block_class(gen, "Mlp")


MLP = """\
model Mlp(widths):
    def forward(x):
        for w in widths:
            x -> dense(w).relu
        return x -> dense(2)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp([8, 6]) as a -> Mlp([4, 4, 3]) as b -> dense(2) as head
"""


def test_an_unnamed_module_in_a_loop_over_a_list_is_named_by_its_count() -> None:
    """``dense{i + 1}`` in the loop, ``dense{len(widths) + 1}`` after it; forward reads
    no ``w``, so its loop is ``range(len(self.widths))``."""
    text = _checked(MLP, "over_list")
    assert (
        "        for i, w in enumerate(widths):\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        '        setattr(self, f"dense{len(widths) + 1}", nn.Linear(channels, 2))\n'
    ) in text, text
    assert (
        "        for i in range(len(self.widths)):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = F.relu(x)\n"
        '        return getattr(self, f"dense{len(self.widths) + 1}")(x)\n'
    ) in text, text
    one, _, _ = build(MLP, "over_list_one")
    per_call, _, _ = build(MLP, "over_list_flat", roll=False)
    mine, _ = built_alike(one, per_call, "Net")
    assert "b.dense4.weight" in mine.state_dict()


def test_a_call_whose_list_is_empty_shares_the_class() -> None:
    """``Mlp([])`` beside ``Mlp([4, 4, 3])``: its loop runs no time, the head is
    ``dense1``."""
    source = MLP.replace("Mlp([8, 6])", "Mlp([])")
    text = _checked(source, "empty_list")
    assert '        setattr(self, f"dense{len(widths) + 1}", nn.Linear(channels, 2))\n' in text


STEM_HEAD = """\
model Mlp(widths):
    def forward(x):
        x -> dense(8).gelu
        for w in widths:
            x -> dense(w).relu -> layer_norm()
        return x -> dense(2)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp([8, 6]) as a -> Mlp([4, 4, 3]) as b -> dense(2) as head
"""


def test_a_stem_before_the_loop_and_a_head_after_it() -> None:
    """The stem keeps ``dense1``; the loop's ``dense{i + 2}`` and ``layer_norm{i + 1}``;
    the head counts the loop: ``dense{len(widths) + 2}``."""
    text = _checked(STEM_HEAD, "stem_head")
    assert "        self.dense1 = nn.Linear(in_features, 8)\n" in text, text
    assert (
        "        for i, w in enumerate(widths):\n"
        '            setattr(self, f"dense{i + 2}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        '            setattr(self, f"layer_norm{i + 1}", nn.LayerNorm(channels))\n'
        '        setattr(self, f"dense{len(widths) + 2}", nn.Linear(channels, 2))\n'
    ) in text, text
    assert (
        "        for i in range(len(self.widths)):\n"
        '            x = getattr(self, f"dense{i + 2}")(x)\n'
        "            x = F.relu(x)\n"
        '            x = getattr(self, f"layer_norm{i + 1}")(x)\n'
        '        return getattr(self, f"dense{len(self.widths) + 2}")(x)\n'
    ) in text, text


TUPLES = """\
model Mlp(cfg):
    def forward(x):
        for w, k in cfg:
            x -> dense(w).relu -> multiply(k)
        return x -> dense(2)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp([(8, 2), (6, 3)]) as a -> Mlp([(4, 1), (4, 2), (3, 5)]) as b -> dense(2) as head
"""


def test_a_loop_over_tuples_whose_forward_reads_the_items() -> None:
    """``for i, (w, k) in enumerate(cfg)``; forward multiplies by ``k``, so its loop
    enumerates too."""
    text = _checked(TUPLES, "tuples")
    assert (
        "        for i, (w, _) in enumerate(cfg):\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
    ) in text, text
    assert (
        "        for i, (_, k) in enumerate(self.cfg):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = F.relu(x)\n"
        "            x = x * k\n"
        '        return getattr(self, f"dense{len(self.cfg) + 1}")(x)\n'
    ) in text, text


CONSTANT = """\
stages = [[8, 6], [4, 4, 3]]

model Mlp(k):
    widths = stages[k]
    def forward(x):
        for w in widths:
            x -> dense(w).relu
        return x -> dense(2)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp(0) as a -> Mlp(1) as b -> dense(2) as head
"""


def test_a_loop_over_a_block_constant_list() -> None:
    """The constant is a local of ``__init__``, stored for forward's count; the global
    table it indexes is a module constant (``tables.py``)."""
    text = _checked(CONSTANT, "constant_list", other=True)
    assert "        widths = STAGES[k]\n        self.widths = widths\n" in text
    assert "        for i, w in enumerate(widths):\n" in text, text
    assert "        for i in range(len(self.widths)):\n" in text, text


ZIPPED = """\
model Mlp(widths, scales):
    def forward(x):
        for w, s in zip(widths, scales):
            x -> dense(w).relu -> multiply(s)
        for i, w in enumerate(widths):
            x -> dense(w).tanh
        return x -> dense(2)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp([8, 6], [1.0, 2.0]) as a -> Mlp([4, 4, 3], [3.0, 0.5, 2.0]) as b -> dense(2) as head
"""


def test_loops_over_zip_and_enumerate_count_their_lists() -> None:
    """``zip``'s loop counts its own iterations (``j`` is taken by no name, ``i`` by the
    second loop's target); ``enumerate``'s target is its count. An ``enumerate`` or a
    ``zip`` has no ``len``: a count after them is their lists' (``min(len(widths),
    len(scales))``, ``len(widths)``)."""
    text = _checked(ZIPPED, "zipped")
    assert (
        "        for j, (w, _) in enumerate(zip(widths, scales)):\n"
        '            setattr(self, f"dense{j + 1}", nn.Linear(channels, w))\n'
    ) in text, text
    assert (
        "        for i, w in enumerate(widths):\n"
        '            setattr(self, f"dense{min(len(widths), len(scales)) + i + 1}", '
        "nn.Linear(channels, w))\n"
    ) in text, text
    assert "dense{min(len(self.widths), len(self.scales)) + len(self.widths) + 1}" in text


NESTED = """\
model Mlp(widths, cfg):
    def forward(x):
        for w in widths:
            for v, s in cfg:
                x -> dense(v).relu -> multiply(s)
        return x -> layer_norm()

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp([8, 6], [(3, 1.0)]) as a -> Mlp([4, 4, 3], [(2, 2.0), (5, 3.0)]) as b -> dense(2) as head
"""


def test_loops_over_items_nested_in_each_other() -> None:
    """Each loop counts apart (``i``, ``j``): ``dense{i * len(cfg) + j + 1}``."""
    text = _checked(NESTED, "nested_items")
    assert (
        "        for i in range(len(widths)):\n"
        "            for j, (v, _) in enumerate(cfg):\n"
        '                setattr(self, f"dense{i * len(cfg) + j + 1}", nn.Linear(channels, v))\n'
    ) in text, text
    assert (
        "        for i in range(len(self.widths)):\n"
        "            for j, (_, s) in enumerate(self.cfg):\n"
        '                x = getattr(self, f"dense{i * len(self.cfg) + j + 1}")(x)\n'
    ) in text, text


NETWORK = """\
model Net(widths):
    def forward(x):
        x -> dense(4) as stem
        for w in widths:
            x -> dense(w).relu
        return x -> dense(3) as head

model small = Net([8, 6]):
    input_shape = (5,)

model wide = Net([4, 4, 3]):
    input_shape = (5,)
"""


def test_a_network_loop_over_a_list() -> None:
    """A network whose variants' lists differ in length: the same names."""
    code = rolls_exactly(NETWORK, "network_list", torch.randn(2, 5))
    assert (
        "        for i, w in enumerate(widths):\n"
        '            setattr(self, f"dense{i + 2}", nn.Linear(channels, w))\n'
    ) in code, code
    assert (
        "        for i in range(len(self.widths)):\n"
        '            x = getattr(self, f"dense{i + 2}")(x)\n'
    ) in code, code


STACK = """\
model Mlp(widths):
    def forward(x):
        for w in widths:
            x -> dense(w).relu as stack.*
        return x -> dense(2)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Mlp([8, 6]) as a -> Mlp([4, 4, 3]) as b -> dense(2) as head
"""


def test_a_container_filled_in_order_by_a_loop_over_a_list() -> None:
    """``as stack.*``: forward indexes the container by the loop's count,
    ``self.stack[i]`` (was 'the iterations of 'w' differ', the child's index read as the
    loop's item); the head counts the container's modules, which the IR numbers as
    ``dense`` too."""
    text = _checked(STACK, "stack_list")
    assert (
        "        self.stack = nn.Sequential()\n"
        "        channels = in_features\n"
        "        for w in widths:\n"
        "            self.stack.append(nn.Linear(channels, w))\n"
    ) in text, text
    assert (
        "        for i in range(len(self.widths)):\n"
        "            x = self.stack[i](x)\n"
        "            x = F.relu(x)\n"
        '        return getattr(self, f"dense{len(self.widths) + 1}")(x)\n'
    ) in text, text
