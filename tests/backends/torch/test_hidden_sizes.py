"""Issue 24 item 3: a size an integer parameter changes where no expression shows it.

``slice(start=k)`` of ``w`` features keeps ``w - k`` of them, but its shape rule takes the
length of a range's slice, a plain number: no tree reads ``k`` or ``w``. A class writing
a module after it (``nn.Linear(3, w)``) is right at the calls' ``k`` and ``w`` only, yet
it refused neither: built with ``k=4`` it made ``nn.Linear(3, w)`` where the source makes
``nn.Linear(2, w)``, and failed in forward, far from the cause (fix77). A class written out
for its calls now refuses other values of them (``folded_sizes.hidden_params``), and a
rolled class whose module reads such a size falls back, with a located note, to classes
that do.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from aurane.tools.roll_check import check_source  # noqa: E402
from tests.backends.torch.one_class import build, per_call  # noqa: E402

ONCE = """\
model P(k: int, w: int):
    def forward(x):
        x -> slice(dim=-1, start=k)
        x -> dense(w)
        return x

model Net:
    input_shape = (2, 6)
    def forward(x):
        x -> P(3, 4)
        return x
"""

LOOPED = """\
model P(n, k: int, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        x -> slice(dim=-1, start=k)
        x -> dense(w)
        return x

model Net:
    input_shape = (2, 6)
    def forward(x):
        x -> P(1, 1, 4) -> P(2, 1, 4)
        return x
"""


def test_a_class_of_one_call_refuses_the_integer_a_slice_reads() -> None:
    module, code, _ = build(ONCE, "once")
    assert "        self.dense1 = nn.Linear(3, w)\n" in code, code
    assert '            raise ValueError(f"P is written for k == 3, not {k}")\n' in code, code
    with pytest.raises(ValueError, match="P is written for k == 3, not 4"):
        module.P(4, 4)
    module.P(3, 5)  # w: the dense's own width, which its tree shows
    assert check_source(ONCE) == []


def test_a_rolled_class_reading_a_size_after_such_a_slice_falls_back() -> None:
    """The rolled class wrote ``nn.Linear(3, w)`` after the loop and the slice, whatever
    ``n``, ``k`` and ``w``: its classes of one call refuse other ``k`` and ``w`` (the
    slice's input is ``w`` wide)."""
    _, code, notes = build(LOOPED, "looped")
    assert notes == [
        "block 'P' at 1:7: the module of 'dense2' reads a size that an integer a call "
        "before it reads changes where no expression shows it"
    ], notes
    calls, _ = per_call(LOOPED, "looped_per_call", roll_networks=False)
    for module in (build(LOOPED, "looped_other")[0], calls):
        with pytest.raises(ValueError, match="P is written for k == 1, not 2"):
            module.P(6, 1, 2, 4)
        with pytest.raises(ValueError, match="P is written for w == 4, not 5"):
            module.P(6, 1, 1, 5)
    assert check_source(LOOPED) == []


PLAIN_ONCE = """\
model P(w: int):
    def forward(x):
        x -> dense(w)
        x -> slice(dim=-1, start=2)
        x -> dense(3)
        return x

model Net:
    input_shape = (2, 6)
    def forward(x):
        x -> P(5)
        return x
"""

PLAIN_LOOPED = """\
model P(n, w: int):
    def forward(x):
        for i in range(n):
            x -> dense(w)
        x -> slice(dim=-1, start=2)
        x -> dense(w)
        return x

model Net:
    input_shape = (2, 6)
    def forward(x):
        x -> P(1, 4) -> P(2, 4)
        return x
"""


def test_a_slice_given_a_plain_number_refuses_its_inputs_width() -> None:
    """``slice(start=2)`` of ``w`` features keeps ``w - 2``, a plain number: the class
    wrote ``nn.Linear(3, 3)`` after it and took ``w=6`` (``hidden_params`` tried the input
    sizes only where an argument read a parameter), failing in forward."""
    module, code, _ = build(PLAIN_ONCE, "plain_once")
    assert "        self.dense2 = nn.Linear(3, 3)\n" in code, code
    with pytest.raises(ValueError, match="P is written for w == 5, not 6"):
        module.P(4, 6)
    assert check_source(PLAIN_ONCE) == []


def test_a_rolled_class_reading_a_size_after_a_plain_slice_falls_back() -> None:
    """The rolled class wrote ``nn.Linear(2, w)`` after the loop and ``slice(start=2)``
    of ``w`` features: built with ``w=5`` it failed in forward."""
    _, code, notes = build(PLAIN_LOOPED, "plain_looped")
    assert notes == [
        "block 'P' at 1:7: the module of 'dense2' reads a size that an integer a call "
        "before it reads changes where no expression shows it"
    ], notes
    calls, _ = per_call(PLAIN_LOOPED, "plain_looped_per_call")
    for module in (build(PLAIN_LOOPED, "plain_looped_other")[0], calls):
        with pytest.raises(ValueError, match="P is written for w == 4, not 5"):
            module.P(6, 1, 5)
    assert check_source(PLAIN_LOOPED) == []
