"""Golden parses: the AST dump (spans included) and parse diagnostics of every corpus file,
example and diagnostics-golden program, recorded in tests/golden/parse/<name>.json.

They pin the parser's exact output, so a rewrite for speed is provably behaviour-preserving.
Each file records the SHA-256 of its source: an edited example or corpus file fails with a
message saying so (not with an AST diff). Set AURANE_UPDATE_GOLDEN=1 to rewrite the expected
files after an intended change to the source or to the parser.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from aurane.syntax.parser import parse_program
from aurane.syntax.printer import dump_ast
from tests.conftest import CORPUS, UPDATE_GOLDEN, corpus_paths

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "parse"


def _sources() -> list[tuple[str, Path]]:
    found = [(f"{p.parent.name}_{p.stem}", p) for p in corpus_paths()]
    found += [(f"examples_{p.stem}", p) for p in sorted((ROOT / "examples").glob("*.aur"))]
    diagnostics = ROOT / "tests" / "golden" / "diagnostics"
    found += [(f"diagnostics_{p.stem}", p) for p in sorted(diagnostics.glob("*.aur"))]
    return found


def _parse_dump(path: Path) -> str:
    text = path.read_text()
    program, diagnostics = parse_program(text, path.name)
    dumped = {
        "source_sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        "ast": dump_ast(program) if program is not None else None,
        "diagnostics": [d.to_json() for d in diagnostics],
    }
    return json.dumps(dumped, indent=1, ensure_ascii=False) + "\n"


SOURCES = _sources()


def test_sources_found() -> None:
    # every recorded golden still has its source (the invalid corpus only beside ../shared)
    found = {name for name, _ in SOURCES}
    missing = {p.stem for p in GOLDEN.glob("*.json")} - found
    if not CORPUS.is_dir():
        missing = {name for name in missing if not name.startswith("invalid_")}
    assert not missing, f"goldens without a source: {sorted(missing)}"
    assert len(SOURCES) >= 16


@pytest.mark.parametrize(("name", "path"), SOURCES, ids=[name for name, _ in SOURCES])
def test_parse_matches_golden(name: str, path: Path) -> None:
    dumped = _parse_dump(path)
    expected = GOLDEN / f"{name}.json"
    if UPDATE_GOLDEN or not expected.exists():
        GOLDEN.mkdir(parents=True, exist_ok=True)
        expected.write_text(dumped)
    recorded = expected.read_text()
    source_hash = json.loads(dumped)["source_sha256"]
    assert json.loads(recorded).get("source_sha256") == source_hash, (
        f"{path} changed since {expected.name} was recorded; check the parse and rerun "
        "with AURANE_UPDATE_GOLDEN=1"
    )
    assert dumped == recorded
