"""What PyTorch holds in one training step of a compiled Aurane model: the measurement side
of ``aurane plan`` (tests/plan, bench/plan_accuracy.py, bench/plan_cuda.py).

One step runs as the generated ``train_<model>`` function writes it:

    outputs, targets = rt.match_target(net(inputs), targets, task)
    loss = loss_fn(outputs, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

Measured, after a first step that creates the gradients and the optimizer state:

- parameters, buffers, gradients: the bytes of their storages (each storage once);
- optimizer state: every tensor in ``optimizer.state`` (moments and step counters, the
  counters split out since CUDA keeps them on the host);
- activations: every storage the step keeps at the end of the forward pass and the loss,
  found exactly with ``torch.autograd.graph.saved_tensors_hooks`` (each tensor autograd
  saves for backward, a view counted as the whole storage it keeps alive, each storage
  once), plus the step's live tensors: inputs, targets, outputs and loss; parameter and
  buffer storages excluded.

``fake=True`` runs everything under ``FakeTensorMode``: shapes, strides, storages and
autograd's saved tensors are real, but no memory is allocated and nothing is computed, so
the full-size zoo (a 1.1B-parameter Llama) is measured on a laptop. The CUDA peak is
``torch.cuda.max_memory_allocated`` (bench/plan_cuda.py).
"""

from __future__ import annotations

import contextlib
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from aurane.runtime.metrics import match_target

LOSSES: dict[str, Callable[[], nn.Module]] = {
    "cross_entropy": nn.CrossEntropyLoss,
    "nll": nn.NLLLoss,
    "bce": nn.BCELoss,
    "bce_with_logits": nn.BCEWithLogitsLoss,
    "mse": nn.MSELoss,
    "mae": nn.L1Loss,
    "huber": nn.HuberLoss,
}
TASKS = {
    "cross_entropy": "class",
    "nll": "class",
    "bce": "binary",
    "bce_with_logits": "binary",
    "mse": "regression",
    "mae": "regression",
    "huber": "regression",
}
OPTIMIZERS: dict[str, Callable[..., torch.optim.Optimizer]] = {
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "sgd": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
    "adagrad": torch.optim.Adagrad,
    "adadelta": torch.optim.Adadelta,
}


@dataclass
class Measured:
    parameter_bytes: int = 0
    buffer_bytes: int = 0
    gradient_bytes: int = 0
    gradient_storage_bytes: int = 0  # the storages the gradients keep
    optimizer_bytes: int = 0  # moments and other per-parameter buffers
    step_counter_bytes: int = 0  # the optimizer's per-tensor ``step`` scalars
    activation_bytes: int = 0
    saved_bytes: int = 0  # the part of activations that autograd saved
    peak_bytes: int | None = None  # CUDA only: max_memory_allocated over the last step
    # CUDA only: memory_allocated after the loss minus before the forward pass
    allocated_activation_bytes: int = 0
    # every activation storage: (bytes, shape of a tensor on it, dtype)
    storages: list[tuple[int, tuple[int, ...], str]] = field(default_factory=list)


def storage_key(tensor: torch.Tensor) -> int:
    """One key per storage (a view shares its base's), for real and fake tensors alike."""
    return int(tensor.untyped_storage()._cdata)


def storage_bytes(tensor: torch.Tensor) -> int:
    return int(tensor.untyped_storage().nbytes())


def _sum_storages(tensors: Iterator[torch.Tensor], exclude: set[int] | None = None) -> int:
    seen: dict[int, int] = {}
    for tensor in tensors:
        key = storage_key(tensor)
        if exclude is None or key not in exclude:
            seen[key] = storage_bytes(tensor)
    return sum(seen.values())


def compile_module(source: str, filename: str = "plan.aur") -> types.ModuleType:
    """The generated PyTorch module of an Aurane program."""
    from aurane.compile import compile_detailed

    result = compile_detailed(source, filename=filename)
    module = types.ModuleType("plan_measured")
    exec(compile(result.output, f"<{filename}>", "exec"), module.__dict__)
    return module


def make_optimizer(model: nn.Module, name: str, options: dict[str, Any]) -> Any:
    kwargs = {k: v for k, v in options.items() if v is not None}
    kwargs.setdefault("lr", 1e-3)
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    return OPTIMIZERS[name](model.parameters(), **kwargs)


