"""compile_source / compile_file (SPEC §9, §10): pipeline, options, cache, errors.

Most tests use a stub backend registered under a unique name, so they check the
compile plumbing without depending on the torch generator; the tests at the end
run the real torch backend over the corpus.
"""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aurane
from aurane import CompilationError, compile_file, compile_source, register_backend
from aurane.backends.registry import GenerationRequest, UnknownBackendError
from aurane.cache import CompileCache
from aurane.compile import BackendOutputError, compile_detailed, validate_python
from tests.conftest import VALID, corpus_files
from tests.conftest import env as child_env

_ids = itertools.count()

NET = textwrap.dedent(
    """\
    width = 8
    model Net:
        input_shape = (4,)
        def forward(x):
            x -> dense(width).relu -> dropout(0) -> dense(2)
    """
)
UNUSED = textwrap.dedent(
    """\
    model Net:
        input_shape = (4,)
        def forward(x):
            h = dense(x, 3)
            return dense(x, 2)
    """
)


class Stub:
    """A backend that records its requests and returns trivially valid Python."""

    def __init__(self, text: str | None = None) -> None:
        self.requests: list[GenerationRequest] = []
        self.text = text

    def __call__(self, request: GenerationRequest) -> str:
        self.requests.append(request)
        if self.text is not None:
            return self.text
        names = sorted(request.graphs)
        return f"MODELS = {names!r}\nCALL = {len(self.requests)}\n"


def stub_backend(cache_version: str | None = "1", text: str | None = None) -> tuple[str, Stub]:
    name = f"stub-{next(_ids)}"
    stub = Stub(text)
    register_backend(name, stub, cache_version=cache_version)
    return name, stub


# ------------------------------------------------------------------ pipeline


def test_backend_receives_resolved_program_graphs_and_options() -> None:
    name, stub = stub_backend()
    out = compile_source(NET, backend=name, filename="net.aur")
    assert out == "MODELS = ['Net']\nCALL = 1\n"
    (request,) = stub.requests
    assert set(request.graphs) == {"Net"}
    assert request.options["filename"] == "net.aur"
    assert request.options["optimize"] == 0
    # constants are resolved before the backend sees the program
    step = request.program.models[0].forward.body[0].chain.steps[0]  # type: ignore[union-attr]
    assert step.args[0].value == 8


def test_optimize_level_reaches_the_backend_program() -> None:
    name, stub = stub_backend()
    compile_source(NET, backend=name, optimize=1)
    ops = [n.op for n in stub.requests[0].graphs["Net"].nodes]
    assert ops == ["dense", "relu", "dense"]


def test_backend_name_is_normalized() -> None:
    name, stub = stub_backend()
    compile_source(NET, backend=f"  {name.upper()} ")
    assert len(stub.requests) == 1


def test_analyze_fails_on_warnings_only_when_asked() -> None:
    name, _ = stub_backend()
    compile_source(UNUSED, backend=name)  # warnings alone do not fail a compile
    with pytest.raises(CompilationError) as info:
        compile_source(UNUSED, backend=name, analyze=True)
    assert info.value.diagnostics[0].code == "S018"
    assert info.value.span is not None and info.value.span.line == 4


def test_detailed_result_reports_warnings() -> None:
    name, _ = stub_backend()
    result = compile_detailed(UNUSED, backend=name)
    assert [d.code for d in result.diagnostics] == ["S018"]
    assert not result.cached


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("source", "stage", "line"),
    [
        ("model Net:\n    input_shape = (4,\n", "parse", 2),
        ("a = b\n", "resolve", 1),
        (
            "model Net:\n    input_shape = (4,)\n    def forward(x):\n        x -> nosuch(3)\n",
            "semantic",
            4,
        ),
        (
            "model Net:\n    input_shape = (4,)\n    def forward(x):\n        x -> conv2d(3)\n",
            "type",
            4,
        ),
    ],
)
def test_errors_are_located_compilation_errors(source: str, stage: str, line: int) -> None:
    name, stub = stub_backend()
    with pytest.raises(CompilationError) as info:
        compile_source(source, backend=name, filename="bad.aur")
    error = info.value
    assert error.stage == stage
    assert error.span is not None and error.span.line == line
    assert error.diagnostics and all(d.code for d in error.diagnostics)
    assert str(error).startswith(f"bad.aur:{line}:")
    assert stub.requests == []  # the backend never sees a broken program


def test_compile_file_names_the_file(tmp_path: Path) -> None:
    name, _ = stub_backend()
    path = tmp_path / "broken.aur"
    path.write_text("a = b\n")
    with pytest.raises(CompilationError) as info:
        compile_file(path, backend=name)
    assert info.value.filename == str(path)
    assert str(path) in str(info.value)
    good = tmp_path / "good.aur"
    good.write_text(NET)
    assert compile_file(good, backend=name).startswith("MODELS")


