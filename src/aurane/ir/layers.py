"""Layer names chosen with ``as``: recorded on IR nodes and checked per graph.

``conv2d(x, 64) as conv1`` names the node of the call; ``(x -> a -> b) as downsample``
names every node of the chain ``downsample.0``, ``downsample.1``, ... (suffix activations
included, torchvision's layout). A name is a dotted attribute path: each part an ASCII
identifier or a number, the first part an identifier; a later part may join words and
numbers with hyphens (``trunk_output.block1.block1-0``, torchvision's RegNet), a key of the
``nn.ModuleDict`` that holds it. Errors are located at the name.
"""

from __future__ import annotations

import keyword
import re

from aurane.codes import diag
from aurane.diagnostics import Label
from aurane.ir.builder import GraphBuilder
from aurane.ir.containers import resolve_star
from aurane.ir.lowering import Lowering
from aurane.ops.modules import chainable, nameable
from aurane.records import replace
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.layer_names import QUOTED_PART

# attributes nn.Module / nn.ModuleDict / nn.Sequential already have: a layer cannot take them
_MODULE_ATTRIBUTES = frozenset(
    str.split(
        "T_destination add_module append apply bfloat16 buffers call_super_init children clear "
        "compile cpu cuda double dump_patches eval extend extra_repr float forward get_buffer "
        "get_extra_state get_parameter get_submodule half insert ipu items keys load_state_dict "
        "modules mtia named_buffers named_children named_modules named_parameters parameters pop "
        "register_backward_hook register_buffer register_forward_hook "
        "register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook "
        "register_load_state_dict_post_hook register_load_state_dict_pre_hook register_module "
        "register_parameter register_state_dict_post_hook register_state_dict_pre_hook "
        "requires_grad_ set_extra_state set_submodule share_memory state_dict to to_empty train "
        "training type update values xpu zero_grad"
    )
)


# a word or number joined to others by hyphens: a key only a container can hold
_KEY = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)+")


def _set_layer(b: GraphBuilder, index: int, path: str, span: Span) -> None:
    node = replace(b.nodes[index], layer=path)
    b.nodes[index] = node
    b.producers[node.output] = node
    b.layer_spans[node.id] = span


def name_node(lowerer: Lowering, b: GraphBuilder, value: str, call: ast.Call) -> None:
    """``op(...) as NAME``: the node producing ``value`` (the call's own node) takes NAME."""
    assert call.layer is not None
    node = b.producers.get(value)
    if node is None:
        return
    span = call.layer_span or call.span
    path = resolve_star(b, call.layer, span, lowerer.diagnostics)
    if path is None:
        return
    index = b.nodes.index(node)
    if not nameable(node.op):
        lowerer.diagnostics.append(
            diag(
                "S046",
                f"'{node.op}' has no layer object to name: it is a function of its inputs",
                span,
                hint="drop 'as ...', or name the layer it follows",
            )
        )
        return
    _set_layer(b, index, path, span)


def name_chain(lowerer: Lowering, b: GraphBuilder, first: int, chain: ast.Chain) -> None:
    """``(x -> a -> b) as NAME``: node i of the chain becomes ``NAME.i``."""
    assert chain.layer is not None
    span = chain.layer_span or chain.span
    container = resolve_star(b, chain.layer, span, lowerer.diagnostics)
    if container is None:
        return
    for offset, node in enumerate(b.nodes[first:]):
        if node.layer is not None:
            lowerer.diagnostics.append(
                diag(
                    "S045",
                    f"a step of the named chain '{chain.layer}' has its own name '{node.layer}'",
                    b.layer_spans.get(node.id, node.span),
                    labels=(Label(span, "the chain is named here"),),
                    hint=f"its name is {container}.{offset}; drop the inner 'as'",
                )
            )
            return
        if len(node.inputs) != 1 or not chainable(node.op):
            lowerer.diagnostics.append(
                diag(
                    "S046",
                    f"'{node.op}' cannot be a step of the named chain '{chain.layer}' "
                    "(an nn.Sequential applies each step to the previous step's output)",
                    node.span,
                    labels=(Label(span, "the chain is named here"),),
                    hint="name the layers one by one instead",
                )
            )
            return
        _set_layer(b, first + offset, f"{container}.{offset}", span)


