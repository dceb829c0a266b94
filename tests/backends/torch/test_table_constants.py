"""Issue 24 item 3, review98 F2/F6/F9: a table of numbers the source names is written
once, as a module constant, wherever a class reads it (``SIZES[k]``, ``enumerate(CFG)``),
named as the item is printed (``symbolic.tables_named``), never after a name a class of
the file binds: a constructor parameter ``SIZES`` would hide the constant."""

from __future__ import annotations

import ast as pyast

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, build, twin  # noqa: E402

SHADOWING = """\
model P(k, SIZES):
    sizes = [4, 8, 16, 32]
    def forward(x):
        x -> dense(sizes[k]) -> dense(SIZES)
        return x

model Q(k, w):
    sizes = [5, 6, 7]
    def forward(x):
        x -> dense(sizes[k]) -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5) -> P(3, 6) -> Q(0, 3) -> Q(1, 4)
        return x
"""


def _unshadowed(code: str) -> None:
    """No function of ``code`` binds a module constant it reads."""
    tree = pyast.parse(code)
    constants = {
        t.id
        for node in tree.body
        if isinstance(node, pyast.Assign)
        for t in node.targets
        if isinstance(t, pyast.Name)
    }
    for node in pyast.walk(tree):
        if isinstance(node, pyast.FunctionDef):
            bound = {a.arg for a in node.args.args}
            bound |= {
                n.id
                for n in pyast.walk(node)
                if isinstance(n, pyast.Name) and isinstance(n.ctx, pyast.Store)
            }
            assert not bound & constants, (node.name, bound & constants)


def test_a_parameter_named_as_the_constant_keeps_its_name() -> None:
    """F2: ``P(k, SIZES)`` reading ``sizes[k]``: the constant was ``SIZES`` too and
    ``Net()`` raised ``TypeError: 'int' object is not subscriptable``. The constant takes
    a name no class binds; each block is one class, built as the per-call builds are."""
    result = twin(SHADOWING, "table_shadowed", torch.randn(2, 3, 8))
    code = result.code
    assert CLASS.findall(code) == ["P", "Q", "Net"], code
    assert "\n\n\nSIZES_2 = [4, 8, 16, 32]\nSIZES_3 = [5, 6, 7]\n\n\n" in code, code
    assert "    def __init__(self, in_features, k, SIZES):\n" in code, code
    assert "        self.dense2 = nn.Linear(SIZES_2[k], SIZES)\n" in code, code
    assert "        self.dense1 = nn.Linear(in_features, SIZES_3[k])\n" in code, code
    _unshadowed(code)


def test_a_forward_local_named_as_the_constant() -> None:
    """A name the source binds anywhere (here a forward's local ``SIZES``) is no
    constant's name either."""
    source = SHADOWING.replace("model P(k, SIZES):", "model P(k, w):").replace(
        "x -> dense(sizes[k]) -> dense(SIZES)\n        return x",
        "SIZES = relu(x)\n        SIZES -> dense(sizes[k]) -> dense(w)\n        return SIZES",
    )
    module, code, _ = build(source, "table_local")
    module.Net()(torch.randn(2, 3, 8))
    assert "SIZES = [" not in code, code
    _unshadowed(code)


LOOP_TABLE = """\
cfg = [[4, 8], [16, 32], [5, 7]]

model P(k, w):
    def forward(x):
        for row in cfg:
            x -> dense(row[k]).relu
        x -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(0, 5) -> P(-1, 6)
        return x
"""


def test_a_loop_over_a_global_table_reads_the_constant() -> None:
    """F6: the loop roller wrote ``enumerate([[4, 8], [16, 32], [5, 7]])`` and
    ``len([[4, 8], [16, 32], [5, 7]])``; the table is now ``CFG``, written once."""
    result = twin(LOOP_TABLE, "table_loop", torch.randn(2, 3, 8))
    code = result.code
    assert "\n\n\nCFG = [[4, 8], [16, 32], [5, 7]]\n\n\n" in code, code
    body = block_class(result.gen, "P")
    assert "        for i, row in enumerate(CFG):\n" in body, body
    assert 'setattr(self, f"dense{len(CFG) + 1}", nn.Linear(channels, w))' in body, body
    # forward reads the constant too: no ``self.cfg`` copy of it
    assert "        for i in range(len(CFG)):\n" in body, body
    assert "self.cfg" not in body and code.count("[[4, 8], [16, 32], [5, 7]]") == 1, code


ORDER = """\
rates = [0.1, 0.2, 0.3]
cfg = [(4, 1), (8, 2), (16, 3)]

model Sizes(k, w):
    sizes = [4, 8, 16, 32]
    def forward(x):
        x -> dense(sizes[k]) -> dropout(rates[k]) -> dense(cfg[k][0]) -> dense(w)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> Sizes(1, 4) -> Sizes(2, 5) -> Sizes(0, 6)
        return x
"""


def test_constants_are_defined_in_the_order_first_read() -> None:
    """F9: the definitions follow the file's first reads (``SIZES[k]`` first)."""
    code = twin(ORDER, "table_order", torch.randn(2, 3, 8)).code
    assert (
        "\n\n\nSIZES = [4, 8, 16, 32]\nRATES = [0.1, 0.2, 0.3]\nCFG = [(4, 1), (8, 2), (16, 3)]\n"
    ) in code, code
