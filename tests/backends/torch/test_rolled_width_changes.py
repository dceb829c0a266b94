"""Issue 24 item 3: the width after a step that changes it with no module (hunt109 F4):
``glu`` halves it, ``pad`` on the threaded axis adds its pair, ``pixel_shuffle(r)``
divides the channels by ``r * r``. Outside loops the roller wrote the width as the calls'
number (``nn.LayerNorm(4)`` where every call gives ``w = 4``, by literals, a default or a
global constant), so the class built at another ``w`` made modules of the wrong size; in
loops it fell back ("the width after 'glu' is no expression of the source"). The width is
now the running width and the step's arguments (``w`` after ``glu`` of ``2 * w``,
``w + k + 1``, ``c`` after ``pixel_shuffle(r)`` of ``c * r * r``, ``channels // 2`` in a
loop), and a width the IR's tree shows a parameter changes is never written as a number. Each program is checked against the build with one class per call
and by ``roll_check`` (``one_class.twin``); the class built at the argument the calls
leave alone loads the per-call build of a program that gives it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    loads_and_computes_alike,
    twin,
    variants_alike,
)


def _block(params: str, change: str, after: str, calls: str, shape: str = "(3, 8)") -> str:
    """A block ``P`` with a loop of ``dense(8)``, then ``change`` and ``after``."""
    return f"""\
model P({params}):
    def forward(x):
        for i in range(n):
            x -> dense(8).relu
        x -> {change}
        x -> {after}
        return x

model Net:
    input_shape = {shape}
    def forward(x):
        x -> {calls}
        return x
"""


GLU_LITERAL = _block(
    "n: int, w: int",
    "dense(2 * w) -> glu()",
    "layer_norm() -> dense(5) as head",
    "P(1, 4) -> dense(8) as mid -> P(2, 4)",
)
GLU_DEFAULT = _block(
    "n: int, w: int = 4",
    "dense(2 * w) -> glu()",
    "layer_norm() -> dense(5) as head",
    "P(1) -> dense(8) as mid -> P(2)",
)
PAD_DEFAULT = _block(
    "n: int, w: int = 4, k: int = 3",
    "dense(w) -> pad((k, 1))",
    "layer_norm() -> dense(5) as head",
    "P(1) -> dense(8) as mid -> P(2)",
)
PIXEL_SHUFFLE_DEFAULT = """\
model P(n: int, c: int = 4, r: int = 2):
    def forward(x):
        for i in range(n):
            x -> conv2d(8, 3, padding=1).relu
        x -> conv2d(c * r * r, 3, padding=1) -> pixel_shuffle(r)
        x -> batchnorm() -> conv2d(8, 1) as head
        return x

model Net:
    input_shape = (8, 4, 4)
    def forward(x):
        x -> P(1) -> maxpool(2) -> P(2)
        return x
"""


@pytest.mark.parametrize(
    ("source", "name", "written", "sample"),
    [
        (GLU_LITERAL, "glu_literal", "nn.LayerNorm(w)", (2, 3, 8)),
        (GLU_DEFAULT, "glu_default", "nn.LayerNorm(w)", (2, 3, 8)),
        (PAD_DEFAULT, "pad_default", "nn.LayerNorm(w + k + 1)", (2, 3, 8)),
        (
            PIXEL_SHUFFLE_DEFAULT,
            "shuffle_default",
            "nn.BatchNorm2d(c)",
            (2, 8, 4, 4),
        ),
    ],
)
def test_the_width_after_the_change_is_an_expression(
    source: str, name: str, written: str, sample: tuple[int, ...]
) -> None:
    checked = twin(source, name, torch.randn(*sample))
    assert CLASS.findall(checked.code) == ["P", "Net"], checked.code
    assert written in block_class(checked.gen, "P"), checked.code


@pytest.mark.parametrize(
    ("source", "name", "given", "built", "sample"),
    [
        (GLU_DEFAULT, "glu_other", "P(1, 6) -> dense(8) as mid -> P(2)", (8, 1, 6), (2, 3, 8)),
        (
            PAD_DEFAULT,
            "pad_other",
            "P(1, 4, 5) -> dense(8) as mid -> P(2)",
            (8, 1, 4, 5),
            (2, 3, 8),
        ),
        (
            PIXEL_SHUFFLE_DEFAULT,
            "shuffle_other",
            "P(1, 3) -> maxpool(2) -> P(2)",
            (8, 1, 3),
            (2, 8, 4, 4),
        ),
    ],
)
def test_the_class_at_an_argument_the_calls_leave_loads_its_program(
    source: str, name: str, given: str, built: tuple[int, ...], sample: tuple[int, ...]
) -> None:
    """``P(8, 1, w=6)``, which no call gives (each keeps the default), is the class a
    program calling ``P(1, 6)`` builds: the same modules, a strict load, equal outputs."""
    calls = "P(1) -> dense(8) as mid -> P(2)" if "dense(8) as mid" in source else None
    calls = calls or "P(1) -> maxpool(2) -> P(2)"
    rolled, _, _ = build(source, name)
    other, _, _ = build(source.replace(calls, given), f"{name}_given", roll=False)
    mine = rolled.P(*built)
    theirs = other.Net().p1
    loads_and_computes_alike(mine, theirs, torch.randn(*sample))


GLU_IN_A_LOOP = """\
model P(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(2 * w) -> glu()
        x -> layer_norm() -> dense(5) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4) -> P(2, 5)
        return x
"""
PAD_IN_A_LOOP = """\
model P(n: int, w: int, k: int):
    def forward(x):
        for i in range(n):
            x -> dense(w) -> pad((k, 1))
        x -> layer_norm() -> dense(5) as head
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> P(1, 4, 1) -> P(2, 5, 2)
        return x
"""


@pytest.mark.parametrize(
    ("source", "name", "line"),
    [
        (GLU_IN_A_LOOP, "glu_loop", "channels = channels // 2"),
        (PAD_IN_A_LOOP, "pad_loop", "channels = channels + k + 1"),
    ],
)
def test_a_change_in_a_loop_rolls(source: str, name: str, line: str) -> None:
    """Once a fallback ("the width after 'glu' is no expression of the source")."""
    checked = twin(source, name, torch.randn(2, 3, 8))
    assert CLASS.findall(checked.code) == ["P", "Net"], checked.code
    assert line in block_class(checked.gen, "P"), checked.code


GLU_NETWORK_DEFAULT = """\
model Fam(n: int, w: int = 4):
    def forward(x):
        for i in range(n):
            x -> dense(8).relu
        x -> dense(2 * w) -> glu()
        return x -> layer_norm() -> dense(3) as head

model small = Fam(1):
    input_shape = (5,)

model big = Fam(2):
    input_shape = (5,)
"""


def test_a_network_writes_the_width_after_glu() -> None:
    """The network class ``Fam(2, w=6)`` builds ``nn.LayerNorm(6)``, not the variants' 4."""
    module, code, notes = variants_alike(
        GLU_NETWORK_DEFAULT, "glu_network", ["small", "big"], torch.randn(2, 5)
    )
    assert notes == [], notes
    assert "nn.LayerNorm(w)" in code, code
    other, _, _ = build(
        GLU_NETWORK_DEFAULT.replace("Fam(2):", "Fam(2, 6):"), "glu_net_6", roll=False
    )
    loads_and_computes_alike(module.Fam(2, w=6), other.big(), torch.randn(2, 5))
