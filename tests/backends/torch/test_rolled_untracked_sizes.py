"""Issue 24 item 3: a size on an axis the walk does not thread (a length, where it threads
the channels), changed by a step's argument the source writes as an expression (a loop's
item ``k`` in ``conv1d(c, k, padding=k // 2)``). Every call's kernels may keep the length
(odd ``k``), yet a class built at an even kernel would make a longer one: a module after it
that reads the length (a ``dense`` after ``flatten``, a norm's shape) cannot be written as
the calls' number: the block kept one class per call with a located note (roll_check
seed 130000162); it now carries the length as a running local
(``test_rolled_running_lengths``). A step whose arguments keep the length at any value (a constant kernel
3 with ``padding=1``), or a pool that sets it (``adaptive_avg_pool(4)``), keeps the roll.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    twin,
)

KERNEL_ROWS = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k in rows1:
            x -> conv1d(c, {kernel}, padding={padding})
        x -> conv1d(w0, 3, padding=1)
        return x -> {pool}flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 8)
    def forward(x):
        a = Fam(x, [(8, 3)], 6, 1) as a
        b = Fam(x, [(8, 1)], 6, 2) as b
        return add(a, dense(b, 3))
"""


def kernel_rows(kernel: str = "k", padding: str = "k // 2", pool: str = "") -> str:
    return KERNEL_ROWS.format(kernel=kernel, padding=padding, pool=pool)


