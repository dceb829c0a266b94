"""Shared by the one-class-per-block tests: compile and run a program against its IR,
cut out one generated class, compare a generated module with a hand-written twin, and
the IR's layer paths with the module's parameter names."""

from __future__ import annotations

import re
import textwrap

import torch
from torch import nn

from aurane.ir.graph import Graph
from aurane.ir.inits import layer_path
from aurane.tools.differential import run_accepted
from aurane.verify import Generated, load_generated

CLASS = re.compile(r"^class (\w+)\(nn\.Module\):", re.MULTILINE)


def generated(source: str, filename: str) -> Generated:
    """The program's generated module, run once with every shape and count checked."""
    gen = load_generated(textwrap.dedent(source), filename)
    assert run_accepted(gen, "Net", 0) is None, gen.code  # every shape and count as the IR
    return gen


def block_class(gen: Generated, name: str) -> str:
    start = gen.code.index(f"class {name}(nn.Module):")
    end = gen.code.find("\nclass ", start + 1)
    return gen.code[start:end]


def same(net: nn.Module, twin: nn.Module, *inputs: torch.Tensor) -> None:
    """The twin strict-loads the generated module's state dict and computes the same."""
    assert list(net.state_dict()) == list(twin.state_dict())
    twin.load_state_dict(net.state_dict(), strict=True)
    net.eval()
    twin.eval()
    with torch.no_grad():
        torch.testing.assert_close(net(*inputs), twin(*inputs), rtol=0, atol=0)


def ir_paths(graph: Graph, prefix: str = "") -> set[str]:
    """The IR's path of every layer holding parameters (a repeat's copies numbered)."""
    out = set()
    for node in graph.nodes:
        path = prefix + layer_path(node)
        if node.subgraph is None:
            out |= {path} if node.parameters else set()
            continue
        copies = [f"{path}.{i}." for i in range(node.repeat)] if node.op == "repeat" else []
        for inner in copies or [f"{path}."]:
            out |= ir_paths(node.subgraph, inner)
    return out


def module_paths(model: nn.Module) -> set[str]:
    """The generated module's parameter names without the parameter (``a.block1.dense1``)."""
    return {name.rsplit(".", 1)[0] for name, _ in model.named_parameters()}
