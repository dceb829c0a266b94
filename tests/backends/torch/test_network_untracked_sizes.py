"""Issue 24 item 3, hunt109's F5 and f8c: a network used through variants reads, after a
loop or an ``if``, a size on an axis the class does not thread (a ``flatten() ->
dense(4)`` reading the length a ``maxpool(2)`` in ``for i in range(n)`` halves). A
network's sizes are plain numbers (its variants' ``input_shape``), so the block roller's
test for a loop changing such a size (one reading the block's input sizes) never held:
the class wrote the variants' number (``nn.Linear(channels * 8, 4)``: 16 / 2 and 32 / 4),
wrong at any other count (no strict load). The network walk now follows the size back
through the steps whose sizes follow their inputs' (``network_walk.NetworkWalk.
_loop_changed``); a step made in a loop or an ``if`` that changes it keeps one class per
variant, with a note naming that loop or ``if``. Where no such step comes before the
reader (a loop keeping the length, an ``adaptive_avg_pool`` after the loop, an ``if``
whose branch changes no size), the network rolls as before."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    ANY_CLASS,
    build,
    built_alike,
    loads_and_computes_alike,
)

VARIANTS = """
model small = Fam({small}):
    input_shape = ({small_shape})

model big = Fam({big}):
    input_shape = ({big_shape})
