"""Hypothesis strategies: programs with messy but valid layout, for formatter and lint tests.

Two families: models built from real catalog operations (so the IR is non-trivial and the
"same IR" check means something) and free-form syntax (random names, arithmetic, calls), both
written with random spacing, indentation widths, brackets broken over lines, chains broken
before arrows, trailing and own-line comments, blank lines and trailing whitespace.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from tests.helpers import RESERVED_WORDS

names = st.from_regex(r"\A[a-z_][a-z0-9_]{0,6}\Z").filter(lambda n: n not in RESERVED_WORDS)
ints = st.sampled_from(["0", "1", "2", "8", "16", "1_000", "42"])
floats = st.sampled_from(["0.5", "1e-4", "2.", ".25", "3E+2", "1_0.0_1", "0.1"])
strings = st.sampled_from(["'a'", '"b  c"', r"'\n\t'", r'"\u00e9\x41"', "'it\\'s'", '""', "'#'"])
literals = st.sampled_from(["true", "True", "false", "False", "None", "none", "null"])

Sep = Callable[[], str]


class Layout:
    """Random layout decisions, drawn lazily while a program is written."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.count = 0

    def space(self) -> str:
        return self.draw(st.sampled_from(["", " ", "  "]))

    def around(self) -> str:
        return self.draw(st.sampled_from([" ", " ", "", "   "]))

    def comment(self) -> str:
        self.count += 1
        return f"# note {self.count}" + self.draw(st.sampled_from(["", " ", "  #x"]))

    def end(self) -> str:
        """What ends a code line: maybe a trailing comment, maybe trailing blanks."""
        tail = self.draw(st.sampled_from(["", "", "", "  " + self.comment(), " " * 2]))
        return tail + "\n"

    def inside(self, indent: int) -> str:
        """A separator inside brackets: nothing, spaces, or a line break (with comments)."""
        choice = self.draw(st.integers(0, 9))
        pad = " " * (indent + self.draw(st.integers(1, 6)))
        if choice < 6:
            return self.space()
        if choice < 8:
            return self.end() + pad
        return "\n" + " " * self.draw(st.integers(0, 12)) + self.comment() + "\n" + pad

    def blank(self) -> str:
        return self.draw(st.sampled_from(["", "", "\n", "\n\n", "\n   \n\n\n"]))

    def own_comment(self) -> str:
        if self.draw(st.integers(0, 4)):
            return ""
        return " " * self.draw(st.integers(0, 10)) + self.comment() + "\n"


def _bracket(lay: Layout, indent: int, open_: str, parts: list[str], close: str) -> str:
    if not parts:
        return open_ + lay.inside(indent) + close if lay.draw(st.booleans()) else open_ + close
    text = open_ + lay.inside(indent) + parts[0]
    for part in parts[1:]:
        text += "," + lay.inside(indent) + part
    if lay.draw(st.booleans()):
        text += ","
    return text + lay.inside(indent) + close


def expr(lay: Layout, indent: int, depth: int = 0) -> str:
    draw = lay.draw
    kind = draw(st.integers(0, 9 if depth < 3 else 4))
    if kind <= 4:
        return draw(st.one_of(ints, floats, strings, literals, names))
    if kind == 5:
        op = draw(st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]))
        return f"{expr(lay, indent, depth + 1)}{lay.around()}{op}{lay.around()}{expr(lay, indent, depth + 1)}"
    if kind == 6:
        return (
            "(" + expr(lay, indent, depth + 1) + ")"
            if draw(st.booleans())
            else "-" + expr(lay, indent, depth + 1)
        )
    items = [expr(lay, indent, depth + 1) for _ in range(draw(st.integers(0, 3)))]
    if kind == 7:
        return _bracket(lay, indent, "[", items, "]")
    if kind == 8:
        if len(items) == 1:
            return "(" + lay.space() + items[0] + "," + lay.space() + ")"
        return _bracket(lay, indent, "(", items, ")") if len(items) != 1 else "(" + items[0] + ",)"
    keywords = [
        f"{draw(names)}{lay.space()}={lay.space()}{expr(lay, indent, depth + 1)}"
        for _ in range(draw(st.integers(0, 2)))
    ]
    if draw(st.integers(0, 2)) == 0:  # issue 24's conditions, items and functions
        return _condition(lay, indent, depth)
    return draw(names) + _bracket(lay, indent, "(", items + keywords, ")")


