"""A module of a container of stages that a nested loop fills (``as stages.{i}.{j}``,
``rolled._stages_head``), read in a forward written with the source's loops:
``self.stages[1][0]`` of one iteration as ``self.stages[i][j]``; and a child of a stage
its outer loop names (``as downs{i}.{j}``), ``getattr(self, f"downs{i}")[j]``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aurane.backends.torch.rolled import (
    Translator,
    Unsupported,
    _path_text,
    _stages_head,
    evaluate,
)
from aurane.syntax import ast


def stage_indexed(
    lines: list[str], layer: str, call: ast.Call, tr: Translator, env: Mapping[str, Any]
) -> list[str] | None:
    """``lines`` reading the iteration's module by the loops' indices; None where the
    call's layer is no ``NAME.{}.{}``."""
    head = _stages_head(call.layer)
    if head is None or len(call.layer_holes) != 2:
        return None
    holes = [tr.text(hole) for hole in call.layer_holes]
    indices = [str(evaluate(hole, env)) for hole in holes]
    if ".".join([head, *indices]) != layer:
        raise Unsupported(f"the layer '{layer}' is not numbered by its loops")
    outer, inner = indices
    pattern = re.compile(rf"\bself\.{head}\[{outer}\]\[{inner}\](?![\w.\[])")
    return [pattern.sub(f"self.{head}[{holes[0]}][{holes[1]}]", line) for line in lines]


def named_stage_indexed(
    lines: list[str], layer: str, call: ast.Call, tr: Translator, env: Mapping[str, Any]
) -> list[str] | None:
    """``lines`` reading a child of a stage its outer loop names (``as downs{i}.{j}``,
    ``layer{i + 1}.{j}``: ``setattr(self, f"downs{i}", stage)`` in ``__init__``) by the
    loops' indices, ``self.downs0[1]`` of one iteration as ``getattr(self,
    f"downs{i}")[j]``; None where the call's layer is no ``NAME{}.{}``."""
    head, _, key = (call.layer or "").partition(".")
    holes = call.layer_holes
    if key != "{}" or "{}" not in head or not head.split("{}")[0].isidentifier():
        return None
    if len(holes) != head.count("{}") + 1:
        return None
    path = _path_text(head, holes[:-1], tr)[0]
    index = tr.text(holes[-1])
    stage = evaluate(f'f"{path}"', env)
    at = evaluate(index, env)
    if f"{stage}.{at}" != layer:
        raise Unsupported(f"the layer '{layer}' is not numbered by its loops")
    pattern = re.compile(rf"\bself\.{re.escape(stage)}\[{at}\](?![\w.\[])")
    return [pattern.sub(f'getattr(self, f"{path}")[{index}]', line) for line in lines]
