"""Issue 24 item 3: a size folded into a module, a number the IR derived from the input
shape and from parameters written before it, must be right at any argument the class
takes, or the class must refuse that argument.

``Sel(k, p, w)`` called once writes ``nn.ConvTranspose2d(in_channels, 16,
kernel_size=min(k, 8), padding=p)`` and then ``nn.Linear(8, w)``: the 8 is the last axis
after the transposed convolution, which ``k`` and ``p`` change. Built with ``k=2`` it made
``nn.Linear(8, w)`` where the source says ``nn.Linear(9, w)``, and failed in forward with a
shape error, far from the cause (``roll_check --seed 94``, program 94000035). A class
written out for its calls (one call, calls that agree, calls joined over branches, each
class of a fallback) now refuses another value of a parameter such a number reads; a
rolled class whose module reads a size on an axis it does not thread that a parameter or
an earlier loop's count changes falls back, with a located note, to classes that refuse
it."""

from __future__ import annotations

import textwrap
import types
from collections import Counter

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import (  # noqa: E402
    CLASS,
    build,
    built_alike,
    loads_and_computes_alike,
    per_call,
    roll_notes,
)

SEL = """\
model Sel(k: int, p: int, w: int):
    def forward(x):
        x -> conv_transpose2d(16, kernel=min(k, 8), padding=p).gelu
        x -> dense(w)
        return x

model Net:
    input_shape = (8, 1, 8)
    input_dtype = float64
    def forward(x):
        x -> {calls}
        return x
"""


def _built(module: types.ModuleType, text: str) -> torch.nn.Module:
    torch.manual_seed(0)
    return eval(text, {**vars(module), "nn": torch.nn})


def _checked(source: str) -> None:
    """``roll_check`` finds nothing: every class built at its calls' arguments and at
    others computes what the source says, or refuses them by name."""
    counts: Counter[str] = Counter()
    assert check_source(source, counts) == []


@pytest.mark.parametrize("one_per_call", [False, True], ids=["default", "class_per_call"])
def test_a_class_written_for_its_call_refuses_a_parameter_its_folded_size_reads(
    one_per_call: bool,
) -> None:
    source = SEL.format(calls="Sel(1, 0, 16)")
    module, code = (
        per_call(source, "sel_flat", roll_networks=False)
        if one_per_call
        else build(source, "sel")[:2]
    )
    assert CLASS.findall(code) == ["Sel", "Net"], code
    assert "nn.Linear(8, w, dtype=torch.float64)" in code, code
    assert (
        "        if k != 1:  # written out for this value\n"
        '            raise ValueError(f"Sel is written for k == 1, not {k}")\n'
        "        if p != 0:  # written out for this value\n"
        '            raise ValueError(f"Sel is written for p == 0, not {p}")\n'
    ) in code, code
    # ``w`` is written as the parameter: any value builds what the source says
    assert "written for w ==" not in code, code
    with pytest.raises(ValueError, match="Sel is written for k == 1, not 2"):
        _built(module, "Sel(8, 2, 0, 16)")
    net = module.Net()
    x = torch.randn(2, 8, 1, 8, dtype=torch.float64)
    twin = _built(module, "Sel(8, 1, 0, 16)")
    twin.load_state_dict(net.sel1.state_dict(), strict=True)
    torch.testing.assert_close(twin(x), net.sel1(x), rtol=0, atol=0)
    if not one_per_call:
        _checked(source)


def test_calls_that_agree_are_one_class_refusing_another_value() -> None:
    source = SEL.format(calls="Sel(1, 0, 8) as a -> Sel(1, 0, 8) as b")
    source = source.replace("input_shape = (8, 1, 8)", "input_shape = (16, 1, 8)")
    notes, code = roll_notes(source)
    assert notes == [] and CLASS.findall(code) == ["Sel", "Net"], code
    assert '"Sel is written for k == 1, not {k}"' in code, code
    _checked(source)


