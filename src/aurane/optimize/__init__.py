"""AST optimizer (SPEC §9): ``optimize_ast(program, level)``.

Each level is an explicit, ordered tuple of rewrites, one module per rewrite, each
with its proof in the module docstring. A rewrite is allowed only if it preserves
train- and eval-mode outputs (same seed), gradients, and the parameter and buffer
sets -- names included, so a checkpoint saved at one level loads at another.
Every rewrite only removes parameter-free chain steps (or suffixes); it never
removes, adds or reorders a parametric layer.

Level 2 rewrites consult the IR for shapes, so they run first: removing an
identity reshape can put two ReLUs next to each other for level 1 to collapse.
"""

from __future__ import annotations

from collections.abc import Callable

from aurane.optimize.dropout_zero import drop_zero_dropout
from aurane.optimize.identity_reshape import drop_identity_reshape
from aurane.optimize.rank1_flatten import drop_rank1_flatten
from aurane.optimize.repeated_relu import collapse_repeated_relu
from aurane.syntax import ast

Rewrite = Callable[[ast.AuraneProgram], ast.AuraneProgram]

LEVEL_1: tuple[Rewrite, ...] = (drop_zero_dropout, collapse_repeated_relu)
LEVEL_2: tuple[Rewrite, ...] = (drop_identity_reshape, drop_rank1_flatten, *LEVEL_1)

REWRITES: dict[int, tuple[Rewrite, ...]] = {0: (), 1: LEVEL_1, 2: LEVEL_2}
LEVELS: tuple[int, ...] = tuple(sorted(REWRITES))


def check_level(level: object) -> int:
    """The level as an int; ValueError (not a diagnostic: it is the caller's option) otherwise."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in REWRITES:
        raise ValueError(f"optimization level must be one of {LEVELS}, got {level!r}")
    return level


def optimize_ast(program: ast.AuraneProgram, level: int) -> ast.AuraneProgram:
    """The program with the rewrites of ``level`` applied in order.

    A rewrite that changes nothing returns its input, so when no rewrite applies the
    result is ``program`` itself (callers may then reuse what they derived from it).

    Works on parsed or constant-resolved programs; only literal arguments are
    reasoned about, so a resolved program gives the most rewrites. Level 2 uses
    the IR and does nothing shape-based for a program with errors.
    """
    if not isinstance(program, ast.AuraneProgram):
        raise TypeError(f"optimize_ast needs an AuraneProgram, got {type(program).__name__}")
    for rewrite in REWRITES[check_level(level)]:
        program = rewrite(program)
    return program


__all__ = ["LEVELS", "REWRITES", "Rewrite", "check_level", "optimize_ast"]
