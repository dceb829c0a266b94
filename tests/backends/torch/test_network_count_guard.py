"""Issue 24 item 3: a network class takes its loop counts as constructor arguments, so a
class built by hand at a count no variant gives (an edited entry class, ``Net(4, 3)``)
must compute what that count's variant written out computes, whatever the loop's form,
also where every variant agrees on the count. Where forward could not run the source's
loop, it was written out for the variants' count while ``__init__`` still looped over
the parameter: the extra modules were made and silently never applied. Each form here
rolls (each variant builds and computes as written out) and either passes that check,
or, where forward is still written out for the variants' count, refuses another count
when built (``ValueError``)."""

from __future__ import annotations

import re
import textwrap

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_networks  # noqa: E402
from tests.backends.torch.one_class import build, rolls_exactly, same  # noqa: E402

UNIT = """
model Unit(width):
    def forward(x):
        return x -> dense(width).relu as fc
"""


def network(
    body: str,
    *,
    params: str = "width, n",
    given: tuple[str, str] = ("4, 2", "6, 2"),
    shape: tuple[int, ...] = (5,),
    before: str = "",
    blocks: str = "",
    constants: str = "",
) -> str:
    """A network of a stem, ``body`` and a head, with two variants that agree on the
    count (``given``)."""
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return (
        f"use torch\n{blocks}\nmodel Net({params}):\n{constants}    def forward(x):\n"
        f"        x -> dense(width) as stem\n{before}{lines}\n"
        "        return x -> dense(3) as head\n\n"
        f"model small = Net({given[0]}):\n    input_shape = {shape!r}\n\n"
        f"model wide = Net({given[1]}):\n    input_shape = {shape!r}\n"
    )


ITEMS = {"params": "width, widths", "given": ("4, [8, 6]", "6, [16, 12]")}
LAYERS = {"params": "width, layers", "given": ("4, [2, 2]", "6, [2, 2]")}
SKIP_INNER = """
    for i in range(n):
        s = x
        for j in range(2):
            x -> dense(width * (i + 1)) as downs{i}.{j} -> relu()
    s -> dense(width) as lateral
    x -> dense(width) as up
    x = add(x, s)
"""

