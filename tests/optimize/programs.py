"""Sample programs for each rewrite: (name, source, level, expected IR ops at that level).

Each program also ends in a real dropout and contains parametric and buffered layers
(dense, batchnorm), so the equivalence tests see RNG use, parameters and buffers.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    level: int
    ops0: tuple[str, ...]  # IR ops of the model at level 0
    ops: tuple[str, ...]  # IR ops after optimizing at ``level``
    input_shape: tuple[int, ...]
    model: str = "Net"


def _src(body: str, shape: str = "(6,)") -> str:
    return textwrap.dedent(
        f"""\
        model Net:
            input_shape = {shape}
            def forward(x):
        """
    ) + textwrap.indent(textwrap.dedent(body), "        ")


CASES: tuple[Case, ...] = (
    Case(
        "dropout_zero",
        _src(
            """\
            x -> dense(8).relu
              -> dropout(0)
              -> batchnorm()
              -> dropout(p=0.0).gelu
              -> dense(4)
              -> dropout(0.5)
            """
        ),
        1,
        ("dense", "relu", "dropout", "batchnorm", "dropout", "gelu", "dense", "dropout"),
        ("dense", "relu", "batchnorm", "gelu", "dense", "dropout"),
        (6,),
    ),
    Case(
        "repeated_relu",
        _src(
            """\
            x -> dense(8).relu.relu
              -> relu()
              -> batchnorm()
              -> relu().relu
              -> dense(4)
              -> dropout(0.5)
            """
        ),
        1,
        ("dense", "relu", "relu", "relu", "batchnorm", "relu", "relu", "dense", "dropout"),
        ("dense", "relu", "batchnorm", "relu", "dense", "dropout"),
        (6,),
    ),
    Case(
        "identity_reshape",
        _src(
            """\
            x -> conv1d(4, kernel=3, padding=1).relu
              -> reshape(4, 5)
              -> batchnorm()
              -> reshape(4, -1).relu
              -> reshape(20)
              -> dense(3)
              -> dropout(0.5)
            """,
            "(2, 5)",
        ),
        2,
        (
            "conv1d",
            "relu",
            "reshape",
            "batchnorm",
            "reshape",
            "relu",
            "reshape",
            "dense",
            "dropout",
        ),
        ("conv1d", "relu", "batchnorm", "relu", "reshape", "dense", "dropout"),
        (2, 5),
    ),
    Case(
        "rank1_flatten",
        _src(
            """\
            x -> conv1d(3, kernel=3)
              -> flatten()
              -> batchnorm()
              -> flatten().relu
              -> dense(4)
              -> flatten()
              -> dropout(0.5)
            """,
            "(2, 6)",
        ),
        2,
        ("conv1d", "flatten", "batchnorm", "flatten", "relu", "dense", "flatten", "dropout"),
        ("conv1d", "flatten", "batchnorm", "relu", "dense", "dropout"),
        (2, 6),
    ),
    Case(
        "level2_then_level1",
        _src(
            """\
            x -> dense(8).relu
              -> reshape(8)
              -> relu()
              -> dropout(0)
              -> dense(4).relu
              -> flatten()
              -> dropout(0.0)
              -> relu()
              -> dropout(0.25)
            """
        ),
        2,
        (
            "dense",
            "relu",
            "reshape",
            "relu",
            "dropout",
            "dense",
            "relu",
            "flatten",
            "dropout",
            "relu",
            "dropout",
        ),
        ("dense", "relu", "dense", "relu", "dropout"),
        (6,),
    ),
)
