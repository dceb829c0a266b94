"""Random ``.aur`` programs over the whole operation catalog, for differential testing.

``generate(seed)`` writes one program: a model with a random input shape and dtype whose
forward mixes chain steps, graph statements, several-output ``split``/``chunk``, learned
``parameter`` tensors, suffixes (activations, ``.residual``), layer names, parameterised
blocks and ``repeat``; some programs' models take two inputs and return two outputs
(issue 23, ``generator.SEVERAL``). Operations and their arguments are drawn from the catalog's typed
parameter specs (``aurane.ops.CATALOG``): every ``Param`` kind has a generic drawer, a few
argument names have shape-aware drawers (``dim`` from the input's rank, ``groups`` from
the channel counts, ``reshape`` sizes from the element count), and each spec's ``samples``
seed the draw, so an operation added to the catalog is generated without touching this file.

Each drawn call is filtered with the catalog's own shape rule: most programs are meant to be
accepted; with probability ``bad`` one call that the rule refuses is kept as the program's
*culprit* (the program ends there), so rejections are exercised too. The generator's
prediction is only a hint: ``aurane.tools.differential`` compiles every program and compares
the compiler's verdict with what torch does.

Run a campaign with ``python -m aurane.tools.fuzz --programs 20000 --seed 1``.

The package: ``steps.py`` (what a program is made of, and its text), ``draw.py`` (arguments
from the catalog), ``body.py`` (one forward: a call added, or inputs made for one),
``blocks.py`` (parameterised blocks: arguments written as expressions of parameters),
``constructs.py`` (the registry of what a forward is made of: ``@construct(name,
weight)``), ``loops.py`` and ``configurable.py`` (issue 24's constructs: compile-time
loops, branches, operations as values, constant functions, initialisers, variants,
repeats that start or continue, splicing), ``families.py`` (one block called at several
arguments and input sizes), ``generator.py`` (whole programs,
``generate``); ``__main__.py`` runs a campaign.
"""

from __future__ import annotations

from aurane.tools.fuzz.body import OPS, Body, adapt, add_step
from aurane.tools.fuzz.constructs import CONSTRUCTS, Construct, Draw, Outcome, construct
from aurane.tools.fuzz.draw import draw_args, draw_param, infer
from aurane.tools.fuzz.generator import generate
from aurane.tools.fuzz.steps import (
    FLOAT_DTYPES,
    Program,
    Step,
    Value,
    Written,
    call_text,
    literal,
)

__all__ = [
    "CONSTRUCTS",
    "FLOAT_DTYPES",
    "OPS",
    "Body",
    "Construct",
    "Draw",
    "Outcome",
    "Program",
    "Step",
    "Value",
    "Written",
    "adapt",
    "add_step",
    "call_text",
    "construct",
    "draw_args",
    "draw_param",
    "generate",
    "infer",
    "literal",
]