# name: (source, the class built at another count)
FORMS: dict[str, tuple[str, str]] = {
    "named": (network("for i in range(n):\n    x -> dense(width) as fc{i}"), "Net(4, 3)"),
    "unnamed": (network("for i in range(n):\n    x -> dense(width).relu"), "Net(4, 3)"),
    "branch": (
        network(
            """
            for i in range(n):
                if i == 0:
                    x -> dense(width) as fc{i}
                else:
                    x -> dense(width) as fc{i} -> relu()
            """
        ),
        "Net(4, 3)",
    ),
    "branch_on_a_parameter": (
        network(
            """
            for i in range(n):
                x -> dense(width) as fc{i}
                if act:
                    x -> relu()
            """,
            params="width, n, act: bool",
            given=("4, 2, true", "6, 2, true"),
        ),
        "Net(4, 3, False)",
    ),
    "residual": (
        network(
            "for i in range(n):\n    h = x -> dense(width) as fc{i} -> relu()\n    x = add(x, h)"
        ),
        "Net(4, 3)",
    ),
    "concat": (
        network(
            "for i in range(n):\n"
            "    h = x -> dense(width) as fc{i} -> relu()\n"
            "    x = concat(x, h, dim=1)"
        ),
        "Net(4, 3)",
    ),
    "gate": (
        network(
            """
            for i in range(n):
                g = x -> dense(width) as gate{i} -> sigmoid()
                x -> dense(width) as fc{i}
                x = multiply(x, g)
            """
        ),
        "Net(4, 3)",
    ),
    "attention": (
        network(
            """
            for i in range(n):
                r = x
                x -> multihead_attention(2, width) as attn{i}
                x = add(x, r)
            """,
            shape=(8, 5),
        ),
        "Net(4, 3)",
    ),
    "keyed": (
        network("for i in range(n):\n    x -> dense(width) as layers.l_{i + 1} -> relu()"),
        "Net(4, 3)",
    ),
    "container": (
        network("for i in range(n):\n    x -> dense(width) as blocks.{i} -> relu()"),
        "Net(4, 3)",
    ),
    "next_child": (
        network("for i in range(n):\n    x -> dense(width) as stack.* -> relu()"),
        "Net(4, 3)",
    ),
    "next_child_after_a_loop": (
        network(
            "for i in range(n):\n"
            "    x -> dense(width) as features.*\n"
            "x -> relu()\n"
            "for j in range(n):\n"
            "    x -> dense(width) as features.*"
        ),
        "Net(4, 3)",
    ),
    "next_child_outside_loops": (
        network(
            "x -> dense(width) as features.*\n"
            "for i in range(n):\n"
            "    x -> dense(width) as features.* -> relu()\n"
            "x -> dense(width) as features.*"
        ),
        "Net(4, 3)",
    ),
    "named_after_a_loop": (
        network(
            "for i in range(n):\n"
            "    x -> dense(width) as fc{i} -> relu()\n"
            "x -> dense(width) as fc{n}"
        ),
        "Net(4, 3)",
    ),
    "named_after_a_loop_over_items": (
        network(
            "for i, w in enumerate(widths):\n"
            "    x -> dense(w) as fc{i} -> relu()\n"
            "x -> dense(width) as fc{len(widths)}",
            **ITEMS,
        ),
        "Net(4, [8, 6, 5])",
    ),
    "unnamed_after_a_loop": (
        network("for i in range(n):\n    x -> dense(width) -> relu()\nx -> dense(width)"),
        "Net(4, 3)",
    ),
    "unnamed_between_loops": (
        network(
            """
            for i in range(n):
                x -> dense(width) -> relu()
            x -> dense(width)
            for j in range(n):
                x -> dense(width) -> relu()
            x -> dense(width)
            """
        ),
        "Net(4, 3)",
    ),
    "count_read_in_the_loop": (
        network("for i in range(n):\n    x -> dense(width) as fc{i}\n    x = multiply(x, n)"),
        "Net(4, 3)",
    ),
    "loops_after_loops": (
        network(
            "for i in range(n):\n"
            "    x -> dense(width) as fc{i}\n"
            "for j in range(n):\n"
            "    x -> dense(width) as gc{j} -> relu()"
        ),
        "Net(4, 3)",
    ),
    "stages": (
        network(
            "for i in range(n):\n"
            "    for j in range(2):\n"
            "        x -> dense(width) as stages.{i}.{j} -> relu()"
        ),
        "Net(4, 3)",
    ),
    "stages_whole": (
        network(
            "for i in range(n):\n    for j in range(2):\n        x -> dense(width) as stages.{i}.{j}"
        ),
        "Net(4, 3)",
    ),
    "named_stages": (
        network(
            "for i in range(n):\n"
            "    for j in range(2):\n"
            "        x -> dense(width) as downs{i}.{j} -> relu()"
        ),
        "Net(4, 3)",
    ),
    "named_stages_inner_count": (
        network(
            "for i in range(2):\n"
            "    for j in range(n):\n"
            "        x -> dense(width) as downs{i}.{j} -> relu()"
        ),
        "Net(4, 3)",
    ),
    "named_stages_triangle": (
        network(
            "for i in range(n):\n"
            "    for j in range(i + 1):\n"
            "        x -> dense(width) as downs{i}.{j} -> relu()"
        ),
        "Net(4, 3)",
    ),
    "named_stages_whole": (
        network(
            "for i in range(n):\n    for j in range(2):\n        x -> dense(width) as layer{i}.{j}"
        ),
        "Net(4, 3)",
    ),
    "named_stages_whole_then_relu": (
        network(
            "for i in range(n):\n"
            "    for j in range(2):\n"
            "        x -> dense(width) as layer{i}.{j}\n"
            "    x -> relu()"
        ),
        "Net(4, 3)",
    ),
    "block_stages_whole": (
        network(
            "for i in range(n):\n    for j in range(2):\n        x -> block(width) as layer{i}.{j}",
            params="width, n, block",
            given=("4, 2, Unit", "6, 2, Unit"),
            blocks=UNIT,
        ),
        "Net(4, 3, Unit)",
    ),
    "zip_stages": (
        network(
            "for i, (m, s) in enumerate(zip(layers, [1, 2])):\n"
            "    for j in range(m):\n"
            "        x -> dense(width * s) as layer{i + 1}.{j} -> relu()",
            **LAYERS,
        ),
        "Net(4, [2, 3])",
    ),
    "listed_stages_whole": (
        network(
            "for i, m in enumerate(layers):\n"
            "    for j in range(m):\n"
            "        x -> dense(width) as layer{i + 1}.{j}",
            **LAYERS,
        ),
        "Net(4, [2, 2, 1])",
    ),
    "zip_stages_whole": (
        network(
            "for i, (m, s) in enumerate(zip(layers, [1, 2])):\n"
            "    for j in range(m):\n"
            "        x -> dense(width * s) as layer{i + 1}.{j}",
            **LAYERS,
        ),
        "Net(4, [2, 3])",
    ),
    "items": (network("for w in widths:\n    x -> dense(w).relu", **ITEMS), "Net(4, [8, 6, 5])"),
    "items_named": (
        network("for i, w in enumerate(widths):\n    x -> dense(w) as fc{i} -> relu()", **ITEMS),
        "Net(4, [8, 6, 5])",
    ),
    "block": (
        network("for i in range(n):\n    x -> Unit(width) as units{i}", blocks=UNIT),
        "Net(4, 3)",
    ),
    "constant_count": (
        network(
            "for i in range(depth):\n    x -> dense(width) as fc{i}",
            constants="    depth = 2 * n\n",
        ),
        "Net(4, 3)",
    ),
    "range_from_one": (
        network("for i in range(1, n):\n    x -> dense(width) as fc{i}", given=("4, 3", "6, 3")),
        "Net(4, 4)",
    ),
    "skip": (
        network("for i in range(n):\n    s = x\n    x -> dense(width) as fc{i}\nx = add(x, s)"),
        "Net(4, 3)",
    ),
    "skip_lateral": (
        network(
            "for i in range(n):\n"
            "    s = x\n"
            "    x -> dense(width) as fc{i}\n"
            "s -> dense(width) as lateral\n"
            "x = add(x, s)"
        ),
        "Net(4, 3)",
    ),
    "skip_inner_loop": (network(SKIP_INNER), "Net(4, 3)"),
    "skip_read_by_a_later_loop": (
        network(
            """
            for i in range(n):
                s = x
                x -> dense(width) as a{i}
            for i in range(n):
                x -> dense(2 * width) as b{i}
                t = s -> dense(2 * width) as c{i}
                x = add(x, t)
            """
        ),
        "Net(4, 3)",
    ),
}

