"""Shared by the one-class-per-block tests: compile and run a program against its IR,
cut out one generated class, compare a generated module with a hand-written twin, and
the IR's layer paths with the module's parameter names."""

from __future__ import annotations

import re
import textwrap
import types
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from aurane.ir.graph import Graph
from aurane.ir.inits import layer_path
from aurane.tools.differential import run_accepted
from aurane.tools.roll_check import check_source
from aurane.verify import Generated, load_generated

CLASS = re.compile(r"^class (\w+)\(nn\.Module\):", re.MULTILINE)
ANY_CLASS = re.compile(r"^class (\w+)\((?:\w+|nn\.Module)\):", re.MULTILINE)  # variants too


def generated(source: str, filename: str) -> Generated:
    """The program's generated module, run once with every shape and count checked."""
    gen = load_generated(textwrap.dedent(source), filename)
    assert run_accepted(gen, "Net", 0) is None, gen.code  # every shape and count as the IR
    return gen


def build(source: str, name: str, *, roll: bool = True) -> tuple[types.ModuleType, str, list[str]]:
    """The program's generated module, executed; its code; the rollers' located notes.
    ``roll=False``: one class per block call and each variant's layers written out, as
    before the rollers."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(textwrap.dedent(source), filename=f"{name}.aur")
    generator = TorchCodeGenerator(program, graphs, roll_networks=roll)
    code = generator.generate()
    module = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module, code, [str(reason) for reason in generator.roll_fallbacks]


def program(block: str, calls: str) -> str:
    """``block`` and an entry ``Net`` over 4 features applying ``calls`` then a head."""
    return (
        f"{block}\nmodel Net:\n    input_shape = (4,)\n    def forward(x):\n"
        f"        x -> {calls} -> dense(2) as head\n"
    )


CHOICE = """\
model P(p, w: int):
{fields}    def forward(x):
        if {test}:
            x -> dense(w)
        else:
            x -> dense(w + 1)
        return x

model Net:
    input_shape = (3, 8)
    def forward(x):
        x -> {calls}
        return x
"""


def choice(test: str, calls: str, fields: str = "") -> str:
    """A block ``P(p, w)`` choosing ``dense(w)`` or ``dense(w + 1)`` by ``test`` (its
    constants ``fields`` before forward), called as ``calls`` on 8 features."""
    return CHOICE.format(test=test, calls=calls, fields=fields)


def roll_notes(source: str) -> tuple[list[str], str]:
    """The rollers' located notes on the program, and its code."""
    _, code, notes = build(source, "kept")
    return notes, code


def built_alike(
    rolled: types.ModuleType, unrolled: types.ModuleType, entry: str
) -> tuple[nn.Module, nn.Module]:
    """``entry`` of both builds, each made after the same seed: the same modules built in
    the same order (the same state-dict keys and initial weights)."""
    torch.manual_seed(0)
    mine = getattr(rolled, entry)()
    torch.manual_seed(0)
    theirs = getattr(unrolled, entry)()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert torch.equal(mine.state_dict()[key], value), key
    return mine, theirs


def rolled(source: str, name: str, *inputs: torch.Tensor) -> tuple[Generated, str]:
    """The program run against its IR, and its ``Net`` checked against the build with one
    class per call (``same``); that build's code."""
    gen = generated(source, f"{name}.aur")
    flat, flat_code, _ = build(source, f"{name}_flat", roll=False)
    torch.manual_seed(0)
    unrolled = flat.Net()
    torch.manual_seed(1)
    one = gen.module.Net()
    same(unrolled, one, *inputs)
    return gen, flat_code


def one_class_alike(source: str, name: str, *inputs: torch.Tensor) -> tuple[Generated, str]:
    """The program run against its IR, with no roller's note, and its ``Net`` built as the
    build of one class per call builds it, computing the same; that build's code."""
    notes, _ = roll_notes(source)
    assert notes == [], notes
    gen, flat = rolled(source, name, *inputs)
    mine, _, _ = build(source, name)
    theirs, _, _ = build(source, f"{name}_flat", roll=False)
    one, per_call = built_alike(mine, theirs, "Net")
    one.eval()
    per_call.eval()
    with torch.no_grad():
        torch.testing.assert_close(one(*inputs), per_call(*inputs), rtol=0, atol=0)
    return gen, flat


