"""Issue 24 item 3: a spatial size a step's source arguments change (a loop's item ``k`` in
``conv1d(c, k, padding=k // 2)``: the length at an even ``k``), carried through
``__init__`` as a second running local beside ``channels``, updated as the operation
catalog's shape rule computes it (``folded_sizes.spatial_trees``):

    length = in_features
    for i, (c, k) in enumerate(rows1):
        ...
        length = length + 2 * (k // 2) - k + 1
    self.dense1 = nn.Linear(w0 * length, p0 + 2)

Each form is a twin test (one class, the modules of the build with one class per call in
the same order, a strict load, equal outputs, ``roll_check`` finding nothing), and the
class built at arguments no call gives (an even kernel) builds what a class written for
that call builds.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.backends.torch.folded_sizes import keeps_arguments, spatial_trees  # noqa: E402
from aurane.semantics.symbolic import Lit, Ref, symbol  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    refusing,
    twin,
)

KERNEL_ROWS = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k in rows1:
            x -> conv1d(c, k, padding=k // 2)
        x -> conv1d(w0, 3, padding=1)
        return x -> {head}

model Net:
    input_shape = (1, 8)
    def forward(x):
        a = Fam(x, {rows_a}, 6, 1) as a
        b = Fam(x, {rows_b}, 6, 2) as b
        return add(a, dense(b, 3))
"""


def kernel_rows(
    rows_a: str = "[(8, 3)]", rows_b: str = "[(8, 1)]", head: str = "flatten() -> dense(p0 + 2)"
) -> str:
    return KERNEL_ROWS.format(rows_a=rows_a, rows_b=rows_b, head=head)


def test_a_dense_after_kernel_rows_reads_the_running_length() -> None:
    """The calls' odd kernels keep the length 8; the class carries it as ``length``."""
    checked = twin(kernel_rows(), "running_length", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "        length = in_features\n" in fam, fam
    assert "            length = length + 2 * (k // 2) - k + 1\n" in fam, fam
    assert "nn.Linear(w0 * length, p0 + 2)" in fam, fam


def test_even_kernels_change_the_length_the_class_carries() -> None:
    """Calls at even kernels (8 -> 9 -> 10): the rolled class follows each."""
    source = kernel_rows(rows_b="[(8, 4), (4, 2)]")
    checked = twin(source, "even_kernels", torch.randn(2, 1, 8))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code


def test_the_class_built_at_an_even_kernel_is_the_per_call_build() -> None:
    """The class rolled from odd kernels, built at ``[(8, 4)]`` (no call gives it), holds
    what the class written for a call at ``[(8, 4)]`` holds, and computes the same."""
    rolled, _, notes = build(kernel_rows(), "odd_kernels")
    assert notes == [], notes
    single, _, _ = build(kernel_rows(rows_a="[(8, 4)]", rows_b="[(8, 4)]"), "even_alone")
    torch.manual_seed(0)
    mine = rolled.Fam(1, 8, ((8, 4),), 6, 1)
    torch.manual_seed(0)
    theirs = single.Net().a
    assert {k: v.shape for k, v in mine.state_dict().items()} == {
        k: v.shape for k, v in theirs.state_dict().items()
    }
    mine.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(2, 1, 8)
    torch.testing.assert_close(mine(x), theirs(x), rtol=0, atol=0)


def test_a_norm_after_kernel_rows_reads_the_running_length() -> None:
    """A norm's shape reads the same local (``(w0, length)[-(p0 + 1):]``)."""
    source = kernel_rows(head="rms_norm(axes=p0) -> flatten() -> dense(p0 + 2)")
    checked = twin(source, "norm_length", torch.randn(2, 1, 8))
    fam = block_class(checked.gen, "Fam")
    assert "nn.RMSNorm((w0, length)[-p0:])" in fam, fam


def test_conv2d_rows_carry_the_height_and_width() -> None:
    """A row's kernel and stride: two locals, each updated by the rule."""
    source = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k, s in rows1:
            x -> conv2d(c, k, stride=s, padding=k // 2)
        x -> conv2d(w0, 3, padding=1)
        return x -> flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 8, 6)
    def forward(x):
        a = Fam(x, [(8, 3, 1)], 6, 1) as a
        b = Fam(x, [(8, 4, 2), (4, 1, 1)], 6, 2) as b
        return add(a, dense(b, 3))
"""
    checked = twin(source, "running_height_width", torch.randn(2, 1, 8, 6))
    assert CLASS.findall(checked.code) == ["Fam", "Net"], checked.code
    fam = block_class(checked.gen, "Fam")
    assert "            height = (height + 2 * (k // 2) - k) // s + 1\n" in fam, fam
    assert "            width = (width + 2 * (k // 2) - k) // s + 1\n" in fam, fam
    assert "nn.Linear(w0 * height * width, p0 + 2)" in fam, fam


def test_a_pool_of_a_rows_kernel_updates_the_length() -> None:
    """``maxpool(k)`` of a row's item: ``length = (length - k) // k + 1``."""
    source = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k in rows1:
            x -> conv1d(c, 3, padding=1) -> maxpool(k)
        x -> conv1d(w0, 3, padding=1)
        return x -> flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 16)
    def forward(x):
        a = Fam(x, [(8, 2)], 6, 1) as a
        b = Fam(x, [(8, 2), (4, 3)], 6, 2) as b
        return add(a, dense(b, 3))
