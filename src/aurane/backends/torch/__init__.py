"""The PyTorch backend: readable ``nn.Module`` source from the IR (SPEC §4, DESIGN principle 6).

``TorchCodeGenerator(program, graphs).generate()`` returns a whole Python file;
``class_names`` maps each model to its generated class. The generator never imports
torch: it only formats text from the IR and the operation catalog.
"""

from __future__ import annotations

from aurane.backends.torch.jobs import JobCode
from aurane.backends.torch.program import TorchCodeGenerator
from aurane.ir.graph import Graph
from aurane.syntax import ast


def generate_torch(
    program: ast.AuraneProgram, graphs: dict[str, Graph], *, filename: str | None = None
) -> str:
    """The generated Python file for a resolved program and its lowered graphs."""
    return TorchCodeGenerator(program, graphs, filename=filename).generate()


__all__ = ["JobCode", "TorchCodeGenerator", "generate_torch"]