def rolls_exactly(
    source: str, name: str, *inputs: torch.Tensor, blocks: tuple[str, ...] = ()
) -> str:
    """The rolled code, after checking each variant against its unrolled class: the same
    modules built in the same order, a strict load, equal outputs. ``blocks``: the
    classes of the blocks, one each in both."""
    rolled, code, reasons = build(source, name)
    unrolled, flat, _ = build(source, f"{name}_flat", roll=False)
    assert reasons == [], reasons
    variants = re.findall(r"^model (\w+) = ", source, re.MULTILINE)
    assert ANY_CLASS.findall(code) == [*blocks, "Net", *variants], code
    assert ANY_CLASS.findall(flat) == [*blocks, *variants], flat
    for variant in variants:
        loads_and_computes_alike(*built_alike(rolled, unrolled, variant), *inputs)
    return code


def per_call(source: str, name: str, *, roll_networks: bool = True) -> tuple[types.ModuleType, str]:
    """The build with a class per distinct block call, the calls that took different ``if``
    branches too (``compile_source(..., per_call=True)``, as ``roll_check`` compares),
    executed, and its code. ``roll_networks=False``: each variant's layers written out."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(textwrap.dedent(source), filename=f"{name}.aur")
    generator = TorchCodeGenerator(program, graphs, roll_networks=roll_networks, per_call=True)
    code = generator.generate()
    module = types.ModuleType(name)
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module, code


@dataclass(frozen=True)
class Twin:
    """What ``twin`` built: the rolled program (run against its IR) and its code, the code
    of the build with one class per call (``roll=False``; empty when not compared), of the
    build with a class per distinct call (``per_call=True``; likewise), ``roll_check``'s
    counts and the rolled ``Net``'s named modules."""

    gen: Generated
    code: str  # the rolled build's
    flat: str
    per_call: str
    counts: Counter[str]
    modules: list[str]  # empty when the per-call build is not compared


def twin(
    source: str,
    name: str,
    *inputs: torch.Tensor,
    against: Sequence[Literal["flat", "per_call"]] = ("flat", "per_call"),
    roll_networks: bool = True,
    stateless: bool = True,
    named: bool = True,
) -> Twin:
    """The twin test of a rolled block, each build made once. No roller's note, and the
    program runs against its IR (every shape and count). ``"flat"``: its ``Net`` and that
    of the build with one class per call (``roll=False``) hold the same modules in the same
    order with the same initial weights, load each other strictly and compute the same
    (``rolled``, ``one_class_alike``). ``"per_call"``: likewise against the build with a
    class per distinct call (``per_call``, ``roll_networks`` as given), loading its random
    weights, and (``named``) the same named modules (``stateless=False``: the modules
    holding no state left out). Last, ``roll_check.check_source`` finds no problem,
    building the class at arguments no call gives; its counts come back."""
    rolled_build, code, notes = build(source, name)
    assert notes == [], notes
    gen = generated(source, f"{name}.aur")
    flat = separate = ""
    names: list[str] = []
    if "flat" in against:
        unrolled, flat, _ = build(source, f"{name}_flat", roll=False)
        torch.manual_seed(0)
        theirs = unrolled.Net()
        torch.manual_seed(1)
        same(theirs, gen.module.Net(), *inputs)
        one, other = built_alike(rolled_build, unrolled, "Net")
        one.eval()
        other.eval()
        with torch.no_grad():
            torch.testing.assert_close(one(*inputs), other(*inputs), rtol=0, atol=0)
    if "per_call" in against:
        calls, separate = per_call(source, f"{name}_per_call", roll_networks=roll_networks)
        loads_and_computes_alike(*built_alike(rolled_build, calls, "Net"), *inputs)
        names = [n for n, m in rolled_build.Net().named_modules() if stateless or m.state_dict()]
        if named:  # the modules holding no state too (an activation's), which no key shows
            their_names = [n for n, m in calls.Net().named_modules() if stateless or m.state_dict()]
            assert names == their_names, names
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []
    return Twin(gen, code, flat, separate, counts, names)


