"""Each rewrite preserves what training sees: the generated modules at level 0 and at the
rewrite's level, given the same state_dict, agree exactly on train-mode outputs (same
seed, so real dropouts draw the same masks), eval-mode outputs, input and parameter
gradients, buffers after a train step, and parameter and buffer names and shapes.
"""

from __future__ import annotations

import itertools
import sys
import types
from typing import Any

import pytest

from aurane import compile_source
from tests.optimize.programs import CASES, Case

torch = pytest.importorskip("torch")
pytest.importorskip("aurane.backends.torch.modules")

_modules = itertools.count()


def load_model(code: str, model: str) -> Any:
    module = types.ModuleType(f"aurane_generated_{next(_modules)}")
    sys.modules[module.__name__] = module  # dataclasses and pickling look modules up
    exec(compile(code, f"<{module.__name__}>", "exec"), module.__dict__)  # noqa: S102
    return getattr(module, model)()


def run(model: Any, x: Any, weight: Any, *, train: bool) -> tuple[Any, Any]:
    model.train(train)
    x = x.clone().requires_grad_(True)
    torch.manual_seed(1234)
    y = model(x)
    (y * weight).sum().backward()
    return y.detach(), x.grad


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_level_n_module_equals_level_0(case: Case) -> None:
    base_code = compile_source(case.source, optimize=0, validate=True)
    opt_code = compile_source(case.source, optimize=case.level, validate=True)
    assert base_code != opt_code  # the rewrite did something
    torch.manual_seed(0)
    base = load_model(base_code, case.model)
    opt = load_model(opt_code, case.model)
    # parameter and buffer sets, names included: a checkpoint loads across levels
    assert [(n, p.shape) for n, p in base.named_parameters()] == [
        (n, p.shape) for n, p in opt.named_parameters()
    ]
    assert [(n, b.shape) for n, b in base.named_buffers()] == [
        (n, b.shape) for n, b in opt.named_buffers()
    ]
    opt.load_state_dict(base.state_dict(), strict=True)
    x = torch.randn(5, *case.input_shape)
    y_shape = base.eval()(x).shape
    weight = torch.randn(y_shape)
    for train in (True, False):
        base.zero_grad()
        opt.zero_grad()
        y0, gx0 = run(base, x, weight, train=train)
        y1, gx1 = run(opt, x, weight, train=train)
        assert torch.equal(y0, y1), f"outputs differ (train={train})"
        assert torch.equal(gx0, gx1), f"input gradients differ (train={train})"
        for (name, p0), (_, p1) in zip(
            base.named_parameters(), opt.named_parameters(), strict=True
        ):
            assert torch.equal(p0.grad, p1.grad), f"gradient of {name} differs (train={train})"
        for (name, b0), (_, b1) in zip(base.named_buffers(), opt.named_buffers(), strict=True):
            assert torch.equal(b0, b1), f"buffer {name} differs (train={train})"
