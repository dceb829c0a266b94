"""The generated reference pages stay in sync with the catalogs they come from."""

from __future__ import annotations

import pytest

from aurane.tools.docs import PAGES
from tests.conftest import REPO


@pytest.mark.parametrize("name", sorted(PAGES))
def test_generated_page_is_current(name: str) -> None:
    committed = (REPO / "docs" / name).read_text(encoding="utf-8")
    assert committed == PAGES[name](), f"run: python -m aurane.tools.docs (docs/{name} is stale)"


def test_every_code_is_explained() -> None:
    from aurane.codes import CODES, explain

    for code in CODES:
        text = explain(code)
        assert text and "example:" in text and "fix:" in text


def test_reference_has_every_field_and_catalog_entry() -> None:
    """docs/reference.md: every field, loss, optimizer, scheduler, callback, metric and
    dataset source the checker knows has a row with a description."""
    import re

    from aurane.semantics import config
    from aurane.semantics.data_contracts import known_sources

    page = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        match = re.match(r"\| `([^`]+)` \|(.*)\|$", line)
        if match:
            rows.setdefault(match.group(1), []).append(match.group(2))
    tables = (
        config.EXPERIMENT_FIELDS,
        config.MODEL_FIELDS,
        config.DATASET_FIELDS,
        config.TRAIN_FIELDS,
        config.GAN_FIELDS,
        config.LOSSES,
        config.OPTIMIZERS,
        config.SCHEDULERS,
        config.CALLBACKS,
    )
    names = [spec.name for table in tables for spec in table]
    names += list(config.METRICS) + [source for source, _ in known_sources()]
    for name in names:
        assert name in rows, f"docs/reference.md has no row for {name}"
        # the last cell (what it does) is never empty
        assert all(row.rsplit("|", 1)[-1].strip() for row in rows[name]), name
    assert set(config.METRIC_DOCS) == set(config.METRICS)
    for table in tables[:5]:
        assert all(spec.doc for spec in table), [spec.name for spec in table if not spec.doc]