"""
    checked = twin(source, "pooled_length", torch.randn(2, 1, 16))
    fam = block_class(checked.gen, "Fam")
    assert "            length = (length - k) // k + 1\n" in fam, fam
    assert "nn.Linear(w0 * length, p0 + 2)" in fam, fam


def test_a_parameters_kernel_outside_loops_is_the_sizes_text() -> None:
    """Outside loops no local: the dense reads the rule's tree of the kernel and
    dilation."""
    source = """\
model Fam(w0, k0, p0):
    def forward(x):
        x -> conv1d(w0, k0, dilation=2)
        return x -> flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 16)
    def forward(x):
        a = Fam(x, 6, 3, 1) as a
        b = Fam(x, 6, 2, 2) as b
        return add(a, dense(b, 3))
"""
    checked = twin(source, "parameter_kernel", torch.randn(2, 1, 16))
    fam = block_class(checked.gen, "Fam")
    assert "length" not in fam, fam
    assert "nn.Linear(w0 * (in_features - (2 * (k0 - 1) + 1) + 1), p0 + 2)" in fam, fam


def test_a_loop_keeping_the_length_writes_no_local() -> None:
    """A constant kernel 3 with ``padding=1`` keeps the length: no ``length`` line."""
    source = kernel_rows().replace("conv1d(c, k, padding=k // 2)", "conv1d(c, 3, padding=1)")
    checked = twin(source, "kept_length", torch.randn(2, 1, 8))
    fam = block_class(checked.gen, "Fam")
    assert "length" not in fam, fam


def test_a_length_a_pool_set_starts_the_local_at_its_number() -> None:
    """After ``adaptive_avg_pool(7)`` the loop's local starts at 7 (``length = 7``)."""
    source = """\
model Fam(rows1, w0, p0):
    def forward(x):
        x -> adaptive_avg_pool(7)
        for c, k in rows1:
            x -> conv1d(c, k, padding=k // 2)
        return x -> flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 8)
    def forward(x):
        a = Fam(x, [(8, 3)], 6, 1) as a
        b = Fam(x, [(8, 4), (3, 2)], 6, 2) as b
        return add(a, dense(b, 3))
"""
    checked = twin(source, "pooled_then_rows", torch.randn(2, 1, 8))
    fam = block_class(checked.gen, "Fam")
    assert "        length = 7\n" in fam, fam
    assert "nn.Linear(channels * length, p0 + 2)" in fam, fam