def test_a_dense_after_a_length_a_loops_kernel_may_change_rolls() -> None:
    """``nn.Linear(w0 * 8, ...)`` was right at the calls' odd kernels only (at
    ``rows1=[(8, 4)]`` the length is 9); it fell back to a class per call. The class now
    carries the length as a running local (``test_rolled_running_lengths``)."""
    checked = twin(kernel_rows(), "kernel_rows", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "nn.Linear(w0 * length, p0 + 2)" in fam, fam


def test_a_norm_after_a_length_a_loops_kernel_may_change_rolls() -> None:
    """The norm's shape (``(w0, 8)[-p0:]``) read the same length: now the local's."""
    source = kernel_rows(pool="rms_norm(axes=p0) -> ")
    checked = twin(source, "kernel_rows_norm", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "nn.RMSNorm((w0, length)[-p0:])" in fam, fam


def test_a_constant_kernel_keeps_the_length_and_the_roll() -> None:
    """A loop's item giving the channels only: the length is 8 at any arguments."""
    checked = twin(kernel_rows("3", "1"), "constant_kernel", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "nn.Linear(w0 * 8, p0 + 2)" in fam, fam


def test_a_pool_setting_the_length_keeps_the_roll() -> None:
    """``adaptive_avg_pool(4)`` sets the length whatever the kernels made."""
    source = kernel_rows(pool="adaptive_avg_pool(4) -> ")
    checked = twin(source, "pooled_kernel_rows", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "kernel_size=k, padding=k // 2" in fam, fam
    assert "nn.Linear(w0 * 4, p0 + 2)" in fam, fam


# The input's sizes on the axes the walk does not thread, taken by name: ``Fam`` threads
# its features (its loop's dense layers grow them), and its inner ``Unit`` reads the length
# too (``layer_norm(axes=2)``); the calls' inputs ``(5, 6)`` and ``(3, 10)`` differ there,
# so no number serves both: the class takes ``in_channels`` as its calls' classes do and
# passes it on (``Unit(in_channels, channels, w)``)
INNER_READS_THE_LENGTH = """\
model Unit(w):
    def forward(x):
        return x -> layer_norm(axes=2) -> dense(w)

model Fam(n, w):
    def forward(x):
        for i in range(n):
            x -> dense(w * (i + 1))
        x -> Unit(w)
        return x

model Net:
    input_shape = (5, 6)
    def forward(x):
        a = Fam(x, 2, 4) as a
        r = reshape(x, 3, 10)
        b = Fam(r, 3, 8) as b
        return add(dense(flatten(a), 3), dense(flatten(b), 3))
"""


def test_an_inner_block_reading_an_untracked_input_size_gets_it_by_name() -> None:
    checked = twin(INNER_READS_THE_LENGTH, "inner_length", torch.randn(2, 5, 6))
    assert CLASS.findall(checked.code) == ["Unit", "Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "def __init__(self, in_channels, in_features, n, w):" in fam, fam
    assert "self.unit1 = Unit(in_channels, channels, w)" in fam, fam
    assert "self.a = Fam(5, 6, 2, 4)" in checked.code, checked.code
    assert "self.b = Fam(3, 10, 3, 8)" in checked.code, checked.code


# bench seed 152000079: a norm over ``axes=p0`` after ``dense(w0)`` reads the input's
# channels and height beside the features ``w0`` sets; threading the channels, the norm
# read a size a parameter changes (``w0``) on the untracked last axis. Threading the
# features, the channels and height are the input's: ``(in_channels, in_height, w0)``
NORM_OVER_INPUT_SIZES = """\
model Fam0(w0, p0, w2, n2):
    def forward(x):
        x -> dense(w0)
        x = layer_norm(x, axes=p0)
        for i in range(n2):
            x -> dense(w2)
        return x

model Net:
    input_shape = (6, 5, 3)
    def forward(x):
        x -> Fam0(w0=4, p0=1, w2=3, n2=2) as fam1
        h1 = Fam0(x, 6, 3, 2, 0) as fam2
        h2 = Fam0(h1, 8, 2, 8, 3) as fam3
        return h2
"""


def test_a_norm_reading_the_input_sizes_beside_a_parameters_width_rolls() -> None:
    checked = twin(NORM_OVER_INPUT_SIZES, "norm_sizes", torch.randn(2, 6, 5, 3))
    assert CLASS.findall(checked.code) == ["Fam0", "Net"], checked.code
    fam = block_class(checked.gen, "Fam0")
    assert "def __init__(self, in_channels, in_height, in_features, w0, p0, w2, n2):" in fam
    assert "nn.LayerNorm((in_channels, in_height, w0)[-p0:])" in fam, fam
    assert "self.fam3 = Fam0(6, 5, 6, 8, 2, 8, 3)" in checked.code, checked.code


# the length an inner block reads after kernel rows: ``Unit(channels, 8, w0)`` was right at
# the calls' odd kernels only (a row ``(8, 4)`` makes a length of 9); it fell back
INNER_AFTER_KERNEL_ROWS = """\
model Unit(w):
    def forward(x):
        return x -> layer_norm(axes=2) -> conv1d(w, 1)

model Fam(rows1, w0):
    def forward(x):
        for c, k in rows1:
            x -> conv1d(c, k, padding=k // 2)
        return x -> Unit(w0)

model Net:
    input_shape = (1, 8)
    def forward(x):
        a = Fam(x, [(8, 3)], 6) as a
        b = Fam(x, [(8, 1), (4, 3)], 6) as b
        return add(a, b)
"""


def test_an_inner_block_taking_a_size_a_loops_item_may_change_gets_the_running_length() -> None:
    """Neither the calls' number nor the input's size by name: the class passes the
    length it carries (``test_rolled_running_lengths``)."""
    checked = twin(INNER_AFTER_KERNEL_ROWS, "inner_kernel_rows", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Unit", "Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "Unit(channels, length, w0)" in fam, fam


# a flatten of a length the calls' inputs give differently (8 and 4), which the loop's
# convolutions keep at any arguments (a constant kernel 3 with ``padding=1``)
FLATTEN_OF_INPUT_LENGTHS = """\
model Head(n, w):
    def forward(x):
        for i in range(n):
            x -> conv1d(w, 3, padding=1)
        return x -> flatten() -> dense(4)

model Net:
    input_shape = (2, 8)
    def forward(x):
        a = Head(x, 2, 4) as a
        r = reshape(x, 4, 4)
        b = Head(r, 1, 6) as b
        return add(a, b)
"""


def test_a_flatten_of_the_input_length_reads_it_by_name() -> None:
    checked = twin(FLATTEN_OF_INPUT_LENGTHS, "flat_lengths", torch.randn(2, 2, 8))
    assert CLASS.findall(checked.code) == ["Head", "Net"], checked.code
    head = block_class(checked.gen, "Head")
    assert "def __init__(self, in_channels, in_features, n, w):" in head, head
    assert "self.dense1 = nn.Linear(channels * in_features, 4)" in head, head
    assert "self.b = Head(4, 4, 1, 6)" in checked.code, checked.code
