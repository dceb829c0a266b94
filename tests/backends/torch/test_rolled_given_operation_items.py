"""Issue 24 item 3: a loop over a list the calls give whose items carry operations,
MobileNetV3's config rows (``for w, a in cfg: x -> dense(w) -> a``, ``cfg = [(8, relu),
(6, gelu)]``), or a plain list of operations (``for a in acts``). The calls pass the list
with module classes (``Stage(4, ((8, nn.ReLU), (6, nn.GELU)))``), but each call kept its
class with the note 'the iterations of 'w, a' differ'. The rolled class builds each row's
module where forward applies it (``x = a()(x)``: the operations have no weights, and the
class of one call builds no module for them), so the modules and state-dict keys are that
build's. Each program runs against its IR and its ``Net`` is built as the build of one
class per call builds it (the same modules in the same order), strict-loads it and
computes the same; ``roll_check`` rebuilds the rolled class at each call's arguments."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    per_call,
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
        x -> Stage([(8, relu), (6, gelu)]) as s -> Stage([(4, tanh)]) as t -> dense(2) as head
"""


def _rolled(source: str, name: str) -> str:
    """The checks of the module docstring; the rolled ``Stage``."""
    checked = twin(source, name, torch.randn(3, 4))
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert counts["calls"] == 2, counts
    return block_class(gen, "Stage")


def test_config_rows_with_operations_are_one_class() -> None:
    """``for i, (w, a) in enumerate(self.cfg): ... x = a()(x)``, the calls passing the
    rows as they did; it was ``Stage`` and ``Stage_2``."""
    stage = _rolled(ROWS, "rows")
    assert (
        "        for i, (w, a) in enumerate(cfg):\n"
        # the item read in __init__ by its refusal (an operation no call gives is
        # refused), first in the loop: before the iteration builds anything
        "            if a not in (nn.ReLU, nn.GELU, nn.Tanh):  # the operations the calls' items give\n"
    ) in stage, stage
    assert '            setattr(self, f"dense{i + 1}", nn.Linear(channels, w))\n' in stage, stage
    assert (
        "        for i, (_, a) in enumerate(self.cfg):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = a()(x)\n"
    ) in stage, stage
    model, code, _ = build(ROWS, "rows_built")
    assert "Stage(4, ((8, nn.ReLU), (6, nn.GELU)))" in code
    assert "Stage(6, ((4, nn.Tanh),))" in code
    assert model.Net().s.cfg == ((8, torch.nn.ReLU), (6, torch.nn.GELU))


def test_a_suffix_and_an_operation_with_keywords() -> None:
    """``dense(w).a``, and ``softmax`` as an item: the call passes its module factory,
    ``functools.partial(nn.Softmax, dim=-1)`` (it passed the string ``"softmax"``, which
    no class could apply)."""
    source = ROWS.replace("dense(w) -> a", "dense(w).a").replace("(6, gelu)", "(6, softmax)")
    stage = _rolled(source, "rows_softmax")
    assert "            x = a()(x)\n" in stage, stage
    _, code, _ = build(source, "rows_softmax_code")
    assert "Stage(4, ((8, nn.ReLU), (6, functools.partial(nn.Softmax, dim=-1))))" in code
    assert "\nimport functools\n" in code


def test_a_plain_list_of_operations() -> None:
    """``model Stage(acts): for a in acts: x -> dense(4) -> a``: ``Stage(4, (nn.ReLU,
    nn.GELU, nn.Sigmoid))``, forward ``for i, a in enumerate(self.acts)``."""
    source = """\
model Stage(acts):
    def forward(x):
        for a in acts:
            x -> dense(4) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([relu, gelu, sigmoid]) as s -> Stage([tanh]) as t -> dense(2) as head
"""
    stage = _rolled(source, "acts_list")
    assert (
        "        for i, a in enumerate(self.acts):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = a()(x)\n"
    ) in stage, stage


def test_rows_in_a_block_constant() -> None:
    """The rows as a block constant (``table = [(8, relu), (6, gelu)]``) in a block whose
    calls differ in a count: stored from ``__init__``'s local (``self.table = table``),
    forward builds each row's module alike. It fell back with 'the statement of 'relu2'
    that 'a' applies'."""
    source = """\
model Stage(n):
    table = [(8, relu), (6, gelu)]
    def forward(x):
        for i in range(n):
            x -> dense(4).relu
        for w, a in table:
            x -> dense(w) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(1) as s -> Stage(2) as t -> dense(2) as head
"""
    stage = _rolled(source, "rows_constant")
    assert "        table = [(8, nn.ReLU), (6, nn.GELU)]\n" in stage, stage
    assert (
        "        for j, (_, a) in enumerate(self.table):\n"
        '            x = getattr(self, f"dense{self.n + j + 1}")(x)\n'
        "            x = a()(x)\n"
    ) in stage, stage


