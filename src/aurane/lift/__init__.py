"""``aurane import``: a PyTorch module lifted into a readable ``.aur`` program.

The pipeline (``aurane.lift.pipeline``): build the module from a SPEC (``spec``), name its
inputs after ``forward``'s parameters and make their seeded values (``inputs``), trace it
with its module hierarchy (``trace``), observe every value at two batch sizes (``values``),
lower the nodes to catalog operations (``lower`` on ``lowering`` and ``refs``; ``layers``,
``functions``, ``patterns``, ``outputs``: the flat ``graph``), rebuild blocks from the
module calls (``structure`` on ``regions``, ``signatures``, ``block_params``, ``program``),
write the text (``emit``) and check it against the original (``check``). See docs/import.md.
"""