def _condition(lay: Layout, indent: int, depth: int) -> str:
    draw = lay.draw
    left, right = expr(lay, indent, depth + 1), expr(lay, indent, depth + 1)
    kind = draw(st.integers(0, 5))
    if kind == 0:
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in"]))
        return f"{left}{lay.around()}{op} {right}"
    if kind == 1:
        return f"{left} {draw(st.sampled_from(['and', 'or']))} {right}"
    if kind == 2:
        return f"not {left}"
    if kind == 3:
        return f"{left} if {right} else {expr(lay, indent, depth + 1)}"
    if kind == 4:
        return f"{draw(names)}[{left}]"
    fn = draw(st.sampled_from(["max", "min", "len", "make_divisible", "round", "ceil"]))
    return f"{fn}({left},{lay.space()}{right})"


# ---------------------------------------------------------------- valid models

_OPS = [
    ("dense({n})", True),
    ("dense({n}, bias={b})", True),
    ("dropout(0.{d})", False),
    ("layer_norm()", False),
    ("relu()", False),
    ("gelu()", False),
    ("batchnorm()", False),
]
_SUFFIXES = ["", "", ".relu", ".gelu", ".tanh", ".leaky_relu(0.2)", ".residual", ".sigmoid"]


def _step(lay: Layout, indent: int, width: str) -> str:
    draw = lay.draw
    template, _ = draw(st.sampled_from(_OPS))
    n = draw(st.sampled_from([width, "4", "8", f"{width} * 2", f"({width} + 1) // 2", "2 ** 3"]))
    step = template.format(
        n=n, b=draw(st.sampled_from(["true", "False"])), d=draw(st.integers(0, 9))
    )
    step = step.replace("(", "(" + lay.inside(indent), 1) if "()" not in step else step
    suffix = draw(st.sampled_from(_SUFFIXES))
    if suffix == ".residual" and not step.startswith(
        ("dropout", "layer_norm", "relu", "gelu", "batchnorm")
    ):
        suffix = ""
    return step + suffix


def _layer_name(lay: Layout) -> str:
    """A fresh layer path for ``as``: plain, dotted or numbered (``l3``, ``m.l3``, ``m.3``)."""
    lay.count += 1
    return lay.draw(st.sampled_from(["l{n}", "m{n}.l{n}", "seq{n}.0", "a{n}.b.{n}"])).format(
        n=lay.count
    )


def _named(lay: Layout, step: str) -> str:
    """Maybe ``step as NAME`` (random spacing around 'as')."""
    if lay.draw(st.integers(0, 2)) or ".residual" in step:  # a residual add is no layer
        return step
    return f"{step}{lay.draw(st.sampled_from([' ', '  ']))}as {_layer_name(lay)}"


def chain(
    lay: Layout, indent: int, head: str, source: str, width: str, *, names: bool = True
) -> str:
    steps = [_step(lay, indent, width) for _ in range(lay.draw(st.integers(1, 5)))]
    if names:
        steps = [_named(lay, step) for step in steps]
    else:  # a step of a named chain (an nn.Sequential) cannot add a residual
        steps = [step.replace(".residual", "") for step in steps]
    text = f"{head}{source}{lay.around()}->{lay.around()}{steps[0]}"
    for step in steps[1:]:
        if lay.draw(st.booleans()):
            text += f"{lay.around()}->{lay.around()}{step}"
        else:
            pad = " " * (indent + lay.draw(st.integers(1, 12)))
            text += lay.end() + lay.own_comment() + f"{pad}->{lay.around()}{step}"
    return text


