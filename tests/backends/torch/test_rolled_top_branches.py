"""Issue 24 item 3: "a block chosen by ``if`` stays one readable class with the branch in
``__init__``/``forward``". A block whose calls differ in a loop count (or rows) and that
has an ``if`` on a parameter outside its loops kept one class per call (``an if outside a
loop``). The block roller now writes that ``if``/``elif``/``else`` (flags, comparisons,
``and``/``or``/``not``) before or after a loop, in ``__init__`` and ``forward``: each
branch makes the modules of the build of one class per call that takes it, under its
names (numbered on from the loops before: ``conv1d{n + 1}``), in its order, and the
running width is the local ``channels`` whichever branch ran. An unnamed module after
the ``if`` whose number depends on the branch taken keeps the calls' classes, with a
located note.

Each program is built against the build with one class per call (``per_call=True``): the
same modules in the same order, a strict load of random weights, equal outputs; and
``roll_check.check_source`` finds no problem (it builds the class at the flag values and
counts no call gave, against the class of one call that a program calling it so
compiles to)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, build, twin  # noqa: E402


def _one_class(source: str, name: str, block: str, *inputs: torch.Tensor) -> str:
    """The generated code: one class for ``block`` and no note; each call's class of the
    per-call build has its modules in its order (the same state-dict keys and initial
    weights), strict-loads its random weights and computes the same; ``check_source``
    finds no problem (``one_class.twin`` against the per-call build)."""
    checked = twin(source, name, *inputs, against=("per_call",), roll_networks=False, named=False)
    code = checked.code
    assert CLASS.findall(code) == [block, "Net"], code
    assert len(CLASS.findall(checked.per_call)) > 2, checked.per_call  # the calls' own classes
    return code


AFTER_LOOP = """\
model Fam(n, flag):
    def forward(x):
        for i in range(n):
            x -> conv1d(4, 3, padding=1)
        if flag:
            x -> conv1d(6, 3, padding=1)
        else:
            x -> batchnorm()
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Fam(2, true) -> Fam(3, false)
        return x
"""


def test_an_if_after_a_loop_numbers_its_module_on_from_the_loop() -> None:
    """The branch's ``conv1d`` is ``conv1d3`` after two iterations (the IR numbers the
    operation on): ``conv1d{n + 1}``; the width is the local whichever branch ran."""
    code = _one_class(AFTER_LOOP, "after_loop", "Fam", torch.randn(2, 4, 8))
    assert (
        "        channels = in_channels\n"
        "        for i in range(n):\n"
        '            setattr(self, f"conv1d{i + 1}", nn.Conv1d(channels, 4, kernel_size=3,'
        " padding=1))\n"
        "            channels = 4\n"
        "        if flag:\n"
        '            setattr(self, f"conv1d{n + 1}", nn.Conv1d(channels, 6, kernel_size=3,'
        " padding=1))\n"
        "            channels = 6\n"
        "        else:\n"
        "            self.batchnorm1 = nn.BatchNorm1d(channels)\n"
    ) in code, code
    assert (
        "    def forward(self, x):\n"
        "        # x: (batch, in_channels, 8)\n"
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"conv1d{i + 1}")(x)\n'
        "        if self.flag:\n"
        '            x = getattr(self, f"conv1d{self.n + 1}")(x)\n'
        "        else:\n"
        "            x = self.batchnorm1(x)\n"
        "        return x\n"
    ) in code, code
    module, _, _ = build(AFTER_LOOP, "after_loop_by_hand")
    built = module.Fam(4, 1, True)  # a count and flag no call gave together
    assert [name for name, _ in built.named_children()] == ["conv1d1", "conv1d2"]


CONTAINER = """\
model Fam(n, flag):
    def forward(x):
        for i in range(n):
            x -> conv1d(4, 3, padding=1) as layers.{i}
        if flag:
            x -> conv1d(4, 3, padding=1)
        else:
            x -> batchnorm()
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Fam(2, true) -> Fam(3, false)
        return x
