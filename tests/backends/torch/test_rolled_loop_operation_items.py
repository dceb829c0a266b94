"""Issue 24 item 3: an operation-valued parameter reaching a step, a suffix or an inner
block through a loop over ``enumerate`` or ``zip`` of a list that names it (``for i, a in
enumerate([act, gelu, act])``, ``for w, a in zip(widths, [act, gelu])``). The IR followed
the parameter through a loop over a list only, so each instance wrote its own module class
(``nn.ReLU``, ``nn.Tanh``) and the classes stayed apart, and the roller could not write the
list's other operation (``the name 'gelu' has no Python value here``). The class now takes
the module class, and a loop the roller writes reads ``[act, nn.GELU]``. Each program runs
against its IR and its ``Net`` is built as the build of one class per call builds it (the
same modules in the same order), strict-loads it and computes the same; ``roll_check``
rebuilds the rolled class at arguments no call gives (``one_class.twin``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, build, roll_notes, twin  # noqa: E402

ENUMERATE = """\
model Stage(width, act):
    def forward(x):
        for i, a in enumerate([act, gelu, act]):
            x = x -> dense(width).a
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(8, relu) as s -> Stage(4, tanh) as t -> dense(2) as head
"""


def test_an_operation_through_enumerate_of_a_list_is_the_class_parameter() -> None:
    """``for i, a in enumerate([act, gelu, act])``: ``self.act`` where the item names the
    parameter, ``F.gelu`` otherwise; one ``Stage`` for ``relu`` and ``tanh``."""
    checked = twin(ENUMERATE, "enum_ops", torch.randn(3, 8))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Stage", "Net"], flat  # a module class per call, alike
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert "self.act = act()" in stage and stage.count("self.act(x)") == 2, stage
    assert "F.gelu(x)" in stage, stage
    assert "Stage(8, 8, nn.ReLU)" in gen.code and "Stage(8, 4, nn.Tanh)" in gen.code


ZIP = """\
model Inner(width, act):
    def forward(x):
        x -> dense(width).act

model Stage(act):
    def forward(x):
        for w, a in zip([8, 6], [act, gelu]):
            x = Inner(x, w, a)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(relu) as s -> Stage(tanh) as t -> dense(2) as head
"""


def test_an_operation_through_zip_reaches_an_inner_block() -> None:
    """``for w, a in zip([8, 6], [act, gelu])``: the first iteration passes the class's
    parameter on (``Inner(in_features, 8, act)``), the second ``nn.GELU``."""
    checked = twin(ZIP, "zip_ops", torch.randn(3, 8))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Inner", "Stage", "Net"], flat
    assert CLASS.findall(gen.code) == ["Inner", "Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert "self.inner1 = Inner(in_features, 8, act)" in stage, stage
    assert "self.inner2 = Inner(8, 6, nn.GELU)" in stage, stage


ROLLED = """\
model Inner(width, act):
    def forward(x):
        x -> dense(width).act

