"""Arguments that only training mode shows, which the eval-mode trace cannot see.

A module that calls ``F.scaled_dot_product_attention(q, k, v, dropout_p=p if self.training
else 0.0)`` (Hugging Face's BERT and GPT-2, the zoo's BERT) traces with ``dropout_p=0.0``.
One forward in training mode, under a torch function mode that records each attention
call's ``dropout_p``, gives the probabilities in call order; they stand for the traced
graph's attention calls in the same order when the counts agree (else none is taken). The
module's buffers (batch-norm statistics) and the random state are restored afterwards, and
the module is put back in eval mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import fx, nn
from torch.overrides import TorchFunctionMode

from aurane.lift.refs import call_name
from aurane.lift.trace import split_inputs

ATTENTION = "sdpa"  # call_name of F.scaled_dot_product_attention


class _Record(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.dropouts: list[float] = []

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        if func is torch.nn.functional.scaled_dot_product_attention:
            given = kwargs.get("dropout_p", args[4] if len(args) > 4 else 0.0)
            self.dropouts.append(float(given))
        return func(*args, **kwargs)


def _probe(model: nn.Module, inputs: Mapping[str, torch.Tensor]) -> list[float] | None:
    """Each attention call's ``dropout_p`` in one training-mode forward (None: it failed)."""
    saved = [(buffer, buffer.detach().clone()) for buffer in model.buffers()]
    record = _Record()
    args, kwargs = split_inputs(model, inputs)
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad(), record:
            model.train()
            model(*args, **kwargs)
    except Exception:  # training mode may take other paths: then nothing is learnt
        return None
    finally:
        model.eval()
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)
    return record.dropouts


def attention_dropouts(
    model: nn.Module, module: fx.GraphModule, inputs: Mapping[str, torch.Tensor]
) -> dict[fx.Node, float]:
    """The training-mode ``dropout_p`` of the traced graph's attention calls that have one."""
    calls = [
        node
        for node in module.graph.nodes
        if node.op in ("call_function", "call_method") and call_name(node) == ATTENTION
    ]
    if not calls:
        return {}
    probed = _probe(model, inputs)
    if probed is None or len(probed) != len(calls):
        return {}
    return {node: p for node, p in zip(calls, probed, strict=True) if p}


__all__ = ["attention_dropouts"]
