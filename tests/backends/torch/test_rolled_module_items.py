"""Issue 24 item 3: a loop over a list the calls give whose items build a module in the
class of one call (``for w, a in cfg: x -> dense(w) -> a`` with ``cfg = [(8, relu), (6,
layer_norm)]``, or ``for a in acts`` given ``[identity, gelu]``). That class numbers such
modules per operation over the instance (``layer_norm1``, ``identity1``), so each call kept
its class with 'the iterations of 'w, a' differ' or 'an unnamed 'a' module in a loop'. The
calls now pass the item's class (``nn.LayerNorm``, built from the width as torchvision
builds ``norm_layer(channels)``; ``nn.Identity``), and the rolled class tests each item by
it, counting that operation's modules as the IR names them (``layer_norm_count``), applying
the module it counted in forward and building any other item where it applies it (``x =
a()(x)``). Each program runs against its IR, and its ``Net`` is built as the build of one
class per call builds it (the same modules in the same order), strict-loads that build's
weights and computes the same; ``roll_check`` rebuilds the rolled class at each call's
arguments and at arguments no call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    roll_notes,
    twin,
)

ROWS = """\
model Stage(cfg):
    def forward(x):
        for w, a in cfg:
            x -> dense(w) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8, relu), (6, layer_norm)]) as s
          -> Stage([(4, tanh), (5, layer_norm), (3, gelu), (3, layer_norm)]) as t
          -> dense(2) as head
"""


def _rolled(source: str, name: str) -> str:
    """The checks of the module docstring; the rolled ``Stage``."""
    checked = twin(source, name, torch.randn(3, 4))
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert counts["calls"] == 2, counts
    return block_class(gen, "Stage")


def test_rows_with_a_norm_build_it_counted_per_operation() -> None:
    """``(6, layer_norm)`` rows: ``if a is nn.LayerNorm:`` counts ``layer_norm{k}`` and
    builds ``a(channels)``; forward applies the module it counted, and builds any other
    row's operation where it applies it. It was ``Stage`` and ``Stage_2``."""
    stage = _rolled(ROWS, "norm_rows")
    assert (
        "        layer_norm_count = 0\n"
        "        for i, (w, a) in enumerate(cfg):\n"
        "            # the operations the calls' items give\n"  # refused before anything is built
        "            if a not in (nn.ReLU, nn.LayerNorm, nn.Tanh, nn.GELU):\n"
        "                raise ValueError(\n"
        '                    f"Stage is written for a in (nn.ReLU, nn.LayerNorm, nn.Tanh, nn.GELU), not {a.__name__}",\n'
        "                )\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n'
        "            channels = w\n"
        "            if a is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                setattr(self, f"layer_norm{layer_norm_count}", a(channels))\n'
    ) in stage, stage
    assert (
        "        layer_norm_count = 0\n"
        "        for i, (_, a) in enumerate(self.cfg):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            if a is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                x = getattr(self, f"layer_norm{layer_norm_count}")(x)\n'
        "            else:\n"
        "                x = a()(x)\n"
    ) in stage, stage
    model, code, _ = build(ROWS, "norm_rows_built")
    assert "Stage(4, ((8, nn.ReLU), (6, nn.LayerNorm)))" in code, code
    net = model.Net()
    assert isinstance(net.t.layer_norm2, torch.nn.LayerNorm)
    assert net.t.layer_norm2.normalized_shape == (3,)
    assert "t.layer_norm2.weight" in net.state_dict()


def test_a_plain_list_with_identity_and_a_norm() -> None:
    """``for a in acts`` given ``[relu, layer_norm]`` and ``[identity, gelu]``: one test
    per operation built, ``identity`` built alone (``a()``), each counted apart."""
    source = """\
model Stage(acts):
    def forward(x):
        for a in acts:
            x -> dense(4) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([relu, layer_norm]) as s -> Stage([identity, gelu, identity]) as t
          -> dense(2) as head
"""
    stage = _rolled(source, "acts_modules")
    assert (
        "            if a is nn.Identity:\n"
        "                identity_count += 1\n"
        '                setattr(self, f"identity{identity_count}", a())\n'
        "            elif a is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                setattr(self, f"layer_norm{layer_norm_count}", a(channels))\n'
    ) in stage, stage
    assert "        identity_count = 0\n        layer_norm_count = 0\n" in stage, stage
    model, code, _ = build(source, "acts_modules_built")
    assert "Stage(4, (nn.Identity, nn.GELU, nn.Identity))" in code, code
    names = [n for n, _ in model.Net().named_modules()]
    assert "t.identity2" in names and "s.layer_norm1" in names, names


def test_rms_norm_rows() -> None:
    """``rms_norm`` items: ``nn.RMSNorm`` built from the width (``a(channels)``)."""
    stage = _rolled(ROWS.replace("layer_norm", "rms_norm"), "rms_rows")
    assert "            if a is nn.RMSNorm:\n" in stage, stage
    assert 'setattr(self, f"rms_norm{rms_norm_count}", a(channels))' in stage, stage