model Stage(widths, act):
    def forward(x):
        for i, (w, a) in enumerate(zip(widths, [act, gelu])):
            x = Inner(x, w, a) as inners{i}
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage([8, 6], relu) as s -> Stage([4], tanh) as t -> dense(2) as head
"""


def test_a_rolled_loop_over_zip_writes_the_other_operation_by_its_module_class() -> None:
    """The calls differ in the loop's count, so the class runs the loop; the list's
    ``gelu`` is ``nn.GELU`` (it was ``the name 'gelu' has no Python value here``), ``act``
    the class's parameter, checked against each call's inner block at every visit."""
    checked = twin(ROLLED, "zip_rolled", torch.randn(3, 8))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Inner", "Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Inner", "Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert (
        "        for i, (w, a) in enumerate(zip(widths, [act, nn.GELU])):\n"
        '            setattr(self, f"inners{i}", Inner(channels, w, a))\n'
    ) in stage, stage
    model, _, _ = build(ROLLED, "zip_rolled_model")
    net = model.Net()
    assert isinstance(net.s.inners0.act, torch.nn.ReLU)
    assert isinstance(net.s.inners1.act, torch.nn.GELU)
    assert isinstance(net.t.inners0.act, torch.nn.Tanh)


APPLIED = """\
model Head(act, n):
    def forward(x):
        for i in range(n):
            x -> dense(4).relu
        for a in [act, sigmoid]:
            x -> dense(4) -> a
        return x -> dense(3)

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Head(relu, 1) as h1 -> Head(tanh, 2) as h2 -> dense(2) as out
"""


def test_a_rolled_loop_applying_its_operations_iterates_their_functions() -> None:
    """``for a in [act, sigmoid]: x -> dense(4) -> a`` in a class that runs its loops
    (the calls' ``n`` differ): forward iterates the functions each call's class applied,
    ``[self.act, torch.sigmoid]`` (the parameter's module, built as in the class of one
    call), and applies ``a(x)``; it fell back with ``the iterations of 'a' differ``. No
    module is added: the state dict and the modules are those of one class per call."""
    checked = twin(APPLIED, "applied_ops", torch.randn(3, 5))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Head", "Head_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Head", "Net"], gen.code
    head = block_class(gen, "Head")
    assert "        self.act = act()\n" in head, head
    assert (
        "        for j in range(2):\n"
        '            setattr(self, f"dense{n + j + 1}", nn.Linear(channels, 4))\n'
    ) in head, head
    assert '        setattr(self, f"dense{n + 3}", nn.Linear(channels, 3))\n' in head, head
    assert (
        "        for j, a in enumerate([self.act, torch.sigmoid]):\n"
        '            x = getattr(self, f"dense{self.n + j + 1}")(x)\n'
        "            x = a(x)\n"
        '        return getattr(self, f"dense{self.n + 3}")(x)\n'
    ) in head, head
    # the same named modules, as a class per call; built with another n: that call's class
    assert checked.counts["other arguments"] > 0, checked.counts


SUFFIXED = """\
model Head(act, widths):
    def forward(x):
        for w in widths:
            x -> dense(w).relu
        for a in [gelu, act, sigmoid]:
            x -> dense(4).a
        return x

model Net:
    input_shape = (5,)
    def forward(x):
        x -> Head(relu, [3]) as h1 -> Head(tanh, [4, 6]) as h2 -> dense(2) as out
"""


def test_a_loop_applying_its_operations_as_a_suffix() -> None:
    """``dense(4).a``, and the loop before it over a list: ``F.gelu`` and ``torch.sigmoid``
    for the list's own operations, ``self.act`` for the parameter."""
    gen = twin(SUFFIXED, "suffixed_ops", torch.randn(3, 5)).gen
    assert CLASS.findall(gen.code) == ["Head", "Net"], gen.code
    head = block_class(gen, "Head")
    assert (
        "        for i, a in enumerate([F.gelu, self.act, torch.sigmoid]):\n"
        '            x = getattr(self, f"dense{len(self.widths) + i + 1}")(x)\n'
        "            x = a(x)\n"
    ) in head, head


def test_a_parameter_given_as_a_function_is_its_stored_function() -> None:
    """``exp`` has no module class: the class stores the function (``self.act = act``),
    which the list names alike."""
    source = APPLIED.replace("Head(relu, 1)", "Head(exp, 1)")
    checked = twin(source, "function_ops", torch.randn(3, 5))
    gen, code = checked.gen, checked.per_call
    assert CLASS.findall(gen.code) == ["Head", "Net"], gen.code
    head = block_class(gen, "Head")
    assert "        self.act = act\n" in head, head
    assert "        for j, a in enumerate([self.act, torch.sigmoid]):\n" in head, head
    # the class of one call with tanh folds it (torch.tanh(x)) as the rolled class
    # applies a function: no module 'h2.act' in either build (it built nn.Tanh() there)
    assert "h2.act" not in checked.modules and "torch.tanh(x)" in code, code


def test_a_list_item_without_a_module_class_is_its_function() -> None:
    """``[act, exp]``: ``exp`` has no module class, which ``__init__`` does not need (it
    counts the loop, ``for j in range(2):``); forward applies ``torch.exp``, as the class
    of one call writes ``x.exp()``. It fell back with 'the name 'exp' has no Python value
    here'."""
    source = APPLIED.replace("[act, sigmoid]", "[act, exp]")
    gen = twin(source, "exp_item", torch.randn(3, 5)).gen
    assert CLASS.findall(gen.code) == ["Head", "Net"], gen.code
    head = block_class(gen, "Head")
    assert "        for j in range(2):\n" in head, head
    assert "        for j, a in enumerate([self.act, torch.exp]):\n" in head, head


def test_an_applied_operation_with_arguments_is_a_partial_function() -> None:
    """``softmax`` applies ``F.softmax(x, dim=-1)``: its item is
    ``functools.partial(F.softmax, dim=-1)`` (imported), as a block's function argument
    is passed; it kept a class per call. ``layer_norm`` builds a module with weights in
    one iteration and not in the other: no function, so its calls keep their classes,
    with a located note."""
    source = APPLIED.replace("[act, sigmoid]", "[act, softmax]")
    gen = twin(source, "softmax_item", torch.randn(3, 5)).gen
    assert CLASS.findall(gen.code) == ["Head", "Net"], gen.code
    head = block_class(gen, "Head")
    assert (
        "        for j, a in enumerate([self.act, functools.partial(F.softmax, dim=-1)]):\n"
    ) in head, head
    assert "\nimport functools\n" in gen.code
    notes, code = roll_notes(APPLIED.replace("[act, sigmoid]", "[act, layer_norm]"))
    assert notes == ["block 'Head' at 1:7: the iterations of 'a' differ"], notes
    assert "class Head_2(" in code


ZIP_APPLIED = """\
model Stage(widths, act):
    def forward(x):
        for w, a in zip(widths, [act, gelu]):
            x -> dense(w) -> a
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage([8, 6], relu) as s -> Stage([4], tanh) as t -> dense(2) as head
"""


def test_a_loop_over_zip_applying_its_written_list() -> None:
    """``for w, a in zip(widths, [act, gelu]): x -> dense(w) -> a``: forward zips the
    functions the iterations applied, ``[self.act, F.gelu]`` (the parameter's module, as
    the class of one call builds it), and applies ``a(x)``; ``F.gelu`` for the call whose
    shorter ``widths`` stops before it (the list's own operation). It fell back with 'the
    statement of 'relu1' that 'a' applies'."""
    checked = twin(ZIP_APPLIED, "zip_applied", torch.randn(3, 8))
    gen, flat = checked.gen, checked.per_call
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert "        self.act = act()\n" in stage and "self.act_2" not in stage, stage
    assert (
        "        for i, (_, a) in enumerate(zip(self.widths, [self.act, F.gelu])):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            x = a(x)\n"
    ) in stage, stage
    assert checked.counts["calls"] == 2, checked.counts


def test_a_loop_over_enumerate_applying_its_written_list() -> None:
    """``for i, a in enumerate([act, gelu, act]): x -> dense(4).a`` in a class that runs
    its loops (the calls' ``n`` differ): ``enumerate([self.act, F.gelu, self.act])``."""
    source = """\
model Stage(n, act):
    def forward(x):
        for i in range(n):
            x -> dense(4).relu
        for i, a in enumerate([act, gelu, act]):
            x -> dense(4).a
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(1, relu) as s -> Stage(2, tanh) as t -> dense(2) as head
"""
    checked = twin(source, "enum_applied", torch.randn(3, 8))
    gen = checked.gen
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    stage = block_class(gen, "Stage")
    assert (
        "        for i, a in enumerate([self.act, F.gelu, self.act]):\n"
        '            x = getattr(self, f"dense{self.n + i + 1}")(x)\n'
        "            x = a(x)\n"
    ) in stage, stage
    assert checked.counts["other arguments"] > 0, checked.counts


def test_a_zipped_list_with_a_module_item_keeps_a_class_per_call() -> None:
    """``zip(widths, [act, layer_norm])``: ``layer_norm`` is a module with weights in the
    class of one call (``self.layer_norm1``), no function (nor a module class that
    ``__init__`` could write without arguments): a located note."""
    notes, code = roll_notes(ZIP_APPLIED.replace("[act, gelu]", "[act, layer_norm]"))
    note = "block 'Stage' at 1:7: the name 'layer_norm' has no Python value here"
    assert notes == [note], notes
    assert "class Stage_2(" in code


FUNCTIONS_GIVEN = """\
model Stage(n, act):
    def forward(x):
        for i in range(n):
            x -> dense(4) -> act
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(2, relu) as stage1 -> Stage(1, exp) as stage2 -> Stage(1, identity) as stage3
          -> dense(2) as head
"""


def test_an_operation_parameter_taken_as_a_function_has_the_modules_of_one_class_per_call() -> None:
    """``relu``, ``exp`` and ``identity`` given: the rolled class takes functions
    (``self.act = act``; ``nn.Identity()`` for identity, a module). The build with a
    class per call built ``self.act = nn.ReLU()`` for ``relu`` (a module 'stage1.act' the
    rolled build has not); it folds it now (``F.relu(x)``), and keeps ``self.act =
    act()`` for ``identity``, whose function is a module's instance in both builds."""
    checked = twin(FUNCTIONS_GIVEN, "functions_given", torch.randn(3, 4))
    gen, code, names = checked.gen, checked.per_call, checked.modules
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert "stage1.act" not in names and "stage3.act" in names, names
    assert "F.relu(x)" in code and "self.act = act()" in code, code