@st.composite
def valid_model(draw: st.DrawFn, lay: Layout, unit: int, name: str, width: str) -> str:
    features = draw(st.sampled_from(["8", width, "4"]))
    inner, body = " " * unit, " " * (unit * 2)
    text = f"model {name}{lay.space()}:{lay.end()}"
    text += f"{inner}input_shape{lay.around()}={lay.around()}({features},){lay.end()}"
    if draw(st.booleans()):
        text += f"{inner}hidden{lay.around()}={lay.around()}{width} * 2{lay.end()}{lay.blank()}"
    text += lay.own_comment()
    text += f"{inner}def forward({lay.space()}x{lay.space()}){lay.space()}:{lay.end()}"
    for _ in range(draw(st.integers(1, 3))):
        text += lay.own_comment() + chain(lay, unit * 2, body, "x", width) + lay.end() + lay.blank()
    if draw(st.booleans()):  # a named chain: one nn.Sequential
        inner = chain(lay, unit * 2 + 4, "(", "x", width, names=False)
        text += f"{body}x{lay.around()}={lay.around()}{inner}) as {_layer_name(lay)}{lay.end()}"
    if draw(st.booleans()):
        text += (
            f"{body}h{lay.around()}={lay.around()}dense({lay.inside(unit * 2)}x, 4).relu{lay.end()}"
        )
        text += f"{body}return {lay.space()}add(h,{lay.inside(unit * 2)}dense(x, 4)){lay.end()}"
    return text


@st.composite
def parameterised_block(draw: st.DrawFn, lay: Layout, unit: int, index: int) -> str:
    """``model B(w, k: int = 2):`` and a model calling it in a chain, by keyword and in
    ``repeat``; the calls keep the width so that ``repeat`` maps a shape to itself."""
    inner, body = " " * unit, " " * (unit * 2)
    sep = f",{lay.space()}"
    default = draw(st.sampled_from(["k: int = 2", "k=2", "k:int=1 + 1", "k = 2"]))
    text = f"model B{index}({lay.space()}w{sep}{default}{lay.space()}){lay.space()}:{lay.end()}"
    text += f"{inner}def forward(x):{lay.end()}"
    text += f"{body}x -> dense(w * k) as fc -> relu(){lay.end()}"
    text += lay.blank() + lay.own_comment()
    call = draw(st.sampled_from(["B{i}(4, k=2)", "B{i}(w=8, k=1)", "B{i}(8,{s}k = 1)"]))
    call = call.format(i=index, s=lay.space())
    text += f"model C{index}:{lay.end()}{inner}input_shape = (8,){lay.end()}"
    text += f"{inner}def forward(x):{lay.end()}"
    text += f"{body}x -> {call} as {_layer_name(lay)}{lay.end()}"
    if draw(st.booleans()):
        text += f"{body}x -> repeat(B{index}(8, k=1),{lay.space()}2) as {_layer_name(lay)}"
        text += lay.end()
    if draw(st.booleans()):
        text += f"{body}h = B{index}(x, 4) as {_layer_name(lay)}{lay.end()}"
        text += f"{body}return h{lay.end()}"
    return text


