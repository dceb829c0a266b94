"""Hypothesis: mutated sources never crash the parser; grammar-generated programs parse cleanly.

CI budget: about 1,150 examples in all. A campaign scales every test with
``AURANE_FUZZ_EXAMPLES=100000`` (the per-test max_examples).
"""

from __future__ import annotations

import os
import re
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aurane.diagnostics import Diagnostic
from aurane.source import split_lines
from aurane.syntax import ast
from aurane.syntax.parser import parse_program
from aurane.syntax.printer import dump_ast, strip_spans
from tests.conftest import corpus_paths
from tests.helpers import RESERVED_WORDS

_CAMPAIGN = os.environ.get("AURANE_FUZZ_EXAMPLES")


def budget(ci_examples: int) -> settings:
    examples = int(_CAMPAIGN) if _CAMPAIGN else ci_examples
    return settings(
        max_examples=examples,
        deadline=None,  # no wall-clock limit: growth is bounded as work (test_depth_ladder)
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        derandomize=_CAMPAIGN is None,  # CI is reproducible; campaigns explore
    )


EMBEDDED = [
    textwrap.dedent(source)
    for source in (
        """\
        use torch
        width = 32 * 2 - 1
        model Net:
            input_shape = (3, 32, 32)
            def forward(x):
                x -> conv2d(16, kernel=3).relu   # trailing
                  -> maxpool(2)
                  -> flatten()
                  -> dense(width).leaky_relu(0.2)
        """,
        """\
        dataset faces:
            from torchvision.datasets.FakeData
            transforms = [ToTensor(), Normalize((0.5,), (0.5,))]
            name = "a\\tb\\u00e9"
        model G:
            def forward(z):
                h = dense(z, 8)
                out = add(h, dense(h, 8)).relu
                return out
        train_gan G and G on faces:
            generator_optimizer = adam(lr=2e-4, betas=(0.5, 0.999))
        """,
        """\
        experiment E:
            seed = 1_000
        train Net on data:
            metrics = [
                accuracy,
                f1,
            ]
            early_stopping = true
        """,
    )
]
SOURCES = EMBEDDED + sorted(p.read_text(encoding="utf-8") for p in corpus_paths())
_PIECES = re.compile(r"\w+|\s+|.", re.DOTALL)
SPECIAL = [
    "\ufeff",
    "\x00",
    "\r",
    "\r\n",
    "\u2028",
    "\ud800",
    "\udfff",
    "\t",
    "\\",
    "'",
    '"',
    "(",
    ")",
    "->",
    ":",
    "#",
    "\n    ",
    "\x0c",
    "\u00a0",
    "é",
    "1e999",
    "9" * 40,
]


def check_well_formed(text: str, diagnostics: list[Diagnostic]) -> None:
    line_count = len(split_lines(text))
    for diag in diagnostics:
        assert diag.stage == "parse" and diag.code.startswith("P")
        assert diag.span is not None, diag
        span = diag.span
        assert 1 <= span.line <= line_count + 1, (diag, line_count)
        assert 1 <= span.end_line <= line_count + 1, (diag, line_count)
        assert span.column >= 1 and (span.line, span.column) <= (span.end_line, span.end_column)
        assert diag.message and diag.message == diag.message.strip()


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(_one_mutation(text))
    return text


def _one_mutation(text: str) -> st.SearchStrategy[str]:
    size = max(len(text), 1)
    offset = st.integers(0, size)
    pieces = _PIECES.findall(text) or [""]
    index = st.integers(0, len(pieces) - 1)

    def flip(at: int, bit: int) -> str:
        data = bytearray(text.encode("utf-8", "surrogatepass"))
        if data:
            data[at % len(data)] ^= 1 << bit
        return data.decode("utf-8", "surrogateescape")  # invalid UTF-8 becomes lone surrogates

    def edit(kind: str, i: int, j: int) -> str:
        out = list(pieces)
        if kind == "delete":
            del out[i]
        elif kind == "duplicate":
            out.insert(i, out[i])
        else:
            out[i], out[j] = out[j], out[i]
        return "".join(out)

    return st.one_of(
        st.builds(flip, offset, st.integers(0, 7)),
        st.builds(edit, st.sampled_from(["delete", "duplicate", "swap"]), index, index),
        st.builds(lambda at: text[:at], offset),
        st.builds(lambda at, s: text[:at] + s + text[at:], offset, st.sampled_from(SPECIAL)),
        st.builds(lambda at, s: text[:at] + s + text[at:], offset, st.text(max_size=4)),
    )


@budget(500)
@given(mutated())
def test_mutated_sources_give_diagnostics_never_exceptions(text: str) -> None:
    program, diagnostics = parse_program(text, "fuzz.aur")
    check_well_formed(text, diagnostics)
    if program is not None:
        dump_ast(program)
        strip_spans(program)


@budget(300)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(text: str) -> None:
    program, diagnostics = parse_program(text)
    check_well_formed(text, diagnostics)
    assert program is not None


# ---------------------------------------------------------------- grammar-generated programs

