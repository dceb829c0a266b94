"""Block parameters in every argument position (issue 22): the generated class of a
parameterised block reads each value a forward statement needs from ``self`` and writes
every size from the expression tree with correct precedence. Each case compiles, runs
traced in training mode (with backward) and evaluation mode, and compares every value's
shape and dtype and every parameter count with the IR; a few compare numbers with torch."""

from __future__ import annotations

import textwrap

import pytest

from aurane.tools.differential import run_accepted
from aurane.verify import Generated, load_generated

torch = pytest.importorskip("torch")


def _proved(source: str) -> Generated:
    gen = load_generated(textwrap.dedent(source), "blocks.aur")
    for name, graph in gen.graphs.items():
        if graph.input_value.shape is not None and name == "Net":
            assert run_accepted(gen, name, 0) is None, gen.code
    return gen


def _block_class(gen: Generated, name: str) -> str:
    code = gen.code
    start = code.index(f"class {name}(nn.Module):")
    end = code.find("\nclass ", start + 1)
    return code[start:end]


def test_crop_block_parameter_as_slice_start_is_stored_on_the_module() -> None:
    gen = _proved(
        """
        model Crop(s):
            def forward(x):
                x -> slice(dim=1, start=s)

        model Net:
            input_shape = (8, 4)
            def forward(x):
                x -> Crop(2)
        """
    )
    text = _block_class(gen, "Crop")
    assert "self.s = s" in text and "x = x[:, self.s :]" in text
    net = gen.module.Net()
    x = torch.randn(2, 8, 4)
    assert torch.equal(net(x), x[:, 2:])


def test_padding_k_floor_half_keeps_its_parentheses() -> None:
    """``padding=k // 2`` then a dense layer: the features are written 2 * (k // 2), not
    2 * k // 2 (which made Linear(6, 2) where the IR said 5 features)."""
    gen = _proved(
        """
        model B(k):
            def forward(x):
                x -> conv1d(2, kernel=k, padding=k // 2) -> flatten() -> dense(2)

        model Net:
            input_shape = (3, 5)
            def forward(x):
                x -> B(3)
        """
    )
    text = _block_class(gen, "B")
    assert "padding=k // 2" in text and "2 * (k // 2)" in text
    assert gen.module.Net().b1.dense1.in_features == 10


ALL_POSITIONS = """
model B(i, n, d, lo, hi, sz, c: float, e: int):
    def forward(x):
        a = select(x, dim=d, index=i)
        p, q = split(x, sz, dim=d)
        u, v = chunk(x, n, dim=d)
        y = concat(u, v, dim=d)
        t = transpose(y, d, e)
        s = softmax(t, dim=d)
        l = log_softmax(s, dim=d)
        g = glu(l, dim=d)
        r = sum(g, dim=d)
        h = hardtanh(r, min_val=lo, max_val=hi)
        m = multiply(h, c)
        o = divide(m, c)
        z = unsqueeze(o, d)
        return concat(flatten(z), a, flatten(p), dim=d)

model Net:
    input_shape = (8, 4)
    def forward(x):
        x -> B(1, 2, 1, -0.5, 0.5, 4, 2.0, 2) -> dense(3)
"""


def test_block_parameters_as_axes_indices_sizes_counts_bounds_and_constants() -> None:
    gen = _proved(ALL_POSITIONS)
    text = _block_class(gen, "B")
    for expected in (
        "x[:, self.i]",
        "x.split(self.sz, dim=self.d)",
        "x.chunk(self.n, dim=self.d)",
        "torch.cat([u, v], dim=self.d)",
        "y.transpose(self.d, self.e)",
        "F.softmax(t, dim=self.d)",
        "F.log_softmax(s, dim=self.d)",
        "F.glu(l, dim=self.d)",
        "g.sum(dim=self.d)",
        "F.hardtanh(r, min_val=self.lo, max_val=self.hi)",
        "h * self.c",
        "m / self.c",
        "o.unsqueeze(self.d)",
    ):
        assert expected in text, (expected, text)


def test_model_constants_computed_from_a_parameter() -> None:
    """``e = s + 2`` and ``f = 4 / (wd - 1)`` at model level: forward reads them from self,
    the quotient keeps its parentheses."""
    gen = _proved(
        """
        model B(s, wd):
            e = s + 2
            f = 4 / (wd - 1)
            def forward(x):
                x -> slice(dim=1, start=e) -> multiply(f)

        model Net:
            input_shape = (8, 4)
            def forward(x):
                x -> B(2, 3)
        """
    )
    text = _block_class(gen, "B")
    assert "x[:, self.s + 2 :]" in text and "x * (4 / (self.wd - 1))" in text, text
    x = torch.randn(2, 8, 4)
    assert torch.allclose(gen.module.Net()(x), x[:, 4:] * 2.0)


def test_one_class_serves_calls_with_different_values() -> None:
    gen = _proved(
        """
        model Crop(s, scale: float = 1.0):
            def forward(x):
                x -> slice(dim=-1, start=s) -> multiply(scale)

        model Net:
            input_shape = (3, 9)
            def forward(x):
                x -> Crop(2) -> Crop(3, scale=0.5) -> dense(2)
        """
    )
    assert gen.code.count("class Crop") == 1
    net = gen.module.Net()
    x = torch.randn(2, 3, 9)
    assert torch.equal(net.crop2(net.crop1(x)), x[..., 5:] * 0.5)


def test_nested_blocks_pass_expressions_of_the_callers_parameters() -> None:
    gen = _proved(
        """
        model Inner(w, k):
            def forward(x):
                x -> conv2d(w, kernel=k, padding=k // 2) -> slice(dim=2, start=k // 2)

        model Outer(h, k):
            def forward(x):
                x -> Inner(2 * h, k) -> Inner(h + 1, k - 2) -> flatten() -> dense(h)

        model Net:
            input_shape = (3, 8, 8)
            def forward(x):
                return add(Outer(x, 4, 5), Outer(x, 4, 7))
        """
    )
    text = _block_class(gen, "Outer")
    assert "Inner(in_channels, 2 * h, k)" in text and "Inner(2 * h, h + 1, k - 2)" in text
