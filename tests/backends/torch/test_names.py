"""The namespace allocator (K-INJ) and hostile identifiers end to end."""

from __future__ import annotations

import ast
import keyword
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aurane.backends.torch.names import BUILTINS, RESERVED, Namespace, ascii_identifier
from tests.backends.torch.util import generate, load

HOSTILE = [
    "class", "def", "lambda", "None", "True", "match", "case", "type", "_", "print", "list",
    "super", "self", "nn", "F", "torch", "math", "forward", "padding_mask", "__init__",
    "__class__", "__", "___", "_private", "ﬁle", "file", "ｆｉｌｅ", "naïve", "naive", "变量",
    "x", "x_", "x_2", "class_", "Ⅸ", "ℌ", "a\u0301", "á", "dense1", "self_",
]  # fmt: skip


def valid(identifier: str) -> bool:
    return (
        identifier.isidentifier()
        and identifier.isascii()
        and not keyword.iskeyword(identifier)
        and not keyword.issoftkeyword(identifier)
        and identifier not in BUILTINS
        and not (identifier.startswith("__") and identifier.endswith("__"))
        and unicodedata.normalize("NFKC", identifier) == identifier
    )


def test_hostile_names_become_distinct_valid_identifiers() -> None:
    ns = Namespace()
    ns.allocate_all(HOSTILE)
    out = [ns.allocate(name) for name in HOSTILE]
    assert len(set(out)) == len(HOSTILE)
    assert all(valid(name) and name not in RESERVED for name in out), out
    # faithful names keep their spelling even when a renamed one would land on them
    assert ns.allocate("file") == "file" and ns.allocate("x_") == "x_"
    assert ns.allocate("ﬁle") != "file"


def test_allocation_is_deterministic_and_stable() -> None:
    first, second = Namespace(), Namespace()
    first.allocate_all(HOSTILE)
    second.allocate_all(HOSTILE)
    assert first.names == second.names
    assert first.allocate("class") == first.allocate("class")


def test_candidates_read_like_the_source() -> None:
    assert ascii_identifier("naïve") == "naive"
    assert ascii_identifier("ﬁle") == "file"
    assert ascii_identifier("__init__") == "init_"
    assert ascii_identifier("9lives") == "v9lives"
    assert ascii_identifier("变量") == "u53d8u91cf"
    assert Namespace().candidate("class") == "class_"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), max_size=12))
def test_any_names_allocate_injectively(names: list[str]) -> None:
    ns = Namespace()
    ns.allocate_all(names)
    out = {name: ns.allocate(name) for name in names}
    assert len(set(out.values())) == len(out)
    assert all(valid(v) for v in out.values()), out


torch = pytest.importorskip("torch")

HOSTILE_PROGRAM = """
model super:
    input_shape = (3, 4)
    def forward(self):
        nn = dense(self, 4)
        ﬁle = dense(nn, 4)
        file = dense(ﬁle, 4).relu
        __init__ = add(file, nn)
        print = __init__ -> dense(4)
        torch = concat(print, file, dim=1)
        F = torch -> dense(4)
        padding_mask = F -> dense(4)
        lambda = padding_mask -> multihead_attention(heads=1, dim=4)
        return lambda

model forward:
    input_shape = (3, 4)
    def forward(block):
        block -> super() -> dense(2)

model ﬁle:
    input_shape = (2,)
    def forward(x):
        x -> dense(2)

model file:
    input_shape = (2,)
    def forward(dense):
        dense -> ﬁle() -> dense(2)

model _Progress:
    input_shape = (2,)
    def forward(x):
        x -> file()
"""


def test_hostile_program_compiles_to_distinct_valid_names() -> None:
    fe, generator, code = generate(HOSTILE_PROGRAM)
    tree = ast.parse(code)
    compile(code, "<hostile>", "exec")
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert len(set(classes)) == len(classes) == len(fe.graphs)
    assert all(valid(name) for name in classes)
    assert sorted(generator.class_names.values()) == sorted(classes)
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        names = [a.arg for a in function.args.args]
        assert len(set(names)) == len(names)
        assert all(valid(n) or n == "self" for n in names)
    module = load(code)
    for model, graph in fe.graphs.items():
        net = getattr(module, generator.class_names[model])()
        out = net(torch.randn(2, *graph.input_value.sample_shape))
        assert tuple(out.shape) == (2, *graph.output_value.sample_shape)
        assert sum(p.numel() for p in net.parameters()) == graph.parameters


def test_input_named_like_a_node_id_resolves_each_use() -> None:
    _, generator, code = generate(
        """
        model M:
            input_shape = (2,)
            def forward(dense1):
                dense1 -> dense(3) -> dense(2)
        """
    )
    net = load(code).M()
    x = torch.randn(3, 2)
    # node ids skip the name the input already holds
    torch.testing.assert_close(net(x), net.dense3(net.dense2(x)))