def test_compile_file_bad_utf8_is_located(tmp_path: Path) -> None:
    name, _ = stub_backend()
    path = tmp_path / "latin.aur"
    path.write_bytes(b"x = 1\ny = \xff\n")
    with pytest.raises(CompilationError) as info:
        compile_file(path, backend=name)
    assert info.value.diagnostics[0].code == "P015"
    assert info.value.span is not None and info.value.span.line == 2


def test_compile_file_missing_is_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        compile_file(tmp_path / "nope.aur")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"optimize": 3}, ValueError),
        ({"optimize": -1}, ValueError),
        ({"optimize": True}, ValueError),
        ({"optimize": 1.0}, ValueError),
        ({"analyze": "yes"}, TypeError),
        ({"validate": 1}, TypeError),
        ({"per_call": "yes"}, TypeError),
        ({"backend": 3}, TypeError),
        ({"backend": "no-such-backend"}, UnknownBackendError),
        ({"cache": 3.5}, TypeError),
        ({"filename": b"x"}, TypeError),
    ],
)
def test_bad_options_are_python_errors(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        compile_source(NET, **kwargs)


def test_unknown_backend_is_a_lookup_error_with_suggestion() -> None:
    with pytest.raises(LookupError, match="torch"):
        compile_source(NET, backend="trch")


def test_source_must_be_text() -> None:
    with pytest.raises(TypeError):
        compile_source(NET.encode())  # type: ignore[arg-type]


# ------------------------------------------------------------------ validate


@pytest.mark.parametrize(
    "text",
    [
        "def f(:\n",
        "# -*- coding: latin-1 -*-\nx = 1\n",
        "x = 1\n# vim: set fileencoding=utf-16 :\n",
        "x = 1  # \u2028 y = 2\n",
        "x = 1\r\n",
        "x = '\x00'\n",
    ],
)
def test_validate_rejects_unsafe_backend_output(text: str) -> None:
    name, _ = stub_backend(text=text)
    compile_source(NET, backend=name)  # without validate the text is passed through
    with pytest.raises(BackendOutputError):
        compile_source(NET, backend=name, validate=True)


def test_validate_rejects_non_string_output() -> None:
    name = f"stub-{next(_ids)}"
    register_backend(name, lambda request: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(BackendOutputError):
        compile_source(NET, backend=name)


def test_validate_python_accepts_ordinary_code() -> None:
    validate_python("import torch\n\n# coding is fine on line 3\nx = 'a\\u2028b'\n")


# ------------------------------------------------------------------ cache


def test_no_cache_means_no_cache_io(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AURANE_CACHE_DIR", str(tmp_path / "env_cache"))
    name, stub = stub_backend()
    compile_source(NET, backend=name)
    compile_source(NET, backend=name, cache=False)
    assert list(tmp_path.iterdir()) == []
    assert len(stub.requests) == 2


def test_cache_hit_is_byte_identical_and_skips_the_backend(tmp_path: Path) -> None:
    name, stub = stub_backend()
    cold = compile_source(NET, backend=name, cache=tmp_path)
    warm = compile_detailed(NET, backend=name, cache=tmp_path)
    assert warm.cached and warm.output == cold
    assert len(stub.requests) == 1
    store = CompileCache(tmp_path)
    compile_source(NET, backend=name, cache=store)
    assert store.stats.hits == 1


@pytest.mark.parametrize(
    "change",
    [
        {"optimize": 1},
        {"optimize": 2},
        {"analyze": True},
        {"validate": True},
        {"filename": "other.aur"},
        {"source": NET + "\n"},
    ],
)
def test_cache_key_covers_options_and_source(tmp_path: Path, change: dict[str, Any]) -> None:
    name, stub = stub_backend()
    kwargs: dict[str, Any] = {"source": NET, "backend": name, "cache": tmp_path}
    compile_source(**kwargs)
    compile_source(**{**kwargs, **change})
    assert len(stub.requests) == 2


def test_reregistering_with_a_new_version_misses(tmp_path: Path) -> None:
    name, stub = stub_backend(cache_version="1")
    compile_source(NET, backend=name, cache=tmp_path)
    register_backend(name, stub, cache_version="2")
    compile_source(NET, backend=name, cache=tmp_path)
    assert len(stub.requests) == 2


def test_backend_without_cache_version_is_never_cached(tmp_path: Path) -> None:
    name, stub = stub_backend(cache_version=None)
    compile_source(NET, backend=name, cache=tmp_path)
    compile_source(NET, backend=name, cache=tmp_path)
    assert len(stub.requests) == 2
    assert list(tmp_path.iterdir()) == []


def test_failed_compiles_are_not_cached(tmp_path: Path) -> None:
    name, _ = stub_backend()
    for _ in range(2):
        with pytest.raises(CompilationError):
            compile_source(UNUSED, backend=name, analyze=True, cache=tmp_path)
    assert list(tmp_path.rglob("*.json")) == []


def test_cache_true_uses_env_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AURANE_CACHE_DIR", str(tmp_path / "c"))
    name, stub = stub_backend()
    compile_source(NET, backend=name, cache=True)
    compile_source(NET, backend=name, cache=True)
    assert len(stub.requests) == 1
    assert list((tmp_path / "c").rglob("*.json"))


def test_corrupt_cache_record_is_a_miss_then_rewritten(tmp_path: Path) -> None:
    name, stub = stub_backend()
    cold = compile_source(NET, backend=name, cache=tmp_path)
    (record,) = tmp_path.rglob("*.json")
    record.write_bytes(record.read_bytes().replace(b"CALL = 1", b"CALL = 9"))
    again = compile_source(NET, backend=name, cache=tmp_path)
    assert len(stub.requests) == 2
    assert again.replace("CALL = 2", "CALL = 1") == cold
    assert compile_detailed(NET, backend=name, cache=tmp_path).cached


def test_surrogate_source_is_never_cached(tmp_path: Path) -> None:
    name, _ = stub_backend()
    source = NET + "# \ud800\n"
    # The parser may accept a lone surrogate in a comment or report it; either way
    # there are no UTF-8 bytes to hash, so nothing is cached and nothing crashes.
    with contextlib.suppress(CompilationError):
        compile_source(source, backend=name, cache=tmp_path)
    assert list(tmp_path.rglob("*.json")) == []


# ------------------------------------------------------------------ K-ERR


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet=st.sampled_from(list("model Net:\n    ->()=,.x1_#\"'\\\r\u2028")), max_size=80)
)
def test_any_text_gives_output_or_compilation_error(text: str) -> None:
    try:
        out = compile_source(text, backend=_SHARED_STUB)
    except CompilationError as error:
        assert error.diagnostics
        return
    assert isinstance(out, str)


_SHARED_STUB, _ = stub_backend(cache_version=None)


# ------------------------------------------------------------------ public API


def test_public_names_are_lazy_and_torch_free() -> None:
    code = (
        "import sys, aurane\n"
        "assert 'aurane.compile' not in sys.modules\n"
        "assert 'torch' not in sys.modules\n"
        "from aurane import compile_source, compile_file, register_backend, optimize_ast\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok')\n"
    )
    env = child_env()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert aurane.compile_source is compile_source
    assert set(aurane.__all__) >= {
        "compile_source",
        "compile_file",
        "register_backend",
        "optimize_ast",
        "TorchCodeGenerator",
        "CompilationError",
    }
    with pytest.raises(AttributeError):
        aurane.no_such_name  # noqa: B018


# ------------------------------------------------------------------ torch backend


def _torch_backend() -> None:
    try:
        from aurane.backends.torch import generate_torch  # noqa: F401
    except ImportError:
        pytest.skip("torch backend not present")


@pytest.mark.parametrize("name", corpus_files("valid"))
def test_corpus_compiles_validated_at_every_level(name: str) -> None:
    _torch_backend()
    source = (VALID / name).read_text()
    outputs = [
        compile_source(source, validate=True, optimize=lvl, filename=name) for lvl in (0, 1, 2)
    ]
    assert outputs[0] == compile_source(source, filename=name)  # deterministic in-process
    assert all(isinstance(o, str) and o for o in outputs)


def test_cache_on_and_off_agree_over_the_corpus(tmp_path: Path) -> None:
    _torch_backend()
    for name in corpus_files("valid"):
        source = (VALID / name).read_text()
        plain = compile_source(source, filename=name)
        cold = compile_detailed(source, filename=name, cache=tmp_path)
        warm = compile_detailed(source, filename=name, cache=tmp_path)
        assert not cold.cached and warm.cached
        assert plain == cold.output == warm.output


def test_same_bytes_under_different_hash_seeds() -> None:
    _torch_backend()
    if not corpus_files("valid"):
        pytest.skip("corpus not present")
    code = (
        "import hashlib, pathlib, sys\n"
        "from aurane import compile_source\n"
        "h = hashlib.sha256()\n"
        "for p in sorted(pathlib.Path(sys.argv[1]).glob('*.aur')):\n"
        "    h.update(compile_source(p.read_text(), optimize=2, filename=p.name).encode())\n"
        "print(h.hexdigest())\n"
    )
    digests = set()
    for seed in ("0", "1", "12345"):
        env = child_env(PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", code, str(VALID)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        digests.add(done.stdout.strip())
    assert len(digests) == 1