def _problem(path: str) -> str | None:
    parts = path.split(".")
    for index, part in enumerate(parts):
        if part.isdigit():
            if index == 0:
                return "a layer name cannot start with a number"
            continue
        key = _KEY.fullmatch(part) or (QUOTED_PART.match(part) and part[0] != "_")
        if index and key and not part.isidentifier():
            continue  # "block1-0": a key of an nn.ModuleDict (hyphenated or quoted)
        if not (part.isascii() and part.isidentifier()):
            return f"'{part}' is not an ASCII identifier"
        if keyword.iskeyword(part) or keyword.issoftkeyword(part) and part == "_":
            return f"'{part}' is a Python keyword"
        if part.startswith("_"):
            return f"'{part}' starts with '_' (private to PyTorch)"
        if part in _MODULE_ATTRIBUTES:
            return f"'{part}' is already an attribute of nn.Module"
    return None


def check_names(lowerer: Lowering, b: GraphBuilder) -> None:
    """Names valid for Python and PyTorch, unique, and no name both a layer and a container."""
    seen: dict[str, Span] = {}
    for node in b.nodes:
        path = node.layer
        if path is None:
            continue
        span = b.layer_spans.get(node.id, node.span)
        problem = _problem(path)
        if problem is not None:
            lowerer.diagnostics.append(
                diag("S045", f"invalid layer name '{path}': {problem}", span, hint="rename it")
            )
        elif path in seen:
            lowerer.diagnostics.append(
                diag(
                    "S044",
                    f"layer name '{path}' is used twice",
                    span,
                    labels=(Label(seen[path], "first used here"),),
                    hint="give each layer its own name",
                )
            )
        else:
            seen[path] = span
    for path, span in seen.items():
        parts = path.split(".")
        for depth in range(1, len(parts)):
            prefix = ".".join(parts[:depth])
            if prefix in seen:
                lowerer.diagnostics.append(
                    diag(
                        "S045",
                        f"'{prefix}' names a layer, so it cannot also hold '{path}'",
                        span,
                        labels=(Label(seen[prefix], f"'{prefix}' named here"),),
                        hint="rename one of them",
                    )
                )
                break
    _check_parameter_containers(lowerer, b, seen)


# operations whose layer is an nn.Parameter, not a module (a learned positional table too)
PARAMETER_LAYERS = frozenset({"parameter", "positional_encoding"})
# operations whose layer is a tensor its module holds (a parameter or a buffer), not a module
TENSOR_LAYERS = PARAMETER_LAYERS | {"buffer"}


def _check_parameter_containers(lowerer: Lowering, b: GraphBuilder, seen: dict[str, Span]) -> None:
    """A container holding a parameter or a buffer is a plain nn.Module: its children need
    word names (a numbered one would be reached as ``self.blocks[0][0]``, which no
    ``nn.Module`` answers)."""
    holders: dict[str, str] = {}  # container -> a parameter or buffer it holds directly
    kinds: dict[str, str] = {}
    for node in b.nodes:
        if node.op in TENSOR_LAYERS and node.layer is not None and "." in node.layer:
            holders.setdefault(node.layer.rsplit(".", 1)[0], node.layer)
            kinds[node.layer] = "buffer" if node.op == "buffer" else "parameter"
    for path, span in seen.items():
        parts = path.split(".")
        for depth in range(1, len(parts)):
            prefix = ".".join(parts[:depth])
            if prefix in holders and not parts[depth].isidentifier():
                lowerer.diagnostics.append(
                    diag(
                        "S045",
                        f"'{prefix}' holds the {kinds[holders[prefix]]} '{holders[prefix]}', so it is a plain "
                        f"nn.Module and cannot have the numbered child '{path}'",
                        span,
                        labels=tuple(
                            Label(seen[name], f"the {kinds[name]} is named here")
                            for name in (holders[prefix],)
                            if name in seen and name != path
                        ),
                        hint=f"name it with a word, or in a sub-container: {prefix}.layers."
                        f"{'.'.join(parts[depth:])}",
                    )
                )
                break
