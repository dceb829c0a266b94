"""The project's URLs have one home, pyproject.toml's [project.urls], read back from the
installed metadata (``aurane.project``); no module spells one itself (issue 28)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aurane.cli.main import main
from aurane.project import project_url, project_urls
from aurane.tools.init import create_project
from tests.conftest import REPO


def _declared() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    urls: dict[str, str] = data["project"]["urls"]
    return urls


def test_the_urls_are_those_pyproject_declares() -> None:
    found = project_urls()
    if not found:
        pytest.skip("aurane is not installed here (no metadata): pip install -e .")
    assert found == _declared()
    assert project_url("Issues") == _declared()["Issues"] and project_url("Nowhere") is None


def test_no_module_spells_a_project_url() -> None:
    pattern = re.compile(r"https?://(www\.)?github\.com/aurane")
    spelled = [
        str(path.relative_to(REPO))
        for path in (REPO / "src" / "aurane").rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert spelled == []


def test_init_links_the_homepage(tmp_path: Path) -> None:
    create_project(tmp_path / "demo")
    readme = (tmp_path / "demo" / "README.md").read_text(encoding="utf-8")
    homepage = project_url("Homepage")
    expected = f"A starter [Aurane]({homepage}) project" if homepage else "A starter Aurane project"
    assert expected in readme


def test_an_internal_error_names_where_to_report_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import aurane.cli.check

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(aurane.cli.check, "run_front_end", boom)
    assert main(["check", str(REPO / "examples" / "quickstart.aur")]) == 123
    err = capsys.readouterr().err
    issues = project_url("Issues")
    assert "internal error" in err and "boom" in err
    assert (f"the source file at {issues}\n" if issues else "the source file\n") in err
