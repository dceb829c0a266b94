"""The VS Code extension's TextMate grammar passes its scope assertions (``npm test``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"


def test_manifest_declares_the_language() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    (language,) = manifest["contributes"]["languages"]
    assert language["id"] == "aurane" and language["extensions"] == [".aur"]
    (grammar,) = manifest["contributes"]["grammars"]
    assert (EXTENSION / grammar["path"]).is_file()
    json.loads((EXTENSION / grammar["path"]).read_text())  # valid JSON
    json.loads((EXTENSION / "language-configuration.json").read_text())
    assert (EXTENSION / "package-lock.json").is_file()


@pytest.mark.skipif(
    not (EXTENSION / "node_modules").is_dir() or shutil.which("npm") is None,
    reason="editors/vscode/node_modules is absent (run `npm ci` there to test the grammar)",
)
def test_grammar_scopes() -> None:
    done = subprocess.run(
        ["npm", "test", "--silent"],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
