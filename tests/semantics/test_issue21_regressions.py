"""Issue 21 ("safe by construction"), cases 5 and 8: programs `check` accepted that compile,
run or a tool then failed on. One named test per case; each holds for its class (every
numeric field, every identifier that reaches Python), not only the issue's example."""

from __future__ import annotations

import ast as pyast
import re
from pathlib import Path

import pytest

from aurane import CompilationError, compile_source
from tests.conftest import REPO, run_cli
from tests.helpers import errors

QUICKSTART = (REPO / "examples" / "quickstart.aur").read_text(encoding="utf-8")


def edited(old: str, new: str, source: str = QUICKSTART) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def at(source: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the only occurrence of ``needle``."""
    assert source.count(needle) == 1, needle
    before = source[: source.index(needle)]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def only(source: str) -> tuple[str, int, int]:
    found = errors(source)
    assert len(found) == 1, found
    span = found[0].span
    assert span is not None
    return found[0].code, span.line, span.column


# ------------------------------------------------------------------ case 8: numbers

# Every place a number is accepted, each given an infinite literal; `check` passed them
# and the generated `inf` was a NameError (or compile exited 123).
NUMBER_PLACES = {
    "adam_lr": ("lr=0.003", "lr=HUGE"),
    "sgd_momentum": ("adam(lr=0.003)", "sgd(lr=0.1, momentum=HUGE)"),
    "weight_decay": ("adam(lr=0.003)", "adam(lr=0.003, weight_decay=HUGE)"),
    "gradient_clip": ("epochs = 5", "epochs = 5\n    gradient_clip = HUGE"),
    "step_lr_gamma": ("epochs = 5", "epochs = 5\n    scheduler = step_lr(step_size=1, gamma=HUGE)"),
    "dataset_size": ("size = 256", "size = HUGE"),
    "layer_norm_eps": ("-> dense(32).relu", "-> dense(32).relu -> layer_norm(eps=HUGE)"),
    "leaky_relu": ("-> dense(32).relu", "-> dense(32).leaky_relu(HUGE)"),
    "dropout": ("dropout(0.1)", "dropout(HUGE)"),
    "constant": ("classes = 4", "classes = 4\nscale = HUGE"),
}


@pytest.mark.parametrize("place", NUMBER_PLACES)
@pytest.mark.parametrize("huge", ["1e309", "1.5e400", "9" * 400, "2e308"])
def test_case8_infinite_literal_is_refused_at_the_literal(place: str, huge: str) -> None:
    old, new = NUMBER_PLACES[place]
    source = edited(old, new.replace("HUGE", huge))
    assert only(source) == ("P008", *at(source, huge))
    with pytest.raises(CompilationError):
        compile_source(source)


@pytest.mark.parametrize("place", NUMBER_PLACES)
@pytest.mark.parametrize("formula", ["10.0 ** 400", "1e308 * 10", "2 ** 1024", "-(2 ** 1023) * 2"])
def test_case8_infinite_result_is_refused_where_it_is_computed(place: str, formula: str) -> None:
    old, new = NUMBER_PLACES[place]
    source = edited(old, new.replace("HUGE", f"({formula})"))
    code, line, column = only(source)
    assert code == "R004"
    start_line, start_column = at(source, f"({formula})")
    assert line == start_line and start_column <= column <= start_column + len(formula)


def test_case8_the_largest_finite_numbers_still_compile() -> None:
    """The range is float64's: the edge itself is no error."""
    assert not errors("a = 1.7976931348623157e308\nb = 2 ** 1023\nc = 3 ** 646\n")
    assert only("a = 1.7976931348623159e308\n")[0] == "P008"  # rounds to inf


# ------------------------------------------------------------------ case 8: names as Python reads them


def test_case8_nfkc_equal_dataset_fields_file_and_ligature_file() -> None:
    """`ﬁle` and `file` are one keyword argument to Python: the generated call repeated it."""
    source = edited("batch = 32", 'batch = 32\n    ﬁle = "a"\n    file = "b"')
    assert only(source) == ("S015", *at(source, "ﬁle"))
    assert "write 'file'" in (errors(source)[0].hint or "")


def test_case8_fullwidth_import_field_is_not_emitted_as_the_keyword_import() -> None:
    source = edited("batch = 32", "batch = 32\n    ｉmport = 1")
    assert only(source) == ("S015", *at(source, "ｉmport"))
    assert errors(source)[0].hint == "choose another name"


@pytest.mark.parametrize(
    ("keywords", "code", "needle"),
    [
        ("ｍean=0.5, mean=0.5, std=0.5", "S015", "ｍean"),  # `mean` twice to Python
        ("mean=0.5, mean=0.5, std=0.5", "S008", "mean=0.5, std"),
        ("ｉmport=0.5, std=0.5", "S015", "ｉmport"),
        ("__class__=0.5, std=0.5", "S015", "__class__"),
    ],
    ids=ascii,
)
def test_case8_transform_keywords_are_compared_as_python_reads_them(
    keywords: str, code: str, needle: str
) -> None:
    source = edited("batch = 32", f"batch = 32\n    transforms = [Normalize({keywords})]")
    found = errors(source)
    assert found and found[0].code == code, found
    assert found[0].span is not None
    assert (found[0].span.line, found[0].span.column) == at(source, needle)


def test_case8_nfkc_equal_dataset_names_are_duplicates() -> None:
    """A dataset's name is spelled into `_make_<dataset>_loader`: one name to Python.
    (Models may differ so: the backend's allocator gives their classes distinct names.)"""
    copy = "    from aurane.data.SyntheticImages\n    size = 8\n    image_size = (1, 16, 16)\n"
    source = edited("dataset shapes_val:", f"dataset ｓhapes_val:\n{copy}dataset shapes_val:")
    assert only(source) == ("S008", *at(source, "shapes_val:"))
    assert "Python reads both as 'shapes_val'" in errors(source)[0].message


@pytest.mark.parametrize(
    "line",
    ["use os as rt", "use nn", "use os as random", "use os as ｒt", "use seed", "use os as F"],
    ids=ascii,
)
def test_case8_use_lines_compile_refuses_are_refused_by_check(line: str) -> None:
    """`check` passed them and `compile` refused them (S019): one rule now, in check."""
    source = edited("use torch", line)
    code, line_number, column = only(source)
    assert (code, line_number) == ("S019", 2)
    with pytest.raises(CompilationError) as info:
        compile_source(source)
    assert [d.code for d in info.value.diagnostics] == ["S019"]


def test_case8_training_functions_of_nfkc_equal_models_stay_apart() -> None:
    """`train Ｓ...` and `train S...` made `def train_ｓhapenet` and `def train_shapenet`:
    one function to Python, so the second job replaced the first."""
    model = "model ＳhapeNet:\n    input_shape = (1, 16, 16)\n    def forward(x):\n"
    model += "        x -> flatten() -> dense(classes)\n"
    train = "train ＳhapeNet on shapes:\n    epochs = 1\n"
    code = compile_source(edited("model ShapeNet:", model + "model ShapeNet:") + train)
    tree = pyast.parse(code)
    jobs = [f.name for f in tree.body if isinstance(f, pyast.FunctionDef) and "train" in f.name]
    assert sorted(jobs) == ["train_shapenet", "train_shapenet_2"]


# ------------------------------------------------------------------ case 5: expansion limits

MILLION = """\
model B:
    input_shape = (4,)
    def forward(x):
        x -> dense(4).relu
model M:
    input_shape = (4,)
    def forward(x):
        x -> repeat(B, 1000000) -> dense(2)
"""


def test_case5_a_million_repeats_is_refused_at_the_repeat() -> None:
    """The issue's 8 lines: check passed, then every tool that expands hung."""
    from aurane.ir.expansion import MAX_REPEAT

    assert only(MILLION) == ("T116", 8, 14)
    assert f"{MAX_REPEAT:,}" in errors(MILLION)[0].message
    at_limit = MILLION.replace("1000000", str(MAX_REPEAT)).replace("dense(4).relu", "relu()")
    assert not errors(at_limit)  # the limit itself is fine


def test_case5_a_model_over_the_expanded_limit_is_refused_at_the_repeat() -> None:
    source = MILLION.replace("repeat(B, 1000000)", "repeat(B, 6000) -> repeat(B, 6000)")
    code, line, column = only(source)  # 24,000 operations: each repeat alone is allowed
    assert (code, line, column) == ("T117", 8, 33)  # the repeat that passes the limit
    assert "24,001 operations" in errors(source)[0].message  # and the dense(2)


def nested_blocks(depth: int) -> str:
    """B0 is one dense; each Bi calls B(i-1) twice: 2**depth operations, no repeat at all."""
    lines = ["model B0:\n    input_shape = (4,)\n    def forward(x):\n        x -> dense(4)\n"]
    for i in range(1, depth + 1):
        lines.append(
            f"model B{i}:\n    input_shape = (4,)\n    def forward(x):\n"
            f"        x -> B{i - 1}() -> B{i - 1}()\n"
        )
    return "".join(lines)


def test_case5_nested_blocks_are_counted_without_expanding() -> None:
    """2**30 operations in B30, counted on the compact graphs: the work is the program's."""
    from tests.helpers import calls_made

    small, large = nested_blocks(10), nested_blocks(30)
    assert not errors(small)
    # every model B15..B30 is over the limit; the one error is where it is first crossed:
    # B15 calls B14 (16,384 operations) twice
    line, column = at(large, "B14() -> B14()")
    assert only(large) == ("T117", line, column + len("B14() -> "))
    assert "model 'B15' expands to 32,768 operations" in errors(large)[0].message
    # the check's own work grows with the program (3x the lines), not with 2**30 / 2**10
    assert calls_made(lambda: errors(large)) < 8 * calls_made(lambda: errors(small))


@pytest.mark.parametrize(
    ("tool", "args"),
    [("visualize", ["--expand"]), ("verify", []), ("profile", []), ("compile", ["-o", "m.py"])],
)
def test_case5_every_tool_that_expands_inherits_the_limit(
    tool: str, args: list[str], tmp_path: Path
) -> None:
    (tmp_path / "m.aur").write_text(MILLION, encoding="utf-8")
    result = run_cli(tool, *args, "m.aur", cwd=tmp_path)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "m.aur:8:14: error[T116]" in result.stderr


def test_case5_the_playground_draws_no_model_over_the_limit() -> None:
    """The playground draws models of programs with errors: one over a limit has no graph."""
    from aurane.playground.analyze import analyze

    state = analyze(MILLION, expand=True)
    assert [d["code"] for d in state["diagnostics"]] == ["T116"]
    assert state["diagram"] is not None and state["diagram"]["model"] == "B"  # B alone is fine
    assert "M" not in [m["name"] for m in state["models"]]


def zoo(name: str) -> str:
    return (REPO / "examples" / "zoo" / f"{name}.aur").read_text(encoding="utf-8")


def test_case5_real_models_are_within_the_limits() -> None:
    """The zoo, and its programs grown to the deepest real models, check clean."""
    from aurane.frontend import run_front_end
    from aurane.ir.expansion import MAX_EXPANDED_OPERATIONS, expanded_operations

    bottlenecks = "          -> Bottleneck(256) as layer3.5\n"
    grown = {
        "gpt3_depth": edited("n_layer = 12", "n_layer = 96", zoo("gpt2")),
        "llama_70b_depth": edited("n_layer = 22", "n_layer = 80", zoo("llama")),
        "resnet152_depth": edited(
            bottlenecks, bottlenecks + "          -> repeat(Bottleneck(256), 30)\n", zoo("resnet50")
        ),
    }
    programs = {
        p.stem: p.read_text(encoding="utf-8") for p in (REPO / "examples" / "zoo").glob("*")
    }
    assert len(programs) >= 16  # the single-model programs and the six families
    for name, source in {**programs, **grown, "quickstart": QUICKSTART}.items():
        front = run_front_end(source, f"{name}.aur")
        assert front.ok, (name, [d.message for d in front.diagnostics if d.is_error])
        assert front.graphs
        for graph in front.graphs.values():
            assert expanded_operations(graph) <= MAX_EXPANDED_OPERATIONS // 4, name


def test_case5_a_flat_chain_counts_too() -> None:
    """No repeat, no block: 25,000 operations in one chain, refused where it passes 20,000."""
    from aurane.ir.expansion import MAX_EXPANDED_OPERATIONS

    chain = " -> ".join(["relu()"] * 25_000)
    source = f"model M:\n    input_shape = (4,)\n    def forward(x):\n        x -> {chain}\n"
    code, line, column = only(source)
    assert (code, line) == ("T117", 4)
    assert column == len("        x -> ") + 1 + MAX_EXPANDED_OPERATIONS * len("relu() -> ")


# ------------------------------------------------------------------ case 8: budgets, --validate


def encoder_example() -> str:
    """docs/language.md's Encoder example (symbolic sizes and a budget), as documented."""
    text = (REPO / "docs" / "language.md").read_text(encoding="utf-8")
    block = text.split("```aur\nseq = dim(1, 2048)\n", 1)[1].split("```", 1)[0]
    return "seq = dim(1, 2048)\n" + block


@pytest.mark.parametrize("at_clause", ["at batch 0", "at batch 32, seq 0", "at batch 0, seq 512"])
def test_case8_budget_at_batch_0_is_a_located_error(at_clause: str) -> None:
    """check, compile and profile exited 123 (the profiler divided by the batch)."""
    source = re.sub(r"at batch 32, seq 512", at_clause, encoder_example())
    zero = re.search(r"(batch|seq) 0\b", source)
    assert zero is not None
    line, column = at(source, zero.group(0))
    assert only(source) == ("S112", line, column + len(zero.group(1)) + 1)  # at the 0


def test_case8_budget_at_a_size_outside_its_range() -> None:
    source = encoder_example().replace("seq 512", "seq 4096")
    code, line, _ = only(source)
    assert (code, line) == ("S112", at(source, "budget")[0])
    assert "dim(1, 2048)" in errors(source)[0].message


@pytest.mark.parametrize("tool", ["check", "compile", "profile"])
def test_case8_budget_at_batch_0_never_exits_123(tool: str, tmp_path: Path) -> None:
    (tmp_path / "m.aur").write_text(
        encoder_example().replace("at batch 32, seq 512", "at batch 0"), encoding="utf-8"
    )
    result = run_cli(tool, "m.aur", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "error[S112]" in result.stderr


def test_case8_compile_validate_accepts_symbolic_sizes(tmp_path: Path) -> None:
    """--validate called every symbolic size a bad shape: an internal error, exit 123."""
    (tmp_path / "encoder.aur").write_text(encoder_example(), encoding="utf-8")
    result = run_cli("compile", "--validate", "encoder.aur", "-o", "encoder.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "class Encoder" in (tmp_path / "encoder.py").read_text(encoding="utf-8")
    strided = encoder_example().replace("dim(1, 2048)", "dim(8, 2048)")
    strided = strided.replace(
        "x -> dense(512).relu",
        "x -> transpose(1, 2) -> conv1d(512, 3, stride=2) -> transpose(1, 2)",
    )
    (tmp_path / "strided.aur").write_text(strided, encoding="utf-8")
    result = run_cli("compile", "--validate", "strided.aur", "-o", "strided.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_case5_blocks_nested_past_the_limit_are_refused_without_recursion() -> None:
    """2,000 blocks each calling the next: lowering recursed per level (RecursionError past
    about 190 levels, exit 123); now S113 where the chain passes 32 levels, found without
    recursion (the count and the cycle check are iterative too)."""
    from aurane.semantics.check import MAX_BLOCK_NESTING

    def chain(levels: int) -> str:
        lines = ["model B0:\n    input_shape = (4,)\n    def forward(x):\n        x -> dense(4)\n"]
        for i in range(1, levels):
            lines.append(
                f"model B{i}:\n    input_shape = (4,)\n    def forward(x):\n"
                f"        x -> B{i - 1}()\n"
            )
        return "".join(lines)

    assert not errors(chain(MAX_BLOCK_NESTING))
    deep = chain(2000)
    line, column = at(deep, f"x -> B{MAX_BLOCK_NESTING - 1}()\n")  # B32 calls B31: 33 levels
    assert only(deep) == ("S113", line, column + len("x -> "))
