"""The zoo harness: compile an ``examples/zoo`` program, build its reference, compare them.

One ``ZooCase`` per comparison. A case names the zoo file, the model in it, the reference
builder (torchvision with ``weights=None`` or a twin from ``tests/zoo/twins.py``) and the
input. ``constants`` rewrites top-level constants of the program before compiling, so a
program written at its published size (GPT-2 small: 12 layers of width 768) is compared
numerically at a small size; ``full_size`` cases are instead built on the ``meta`` device
(no memory, no arithmetic) to compare ``state_dict`` keys, shapes and parameter counts.

What is compared (``tests/zoo/test_zoo.py``):

- the reference's ``state_dict()`` loads into the generated module with ``strict=True``;
- in eval mode, with the reference's constant tensors perturbed first (batch-norm running
  statistics, norm weights, ConvNeXt's 1e-6 layer scale: otherwise most of the network is
  an identity and a wrong normalisation would pass), outputs on a seeded input are equal
  within ``rtol=1e-5`` and ``atol=1e-5 x max|reference|``;
- parameter counts of the generated module, the reference and ``aurane profile``;
- ``aurane profile`` MACs against ``FlopCounterMode`` total / 2, plus the products that
  counter cannot see (``unseen_macs``, the documented differences of ``docs/zoo.md``).
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from aurane.analysis.profile import ModelProfile, profile
from aurane.compile import compile_detailed

REPO = Path(__file__).resolve().parents[2]
ZOO = REPO / "examples" / "zoo"
PENDING = Path(__file__).resolve().parent / "pending"  # drafts waiting for a feature

Builder = Callable[[], nn.Module]


@dataclass(frozen=True)
class ZooCase:
    id: str  # test id
    file: str  # examples/zoo/<file>.aur
    model: str  # model name in the program
    reference: Builder
    input_shape: tuple[int, ...]  # with the batch axis
    integer_input: int = 0  # > 0: token ids below this bound (int64)
    constants: tuple[tuple[str, str], ...] = ()  # top-level constant -> replacement text
    full_size: bool = False  # compare structure on the meta device only, no arithmetic
    # products FlopCounterMode does not see (fused CPU attention), per sample; see docs/zoo.md
    unseen_macs: Callable[[], int] = field(default=lambda: 0)


def source_of(case: ZooCase) -> str:
    """The zoo program's text with ``case.constants`` rewritten."""
    path = ZOO / f"{case.file}.aur"
    pending = PENDING / f"{case.file}.aur"
    assert path.exists() or not pending.exists(), (
        f"{path.name} is still a draft in tests/zoo/pending/ (see its first comment for the "
        "missing feature): move it to examples/zoo/ once it compiles"
    )
    text = path.read_text(encoding="utf-8")
    for name, value in case.constants:
        pattern = re.compile(rf"^{re.escape(name)} = .*$", re.MULTILINE)
        text, count = pattern.subn(f"{name} = {value}", text)
        assert count == 1, f"{case.file}.aur has {count} top-level lines '{name} = ...'"
    return text


@dataclass
class Compiled:
    module: types.ModuleType
    profile: ModelProfile
    code: str


@cache
def compiled(case: ZooCase) -> Compiled:
    source = source_of(case)
    result = compile_detailed(source, validate=True, filename=f"{case.file}.aur")
    module = types.ModuleType(f"zoo_{case.file}")
    exec(compile(result.output, f"<zoo {case.file}>", "exec"), module.__dict__)
    return Compiled(module, profile(result.graphs[case.model]), result.output)


def generated_model(case: ZooCase) -> nn.Module:
    cls = getattr(compiled(case).module, case.model)
    if case.full_size:
        with torch.device("meta"):
            return cls()  # type: ignore[no-any-return]
    torch.manual_seed(1)
    return cls()  # type: ignore[no-any-return]


def reference_model(case: ZooCase) -> nn.Module:
    if case.full_size:
        with torch.device("meta"):
            return case.reference()
    torch.manual_seed(0)
    reference = case.reference()
    perturb_constants(reference)
    return reference.eval()


@torch.no_grad()
def perturb_constants(model: nn.Module) -> None:
    """Give every constant floating tensor (norm weights and biases, running statistics,
    layer scales, zero-initialised tokens) seeded random values near its own, so that the
    comparison exercises them."""
    generator = torch.Generator().manual_seed(2)
    for name, tensor in model.state_dict(keep_vars=True).items():
        if not tensor.is_floating_point() or tensor.numel() == 0:
            continue
        if name.endswith("running_var"):
            tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
        elif bool((tensor == tensor.reshape(-1)[0]).all()):
            tensor.add_(0.1 * torch.randn(tensor.shape, generator=generator))


def sample_input(case: ZooCase) -> torch.Tensor:
    generator = torch.Generator().manual_seed(3)
    if case.integer_input:
        return torch.randint(0, case.integer_input, case.input_shape, generator=generator)
    return torch.randn(case.input_shape, generator=generator)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # shared (tied) tensors once


def counted_forward(model: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The output of one forward pass and FlopCounterMode's total / 2 per sample, autograd on
    (the path training takes: nn.MultiheadAttention's fused inference kernel is invisible
    to the counter). Every zoo model's work is linear in the batch."""
    counter = FlopCounterMode(display=False)
    with counter:
        out = model(x)
    return out.detach(), int(counter.get_total_flops()) // (2 * x.shape[0])


def shapes(state: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    return {key: tuple(value.shape) for key, value in state.items()}