def refusing(
    source: str, name: str, *inputs: torch.Tensor
) -> tuple[types.ModuleType, str, list[str]]:
    """A class the rollers wrote for the calls' arguments alone, refusing others: its
    ``Net`` built as the build with one class per call builds it (``built_alike``),
    strict-loading that build's weights and computing the same; ``roll_check`` finds no
    problem (it meets the refusal, never a wrong class). The rolled build, its code and
    the rollers' notes, for the test to check the refusal."""
    rolled_build, code, notes = build(source, name)
    unrolled, _, _ = build(source, f"{name}_flat", roll=False)
    mine, theirs = built_alike(rolled_build, unrolled, "Net")
    same(theirs, mine, *inputs)
    assert check_source(source) == []
    return rolled_build, code, notes


def variants_alike(
    source: str, name: str, variants: Sequence[str], *inputs: torch.Tensor
) -> tuple[types.ModuleType, str, list[str]]:
    """Each network variant of the rolled build built as the build with one class per
    variant (``roll=False``) builds it: strict-loading its weights and computing the same
    on ``inputs``; ``roll_check`` finds no problem. The rolled module, code and notes."""
    rolled_build, code, notes = build(source, name)
    unrolled, _, _ = build(source, f"{name}_flat", roll=False)
    for variant in variants:
        mine, theirs = built_alike(rolled_build, unrolled, variant)
        mine.load_state_dict(theirs.state_dict(), strict=True)
        mine.eval()
        theirs.eval()
        with torch.no_grad():
            torch.testing.assert_close(mine(*inputs), theirs(*inputs), rtol=0, atol=0)
    assert check_source(source, Counter()) == []
    return rolled_build, code, notes


def loads_and_computes_alike(mine: nn.Module, theirs: nn.Module, *inputs: torch.Tensor) -> None:
    """``mine`` strict-loads ``theirs``'s weights, drawn at random (not the initial ones
    both were built with), and computes the same."""
    torch.manual_seed(1)
    for parameter in theirs.parameters():
        parameter.data.normal_()
    mine.load_state_dict(theirs.state_dict(), strict=True)
    mine.eval()
    theirs.eval()
    with torch.no_grad():
        torch.testing.assert_close(mine(*inputs), theirs(*inputs), rtol=0, atol=0)


def block_class(gen: Generated, name: str) -> str:
    start = gen.code.index(f"class {name}(nn.Module):")
    end = gen.code.find("\nclass ", start + 1)
    return gen.code[start:end]


def same(net: nn.Module, twin: nn.Module, *inputs: torch.Tensor) -> None:
    """The twin strict-loads the generated module's state dict and computes the same."""
    assert list(net.state_dict()) == list(twin.state_dict())
    twin.load_state_dict(net.state_dict(), strict=True)
    net.eval()
    twin.eval()
    with torch.no_grad():
        torch.testing.assert_close(net(*inputs), twin(*inputs), rtol=0, atol=0)


def ir_paths(graph: Graph, prefix: str = "") -> set[str]:
    """The IR's path of every layer holding parameters (a repeat's copies numbered)."""
    out = set()
    for node in graph.nodes:
        path = prefix + layer_path(node)
        if node.subgraph is None:
            out |= {path} if node.parameters else set()
            continue
        copies = [f"{path}.{i}." for i in range(node.repeat)] if node.op == "repeat" else []
        for inner in copies or [f"{path}."]:
            out |= ir_paths(node.subgraph, inner)
    return out


def module_paths(model: nn.Module) -> set[str]:
    """The generated module's parameter names without the parameter (``a.block1.dense1``)."""
    return {name.rsplit(".", 1)[0] for name, _ in model.named_parameters()}
