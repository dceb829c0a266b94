"""Issue 24 item 3: an argument that indexes a list by the loop's target in forward
(``x -> multiply(scales[i])``), the list a module constant or a parameter. Each
iteration's own statement writes the number (``x = x * 0.5``, then ``x = x * 1.5``), so
the iterations differed and the block kept a class per call, the network a class per
variant; the rolled class reads a constant's list by the file's module constant
(``SCALES = [0.5, ...]``, ``x = x * SCALES[i]``) and a parameter's from the module
(``self.scales = scales``, ``x = x * self.scales[i]``). Each program runs against its IR, strict-loads the build
with one class per call (``roll_networks=False``) and computes the same."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    rolled,
    rolls_exactly,
)

BLOCK_CONSTANT = """\
scales = [0.5, 1.5, -2.0]

model Scale(width, n):
    def forward(x):
        for i in range(n):
            x -> dense(width) -> multiply(scales[i])
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Scale(16, 2) as a -> Scale(16, 3) as b -> dense(2) as head
"""


def test_a_module_constant_indexed_by_a_block_loop_is_read_by_name() -> None:
    gen, flat = rolled(BLOCK_CONSTANT, "scales_constant", torch.randn(2, 8))
    assert CLASS.findall(flat) == ["Scale", "Scale_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Scale", "Net"], gen.code
    text = block_class(gen, "Scale")
    # the table is the file's constant, read where forward needs it (review98 F6: it was
    # copied into ``self.scales``)
    assert "\n\n\nSCALES = [0.5, 1.5, -2.0]\n\n\n" in gen.code, gen.code
    assert "self.scales" not in text, text
    assert "            x = x * SCALES[i]\n" in text, text
    one, _, _ = build(BLOCK_CONSTANT, "scales_constant_one")
    per_call, _, _ = build(BLOCK_CONSTANT, "scales_constant_flat", roll=False)
    built_alike(one, per_call, "Net")


BLOCK_PARAMETER = """\
model Scale(width, scales, n):
    def forward(x):
        for i in range(n):
            x = dense(x, width)
            x = multiply(x, scales[i])
        return x

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Scale(16, [0.5, 1.0, 2.0], 2) as a -> Scale(16, [1.5, 3, 0.25], 3) as b
        x -> dense(2) as head
"""


def test_a_list_parameter_indexed_by_a_block_loop_is_read_from_the_module() -> None:
    """``Scale(16, [1.5, 3, 0.25], 3)``: an int among the floats (``x * 3``) reads alike."""
    gen, flat = rolled(BLOCK_PARAMETER, "scales_param", torch.randn(2, 8))
    assert CLASS.findall(flat) == ["Scale", "Scale_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Scale", "Net"], gen.code
    text = block_class(gen, "Scale")
    assert "        self.scales = scales\n" in text, text
    assert "            x = x * self.scales[i]\n" in text, text
    one, _, _ = build(BLOCK_PARAMETER, "scales_param_one")
    per_call, _, _ = build(BLOCK_PARAMETER, "scales_param_flat", roll=False)
    built_alike(one, per_call, "Net")


NETWORK = """\
scales = [0.5, 1.0, 2.0]

model Net(width, gains, n):
    def forward(x):
        x -> dense(width) as stem
        for i in range(n):
            x -> dense(width) as fc{i} -> multiply(scales[i]) -> multiply(gains[i])
        return x -> dense(3) as head

model small = Net(4, [0.5, 1.0, 2.0], 2):
    input_shape = (5,)

model wide = Net(6, [1.5, -1.0, 2.5], 3):
    input_shape = (5,)
"""


def test_lists_indexed_by_a_network_loop_are_read_from_the_module() -> None:
    """A module constant and a parameter in one loop: the variants ran the loop two and
    three times, and each iteration wrote its numbers (a class per variant)."""
    code = rolls_exactly(NETWORK, "scales_network", torch.randn(2, 5))
    stores = ["self.gains = gains", "self.n = n"]
    assert "".join(f"        {line}\n" for line in stores) in code, code
    assert "\n\n\nSCALES = [0.5, 1.0, 2.0]\n\n\n" in code and "self.scales" not in code, code
    assert (
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"fc{i}")(x)\n'
        "            x = x * SCALES[i]\n"
        "            x = x * self.gains[i]\n"
    ) in code, code


def test_a_number_written_twice_in_the_statement_is_left_as_written() -> None:
    """``clamp(min=gains[i], max=1.0)`` with ``gains[i]`` 1.0 at an iteration: the
    number stands twice in its statement, so which one the list gives is not known; the
    iterations write different numbers and the variants keep their classes."""
    source = NETWORK.replace(
        "-> multiply(scales[i]) -> multiply(gains[i])", "-> clamp(min=gains[i], max=1.0)"
    )
    _, _, notes = build(source, "twice")
    assert notes and "the iterations of 'i' differ" in notes[0], notes


def test_an_argument_of_several_terms_is_parenthesised() -> None:
    """``multiply(i + 2)``: ``x = x * (i + 2)``, not ``x * i + 2`` (which computes
    something else: the outputs are compared)."""
    source = NETWORK.replace("multiply(scales[i]) -> multiply(gains[i])", "multiply(i + 2)")
    code = rolls_exactly(source, "terms", torch.randn(2, 5))
    assert "            x = x * (i + 2)\n" in code, code
