"""Emission of the attention operations (ops/attention.py), registered in ``emit.EMITTERS``.

- ``multihead_attention`` with one input keeps its self-attention emission (the
  ``self_attention`` helper that applies ``padding_mask``); with a memory input it becomes
  ``y, _ = self.attn(x, memory, memory, need_weights=False)`` (no padding mask: see
  ops/attention.py), with ``kdim``/``vdim`` in the constructor when the memory width
  differs from ``dim``.
- ``scaled_dot_product_attention`` becomes ``F.scaled_dot_product_attention``; dropout is
  written ``dropout_p=p if self.training else 0.0`` (the function drops in eval mode too);
  grouped-query keys and values are repeated over the head axis with
  ``repeat_interleave`` (the same numbers as ``enable_gqa=True``, which needs torch 2.5).
- ``rotary_embedding`` calls the ``rotary_embedding`` helper function, emitted once into
  each file that uses it (generated files never import aurane).
"""

from __future__ import annotations

from typing import Any

from aurane.backends.torch.emit_common import (
    ATTENTION_HELPER,
    Call,
    OpEmitter,
    Site,
    Step,
    _attention_forward,
    dtype_arg,
    flag,
    kw,
    lit,
    options,
)
from aurane.backends.torch.inline import inlined_source
from aurane.ops.spec import split_inputs

ROTARY_HELPER = "rotary_embedding"


def _attention_init(site: Site) -> Call:
    a = site.args
    extra = options(a, {"dropout": 0.0, "bias": True})
    shapes = split_inputs(a, site.in_shapes)[0]
    if len(shapes) == 2:
        width = shapes[1][-1]
        if width != a["dim"]:
            extra += [f"kdim={width}", f"vdim={width}"]
    return Call(
        "nn.MultiheadAttention",
        (str(a["dim"]), str(a["heads"]), *extra, "batch_first=True", *dtype_arg(site)),
    )


def _masks(site: Site, memory: str) -> list[str]:
    """``key_padding_mask=`` as given; ``attn_mask=`` (batch, heads or 1, query or 1, key or
    1) as nn.MultiheadAttention reads a batched mask: (batch * heads, query, key)."""
    given = []
    padding = site.tensor("key_padding_mask")
    if padding is not None:
        given.append(f"key_padding_mask={padding}")
    mask = site.tensor("attn_mask")
    if mask is not None:
        sizes = (str(site.args["heads"]), f"{site.x}.shape[1]", f"{memory}.shape[1]")
        given.append(f"attn_mask={mask}.expand(-1, {', '.join(sizes)}).flatten(0, 1)")
    return given


def _attention_step(site: Site) -> Step:
    positional = site.positional
    if len(site.inputs) == 1:
        return _attention_forward(site)
    x, memory = positional if len(positional) == 2 else (site.x, site.x)
    mask = _masks(site, memory)
    if site.args["causal"]:
        ones = Call(
            "torch.ones",
            (f"{x}.shape[1]", f"{memory}.shape[1]", "dtype=torch.bool", f"device={x}.device"),
        )
        mask = [f"attn_mask={ones.text()}.triu(1)"]
    return Step(Call(site.layer, (x, memory, memory, *mask, "need_weights=False")), unpack=True)


def _repeat_heads(name: str, times: int) -> str:
    return name if times == 1 else f"{name}.repeat_interleave({times}, dim=1)"


def _sdpa(site: Site) -> Step:
    a = site.args
    q, k, v = site.positional
    times = site.in_shapes[0][0] // site.in_shapes[1][0]
    extra = []
    mask = site.tensor("attn_mask")
    if mask is not None:
        extra.append(f"attn_mask={mask}")
    if a["dropout"]:
        extra.append(f"dropout_p={lit(a['dropout'])} if self.training else 0.0")
    extra += flag("is_causal", a["causal"])
    if a["scale"] is not None:
        extra.append(kw("scale", _float(a["scale"])))
    args = (q, _repeat_heads(k, times), _repeat_heads(v, times), *extra)
    return Step(Call("F.scaled_dot_product_attention", args))


def _float(value: Any) -> Any:
    """A plain number as a float; a block parameter's number (``base=-p0``, a symbolic
    or shown value) as it is, so the block's one class writes its text (``-self.p0``)."""
    return float(value) if type(value) in (int, float) else value


def _rotary(site: Site) -> Step:
    base = _float(site.args["base"])
    extra = [] if type(base) is float and base == 10000.0 else [kw("base", base)]
    return Step(Call(ROTARY_HELPER, (site.x, *extra)))


ATTENTION_EMITTERS: dict[str, OpEmitter] = {
    "multihead_attention": OpEmitter(_attention_step, _attention_init),
    "scaled_dot_product_attention": OpEmitter(_sdpa),
    "rotary_embedding": OpEmitter(_rotary),
}

# -- helper functions, emitted once per file whose classes use the operation -----------------


# op -> (global function name, its module in backends/torch/inlined)
HELPERS: dict[str, tuple[str, str]] = {"rotary_embedding": (ROTARY_HELPER, "functions")}
HELPER_NAMES: frozenset[str] = frozenset({ATTENTION_HELPER, *(n for n, _ in HELPERS.values())})


def helper_sources(ops: set[str]) -> list[str]:
    """The helper functions the given operations call, in a fixed order."""
    return [inlined_source(module, name) for op, (name, module) in HELPERS.items() if op in ops]