# the forms whose forward cannot run the source's loop: written out for the variants'
# count, the class refuses another (``if n != 2: raise ValueError(...)``)
REFUSED = {"count_read_in_the_loop", "skip_inner_loop", "skip_read_by_a_later_loop"}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_class_built_at_another_count_computes_that_count(form: str) -> None:
    source, other = FORMS[form]
    shape = tuple(int(n) for n in re.findall(r"\d+", source.split("input_shape = ")[1][:12]))
    x = torch.randn(2, *shape)
    blocks = ("Unit",) if "model Unit" in source else ()
    code = rolls_exactly(source, f"guard_{form}", x, blocks=blocks)  # each variant alike
    rolled, _, _ = build(source, f"guard_{form}_rolled")
    if form in REFUSED:
        assert "        if n != 2:  # forward is written out for this count\n" in code, code
        with pytest.raises(ValueError, match="Net is written for n == 2, not 3"):
            eval(other, dict(vars(rolled)))
        return
    assert "raise ValueError" not in code, code
    deeper = source + f"\nmodel deeper = {other}:\n    input_shape = {shape!r}\n"
    written_out, _, _ = build(deeper, f"guard_{form}_deeper", roll=False)
    torch.manual_seed(0)
    mine = eval(other, dict(vars(rolled)))  # the class built by hand at another count
    torch.manual_seed(0)
    same(mine, written_out.deeper(), x)


