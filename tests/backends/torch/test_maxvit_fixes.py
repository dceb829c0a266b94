"""Three fixes the MaxViT zoo program (examples/zoo/maxvit_t.aur) needed, each checked on a
small program of its own:

- ``reshape`` sizes computed from a block's parameters stay expressions of them
  (``x.reshape(x.shape[0], self.groups, self.size * self.size, self.dim)``), so the calls
  of a block share one class, as for every other forward argument (docs/codegen.md);
- the IR verifier (``compile --validate``) counts tensor keywords (``index=``,
  ``attn_mask=``) as inputs outside an operation's positional arity;
- the training-memory plan counts ``buffer`` tensors (persistent or not) with the batch-norm
  statistics, as ``model.buffers()`` lists them.
"""

from __future__ import annotations

import re

import pytest

from aurane.analysis.saved import buffer_bytes
from aurane.compile import compile_detailed
from tests.backends.torch.util import load

torch = pytest.importorskip("torch")

HEADS = """
model Heads(heads, width):
    def forward(x):
        h = reshape(x, x.shape[1], heads, width // heads)
        h = transpose(h, 1, 2)
        return reshape(transpose(h, 1, 2), x.shape[1], width)

model Net:
    input_shape = (6, 8)
    def forward(x):
        x -> Heads(2, 8) -> dense(12) -> Heads(3, 12)
"""


def test_reshape_sizes_of_block_parameters_share_one_class() -> None:
    code = compile_detailed(HEADS, validate=True, filename="heads.aur").output
    assert re.findall(r"^class (\w+)", code, re.MULTILINE) == ["Heads", "Net"]
    assert "x.reshape(x.shape[0], self.in_channels, self.heads, self.width // self.heads)" in code
    model = load(code).Net()
    x = torch.randn(2, 6, 8)
    dense = model.dense1
    torch.testing.assert_close(model(x), dense(x))  # the heads split and merge back


INDEXED = """
model Indexed:
    input_shape = (9, 8)
    def forward(x):
        index = buffer((9, 9), init="relative_position_index", window=(3, 3)) as rel
        pad = buffer((2,), init="zeros", dtype="int64", persistent=false)
        table = parameter((25, 2), batch_axis=false) as table
        bias = permute(lookup(table, index=index), 0, 3, 1, 2)
        q = transpose(reshape(x, 9, 2, 4), 1, 2)
        y = scaled_dot_product_attention(q, q, q, attn_mask=bias)
        rows = unsqueeze(pad, -1)
        return gather(reshape(y, 2, 36), 2, index=rows)
"""


def test_validated_compile_accepts_tensor_keywords_and_plans_buffers() -> None:
    result = compile_detailed(INDEXED, validate=True, filename="indexed.aur")
    model = load(result.output).Indexed()
    assert sorted(model.state_dict()) == ["rel", "table"]  # pad is not persistent
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    assert buffer_bytes(result.graphs["Indexed"]) == buffers == 81 * 8 + 2 * 8
    assert model(torch.randn(2, 9, 8)).shape == (2, 2, 1)
