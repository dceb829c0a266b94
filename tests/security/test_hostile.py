"""Hostile sources (RELIABILITY K-INJ, K-GEN, K-ERR): each one is either rejected with a
located diagnostic or compiles to Python whose AST holds only what the program asked for.

Every case compiles a program built from one template with one hostile part, and audits
the output against the same program with benign parts (its twin); see ``audit.py``.
"""

from __future__ import annotations

import ast
import keyword
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aurane import CompilationError, compile_source
from tests.security.audit import problems, string_round_trips

pytest.importorskip("aurane.backends.torch.modules")

BENIGN = {
    "model": "Net",
    "tensor": "h",
    "const": "width",
    "dataset": "images",
    "param": "x",
    "string": "data/run",
    "use": "",
}


def aur_string(value: str, *, raw_separators: bool = False) -> str:
    """An Aurane double-quoted literal whose value is ``value``."""
    out = []
    for ch in value:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif raw_separators and ch in "\u2028\u2029":
            out.append(ch)
        elif not ch.isprintable() or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def training_program(**parts: str) -> str:
    p = {**BENIGN, **parts}
    literal = p.get("literal") or aur_string(p["string"])
    return (
        f"{p['use']}\n"
        f"{p['const']} = 8\n"
        f"dataset {p['dataset']}:\n"
        "    from torchvision.datasets.FakeData\n"
        "    size = 8\n"
        "    image_size = (1, 2, 2)\n"
        "    num_classes = 2\n"
        "    batch = 2\n"
        f"    root = {literal}\n"
        f"model {p['model']}:\n"
        "    input_shape = (1, 2, 2)\n"
        f"    def forward({p['param']}):\n"
        f"        {p['tensor']} = flatten({p['param']})\n"
        f"        {p['tensor']} = dense({p['tensor']}, {p['const']}).relu\n"
        f"        return dense({p['tensor']}, 2)\n"
        f"train {p['model']} on {p['dataset']}:\n"
        "    epochs = 1\n"
        "    loss = cross_entropy\n"
        "    optimizer = adam(lr=0.001)\n"
        f"    checkpoint_dir = {literal}\n"
    )


def model_program(**parts: str) -> str:
    p = {**BENIGN, **parts}
    return (
        f"{p['use']}\n"
        f"{p['const']} = 8\n"
        f"model {p['model']}:\n"
        "    input_shape = (4,)\n"
        f"    def forward({p['param']}):\n"
        f"        {p['tensor']} = dense({p['param']}, {p['const']}).relu\n"
        f"        return dense({p['tensor']}, 2)\n"
    )


def data_program(**parts: str) -> str:
    """A dataset and a model, no job: strings reach the loader factory, output stays small."""
    source = training_program(**parts)
    return source[: source.index("train ")]


TWIN = compile_source(training_program(), validate=True)
DATA_TWIN = compile_source(data_program(), validate=True)
MODEL_TWIN = compile_source(model_program(), validate=True)


def located(error: CompilationError, source: str) -> None:
    lines = source.split("\n")
    assert error.diagnostics
    assert error.span is not None, error
    assert 1 <= error.span.line <= len(lines), error


def check(
    source: str,
    twin: str | None,
    *,
    uses: tuple[str, ...] = (),
    derived: tuple[str, ...] = (),
    strings: tuple[str, ...] = (),
) -> str | None:
    """Compile and audit; returns the output, or None for a (located) rejection."""
    try:
        out = compile_source(source, validate=True, filename="hostile.aur")
    except CompilationError as error:
        located(error, source)
        return None
    found = problems(out, uses=uses, twin=twin, derived=derived)
    assert not found, found
    first_two = out.split("\n")[:2]
    assert first_two == (twin or MODEL_TWIN).split("\n")[:2]  # no user text on lines 1-2
    for value in strings:
        assert string_round_trips(out, value), value
    return out


# ------------------------------------------------------------------ strings

HOSTILE_STRINGS = [
    "'",
    '"',
    "\\",
    "\\\\'",
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b\x0c",
    '"""',
    "'''",
    '"""; import os; os.system("echo pwned"); """',
    "'); __import__('os').system('echo pwned'); ('",
    "# -*- coding: latin-1 -*-",
    "\n# coding: utf-16\n",
    "\n\n# vim: set fileencoding=cp1252",
    "{__import__('os').system('id')}",
    "%s%(x)s{0}",
    "\x00",
    "\x1b[31mred",
    "\u202eevil",
    "\\N{BULLET}",
    "\\x41\\u0041",
    "données/😀",
    "a" * 5000,
    "\t\tindent",
    "\ud800",
]


