"""``dense(transposed=true)`` and ``gelu(approximate="tanh")``: Hugging Face GPT-2's
``Conv1D`` (weight stored (in, out)) and ``gelu_new``, so its state dict loads and its
numbers come out the same (``aurane import``, issue 26)."""

from __future__ import annotations

import types

import pytest

from aurane.compile import compile_detailed

torch = pytest.importorskip("torch")

SOURCE = """\
use torch

model Net:
    input_shape = (5, 8)
    def forward(x):
        h = (x -> dense(16, transposed=true) -> gelu(approximate="tanh")) as mlp
        h -> dense(8, bias=false, transposed=true) as proj
"""


class _Conv1D(torch.nn.Module):
    """Hugging Face's Conv1D, as transformers/pytorch_utils.py writes it."""

    def __init__(self, nf: int, nx: int) -> None:
        super().__init__()
        self.nf = nf
        self.weight = torch.nn.Parameter(torch.randn(nx, nf))
        self.bias = torch.nn.Parameter(torch.randn(nf))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def test_the_weight_is_stored_in_out_and_the_numbers_are_conv1d_s() -> None:
    result = compile_detailed(SOURCE, validate=True, filename="hf.aur")
    assert "TransposedLinear(8, 16)" in result.output
    assert "nn.GELU(approximate='tanh')" in result.output or 'approximate="tanh"' in result.output
    module = types.ModuleType("hf")
    exec(compile(result.output, "<hf>", "exec"), module.__dict__)
    net = module.Net().eval()
    assert tuple(net.mlp[0].weight.shape) == (8, 16)
    assert tuple(net.proj.weight.shape) == (16, 8) and net.proj.bias is None
    fc = _Conv1D(16, 8)
    net.mlp[0].load_state_dict(fc.state_dict(), strict=True)
    x = torch.randn(3, 5, 8)
    expected = torch.nn.functional.gelu(fc(x), approximate="tanh") @ net.proj.weight
    torch.testing.assert_close(net(x), expected, rtol=1e-6, atol=1e-6)
    assert torch.equal(net.mlp[0](x), fc(x))  # the same kernel: bit for bit
    assert result.graphs["Net"].parameters == sum(p.numel() for p in net.parameters())
