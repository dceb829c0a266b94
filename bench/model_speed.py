"""Generated models vs hand-written PyTorch twins, and warm vs cold compiles, in one run.

1. Forward + backward time of each generated corpus model against a hand-written twin
   with the same weights (copied by parameter order, outputs checked equal first).
   Rounds alternate which model runs first; the ratio is median(generated) /
   median(twin). Target: 1.00 +- 0.03.
2. Compile time of each corpus file: cold (empty cache: full pipeline + cache write)
   against warm (a verified cache hit). Target: warm at least 20x faster.

    .venv/bin/python bench/model_speed.py [--rounds 40] [--threads 1] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from aurane import compile_source
from aurane.cache import CompileCache

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "valid"


# ----------------------------------------------------------------- hand-written twins


class TinyNet(nn.Module):  # tiny_cnn.aur
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(3600, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(F.relu(self.conv(x)))
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class Branched(nn.Module):  # branched.aur
    def __init__(self) -> None:
        super().__init__()
        self.left = nn.Linear(8, 4)
        self.right = nn.Linear(8, 2)
        self.out = nn.Linear(6, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        joined = torch.cat([self.left(x), self.right(x)], dim=1)
        return F.relu(x + self.out(joined))


class TinyUNet(nn.Module):  # unet_like.aur
    def __init__(self) -> None:
        super().__init__()
        self.down = nn.Conv2d(3, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Conv2d(16, 32, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.merge = nn.Conv2d(48, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        down = F.relu(self.down(x))
        mid = F.relu(self.mid(self.pool(down)))
        skip = torch.cat([self.up(mid), down], dim=1)
        return torch.sigmoid(self.head(F.relu(self.merge(skip))))


class Tagger(nn.Module):  # recurrent.aur
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(12, 32, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(64, 16, num_layers=2, dropout=0.2, batch_first=True)
        self.out = nn.Linear(16, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.gru(self.lstm(x)[0])[0])


class Signal(nn.Module):  # recurrent.aur
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(2, 8, 5, stride=2, padding=2)
        self.conv2 = nn.Conv1d(8, 16, 3, dilation=2, groups=8)
        self.norm = nn.BatchNorm1d(16)
        self.out = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.out(self.norm(x).mean(dim=-1))


class ResidualUnit(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.conv2(F.relu(self.conv1(x))))


class SmallResNet(nn.Module):  # composition.aur
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.unit1 = ResidualUnit()
        self.unit2 = ResidualUnit()
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.unit2(self.unit1(F.relu(self.stem(x))))
        return self.head(x.mean(dim=(2, 3)))


# (file, model, twin, per-sample input shape, batch)
MODELS: tuple[tuple[str, str, Callable[[], nn.Module], tuple[int, ...], int], ...] = (
    ("tiny_cnn.aur", "TinyNet", TinyNet, (3, 32, 32), 64),
    ("branched.aur", "Branched", Branched, (8,), 1024),
    ("unet_like.aur", "TinyUNet", TinyUNet, (3, 32, 32), 16),
    ("recurrent.aur", "Tagger", Tagger, (20, 12), 64),
    ("recurrent.aur", "Signal", Signal, (2, 100), 256),
    ("composition.aur", "SmallResNet", SmallResNet, (3, 16, 16), 64),
)


# ----------------------------------------------------------------- measurement


def generated_class(file: str, model: str) -> type[nn.Module]:
    code = compile_source((CORPUS / file).read_text(), filename=file)
    module = types.ModuleType(f"generated_{Path(file).stem}")
    sys.modules[module.__name__] = module
    exec(compile(code, file, "exec"), module.__dict__)
    cls: type[nn.Module] = getattr(module, model)
    return cls


def copy_weights(source: nn.Module, target: nn.Module) -> None:
    """Copy parameters and buffers by registration order (the twins keep source order)."""
    src, dst = source.state_dict(), target.state_dict()
    if [t.shape for t in src.values()] != [t.shape for t in dst.values()]:
        raise SystemExit(f"{type(source).__name__}: twin does not match the generated layout")
    target.load_state_dict(dict(zip(dst, src.values(), strict=True)))


def step(model: nn.Module, x: torch.Tensor) -> None:
    model.zero_grad(set_to_none=True)
    model(x).float().sum().backward()


def timed(model: nn.Module, x: torch.Tensor, device: str) -> float:
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    step(model, x)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def bench_model(
    entry: tuple[Any, ...], rounds: int, device: str
) -> tuple[list[float], list[float]]:
    file, name, twin_cls, shape, batch = entry
    torch.manual_seed(0)
    generated = generated_class(file, name)().to(device)
    twin = twin_cls().to(device)
    copy_weights(generated, twin)
    x = torch.randn(batch, *shape, device=device)
    with torch.no_grad():
        if not torch.allclose(generated.eval()(x), twin.eval()(x), atol=1e-5):
            raise SystemExit(f"{name}: generated model and twin disagree")
    generated.train()
    twin.train()
    for _ in range(3):
        step(generated, x)
        step(twin, x)
    ours: list[float] = []
    theirs: list[float] = []
    for index in range(rounds):
        pair = [(generated, ours), (twin, theirs)]
        for model, times in pair if index % 2 else pair[::-1]:
            times.append(timed(model, x, device))
    return ours, theirs


def bench_compile(file: str, rounds: int) -> tuple[float, float, float]:
    source = (CORPUS / file).read_text()
    plain, cold, warm = [], [], []
    for _ in range(rounds):
        start = time.perf_counter()
        compile_source(source, filename=file)
        plain.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as root:
        for index in range(rounds):
            cache = CompileCache(Path(root) / f"cold{index}")  # empty: a miss, then a write
            start = time.perf_counter()
            compile_source(source, filename=file, cache=cache)
            cold.append(time.perf_counter() - start)
        hot = CompileCache(Path(root) / "cold0")
        for _ in range(rounds):
            start = time.perf_counter()
            compile_source(source, filename=file, cache=hot)
            warm.append(time.perf_counter() - start)
        assert hot.stats.hits == rounds
    return statistics.median(plain), statistics.median(cold), statistics.median(warm)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: default)")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if not CORPUS.is_dir():
        raise SystemExit(f"corpus not found at {CORPUS}")
    compile_source((CORPUS / "tiny_cnn.aur").read_text())  # imports, backend registration

    print(
        f"forward+backward, median of {args.rounds} rounds, {args.device}, "
        f"{torch.get_num_threads()} thread(s), torch {torch.__version__}"
    )
    # The minimum is the least disturbed run (robust on a shared machine); the median
    # shows what a typical step costs. Both ratios are printed.
    print(
        f"{'model':<14}{'batch':>6}{'generated ms':>14}{'twin ms':>10}"
        f"{'median ratio':>14}{'min ratio':>11}"
    )
    medians, minimums = [], []
    for entry in MODELS:
        ours, theirs = bench_model(entry, args.rounds, args.device)
        median = statistics.median(ours) / statistics.median(theirs)
        best = min(ours) / min(theirs)
        medians.append(median)
        minimums.append(best)
        print(
            f"{entry[1]:<14}{entry[4]:>6}{statistics.median(ours) * 1e3:>14.3f}"
            f"{statistics.median(theirs) * 1e3:>10.3f}{median:>14.3f}{best:>11.3f}"
        )
    print(
        f"{'geometric mean':<44}{statistics.geometric_mean(medians):>14.3f}"
        f"{statistics.geometric_mean(minimums):>11.3f}  (target 1.00 +- 0.03)"
    )

    print(
        f"\ncompile, median of {args.rounds} rounds: no cache; cold = miss + record write; "
        "warm = verified hit"
    )
    print(
        f"{'file':<20}{'no cache ms':>12}{'cold ms':>9}{'warm ms':>9}"
        f"{'cold/warm':>11}{'nocache/warm':>14}"
    )
    vs_cold, vs_plain = [], []
    for file in sorted(p.name for p in CORPUS.glob("*.aur")):
        plain, cold, warm = bench_compile(file, args.rounds)
        vs_cold.append(cold / warm)
        vs_plain.append(plain / warm)
        print(
            f"{file:<20}{plain * 1e3:>12.2f}{cold * 1e3:>9.2f}{warm * 1e3:>9.3f}"
            f"{cold / warm:>10.1f}x{plain / warm:>13.1f}x"
        )
    print(
        f"{'geometric mean':<50}{statistics.geometric_mean(vs_cold):>10.1f}x"
        f"{statistics.geometric_mean(vs_plain):>13.1f}x  (target >= 20x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
