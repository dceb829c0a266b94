"""Issue 21 ("safe by construction"), cases 5 and 8: programs `check` accepted that compile,
run or a tool then failed on. One named test per case; each holds for its class (every
numeric field, every identifier that reaches Python), not only the issue's example."""

from __future__ import annotations

import pytest

from aurane import CompilationError, compile_source
from tests.conftest import REPO
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