"""


def test_an_if_after_a_container_the_loop_fills() -> None:
    """Each call's forward applies ``self.layers`` whole; the rolled forward reads it a
    child a statement and applies it whole again (as a network's does)."""
    code = _one_class(CONTAINER, "container", "Fam", torch.randn(2, 4, 8))
    assert (
        "        self.layers = stage\n"
        "        if flag:\n"
        '            setattr(self, f"conv1d{n + 1}", nn.Conv1d(channels, 4, kernel_size=3,'
        " padding=1))\n"
    ) in code, code
    assert (
        "        x = self.layers(x)\n"
        "        if self.flag:\n"
        '            x = getattr(self, f"conv1d{self.n + 1}")(x)\n'
    ) in code, code


BEFORE_LOOP = """\
model Fam(flag, w, n, op = relu):
    def forward(x):
        if flag:
            x -> dense(w).relu
        else:
            x -> layer_norm()
        for i in range(n):
            x -> dense(4) as layers.{i} -> op
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam(true, 8, 3, op=gelu)
        x -> Fam(true, 8, 0, op=silu)
        x -> Fam(false, 8, 1)
        return x
"""


def test_an_if_before_a_loop() -> None:
    """The loop reads the width whichever branch left (``channels``)."""
    code = _one_class(BEFORE_LOOP, "before_loop", "Fam", torch.randn(2, 4))
    assert (
        "        channels = in_features\n"
        "        if flag:\n"
        "            self.dense1 = nn.Linear(channels, w)\n"
        "            channels = w\n"
        "        else:\n"
        "            self.layer_norm1 = nn.LayerNorm(channels)\n"
        "        stage = nn.Sequential()\n"
        "        for i in range(n):\n"
        "            stage.append(nn.Linear(channels, 4))\n"
    ) in code, code
    assert (
        "        if self.flag:\n"
        "            x = self.dense1(x)\n"
        "            x = F.relu(x)\n"
        "        else:\n"
        "            x = self.layer_norm1(x)\n"
    ) in code, code


ELIF = """\
model Fam(n, mode, flag):
    def forward(x):
        if mode == 1 and not flag:
            x -> dense(8) -> layer_norm()
        elif mode == 2 or flag:
            x -> dense(6).gelu
        else:
            x -> layer_norm()
        for i in range(n):
            x -> dense(4).relu as fc{i}
        if flag:
            x -> dense(5) as head
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(2, 1, false) -> Fam(1, 2, true) -> Fam(0, 3, false) -> Fam(3, 1, true)
        return x
"""


def test_elif_comparisons_and_an_if_without_else() -> None:
    """``if``/``elif``/``else`` of comparisons with ``and``/``or``/``not`` before the
    loop, and an ``if`` with no ``else`` after it; each branch names its modules as the
    calls taking it do (``dense1`` in both of the first two)."""
    code = _one_class(ELIF, "elif", "Fam", torch.randn(2, 3))
    assert (  # True is not 1 in the language (a boolean may reach mode)
        "        if mode == 1 and mode is not True and not flag:\n"
        "            self.dense1 = nn.Linear(channels, 8)\n"
        "            channels = 8\n"
        "            self.layer_norm1 = nn.LayerNorm(channels)\n"
        "        elif mode == 2 or flag:\n"
        "            self.dense1 = nn.Linear(channels, 6)\n"
        "            channels = 6\n"
        "        else:\n"
        "            self.layer_norm1 = nn.LayerNorm(channels)\n"
    ) in code, code
    tested = "self.mode == 1 and self.mode is not True and not self.flag"
    assert f"        if {tested}:\n" in code, code
    assert "        elif self.mode == 2 or self.flag:\n" in code, code
    assert "        if flag:\n            self.head = nn.Linear(channels, 5)\n" in code, code


PASSED_ON = """\
model Fam(n, flag):
    def forward(x):
        for i in range(n):
            x -> dense(4)
        if flag:
            x -> dense(6)
        else:
            x -> layer_norm()
        return x

model Outer(k, flag):
    def forward(x):
        for i in range(k):
            x -> Fam(1, flag) as f{i}
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Outer(1, true) -> Outer(2, false) -> Fam(2, false)
        return x
"""


def test_a_caller_passing_the_test_on_reads_the_width_from_the_module() -> None:
    """The width after ``Fam(1, flag)`` is the branch's (6, or the input's): no text of
    ``Outer``'s arguments gives it at every flag, so ``Fam`` stores what its ``if`` left
    and ``Outer`` reads it (``layer.out_channels``), as after a loop of a count passed on."""
    checked = twin(
        PASSED_ON,
        "passed_on",
        torch.randn(2, 3),
        against=("per_call",),
        roll_networks=False,
        named=False,
    )
    code = checked.code
    assert CLASS.findall(code) == ["Fam", "Outer", "Net"], code
    assert "        self.out_channels = channels\n\n    def forward" in code, code
    assert (
        "            layer = Fam(channels, 1, flag)\n"
        '            setattr(self, f"f{i}", layer)\n'
        "            channels = layer.out_channels\n"
    ) in code, code
    # a flag no call of 2 gave
    assert checked.gen.module.Outer(3, 2, True).f1.dense1.in_features == 6
