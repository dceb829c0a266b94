"""Operation families are attributes of the catalog entries (``OpSpec.family``), and every
stage that treats a family alike reads its members from there (issue 28)."""

from __future__ import annotations

import pytest

from aurane import ops
from aurane.analysis.diagrams.common import family as colour_family
from aurane.analysis.memory import LOW_PRECISION_OPS
from aurane.backends.torch.emit import EMITTERS
from aurane.ops.modules import MODULE_OPS
from aurane.ops.rules import CONVOLUTION, PARAMETRIC
from aurane.ops.spec import OpSpec
from aurane.semantics.inits import INIT_OPS, parameter_names
from aurane.tools import differential, lint_rules


def test_the_convolutions_are_the_weighted_spatial_layers() -> None:
    members = ops.family(CONVOLUTION)
    assert len(members) == 6 and members == tuple(sorted(members, key=list(ops.CATALOG).index))
    for name in members:
        spec = ops.CATALOG[name]
        assert PARAMETRIC in spec.kinds
        assert {p.name for p in spec.params} >= {"channels", "kernel", "stride", "bias"}
        assert EMITTERS[name].init is not None  # an nn.Conv*d / nn.ConvTranspose*d layer
    others = [n for n, s in ops.CATALOG.items() if s.family != CONVOLUTION]
    assert "dense" in others and "conv2d" not in others


def test_every_reader_of_the_family_sees_all_of_it() -> None:
    members = set(ops.family(CONVOLUTION))
    assert members <= MODULE_OPS  # a layer name can hold each
    assert members <= lint_rules._BIASED  # bias before batchnorm is flagged for each
    assert members <= LOW_PRECISION_OPS  # each computes in the autocast dtype
    assert {colour_family(n) for n in members} == {"conv"}  # one diagram colour
    assert colour_family("concat") != "conv"  # a name, not a prefix, decides
    one_axis_short = next(d for d in differential.DELIBERATE if "pixel_shuffle" in d.ops)
    assert members <= set(one_axis_short.ops)
    assert members <= INIT_OPS  # init= sets each one's weight
    assert all(parameter_names(n, {"bias": True}) == ("weight", "bias") for n in members)


def test_a_new_entry_joins_its_family_by_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    conv2d = ops.CATALOG["conv2d"]
    extra = OpSpec(
        name="conv_extra",
        params=conv2d.params,
        infer=conv2d.infer,
        doc="a further convolution",
        samples=(),
        family=CONVOLUTION,
    )
    monkeypatch.setitem(ops.CATALOG, "conv_extra", extra)
    assert ops.family(CONVOLUTION)[-1] == "conv_extra"
    assert ops.family("no such family") == ()
