"""Issue 24 item 3: one class per block definition. An unnamed module after an ``if``
whose branches make different numbers of its operation is numbered on by the IR across
the branch taken (``dense2`` after a branch making one, ``dense1`` after one making
none): the calls kept their classes (``an unnamed 'dense' module ... numbered on across
the branch taken of the if``, ``... after a loop that makes them under an 'if'``). The
rolled class now keeps a running count of the modules the branches taken made (``n = 0``
before, ``n += 1`` ending each branch making one), which names them
(``dense{n + i + 1}``), in ``__init__`` and forward alike (``rolled.BranchCount``,
``block_walk.branch_counts``, ``BlockWalk._numbered_on``).

Each program is built against the build with one class per call (``per_call=True``): one
class for the block, the same modules in the same order, a strict load of random weights,
equal outputs; and ``roll_check.check_source`` finds no problem (it builds the class at
flags and counts no call gave, against the class of one call so compiled)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.fuzz import generate  # noqa: E402
from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, build, twin  # noqa: E402


def _one_class(source: str, name: str, block: str, *inputs: torch.Tensor) -> str:
    """The generated code: one class for ``block`` and no note; the per-call build's
    classes have its modules in its order, strict-load their random weights and compute
    the same; ``check_source`` finds no problem, comparing other arguments too
    (``one_class.twin`` against the per-call build)."""
    checked = twin(source, name, *inputs, against=("per_call",), roll_networks=False, named=False)
    code, flat = checked.code, checked.per_call
    assert CLASS.findall(code)[0] == block, code
    assert CLASS.findall(code).count(block) == 1, code
    assert not [c for c in CLASS.findall(code) if c.startswith(f"{block}_")], code
    assert len(CLASS.findall(flat)) > len(CLASS.findall(code)), flat  # the calls' classes
    assert checked.counts["other arguments"] > 0, checked.counts
    return code


AFTER_BRANCH = """\
model Fam(flag, rows):
    def forward(x):
        if flag:
            x -> dense(4).relu
        else:
            x -> layer_norm()
        for c in rows:
            x -> dense(c)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(true, [4, 2]) -> Fam(false, [8])
        return x
"""


def test_a_loop_after_a_branch_numbers_on_from_a_running_count() -> None:
    """``dense2..`` after the branch making one, ``dense1..`` after the other: ``n``."""
    code = _one_class(AFTER_BRANCH, "after_branch", "Fam", torch.randn(2, 3))
    assert (
        "        n = 0\n"
        "        channels = in_features\n"
        "        if flag:\n"
        "            self.dense1 = nn.Linear(channels, 4)\n"
        "            channels = 4\n"
        "            n += 1\n"
        "        else:\n"
        "            self.layer_norm1 = nn.LayerNorm(channels)\n"
        "        for i, c in enumerate(rows):\n"
        '            setattr(self, f"dense{n + i + 1}", nn.Linear(channels, c))\n'
    ) in code, code
    assert (
        "    def forward(self, x):\n"
        "        # x: (batch, in_features)\n"
        "        n = 0\n"
        "        if self.flag:\n"
        "            x = self.dense1(x)\n"
        "            x = F.relu(x)\n"
        "            n += 1\n"
        "        else:\n"
        "            x = self.layer_norm1(x)\n"
        "        for i in range(len(self.rows)):\n"
        '            x = getattr(self, f"dense{n + i + 1}")(x)\n'
        "        return x\n"
    ) in code, code
    module, _, _ = build(AFTER_BRANCH, "after_branch_by_hand")
    built = module.Fam(3, False, (4, 2))  # rows no call gave with this flag
    assert [name for name, _ in built.named_children()] == ["layer_norm1", "dense1", "dense2"]
    assert built(torch.randn(2, 3)).shape == (2, 2)


def test_the_fuzz_program_that_kept_a_class_per_call_rolls() -> None:
    """Bench seed 91000010: ``Fam0`` kept a class per call with the note ``an unnamed
    'dense' module at 20:18 numbered on across the branch taken of the if at 15:9``."""
    source = generate(91000010).text
    notes, code = build(source, "seed_91000010")[1:][::-1]
    assert notes == [], notes
    assert CLASS.findall(code).count("Fam0") == 1, code
    assert 'setattr(self, f"dense{n + i + 1}", nn.Linear(channels, c))' in code, code
    assert check_source(source) == []


AFTER_LOOP = """\
model Fam(n, flag):
    def forward(x):
        for i in range(n):
            x -> conv1d(4, 3, padding=1)
        if flag:
            x -> conv1d(6, 3, padding=1)
        else:
            x -> batchnorm()
        x -> conv1d(4, 1)
        return x

