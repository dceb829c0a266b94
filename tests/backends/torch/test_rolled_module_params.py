"""Issue 24 item 3: an operation-valued block parameter applied in a loop that a call
gives an operation its class of one call builds as a module at each step (``norm`` given
``layer_norm``: ``self.layer_norm1 = nn.LayerNorm(4)``, numbered per operation), as
ConvNeXt's and Swin's stage builders take ``norm_layer``. It kept a class per call with
'an operation given for 'norm' that is no function'. The class now takes the operation as
a module class (``norm=nn.ReLU``), keeps it (``self.norm_class``), builds ``norm(channels)``
where it applies it, counted as the IR numbers those modules (``layer_norm_count``), and
``self.norm = norm()`` once otherwise, as a call giving ``relu`` builds it. Each program
runs against its IR, and its ``Net`` is built as the build of one class per call builds it
(the same modules in the same order), strict-loads that build's weights and computes the
same; ``roll_check`` rebuilds the rolled class at each call's arguments and at arguments
no call gives."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    block_class,
    build,
    roll_notes,
    twin,
)

STAGE = """\
model Stage(n, norm = relu):
    def forward(x):
        for i in range(n):
            x -> dense(4) -> norm
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(2, layer_norm) as s -> Stage(3, relu) as t -> dense(2) as head
"""


def _rolled(source: str, name: str, shape: tuple[int, ...] = (3, 4)) -> str:
    """The checks of the module docstring; the rolled ``Stage``."""
    checked = twin(source, name, torch.randn(*shape))
    gen, flat, counts = checked.gen, checked.per_call, checked.counts
    assert CLASS.findall(flat) == ["Stage", "Stage_2", "Net"], flat
    assert CLASS.findall(gen.code) == ["Stage", "Net"], gen.code
    assert counts["calls"] == 2, counts
    return block_class(gen, "Stage")


def test_a_norm_given_a_module_op_at_one_call_and_a_function_at_another() -> None:
    """``Stage(2, layer_norm)`` and ``Stage(3, relu)``: one class taking ``norm=nn.ReLU``,
    building ``layer_norm{k}`` where it applies a ``nn.LayerNorm`` and ``self.norm`` once
    otherwise. It was ``Stage`` and ``Stage_2``."""
    stage = _rolled(STAGE, "norm_param")
    assert (
        "    def __init__(self, in_features, n, norm=nn.ReLU):\n"
        "        super().__init__()\n"
        "        self.n = n\n"
        "        if norm not in (nn.LayerNorm, nn.ReLU):  # the operations the calls give\n"
        "            raise ValueError(\n"
        '                f"Stage is written for norm in (nn.LayerNorm, nn.ReLU), not {norm.__name__}"\n'
        "            )\n"
        "        self.norm_class = norm\n"
        "        if norm is not nn.LayerNorm:\n"
        "            self.norm = norm()\n"
        "        channels = in_features\n"
        "        layer_norm_count = 0\n"
        "        for i in range(n):\n"
        '            setattr(self, f"dense{i + 1}", nn.Linear(channels, 4))\n'
        "            channels = 4\n"
        "            if norm is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                setattr(self, f"layer_norm{layer_norm_count}", norm(channels))\n'
    ) in stage, stage
    assert (
        "        layer_norm_count = 0\n"
        "        for i in range(self.n):\n"
        '            x = getattr(self, f"dense{i + 1}")(x)\n'
        "            if self.norm_class is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                x = getattr(self, f"layer_norm{layer_norm_count}")(x)\n'
        "            else:\n"
        "                x = self.norm(x)\n"
    ) in stage, stage
    model, code, _ = build(STAGE, "norm_param_built")
    assert "self.s = Stage(4, 2, norm=nn.LayerNorm)" in code, code
    assert "self.t = Stage(4, 3)\n" in code, code
    net = model.Net()
    assert isinstance(net.s.layer_norm2, torch.nn.LayerNorm)
    assert isinstance(net.t.norm, torch.nn.ReLU)
    assert not hasattr(net.s, "norm") and not hasattr(net.t, "layer_norm1")


def test_a_norm_given_a_module_op_at_every_call() -> None:
    """Every call gives ``layer_norm``: the class still takes it, its default ``relu``
    building ``self.norm`` (checked by ``roll_check`` at arguments no call gives)."""
    source = STAGE.replace("Stage(3, relu)", "Stage(3, layer_norm)")
    stage = _rolled(source, "norm_param_every")
    assert "    def __init__(self, in_features, n, norm=nn.ReLU):\n" in stage, stage
    assert "            if self.norm_class is nn.LayerNorm:\n" in stage, stage
    model, code, _ = build(source, "norm_param_every_built")
    assert "self.t = Stage(4, 3, norm=nn.LayerNorm)" in code, code
    assert model.Net().t.layer_norm3.normalized_shape == (4,)


def test_a_norm_beside_a_loop_item() -> None:
    """A loop over rows giving each width and activation (``for w, a in cfg``) beside the
    stage's ``norm``: the item built where applied, the norm counted."""
    source = """\
model Stage(cfg, norm = relu):
    def forward(x):
        for w, a in cfg:
            x -> dense(w) -> a -> norm
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage([(8, gelu), (6, tanh)], layer_norm) as s
          -> Stage([(4, tanh), (5, relu), (3, gelu)]) as t
          -> dense(2) as head
"""
    stage = _rolled(source, "norm_param_rows")
    assert "            x = a()(x)\n" in stage, stage
    assert "            if self.norm_class is nn.LayerNorm:\n" in stage, stage
    assert (
        "            if norm is nn.LayerNorm:\n"
        "                layer_norm_count += 1\n"
        '                setattr(self, f"layer_norm{layer_norm_count}", norm(channels))\n'
    ) in stage, stage