@pytest.mark.parametrize("counts", [("4, 2", "6, 2"), ("4, 2", "6, 3")], ids=["agree", "differ"])
def test_a_stage_the_variants_apply_whole_is_applied_whole_in_the_loop(
    counts: tuple[str, str],
) -> None:
    """``x = self.layer0(x)``, ``x = self.layer1(x)`` in each variant's forward, one
    statement for two layers: forward was written out for the count the variants agreed
    on ('a forward that is not one statement per layer'), or the variants kept their
    classes where they did not."""
    source = FORMS["named_stages_whole"][0].replace("Net(6, 2)", f"Net({counts[1]})")
    code = rolls_exactly(source, f"whole_{counts[1][-1]}", torch.randn(2, 5))
    assert (
        "        for i in range(n):\n"
        "            stage = nn.Sequential()\n"
        "            for j in range(2):\n"
        "                stage.append(nn.Linear(channels, width))\n"
        '            setattr(self, f"layer{i}", stage)\n'
    ) in code, code
    assert (
        '        for i in range(self.n):\n            x = getattr(self, f"layer{i}")(x)\n'
    ) in code, code


def test_a_child_of_a_named_stage_is_indexed_by_the_inner_loop() -> None:
    source = FORMS["zip_stages"][0]
    code = rolls_exactly(source, "zip_stages", torch.randn(2, 5))
    assert (
        "        for i, (m, _) in enumerate(zip(self.layers, [1, 2])):\n"
        "            for j in range(m):\n"
        '                x = getattr(self, f"layer{i + 1}")[j](x)\n'
        "                x = F.relu(x)\n"
    ) in code, code


def test_the_next_child_after_a_loop_counts_the_loop() -> None:
    """``as features.*`` in a loop after another loop filling it: the child's index is the
    count plus the first loop's count (``j + self.n``); it was the variants' number
    (``j + 2``), so ``Net(4, 3)`` applied ``features[2]`` twice and never ``features[5]``.
    Outside loops, after one: ``self.features[self.n + 1]`` (was ``self.features[3]``)."""
    source = FORMS["next_child_after_a_loop"][0]
    code = rolls_exactly(source, "next_child", torch.randn(2, 5))
    assert (
        "        for j in range(self.n):\n            x = self.features[j + self.n](x)\n"
    ) in code, code
    code = rolls_exactly(FORMS["next_child_outside_loops"][0], "outside", torch.randn(2, 5))
    assert "        x = self.features[self.n + 1](x)\n" in code, code


def test_a_module_named_by_the_count_after_a_loop_is_read_by_it() -> None:
    """``as fc{n}`` after the loop: ``__init__`` names it ``f"fc{n}"``, forward read
    ``self.fc2``, the loop's last module at three. An unnamed one after the loop is
    ``dense{n + 2}`` in both (it was ``self.dense4``, which replaced the loop's third
    module at three)."""
    code = rolls_exactly(FORMS["named_after_a_loop"][0], "named_after", torch.randn(2, 5))
    assert '        x = getattr(self, f"fc{self.n}")(x)\n' in code, code
    code = rolls_exactly(FORMS["unnamed_after_a_loop"][0], "unnamed_after", torch.randn(2, 5))
    assert '        setattr(self, f"dense{n + 2}", nn.Linear(channels, width))\n' in code, code
    assert '        x = getattr(self, f"dense{self.n + 2}")(x)\n' in code, code


def test_an_if_that_makes_no_module_is_left_out_of_init() -> None:
    """``if act: x -> relu()`` in the loop: ``__init__`` wrote ``if act:`` with no body
    (an ``IndentationError``); forward keeps it (``if self.act: x = F.relu(x)``)."""
    code = rolls_exactly(FORMS["branch_on_a_parameter"][0], "no_module_if", torch.randn(2, 5))
    assert '        for i in range(n):\n            setattr(self, f"fc{i}"' in code, code
    assert "            if self.act:\n                x = F.relu(x)\n" in code, code


