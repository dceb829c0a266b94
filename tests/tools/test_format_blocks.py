"""``aurane format`` on issue 10's syntax: block parameters, ``as NAME`` and named chains."""

from __future__ import annotations

import textwrap

import pytest

from aurane.syntax.parser import parse_program
from aurane.syntax.printer import strip_spans
from aurane.tools.format import format_source


def fmt(source: str) -> str:
    text = textwrap.dedent(source).lstrip("\n")
    result = format_source(text)
    assert result.error is None and result.output is not None, (result.error, result.diagnostics)
    assert format_source(result.output).output == result.output, "not stable under one more pass"
    before, _ = parse_program(text, "a.aur")
    after, _ = parse_program(result.output, "a.aur")
    assert strip_spans(before) == strip_spans(after)
    return result.output


_HEAD = "model N:\n    input_shape = (8,)\n    def forward(x):\n"

CASES = {
    "parameters, PEP 8 spacing": (
        "model B( width,stride:int=1,name : str='a',f=1.5*2 ):\n    def forward(x):\n"
        "        x -> dense(width)\n",
        "model B(width, stride: int = 1, name: str = 'a', f=1.5 * 2):\n    def forward(x):\n"
        "        x -> dense(width)\n",
    ),
    "names on steps, statements and returns": (
        _HEAD + "        x->dense(4)  as  fc->dense(2).relu as  head.0\n"
        "        h = dense( x,4 ) as layer2 .0\n        return dense(h, 2)as out\n",
        _HEAD + "        x -> dense(4) as fc -> dense(2).relu as head.0\n"
        "        h = dense(x, 4) as layer2.0\n        return dense(h, 2) as out\n",
    ),
    "named chain keeps its parentheses": (
        _HEAD + "        h = ( x->dense(4)->relu() )as downsample\n        return h\n",
        _HEAD + "        h = (x -> dense(4) -> relu()) as downsample\n        return h\n",
    ),
    "unnamed parentheses around a whole chain are dropped": (
        _HEAD + "        h = (x -> dense(4))\n        return h\n",
        _HEAD + "        h = x -> dense(4)\n        return h\n",
    ),
    "a parenthesised chain as the source of another": (
        _HEAD + "        h = (x->dense(4)) as a->dense(2)\n        g = (x -> dense(4)) -> relu()\n"
        "        return add(h, (g -> relu()))\n",
        _HEAD
        + "        h = (x -> dense(4)) as a -> dense(2)\n        g = (x -> dense(4)) -> relu()\n"
        "        return add(h, (g -> relu()))\n",
    ),
    "block calls and repeat": (
        _HEAD + "        x -> B( 8,stride = 2 ) as b0 -> repeat( B(8),2 )as layer1\n"
        "        return B(x,8) as last\n",
        _HEAD + "        x -> B(8, stride=2) as b0 -> repeat(B(8), 2) as layer1\n"
        "        return B(x, 8) as last\n",
    ),
    "weight tying keyword": (
        _HEAD + "        x -> dense(4,bias=false,tie=transformer.wte)as lm_head\n",
        _HEAD + "        x -> dense(4, bias=false, tie=transformer.wte) as lm_head\n",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_expected_layout(name: str) -> None:
    source, expected = CASES[name]
    assert fmt(source) == expected


def test_long_named_chain_is_laid_out_black_style() -> None:
    step = "dense(1234567890, bias=false)"
    out = fmt(_HEAD + f"        h = (x -> {step} -> {step} -> {step}) as downsample\n")
    assert out == _HEAD + (
        "        h = (\n"
        f"            x -> {step}\n"
        f"              -> {step}\n"
        f"              -> {step}\n"
        "        ) as downsample\n"
    )


def test_named_chain_broken_by_its_author_stays_broken() -> None:
    source = _HEAD + "        h = (x -> dense(4)\n          -> relu()) as ds\n        return h\n"
    expected = (
        "        h = (\n            x -> dense(4)\n              -> relu()\n        ) as ds\n"
    )
    assert fmt(source) == _HEAD + expected + "        return h\n"


def test_exploded_call_keeps_its_name_after_the_closer() -> None:
    out = fmt(_HEAD + "        x -> dense(" + ", ".join(["123456789"] * 12) + ") as layer1.0.fc\n")
    assert out.splitlines()[-1] == "        ) as layer1.0.fc"
    assert all(len(line) <= 100 for line in out.splitlines())


def test_comments_inside_a_named_chain_stay() -> None:
    source = (
        _HEAD + "        h = (x\n              -> dense(4)  # one\n                # own\n"
        "             -> relu()) as ds\n        return h\n"
    )
    out = fmt(source)
    assert "# one" in out and "# own" in out and out.count(") as ds") == 1


def test_comment_in_a_parameter_list_moves_after_the_header() -> None:
    out = fmt(
        "model B(\n    width,  # c\n    stride=1):\n    def forward(x):\n        x -> dense(width)\n"
    )
    assert out.splitlines()[0] == "model B(width, stride=1):  # c"
