"""SPEC §9 register_backend: normalized names, atomic replacement, uncached dynamic backends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aurane.backends import registry
from aurane.backends.registry import (
    BackendEntry,
    GenerationRequest,
    UnknownBackendError,
    backend_names,
    get_backend,
    register_backend,
)


@pytest.fixture(autouse=True)
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Each test sees the real built-ins but its registrations vanish afterwards.
    registry._load_builtins()
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    yield


def emit_a(request: GenerationRequest) -> str:
    return f"a:{sorted(request.graphs)}"


def emit_b(request: GenerationRequest) -> str:
    return "b"


REQUEST = GenerationRequest(program=object(), graphs={"m": object()}, options={"optimize": 0})


@pytest.mark.parametrize("spelling", ["mine", "MINE", "  Mine\t", "\nmInE "])
def test_names_are_normalized(spelling: str) -> None:
    entry = register_backend("  MiNe ", emit_a, cache_version="1")
    assert entry.name == "mine"
    assert get_backend(spelling) is entry
    assert "mine" in backend_names() and "  MiNe " not in backend_names()
    assert entry.generator(REQUEST) == "a:['m']"


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_empty_name_is_rejected(name: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        register_backend(name, emit_a)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(TypeError):
        register_backend(3, emit_a)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        register_backend("x", "not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        register_backend("x", emit_a, cache_version=" ")
    with pytest.raises(ValueError):
        register_backend("x", emit_a, cache_version=2)  # type: ignore[arg-type]
    assert "x" not in backend_names()


def test_reregistering_replaces_generator_and_version_together() -> None:
    first = register_backend("swap", emit_a, cache_version="1")
    second = register_backend("SWAP", emit_b)
    entry = get_backend("swap")
    assert entry is second and entry is not first
    assert (entry.generator, entry.cache_version, entry.cacheable) == (emit_b, None, False)
    third = register_backend(" swap", emit_a, cache_version="7")
    assert get_backend("swap") == BackendEntry("swap", emit_a, "7") == third
    assert backend_names().count("swap") == 1


def test_backend_without_cache_version_is_never_cacheable() -> None:
    assert register_backend("dyn", lambda request: "x").cacheable is False
    assert register_backend("fixed", emit_a, cache_version="3").cacheable is True
    with pytest.raises(AttributeError):
        get_backend("dyn").cache_version = "1"  # type: ignore[misc]


def test_unknown_backend_error() -> None:
    register_backend("mybackend", emit_a, cache_version="1")
    with pytest.raises(UnknownBackendError) as info:
        get_backend("  MyBackend2 ")
    err = info.value
    assert isinstance(err, LookupError)
    assert err.name == "  MyBackend2 " and "mybackend" in err.known
    assert err.known == backend_names()
    assert "unknown backend '  MyBackend2 '" in str(err)
    assert "did you mean 'mybackend'?" in str(err)


def test_unknown_backend_without_close_match() -> None:
    with pytest.raises(UnknownBackendError) as info:
        get_backend("zzzzzzzzzzzzqq")
    assert "did you mean" not in str(info.value)
    assert "known:" in str(info.value)


def test_builtins_absent_module_is_tolerated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_BUILTINS_LOADED", False)
    monkeypatch.setattr(registry, "_BUILTIN_MODULES", ("aurane.backends.does_not_exist",))
    assert isinstance(backend_names(), tuple)
    assert registry._BUILTINS_LOADED is True


def _fake_builtin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    name = f"_aurane_fake_backend_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_BUILTINS_LOADED", False)
    monkeypatch.setattr(registry, "_BUILTIN_MODULES", (name,))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


REGISTERS = (
    "from aurane.backends.registry import register_backend\n"
    "COUNT = [0]\n"
    "def gen(request):\n    return 'builtin'\n"
    "register_backend('Fake', gen, cache_version='1')\n"
    "COUNT[0] += 1\n"
)


def test_builtins_load_lazily_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = _fake_builtin(tmp_path, monkeypatch, REGISTERS)
    assert name not in sys.modules
    assert get_backend("fake").generator(REQUEST) == "builtin"
    get_backend("fake")
    backend_names()
    assert sys.modules[name].COUNT == [1]


def test_user_registration_is_not_overwritten_by_builtins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_builtin(tmp_path, monkeypatch, REGISTERS)
    register_backend("fake", emit_b)  # before anything looked a backend up
    assert get_backend("fake").generator is emit_b


def test_broken_builtin_raises_and_retries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_builtin(tmp_path, monkeypatch, "import aurane_no_such_dependency\n")
    for _ in range(2):  # not silently marked loaded after a failure
        with pytest.raises(ImportError):
            get_backend("fake")
        assert registry._BUILTINS_LOADED is False
