"""Golden parses: the AST dump (spans included) and parse diagnostics of every corpus file,
example and diagnostics-golden program, recorded in tests/golden/parse/<name>.json.

They pin the parser's exact output, so a rewrite for speed is provably behaviour-preserving.
Set AURANE_UPDATE_GOLDEN=1 to rewrite the expected files after an intended change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aurane.syntax.parser import parse_program
from aurane.syntax.printer import dump_ast
from tests.conftest import UPDATE_GOLDEN

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / ".." / "shared" / "corpus"
GOLDEN = ROOT / "tests" / "golden" / "parse"


def _sources() -> list[tuple[str, Path]]:
    found = [(f"{p.parent.name}_{p.stem}", p) for p in sorted(CORPUS.glob("*/*.aur"))]
    found += [(f"examples_{p.stem}", p) for p in sorted((ROOT / "examples").glob("*.aur"))]
    diagnostics = ROOT / "tests" / "golden" / "diagnostics"
    found += [(f"diagnostics_{p.stem}", p) for p in sorted(diagnostics.glob("*.aur"))]
    return found


def _parse_dump(path: Path) -> str:
    program, diagnostics = parse_program(path.read_text(), path.name)
    dumped = {
        "ast": dump_ast(program) if program is not None else None,
        "diagnostics": [d.to_json() for d in diagnostics],
    }
    return json.dumps(dumped, indent=1, ensure_ascii=False) + "\n"


SOURCES = _sources()


def test_sources_found() -> None:
    assert len(SOURCES) >= 20


@pytest.mark.parametrize(("name", "path"), SOURCES, ids=[name for name, _ in SOURCES])
def test_parse_matches_golden(name: str, path: Path) -> None:
    dumped = _parse_dump(path)
    expected = GOLDEN / f"{name}.json"
    if UPDATE_GOLDEN or not expected.exists():
        GOLDEN.mkdir(parents=True, exist_ok=True)
        expected.write_text(dumped)
    assert dumped == expected.read_text()