def sample_batch(
    input_shape: tuple[int, ...],
    input_dtype: str | None,
    output_shape: tuple[int, ...],
    loss: str,
    batch: int,
    vocab: int,
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of inputs and the targets the job's loss wants for ``output_shape``."""
    if input_dtype in ("int64", "int32"):
        inputs = torch.randint(0, vocab, (batch, *input_shape), device=device)
    else:
        inputs = torch.randn(batch, *input_shape, device=device)
    if TASKS[loss] == "class":
        classes = output_shape[-1] if len(output_shape) != 3 else output_shape[0]
        if len(output_shape) == 1:
            target_shape: tuple[int, ...] = (batch,)
        elif len(output_shape) == 3:  # (classes, h, w): per-pixel classes
            target_shape = (batch, *output_shape[1:])
        else:
            target_shape = (batch, *output_shape[:-1])
        targets = torch.randint(0, classes, target_shape, device=device)
    elif TASKS[loss] == "binary":
        targets = torch.rand(batch, *output_shape, device=device).round()
    else:
        targets = torch.randn(batch, *output_shape, device=device)
    return inputs, targets


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def measure_step(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    loss: str,
    optimizer: Any | None,
    *,
    warmup: int = 1,
    amp_dtype: torch.dtype | None = None,
) -> Measured:
    """Run ``warmup`` training steps, then one measured step (see the module doc). Without
    an ``optimizer`` only the forward pass and the loss run: activations, parameters and
    buffers are measured, gradients and optimizer state are not."""
    loss_fn = LOSSES[loss]()
    task = TASKS[loss]
    device = inputs.device
    cuda = device.type == "cuda"
    scaler = torch.amp.GradScaler("cuda", enabled=cuda and amp_dtype == torch.float16)

    def forward(hooks: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        autocast = (
            torch.autocast(device.type, dtype=amp_dtype) if amp_dtype is not None else _nothing()
        )
        with hooks:
            with autocast:
                out = model(inputs)
            if amp_dtype is not None:
                out = out.to(torch.float32)
            out, target = match_target(out, targets, task)
            value = loss_fn(out, target)
        return out, target, value

    def finish(value: torch.Tensor) -> None:
        if optimizer is None:
            return
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(value).backward()
        scaler.step(optimizer)
        scaler.update()

    model.train()
    for _ in range(warmup if optimizer is not None else 0):
        finish(forward(_nothing())[2])
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    saved: list[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor)
        return tensor

    before = torch.cuda.memory_allocated() if cuda else 0
    outputs, target, value = forward(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
    result = Measured()
    if cuda:
        result.allocated_activation_bytes = torch.cuda.memory_allocated() - before
    params = {storage_key(p): storage_bytes(p) for p in model.parameters()}
    buffers = {storage_key(b): storage_bytes(b) for b in model.buffers()}
    state = set(params) | set(buffers)
    result.parameter_bytes = sum(params.values())
    result.buffer_bytes = sum(buffers.values())
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    # each gradient's own bytes: a .grad stolen from a wider buffer (the gradient of a
    # parameter expanded over a batch of 1 and concatenated) keeps that whole storage,
    # counted apart in gradient_storage_bytes
    result.gradient_bytes = sum(g.numel() * g.element_size() for g in grads)
    result.gradient_storage_bytes = _sum_storages(iter(grads))
    result.saved_bytes = _sum_storages(iter(saved), state)
    live = [*saved, inputs, targets, target, outputs, value]
    result.activation_bytes = _sum_storages(iter(live), state)
    kinds: dict[int, tuple[int, tuple[int, ...], str]] = {}
    for tensor in live:
        key = storage_key(tensor)
        if key not in state:
            kinds.setdefault(key, (storage_bytes(tensor), tuple(tensor.shape), str(tensor.dtype)))
    result.storages = sorted(kinds.values())
    saved.clear()
    del live
    for entry in optimizer.state.values() if optimizer is not None else ():
        for key, tensor in entry.items():
            if not isinstance(tensor, torch.Tensor):
                continue
            if key == "step":
                result.step_counter_bytes += storage_bytes(tensor)
            else:
                result.optimizer_bytes += storage_bytes(tensor)
    finish(value)
    if cuda:
        torch.cuda.synchronize()
        result.peak_bytes = int(torch.cuda.max_memory_allocated())
    return result


def fake_mode() -> Any:
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=False)


@contextlib.contextmanager
def fake_safe_init() -> Iterator[None]:
    """``nn.init.trunc_normal_`` reads a number back from the tensor (``.item()``), which a
    fake tensor cannot give (``DataDependentOutputException``); memory does not depend on
    the values, so while a fake model is built it draws a plain normal instead."""
    saved = nn.init.trunc_normal_

    def trunc_normal_(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        with torch.no_grad():
            return tensor.normal_()

    nn.init.trunc_normal_ = trunc_normal_  # type: ignore[assignment]
    try:
        yield
    finally:
        nn.init.trunc_normal_ = saved


ZOO = Path(__file__).resolve().parents[1] / "examples" / "zoo"


def zoo_cases(only: list[str], rewrite: list[str]) -> list[tuple[str, str, Any, Any, str]]:
    """(program, model, plan job, graphs, source) for every zoo job (``only``: these
    programs; ``rewrite``: NAME=VALUE lines). A GAN's models come as two plain jobs: the
    generator with mse to an image, the discriminator with bce."""
    from aurane.analysis.plan import PlanJob, Side, plan_jobs
    from aurane.frontend import run_front_end

    found = []
    for path in sorted(ZOO.glob("*.aur")):
        if only and path.stem not in only:
            continue
        text = path.read_text(encoding="utf-8")
        for item in rewrite:
            name, _, value = item.partition("=")
            text = re.sub(rf"^{re.escape(name)} = .*$", f"{name} = {value}", text, flags=re.M)
        front = run_front_end(text, path.name)
        assert front.ok and front.resolved is not None, path
        for job in plan_jobs(front.resolved):
            if job.kind == "train":
                found.append((path.stem, job.sides[0].model, job, front.graphs, text))
                continue
            for side, loss in zip(job.sides, ("mse", "bce"), strict=True):
                alone = PlanJob("train", job.dataset, (Side(side.model, side.train, loss),), 16)
                found.append((path.stem, side.model, alone, front.graphs, text))
    return found


def mem_tracker_peak(
    model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor, loss: str, optimizer: Any
) -> int:
    """The peak of one more training step as ``torch.distributed._tools.mem_tracker.
    MemTracker`` tracks it (every tensor: parameters, buffers, gradients, optimizer state,
    activations and temporaries; on CUDA rounded up to 512 bytes). Works on real and
    fake tensors; ``optimizer`` must have stepped once (its state exists)."""
    from torch.distributed._tools.mem_tracker import MemTracker

    loss_fn = LOSSES[loss]()
    task = TASKS[loss]

    def step() -> None:
        out, target = match_target(model(inputs), targets, task)
        value = loss_fn(out, target)
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()

    tracker = MemTracker()
    tracker.track_external(model, optimizer, inputs, targets)
    with tracker:
        step()
    return int(tracker.get_tracker_snapshot("peak")[inputs.device]["Total"])