@pytest.mark.parametrize("value", HOSTILE_STRINGS, ids=ascii)
def test_hostile_strings_reach_output_only_as_literals(value: str) -> None:
    # root (a dataset constructor argument) and checkpoint_dir (a training option)
    out = check(training_program(string=value), TWIN, strings=(value,))
    assert out is not None  # every string is a legal root/checkpoint_dir value


@pytest.mark.parametrize("value", ["a\u2028b", "\u2029", "x\u2028\u2028"], ids=ascii)
def test_raw_line_separators_inside_strings(value: str) -> None:
    source = data_program(literal=aur_string(value, raw_separators=True))
    check(source, DATA_TWIN, strings=(value,))


# ------------------------------------------------------------------ identifiers

HOSTILE_NAMES = sorted(
    set(keyword.kwlist)
    | set(keyword.softkwlist)
    | {
        "print",
        "open",
        "eval",
        "exec",
        "getattr",
        "super",
        "object",
        "len",
        "int",
        "input",
        "id",
        "type",
        "range",
        "isinstance",
        "compile",
        "globals",
        "vars",
        "__import__",
        "__init__",
        "__class__",
        "__builtins__",
        "__name__",
        "__x",
        "_",
        "__",
        "torch",
        "nn",
        "F",
        "self",
        "forward",
        "math",
        "os",
        "sys",
        "random",
        "np",
        "dist",
        "DataLoader",
        "time",
        "hashlib",
        "torchvision",
        "aurane",
        "padding_mask",
        "block",
        "training",
        "state_dict",
        "parameters",
        "cuda",
        "to",
        "eval_",
        "ﬁle",
        "ｅｖａｌ",
        "ｓｕｐｅｒ",
        "ℌ",
        "données",
        "变量",
        "x1",
        "dense1",
        "conv2d1",
        "train_net",
        "_make_images_loader",
        "Net_2",
        "Net",
        "x",
        "h",
        "width",
        "images",
    }
)
ROLES = ["model", "tensor", "const", "dataset", "param"]
# The training runtime is large; these are the names it could collide with.
TRAINING_NAMES = [
    "class",
    "match",
    "open",
    "getattr",
    "super",
    "len",
    "isinstance",
    "random",
    "np",
    "time",
    "hashlib",
    "dist",
    "DataLoader",
    "os",
    "__x",
    "ｓｕｐｅｒ",
    "ﬁle",
    "train_net",
    "_make_images_loader",
    "Net_2",
    "model",
    "history",
    "epoch",
]


# Known front-end bugs, reported (strict: the test fails once they are fixed, to be removed).
KNOWN: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=ascii)
def test_hostile_identifiers(role: str, name: str, request: pytest.FixtureRequest) -> None:
    _mark_known(request, role, name)
    check(data_program(**{role: name}), DATA_TWIN)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", TRAINING_NAMES, ids=ascii)
def test_hostile_identifiers_in_training_programs(role: str, name: str) -> None:
    check(training_program(**{role: name}), TWIN)


@pytest.mark.parametrize("role", ["model", "tensor", "const", "param"])
@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=ascii)
def test_hostile_identifiers_in_model_only_programs(
    role: str, name: str, request: pytest.FixtureRequest
) -> None:
    _mark_known(request, role, name)
    check(model_program(**{role: name}), None)


def _mark_known(request: pytest.FixtureRequest, role: str, name: str) -> None:
    reason = KNOWN.get((role, name))
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


def test_nfkc_colliding_tensor_names_stay_distinct() -> None:
    torch = pytest.importorskip("torch")
    source = (
        "model Net:\n    input_shape = (3,)\n    def forward(x):\n"
        "        file = dense(x, 2)\n        ﬁle = dense(x, 2)\n        return add(file, ﬁle)\n"
    )
    out = check(source, None)
    assert out is not None
    namespace: dict[str, object] = {}
    exec(compile(out, "<generated>", "exec"), namespace)  # noqa: S102
    model = namespace["Net"]()  # type: ignore[operator]
    x = torch.randn(2, 3)
    layers = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert len(layers) == 2
    assert torch.allclose(model(x), layers[0](x) + layers[1](x))


# ------------------------------------------------------------------ use / from targets

