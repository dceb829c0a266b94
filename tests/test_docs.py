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
