"""Samples/s of Aurane's generated training loop vs a hand-written loop and Lightning.

All three train the same model on the same in-memory data with the same optimizer for
the same number of epochs, measured in one process, interleaved (the order rotates each round), best of ``--rounds``:

    python bench/train_speed.py [--epochs 2] [--rounds 6] [--size 8192] [--threads 1] [--batch 64]

Targets: generated >= 0.95x hand-written, >= 1.0x Lightning's Trainer. Lightning is
optional (``pip install lightning``); without it that row says so.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from aurane.backends.torch import generate_torch  # noqa: E402
from aurane.compiler import run_front_end  # noqa: E402

SOURCE = """
dataset images:
    batch = {batch}

model Mlp:
    input_shape = (1, 28, 28)
    def forward(x):
        x -> flatten() -> dense(512).relu -> dense(512).relu -> dense(10)

train Mlp on images:
    epochs = {epochs}
    loss = cross_entropy
    optimizer = adam(lr=0.001)
"""


def compiled_module(epochs: int, batch: int, folder: Path) -> object:
    front = run_front_end(SOURCE.format(epochs=epochs, batch=batch), "bench.aur")
    assert front.ok and front.resolved is not None, front.diagnostics
    path = folder / "bench_program.py"
    path.write_text(generate_torch(front.resolved, front.graphs))
    spec = importlib.util.spec_from_file_location("bench_program", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hand_written(model: nn.Module, loader: DataLoader, epochs: int) -> None:  # type: ignore[type-arg]
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for _ in range(epochs):
        total = torch.zeros(())
        for inputs, targets in loader:
            loss = loss_fn(model(inputs), targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()  # a minimal loop still tracks its loss
        print(f"loss {float(total) / len(loader):.4f}")


def lightning_runner() -> Callable[[nn.Module, DataLoader, int], None] | None:  # type: ignore[type-arg]
    try:
        import lightning as L
    except ImportError:
        return None

    class Module(L.LightningModule):  # type: ignore[misc]
        def __init__(self, net: nn.Module) -> None:
            super().__init__()
            self.net = net
            self.loss_fn = nn.CrossEntropyLoss()

        def training_step(
            self, batch: tuple[torch.Tensor, torch.Tensor], index: int
        ) -> torch.Tensor:
            inputs, targets = batch
            return self.loss_fn(self.net(inputs), targets)  # type: ignore[no-any-return]

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.Adam(self.parameters(), lr=0.001)

    def run(model: nn.Module, loader: DataLoader, epochs: int) -> None:  # type: ignore[type-arg]
        trainer = L.Trainer(
            max_epochs=epochs,
            accelerator="cpu",
            devices=1,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(Module(model), loader)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1: CPU time is then robust to other load)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(0)
    data = TensorDataset(
        torch.randn(args.size, 1, 28, 28, generator=generator),
        torch.randint(0, 10, (args.size,), generator=generator),
    )
    loader = DataLoader(data, batch_size=args.batch, shuffle=True)
    with tempfile.TemporaryDirectory() as folder:
        program = compiled_module(args.epochs, args.batch, Path(folder))
        runners: dict[str, Callable[[nn.Module, DataLoader, int], None] | None] = {  # type: ignore[type-arg]
            "hand-written": hand_written,
            "aurane": lambda m, dl, e: program.train_mlp(train_loader=dl, model=m),  # type: ignore[attr-defined]
            "lightning": lightning_runner(),
        }
        best: dict[str, float] = {}
        best_cpu: dict[str, float] = {}
        order = [name for name, runner in runners.items() if runner is not None]
        for round_ in range(args.rounds):
            for name in order[round_ % len(order) :] + order[: round_ % len(order)]:
                runner = runners[name]
                assert runner is not None
                model = program.Mlp()  # type: ignore[attr-defined]
                started, cpu = time.perf_counter(), time.process_time()
                with (
                    contextlib.redirect_stdout(io.StringIO()),
                    contextlib.redirect_stderr(io.StringIO()),
                ):
                    runner(model, loader, args.epochs)
                samples = args.epochs * args.size
                best[name] = max(best.get(name, 0.0), samples / (time.perf_counter() - started))
                cpu_rate = samples / (time.process_time() - cpu)
                best_cpu[name] = max(best_cpu.get(name, 0.0), cpu_rate)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.size} samples, "
        f"batch {args.batch}, {args.epochs} epochs, best of {args.rounds}"
    )
    for name in runners:
        if name not in best:
            print(f"{name:>13}: not measured (lightning is not installed)")
            continue
        print(
            f"{name:>13}: {best[name]:9.0f} samples/s wall, "
            f"{best_cpu[name]:9.0f} samples per CPU second"
        )
    for other, target in (("hand-written", 0.95), ("lightning", 1.0)):
        if other in best:
            print(
                f"aurane / {other:<12} = {best['aurane'] / best[other]:.3f} wall, "
                f"{best_cpu['aurane'] / best_cpu[other]:.3f} CPU (target >= {target})"
            )


if __name__ == "__main__":
    main()