def test_a_module_numbered_with_others_of_the_block_keeps_a_class_per_call() -> None:
    """A ``layer_norm`` before the loop takes ``layer_norm1``, so the rows' modules are
    numbered on from it, which a counter over the loop would not name: a located note."""
    source = ROWS.replace(
        "        for w, a in cfg:", "        x -> layer_norm\n        for w, a in cfg:"
    )
    notes, code = roll_notes(source)
    assert len(notes) == 1 and notes[0].startswith("block 'Stage' at 1:7: "), notes
    assert "layer_norm" in notes[0], notes
    assert "class Stage_2(" in code


def test_an_item_whose_module_is_not_built_from_the_width_keeps_a_class_per_call() -> None:
    """On images, ``layer_norm`` normalises the last axis (``nn.LayerNorm(5)``), not the
    channels the class threads: a located note, the calls' classes kept."""
    source = """\
model Stage(cfg):
    def forward(x):
        for w, a in cfg:
            x -> conv2d(w, 3, padding=1) -> a
        return x

model Net:
    input_shape = (3, 5, 5)
    def forward(x):
        x -> Stage([(8, relu), (6, layer_norm)]) as s -> Stage([(4, layer_norm)]) as t
"""
    notes, code = roll_notes(source)
    assert len(notes) == 1 and notes[0].startswith("block 'Stage' at 1:7: "), notes
    assert "class Stage_2(" in code


def test_a_per_stage_norm_on_tokens() -> None:
    """Swin's per-stage norm choice on tokens (``(16, 8)``: the class threads the last
    axis, which ``layer_norm`` normalises): ``norm(channels)`` beside ``norm()`` for
    ``identity``."""
    source = """\
model Stage(cfg):
    def forward(x):
        for w, norm in cfg:
            x -> dense(w).gelu -> norm
        return x

model Net:
    input_shape = (16, 8)
    def forward(x):
        x -> Stage([(8, layer_norm), (6, identity)]) as s -> Stage([(4, layer_norm)]) as t
          -> dense(2) as head
"""
    checked = twin(source, "token_norms", torch.randn(2, 16, 8))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert '                setattr(self, f"identity{identity_count}", norm())\n' in stage
    assert (
        '                setattr(self, f"layer_norm{layer_norm_count}", norm(channels))\n' in stage
    )


def test_items_after_loops_the_calls_count_differently() -> None:
    """A loop over ``range(n)`` and a constant table before the list's loop (the calls
    give ``n = 1`` and ``2``): the list's modules are counted apart from the ``dense``
    numbering (``dense{n + len(table) + j + 1}``); ``roll_check`` rebuilds the class at
    other counts."""
    source = """\
model Stage(acts, n):
    table = [(8, relu), (6, gelu)]
    def forward(x):
        for i in range(n):
            x -> dense(4)
        for w, b in table:
            x -> dense(w) -> b
        for a in acts:
            x -> dense(4) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([relu, layer_norm], 1) as s -> Stage([tanh], 2) as t -> dense(2) as head
"""
    checked = twin(source, "counted_norms", torch.randn(3, 4))
    gen = checked.gen
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert (
        "        layer_norm_count = 0\n"
        "        for j, a in enumerate(self.acts):\n"
        '            x = getattr(self, f"dense{self.n + len(self.table) + j + 1}")(x)\n'
        "            if a is nn.LayerNorm:\n"
    ) in stage, stage
    counts = checked.counts  # roll_check's, at arguments no call gives
    assert counts["other arguments"] > 0, counts


def test_module_items_beside_function_items() -> None:
    """``exp`` has no module class, so the calls pass the items as functions (``F.relu``,
    ``torch.exp``) and forward applies one as it is (``a(x)``); a ``layer_norm`` or
    ``identity`` item is still its module class, which the class tests and builds. It
    kept a class per call ('an unnamed 'a' module in a loop')."""
    source = ROWS.replace("(8, relu)", "(8, exp)").replace("(5, layer_norm)", "(5, identity)")
    stage = _rolled(source, "function_norm_rows")
    assert (
        "            if a is nn.Identity:\n"
        "                identity_count += 1\n"
        '                x = getattr(self, f"identity{identity_count}")(x)\n'
        "            elif a is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                x = getattr(self, f"layer_norm{layer_norm_count}")(x)\n'
        "            else:\n"
        "                x = a(x)\n"
    ) in stage, stage
    _, code, _ = build(source, "function_norm_rows_code")
    assert "Stage(4, ((8, torch.exp), (6, nn.LayerNorm)))" in code, code
    assert "(5, nn.Identity), (3, F.gelu), (3, nn.LayerNorm)" in code, code
