"""Reference pages generated from the catalogs: docs/errors.md, docs/catalog.md and
docs/reference.md (the fields, losses, optimizers, schedulers, metrics and callbacks).

    python -m aurane.tools.docs        # rewrite every page
A test keeps the committed pages equal to this output.
"""

from __future__ import annotations

from pathlib import Path

from aurane import ops
from aurane.codes import CODES
from aurane.ops.spec import REQUIRED, Param
from aurane.semantics import config
from aurane.semantics.data_contracts import known_sources


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


def _fields_table(specs: tuple[config.FieldSpec, ...]) -> list[str]:
    lines = ["| field | aliases | value | what it does |", "| --- | --- | --- | --- |"]
    for spec in specs:
        kind = spec.kind.value
        if spec.choices:
            kind = "one of " + ", ".join(f'`"{c}"`' for c in spec.choices)
        aliases = ", ".join(f"`{a}`" for a in spec.aliases)
        lines.append(f"| `{spec.name}` | {aliases} | {kind} | {spec.doc} |")
    return lines


def _arguments(params: tuple[Param, ...]) -> str:
    return ", ".join(f"`{p.name}`={_default(p.default)}" for p in params) or "none"


def _options_table(specs: tuple[config.OptionSpec, ...]) -> list[str]:
    lines = [
        "| name | aliases | torch | arguments (defaults) | what it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for spec in specs:
        aliases = ", ".join(f"`{a}`" for a in spec.aliases)
        torch_name = f"`{spec.torch_name}`" if spec.torch_name else ""
        lines.append(
            f"| `{spec.name}` | {aliases} | {torch_name} | {_arguments(spec.params)} | {spec.doc} |"
        )
    return lines


def reference_markdown() -> str:
    """Every field of experiment, model, dataset, train and train_gan blocks and every catalog
    entry those fields name, from the tables `aurane check` reads."""
    sections: list[tuple[str, str, list[str]]] = [
        ("Experiment fields", "`experiment NAME:`", _fields_table(config.EXPERIMENT_FIELDS)),
        ("Model fields", "`model NAME:` (besides its layers)", _fields_table(config.MODEL_FIELDS)),
        (
            "Dataset fields",
            "`dataset NAME:`; its other fields are the source's constructor arguments",
            _fields_table(config.DATASET_FIELDS),
        ),
        ("Train fields", "`train NAME:`", _fields_table(config.TRAIN_FIELDS)),
        ("GAN fields", "`train_gan NAME:`", _fields_table(config.GAN_FIELDS)),
        ("Losses", "`loss = NAME` or `loss = NAME(ARG=VALUE)`", _options_table(config.LOSSES)),
        ("Optimizers", "`optimizer = NAME(ARG=VALUE)`", _options_table(config.OPTIMIZERS)),
        ("Schedulers", "`scheduler = NAME(ARG=VALUE)`", _options_table(config.SCHEDULERS)),
        ("Callbacks", "`callbacks = [NAME(ARG=VALUE)]`", _options_table(config.CALLBACKS)),
        (
            "Metrics",
            "`metrics = [NAME, ...]`; also `topK_accuracy` for any K >= 1",
            ["| name | aliases | what it measures |", "| --- | --- | --- |"]
            + [
                f"| `{name}` | "
                + ", ".join(f"`{a}`" for a, n in config.METRIC_ALIASES.items() if n == name)
                + f" | {config.METRIC_DOCS[name]} |"
                for name in config.METRICS
            ],
        ),
        (
            "Dataset sources",
            "`from NAME` in a dataset block",
            ["| source | what it yields |", "| --- | --- |"]
            + [f"| `{name}` | {doc} |" for name, doc in known_sources()],
        ),
    ]
    lines = [
        "# Training reference",
        "",
        "Generated from `src/aurane/semantics/config.py` and",
        "`src/aurane/semantics/data_contracts.py` (the tables `aurane check` reads) by",
        "`python -m aurane.tools.docs`. docs/training.md says how the loop uses them.",
    ]
    for title, where, table in sections:
        lines += ["", f"## {title}", "", f"In {where}.", "", *table]
    return "\n".join(lines) + "\n"


PAGES = {
    "errors.md": errors_markdown,
    "catalog.md": catalog_markdown,
    "reference.md": reference_markdown,
}


def main() -> None:
    docs = Path(__file__).resolve().parents[3] / "docs"
    for name, render in PAGES.items():
        (docs / name).write_text(render(), encoding="utf-8")
        print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()
