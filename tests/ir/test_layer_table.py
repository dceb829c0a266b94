"""The table of nameable operations lives in ``aurane.ops.modules``; the torch backend
implements it exactly, and no front-end package imports a backend."""

from __future__ import annotations

import ast
from pathlib import Path

from aurane.backends.torch.emit import EMITTERS
from aurane.backends.torch.named import FUNCTION_MODULES, chainable, nameable
from aurane.ops import modules

SRC = Path(__file__).resolve().parents[2] / "src" / "aurane"


def test_backend_implements_the_table_exactly() -> None:
    held = {op for op, rule in EMITTERS.items() if rule.init is not None}
    assert held == modules.MODULE_OPS, "update aurane/ops/modules.py MODULE_OPS"
    assert set(FUNCTION_MODULES) == modules.FUNCTION_MODULE_OPS, (
        "update aurane/ops/modules.py FUNCTION_MODULE_OPS"
    )
    for op in EMITTERS:
        assert nameable(op) == modules.nameable(op)
        assert chainable(op) == modules.chainable(op)


def test_front_end_never_imports_a_backend() -> None:
    for package in ("ir", "ops", "semantics", "syntax"):
        for path in (SRC / package).glob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                for name in names:
                    assert not name.startswith("aurane.backends"), f"{path.name} imports {name}"