@st.composite
def control_block(draw: st.DrawFn, lay: Layout, unit: int, index: int) -> str:
    """Issue 24: ``if``/``for`` with a tuple target, name templates, quoted parts, ``*``,
    an operation-valued parameter, init rules, splicing and a variant calling the block."""
    inner = " " * unit
    body, deeper, deepest = (" " * (unit * k) for k in (2, 3, 4))
    text = f"cfg{index}{lay.around()}={lay.around()}[(8, 1),{lay.space()}(4, 2)]{lay.end()}"
    text += lay.blank() + lay.own_comment()
    text += f"model Unit{index}(c):{lay.end()}{inner}def forward(x):{lay.end()}"
    text += f"{body}return x -> dense(c) -> relu(){lay.end()}{lay.blank()}"
    act = draw(st.sampled_from(["act=relu", "act = gelu", "act=none"]))
    text += f"model S{index}(w,{lay.space()}{act},{lay.space()}deep: bool = true):{lay.end()}"
    if draw(st.booleans()):
        text += f"{inner}init{lay.space()} dense:{lay.space()}normal(0.02){lay.end()}"
    if draw(st.booleans()):
        text += f"{inner}init *.weight: zeros{lay.end()}"
    text += f"{inner}def forward(x):{lay.end()}"
    loop = draw(st.sampled_from(["j, (c, k) in enumerate(cfg{i})", "j,(c,k) in enumerate(cfg{i})"]))
    text += f"{body}for {loop.format(i=index)}{lay.space()}:{lay.end()}"
    text += lay.own_comment()
    text += f"{deeper}if deep and c > 4:{lay.end()}"
    text += f"{deepest}x -> dense(c * k).act as layers{{{lay.space()}j{lay.space()}}}{lay.end()}"
    text += f"{deeper}elif c == 4{lay.space()}:{lay.end()}"
    text += f'{deepest}x -> dense(w) as blocks.{{j}}."b{{j}}-0"{lay.end()}'
    text += f"{deeper}else:{lay.end()}{deepest}x -> act(){lay.end()}"
    if draw(st.booleans()):
        text += f"{body}x -> *Unit{index}(4) as tail.*{lay.end()}"
    text += f"{body}x -> dense(8) as tail.*{lay.end()}{body}return x{lay.end()}"
    text += lay.blank() + lay.own_comment()
    text += f"model V{index}{lay.around()}={lay.around()}S{index}(4,{lay.space()}deep=false):"
    text += f"{lay.end()}{inner}input_shape = (8,){lay.end()}"
    return text


# ---------------------------------------------------------------- whole programs


@st.composite
def programs(draw: st.DrawFn) -> str:
    lay = Layout(draw)
    out = lay.own_comment()
    width = draw(names)
    out += f"{width}{lay.around()}={lay.around()}{draw(st.sampled_from(['8', '4 * 2', '16 // 2']))}{lay.end()}"
    for index in range(draw(st.integers(1, 4))):
        unit = draw(st.sampled_from([2, 3, 4, 5]))
        kind = draw(
            st.sampled_from(
                [
                    "model",
                    "model",
                    "block",
                    "control",
                    "const",
                    "use",
                    "experiment",
                    "dataset",
                    "train",
                ]
            )
        )
        out += lay.blank() + lay.own_comment()
        if kind == "model":
            out += draw(valid_model(lay, unit, f"M{index}", width))
        elif kind == "block":
            out += draw(parameterised_block(lay, unit, index))
        elif kind == "control":
            out += draw(control_block(lay, unit, index))
        elif kind == "const":
            out += f"{draw(names)}{lay.around()}={lay.around()}{expr(lay, 0)}{lay.end()}"
        elif kind == "use":
            alias = draw(st.sampled_from(["", f" as {draw(names)}"]))
            out += f"use {draw(names)}.{draw(names)}{alias}{lay.end()}"
        else:
            header = {
                "experiment": "experiment E{i}",
                "dataset": "dataset d{i}",
                "train": "train M{i} on d{i}",
            }
            out += header[kind].format(i=index) + ":" + lay.end()
            if kind == "dataset":
                out += " " * unit + "from aurane.data.SyntheticImages" + lay.end()
            for _ in range(draw(st.integers(1, 3))):
                out += (
                    lay.own_comment() + " " * unit + f"{draw(names)} = {expr(lay, unit)}{lay.end()}"
                )
    return out + lay.own_comment() + lay.blank()
