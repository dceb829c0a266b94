"""A rolled class's ``__init__`` keeps no local that nothing reads (``unread_locals.py``):
the block's constant forward reads through its parameters (``c0 = -p0``) and the running
width no module is sized by (``channels = in_channels``) were dead lines in generated
code. Only pure assignments go: a module built into a local draws from the RNG."""

from __future__ import annotations

import pytest

from aurane.backends.torch.unread_locals import without_unread_locals

CLASS = """\
class Block(nn.Module):
    def __init__(self, in_channels, p0, n):
        super().__init__()
{body}

    def forward(self, x):
        return x
"""


def _init(body: str) -> list[str]:
    """``__init__``'s own lines of the class with ``body`` once unread locals are gone."""
    lines = without_unread_locals(CLASS.format(body=body).splitlines())
    start = lines.index("        super().__init__()") + 1
    return lines[start : lines.index("", start)]


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        # unread: a constant, the running width, a chain where only dead names read
        ("        c0 = -p0\n        self.n = n", ["        self.n = n"]),
        ("        channels = in_channels\n        self.n = n", ["        self.n = n"]),
        ("        a = p0\n        b = a + 1\n        self.n = n", ["        self.n = n"]),
        ("        width = max(in_channels, 8) // 2\n        self.n = n", ["        self.n = n"]),
        # read: by a module, in a loop, by another read local
        (
            "        channels = in_channels\n        self.c = nn.Linear(channels, 4)",
            ["        channels = in_channels", "        self.c = nn.Linear(channels, 4)"],
        ),
        (
            "        channels = in_channels\n        for i in range(n):\n"
            "            channels = channels + 2\n        self.c = nn.Linear(channels, 4)",
            [
                "        channels = in_channels",
                "        for i in range(n):",
                "            channels = channels + 2",
                "        self.c = nn.Linear(channels, 4)",
            ],
        ),
        # unread in a loop's body, which keeps a line (``block_walk``'s skip width)
        (
            "        for i in range(n):\n            s_width = in_channels\n            self.n = n",
            ["        for i in range(n):", "            self.n = n"],
        ),
        # the loop's only line stays: a loop of no line would not parse
        ("        for i in range(n):\n            s_width = in_channels", None),
        # not pure: building a module draws from the RNG, so the line stays
        ("        spare = nn.Linear(in_channels, 4)\n        self.n = n", None),
        ("        a, b = p0, n\n        self.n = n", None),  # not one plain name
    ],
)
def test_only_unread_pure_locals_are_dropped(body: str, kept: list[str] | None) -> None:
    assert _init(body) == (kept if kept is not None else body.splitlines())


def test_text_that_does_not_parse_is_returned_as_is() -> None:
    lines = ["class Broken(nn.Module):", "    def __init__(self:", "        c0 = 1"]
    assert without_unread_locals(lines) == lines


def test_a_rolled_block_keeps_no_dead_local() -> None:
    """A block whose constant forward reads as ``-self.p0`` (fuzz seed 1000089): the class
    it is rolled into no longer writes ``c0 = -p0`` in ``__init__``, and still runs as the
    IR says."""
    torch = pytest.importorskip("torch")
    from tests.backends.torch.one_class import CLASS as CLASS_LINE
    from tests.backends.torch.one_class import block_class, build, built_alike, rolled

    source = """\
model Loop0(p0, p1, n):
    c0 = -p0
    def forward(x):
        for i in range(n):
            r = x
            x -> transpose(c0, p1 // 2).residual
            x = add(x, r)
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Loop0(1, 3, 2) as a -> Loop0(1, 3, n=1) as b -> dense(2) as head
"""
    gen, _ = rolled(source, "unread_constant", torch.randn(2, 4))
    assert CLASS_LINE.findall(gen.code) == ["Loop0", "Net"], gen.code
    text = block_class(gen, "Loop0")
    assert "c0 = " not in text and "channels = " not in text, text
    one, _, _ = build(source, "unread_one")
    per_call, _, _ = build(source, "unread_flat", roll=False)
    built_alike(one, per_call, "Net")
