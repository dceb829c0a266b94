"""A rolled class built with an operation no call gives, where forward builds the
operation's module as it applies it (``x = a()(x)``) or ``__init__`` builds it without its
width (``self.norm = norm()``), refuses it by name in ``__init__``. Before, a list's item
class no call gave built nothing in ``__init__``: ``nn.BatchNorm1d`` failed in forward
with a ``TypeError``, and a fresh ``nn.Dropout`` per forward dropped in ``eval``
(silently wrong); a ``norm`` parameter given another sized norm class failed with a
``TypeError`` from ``norm()``. The calls' own operations, in any list, still build."""

from __future__ import annotations

from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import CLASS, block_class, twin  # noqa: E402
from tests.backends.torch.test_rolled_items_across_loops import TWO_LOOPS  # noqa: E402

ACTIVATIONS = """\
model Fam(cfg):
    def forward(x):
        for c, a in cfg:
            x -> dense(c) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(8, relu), (3, gelu)]) as f1 -> Fam([(5, relu)]) as f2 -> dense(2) as head
"""

NORM_AROUND_A_LOOP = """\
model Stage(n, norm = relu):
    def forward(x):
        x -> dense(4) -> norm
        for i in range(n):
            x -> dense(4) -> norm
        x -> dense(4) -> norm
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Stage(2, layer_norm) as s1 -> Stage(3) as s2 -> dense(2) as head
"""

STATEFUL = (nn.BatchNorm1d, nn.RMSNorm, nn.GroupNorm, nn.Dropout)


def test_an_item_of_two_loops_no_call_gives_is_refused_by_name() -> None:
    """``for c, a in rows0: x -> dense(c) -> a`` then the same over ``rows1``: each loop
    refuses an item none of the calls' items give, the stateless activations any call
    gives (``nn.SiLU`` of ``rows1``, also in ``rows0``) and the modules this loop
    counts (``nn.LayerNorm``) aside."""
    checked = twin(TWO_LOOPS, "two_loops_refused", torch.randn(3, 4))
    assert CLASS.findall(checked.gen.code) == ["Fam", "Net"], checked.gen.code
    fam = block_class(checked.gen, "Fam")
    init = fam.split("    def forward")[0]
    assert init.count("            if a not in (") == 2, init
    module = checked.gen.module
    for refused in STATEFUL:
        said = rf"Fam is written for a in \(nn\.\w+(, nn\.\w+)*\), not {refused.__name__}$"
        with pytest.raises(ValueError, match=said):
            module.Fam(4, ((8, refused),), ((3, nn.SiLU),))
        with pytest.raises(ValueError, match=said):
            module.Fam(4, ((8, nn.ReLU),), ((3, nn.SiLU), (4, refused)))
    built = module.Fam(4, ((8, nn.SiLU), (3, nn.LayerNorm)), ((2, nn.Identity),)).eval()
    x = torch.randn(3, 4)
    assert built(x).shape == (3, 2)
    assert check_source(TWO_LOOPS, Counter()) == []


def test_an_activation_list_refuses_a_module_with_a_mode() -> None:
    """Items all stateless activations: ``__init__`` builds nothing for them, forward
    ``x = a()(x)``. ``nn.Dropout`` built there each forward dropped in ``eval``."""
    checked = twin(ACTIVATIONS, "activations_refused", torch.randn(3, 4))
    init = block_class(checked.gen, "Fam").split("    def forward")[0]
    assert (
        "            if a not in (nn.ReLU, nn.GELU):  # the operations the calls' items give\n"
        '                raise ValueError(f"Fam is written for a in (nn.ReLU, nn.GELU), not {a.__name__}")\n'
    ) in init, init
    module = checked.gen.module
    with pytest.raises(
        ValueError, match=r"Fam is written for a in \(nn\.ReLU, nn\.GELU\), not Dropout$"
    ):
        module.Fam(4, ((8, nn.Dropout),))
    assert module.Fam(4, ((8, nn.GELU), (3, nn.GELU))).eval()(torch.randn(2, 4)).shape == (2, 3)


def test_a_norm_parameter_given_another_sized_class_is_refused_by_name() -> None:
    """``norm`` applied before, in and after a loop, the calls giving ``layer_norm``
    (built with the width where applied) and ``relu`` (``self.norm = norm()``):
    another sized norm class failed in ``norm()`` with a ``TypeError``."""
    checked = twin(NORM_AROUND_A_LOOP, "norm_refused", torch.randn(3, 4))
    init = block_class(checked.gen, "Stage").split("    def forward")[0]
    assert (
        "        if norm not in (nn.LayerNorm, nn.ReLU):  # the operations the calls give\n" in init
    )
    module = checked.gen.module
    for refused in (nn.RMSNorm, nn.BatchNorm1d, nn.GroupNorm):
        said = rf"Stage is written for norm in \(nn\.LayerNorm, nn\.ReLU\), not {refused.__name__}$"
        with pytest.raises(ValueError, match=said):
            module.Stage(4, 2, refused)
    assert len(list(module.Stage(4, 1, nn.LayerNorm).children())) == 6


ITEM_TWICE = """\
model Fam(cfg):
    def forward(x):
        for c, a in cfg:
            x -> dense(c) -> a -> dense(c) -> a
        return x

model Net:
    input_shape = (4,)
    def forward(x):
        x -> Fam([(8, relu), (3, gelu)]) as f1 -> Fam([(5, relu)]) as f2 -> dense(2) as head
"""


def test_an_item_applied_at_two_steps_is_refused_once_first_in_its_loop() -> None:
    """``x -> dense(c) -> a -> dense(c) -> a``: the refusal of ``a`` was written after
    each ``dense`` it follows; once, before the iteration builds anything, says it."""
    checked = twin(ITEM_TWICE, "item_twice", torch.randn(3, 4))
    assert CLASS.findall(checked.gen.code) == ["Fam", "Net"], checked.gen.code
    init = block_class(checked.gen, "Fam").split("    def forward")[0]
    assert (
        "        for i, (c, a) in enumerate(cfg):\n"
        "            if a not in (nn.ReLU, nn.GELU):  # the operations the calls' items give\n"
        '                raise ValueError(f"Fam is written for a in (nn.ReLU, nn.GELU), not {a.__name__}")\n'
        '            setattr(self, f"dense{2 * i + 1}", nn.Linear(channels, c))\n'
    ) in init, init
    assert init.count("if a not in") == 1, init
    with pytest.raises(ValueError, match=r"Fam is written for a in \(nn\.ReLU, nn\.GELU\)"):
        checked.gen.module.Fam(4, ((8, nn.ReLU), (3, nn.Dropout)))
    assert check_source(ITEM_TWICE, Counter()) == []