USE_LINES = [
    ("use os", ("os",)),
    ("use __import__", ()),
    ("use os.system", ("os.system",)),
    ("use builtins", ("builtins",)),
    ("use subprocess", ("subprocess",)),
    ("use subprocess as sp", ("subprocess",)),
    ("use a.class.b", ()),
    ("use os.__dict__", ()),
    ("use torch.nn.functional", ("torch.nn.functional",)),
    ("use math", ("math",)),
    ("use open", ()),
    ("use os as open", ()),
    ("use os as super", ()),
    ("use os as print", ()),
    ("use os as __x", ()),
    ("use os as ｓｕｐｅｒ", ()),
    ("use os as random", ()),
    ("use os as np", ()),
    ("use os as nn", ()),
    ("use os as F", ()),
    ("use os as self", ()),
    ("use numpy as torch", ()),
    ("use os as Net", ("os",)),
    ("use os as x", ("os",)),
    ("use os as ﬁle", ("os",)),
    ("use match", ("match",)),
    ("use a.match.b", ("a.match.b",)),
    ("use type", ()),
]


@pytest.mark.parametrize(("line", "uses"), USE_LINES, ids=lambda v: ascii(v))
def test_hostile_use_lines(line: str, uses: tuple[str, ...]) -> None:
    check(data_program(use=line), DATA_TWIN, uses=uses)
    check(model_program(use=line), None, uses=uses)


@pytest.mark.parametrize(
    "line",
    [
        "use os as random",
        "use os as time",
        "use os as np",
        "use os as hashlib",
        "use numpy as dist",
        "use os as open",
        "use numpy as rt",
    ],
)
def test_use_aliases_cannot_hide_the_training_runtime(line: str) -> None:
    with pytest.raises(CompilationError) as info:
        compile_source(training_program(use=line))
    assert info.value.diagnostics[0].code == "S019"
    assert info.value.span is not None and info.value.span.line == 1


# Dataset sources (SPEC/docs/security.md): an allowlist, checked after NFKC normalisation.
# Each refused target is refused at its span with S080, whatever the rest of the program.
REFUSED_SOURCES = [
    "os.system",
    "posix.system",
    "nt.system",
    "io.open",
    "subprocess.Popen",
    "pty.spawn",
    "pickle.loads",
    "shutil.rmtree",
    "importlib.import_module",
    "codecs.open",
    "pathlib.Path",
    "webbrowser.open",
    "ｏｓ.system",  # fullwidth letters: Python reads os.system
    "ｐｏｓｉｘ.system",
    "eval",
    "exec",
    "open",
    "getattr",
    "builtins.eval",
    "__import__",
    "os.__dict__",
    "torchvision.datasets.FakeData.__init__",
    "torchvision.datasets.__builtins__",
    "torchvision.datasets.VisionDataset",
    "torchvision.datasets.wrap_dataset_for_transforms_v2",
    "torchvision.io.read_file",
    "torchvision.datasets.utils.download_url",
    "torch.load",
    "torch.hub.load",
    "aurane.data._TensorPairs",
    "aurane.data.torch",
    "aurane.compile.compile_file",
    "a.class.b",
    "FakeData",
]


@pytest.mark.parametrize("use", ["", "use torch", "root"])
@pytest.mark.parametrize("target", REFUSED_SOURCES, ids=ascii)
def test_refused_dataset_sources(target: str, use: str) -> None:
    """Refused without a use line, after `use torch`, and after a use of its own module."""
    if use == "root":
        use = f"use {target.rpartition('.')[0] or target}"
    source = data_program(use=use)
    source = source.replace("from torchvision.datasets.FakeData", f"from {target}")
    with pytest.raises(CompilationError) as info:
        compile_source(source, validate=True, filename="hostile.aur")
    found = [d for d in info.value.diagnostics if d.code == "S080"]
    assert found, info.value.diagnostics
    assert found[0].span is not None
    assert (found[0].span.line, found[0].span.column) == (4, 10)
    assert found[0].hint


@pytest.mark.parametrize(
    ("target", "uses"),
    [
        ("torchvision.datasets.MNIST", ()),
        ("torchvision.datasets.FakeData", ()),
        ("ｔｏｒｃｈｖｉｓｉｏｎ.datasets.FakeData", ()),
        ("aurane.data.SyntheticImages", ("aurane.data",)),
    ],
    ids=ascii,
)
def test_allowed_dataset_sources(target: str, uses: tuple[str, ...]) -> None:
    source = data_program().replace("from torchvision.datasets.FakeData", f"from {target}")
    out = check(source, DATA_TWIN, uses=uses)
    assert out is not None
    assert out.isascii() or target.isascii()
    assert "ｔ" not in out  # emitted as Python reads it


