"""The emission table covers the catalog; literals round-trip; layout is black-stable."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aurane.backends.torch import generate_torch
from aurane.backends.torch.data_emit import quote
from aurane.backends.torch.emit import EMITTERS
from aurane.backends.torch.emit_common import Call, lit
from aurane.backends.torch.modules import wrap
from aurane.ops import CATALOG
from aurane.records import replace
from aurane.syntax import ast as syntax
from tests.backends.torch.util import corpus_path, corpus_sources, front_end
from tests.conftest import REPO


def test_every_catalog_operation_has_an_emission_rule() -> None:
    assert set(CATALOG) <= set(EMITTERS), set(CATALOG) - set(EMITTERS)
    assert set(EMITTERS) - set(CATALOG) == {"block"}, "stale rule for an unknown op"


def test_layers_have_constructors_and_activations_do_not() -> None:
    for name, spec in CATALOG.items():
        parametric = "parametric" in spec.kinds
        if parametric:
            assert EMITTERS[name].init is not None, name
        if spec.is_activation:
            assert EMITTERS[name].init is None, name


literals = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.tuples(inner) | st.tuples(inner, inner) | st.tuples(inner, inner, inner),
    max_leaves=6,
)  # fmt: skip


@given(literals)
def test_literals_round_trip(value: object) -> None:
    text = lit(value)
    assert ast.literal_eval(text) == value
    assert "\n" not in text and "\r" not in text and "\u2028" not in text


@given(st.text())
def test_strings_prefer_double_quotes_like_black(text: str) -> None:
    literal = quote(text)
    assert ast.literal_eval(literal) == text
    if "'" not in text and '"' not in text:
        assert literal.startswith('"')


def test_long_calls_wrap_like_black() -> None:
    short = Call("nn.Linear", ("3", "4"))
    assert wrap(2, "self.dense1 = ", short) == ["        self.dense1 = nn.Linear(3, 4)"]
    args = tuple(f"argument_{i}={i}" for i in range(6))
    lines = wrap(2, "self.layer = ", Call("nn.Something", args))
    assert lines[0].endswith("(") and lines[-1] == "        )" and len(lines) == 3
    many = tuple(f"argument_number_{i}={i}" for i in range(8))
    lines = wrap(2, "self.layer = ", Call("nn.Something", many))
    assert len(lines) == 10 and all(line.endswith(",") for line in lines[1:-1])
    commented = wrap(2, "x = ", short, "# (batch, " + "9, " * 30 + "9)")
    assert commented[0].strip().startswith("#") and len(commented) == 2


LONG_NAMES = """
model AVeryLongModelNameThatKeepsGoingAndGoingUntilTheLineIsNearlyFullByItself:
    input_shape = (16, 48)
    input_dtype = float64
    def forward(an_input_tensor_with_a_rather_long_descriptive_name_for_testing):
        an_input_tensor_with_a_rather_long_descriptive_name_for_testing -> lstm(32, num_layers=2, bidirectional=true, dropout=0.1, bias=false)
            -> multihead_attention(heads=4, dim=64, dropout=0.1, causal=true, bias=false)
            -> conv1d(64, kernel=3, stride=1, padding=1, dilation=1, groups=2, bias=false)
"""


@pytest.mark.skipif(
    shutil.which("ruff", path=str(Path(sys.executable).parent)) is None, reason="ruff not installed"
)
def test_generated_code_is_already_formatted(tmp_path: Path) -> None:
    sources = {n: corpus_path(n).read_text() for n in corpus_sources()}
    sources["long_names.aur"] = LONG_NAMES
    for name, text in sources.items():
        code = models_only(text, name)
        assert all(len(line) <= 100 for line in code.splitlines()), name
        (tmp_path / (Path(name).stem + ".py")).write_text(code)
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None
    result = subprocess.run(
        [ruff, "format", "--diff", "--line-length", "100", "--no-cache", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def models_only(text: str, name: str) -> str:
    """The backend's own output: the program without datasets and training jobs."""
    fe = front_end(text, name)
    assert fe.resolved is not None
    kept = tuple(s for s in fe.resolved.statements if isinstance(s, syntax.Model | syntax.Use))
    return generate_torch(replace(fe.resolved, statements=kept), fe.graphs, filename=name)


_NO_TORCH = """
import sys
from aurane.backends.torch import generate_torch
from aurane.frontend import run_front_end
fe = run_front_end(open(sys.argv[1], encoding="utf-8").read(), "x.aur")
generate_torch(fe.resolved, fe.graphs)
assert "torch" not in sys.modules, "the generator imported torch"
"""


def test_generator_does_not_import_torch() -> None:
    if not corpus_sources():
        pytest.skip("corpus not present")
    subprocess.run(
        [sys.executable, "-c", _NO_TORCH, str(corpus_path("composition.aur"))],
        check=True, cwd=REPO, timeout=60,
    )  # fmt: skip


def test_a_program_without_models_does_not_import_nn() -> None:
    from aurane.compile import compile_source

    code = compile_source(
        "dataset d:\n    from aurane.data.SyntheticRegression\n    size = 8\n    features = 2\n"
    )
    assert "from torch import nn" not in code
    compile(code, "d.py", "exec")
