"""Issue 24 item 3: a rolled class's size after a ``ceil_mode`` pool is torch's at any
arguments, not only on the side of torch's last-window rule its calls took.

With ``ceil_mode`` torch rounds the window count up and drops a last window that would
start in the right padding. The shape rule took that branch on the call's values, so the
expression a rolled class wrote was right on that side only: ``maxpool(k, stride=s)`` of 3
wrote ``-(-(in_features - k) // s) + 1`` windows, 2 at k=1, s=2 as called but also 2 at
s=4, where torch keeps 1 (``roll_check --seed 47``, program 47000000: ``no strict load``).
The rule now writes the smaller of the two counts, ``min(...)`` where the arguments decide
which, one count where the kernel, stride and padding decide it whatever the size.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    built_alike,
    one_class_alike,
    per_call,
)

STRIDED = """\
model P(k: int, s: int, w: int):
    def forward(x):
        x -> maxpool(k, stride=s, ceil_mode=true)
        x -> dense(w)
        return x

model Net:
    input_shape = (2, 3)
    def forward(x):
        x -> P(1, 2, 4) -> P(2, 2, 3)
        return x
"""

PADDED = """\
model Q(w: int):
    def forward(x):
        x -> maxpool(2, stride=2, padding=1, ceil_mode=true)
        x -> dense(w)
        return x

model Net:
    input_shape = (2, 3)
    def forward(x):
        x -> Q(4) -> Q(5)
        return x
"""


def _like_per_call(source: str, name: str, x: torch.Tensor) -> None:
    """The rolled build and the build of one class per call: the same modules in the
    same order, a strict load and equal outputs."""
    rolled, _, _ = build(source, name)
    calls, _ = per_call(source, f"{name}_per_call", roll_networks=False)
    mine, theirs = built_alike(rolled, calls, "Net")
    mine.load_state_dict(theirs.state_dict(), strict=True)
    mine.eval()
    theirs.eval()
    with torch.no_grad():
        torch.testing.assert_close(mine(x), theirs(x), rtol=0, atol=0)


def test_a_pool_whose_arguments_decide_the_last_window_writes_the_smaller_count() -> None:
    gen, _ = one_class_alike(STRIDED, "strided", torch.randn(3, 2, 3))
    assert CLASS.findall(gen.code) == ["P", "Net"], gen.code
    _like_per_call(STRIDED, "strided", torch.randn(3, 2, 3))
    assert (
        "self.dense1 = nn.Linear(min(-(-(in_features - k) // s) + 1, -(-in_features // s)), w)"
    ) in block_class(gen, "P"), gen.code
    module, _, _ = build(STRIDED, "strided_other")
    torch.manual_seed(0)
    # k=1, s=4 of 3: torch's window at 4 starts past the input, one window is left
    other = module.P(3, 1, 4, 4)
    assert other.dense1.in_features == 1
    assert other(torch.randn(2, 2, 3)).shape == (2, 2, 4)
    assert check_source(STRIDED) == []


def test_a_padded_pool_of_other_input_sizes_is_one_class() -> None:
    """Q of 3 drops its last window (2 of 3 rounded up), Q of 4 keeps it (3): as one
    expression, ``ceil((in_features + 1) / 2)``, both calls share one class, where the
    calls' two expressions left one class each (``stays one class per call``)."""
    gen, _ = one_class_alike(PADDED, "padded", torch.randn(3, 2, 3))
    assert CLASS.findall(gen.code) == ["Q", "Net"], gen.code
    assert "self.dense1 = nn.Linear(-(-(in_features + 1) // 2), w)" in block_class(gen, "Q")
    _like_per_call(PADDED, "padded", torch.randn(3, 2, 3))
    assert check_source(PADDED) == []