model Net:
    input_shape = (4, 8)
    def forward(x):
        x -> Fam(2, true) -> Fam(3, false)
        return x
"""


def test_a_module_after_a_branch_after_a_loop_adds_both() -> None:
    """``conv1d4`` after two iterations and a branch making one, ``conv1d4`` after three
    and none: ``conv1d{m + n + 1}`` (the count is ``m``: ``n`` is a parameter), a number
    of the branch taken that a running count of the branch's modules names; named
    (``as out``), the module needs no number."""
    code = _one_class(AFTER_LOOP, "after_loop", "Fam", torch.randn(2, 4, 8))
    assert CLASS.findall(code) == ["Fam", "Net"], code
    assert (
        '        setattr(self, f"conv1d{m + n + 1}", nn.Conv1d(channels, 4, kernel_size=1))\n'
        in (code)
    ), code
    assert '        return getattr(self, f"conv1d{m + self.n + 1}")(x)\n' in code, code
    named = AFTER_LOOP.replace("x -> conv1d(4, 1)", "x -> conv1d(4, 1) as out")
    _one_class(named, "after_loop_named", "Fam", torch.randn(2, 4, 8))


BRANCHES_IN_A_LOOP = """\
model Fam(n, up, rows):
    def forward(x):
        for i in range(n):
            if up:
                x -> dense(4).relu
            else:
                x -> layer_norm()
        for c in rows:
            x -> dense(c)
        x -> dense(5)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(2, true, [4, 2]) -> Fam(3, false, [8]) -> Fam(1, true, [3])
        return x
"""


def test_a_loop_after_a_loop_making_its_modules_under_an_if() -> None:
    """The first loop makes a ``dense`` an iteration where ``up``: the second loop and the
    last module number on from the running count (it fell back: ``after a loop that
    makes them under an 'if'``)."""
    code = _one_class(BRANCHES_IN_A_LOOP, "in_a_loop", "Fam", torch.randn(2, 3))
    assert (
        "        m = 0\n"
        "        channels = in_features\n"
        "        for i in range(n):\n"
        "            if up:\n"
        '                setattr(self, f"dense{i + 1}", nn.Linear(channels, 4))\n'
        "                channels = 4\n"
        "                m += 1\n"
        "            else:\n"
        '                setattr(self, f"layer_norm{i + 1}", nn.LayerNorm(channels))\n'
        "        for j, c in enumerate(rows):\n"
        '            setattr(self, f"dense{m + j + 1}", nn.Linear(channels, c))\n'
        "            channels = c\n"
        '        setattr(self, f"dense{m + len(rows) + 1}", nn.Linear(channels, 5))\n'
    ) in code, code
    assert '        return getattr(self, f"dense{m + len(self.rows) + 1}")(x)\n' in code, code


ALIKE_IN_A_LOOP = """\
model B(a, b, w, up):
    def forward(x):
        for i in range(a):
            if up:
                x -> dense(w).relu
            else:
                x -> dense(w).tanh
        for j in range(b):
            x -> dense(w)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> B(2, 0, 8, true) as p -> B(1, 0, 8, false) as q -> B(0, 2, 8, true) as r -> dense(2) as head
"""


def test_a_loop_after_a_loop_whose_branches_make_them_alike() -> None:
    """Every branch makes one ``dense``: the first loop's count numbers them, no running
    count (review59 b5 fell back: ``after a loop that makes them under an 'if'``)."""
    code = _one_class(ALIKE_IN_A_LOOP, "alike_in_a_loop", "B", torch.randn(2, 4))
    assert 'setattr(self, f"dense{a + j + 1}", nn.Linear(channels, w))' in code, code
    assert 'x = getattr(self, f"dense{self.a + j + 1}")(x)' in code, code
    assert "n = 0" not in code, code


NESTED = """\
model Fam(n, up, k):
    def forward(x):
        for i in range(n):
            if up:
                x -> dense(4).relu
            x -> dense(4)
        if k > 1:
            x -> dense(3)
            if up:
                x -> dense(3).tanh
        x -> dense(5)
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(2, true, 2) -> Fam(3, false, 1) -> Fam(1, true, 1)
        return x