"""


def family(forward: str, small: str, big: str, shapes: tuple[str, str]) -> str:
    """``model Fam(...)`` with ``forward`` (its header and body) and the variants
    ``small = Fam(small)`` and ``big = Fam(big)`` on the input ``shapes``."""
    return forward + VARIANTS.format(
        small=small, big=big, small_shape=shapes[0], big_shape=shapes[1]
    )


POOL_LOOP = """\
model Fam(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu -> maxpool(2)
        x -> flatten() -> dense(4) as head
        return x
"""

STRIDE_LOOP = """\
model Fam(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1, stride=2).relu
        x -> flatten() -> dense(4) as head
        return x
"""

NORM_AXES = """\
model Fam(n: int, w: int, a: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu -> maxpool(2)
        x -> rms_norm(axes=a) -> flatten() -> dense(4) as head
        return x
"""

UPSAMPLE_LOOP = """\
model Fam(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu -> upsample(scale_factor=2)
        x -> layer_norm() as norm
        return x
"""

IF_POOL = """\
model Fam(p: bool, w: int):
    def forward(x):
        x -> conv1d(w, 3, padding=1) as stem
        if p:
            x -> maxpool(2)
        x -> flatten() -> dense(4) as head
        return x
"""

IF_POOL_AFTER_LOOP = """\
model Fam(p: bool, n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu
        if p:
            x -> maxpool(2)
        x -> flatten() -> dense(4) as head
        return x
"""

CEIL_FLAG = """\
model Fam(w: int, c: bool):
    def forward(x):
        x -> conv1d(w, 3, padding=1) as stem
        x -> avgpool(2, ceil_mode=c)
        x -> flatten() -> dense(4) as head
        return x
"""

# (source, the located note's end): each read a number the variants agreed on by chance
FALLING_BACK = {
    "pool_loop": (family(POOL_LOOP, "1, 4", "2, 6", ("3, 16", "3, 32")), "the loop at 3:9"),
    # the variants give the same count: the class took ``n`` and wrote 4 for any
    "pool_loop_same_count": (
        family(POOL_LOOP, "2, 4", "2, 6", ("3, 16", "3, 16")),
        "the loop at 3:9",
    ),
    "stride_loop": (family(STRIDE_LOOP, "1, 4", "2, 6", ("3, 8", "3, 16")), "the loop at 3:9"),
    "norm_axes": (family(NORM_AXES, "1, 4, 1", "2, 6, 2", ("3, 16", "3, 32")), "the loop at 3:9"),
    "upsample_loop": (
        family(UPSAMPLE_LOOP, "1, 4", "2, 6", ("3, 8", "3, 4")),
        "the loop at 3:9",
    ),
    "if_pool": (family(IF_POOL, "false, 4", "true, 6", ("3, 8", "3, 16")), "the if at 4:9"),
    "if_pool_after_loop": (
        family(IF_POOL_AFTER_LOOP, "false, 1, 4", "true, 2, 6", ("3, 8", "3, 16")),
        "the if at 5:9",
    ),
    # 15 rounded up and 16 halved: 8 both, which the class wrote whatever ``c``
    "ceil_flag": (
        family(CEIL_FLAG, "4, false", "6, true", ("3, 16", "3, 15")),
        "the flag 'c' of 'avgpool' at 4:14",
    ),
}


@pytest.mark.parametrize("name", sorted(FALLING_BACK))
def test_a_size_a_loop_or_if_changes_keeps_a_class_per_variant(name: str) -> None:
    """One class per variant with a note naming the loop or ``if``, no class taking the
    count (``roll_check`` finds nothing: at the base it built ``Fam`` at another count and
    could not load the variant's weights)."""
    source, where = FALLING_BACK[name]
    module, code, notes = build(source, name)
    assert len(notes) == 1, notes
    assert notes[0].startswith("network 'Fam' at 1:7: the sizes of '"), notes
    assert notes[0].endswith(
        f"on an axis the class does not track change with {where}: a module reading"
        " them would be built with the number each variant gives"
    ), notes
    assert ANY_CLASS.findall(code) == ["small", "big"], code
    for variant in ("small", "big"):
        getattr(module, variant)()  # each variant's own class builds
    assert check_source(source, Counter()) == []


def test_the_pool_loop_wrote_the_variants_number() -> None:
    """The reproducer of F5: at the base, ``Fam`` wrote ``nn.Linear(channels * 8, 4)``,
    which ``Fam(2, 4)`` on small's input (a length of 4) cannot load."""
    source, _ = FALLING_BACK["pool_loop"]
    _, code, _ = build(source, "pool_loop")
    assert "channels * 8" not in code, code
    assert "class Fam(" not in code, code


# still one class: no step in a loop or an if changes the size the reader reads
ROLLING = {
    # the loop keeps the length (a padded convolution): 16 whatever the count
    "length_kept": family(
        """\
model Fam(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu
        x -> flatten() -> dense(4) as head
        return x
""",
        "1, 4",
        "2, 6",
        ("3, 16", "3, 16"),
    ),
    # the adaptive pool gives 2 whatever the loop left
    "adaptive_after_loop": family(
        """\
model Fam(n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu -> maxpool(2)
        x -> adaptive_avg_pool(2) -> flatten() -> dense(4) as head
        return x
""",
        "1, 4",
        "2, 6",
        ("3, 16", "3, 32"),
    ),
    # the branch changes no size
    "if_keeps_sizes": family(
        """\
model Fam(p: bool, w: int):
    def forward(x):
        x -> conv1d(w, 3, padding=1) as stem
        if p:
            x -> relu()
        x -> flatten() -> dense(4) as head
        return x
""",
        "false, 4",
        "true, 6",
        ("3, 16", "3, 16"),
    ),
    # a flag that changes no shape (a bias)
    "flag_keeps_sizes": family(
        """\
model Fam(b: bool, w: int):
    def forward(x):
        x -> conv1d(w, 3, padding=1, bias=b) as stem
        x -> flatten() -> dense(4) as head
        return x
""",
        "false, 4",
        "true, 6",
        ("3, 16", "3, 16"),
    ),
}

HEADS = {
    "flag_keeps_sizes": "        self.head = nn.Linear(w * 16, 4)\n",
    "length_kept": "        self.head = nn.Linear(channels * 16, 4)\n",
    "adaptive_after_loop": "        self.head = nn.Linear(channels * 2, 4)\n",
    "if_keeps_sizes": "        self.head = nn.Linear(channels * 16, 4)\n",
}


@pytest.mark.parametrize("name", sorted(ROLLING))
def test_a_size_no_loop_or_if_changes_still_rolls(name: str) -> None:
    """One class ``Fam``, each variant built as its class written out builds it (the same
    modules in order, a strict load, equal outputs), and ``roll_check`` finds nothing at
    other counts and conditions."""
    source = ROLLING[name]
    big_length = 32 if name == "adaptive_after_loop" else 16
    rolled, code, notes = build(source, name)
    unrolled, flat, _ = build(source, f"{name}_flat", roll=False)
    assert notes == [], notes
    assert ANY_CLASS.findall(code) == ["Fam", "small", "big"], code
    assert ANY_CLASS.findall(flat) == ["small", "big"], flat
    for variant, length in (("small", 16), ("big", big_length)):
        loads_and_computes_alike(*built_alike(rolled, unrolled, variant), torch.randn(2, 3, length))
    assert HEADS[name] in code, code
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    assert counts["network arguments"] > 0, counts


def test_the_adaptive_pool_case_takes_both_inputs() -> None:
    """``adaptive_after_loop``'s variants run on their own lengths (16 and 32) through
    one class: its head reads no length."""
    module, code, notes = build(ROLLING["adaptive_after_loop"], "adaptive_lengths")
    assert notes == [], notes
    assert module.small()(torch.randn(2, 3, 16)).shape == (2, 4)
    assert module.big()(torch.randn(2, 3, 32)).shape == (2, 4)


# already sound at the base, kept so: a kernel from a row's item or a parameter's stride
# falls back (``resizing_args``); a pad after the loop on the threaded axis rolls, its
# pad refused at other values
GUARDED = {
    "kernel_rows": (
        family(
            """\
model Fam(rows, w: int):
    def forward(x):
        for c, k in rows:
            x -> conv1d(c, k).relu
        x -> flatten() -> dense(w) as head
        return x
""",
            "((4, 3),), 2",
            "((4, 3), (6, 3)), 2",
            ("3, 10", "3, 12"),
        ),
        True,
    ),
    "stride_param": (
        family(
            """\
model Fam(s: int, n: int, w: int):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1).relu
        x -> conv1d(w, 1, stride=s) as down
        x -> flatten() -> dense(4) as head
        return x
""",
            "1, 1, 4",
            "2, 2, 6",
            ("3, 8", "3, 16"),
        ),
        True,
    ),
    "pad_after_loop": (
        family(
            """\
model Fam(n: int, w: int, k: int = 3):
    def forward(x):
        for i in range(n):
            x -> dense(8).relu
        x -> dense(w) -> pad((k, 1))
        x -> layer_norm() -> dense(5) as head
        return x
""",
            "1, 4",
            "2, 4",
            ("3, 8", "3, 8"),
        ),
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_sizes_an_argument_changes_stay_sound(name: str) -> None:
    source, falls_back = GUARDED[name]
    _, code, notes = build(source, name)
    assert bool(notes) == falls_back, notes
    assert ("class Fam(nn.Module):" in code) != falls_back, code
    assert check_source(source, Counter()) == []
