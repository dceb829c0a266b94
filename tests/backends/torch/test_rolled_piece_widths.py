"""Issue 24 item 3: a block whose loop cuts the threaded axis (``x = chunk(x, 2,
dim=-1, index=0)``, ``split`` into sizes, a ``reshape`` keeping the rank) kept a class per
call, the roller saying 'the width after 'chunk' is no expression of the source' (fuzz
seed 91000002): the width after the cut is no argument of the step and no running
width. The walk now writes it from the source's arguments as torch cuts the axis
(``piece_widths.py``): ``(channels + 1) // 2`` for the first of two chunks, a size of
the split, the reshape's size on the axis. Each form is checked against the build with
one class per call (one class, the same modules in the same order, a strict load, equal
outputs) and by ``roll_check`` at arguments no call gives."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, build, built_alike, roll_notes, same  # noqa: E402


def program(block: str, calls: str, shape: str = "(4,)", head: str = "dense(2)") -> str:
    return (
        f"{block}\nmodel Net:\n    input_shape = {shape}\n    def forward(x):\n"
        f"        x -> {calls} -> {head} as head\n"
    )


# name: (the program, the line of __init__ that carries the width, the input)
FORMS: dict[str, tuple[str, str, tuple[int, ...]]] = {
    "first_of_two_chunks": (
        program(
            "model Cut(width, n):\n    def forward(x):\n        for i in range(n):\n"
            "            x -> dense(width) as fc{i}\n"
            "            x = chunk(x, 2, dim=-1, index=0)\n        return x\n",
            "Cut(8, 2) as a -> Cut(6, 3) as b",
        ),
        "            channels = (channels + 1) // 2\n",
        (3, 4),
    ),
    "second_of_two_chunks": (
        program(
            "model Cut(width, n):\n    def forward(x):\n        for i in range(n):\n"
            "            x -> dense(width) as fc{i}\n"
            "            x = chunk(x, 2, dim=-1, index=1)\n        return x\n",
            "Cut(7, 2) as a -> Cut(6, 3) as b",
        ),
        "            channels = channels // 2\n",
        (3, 4),
    ),
    "chunks_a_parameter_counts": (
        program(
            "model Cut(k, n):\n    def forward(x):\n        for i in range(n):\n"
            "            x -> dense(12) as fc{i}\n"
            "            x = chunk(x, k, dim=-1, index=1)\n        return x\n",
            "Cut(3, 2) as a -> Cut(2, 3) as b",
        ),
        "            channels = min((channels + k - 1) // k, channels - ((channels + k - 1) // k))\n",
        (3, 4),
    ),
    "split_into_sizes": (
        program(
            "model Cut(width, n):\n    def forward(x):\n        for i in range(n):\n"
            "            x -> dense(2 * width).relu as fc{i}\n"
            "            x = split(x, (width, width), dim=-1, index=1)\n        return x\n",
            "Cut(8, 2) as a -> Cut(6, 3) as b",
        ),
        "            channels = width\n",
        (3, 4),
    ),
    "reshape_of_the_channels": (
        program(
            "model Cut(width, n):\n    def forward(x):\n        for i in range(n):\n"
            "            x -> conv2d(2 * width, kernel=3, padding=1) as conv{i}\n"
            "            x = reshape(x, (width, 8, 4))\n"
            "            x -> avgpool(kernel=(2, 1))\n        return x\n",
            "Cut(8, 2) as a -> Cut(6, 3) as b",
            shape="(3, 4, 4)",
            head="conv2d(2, kernel=1)",
        ),
        "            x = x.reshape(x.shape[0], self.width, 8, 4)\n",
        (2, 3, 4, 4),
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_cut_of_the_threaded_axis_rolls(form: str) -> None:
    source, line, shape = FORMS[form]
    notes, code = roll_notes(source)
    assert notes == [], notes
    assert CLASS.findall(code) == ["Cut", "Net"], code
    assert line in code and "raise ValueError" not in code, code
    rolled, _, _ = build(source, f"piece_{form}")
    per_call, flat, _ = build(source, f"piece_{form}_flat", roll=False)
    assert CLASS.findall(flat) == ["Cut", "Cut_2", "Net"], flat
    mine, theirs = built_alike(rolled, per_call, "Net")
    same(mine, theirs, torch.randn(*shape))
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["other arguments"] >= 1, counts


def test_a_reshape_to_another_rank_keeps_its_classes() -> None:
    """``reshape(x, (4, width))`` of a feature vector: the axis the walk threads is
    another after it, so no width text is offered; the calls keep a class each, each
    refusing another count."""
    source = program(
        "model Cut(width, n):\n    def forward(x):\n        for i in range(n):\n"
        "            x -> dense(4 * width) as fc{i}\n"
        "            x = reshape(x, (4, width))\n            x = mean(x, dim=1)\n"
        "        return x\n",
        "Cut(8, 2) as a -> Cut(6, 3) as b",
    )
    notes, code = roll_notes(source)
    assert notes == ["block 'Cut' at 1:7: the width after 'reshape' is no expression of the source"]
    assert CLASS.findall(code) == ["Cut", "Cut_2", "Net"], code
    assert 'raise ValueError(f"Cut_2 is written for n == 3, not {n}")' in code, code