def test_a_norm_on_tokens_with_rms_norm() -> None:
    """On tokens (``(16, 8)``) a call giving ``rms_norm``, another ``gelu``: ``nn.RMSNorm``
    built from the width the class threads."""
    source = STAGE.replace("(4,)", "(16, 8)").replace("layer_norm", "rms_norm")
    source = source.replace("Stage(3, relu)", "Stage(3, gelu)")
    stage = _rolled(source, "norm_param_tokens", (2, 16, 8))
    assert "        if norm is not nn.RMSNorm:\n" in stage, stage
    assert 'setattr(self, f"rms_norm{rms_norm_count}", norm(channels))' in stage, stage


def test_a_norm_outside_the_loop_too_counts_on() -> None:
    """``norm`` applied before the loop as well: its modules are numbered over the
    instance, which one counter started at the method's top names (``layer_norm1``
    before the loop, ``layer_norm2``, ``layer_norm3`` in it); it kept a located note."""
    source = STAGE.replace(
        "        for i in range(n):", "        x -> norm\n        for i in range(n):"
    )
    stage = _rolled(source, "norm_outside_too")
    init, forward = stage.split("    def forward")
    for method in (init, forward):
        assert method.count("layer_norm_count = 0") == 1, method
        assert method.count("layer_norm_count += 1") == 2, method


def test_a_norm_in_nested_loops_counts_on() -> None:
    """``norm`` applied in loops nested in each other: one counter started before the
    outer loop numbers its modules in the order they are made, as the IR does; it kept
    a located note."""
    source = """\
model Stage(n, norm = relu):
    def forward(x):
        for i in range(n):
            for j in range(2):
                x -> dense(4) -> norm
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(2, layer_norm) as s -> Stage(3, relu) as t -> dense(2) as head
"""
    stage = _rolled(source, "norm_nested")
    assert (
        "        layer_norm_count = 0\n        for i in range(n):\n            for j in range(2):\n"
    ) in stage, stage


def test_a_norm_whose_module_is_not_built_from_the_width_stays_located() -> None:
    """On images, ``layer_norm`` normalises the last axis (``nn.LayerNorm(5)``), not the
    channels the class threads: the misuse stays located, the calls' classes kept."""
    source = """\
model Stage(n, norm = relu):
    def forward(x):
        for i in range(n):
            x -> conv2d(4, 3, padding=1) -> norm
        return x

model Net:
    input_shape = (3, 5, 5)
    def forward(x):
        x -> Stage(2, layer_norm) as s -> Stage(3, relu) as t
"""
    notes, code = roll_notes(source)
    assert len(notes) == 1 and notes[0].startswith("block 'Stage' at 1:7: "), notes
    assert "class Stage_2(" in code


def test_identity_given_is_built_once_as_relu_is() -> None:
    """``Stage(3, identity)``: its class of one call builds ``self.norm = norm()`` with
    ``nn.Identity``, as for ``relu``; the rolled class does the same."""
    source = STAGE.replace("Stage(3, relu)", "Stage(3, identity)")
    stage = _rolled(source, "norm_param_identity")
    assert "        if norm is not nn.LayerNorm:\n            self.norm = norm()\n" in stage
    model, code, _ = build(source, "norm_param_identity_built")
    assert "self.t = Stage(4, 3, norm=nn.Identity)" in code, code
    assert isinstance(model.Net().t.norm, torch.nn.Identity)
