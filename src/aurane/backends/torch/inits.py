"""``_init_weights``: a model's init rules and its layers' ``init=``, as one readable method.

The constructor calls it after building the layers and before tying weights. Rules come
first, in the order written (an operation's layers found by their ``nn`` class, parameter
names matched with ``fnmatch``), then each layer's own ``init=``: ``semantics/inits.py``
says why in that order.
"""

from __future__ import annotations

from collections.abc import Sequence

from aurane.backends.torch.emit_common import Site, lit
from aurane.ir.graph import Graph

INDENT = "    "
# the module classes the backend builds for each operation init rules can name
MODULE_CLASSES: dict[str, tuple[str, ...]] = {
    "dense": ("nn.Linear",),
    "embedding": ("nn.Embedding",),
    **{f"conv{d}d": (f"nn.Conv{d}d",) for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": (f"nn.ConvTranspose{d}d",) for d in (1, 2, 3)},
    "batchnorm": ("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d"),
    "instance_norm": ("nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d"),
    "layer_norm": ("nn.LayerNorm",),
    "group_norm": ("nn.GroupNorm",),
    "rms_norm": ("nn.RMSNorm",),
}
# a norm may have no affine parameters, a layer no bias: those are None
_OPTIONAL_WEIGHT = frozenset({"batchnorm", "instance_norm", "layer_norm", "group_norm", "rms_norm"})


def init_method(graph: Graph, sites: Sequence[Site]) -> list[str]:
    """The body of ``_init_weights`` (empty: the class needs none)."""
    pad = INDENT * 2
    lines: list[str] = []
    for rule in graph.init_rules:
        lines.append(f"{pad}# init {rule.text}: {rule.spec.text()}")
        target = rule.target
        if target.pattern is not None:
            lines += [
                f"{pad}for name, param in self.named_parameters():",
                f"{pad}{INDENT}if fnmatch.fnmatchcase(name, {lit(target.pattern)}):",
                f"{pad}{INDENT * 2}{rule.spec.python('param')}",
            ]
            continue
        assert target.op is not None and target.param is not None
        classes = MODULE_CLASSES[target.op]
        kind = classes[0] if len(classes) == 1 else f"({', '.join(classes)})"
        test = f"isinstance(module, {kind})"
        if target.param == "bias" or target.op in _OPTIONAL_WEIGHT:
            test += f" and module.{target.param} is not None"
        lines += [
            f"{pad}for module in self.modules():",
            f"{pad}{INDENT}if {test}:",
            f"{pad}{INDENT * 2}{rule.spec.python(f'module.{target.param}')}",
        ]
    for site in sites:
        for param, spec in site.node.init:
            lines.append(f"{pad}{spec.python(f'{site.layer}.{param}')}")
    return lines
