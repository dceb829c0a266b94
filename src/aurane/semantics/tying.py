"""The form of ``tie=`` (weight tying) on a call; lowering resolves the layer it names
(``aurane.ir.tying``). ``tie=`` is no argument of the operation: the catalog never sees it."""

from __future__ import annotations

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.syntax import ast

TIE = "tie"
# the operations whose weight tie= can share (ir/tying.py knows each one's weight shape)
TIED_OPS = frozenset(
    {
        "dense",
        "embedding",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    }
)


def split_tie(
    keywords: tuple[ast.Keyword, ...],
) -> tuple[tuple[ast.Keyword, ...], ast.Keyword | None]:
    """The keywords without ``tie=``, and the ``tie=`` keyword (the last one, if repeated)."""
    tie = next((k for k in reversed(keywords) if k.name == TIE), None)
    if tie is None:
        return keywords, None
    return tuple(k for k in keywords if k.name != TIE), tie


def check_tie(op: str, keywords: tuple[ast.Keyword, ...]) -> list[Diagnostic]:
    """The form of ``tie=`` on a call of ``op``: once, on dense, naming a layer path."""
    ties = [k for k in keywords if k.name == TIE]
    out: list[Diagnostic] = []
    if len(ties) > 1:
        out.append(
            diag(
                "S008",
                f"argument 'tie' of {op} is given twice",
                ties[1].name_span,
                labels=(Label(ties[0].name_span, "first given here"),),
            )
        )
    if not ties:
        return out
    tie = ties[-1]
    if op not in TIED_OPS:
        out.append(
            diag(
                "S047",
                f"'{op}' cannot tie its weight: tie= is for dense, embedding and convolution "
                "layers",
                tie.name_span,
                hint="put tie= on a layer with a weight, e.g. the dense layer that shares the "
                "embedding's table",
            )
        )
    elif not isinstance(tie.value, ast.Name):
        out.append(
            diag(
                "S047",
                "tie= takes the name of a layer, e.g. tie=transformer.wte",
                tie.value.span,
                hint="name the embedding with 'as wte' and write tie=wte",
            )
        )
    return out
