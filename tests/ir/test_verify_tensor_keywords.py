"""The IR verifier counts an operation's positional inputs only: tensor keywords
(``attn_mask=keep``, ``mask=pad``, ``index=i``) are further inputs of the node, after the
positional ones, and ``compile --validate`` accepts them (it refused BERT's masked
attention as "wrong arity" before)."""

from __future__ import annotations

import pytest

from aurane.compile import compile_detailed
from aurane.ir.verify import IRVerificationError, verify
from aurane.records import replace

SOURCE = """\
model Net:
    input_shape = {x: (6, 8), ids: (6,)}
    input_dtype = {x: float32, ids: int64}
    def forward(x, ids):
        keep = unsqueeze(unsqueeze(ne(ids, 0), 1), 1)
        q = reshape(x, 2, 6, 4)
        a = scaled_dot_product_attention(q, q, q, attn_mask=keep)
        pad = unsqueeze(eq(ids, 0), -1)
        return masked_fill(x, pad, 0.0), a
"""


def test_tensor_keywords_pass_validation_and_extra_positional_inputs_do_not() -> None:
    result = compile_detailed(SOURCE, validate=True, filename="t.aur")
    graph = result.graphs["Net"]
    verify(graph)
    index = next(i for i, n in enumerate(graph.nodes) if n.op == "scaled_dot_product_attention")
    node = graph.nodes[index]
    assert len(node.inputs) == 4  # q, k, v and the mask
    extra = replace(node, args={**node.args, "attn_mask": None})  # the mask now positional
    nodes = (*graph.nodes[:index], extra, *graph.nodes[index + 1 :])
    with pytest.raises(IRVerificationError, match="wrong arity"):
        verify(replace(graph, nodes=nodes))
