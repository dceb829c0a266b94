"""Import lines of a generated file: deduplicated and grouped in ruff/isort order.

Read by the generator (``program.py``) and by ``--standalone`` (``runtime.py``), which joins
the runtime's imports to the program's.
"""

from __future__ import annotations

import ast as pyast
import sys


def sort_imports(lines: list[str]) -> list[str]:
    """Deduplicated import blocks in ruff/isort order: stdlib, third party, aurane."""
    plain: set[tuple[str, str | None]] = set()
    froms: dict[str, set[tuple[str, str | None]]] = {}
    for line in lines:
        for stmt in pyast.parse(line).body:
            if isinstance(stmt, pyast.Import):
                plain.update((a.name, a.asname) for a in stmt.names)
            elif isinstance(stmt, pyast.ImportFrom) and stmt.module and not stmt.level:
                froms.setdefault(stmt.module, set()).update((a.name, a.asname) for a in stmt.names)
            else:
                raise ValueError(f"not an absolute import line: {line!r}")
    sections: dict[int, list[str]] = {}
    for module, alias in sorted(plain, key=lambda m: (m[0].lower(), m[0], m[1] or "")):
        text = f"import {module}" + (f" as {alias}" if alias else "")
        sections.setdefault(_section(module), []).append(text)
    for module in sorted(froms, key=lambda m: (m.lower(), m)):
        names = sorted(froms[module], key=_member_order)
        items = [n + (f" as {a}" if a else "") for n, a in names]
        sections.setdefault(_section(module), []).append(_from_line(module, items))
    return ["\n".join(sections[s]) for s in sorted(sections)]


def _section(module: str) -> int:
    top = module.split(".")[0]
    if top == "__future__":
        return 0
    if top in sys.stdlib_module_names:
        return 1
    return 3 if top == "aurane" else 2


def _member_order(item: tuple[str, str | None]) -> tuple[int, str, str]:
    name = item[0]
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name, item[1] or "")


def _from_line(module: str, items: list[str]) -> str:
    line = f"from {module} import {', '.join(items)}"
    if len(line) <= 100:
        return line
    return f"from {module} import (\n" + "".join(f"    {i},\n" for i in items) + ")"
