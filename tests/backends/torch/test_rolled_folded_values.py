"""Issue 24 item 3: a value a block parameter gives a module's constructor, passed
through as a PyTorch engineer writes it. ``layer_norm(bias=p0)`` with ``p0`` a boolean
parameter was written ``nn.LayerNorm(6)`` at ``True`` and ``nn.LayerNorm(6, bias=False)``
at ``False``, so the block kept a class per call ('the bias 'p0' of 'layer_norm1' sets its
module other than as written', fuzz seed 94000268); the class now writes
``nn.LayerNorm(channels, bias=p0)``. Each form is checked as ``one_class.twin`` checks a rolled
block: one class, the modules of the build with a class per call in the same order, a
strict state-dict load, equal outputs, and ``roll_check`` building it at other values."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import CLASS, block_class, twin  # noqa: E402

LAYER_NORM_BIAS = """\
model Norm(n: int, p0: bool = true):
    def forward(x):
        for i in range(n):
            r = x
            x -> layer_norm(bias=p0).sigmoid as layer1_{i + 1}
            x = add(x, r)
        return x

model Net:
    input_shape = (6,)
    def forward(x):
        x -> Norm(1, p0=true) as a -> Norm(2, p0=false) as b -> dense(2) as head
"""


def test_a_boolean_parameter_given_to_layer_norms_bias_is_passed_through() -> None:
    """``nn.LayerNorm(channels, bias=p0)``, the calls giving ``True`` and ``False``: one class,
    the bias-free norms holding only weights as the per-call build's do."""
    checked = twin(LAYER_NORM_BIAS, "layer_norm_bias", torch.randn(3, 6))
    assert CLASS.findall(checked.gen.code) == ["Norm", "Net"], checked.gen.code
    norm = block_class(checked.gen, "Norm")
    assert "def __init__(self, in_features, n, p0=True):" in norm, norm
    assert 'setattr(self, f"layer1_{i + 1}", nn.LayerNorm(channels, bias=p0))' in norm, norm
    keys = list(checked.gen.module.Net().state_dict())
    assert "b.layer1_1.bias" not in keys and "a.layer1_1.bias" in keys, keys


INNER_FOLDED_WIDTH = """\
model Unit0(w, act = relu):
    def forward(x):
        return x -> dense(w) -> act

model Unit1(w, act = relu):
    def forward(x):
        return x -> dense(w) -> act

model Fam(w0, n0, w1, n1):
    def forward(x):
        for i in range(n0):
            x -> Unit0(w0) as u{i + 1}
        for i in range(n1):
            x -> Unit1(w1)
        return x

model Net:
    input_shape = (1, 1, 5)
    def forward(x):
        x -> dense(1) as stem
        x -> Fam(6, 1, 6, 1) as a
        x -> Fam(8, 1, 2, 0) as b
        return x
"""


def test_an_inner_class_called_at_a_running_width_takes_its_input_width() -> None:
    """``Unit1``'s one call sees 6 features, so its class wrote ``nn.Linear(6, w)``, and
    the rolled ``Fam``, building it after ``w0`` features, kept a class per call (fuzz
    seed 112000053: ``Fam(1, 7, 1, 6, 1)`` failed to load its own call's build). Now the
    class of ``Unit1`` takes its input width as a class serving calls at several widths
    does (``Unit1(in_features, w)``) and ``Fam`` passes the running width; ``Unit0``,
    called at two widths already, is as before."""
    checked = twin(INNER_FOLDED_WIDTH, "inner_folded", torch.randn(3, 1, 1, 5))
    code = checked.code
    assert CLASS.findall(code) == ["Unit0", "Unit1", "Fam", "Net"], code
    assert (
        "class Unit1(nn.Module):\n"
        "    def __init__(self, in_features, w, act=nn.ReLU):\n"
        "        super().__init__()\n"
        "        self.act = act()\n"
        "        self.dense1 = nn.Linear(in_features, w)\n"
    ) in code, code
    assert (
        "        for i in range(n1):\n"
        '            setattr(self, f"unit1{i + 1}", Unit1(channels, w1))\n'
        "            channels = w1\n"
    ) in code, code
    # the per-call build's Unit1 takes it too: Fam's w0 changes it (hunt109 F6,
    # param_blocks._moved_spatial), where it wrote nn.Linear(6, w)
    assert "self.unit11 = Unit1(w0, w1)" in checked.per_call, checked.per_call
    assert checked.counts["calls"] == 2, checked.counts


SHARED_INNER = INNER_FOLDED_WIDTH.replace(
    "model Net:",
    "model Solo(w):\n    def forward(x):\n        return x -> Unit1(w) -> dense(w)\n\nmodel Net:",
).replace(
    "        x -> Fam(8, 1, 2, 0) as b\n",
    "        x -> Solo(6) as c\n        x -> Fam(8, 1, 2, 0) as b\n",
)


def test_an_inner_class_other_blocks_also_call_takes_its_input_width() -> None:
    """``Unit1`` called by the rolled ``Fam`` and by ``Solo``, both at 6 features: its
    class takes its input width, and ``Solo``'s class, written with the old signature
    (``Unit1(w)``), is written again passing its calls' width (``Unit1(6, w)``); it kept
    a class per call of ``Fam`` with 'the class of 'Unit1' at 14:18 is written for its
    calls' input width, which 'channels' may change'."""
    checked = twin(SHARED_INNER, "inner_shared", torch.randn(3, 1, 1, 5))
    code = checked.code
    assert CLASS.findall(code) == ["Unit0", "Unit1", "Fam", "Solo", "Net"], code
    assert "    def __init__(self, in_features, w, act=nn.ReLU):\n" in code, code
    assert '            setattr(self, f"unit1{i + 1}", Unit1(channels, w1))\n' in code, code
    assert "        self.unit11 = Unit1(6, w)\n" in code, code


def test_an_inner_class_the_network_also_calls_takes_its_input_width() -> None:
    """The entry network calls ``Unit1`` itself (``Unit1(6) as c``): it builds
    ``Unit1(6, 6)``."""
    source = INNER_FOLDED_WIDTH.replace(
        "        x -> Fam(8, 1, 2, 0) as b\n",
        "        x -> Unit1(6) as c\n        x -> Fam(8, 1, 2, 0) as b\n",
    )
    checked = twin(source, "inner_shared_net", torch.randn(3, 1, 1, 5))
    assert CLASS.findall(checked.code) == ["Unit0", "Unit1", "Fam", "Net"], checked.code
    assert "        self.c = Unit1(6, 6)\n" in checked.code, checked.code
