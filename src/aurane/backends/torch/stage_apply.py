"""A container of stages that a network's forward applies whole (``x = self.layer0(x)``,
each ``nn.Sequential`` filled by an inner loop: ``as layer{i}.{j}``), for the forward
written with the source's loops (``network_forward.py``): each variant's forward applies
it one child a statement (``x = self.layer0[0](x)``, ``x = self.layer0[1](x)``), one
statement per layer as the loop writer reads it, and the inner loop it then writes
(``for j in range(2): x = getattr(self, f"layer{i}")[j](x)``) applies the container whole
again (``x = getattr(self, f"layer{i}")(x)``): the inner loop is the one that fills it."""

from __future__ import annotations

import re

from aurane.backends.torch.modules import INDENT
from aurane.ir.graph import Graph

# ``x = self.layer0(x)``, a shape comment after it perhaps
_WHOLE = re.compile(rf"({INDENT * 2})(\w+) = self\.(\w+)\((\w+)\)(  # .*)?")


def children_one_by_one(text: str, graph: Graph) -> str:
    """The class ``text`` with each container of several layers that forward applies whole
    to the tensor it rebinds (``x = self.layer0(x)``) applied one child a statement."""
    children: dict[str, int] = {}
    for node in graph.nodes:
        head, _, index = (node.layer or "").rpartition(".")
        if head.isidentifier() and index.isdigit():
            children[head] = max(children.get(head, 0), int(index) + 1)
    lines = []
    for line in text.split("\n"):
        found = _WHOLE.fullmatch(line)
        count = children.get(found[3], 0) if found else 0
        if found is None or count < 2 or found[2] != found[4]:
            lines.append(line)
            continue
        pad, tensor, attr = found[1], found[2], found[3]
        lines += [f"{pad}{tensor} = self.{attr}[{j}]({tensor})" for j in range(count)]
    return "\n".join(lines)


def whole_stages(lines: list[str]) -> list[str]:
    """``for j in range(2):`` whose one statement applies the loop's child of a stage
    (``x = getattr(self, f"layer{i}")[j](x)``) as the stage applied whole, where forward
    reads the stage nowhere else: each variant applied it whole, so this loop runs its
    children, all of them."""
    text = "\n".join(lines)
    out: list[str] = []
    at = 0
    while at < len(lines):
        head = re.fullmatch(r"( *)for (\w+) in .+:", lines[at])
        child = lines[at + 1] if head is not None and at + 1 < len(lines) else ""
        after = lines[at + 2] if at + 2 < len(lines) else ""
        body = head[1] + INDENT if head is not None else None
        applied = (
            re.fullmatch(rf"{body}(\w+) = (.+)\[{head[2]}\]\((\w+)\)", child)
            if head is not None
            else None
        )
        if (
            head is None
            or applied is None
            or applied[1] != applied[3]
            or after.startswith(f"{body}")
            or re.search(rf"\b{head[2]}\b", applied[2])
            or text.count(f"{applied[2]}[") != 1
        ):
            out.append(lines[at])
            at += 1
            continue
        out.append(f"{head[1]}{applied[1]} = {applied[2]}({applied[1]})")
        at += 2
    return out