def test_a_side_tensor_a_loop_does_not_carry_keeps_the_fallback() -> None:
    """``y = x -> conv1d(c, k)`` changes a length the loop's local does not carry (each
    iteration would restart it): not tracked, and the block keeps a class per call."""
    source = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k in rows1:
            x -> conv1d(c, k, padding=k // 2)
            y = x -> conv1d(c, k)
        return x -> flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 8)
    def forward(x):
        a = Fam(x, [(8, 3)], 6, 1) as a
        b = Fam(x, [(8, 4), (3, 2)], 6, 2) as b
        return add(a, dense(b, 3))
"""
    _, code, notes = refusing(source, "side_tensor", torch.randn(2, 1, 8))
    assert CLASS.findall(code) == ["Fam", "Fam_2", "Net"], code
    assert "flattens may change with an argument a step before it is given" in notes[0], notes


def test_an_inner_block_takes_the_running_length() -> None:
    """Bench seed 182000001: an inner block reading the length (``layer_norm(axes=2)``)
    after kernel rows is passed the local (``Unit0(channels, length, v0)``)."""
    source = """\
model Unit0(w):
    def forward(x):
        return x -> layer_norm(axes=2) -> conv1d(w, 3, padding=1)

model Fam0(rows0, v0):
    def forward(x):
        for c, k in rows0:
            x -> conv1d(c, k, padding=k // 2)
        x -> Unit0(v0)
        return x

model Net:
    input_shape = (6, 3)
    def forward(x):
        x -> Fam0([(4, 2)], 8) -> Fam0([(6, 4), (6, 2)], 8) as fam1
        return Fam0(x, [(2, 1), (2, 4), (3, 1)], 3) as fam2
"""
    checked = twin(source, "inner_length", torch.randn(2, 6, 3))
    fam = block_class(checked.gen, "Fam0")
    assert "        self.unit01 = Unit0(channels, length, v0)\n" in fam, fam


SLICED_ROWS = """\
model Fam(rows1, w0, p0):
    def forward(x):
        for c, k in rows1:
            x -> conv2d(c, 3, padding=1) -> slice(dim=2, start=k)
        return x -> flatten() -> dense(p0 + 2)

model Net:
    input_shape = (1, 8, 6)
    def forward(x):
        a = Fam(x, [(8, 1)], 6, 1) as a
        b = Fam(x, [(8, 2), (3, 1)], 6, 2) as b
        return add(a, dense(b, 3))
"""


def test_a_rule_losing_an_arguments_tree_is_not_carried() -> None:
    """``slice(dim=2, start=k)``'s rule gives the height as a plain number (6 at ``k =
    2``): a tree right at this visit only, which ``keeps_arguments`` finds by trying ``k``
    at other values; the width's tree is kept."""
    from aurane.compile import prepare_program

    _, graphs, _ = prepare_program(SLICED_ROWS, filename="sliced.aur")
    sub = [n for n in graphs["Net"].nodes if n.op == "block"][1].subgraph
    assert sub is not None
    node = next(n for n in sub.nodes if n.op == "slice")
    start = {"start": symbol(2, Ref("k"))}
    trees = spatial_trees(sub, node, {1: Ref("height"), 2: Ref("width")}, start)
    assert trees == {1: Lit(6), 2: Ref("width")}
    at_visit = {"k": 2, "height": 8, "width": 6}
    assert not keeps_arguments(sub, node, trees, start, lambda leaf: at_visit[leaf.name])
    assert keeps_arguments(sub, node, {2: Ref("width")}, start, lambda leaf: at_visit[leaf.name])


def test_a_sliced_length_keeps_the_fallback() -> None:
    """The block of that slice keeps a class per call, noted; never a wrong class."""
    _, code, notes = refusing(SLICED_ROWS, "sliced_rows", torch.randn(2, 1, 8, 6))
    assert CLASS.findall(code) == ["Fam", "Fam_2", "Net"], code
    assert "flattens may change with an argument a step before it is given" in notes[0], notes
