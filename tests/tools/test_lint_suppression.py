"""Issue 24 item 5: lint silenced per line (``# aurane: ignore[L201]``, bare ``# aurane:
ignore``) and per project (``aurane.toml``), through the API and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aurane.tools.lint import lint_source
from aurane.tools.lint_config import ConfigError, load_config
from tests.conftest import run_cli

# a conv with a bias before a batch norm: L201 on each conv line
VGG = """\
model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> conv2d(4, kernel=3, padding=1) -> batchnorm().relu{first}
        x -> conv2d(4, kernel=3, padding=1){second}
          -> batchnorm().relu
        return x
"""


def codes(text: str, **kwargs: object) -> list[tuple[str, int]]:
    found = lint_source(text, "t.aur", **kwargs)  # type: ignore[arg-type]
    return [(d.code, d.span.line) for d in found if d.span is not None]


def program(first: str = "", second: str = "") -> str:
    return VGG.format(first=first, second=second)


def test_both_lines_warn_without_comments() -> None:
    assert codes(program()) == [("L201", 4), ("L201", 5)]


@pytest.mark.parametrize(
    "comment",
    ["  # aurane: ignore[L201]", "  # aurane: ignore", "  # why # aurane: ignore[l201, W003]"],
)
def test_a_comment_silences_its_line_only(comment: str) -> None:
    assert codes(program(first=comment)) == [("L201", 5)]


def test_other_codes_stay_and_unknown_forms_do_nothing() -> None:
    assert codes(program(first="  # aurane: ignore[W003]")) == [("L201", 4), ("L201", 5)]
    assert codes(program(first="  # aurane: ignored")) == [("L201", 4), ("L201", 5)]


def test_a_comment_covers_every_line_of_its_statement() -> None:
    text = program().replace(
        "          -> batchnorm().relu", "          -> batchnorm().relu  # aurane: ignore"
    )
    assert codes(text) == [("L201", 4)]


def test_parse_errors_are_never_silenced() -> None:
    found = codes("model Net:\n    def forward(x):\n        x -> dense(4  # aurane: ignore\n")
    assert [code for code, _ in found] == ["E001"]


def test_config_ignores_and_per_file_ignores(tmp_path: Path) -> None:
    (tmp_path / "aurane.toml").write_text(
        '[lint]\nignore = ["W001"]\n[lint.per-file-ignores]\n"nets/*.aur" = ["L201"]\n'
    )
    config = load_config(tmp_path / "aurane.toml")
    assert config.ignored(tmp_path / "nets" / "vgg.aur") == {"W001", "L201"}
    assert config.ignored(tmp_path / "other.aur") == {"W001"}
    assert codes(program(), ignore=config.ignored(tmp_path / "nets" / "vgg.aur")) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[lint]\nignore = 'L201'\n", "must be a list of codes"),
        ("[lint]\nignore = ['L2011']\n", "not a code such as L201"),
        ("[lint]\nselect = ['L201']\n", "unknown [lint] key 'select'"),
        ("[lint\n", "not valid TOML"),
    ],
)
def test_bad_config_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "aurane.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_config(path)


def test_cli_reads_the_nearest_config(tmp_path: Path) -> None:
    nets = tmp_path / "nets"
    nets.mkdir()
    source = nets / "vgg.aur"
    source.write_text(program(first="  # aurane: ignore[L201]"))
    result = run_cli("lint", "--json", str(source))
    found = json.loads(result.stdout)["files"][0]["diagnostics"]
    assert [(d["code"], d["span"]["line"]) for d in found] == [("L201", 5)]
    (tmp_path / "aurane.toml").write_text('[lint]\nignore = ["L201"]\n')
    result = run_cli("lint", "--json", str(source))
    assert json.loads(result.stdout)["files"][0]["diagnostics"] == []
    assert result.returncode == 0
    (tmp_path / "aurane.toml").write_text("[lint]\nignore = 3\n")
    result = run_cli("lint", str(source))
    assert (
        result.returncode == 2
        and "aurane.toml" in result.stderr
        and "Traceback" not in result.stderr
    )
