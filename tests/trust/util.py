"""Programs shared by the issue-13 tests (verify, export, source maps, diff)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, EXAMPLES, VALID


def aurane_here(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    """``aurane ARGS`` in this process, in ``folder`` (no interpreter start, whose torch
    import is most of a command's time): status, stdout, stderr."""
    from aurane.cli.main import main

    monkeypatch.chdir(folder)
    capsys.readouterr()
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


CNN = """\
model Net:
    input_shape = (3, 12, 12)
    def forward(x):
        x -> conv2d(4, kernel=3).relu
          -> global_avg_pool()
          -> dense(2)
"""

MLP = """\
model Net:
    input_shape = (4,)
    def forward(features):
        hidden = dense(features, 8).relu
        logits = dense(hidden, 3)
        return logits
"""


def all_programs() -> list[Path]:
    """Every valid program present: the corpus copy, the shared corpus, examples, the zoo."""
    found = sorted(VALID.glob("*.aur"))
    shared = CORPUS / "valid"
    if shared.is_dir():
        names = {p.name for p in found}
        found += [p for p in sorted(shared.glob("*.aur")) if p.name not in names]
    found += sorted(EXAMPLES.glob("*.aur")) + sorted((EXAMPLES / "zoo").glob("*.aur"))
    return found
