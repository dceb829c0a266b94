"""An ``as`` name equal to a name the IR gives an unnamed layer (issue 24 item 3): in
``dense(8) as basic1 -> Basic(16)`` the IR numbered the block call ``basic1`` too, so two
layers had the path ``basic1`` while the generated module wrote ``basic1_2``: the IR's
layer paths (what ``aurane ir``, ``profile --detailed``, the diagrams and the JSON export
show) disagreed with the state dict. An unnamed layer's number now skips every ``as`` name
of its forward, before or after it, templated loop names (``as basic{i}``) included. Each
program is executed (``run_accepted``) and its IR paths compared with the executed
module's ``named_parameters()``."""

from __future__ import annotations

import pytest

from aurane.ir.printer import graph_to_text
from aurane.verify import Generated

torch = pytest.importorskip("torch")

from tests.backends.torch.one_class import (  # noqa: E402
    block_class,
    generated,
    ir_paths,
    module_paths,
)

BASIC = """
model Basic(w):
    def forward(x):
        x -> dense(w).relu
"""


def _agree(gen: Generated) -> set[str]:
    paths = ir_paths(gen.graphs["Net"])
    assert paths == module_paths(gen.module.Net()), gen.code
    assert "_2 = " not in block_class(gen, "Net"), gen.code  # no attribute renamed apart
    return paths


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        # the as name first: the block call is basic2
        ("x -> dense(8) as basic1 -> Basic(16)", {"basic1", "basic2.dense1"}),
        # the block call first: it skips the as name given after it
        ("x -> Basic(16) -> dense(8) as basic1", {"basic2.dense1", "basic1"}),
        # names a loop fills in (as basic{i}): basic1 and basic2 are taken
        (
            "for i in range(1, 3):\n            x -> dense(8) as basic{i}\n"
            "        x -> Basic(16) -> Basic(8)",
            {"basic1", "basic2", "basic3.dense1", "basic4.dense1"},
        ),
        # a container's name (as basic1.0) takes its first part
        ("x -> dense(8) as basic1.0 -> Basic(16)", {"basic1.0", "basic2.dense1"}),
    ],
    ids=["as-first", "as-after", "loop-template", "container"],
)
def test_an_unnamed_layer_skips_the_forwards_as_names(body: str, paths: set[str]) -> None:
    gen = generated(
        BASIC
        + f"""
model Net:
    input_shape = (8,)
    def forward(x):
        {body}
        return x
""",
        "as_names.aur",
    )
    assert _agree(gen) == paths
    # aurane ir shows each block call by the name the module has (basic2, not basic1)
    shown = graph_to_text(gen.graphs["Net"])
    for path in (p for p in paths if p.endswith(".dense1")):
        assert f"  {path.split('.')[0]}: (batch" in shown, shown


def test_an_as_name_inside_a_block_is_skipped_there() -> None:
    """A block's own forward: ``stage1.basic2``, not ``stage1.basic1`` twice."""
    gen = generated(
        BASIC
        + """
model Stage(w):
    def forward(x):
        x -> dense(w) as basic1 -> Basic(w)

model Net:
    input_shape = (8,)
    def forward(x):
        x -> Stage(8) -> Stage(4)
        return x
""",
        "as_names.aur",
    )
    assert _agree(gen) == {
        "stage1.basic1",
        "stage1.basic2.dense1",
        "stage2.basic1",
        "stage2.basic2.dense1",
    }
    assert "self.basic2 = Basic(w, w)" in block_class(gen, "Stage"), gen.code