def test_a_size_no_parameter_changes_needs_no_guard() -> None:
    """``nn.Linear(6, w)`` after ``conv2d(16, kernel=3)``: no parameter changes the 6."""
    source = (
        SEL.format(calls="Sel(3, 0, 16)")
        .replace("conv_transpose2d(16, kernel=min(k, 8), padding=p)", "conv2d(16, kernel=3)")
        .replace("input_shape = (8, 1, 8)", "input_shape = (8, 5, 8)")
    )
    _, code = roll_notes(source)
    assert "nn.Linear(6, w" in code and "written for" not in code, code
    _checked(source)


# calls taking different ``if`` branches at one input: one class joined over them
JOINED = """\
model Sel(flag: bool, k: int, w: int):
    def forward(x):
        x -> conv_transpose2d(8, kernel=k)
        if flag:
            x -> dense(w)
        else:
            x -> dense(w) -> relu()
        return x

model Net:
    input_shape = (4, 6, 6)
    def forward(x):
        a = Sel(x, true, 2, 5)
        b = Sel(x, false, 2, 5)
        a -> flatten() -> dense(3)
        b -> flatten() -> dense(3)
        y = add(a, b)
        return y
"""


def test_a_class_joined_over_branches_refuses_another_value() -> None:
    notes, code = roll_notes(JOINED)
    assert notes == [] and CLASS.findall(code) == ["Sel", "Net"], code
    assert (
        "        if k != 2:  # a size is written out for this value\n"
        '            raise ValueError(f"Sel is written for k == 2, not {k}")\n'
    ) in code, code
    assert "nn.Linear(7, w)" in code and "if not self.flag:" in code, code
    module, _, _ = build(JOINED, "joined")
    with pytest.raises(ValueError, match="Sel is written for k == 2, not 3"):
        _built(module, "Sel(4, True, 3, 5)")
    _checked(JOINED)


# a loop over ``n`` before a module reading an axis the rolled class does not thread
GROW = """\
model Grow(n, w):
    def forward(x):
        for i in range(n):
            x -> conv2d(8, kernel=3{padding})
        x -> {head}
        return x

model Net:
    input_shape = (4, 9, 9)
    def forward(x):
        x -> {calls}
        return x
"""


@pytest.mark.parametrize(
    ("head", "reader"),
    [
        ("dense(w)", "self.dense1 = nn.Linear(width, w)"),
        ("flatten() -> dense(w)", "self.dense1 = nn.Linear(channels * height * width, w)"),
    ],
    ids=["last_axis", "flatten"],
)
def test_a_size_an_earlier_loop_changes_is_carried_through_the_loop(head: str, reader: str) -> None:
    """Two 3x3 convolutions leave 5 of 9: the rolled class once wrote ``nn.Linear(5, w)``
    for any ``n`` (``roll_check``: ``Grow with n=3: no strict load``), then kept the count
    written out; the sizes the loop changes are now running locals of ``__init__``
    (``width = width - 2`` an iteration), and a class built at another ``n`` computes
    what the source says."""
    source = GROW.format(padding="", head=head, calls="Grow(2, 5)")
    notes, code = roll_notes(source)
    assert notes == [], notes
    assert "for i in range(n):" in code and "            width = width - 2\n" in code, code
    assert reader in code, code
    _checked(source)


def test_a_loop_keeping_the_size_still_rolls() -> None:
    """With ``padding=1`` the loop keeps the last axis: one class runs the loop, built as
    the classes of one call build it (the same modules in the same order, a strict load,
    equal outputs), and another count builds what the source says."""
    source = GROW.format(padding=", padding=1", head="dense(w)", calls="Grow(1, 5)").replace(
        "        x -> Grow(1, 5)\n        return x\n",
        "        a = Grow(x, 1, 5)\n        b = Grow(x, 2, 5)\n        y = add(a, b)\n"
        "        return y\n",
    )
    notes, code = roll_notes(source)
    assert notes == [], notes
    assert CLASS.findall(code) == ["Grow", "Net"], code
    assert "for i in range(n):" in code and "nn.Linear(9, w)" in code, code
    rolled, _, _ = build(source, "kept")
    flat, flat_code = per_call(source, "kept_flat", roll_networks=False)
    assert CLASS.findall(flat_code) == ["Grow", "Grow_2", "Net"], flat_code
    loads_and_computes_alike(*built_alike(rolled, flat, "Net"), torch.randn(2, 4, 9, 9))
    _checked(source)