def test_an_item_without_a_module_class_makes_the_items_functions() -> None:
    """``(4, exp)``: ``exp`` has no module class (its call passed ``"exp"``, and the calls
    kept their classes with 'the operation 'exp' that 'a' applies'). As an operation-valued
    parameter is taken as a function where one call's operation has no module class, the
    calls pass every item as its function (``F.relu``, ``torch.exp``), which forward
    applies as it is: ``x = a(x)``. No module is built for them, as before."""
    source = ROWS.replace("(4, tanh)", "(4, exp)")
    stage = _rolled(source, "rows_exp")
    assert (
        "        for i, (_, a) in enumerate(self.cfg):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = a(x)\n"
    ) in stage, stage
    model, code, _ = build(source, "rows_exp_built")
    assert "Stage(4, ((8, F.relu), (6, F.gelu)))" in code, code
    assert "Stage(6, ((4, torch.exp),))" in code, code
    assert model.Net().t.cfg == ((4, torch.exp),)


def test_function_items_with_keywords_in_a_plain_list() -> None:
    """``for a in acts`` over ``[relu, softmax]`` beside ``[exp]``: ``softmax`` is
    ``functools.partial(F.softmax, dim=-1)``, as a block's function argument is passed."""
    source = """\
model Stage(acts):
    def forward(x):
        for a in acts:
            x -> dense(4) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([relu, softmax]) as s -> Stage([exp]) as t -> dense(2) as head
"""
    stage = _rolled(source, "acts_exp")
    assert (
        "        for i, a in enumerate(self.acts):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = a(x)\n"
    ) in stage, stage
    _, code, _ = build(source, "acts_exp_code")
    assert "Stage(4, (F.relu, functools.partial(F.softmax, dim=-1)))" in code, code
    assert "Stage(4, (torch.exp,))" in code, code


@pytest.mark.parametrize("item", ["identity", "layer_norm"])
def test_an_item_building_a_module_rolls(item: str) -> None:
    """``identity`` and ``layer_norm`` are modules of the class of one call
    (``self.identity1 = nn.Identity()``, weights for ``layer_norm``), numbered by their
    operation (``identity1``, ``layer_norm1``) among the rows' ``dense`` modules. They
    kept a class per call ('the iterations of 'w, a' differ'); the class now tests the
    item and counts them (``tests/backends/torch/test_rolled_module_items.py``)."""
    notes, code = roll_notes(ROWS.replace("(4, tanh)", f"(4, {item})"))
    assert notes == [], notes
    assert "class Stage_2(" not in code and f"{item}_count += 1" in code, code


def test_an_item_whose_module_class_follows_the_rank_keeps_a_class_per_call() -> None:
    """``batch_norm`` builds ``nn.BatchNorm1d`` or ``nn.BatchNorm2d`` by the input's rank,
    no one class a call could pass: the calls keep their classes, with a located note."""
    notes, code = roll_notes(ROWS.replace("(4, tanh)", "(4, batch_norm)"))
    assert notes == ["block 'Stage' at 1:7: the iterations of 'w, a' differ"], notes
    assert "class Stage_2(" in code


def test_function_items_beside_a_constant_table_keep_a_class_per_call() -> None:
    """A block constant's rows are module classes (``__init__`` computes ``[(8, nn.ReLU),
    ...]``), which ``a(x)`` would not apply: where the calls' items are functions (``exp``
    among them), such a loop keeps the classes, with a located note."""
    source = """\
model Stage(acts):
    table = [(8, relu), (6, gelu)]
    def forward(x):
        for a in acts:
            x -> dense(4) -> a
        for w, b in table:
            x -> dense(w) -> b
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([relu, exp]) as s -> Stage([tanh]) as t -> dense(2) as head
"""
    assert roll_notes(source.replace("exp", "gelu"))[0] == []
    notes, code = roll_notes(source)
    assert len(notes) == 1 and notes[0].startswith("block 'Stage' at 1:7: the statement of"), notes
    assert "that 'b' applies" in notes[0], notes
    assert "class Stage_2(" in code


def test_function_items_passed_on_to_an_inner_block_keep_a_class_per_call() -> None:
    """A rolled class passing its rows on (``x -> Stage(cfg) as inner``) would write them
    as the walk writes a list (module classes), where the program's items are functions
    (``exp`` in one call): the outer block keeps its classes, with a located note, and the
    inner one rolls. The items are functions wherever the program gives one without a
    module class, so a list a rolled class passes on is what the inner class applies."""
    source = """\
model Stage(cfg):
    def forward(x):
        for w, a in cfg:
            x -> dense(w) -> a
        return x -> dense(4)

model Outer(cfg, acts):
    def forward(x):
        x -> Stage(cfg) as inner
        for a in acts:
            x -> dense(4) -> a
        return x -> dense(4)

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Outer([(8, relu), (6, gelu)], [exp, relu]) as s -> Outer([(4, tanh)], [relu]) as t
          -> dense(2) as head
"""
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Outer' at 7:7: the operations passed to the block 'Stage' as functions"
    ], notes
    assert "class Outer_2(" in code and "class Stage_2(" not in code, code
    assert "Stage(in_features, ((8, F.relu), (6, F.gelu)))" in code, code
    assert CLASS.findall(code) == ["Stage", "Outer", "Outer_2", "Net"], code
    mine, _, _ = build(source, "passed_on_items")
    theirs, _ = per_call(source, "passed_on_items_per_call")
    one, other = built_alike(mine, theirs, "Net")
    one.load_state_dict(other.state_dict(), strict=True)
    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(one(x), other(x), rtol=0, atol=0)
