"""Faithfulness, checked: the imported program against the module it came from.

The program is compiled (``aurane.verify.load_generated``: the front end, then the torch
backend, executed), its model built on the ``meta`` device (no memory, no initialisation)
and given the original's ``state_dict()`` with ``strict=True`` and ``assign=True``: every
key and shape must match, and the two modules then share the original's tensors. Both run
in eval mode on seeded inputs (``aurane.lift.inputs``: token ids within the smallest
embedding table, masks of 0s and 1s); every output the program returns must agree with the
original's of that name within ``rtol`` (``1e-5``, with ``atol = rtol x max|original|``,
the zoo's rule).

Before comparing, the original's constant floating tensors (batch-norm statistics, norm
weights and biases, zero-initialised tokens, layer scales) are given seeded random values
near their own, as ``tests/zoo`` does, so that a wrong normalisation axis or a forgotten
scale cannot pass by being an identity. They are restored afterwards: the caller's module
is left as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from aurane.lift.inputs import Input, samples
from aurane.lift.trace import split_inputs
from aurane.records import field, record

RTOL = 1e-5
CHECK_BATCH = 2


@record
class CheckResult:
    exact: bool
    problem: str | None = None  # why not, in one line
    max_abs_difference: float | None = None
    max_abs_reference: float | None = None
    missing_keys: list[str] = field(default_factory=list)
    unexpected_keys: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "exact": self.exact,
            "problem": self.problem,
            "max_abs_difference": self.max_abs_difference,
            "max_abs_reference": self.max_abs_reference,
            "missing_keys": self.missing_keys[:20],
            "unexpected_keys": self.unexpected_keys[:20],
        }


def vocabulary(model: nn.Module) -> int:
    sizes = [m.num_embeddings for m in model.modules() if isinstance(m, nn.Embedding)]
    return min(sizes, default=2)


@torch.no_grad()
def _perturb(model: nn.Module) -> dict[str, torch.Tensor]:
    """Constant floating tensors given nearby random values; the old values, to restore."""
    generator = torch.Generator().manual_seed(2)
    saved: dict[str, torch.Tensor] = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        if not tensor.is_floating_point() or tensor.numel() == 0 or tensor.is_meta:
            continue
        if name.endswith("running_var"):
            saved[name] = tensor.detach().clone()
            tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
        elif bool((tensor == tensor.reshape(-1)[0]).all()):
            saved[name] = tensor.detach().clone()
            tensor.add_(0.1 * torch.randn(tensor.shape, generator=generator))
    return saved


@torch.no_grad()
def _restore(model: nn.Module, saved: dict[str, torch.Tensor]) -> None:
    state = model.state_dict(keep_vars=True)
    for name, value in saved.items():
        state[name].copy_(value)


def named_outputs(value: Any, prefix: str = "") -> list[tuple[str, torch.Tensor]]:
    """Every tensor of a module's result with its name (``logits``, ``0``, ``a.1``)."""
    if isinstance(value, torch.Tensor):
        return [(prefix or "output", value)]
    if hasattr(value, "to_tuple") and hasattr(value, "items"):
        value = dict(value.items())
    found: list[tuple[str, torch.Tensor]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += named_outputs(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, tuple | list):
        for index, item in enumerate(value):
            found += named_outputs(item, f"{prefix}.{index}" if prefix else str(index))
    return found


def _pick(value: Any, name: str) -> torch.Tensor | None:
    outputs = named_outputs(value)
    if len(outputs) == 1:
        return outputs[0][1]
    for key, tensor in outputs:
        if key == name:
            return tensor
    return None


def build_lifted(cls: type, state: dict[str, torch.Tensor]) -> tuple[nn.Module, CheckResult | None]:
    """The generated model, holding the original's tensors (strict), or why it cannot."""
    with torch.device("meta"):
        lifted = cls()
    try:
        outcome = lifted.load_state_dict(state, strict=True, assign=True)
    except RuntimeError as error:
        missing, unexpected = _key_lists(str(error))
        first = str(error).strip().splitlines()
        detail = first[1].strip() if len(first) > 1 else first[0]
        return lifted, CheckResult(
            False,
            f"the original's state_dict does not load (strict): {detail}",
            missing_keys=missing,
            unexpected_keys=unexpected,
        )
    del outcome
    leftovers = [n for n, t in [*lifted.named_parameters(), *lifted.named_buffers()] if t.is_meta]
    if leftovers:  # a buffer outside the state dict: build on the CPU instead
        torch.manual_seed(0)
        lifted = cls()
        lifted.load_state_dict(state, strict=True)
    return lifted, None


def _key_lists(message: str) -> tuple[list[str], list[str]]:
    import re

    def keys(label: str) -> list[str]:
        match = re.search(
            label + r" key\(s\) in state_dict: ([^.]*(?:\.[^ ]*)*?)\.\s*(?:\n|$)", message
        )
        if match is None:
            return []
        return [k.strip().strip('"') for k in match.group(1).split(",") if k.strip()]

    return keys("Missing"), keys("Unexpected")


def compare(
    original: nn.Module,
    lifted_class: type,
    inputs: Sequence[Input],
    output_names: Sequence[str],
    rtol: float = RTOL,
) -> CheckResult:
    """Every output the program returns against the original's of that name."""
    original.eval()
    saved = _perturb(original)
    try:
        state = original.state_dict()
        lifted, failure = build_lifted(lifted_class, state)
        if failure is not None:
            return failure
        lifted.eval()
        given = samples(inputs, vocabulary(original), batch=CHECK_BATCH, seed=3)
        args, kwargs = split_inputs(original, given)
        with torch.no_grad():
            result = original(*args, **kwargs)
            try:
                got = lifted(*given.values())
            except Exception as error:  # the generated module itself fails: a compiler bug
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                return CheckResult(
                    False, f"the compiled program fails to run: {type(error).__name__}: {first}"
                )
        several = len(output_names) > 1
        if several and not (isinstance(got, tuple | list) and len(got) == len(output_names)):
            return CheckResult(
                False, f"the program returns {_count(got)}, not the {len(output_names)} outputs"
            )
        pairs = list(zip(output_names, got if several else [got], strict=True))
        worst: CheckResult | None = None
        for name, value in pairs:
            expected = _pick(result, name)
            if expected is None:
                return CheckResult(False, f"the original has no output named {name!r}")
            found = _compare_one(value, expected, rtol, name if several else None)
            if not found.exact:
                return found
            if worst is None or (found.max_abs_difference or 0) > (worst.max_abs_difference or 0):
                worst = found
        assert worst is not None
        return worst
    finally:
        _restore(original, saved)


def _count(value: Any) -> str:
    if isinstance(value, tuple | list):
        return f"{len(value)} values"
    return "one tensor" if isinstance(value, torch.Tensor) else type(value).__name__


def _compare_one(got: Any, expected: torch.Tensor, rtol: float, name: str | None) -> CheckResult:
    which = f"output {name!r}" if name is not None else "output"
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return CheckResult(
            False,
            f"the {which}'s shape {shape} differs from the original's {tuple(expected.shape)}",
        )
    reference = float(expected.abs().max()) if expected.numel() else 0.0
    difference = float((got.double() - expected.double()).abs().max()) if got.numel() else 0.0
    tolerance = rtol * reference + rtol * expected.double().abs()
    exact = bool(((got.double() - expected.double()).abs() <= tolerance).all())
    problem = None
    if not exact:
        subject = "the outputs differ" if name is None else f"the {which}s differ"
        problem = (
            f"{subject}: max |difference| {difference:.3g} against max |output| "
            f"{reference:.3g} (rtol {rtol:g})"
        )
    return CheckResult(exact, problem, difference, reference)