def test_a_size_a_parameter_changes_on_an_untracked_axis_falls_back() -> None:
    """Calls differing in ``n`` that agree on ``k``: the rolled class would write the
    width after ``conv_transpose2d(8, kernel=k)`` as the calls' 7 whatever ``k``."""
    source = textwrap.dedent(
        """\
        model Grow(n, k, w):
            def forward(x):
                x -> conv_transpose2d(8, kernel=k)
                for i in range(n):
                    x -> conv2d(8, kernel=1)
                x -> dense(w)
                return x

        model Net:
            input_shape = (4, 6, 6)
            def forward(x):
                a = Grow(x, 1, 2, 5)
                b = Grow(x, 2, 2, 5)
                a -> flatten() -> dense(3)
                b -> flatten() -> dense(3)
                y = add(a, b)
                return y
        """
    )
    notes, code = roll_notes(source)
    assert notes == [
        "block 'Grow' at 1:7: the module of 'dense1' reads an"
        " input size a parameter changes on an axis the class does not track"
    ], notes
    assert CLASS.findall(code) == ["Grow", "Grow_2", "Net"], code
    assert '"Grow is written for k == 2, not {k}"' in code, code
    _checked(source)


def test_a_flag_that_changes_a_folded_size_is_refused() -> None:
    """``avgpool(2, ceil_mode=c)`` of 7 is 3 or 4: no tree reads ``c``, yet the 3 of
    ``nn.Linear(3, w)`` is right at ``c = False`` only (``roll_check``: ``P with c=true:
    no strict load``). A flag the calls before it read is refused; ``w`` is not."""
    source = textwrap.dedent(
        """\
        model P(c: bool, w: int):
            def forward(x):
                x -> avgpool(2, ceil_mode=c)
                x -> dense(w)
                return x

        model Net:
            input_shape = (4, 7, 7)
            def forward(x):
                x -> P(false, 5)
                return x
        """
    )
    _, code = roll_notes(source)
    assert "nn.AvgPool2d(2, ceil_mode=c)" in code and "nn.Linear(3, w)" in code, code
    assert (
        "        if c:  # written out for this value\n"
        '            raise ValueError(f"P is written for c == False, not {c}")\n'
    ) in code, code
    assert "written for w ==" not in code, code
    _checked(source)


def test_a_rolled_class_reading_a_size_a_flag_changes_keeps_the_count_written_out() -> None:
    """The class rolling ``for i in range(n)`` wrote ``nn.Linear(3, w)`` after
    ``avgpool(2, ceil_mode=c)`` whatever ``c`` (``roll_check``: ``P with c=true: no strict
    load``): it keeps the count written out, refusing another ``c`` as well."""
    source = textwrap.dedent(
        """\
        model P(n, c: bool, w: int):
            def forward(x):
                x -> avgpool(2, ceil_mode=c)
                for i in range(n):
                    x -> conv2d(4, kernel=1)
                x -> dense(w)
                return x

        model Net:
            input_shape = (4, 7, 7)
            def forward(x):
                x -> P(2, false, 5)
                return x
        """
    )
    notes, code = roll_notes(source)
    assert len(notes) == 1 and "a flag a call before it reads may change" in notes[0], notes
    assert "for i in range(n)" not in code, code
    assert '"P is written for c == False, not {c}"' in code, code
    _checked(source)


def test_a_flag_that_leaves_the_size_as_it_is_needs_no_guard() -> None:
    """``bias=b`` changes no shape (``folded_sizes.size_flags`` tries the other value):
    ``nn.Linear(5, w)`` after ``conv2d(4, kernel=3, bias=b)`` is right at any ``b``."""
    source = textwrap.dedent(
        """\
        model Q(b: bool, w: int):
            def forward(x):
                x -> conv2d(4, kernel=3, bias=b)
                x -> dense(w)
                return x

        model Net:
            input_shape = (4, 7, 7)
            def forward(x):
                x -> Q(false, 5)
                return x
        """
    )
    _, code = roll_notes(source)
    assert "bias=b" in code and "nn.Linear(5, w)" in code, code
    assert "written for" not in code, code
    _checked(source)