"""


def test_ifs_in_ifs_and_a_module_after_a_branch_in_the_same_loop() -> None:
    """The ``dense`` after the ``if`` in the loop, the modules of the later ``if`` and of
    the nested one, and the last: each numbered on from the count at that point."""
    code = _one_class(NESTED, "nested", "Fam", torch.randn(2, 3))
    assert (
        "            if self.up:\n"
        '                x = getattr(self, f"dense{2 * i + 1}")(x)\n'
        "                x = F.relu(x)\n"
        "                m += 1\n"
        '            x = getattr(self, f"dense{m + i + 1}")(x)\n'
    ) in code, code
    assert '        return getattr(self, f"dense{m + self.n + 1}")(x)\n' in code, code


ELIF_AND_TARGET = """\
model Fam(n, up, rows):
    def forward(x):
        if up:
            x -> dense(4) -> dense(4)
        elif n > 2:
            x -> dense(6)
        for i in range(n):
            if i == 1:
                x -> dense(4).relu
            x -> layer_norm()
        for c in rows:
            x -> dense(c).relu
        return x

model Net:
    input_shape = (3,)
    def forward(x):
        x -> Fam(2, true, [4, 2]) -> Fam(3, false, [8]) -> Fam(1, false, [3])
        return x
"""


def test_an_elif_and_a_branch_on_the_loop_target() -> None:
    """``m += 2`` and ``m += 1`` by the branch taken; a branch on the loop's count
    (``if i == 1:``) adds when it runs."""
    code = _one_class(ELIF_AND_TARGET, "elif_target", "Fam", torch.randn(2, 3))
    assert (
        "            if i == 1:\n"
        '                setattr(self, f"dense{m + 1}", nn.Linear(channels, 4))\n'
        "                channels = 4\n"
        "                m += 1\n"
    ) in code, code
    assert 'x = getattr(self, f"dense{m + j + 1}")(x)' in code, code


TRIANGLE_IN_A_LOOP = """\
model Tri(c, cfg):
    def forward(x):
        for k in range(c):
            for w, r in cfg:
                for j in range(r):
                    x -> dense(w).relu
                    x -> layer_norm()
        for q in range(c):
            x -> dense(3)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Tri(2, [(4, 1), (6, 2)]) -> Tri(1, [(3, 3)])
        return x
"""


def test_a_triangle_in_another_loop_counts_across_its_iterations() -> None:
    """Three loops deep (rows whose column is the inner count, in a loop of ``range(c)``):
    ``n = 0`` before the loop outside loops, ``n += 1`` ending each inner iteration, and
    the loop after it numbers on (it fell back: ``an unnamed 'dense' module in a loop``)."""
    code = _one_class(TRIANGLE_IN_A_LOOP, "triangle_in_a_loop", "Tri", torch.randn(2, 4))
    assert (
        "        n = 0\n"
        "        for k in range(c):\n"
        "            for w, r in cfg:\n"
        "                for j in range(r):\n"
        '                    setattr(self, f"dense{n + 1}", nn.Linear(channels, w))\n'
        "                    channels = w\n"
        '                    setattr(self, f"layer_norm{n + 1}", nn.LayerNorm(channels))\n'
        "                    n += 1\n"
        "        for q in range(c):\n"
        '            setattr(self, f"dense{n + q + 1}", nn.Linear(channels, 3))\n'
    ) in code, code
    module, _, _ = build(TRIANGLE_IN_A_LOOP, "triangle_by_hand")
    built = module.Tri(4, 3, [(4, 2), (5, 1)])  # a count and rows no call gave
    assert len([n for n, _ in built.named_children() if n.startswith("dense")]) == 3 * 3 + 3
    assert built(torch.randn(2, 4)).shape == (2, 3)
