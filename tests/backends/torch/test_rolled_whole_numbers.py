"""Issue 24 item 3: a parameter the source reads as a table's index (``sizes[k]``) is
refused a boolean by the language (R004); Python's ``True`` is the integer 1, so a
rolled class built with ``k=True`` indexed item 1. Where a boolean may reach the parameter (no annotation), the
class opens ``__init__`` refusing one by name (``whole_numbers``); an annotated one is
refused at the call, and the class writes nothing for it. Each program is checked as
``one_class.twin`` checks a rolled block, ``roll_check`` building it at arguments no
call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    ANY_CLASS,
    CLASS,
    block_class,
    build,
    twin,
)

TABLE_AND_COUNT = """\
SIZES = [4, 8, 16]

model T(k, n):
    def forward(x):
        for i in range(n):
            x -> dense(SIZES[k])
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> T(1, 1) as a -> T(2, 2) as b
        return x
"""


def test_an_unannotated_index_refuses_a_boolean() -> None:
    built = twin(TABLE_AND_COUNT, "whole_table_count", torch.randn(2, 8))
    assert CLASS.findall(built.code) == ["T", "Net"], built.code
    t = block_class(built.gen, "T")
    assert (
        "        super().__init__()\n"
        "        if isinstance(k, bool):  # a table's index is no boolean\n"
        '            raise ValueError(f"T is written for a whole number k, not {k}")\n'
        "        self.n = n\n"
    ) in t, t
    module = built.gen.module
    with pytest.raises(ValueError, match=r"^T is written for a whole number k, not True$"):
        module.T(8, True, 1)
    assert module.T(8, 0, 2).dense2.out_features == 4  # numbers as before


def test_annotated_parameters_are_refused_at_the_call() -> None:
    source = TABLE_AND_COUNT.replace("model T(k, n):", "model T(k: int, n: int):")
    code = twin(source, "whole_annotated", torch.randn(2, 8)).code
    assert "isinstance(" not in code, code


NETWORK = """\
SIZES = [4, 8, 16]

model Net(k, n):
    def forward(x):
        for i in range(n):
            x -> dense(SIZES[k])
        x -> dense(2) as head
        return x

model small = Net(0, 1):
    input_shape = (8,)

model large = Net(2, 2):
    input_shape = (8,)
"""


def test_a_network_refuses_a_boolean_index() -> None:
    module, code, notes = build(NETWORK, "whole_network")
    assert notes == [], notes
    assert ANY_CLASS.findall(code) == ["Net", "small", "large"], code
    assert "        if isinstance(k, bool):  # a table's index is no boolean\n" in code, code
    with pytest.raises(ValueError, match=r"^Net is written for a whole number k, not True$"):
        module.Net(True, 1)


# a class written without loops (``param_blocks``): the index is its tree
WRITTEN_OUT = """\
SIZES = [4, 8, 16]

model P(k, w: int):
    def forward(x):
        x -> dense(SIZES[k]) -> dense(w)
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> P(1, 4) as a -> P(2, 5) as b
        return x
"""


def test_a_class_written_out_refuses_a_boolean_too() -> None:
    built = twin(WRITTEN_OUT, "whole_written_out", torch.randn(2, 8))
    p = block_class(built.gen, "P")
    assert (
        "        super().__init__()\n"
        "        if isinstance(k, bool):  # a table's index is no boolean\n"
        '            raise ValueError(f"P is written for a whole number k, not {k}")\n'
        "        self.dense1 = nn.Linear(in_features, SIZES[k])\n"
    ) in p, p
    with pytest.raises(ValueError, match=r"^P is written for a whole number k, not True$"):
        built.gen.module.P(8, True, 4)