@pytest.mark.parametrize(
    ("use", "target"),
    [
        ("use mylib", "mylib.Data"),
        ("use mylib.data", "mylib.data.sets.Data"),
        ("use ｍｙｌｉｂ", "mylib.Data"),
    ],
    ids=ascii,
)
def test_sources_under_declared_modules(use: str, target: str) -> None:
    """A class of the program's own module: called only after the runtime check."""
    source = data_program(use=use).replace("from torchvision.datasets.FakeData", f"from {target}")
    out = compile_source(source, validate=True)
    module = target.rsplit(".", 1)[0]
    assert f"dataset_class = rt.dataset_class({target}, {target!r})".replace("'", '"') in out
    assert "dataset = dataset_class(" in out
    assert f"import {module}" in out


@pytest.mark.parametrize(
    ("use", "target"),
    [
        ("use mylib as m", "m.Data"),  # the module path, not the alias, names the class
        ("use mylib", "mylibx.Data"),
        ("use mylib.data", "mylib.Data"),
        ("use mylib", "mylib.__init__"),
        ("use mylib", "mylib"),
    ],
    ids=ascii,
)
def test_sources_outside_declared_modules(use: str, target: str) -> None:
    source = data_program(use=use).replace("from torchvision.datasets.FakeData", f"from {target}")
    with pytest.raises(CompilationError) as info:
        compile_source(source)
    assert any(d.code == "S080" for d in info.value.diagnostics)


def test_fullwidth_os_system_never_runs(tmp_path: Path) -> None:
    """The issue's example: it compiled and ran the command when the loader was built."""
    marker = tmp_path / "pwned"
    source = (
        "dataset d:\n    from ｏｓ.system\n"
        f"    command = {aur_string('touch ' + str(marker))}\n"
        "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return dense(x, 2)\n"
        "train Net on d:\n    epochs = 1\n"
    )
    with pytest.raises(CompilationError) as info:
        compile_source(source)
    assert [d.code for d in info.value.diagnostics] == ["S080"]
    assert not marker.exists()


def test_allowlists_match_the_libraries() -> None:
    torchvision = pytest.importorskip("torchvision")
    import aurane.data
    from aurane.semantics.sources import AURANE_DATASETS, TORCHVISION_DATASETS

    # the dataset classes; helpers such as prepare_tokens are no `from` source
    classes = {n for n in aurane.data.__all__ if isinstance(getattr(aurane.data, n), type)}
    assert classes == AURANE_DATASETS
    for name in TORCHVISION_DATASETS:
        cls = getattr(torchvision.datasets, name)
        assert isinstance(cls, type) and issubclass(cls, torch_dataset()), name


def torch_dataset() -> type:
    from torch.utils.data import Dataset

    return Dataset


@pytest.mark.parametrize(
    "filename",
    [
        "a\nimport os\n.aur",
        "# coding: latin-1",
        "x\u2028y.aur",
        "x\r# coding: utf-16\r.aur",
        '"""',
        "\ud800.aur",
        "'; import os; '.aur",
    ],
    ids=ascii,
)
def test_hostile_file_names(filename: str) -> None:
    out = compile_source(model_program(), validate=True, filename=filename)
    assert not problems(out, twin=MODEL_TWIN)
    assert out.split("\n")[:2] == MODEL_TWIN.split("\n")[:2]


# ------------------------------------------------------------------ generated

IDENT_CHARS = st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Pc"))
IDENTS = st.one_of(
    st.sampled_from(HOSTILE_NAMES),
    st.text(IDENT_CHARS, min_size=1, max_size=12),
)
STRINGS = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=40))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(role=st.sampled_from(ROLES), name=IDENTS, value=STRINGS)
def test_generated_identifiers_and_strings(role: str, name: str, value: str) -> None:
    assume((role, name) not in KNOWN)
    source = data_program(**{role: name, "string": value})
    try:
        compile_source(source, validate=True)
    except CompilationError as error:
        located(error, source)
        # the rejection may be the name; with a benign name the string itself must pass
        out = check(data_program(string=value), DATA_TWIN, strings=(value,))
        assert out is not None
        return
    check(source, DATA_TWIN, strings=(value,))


def test_twin_is_itself_clean() -> None:
    assert not problems(MODEL_TWIN)
    tree = ast.parse(TWIN)
    assert any(isinstance(n, ast.ClassDef) and n.name == "Net" for n in ast.walk(tree))
