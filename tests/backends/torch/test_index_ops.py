"""Masks, indices, casts, constructors and buffers (ops/index.py, ops/buffer.py): each
catalog sample compiled as a one-operation model and run against its torch twin
(tests/ops/twins_index.py) on the same inputs, values and dtypes compared.

A model has one float input; the other inputs are made from it inside the program, with
the dtype the sample asks for: ``gt(t, 0.0)`` for a bool mask, ``to(multiply(sigmoid(t),
n), "int64")`` for indices below ``n``. The test makes the same tensors with torch.
"""

from __future__ import annotations

from typing import Any

import pytest

from aurane.ops import CATALOG, bind_defaults, buffer, index
from aurane.ops.spec import OpSpec, tensor_positions
from tests.backends.torch.util import aur_literal, generate, load, numel

torch = pytest.importorskip("torch")
from tests.ops.twins import TWINS  # noqa: E402  (needs torch)

BATCH = 3
SPECS = (*index.SPECS, *buffer.SPECS)


def cases() -> list[Any]:
    return [
        pytest.param(spec, dict(args), shapes, id=f"{spec.name}-{i}")
        for spec in SPECS
        for i, (args, shapes) in enumerate(spec.samples)
    ]


def _dtypes(spec: OpSpec, count: int) -> tuple[str, ...]:
    given = tuple(spec.extra.get("sample_dtypes", ()))
    return (given + ("float32",) * count)[:count]


def _high(args: dict[str, Any], shapes: Any) -> int:
    dim = args.get("dim")
    return int(shapes[0][dim - 1 if dim > 0 else dim] if isinstance(dim, int) else shapes[0][0])


def _convert(name: str, dtype: str, high: int) -> str:
    if dtype == "bool":
        return f"gt({name}, 0.0)"
    if dtype == "int64":
        return f'to(multiply(sigmoid({name}), {high}), "int64")'
    return name


def _torch_convert(t: Any, dtype: str, high: int) -> Any:
    if dtype == "bool":
        return t > 0.0
    if dtype == "int64":
        return (torch.sigmoid(t) * high).to(torch.int64)
    return t


def source(spec: OpSpec, args: dict[str, Any], shapes: Any) -> str:
    plain = bind_defaults(spec, args).plain()
    keywords = tensor_positions(args)
    dtypes = _dtypes(spec, len(shapes))
    high = _high(plain, shapes) if shapes else 1
    first = shapes[0] if shapes else (2,)
    lines = ["model M:", f"    input_shape = {aur_literal(first)}", "    def forward(x):"]
    lines.append("        flat = flatten(x)")
    names = []
    for i, shape in enumerate(shapes):
        raw = "x" if i == 0 else f"raw{i}"
        if i:
            sizes = ", ".join(map(str, shape))
            lines.append(f"        {raw} = reshape(dense(flat, {numel(shape)}), {sizes})")
        lines.append(f"        t{i} = {_convert(raw, dtypes[i], high)}")
        names.append(f"t{i}")
    parts = [n for i, n in enumerate(names) if i not in keywords.values()]
    for param in spec.params:
        if param.name in keywords:
            parts.append(f"{param.name}=t{keywords[param.name]}")
        elif param.name in args:
            value = args[param.name]
            if param.variadic:
                parts += [aur_literal(v) for v in value]
            else:
                parts.append(f"{param.name}={aur_literal(value)}")
    lines += [f"        out = {spec.name}({', '.join(parts)})", "        return out"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("spec", "args", "shapes"), cases())
def test_operation_matches_pytorch(spec: OpSpec, args: dict[str, Any], shapes: Any) -> None:
    fe, _, code = generate(source(spec, args, shapes))
    graph = fe.graphs["M"]
    model = load(code).M()
    plain = bind_defaults(spec, args).plain()
    twin = TWINS[spec.name](plain, shapes)
    first = shapes[0] if shapes else (2,)
    x = torch.randn(BATCH, *first)
    with torch.no_grad():
        out = model(x)
        flat = x.flatten(1)
        dtypes = _dtypes(spec, len(shapes))
        high = _high(plain, shapes) if shapes else 1
        raws = [x] + [
            getattr(model, f"dense{i}")(flat).reshape(BATCH, *s)
            for i, s in enumerate(shapes[1:], 1)
        ]
        inputs = [_torch_convert(t, d, high) for t, d in zip(raws, dtypes, strict=False)]
        expected = twin(*inputs[: len(shapes)])
    if not shapes:
        expected = expected[:1].expand(BATCH, *expected.shape[1:])
    out_value = graph.output_value
    assert out.shape == expected.shape == (BATCH, *(out_value.sample_shape or ()))
    assert out.dtype == expected.dtype
    assert out_value.dtype is None or str(out.dtype) == f"torch.{out_value.dtype}"
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5, equal_nan=True)  # log(-1)
    assert sum(p.numel() for p in model.parameters()) == graph.parameters


def test_every_index_op_has_a_twin() -> None:
    assert {s.name for s in SPECS} <= set(TWINS)
    assert all(name in CATALOG for name in TWINS)
