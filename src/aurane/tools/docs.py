"""Reference pages generated from the catalogs: docs/errors.md and docs/catalog.md.

    python -m aurane.tools.docs        # rewrite both pages
A test keeps the committed pages equal to this output.
"""

from __future__ import annotations

from pathlib import Path

from aurane import ops
from aurane.codes import CODES
from aurane.ops.spec import REQUIRED


def errors_markdown() -> str:
    lines = [
        "# Diagnostic codes",
        "",
        "Generated from `src/aurane/codes.py` by `python -m aurane.tools.docs`; "
        "`aurane explain CODE` prints the same text.",
        "",
        "| code | stage | severity | name | summary |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {c.code} | {c.stage} | {c.severity} | `{c.slug}` | {c.summary} |"
        for c in CODES.values()
    ]
    for code in CODES.values():
        example = "\n".join(code.example.splitlines())
        lines += [
            "",
            f"## {code.code} `{code.slug}`",
            "",
            code.explanation.replace("\n", " "),
            "",
            "```aur",
            example,
            "```",
            "",
            f"Fix: {code.fix}",
        ]
    return "\n".join(lines) + "\n"


def _default(value: object) -> str:
    if value is REQUIRED:
        return "required"
    return repr(value)


def catalog_markdown() -> str:
    lines = [
        "# Operation catalog",
        "",
        "Generated from `src/aurane/ops` by `python -m aurane.tools.docs`. Shapes exclude the",
        "batch axis. Every stage (checks, shapes, code generation, profile, diagrams) reads this",
        "one table.",
        "",
        "| operation | aliases | arguments (defaults) | what it does |",
        "| --- | --- | --- | --- |",
    ]
    for name, spec in ops.CATALOG.items():
        params = ", ".join(f"`{p.name}`={_default(p.default)}" for p in spec.params) or "none"
        aliases = ", ".join(spec.aliases) or ""
        lines.append(f"| `{name}` | {aliases} | {params} | {spec.doc} |")
    return "\n".join(lines) + "\n"


PAGES = {"errors.md": errors_markdown, "catalog.md": catalog_markdown}


def main() -> None:
    docs = Path(__file__).resolve().parents[3] / "docs"
    for name, render in PAGES.items():
        (docs / name).write_text(render(), encoding="utf-8")
        print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()