names = st.from_regex(r"\A[a-zA-Z_][a-zA-Z0-9_]{0,7}\Z").filter(
    lambda n: n not in RESERVED_WORDS
) | st.sampled_from(["größe", "π", "naïve_2", "x"])
dotted = st.lists(names, min_size=1, max_size=3).map(".".join)
ints = st.integers(0, 10**12).map(str) | st.sampled_from(["1_000", "0", "42"])
floats = st.sampled_from(["0.5", "1e-4", "2.", ".25", "3E+2", "1_0.0_1"])
strings = st.sampled_from(["'a'", '"b c"', r"'\n\t'", r'"\u00e9\x41"', "'it\\'s'", '""'])
literals = st.sampled_from(["true", "True", "false", "False", "None", "none", "null"])


def _join(parts: list[str], open_: str, close: str, trailing: bool) -> str:
    return open_ + ", ".join(parts) + ("," if trailing and parts else "") + close


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    items = st.lists(children, min_size=1, max_size=3)
    keywords = st.lists(st.tuples(names, children).map("=".join), max_size=2)
    return st.one_of(
        st.builds(
            lambda a, op, b: f"{a} {op} {b}",
            children,
            st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]),
            children,
        ),
        children.map(lambda e: f"-{e}"),
        children.map(lambda e: f"({e})"),
        st.builds(lambda xs: _join(xs, "[", "]", False), items),
        st.builds(lambda x, xs: "(" + ", ".join([x, *xs]) + ",)", children, items),
        st.builds(lambda f, a, k: f + _join(a + k, "(", ")", False), dotted, items, keywords),
    )


empties = st.sampled_from(["[]", "()", "f()", "a.b()"])
exprs = st.recursive(ints | floats | strings | literals | dotted | empties, _extend, max_leaves=8)
args = st.lists(exprs, max_size=2)
suffix = st.sampled_from([".relu", ".residual", ".leaky_relu(0.2)", ".softmax(dim=-1)", ""])
steps = st.builds(lambda f, a, s: f"{f}({', '.join(a)}){s}", names, args, suffix) | names


@st.composite
def forward_body(draw: st.DrawFn, pad: str) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        source = draw(names)
        chain = draw(st.lists(steps, min_size=1, max_size=4))
        if draw(st.booleans()):
            lines.append(f"{source} -> " + " -> ".join(chain))
        else:  # one step per line, continued with '->'
            lines.append(f"{source} -> {chain[0]}")
            lines += [f"{' ' * (len(source) + 1)}-> {step}" for step in chain[1:]]
        if draw(st.booleans()):
            target, func = draw(names), draw(names)
            lines.append(f"{target} = {func}({draw(names)}, {draw(exprs)}){draw(suffix)}")
    if draw(st.booleans()):
        lines.append(f"return {draw(names)}")
    return [pad + line for line in lines]


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, list[str]]:
    pad = " " * draw(st.sampled_from([2, 3, 4]))
    out: list[str] = []
    kinds: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(
            st.sampled_from(["use", "const", "experiment", "dataset", "model", "train", "gan"])
        )
        kinds.append(kind)
        out += draw(_statement(kind, pad))
        if draw(st.booleans()):
            out.append(draw(st.sampled_from(["", "# note", "   # indented note"])))
    return "\n".join(out) + "\n", kinds


def fields(pad: str) -> st.SearchStrategy[list[str]]:
    field = st.builds(
        lambda n, v, c: f"{pad}{n} = {v}{c}", names, exprs, st.sampled_from(["", "  # why"])
    )
    return st.lists(field, min_size=1, max_size=3)


@st.composite
def _statement(draw: st.DrawFn, kind: str, pad: str) -> list[str]:
    name = draw(names)
    match kind:
        case "use":
            alias = draw(st.sampled_from(["", f" as {draw(names)}"]))
            return [f"use {draw(dotted)}{alias}"]
        case "const":
            return [f"{name} = {draw(exprs)}"]
        case "experiment":
            return [f"experiment {name}:", *draw(fields(pad))]
        case "dataset":
            return [f"dataset {name}:", f"{pad}from {draw(dotted)}", *draw(fields(pad))]
        case "model":
            body = draw(forward_body(pad * 2))
            return [
                f"model {name}:",
                *draw(fields(pad)),
                f"{pad}def forward({draw(names)}):",
                *body,
            ]
        case "train":
            return [f"train {name} on {draw(names)}:", *draw(fields(pad))]
    return [f"train_gan {name} and {draw(names)} on {draw(names)}:", *draw(fields(pad))]


_KIND_OF = {
    "use": ast.Use,
    "const": ast.Constant,
    "experiment": ast.Experiment,
    "dataset": ast.Dataset,
    "model": ast.Model,
    "train": ast.Train,
    "gan": ast.TrainGan,
}


@budget(250)
@given(programs())
def test_generated_programs_parse_without_errors(generated: tuple[str, list[str]]) -> None:
    text, kinds = generated
    program, diagnostics = parse_program(text)
    assert diagnostics == [], (text, diagnostics)
    assert program is not None
    assert [type(s) for s in program.statements] == [_KIND_OF[k] for k in kinds]
    for model in program.models:
        assert model.forward is not None and model.forward.body


@budget(100)
@given(programs())
def test_layout_does_not_change_the_structure(generated: tuple[str, list[str]]) -> None:
    text, _ = generated
    crlf = "\ufeff" + text.replace("\n", "\r\n")
    first, _ = parse_program(text)
    second, diagnostics = parse_program(crlf)
    assert diagnostics == []
    assert strip_spans(first) == strip_spans(second)
