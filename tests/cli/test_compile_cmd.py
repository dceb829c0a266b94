"""``aurane compile``: every flag and exit status, in subprocesses (SPEC §11)."""

from __future__ import annotations

import ast
import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytest.importorskip("aurane.backends.torch.modules")

GOOD = textwrap.dedent(
    """\
    model Net:
        input_shape = (4,)
        def forward(x):
            x -> dense(8).relu -> dropout(0) -> dense(2)
    """
)
WARNS = textwrap.dedent(
    """\
    model Net:
        input_shape = (4,)
        def forward(x):
            h = dense(x, 3)
            return dense(x, 2)
    """
)
BAD = "model Net:\n    input_shape = (4,)\n    def forward(x):\n        x -> nosuch(3)\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "good.aur").write_text(GOOD)
    (tmp_path / "warns.aur").write_text(WARNS)
    (tmp_path / "bad.aur").write_text(BAD)
    return tmp_path


def cli(work: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    # The cache goes to the test folder unless a test says otherwise.
    return run_cli(
        "compile", *args, cwd=work, env={"AURANE_CACHE_DIR": str(work / "c"), **(env or {})}
    )


def test_stdout_is_only_python(work: Path) -> None:
    done = cli(work, "good.aur")
    assert done.returncode == 0, done.stderr
    ast.parse(done.stdout)
    assert "class Net" in done.stdout
    assert "compiled good.aur" in done.stderr


def test_quiet_silences_the_success_message(work: Path) -> None:
    done = cli(work, "good.aur", "--quiet")
    assert done.returncode == 0 and done.stderr == ""
    assert cli(work, "good.aur", "-q").stderr == ""


@pytest.mark.parametrize(
    "form", [["net.py"], ["-o", "net.py"], ["--output", "net.py"], ["net.py", "-o", "net.py"]]
)
def test_output_file(work: Path, form: list[str]) -> None:
    done = cli(work, "good.aur", *form)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    ast.parse((work / "net.py").read_text())
    assert "-> net.py" in done.stderr


def test_two_different_outputs_are_a_usage_error(work: Path) -> None:
    done = cli(work, "good.aur", "a.py", "-o", "b.py")
    assert done.returncode == 2
    assert not (work / "a.py").exists() and not (work / "b.py").exists()


@pytest.mark.parametrize(
    "target", ["good.aur", "./good.aur", "sub/../good.aur", "link.aur", "hard.aur"]
)
def test_output_equal_to_source_is_refused(work: Path, target: str) -> None:
    (work / "sub").mkdir()
    (work / "link.aur").symlink_to(work / "good.aur")
    os.link(work / "good.aur", work / "hard.aur")
    done = cli(work, "good.aur", target)
    assert done.returncode == 2
    assert "refusing to overwrite" in done.stderr
    assert (work / "good.aur").read_text() == GOOD


def test_output_directory_is_refused(work: Path) -> None:
    (work / "out").mkdir()
    assert cli(work, "good.aur", "out").returncode == 2


def test_failed_compile_leaves_output_untouched(work: Path) -> None:
    (work / "net.py").write_text("# previous output\n")
    done = cli(work, "bad.aur", "net.py")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "bad.aur:4:" in done.stderr and "error[" in done.stderr
    assert (work / "net.py").read_text() == "# previous output\n"
    assert [p.name for p in work.iterdir() if p.name.startswith(".net.py")] == []


def test_failed_compile_to_stdout_prints_nothing(work: Path) -> None:
    done = cli(work, "bad.aur")
    assert done.returncode == 1 and done.stdout == ""


def test_missing_source(work: Path) -> None:
    done = cli(work, "nope.aur")
    assert done.returncode == 1
    assert "no such file" in done.stderr and done.stdout == ""


def test_bad_utf8_source_is_located(work: Path) -> None:
    (work / "latin.aur").write_bytes(b"x = 1\ny = \xff\n")
    done = cli(work, "latin.aur")
    assert done.returncode == 1
    assert "P015" in done.stderr and "latin.aur:2:" in done.stderr


def test_json_errors_prints_one_object_on_stderr(work: Path) -> None:
    done = cli(work, "bad.aur", "--json-errors")
    assert done.returncode == 1 and done.stdout == ""
    payload = json.loads(done.stderr)
    assert payload["ok"] is False and payload["file"] == "bad.aur"
    assert payload["stage"] == "semantic"
    (first, *_) = payload["diagnostics"]
    assert set(first) >= {"severity", "code", "stage", "message", "hint", "span"}
    assert first["span"]["line"] == 4
    assert set(first["span"]) == {"line", "column", "end_line", "end_column"}


def test_json_errors_for_a_missing_file(work: Path) -> None:
    done = cli(work, "nope.aur", "--json-errors")
    assert done.returncode == 1 and done.stdout == ""
    payload = json.loads(done.stderr)
    assert payload["ok"] is False and "no such file" in payload["error"]


def test_json_errors_for_a_usage_error(work: Path) -> None:
    done = cli(work, "good.aur", "good.aur", "--json-errors")
    assert done.returncode == 2
    assert "refusing" in json.loads(done.stderr)["error"]


def test_json_errors_on_success_prints_no_json(work: Path) -> None:
    done = cli(work, "good.aur", "--json-errors", "-q")
    assert done.returncode == 0 and done.stderr == ""


def test_analyze_makes_warnings_fatal(work: Path) -> None:
    assert cli(work, "warns.aur").returncode == 0
    done = cli(work, "warns.aur", "--analyze")
    assert done.returncode == 1 and done.stdout == ""
    assert "S018" in done.stderr


def test_validate(work: Path) -> None:
    done = cli(work, "good.aur", "--validate")
    assert done.returncode == 0, done.stderr
    assert done.stdout == cli(work, "good.aur", "--no-cache").stdout


def test_optimize_levels(work: Path) -> None:
    plain = cli(work, "good.aur").stdout
    one = cli(work, "good.aur", "--optimize").stdout
    assert one == cli(work, "good.aur", "--optimize", "--opt-level", "1").stdout
    assert cli(work, "good.aur", "--opt-level", "0").stdout == plain
    assert cli(work, "good.aur", "--opt-level", "2").stdout == one  # no shape rewrite here
    assert "Dropout" in plain and "Dropout" not in one


@pytest.mark.parametrize("level", ["3", "-1", "x"])
def test_bad_opt_level_is_a_usage_error(work: Path, level: str) -> None:
    done = cli(work, "good.aur", "--opt-level", level)
    assert done.returncode == 2 and done.stdout == ""


def test_backend_option(work: Path) -> None:
    assert cli(work, "good.aur", "--backend", "torch").returncode == 0
    assert cli(work, "good.aur", "--backend", " TORCH ").returncode == 0
    done = cli(work, "good.aur", "--backend", "jax")
    assert done.returncode == 2
    assert "unknown backend" in done.stderr and "'torch'" in done.stderr


def test_format_without_black_warns_and_continues(work: Path) -> None:
    plain = cli(work, "good.aur").stdout
    hide = work / "noblack"
    hide.mkdir()
    (hide / "black.py").write_text("raise ImportError('hidden for the test')\n")
    done = cli(work, "good.aur", "--format", env={"PYTHONPATH": f"{hide}{os.pathsep}{_src()}"})
    assert done.returncode == 0
    assert "needs Black" in done.stderr
    assert done.stdout == plain


def test_format_uses_black_when_importable(work: Path) -> None:
    fake = work / "fakeblack"
    fake.mkdir()
    (fake / "black.py").write_text(
        "class Mode:\n    pass\n\n"
        "def format_str(src, mode):\n    return src + '# formatted by black\\n'\n"
    )
    done = cli(work, "good.aur", "--format", env={"PYTHONPATH": f"{fake}{os.pathsep}{_src()}"})
    assert done.returncode == 0, done.stderr
    assert "# formatted by black\n" in done.stdout  # the source-map table follows it
    assert done.stdout.rstrip().splitlines()[-1].startswith("# aurane-source-map:")


def test_diff_needs_an_output(work: Path) -> None:
    assert cli(work, "good.aur", "--diff").returncode == 2


def test_diff_writes_nothing(work: Path) -> None:
    done = cli(work, "good.aur", "net.py", "--diff")
    assert done.returncode == 0
    assert done.stdout.startswith("--- net.py (current)\n+++ net.py (new)\n")
    assert not (work / "net.py").exists()
    assert cli(work, "good.aur", "net.py", "-q").returncode == 0
    assert cli(work, "good.aur", "net.py", "--diff").stdout == ""  # up to date
    (work / "good.aur").write_text(GOOD.replace("dense(2)", "dense(3)"))
    before = (work / "net.py").read_text()
    changed = cli(work, "good.aur", "net.py", "--diff")
    assert changed.returncode == 0
    assert any(line.startswith("-") and "2" in line for line in changed.stdout.splitlines())
    assert any(line.startswith("+") and "3" in line for line in changed.stdout.splitlines())
    assert (work / "net.py").read_text() == before


def test_show_ast_goes_to_stderr(work: Path) -> None:
    for extra in ([], ["--optimize"]):  # second round is a cache hit for the plain one
        done = cli(work, "good.aur", "--show-ast", "-q", *extra)
        assert done.returncode == 0
        ast.parse(done.stdout)
        dump = json.loads(done.stderr)
        assert dump["node"] == "AuraneProgram"
        steps = dump["statements"][0]["forward"]["body"][0]["chain"]["steps"]
        assert [s["func"] for s in steps] == (
            ["dense", "dense"] if extra else ["dense", "dropout", "dense"]
        )
    hit = cli(work, "good.aur", "--show-ast", "-q")
    assert json.loads(hit.stderr)["node"] == "AuraneProgram"


def test_cache_default_location_and_hits(work: Path) -> None:
    env = {"AURANE_CACHE_DIR": ""}  # unset: falls back to .aurane_cache in the cwd
    first = run_cli("compile", "good.aur", cwd=work, env=env)
    second = run_cli("compile", "good.aur", cwd=work, env=env)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    assert "(cached)" not in first.stderr and "(cached)" in second.stderr
    assert list((work / ".aurane_cache").rglob("*.json"))


def test_cache_env_location(work: Path) -> None:
    cli(work, "good.aur")
    assert list((work / "c").rglob("*.json"))
    assert not (work / ".aurane_cache").exists()


def test_no_cache_does_no_cache_io(work: Path) -> None:
    done = cli(work, "good.aur", "--no-cache")
    again = cli(work, "good.aur", "--no-cache")
    assert done.returncode == 0 and "(cached)" not in again.stderr
    assert not (work / "c").exists() and not (work / ".aurane_cache").exists()


def test_unwritable_cache_is_not_fatal(work: Path) -> None:
    (work / "blocker").write_text("a file where the cache folder should be")
    done = run_cli("compile", "good.aur", cwd=work, env={"AURANE_CACHE_DIR": str(work / "blocker")})
    assert done.returncode == 0, done.stderr
    ast.parse(done.stdout)


def test_help() -> None:
    done = run_cli("compile", "--help")
    assert done.returncode == 0
    for flag in (
        "--analyze",
        "--validate",
        "--optimize",
        "--opt-level",
        "--backend",
        "--format",
        "--diff",
        "--show-ast",
        "--quiet",
        "--no-cache",
        "--json-errors",
        "--class-per-call",
    ):
        assert flag in done.stdout


def test_no_arguments_is_a_usage_error() -> None:
    assert run_cli("compile").returncode == 2


CRASHING_BACKEND = (
    "from aurane.backends.registry import register_backend\n"
    "def crash(request):\n    raise RuntimeError('boom')\n"
    "register_backend('crash', crash)\n"
)


def test_internal_error_exits_123(work: Path) -> None:
    site = work / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(CRASHING_BACKEND)
    env = {"PYTHONPATH": f"{site}{os.pathsep}{_src()}"}
    done = cli(work, "good.aur", "--backend", "crash", env=env)
    assert done.returncode == 123
    assert "internal error" in done.stderr and "boom" in done.stderr
    as_json = cli(work, "good.aur", "--backend", "crash", "--json-errors", env=env)
    assert as_json.returncode == 123 and as_json.stdout == ""
    payload = json.loads(as_json.stderr)
    assert "internal error" in payload["error"] and "boom" in payload["error"]


def _src() -> str:
    from tests.conftest import REPO

    return str(REPO / "src")


def test_show_ast_and_json_errors_survive_lone_surrogates(work: Path) -> None:
    source = GOOD + 'odd = "\\uD800"\n'
    (work / "odd.aur").write_text(source)
    done = cli(work, "odd.aur", "--show-ast", "-q")
    assert done.returncode == 0, done.stderr
    assert "\\ud800" in done.stderr.lower()
    json.loads(done.stderr)
    (work / "odd_bad.aur").write_text(source + 'model Bad:\n    nonsense = "\\uD800" +\n')
    failed = cli(work, "odd_bad.aur", "--json-errors")
    assert failed.returncode == 1
    assert json.loads(failed.stderr)["ok"] is False


UNROLLED = textwrap.dedent(
    """\
    model Stack(n, width):
        def forward(x):
            for h in range(2):
                x -> dense(width)
                for i in range(n):
                    for j in range(i + 1):
                        x -> dense(width).relu
            return x

    model Net:
        input_shape = (4,)
        def forward(x):
            x -> Stack(2, 8) -> Stack(3, 8) -> dense(2)
    """
)


def test_a_block_left_one_class_per_call_is_a_located_note(work: Path) -> None:
    """Issue 24 item 3: the roller's fallback is named on stderr at the block's line, with
    its reason; stdout, OUT and the exit status are those of ``--quiet``, which drops the
    note; a cache hit says it too (the record keeps the notes beside the output)."""
    (work / "stack.aur").write_text(UNROLLED)
    note = (
        "note: block 'Stack' at 1:7 stays one class per call: "
        "an unnamed 'dense' module in a loop at 4:18\n"
    )
    done = cli(work, "stack.aur", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert done.stderr == note + "compiled stack.aur\n", done.stderr
    quiet = cli(work, "stack.aur", "--no-cache", "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert done.stdout == quiet.stdout and "class Stack_2(nn.Module):" in done.stdout
    written = cli(work, "stack.aur", "net.py")
    assert written.returncode == 0 and written.stdout == ""
    assert written.stderr == note + "compiled stack.aur -> net.py\n", written.stderr
    assert (work / "net.py").read_text() == done.stdout
    cached = cli(work, "stack.aur", "net.py")
    assert cached.returncode == 0
    assert cached.stderr == note + "compiled stack.aur -> net.py (cached)\n", cached.stderr
    assert (work / "net.py").read_text() == done.stdout
    cached_quiet = cli(work, "stack.aur", "net.py", "-q")
    assert cached_quiet.returncode == 0 and cached_quiet.stderr == ""
    assert cli(work, "good.aur").stderr == "compiled good.aur\n"


BRANCHED = textwrap.dedent(
    """\
    model Unit(w, k):
        def forward(x):
            if k in [5, 1]:
                x = x -> dense(w).relu
            else:
                x = x -> dense(w) -> dense(w)
            return x

    model Stack(n):
        def forward(x):
            for i in range(n):
                x = x -> dense(8) as fcs{i}
            return x

    model Net:
        input_shape = (6,)
        def forward(x):
            return x -> Unit(8, 5) -> Unit(8, 3) -> Stack(2) -> Stack(3) -> dense(2)
    """
)


def test_class_per_call_writes_a_class_per_call_with_the_same_weights(work: Path) -> None:
    """Issue 24 item 3's "unless the user asks otherwise": ``--class-per-call`` writes a
    class per distinct call (no Python ``if`` or loop over a count), with no note; both
    files build the same state-dict keys and compute the same; the cache keeps the two
    apart."""
    torch = pytest.importorskip("torch")
    (work / "branched.aur").write_text(BRANCHED)
    shared = cli(work, "branched.aur", "shared.py")
    per_call = cli(work, "branched.aur", "per_call.py", "--class-per-call")
    assert shared.returncode == per_call.returncode == 0, per_call.stderr
    assert per_call.stderr == "compiled branched.aur -> per_call.py\n", per_call.stderr
    one, many = (work / "shared.py").read_text(), (work / "per_call.py").read_text()
    classes = [line.split("(")[0][6:] for line in one.splitlines() if line.startswith("class ")]
    assert classes == ["Unit", "Stack", "Net"], one
    per = [line.split("(")[0][6:] for line in many.splitlines() if line.startswith("class ")]
    assert per == ["Unit", "Unit_2", "Stack", "Stack_2", "Net"], many
    # no branch of the source in Python: an ``if`` only refuses a value the class folded
    # (``if n != 3: raise ValueError(...)``, its constructor still taking ``n``)
    tests = [line for line in many.splitlines() if line.lstrip().startswith("if ")]
    assert all(line.endswith("# written out for this value") for line in tests), many
    assert "for i in range" not in many, many
    again = cli(work, "branched.aur", "--class-per-call")
    assert again.stdout == many and "(cached)" in again.stderr
    assert cli(work, "branched.aur").stdout == one
    modules = []
    for text in (one, many):
        namespace: dict[str, object] = {}
        exec(compile(text, "<generated>", "exec"), namespace)
        modules.append(namespace["Net"]())  # type: ignore[operator]
    assert list(modules[0].state_dict()) == list(modules[1].state_dict())
    modules[1].load_state_dict(modules[0].state_dict(), strict=True)
    x = torch.randn(3, 6)
    torch.testing.assert_close(modules[0](x), modules[1](x), rtol=0, atol=0)