# Forward written out for the variants folds every parameter they give alike and it does
# not read from the module, not only the first loop's count: a second loop's count
# (``x = x * 2`` for ``multiply(x, m)``), a count after a container applied whole, a
# number, an item of a list, a constant, an operation. Each is refused at another value
# (``if m != 2: raise ValueError(...)``); it was silently the variants' value (review59
# P3). name: (source, the class built at another value, the refusal, as written)
FOLDED: dict[str, tuple[str, str, str]] = {
    "two_counts_read_in_loops": (
        network(
            "for i in range(n):\n"
            "    x -> dense(width) as fc{i}\n"
            "    x = multiply(x, n)\n"
            "for j in range(m):\n"
            "    x -> dense(width) as gc{j}\n"
            "    x = multiply(x, m)",
            params="width, n, m",
            given=("4, 2, 2", "6, 2, 2"),
        ),
        "Net(4, 2, 3)",
        "if m != 2:",
    ),
    "count_read_after_a_container": (
        network("for i in range(n):\n    x -> dense(width) as stack.*\nx = multiply(x, n)"),
        "Net(4, 3)",
        "if n != 2:",
    ),
    "number": (
        network(
            "for i in range(n):\n    x -> dense(width) as fc{i}\nx = multiply(x, s)",
            params="width, n, s",
            given=("4, 2, 2", "6, 2, 2"),
        ),
        "Net(4, 2, 3)",
        "if s != 2:",
    ),
    "float": (
        network("x = multiply(x, s)", params="width, s", given=("4, 0.5", "6, 0.5")),
        "Net(4, 0.25)",
        "if s != 0.5:",
    ),
    "list_item": (
        network("x = multiply(x, ks[1])", params="width, ks", given=("4, [2, 3]", "6, [2, 3]")),
        "Net(4, [2, 5])",
        "if list(ks) != [2, 3]:",
    ),
    "constant": (
        network("x = multiply(x, half)", given=("4, 4", "6, 4"), constants="    half = n // 2\n"),
        "Net(4, 6)",
        "if half != 2:",
    ),
    "operation": (
        network("x -> act()", params="width, act", given=("4, relu", "6, relu")),
        "Net(4, nn.GELU)",
        "if act is not nn.ReLU:",
    ),
}


@pytest.mark.parametrize("form", sorted(FOLDED))
def test_a_value_forward_folds_is_refused_at_another(form: str) -> None:
    source, other, check = FOLDED[form]
    code = rolls_exactly(source, f"folded_{form}", torch.randn(2, 5))
    assert f"        {check}  # forward is written out for this value\n" in code, code
    rolled, _, _ = build(source, f"folded_{form}_rolled")
    name = check.split()[1].removeprefix("list(").removesuffix(")")
    with pytest.raises(ValueError, match=rf"Net is written for {name} == "):
        eval(other, dict(vars(rolled)))
    assert check_networks(source) == []


def test_a_value_forward_does_not_fold_is_not_refused() -> None:
    """``width`` only sizes modules (``dense(width)``, ``__init__``'s): a class built at
    another width computes what that variant written out computes; ``n`` of the constant
    ``half = n // 2`` may change where ``half`` does not."""
    source = FOLDED["constant"][0]
    rolled, code, _ = build(source, "unfolded_rolled")
    assert "if width" not in code and "if n " not in code, code
    for other in ("Net(8, 4)", "Net(4, 5)"):
        deeper = source + f"\nmodel deeper = {other}:\n    input_shape = (5,)\n"
        written_out, _, _ = build(deeper, f"unfolded_{other[4]}{other[7]}", roll=False)
        torch.manual_seed(0)
        mine = eval(other, dict(vars(rolled)))
        torch.manual_seed(0)
        same(mine, written_out.deeper(), torch.randn(2, 5))


def test_roll_check_builds_a_network_at_other_values() -> None:
    """``check_networks`` finds a class built at another value that computes the
    variants' forward (the value check left out, as before review59 P3)."""
    from aurane.backends.torch import rolled

    source = FOLDED["number"][0]
    original = rolled._value_checks
    try:
        rolled._value_checks = lambda *args: []  # type: ignore[assignment]
        problems = check_networks(source)
    finally:
        rolled._value_checks = original
    assert problems and all("s=3" in p and "computes differently" in p for p in problems)
