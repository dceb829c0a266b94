"""The helpers generated files carry (``backends/torch/inlined``): each is package code tested
against the library it reproduces, and what a generated file holds is that code, less its
annotations (``backends/torch/inline.py``)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable

import pytest

from aurane.backends.torch import inline
from aurane.backends.torch.inline import inlined_source

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from aurane.backends.torch.inlined import functions, layers  # noqa: E402
from tests.ops.twins import HFRotary  # noqa: E402

HELPERS = [
    ("layers", "DropPath"),
    ("layers", "LayerNorm2d"),
    ("layers", "TransposedLinear"),
    ("functions", "self_attention"),
    ("functions", "rotary_embedding"),
    ("functions", "make_divisible"),
]


def copied(module: str, name: str) -> Callable[..., object]:
    """The helper as a generated file defines it: its copied text run with torch's names."""
    space: dict[str, object] = {"torch": torch, "nn": nn, "F": F}
    exec(inlined_source(module, name), space)
    found = space[name]
    assert callable(found)
    return found


@pytest.mark.parametrize(("module", "name"), HELPERS)
def test_the_copy_is_the_package_code_without_annotations(module: str, name: str) -> None:
    text = inlined_source(module, name)
    tree = ast.parse(text)
    (node,) = tree.body
    assert isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == name
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        assert function.returns is None
        assert all(a.annotation is None for a in arguments), function.name
    original = ast.parse(inline._module_source(module))
    (package,) = [n for n in original.body if getattr(n, "name", None) == name]
    # The same statements: only the annotations differ.
    for item in ast.walk(package):
        if isinstance(item, ast.arg):
            item.annotation = None
        if isinstance(item, ast.FunctionDef):
            item.returns = None
    assert ast.dump(package) == ast.dump(node)


def test_drop_path_is_torchvisions_row_stochastic_depth() -> None:
    from torchvision.ops import StochasticDepth

    x = torch.randn(64, 3, 4, 4)
    for module in (layers.DropPath(0.3), copied("layers", "DropPath")(0.3)):
        reference = StochasticDepth(0.3, "row")
        assert isinstance(module, nn.Module)
        torch.manual_seed(5)
        reference.train()
        want = reference(x)
        torch.manual_seed(5)
        module.train()
        got = module(x)
        kept = (want != 0).flatten(1).all(1)
        assert 0 < int(kept.sum()) < 64  # some rows dropped, some kept
        assert torch.equal((got != 0).flatten(1).all(1), kept)
        torch.testing.assert_close(got[kept], want[kept])
        module.eval()
        assert torch.equal(module(x), x)


def test_layer_norm_2d_is_torchvisions() -> None:
    from torchvision.models.convnext import LayerNorm2d

    reference = LayerNorm2d(6)
    with torch.no_grad():
        reference.weight.normal_()
        reference.bias.normal_()
    x = torch.randn(2, 6, 5, 3)
    for cls in (layers.LayerNorm2d, copied("layers", "LayerNorm2d")):
        module = cls(6)
        assert isinstance(module, nn.Module)
        module.load_state_dict(reference.state_dict(), strict=True)
        torch.testing.assert_close(module(x), reference(x))


def test_transposed_linear_is_hugging_faces_conv1d() -> None:
    from transformers.pytorch_utils import Conv1D

    reference = Conv1D(7, 5)  # (out, in), weight stored (in, out)
    with torch.no_grad():
        reference.bias.normal_()
    x = torch.randn(2, 3, 5)
    for cls in (layers.TransposedLinear, copied("layers", "TransposedLinear")):
        module = cls(5, 7)
        assert isinstance(module, nn.Module)
        assert module.weight.shape == (5, 7)
        module.load_state_dict(reference.state_dict(), strict=True)
        torch.testing.assert_close(module(x), reference(x))
        unbiased = cls(5, 7, bias=False)
        assert isinstance(unbiased, nn.Module) and unbiased.bias is None
        with torch.no_grad():
            unbiased.weight.copy_(reference.weight)
        torch.testing.assert_close(unbiased(x), x @ reference.weight)


def test_self_attention_hides_padding_and_matches_multihead_attention() -> None:
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    padding = torch.tensor([[False] * 5, [False, False, False, True, True]])
    for helper in (functions.self_attention, copied("functions", "self_attention")):
        plain = attention(x, x, x, need_weights=False)[0]
        torch.testing.assert_close(helper(attention, x), plain)
        causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
        want = attention(x, x, x, attn_mask=causal, need_weights=False)[0]
        torch.testing.assert_close(helper(attention, x, causal=True), want)
        out = helper(attention, x, padding)
        assert isinstance(out, torch.Tensor) and out.isfinite().all()
        assert torch.equal(out[1, 3:], torch.zeros(2, 8))
        # The real tokens see only the real keys: the same as attending over them alone.
        head = x[1:, :3]
        torch.testing.assert_close(out[1:, :3], attention(head, head, head)[0])
        torch.testing.assert_close(out[0], plain[0])


def test_rotary_embedding_is_hugging_face_llamas() -> None:
    x = torch.randn(2, 3, 6, 8)
    reference = HFRotary(10000.0, 8)
    for helper in (functions.rotary_embedding, copied("functions", "rotary_embedding")):
        torch.testing.assert_close(helper(x), reference(x))
        torch.testing.assert_close(helper(x, 500.0), HFRotary(500.0, 8)(x))


def test_make_divisible_is_torchvisions() -> None:
    from torchvision.models._utils import _make_divisible

    for helper in (functions.make_divisible, copied("functions", "make_divisible")):
        for value in [0.5, 1, 7, 8, 9.6, 12, 37.5, 100, 1001.3]:
            for divisor in (1, 4, 8, 16):
                for floor in (None, 1, 16):
                    assert helper(value, divisor, floor) == _make_divisible(value, divisor, floor)


def _read(text: str, name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(inline, "_module_source", lambda module: textwrap.dedent(text))
    return inline.inlined_source.__wrapped__("fake", name)  # type: ignore[attr-defined,no-any-return]


def test_a_multi_line_annotated_header_becomes_one_plain_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = '''
        class Box:
            """Doc."""

            def __init__(
                self,
                size: int,
                *rest: int,
                scale: float = 2.0,
                **extra: str,
            ) -> None:
                self.size = size  # kept

            def area(self, /, other: "Box") -> int:
                return self.size
        '''
    assert _read(text, "Box", monkeypatch) == textwrap.dedent(
        '''\
        class Box:
            """Doc."""

            def __init__(self, size, *rest, scale=2.0, **extra):
                self.size = size  # kept

            def area(self, /, other):
                return self.size'''
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def f(x):\n    y: int = x\n    return y\n", "only function headers may be annotated"),
        ("def f(x): return x\n", "below an undecorated def"),
        ("@staticmethod\ndef f(x):\n    return x\n", "below an undecorated def"),
        ("def g(x):\n    return x\n", "defines no single 'f'"),
        ("def f(x):\n    return x\ndef f(x):\n    return x\n", "defines no single 'f'"),
    ],
)
def test_what_cannot_be_copied_exactly_is_refused(
    text: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises((KeyError, ValueError), match=message):
        _read(text, "f", monkeypatch)
